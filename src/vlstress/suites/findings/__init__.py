"""What the numbers mean: headline metrics with intervals, fingerprints by model attributes, and a
robustness card per model (static HTML)."""
