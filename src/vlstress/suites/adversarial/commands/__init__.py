"""The commands of the adversarial suite (each: add_arguments, run)."""
