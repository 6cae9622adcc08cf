"""The prompts suite's tables:
- the prompt-count ablation: rows = (model, test set, templates); columns = n (images), top-1,
  ECE, NLL and the MCM AUROC against each OOD set, mean ± std over the seeded subsets; top-1, a
  share, with its 95% Wilson interval over the n images;
- AutoCLIP: rows = (model, set); columns = n, top-1 with averaged templates, with the mean
  template cosine and with AutoCLIP (each `value [lo, hi]`), the gain (points; a paired difference
  on the same images, with the headline table's paired BCa bootstrap interval over them) and the
  mean largest template weight.
Cells are means over replicates (a fractional count for the interval); `–` where a value is
undefined.
"""

from __future__ import annotations

import json

import pandas as pd

from vlstress.io import dumps_json
from vlstress.report import records
from vlstress.report.frames import MISSING, headline_cell, interval_text, to_latex, to_markdown
from vlstress.report.frames import cell as _cell
from vlstress.report.headlines import Interval, case_key, intervals_by_case
from vlstress.suites.prompts.figures import set_label

ABLATION_CAPTION = (
    "Zero-shot metrics against the number of prompt templates (mean ± std over random template "
    "subsets): top-1 (%) [95% Wilson interval over the n images], ECE (%), NLL, OOD AUROC of MCM "
    "(%); ECE, NLL and AUROC are not shares of the images: no interval"
)
AUTOCLIP_CAPTION = (
    "AutoCLIP's per-image template weights against averaged templates: top-1 (%) of the "
    "averaged classifier, of the mean template cosine (uniform weights) and of AutoCLIP [95% "
    "Wilson interval over the n images], gain over averaging (points; a paired difference on the "
    "same images [95% seeded BCa bootstrap interval over them, both classifiers' outcomes "
    "resampled together; none under 10 images or for a mean over replicate seeds]), mean largest "
    "template weight"
)
METRICS = {"top1": ("Top-1", 1), "ece": ("ECE", 1), "nll": ("NLL", 3)}
SHARES = {"top1"}

Counts = dict[tuple[str, str], float]  # (model label, condition_json) -> images


def image_counts(table: pd.DataFrame, task: str) -> Counts:
    """The images behind every (model, condition) of one task of the long table (`n_images`)."""
    rows = records.rows(table, task)
    if rows.empty or "n_images" not in rows:
        return {}
    n = pd.to_numeric(rows["n_images"], errors="coerce").astype("float64")
    found = n.groupby([rows["label"], rows["condition_json"]], sort=False).max()
    return {key: float(v) for key, v in found.items() if pd.notna(v)}


def _count(n: float | None) -> str:
    return MISSING if n is None else f"{n:.3g}"


def _spread(mean: float | None, std: float | None, n: int, digits: int) -> str:
    text = _cell(mean, digits)
    if text == MISSING or n < 2 or std is None or pd.isna(std):
        return text
    return f"{text} ± {std:.{digits}f}"


def ablation_table(agg: pd.DataFrame, counts: Counts | None = None) -> pd.DataFrame | None:
    """Rows = (model, set, templates); `counts`: `image_counts` of the long table's
    prompt_count rows (the n of each top-1 interval)."""
    rows = pd.concat([records.rows(agg, "prompt_count"), records.rows(agg, "prompt_count_ood")])
    if rows.empty:
        return None
    counts = counts or {}
    out: dict[tuple[str, str, int], dict[str, str]] = {}
    for row in rows.itertuples():
        c = json.loads(row.condition_json)
        key = (row.label, str(c["set"]), int(c["templates"]))
        if "ood" in c:
            if row.metric != "auroc":
                continue
            column, digits = f"AUROC vs {c['ood']}", 1
        elif row.metric in METRICS:
            column, digits = METRICS[row.metric]
        else:
            continue
        text = _spread(row.mean, row.std, int(row.n_seeds), digits)
        if row.metric in SHARES and "ood" not in c:
            n = counts.get((row.label, row.condition_json))
            out.setdefault(key, {})["n"] = _count(n)
            text += interval_text(row.mean, n, digits)
        out.setdefault(key, {})[column] = text
    models = {label: i for i, label in enumerate(records.models(rows))}
    sets = {name: i for i, name in enumerate(dict.fromkeys(key[1] for key in out))}
    keys = sorted(out, key=lambda key: (models[key[0]], sets[key[1]], key[2]))
    frame = pd.DataFrame([out[key] for key in keys]).fillna(MISSING)
    frame.index = pd.MultiIndex.from_tuples(keys, names=["model", "set", "templates"])
    first = ["n", *(title for title, _ in METRICS.values())]
    first = [title for title in first if title in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]


def autoclip_table(
    agg: pd.DataFrame,
    counts: Counts | None = None,
    intervals: dict[tuple[str, ...], Interval] | None = None,
) -> pd.DataFrame | None:
    """Rows = (model, set); `counts`: `image_counts` of the long table's autoclip rows;
    `intervals`: the headline table's (`intervals_by_case`), the gain's."""
    rows = records.rows(agg, "autoclip")
    if rows.empty:
        return None
    counts = counts or {}
    intervals = intervals or {}
    out = []
    for (model, label, dataset, condition, cond), group in rows.groupby(
        ["model", "label", "dataset", "condition", "condition_json"], sort=False, dropna=False
    ):
        gain = intervals.get((*case_key(model, dataset, "autoclip", condition), "gain"))
        values = dict(zip(group["metric"], group["mean"]))
        n = counts.get((label, cond))

        def top1(metric: str, n: float | None = n, values: dict = values) -> str:
            return _cell(values.get(metric)) + interval_text(values.get(metric), n)

        out.append(
            {
                "model": label,
                "set": set_label(json.loads(cond)),
                "n": _count(n),
                "Top-1 (averaged)": top1("top1_average"),
                "Top-1 (uniform)": top1("top1_uniform"),
                "Top-1 (AutoCLIP)": top1("top1_autoclip"),
                "Gain": headline_cell(values.get("gain"), gain),
                "Max. weight": _cell(values.get("max_weight"), 3),
            }
        )
    return pd.DataFrame(out).set_index(["model", "set"])


def render(
    table: pd.DataFrame, block: dict, headlines: pd.DataFrame | None = None
) -> tuple[str, str, list[str]]:
    agg = records.aggregate(table)
    intervals = intervals_by_case(headlines) if headlines is not None else None
    frames = {
        "prompt-count": (
            ABLATION_CAPTION,
            ablation_table(agg, image_counts(table, "prompt_count")),
        ),
        "autoclip": (
            AUTOCLIP_CAPTION,
            autoclip_table(agg, image_counts(table, "autoclip"), intervals),
        ),
    }
    found = {name: (caption, f) for name, (caption, f) in frames.items() if f is not None}
    notes = [] if found else ["no prompts records: the prompts suite is off or has not run"]
    markdown = f"{to_markdown(found, notes)}\n\n<!-- provenance\n{dumps_json(block)}-->\n"
    comment = "".join(f"% {line}\n" for line in dumps_json(block).splitlines())
    latex = to_latex(found, "tab:prompts", "no prompts records")
    return (
        markdown,
        "% generated by `vlstress tables`; needs "
        f"\\usepackage{{booktabs,graphicx}}\n{comment}{latex}",
        notes,
    )
