"""Paired comparisons: two models on the same items, for every headline that keeps its per-item
outcomes. A share that names its per-item outcome (`Headline.item_column`): McNemar's exact test
on the discordant items (statsmodels). A metric that resamples its items (`Headline.resampling`:
ECE, AUROC, FPR@95, flip probability): the seeded paired bootstrap of the difference, the same
resampled items for both models. Holm's correction across the whole table; a difference is
called significant only when its Holm-adjusted p is below 1 - confidence. Which pairs: `Pairing`
(every pair, each fine-tuned variant with its base, or every model with named reference
models)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from vlstress.outcomes import Outcomes
from vlstress.report import tasks
from vlstress.report.display import Headline
from vlstress.report.intervals import (
    MIN_BOOTSTRAP_ITEMS,
    TOO_FEW_ITEMS,
    enough_items,
    paired_difference,
)
from vlstress.suites.findings.pairing import ALL, BASE, Pairing

COLUMNS = [
    "task",
    "task_title",
    "dataset",
    "condition",
    "metric",
    "metric_label",
    "model_a",
    "model_b",
    "test",
    "n",
    "value_a",
    "value_b",
    "difference",
    "lo",
    "hi",
    "a_only",
    "b_only",
    "p",
    "p_holm",
    "significant",
]


def pairing_for(spec: str, summary: pd.DataFrame) -> Pairing:
    """The pairing `spec` names (`all`, `base` or reference slugs), each fine-tuned variant's base
    read from the summary (`finetune_base`). A reference that is not a model of the summary is
    refused by name."""
    from vlstress.errors import VlstressError

    spec = spec.strip()
    models = sorted(set(summary["model"].astype(str)))
    bases: dict[str, str] = {}
    if "finetune_base" in summary.columns:
        rows = summary.drop_duplicates("model")
        bases = {
            str(model): str(base)
            for model, base in zip(rows["model"], rows["finetune_base"])
            if isinstance(base, str) and base
        }
    pairing = Pairing(spec, bases)
    if spec not in (ALL, BASE):
        if not pairing.references:
            raise VlstressError(
                f"compare {spec!r}: expected 'all', 'base' or comma-separated model slugs"
            )
        missing = [name for name in pairing.references if name not in models]
        if missing:
            raise VlstressError(
                f"compare: reference model(s) {', '.join(missing)} not in the summary"
                f" (its models: {', '.join(models)})"
            )
    return pairing


def _same_items(a: Outcomes, b: Outcomes) -> bool:
    """Same number of items, and the same truth per item where the outcomes record it."""
    if a.n != b.n:
        return False
    if "label" in a.columns and "label" in b.columns:
        return bool(np.array_equal(a.column("label"), b.column("label")))
    return True


def _hits(block: Outcomes, headline: Headline) -> np.ndarray | None:
    """The boolean outcome a share counts, of the items it counts (`item_where`)."""
    assert headline.item_column is not None
    hits = block.column(headline.item_column).astype(bool)
    if headline.item_where is None:
        return hits
    column, value = headline.item_where
    if column not in block.columns:
        return None
    return hits[block.column(column).astype(str) == value]


def _mcnemar_row(a: Outcomes, b: Outcomes, headline: Headline) -> dict[str, Any] | None:
    """A share: both values (percent), the discordant items and McNemar's exact p."""
    column = headline.item_column
    if column is None or column not in a.columns or column not in b.columns:
        return None
    if not _same_items(a, b):
        return None
    hit_a, hit_b = _hits(a, headline), _hits(b, headline)
    if hit_a is None or hit_b is None or len(hit_a) != len(hit_b) or not len(hit_a):
        return None
    a_only = int(np.sum(hit_a & ~hit_b))
    b_only = int(np.sum(~hit_a & hit_b))
    both = int(np.sum(hit_a & hit_b))
    neither = int(np.sum(~hit_a & ~hit_b))
    value_a, value_b = 100.0 * hit_a.mean(), 100.0 * hit_b.mean()
    return {
        "test": "McNemar exact",
        "n": len(hit_a),
        "value_a": value_a,
        "value_b": value_b,
        "difference": value_a - value_b,
        "lo": float("nan"),
        "hi": float("nan"),
        "a_only": a_only,
        "b_only": b_only,
        "p": float(mcnemar([[both, a_only], [b_only, neither]], exact=True).pvalue),
    }


