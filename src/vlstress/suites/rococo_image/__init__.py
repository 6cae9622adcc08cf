"""Suite rococo_image."""
