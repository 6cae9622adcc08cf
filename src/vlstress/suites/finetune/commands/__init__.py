"""The commands of the finetune suite (each: add_arguments, run)."""
