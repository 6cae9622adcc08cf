"""Dataset kinds. Each kind materialises its raw data under one folder:

    <out>/images/<file>     the photos
    <out>/captions.json     COCO captions format, or a Karpathy-style list
    <out>/download.json     what was fetched, with sha256 of every file and provenance

`prepare` then reads any such folder into the canonical manifest. Adding a
kind is one module with `add_arguments(parser)` and `materialize(args, out)`
plus one entry in KINDS.
"""

from __future__ import annotations

import importlib

KINDS: dict[str, str] = {
    "demo": "vlstress.caption_data.demo",
    "demo-train": "vlstress.caption_data.demo_train",
    "coco-dir": "vlstress.caption_data.coco_dir",
    "karpathy": "vlstress.caption_data.karpathy",
    "karpathy-train": "vlstress.caption_data.karpathy_train",
}


def kind_module(kind: str):
    return importlib.import_module(KINDS[kind])
