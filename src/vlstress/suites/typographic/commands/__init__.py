"""The commands of the typographic suite (each: add_arguments, run)."""
