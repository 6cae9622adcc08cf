"""From metric records to the paper: the long/aggregated summary tables (`records`),
the paper tables (`tables`); the figures live in `vlstress.figures`."""
