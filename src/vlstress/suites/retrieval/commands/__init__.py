"""The commands of the retrieval suite (each: add_arguments, run)."""
