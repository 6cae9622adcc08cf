"""Suite ood."""
