"""The commands of the 3D Common Corruptions suite (each: add_arguments, run)."""