def _bootstrap_row(
    a: Outcomes, b: Outcomes, headline: Headline, confidence: float, n_resamples: int, seed: int
) -> dict[str, Any] | None:
    """Another metric: both values, the paired bootstrap of the difference on the same items."""
    assert headline.resampling is not None
    if not _same_items(a, b):
        return None
    one, other = headline.resampling(a), headline.resampling(b)
    scale = headline.scale
    value_a = scale * float(one.statistic(*one.samples))
    value_b = scale * float(other.statistic(*other.samples))
    row = {
        "test": f"none: {TOO_FEW_ITEMS}",  # not tested, left out of Holm's correction
        "n": a.n,
        "value_a": value_a,
        "value_b": value_b,
        "difference": value_a - value_b,
        "lo": float("nan"),
        "hi": float("nan"),
        "a_only": None,
        "b_only": None,
        "p": float("nan"),
    }
    if not (enough_items(one) and enough_items(other)):
        return row
    found = paired_difference(one, other, confidence, n_resamples, seed)
    if found is None:
        return None
    return row | {
        "test": f"paired {found.method} bootstrap",
        "difference": scale * found.difference,
        "lo": scale * found.lo,
        "hi": scale * found.hi,
        "p": found.p,
    }


def comparison_table(
    items: Mapping[tuple, list[Outcomes]],
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    pairing: Pairing | None = None,
) -> pd.DataFrame:
    """One row per (task, set, condition, headline metric, pair of models) with one outcomes block
    each on the same items: both values, the difference; for a share the discordant counts and
    McNemar's exact p, for a metric that resamples its items (ECE, AUROC, FPR@95, FP) the seeded
    paired bootstrap of the difference (interval and p); Holm's adjusted p over every row. The
    pairs: `pairing` (every pair of models by default)."""
    pairing = pairing or Pairing()
    by_group: dict[tuple, dict[str, Outcomes]] = {}
    for (model, dataset, task, condition), blocks in items.items():
        if len(blocks) == 1:  # replicate seeds are not one set of paired items
            by_group.setdefault((task, dataset, condition), {})[model] = blocks[0]
    rows = []
    for (task_name, dataset, condition), models in sorted(by_group.items()):
        task = tasks.TASKS.get(task_name)
        if task is None:
            continue
        pairs = pairing.pairs(models)
        for headline in task.headlines:
            if headline.condition not in (None, condition):
                continue
            if headline.item_column is None and headline.resampling is None:
                continue
            for model_a, model_b in pairs:
                a, b = models[model_a], models[model_b]
                row = (
                    _mcnemar_row(a, b, headline)
                    if headline.item_column is not None
                    else _bootstrap_row(a, b, headline, confidence, n_resamples, seed)
                )
                if row is None:
                    continue
                rows.append(
                    {
                        "task": task_name,
                        "task_title": task.title,
                        "dataset": dataset,
                        "condition": condition,
                        "metric": headline.metric,
                        "metric_label": headline.label,
                        "model_a": model_a,
                        "model_b": model_b,
                        **row,
                    }
                )
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.DataFrame(rows)
    table["a_only"] = table["a_only"].astype("Int64")
    table["b_only"] = table["b_only"].astype("Int64")
    alpha = 1.0 - confidence
    tested = table["p"].notna().to_numpy()  # a row with too few items to resample is not a test
    table["p_holm"] = float("nan")
    table["significant"] = False
    if tested.any():
        reject, adjusted, _, _ = multipletests(
            table["p"].to_numpy()[tested], alpha=alpha, method="holm"
        )
        table.loc[tested, "p_holm"] = adjusted
        table.loc[tested, "significant"] = reject
    return table[COLUMNS]


