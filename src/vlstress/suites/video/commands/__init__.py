"""The video suite's commands."""
