"""Suite calibration."""
