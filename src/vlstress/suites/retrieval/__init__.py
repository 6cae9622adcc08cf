"""Suite retrieval."""