def comparisons_csv(table: pd.DataFrame) -> str:
    return table.to_csv(index=False, lineterminator="\n")


def condition_labels(summary: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(task, condition key) -> the condition's label, as the summary writes it."""
    rows = summary.drop_duplicates(["task", "condition"])
    return {
        (str(task), str(condition)): str(label)
        for task, condition, label in zip(rows["task"], rows["condition"], rows["condition_label"])
    }


def comparisons_markdown(
    table: pd.DataFrame,
    confidence: float,
    labels: Mapping[tuple[str, str], str] | None = None,
    pairing: Pairing | None = None,
) -> str:
    """Per task, each pair of models on the same items: both values, the difference (with its
    paired bootstrap interval where one is computed), the test's p and Holm's p, and whether the
    difference is significant. `labels` name the conditions
    (`condition_labels`; the condition key where none is given); `pairing` says which pairs."""
    labels = labels or {}
    pairing = pairing or Pairing()
    from vlstress.report.cells import value_text

    level = f"{100 * (1 - confidence):g}"
    interval = f"{100 * confidence:g}%"
    parts = [
        "# Paired comparisons",
        "",
        "Two models on the same items (images, the queries of retrieval, the sequences of a "
        f"perturbation): {pairing.describe()}. For a share (top-1, "
        "attack success, R@1): the difference in points and McNemar's exact test on the items "
        "only one of them gets right (a only / b only). For ECE, AUROC, FPR@95, flip "
        "probability and error ratio: the difference with its paired bootstrap interval "
        f"({interval}, the same resampled items for both models; in- and out-of-distribution "
        "images resampled each within itself) and its p (two-sided normal, the difference over "
        "the standard deviation of the resampled differences); no bootstrap with fewer than "
        f"{MIN_BOOTSTRAP_ITEMS} items (the row says so and is not tested). Holm's correction "
        f"across the {int(table['p'].notna().sum())} "
        f"tested comparisons of this table. *significant*: Holm's p < {level}% "
        f"({1 - confidence:g}). n: items per model.",
    ]
    for _, group in table.groupby("task", sort=False):
        cells = pd.DataFrame(
            {
                "set": group["dataset"],
                "condition": [
                    labels.get((task, condition), condition) or "—"
                    for task, condition in zip(group["task"], group["condition"])
                ],
                "metric": group["metric_label"],
                "model a": group["model_a"],
                "model b": group["model_b"],
                "n": group["n"],
                "a": [value_text(v) for v in group["value_a"]],
                "b": [value_text(v) for v in group["value_b"]],
                "a − b": [
                    f"{d:+.1f}" + (f" [{lo:+.1f}, {hi:+.1f}]" if np.isfinite(lo) else "")
                    for d, lo, hi in zip(group["difference"], group["lo"], group["hi"])
                ],
                "a only / b only": [
                    "" if pd.isna(a) else f"{a} / {b}"
                    for a, b in zip(group["a_only"], group["b_only"])
                ],
                "test": group["test"],
                "p": [f"{p:.3g}" if np.isfinite(p) else "—" for p in group["p"]],
                "Holm p": [f"{p:.3g}" if np.isfinite(p) else "—" for p in group["p_holm"]],
                "": [
                    "significant" if s else ("not significant" if np.isfinite(p) else "not tested")
                    for s, p in zip(group["significant"], group["p"])
                ],
            }
        )
        parts += ["", f"## {group['task_title'].iloc[0]}", "", cells.to_markdown(index=False)]
    if table.empty:
        parts += [
            "",
            f"No two models to compare ({pairing.describe()}) with per-item outcomes on the"
            " same items in this run.",
        ]
    return "\n".join(parts) + "\n"
