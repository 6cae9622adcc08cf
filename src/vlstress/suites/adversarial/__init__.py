"""Suite adversarial."""
