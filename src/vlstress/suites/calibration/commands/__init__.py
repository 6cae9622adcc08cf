"""The commands of the calibration suite (each: add_arguments, run)."""
