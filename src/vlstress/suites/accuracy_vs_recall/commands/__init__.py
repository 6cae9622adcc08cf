"""The commands of the accuracy_vs_recall suite (each: add_arguments, run)."""
