"""Suite corruptions."""
