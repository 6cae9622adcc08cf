"""Saving figures reproducibly: PNG + PDF, provenance in the file metadata, no timestamps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from .io import atomic_path  # noqa: E402

PAPER_STYLE = {"context": "paper", "style": "whitegrid", "font_scale": 1.2}


def setup() -> None:
    sns.set_theme(**PAPER_STYLE)
    plt.rcParams.update({"svg.hashsalt": "vlstress", "pdf.compression": 6, "figure.dpi": 150})


def save(fig: plt.Figure, png: Path, provenance: dict[str, Any]) -> Path:
    """Write `png` and the PDF beside it; both carry the provenance block."""
    text = json.dumps(provenance, sort_keys=True)
    pdf = Path(png).with_suffix(".pdf")
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", bbox_inches="tight", metadata={"Software": None, "Description": text})
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight", metadata={"Creator": None, "Producer": None, "CreationDate": None, "Subject": text})
    plt.close(fig)
    return pdf
