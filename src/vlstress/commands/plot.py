"""`vlstress plot`: Recall@K bars per model and direction from the summary table."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .. import provenance
from ..errors import VlstressError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", required=True, type=Path, help="CSV from `vlstress summarize`")
    parser.add_argument("--evaluation", default="original", help="which evaluation to draw")
    parser.add_argument("--out", required=True, type=Path, help="PNG to write (a PDF is written beside it)")


def recall_frame(table: pd.DataFrame, evaluation: str) -> pd.DataFrame:
    rows = table[(table["evaluation"] == evaluation) & table["metric"].str.match(r"^(i2t|t2i)_R@\d+$")].copy()
    if rows.empty:
        raise VlstressError(f"summary has no Recall@K rows for evaluation {evaluation!r}")
    rows[["direction", "K"]] = rows["metric"].str.extract(r"^(i2t|t2i)_(R@\d+)$")
    rows["direction"] = rows["direction"].map({"i2t": "image → text", "t2i": "text → image"})
    rows["label"] = rows["model"] + "\n(" + rows["weights"] + ")"
    return rows


def run(args: argparse.Namespace) -> None:
    import seaborn as sns

    from .. import figures

    if not args.summary.is_file():
        raise VlstressError(f"summary table not found: {args.summary}")
    rows = recall_frame(pd.read_csv(args.summary), args.evaluation)
    figures.setup()
    grid = sns.catplot(data=rows, kind="bar", x="K", y="value", hue="label", col="direction", height=3.6, aspect=1.15, palette="colorblind")
    grid.set_axis_labels("", "Recall (%)")
    grid.set_titles("{col_name}")
    grid.set(ylim=(0, 100))
    if grid.legend is not None:
        grid.legend.set_title("model (weights)")
    dataset = ", ".join(sorted(rows["dataset"].unique()))
    grid.figure.suptitle(f"Retrieval on {dataset}: {args.evaluation} captions", y=1.03)
    figures.save(grid.figure, args.out, provenance.build("plot", {"summary": str(args.summary), "evaluation": args.evaluation}))
