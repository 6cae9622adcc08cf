"""The commands of the rococo_text suite (each: add_arguments, run)."""
