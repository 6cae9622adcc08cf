"""The commands of the corruptions suite (each: add_arguments, run)."""
