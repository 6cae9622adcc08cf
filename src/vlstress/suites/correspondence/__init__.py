"""3D awareness: dense correspondence of frozen image towers (Probe3D's protocol)."""
