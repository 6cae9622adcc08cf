"""The commands of the rococo_image suite (each: add_arguments, run)."""
