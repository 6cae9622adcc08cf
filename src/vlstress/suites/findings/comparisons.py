"""Paired comparisons: two models on the same items, for every headline share that names its
per-item outcome (`Headline.item_column`). McNemar's exact test on the discordant items
(statsmodels), Holm's correction across the whole table; a difference is called significant only
when its Holm-adjusted p is below 1 - confidence."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from vlstress.outcomes import Outcomes
from vlstress.report import tasks

COLUMNS = [
    "task",
    "task_title",
    "dataset",
    "condition",
    "metric",
    "metric_label",
    "model_a",
    "model_b",
    "n",
    "value_a",
    "value_b",
    "difference",
    "a_only",
    "b_only",
    "p",
    "p_holm",
    "significant",
]


def _same_items(a: Outcomes, b: Outcomes) -> bool:
    """Same number of items, and the same truth per item where the outcomes record it."""
    if a.n != b.n:
        return False
    if "label" in a.columns and "label" in b.columns:
        return bool(np.array_equal(a.column("label"), b.column("label")))
    return True


def comparison_table(
    items: Mapping[tuple, list[Outcomes]], confidence: float = 0.95
) -> pd.DataFrame:
    """One row per (task, set, condition, metric, pair of models) with one outcomes block each
    on the same items: both values (percent), the difference, the discordant counts, McNemar's
    exact p and Holm's adjusted p over every row."""
    by_group: dict[tuple, dict[str, Outcomes]] = {}
    for (model, dataset, task, condition), blocks in items.items():
        if len(blocks) == 1:  # replicate seeds are not one set of paired items
            by_group.setdefault((task, dataset, condition), {})[model] = blocks[0]
    rows = []
    for (task_name, dataset, condition), models in sorted(by_group.items()):
        task = tasks.TASKS.get(task_name)
        if task is None:
            continue
        for headline in task.headlines:
            column = headline.item_column
            if column is None or headline.condition not in (None, condition):
                continue
            for model_a, model_b in combinations(sorted(models), 2):
                a, b = models[model_a], models[model_b]
                if column not in a.columns or column not in b.columns or not _same_items(a, b):
                    continue
                hit_a = a.column(column).astype(bool)
                hit_b = b.column(column).astype(bool)
                a_only = int(np.sum(hit_a & ~hit_b))
                b_only = int(np.sum(~hit_a & hit_b))
                both = int(np.sum(hit_a & hit_b))
                neither = int(np.sum(~hit_a & ~hit_b))
                test = mcnemar([[both, a_only], [b_only, neither]], exact=True)
                value_a, value_b = 100.0 * hit_a.mean(), 100.0 * hit_b.mean()
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
                        "n": a.n,
                        "value_a": value_a,
                        "value_b": value_b,
                        "difference": value_a - value_b,
                        "a_only": a_only,
                        "b_only": b_only,
                        "p": float(test.pvalue),
                    }
                )
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.DataFrame(rows)
    alpha = 1.0 - confidence
    reject, adjusted, _, _ = multipletests(table["p"].to_numpy(), alpha=alpha, method="holm")
    table["p_holm"] = adjusted
    table["significant"] = reject
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
    table: pd.DataFrame, confidence: float, labels: Mapping[tuple[str, str], str] | None = None
) -> str:
    """Per task, each pair of models on the same items: both values, the difference, McNemar's
    p and Holm's p, and whether the difference is significant. `labels` name the conditions
    (`condition_labels`; the condition key where none is given)."""
    labels = labels or {}
    from vlstress.suites.findings.cells import value_text

    level = f"{100 * (1 - confidence):g}"
    parts = [
        "# Paired comparisons",
        "",
        "Two models on the same images: the difference of their shares (points), McNemar's exact "
        "test on the images only one of them gets right (a only / b only), and Holm's correction "
        f"across all {len(table)} comparisons of this table. *significant*: Holm's p < {level}%"
        f" ({1 - confidence:g}). n: images per model.",
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
                "a − b": [f"{v:+.1f}" for v in group["difference"]],
                "a only / b only": [f"{a} / {b}" for a, b in zip(group["a_only"], group["b_only"])],
                "p": [f"{p:.3g}" for p in group["p"]],
                "Holm p": [f"{p:.3g}" for p in group["p_holm"]],
                "": ["significant" if s else "not significant" for s in group["significant"]],
            }
        )
        parts += ["", f"## {group['task_title'].iloc[0]}", "", cells.to_markdown(index=False)]
    if table.empty:
        parts += ["", "No two models with per-item outcomes on the same items in this run."]
    return "\n".join(parts) + "\n"
