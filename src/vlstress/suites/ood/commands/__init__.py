"""The commands of the ood suite (each: add_arguments, run)."""
