"""Where the correspondence suite keeps its data and records (constants only: steps read them
without depending on any stage declaration)."""

from __future__ import annotations

PAIRS = "data/correspondence/{corrset}"  # the pair list of a set (and a synthetic set's scenes)
PAIRS_FILE = "pairs.json"  # inside it
RECORD = "results/metrics/{model}/correspondence-{corrset}.json"  # one record per bin
