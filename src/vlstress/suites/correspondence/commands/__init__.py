"""The correspondence suite's commands."""
