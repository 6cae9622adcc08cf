"""The commands of the zeroshot suite (each: add_arguments, run)."""
