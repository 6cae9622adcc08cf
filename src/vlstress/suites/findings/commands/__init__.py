"""The findings suite's commands: `vlstress fingerprints`, `vlstress cards`."""
