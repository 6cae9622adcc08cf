"""The stability suite's commands."""
