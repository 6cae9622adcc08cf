"""Suite typographic."""
