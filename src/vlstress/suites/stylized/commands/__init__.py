"""The stylized suite's commands."""
