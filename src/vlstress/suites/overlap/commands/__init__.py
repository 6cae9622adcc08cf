"""The overlap suite's commands."""
