"""The paper's results table (RoCOCO layout) from the long summary table, as pandas frames.

Rows: models (smallest first). Columns, grouped by the retrieval direction of each
stress task of the registry (`report.tasks`): image → text (R@1 on the original
gallery, then for each text set R@1, drop rate and false R@1) and text → image
(original, then each image variant and λ). Cells: mean over replicate seeds, `± std`
when there are several seeds, `–` when undefined (e.g. drop rate with an original
R@1 of 0); a share (R@1, false R@1) then its 95% Wilson interval `[lo, hi]` over the queries it
counts (`queries`: images for image → text, captions for text → image; a mean over seeds is a
fractional count), and each direction's `n` column says how many. A drop rate is a ratio, not a
share: no interval. A model without a retrieval record (an image classifier or an assistant: no text
tower to rank captions with) has no row; a note names it. Rendering goes through pandas only:
`DataFrame.to_markdown` (tabulate) and `Styler.to_latex` (booktabs rules, multicolumn headers;
one `table*` per direction, scaled to the text width).
"""

from __future__ import annotations

import logging
import math

import pandas as pd

from vlstress.errors import VlstressError
from vlstress.report import records, tasks
from vlstress.report.frames import MISSING, latex_escape
from vlstress.suites.retrieval.queries import interval, is_share, query_counts

log = logging.getLogger(__name__)

# stressed column -> header; the original gallery only shows R@1
CELL_METRICS = {"R@1": "R@1", "drop_rate": "Drop", "false_R@1": "False R@1"}


N_COLUMN = ("", "n")  # (condition, metric) of each direction's count of queries
PM_LATEX = "$\\pm$"


def _cell(mean: float, std: float, n: int, latex: bool, queries: float | None = None) -> str:
    """`52.0 ± 1.0 [45.1, 58.9]`: the mean over n seeds, their std when several, and the Wilson
    interval of a share of `queries` queries (None or NaN: not a share, no interval)."""
    if mean is None or math.isnan(mean):
        return MISSING
    spread = f"{std:.1f}" if n > 1 and not math.isnan(std) else ""
    bounds = ""
    if queries is not None:
        lo, hi = interval(mean, queries)
        bounds = "" if math.isnan(lo) else f"[{lo:.1f}, {hi:.1f}]"
    if latex:
        small = " ".join(filter(None, [spread and PM_LATEX + spread, bounds]))
        return f"{mean:.1f}{{\\scriptsize {small}}}" if small else f"{mean:.1f}"
    return " ".join(filter(None, [f"{mean:.1f}", spread and f"± {spread}", bounds]))


def _with_queries(agg: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """`agg` with `queries`: the number of queries of each share (NaN for other metrics)."""
    keys = [*records.CASE_COLUMNS, "metric"]
    counts = table.assign(queries=query_counts(table)).groupby(keys, sort=False)["queries"].max()
    found = pd.MultiIndex.from_frame(agg[keys]).map(lambda key: counts.get(key, math.nan))
    shares = agg["metric"].astype(str).map(is_share)
    return agg.assign(queries=pd.Series(found, index=agg.index).where(shares))


def _n_cells(by_model: dict[str, list[float]], models: list[str]) -> dict[str, str]:
    """Each model's counts of queries in a direction, distinct ones in column order."""
    cells = {}
    for model in models:
        counts = [str(int(v)) for v in by_model.get(model, []) if not math.isnan(v)]
        cells[model] = "/".join(dict.fromkeys(counts)) or MISSING
    return cells


def _baseline(info: tasks.Task) -> str:
    """The task whose records are the original gallery of a stressed task (`tasks.stressed_tasks`
    only yields tasks that have one)."""
    if info.baseline is None:
        raise VlstressError(f"task {info.title!r} stresses no baseline task")
    return info.baseline


def _group_header(direction: str) -> str:
    """`i2t` -> `Image → Text`."""
    return tasks.DIRECTIONS[direction].replace("image", "Image", 1).replace("text", "Text", 1)


def paper_table(table: pd.DataFrame, latex: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """(frame with 3-level columns (direction, condition, metric) and model rows, notes)."""
    agg = _with_queries(records.aggregate(table), table)
    notes = []
    models = records.models(agg)
    cells: dict[tuple[str, str, str], dict[str, str]] = {}
    sizes = agg.drop_duplicates("label").set_index("label")["n_params"]
    cells[("", "", "Params (M)")] = {
        m: MISSING if pd.isna(sizes[m]) else f"{sizes[m] / 1e6:.0f}" for m in models
    }
    queries: dict[str, dict[str, list[float]]] = {}
    for name, info in tasks.stressed_tasks():
        for direction in info.directions:
            header = _group_header(direction)
            counts = queries.setdefault(header, {})
            original = records.rows(agg, _baseline(info), f"{direction}_R@1")
            stressed = records.rows(agg, name)
            if original.empty and stressed.empty:
                notes.append(
                    f"no {info.title} records and no original-gallery {header} R@1: the {header} "
                    "group is left out"
                )
                continue
            if stressed.empty:
                notes.append(
                    f"no {info.title} records: the {header} group shows the original gallery only"
                )
            cells[(header, *N_COLUMN)] = {}  # filled below: first in its group
            if original.empty:
                notes.append(
                    f"no original-gallery {header} R@1 ({info.baseline} records): the {header} "
                    "group has no Original column"
                )
            else:
                by_model = {
                    r.label: _cell(r.mean, r.std, r.n_seeds, latex, r.queries)
                    for r in original.itertuples()
                }
                cells[(header, "Original", "R@1")] = {m: by_model.get(m, MISSING) for m in models}
                for r in original.itertuples():
                    counts.setdefault(r.label, []).append(r.queries)
            for condition in records.conditions(agg, name):
                rows = stressed[stressed["condition_label"] == condition]
                for metric, column in CELL_METRICS.items():
                    sub = rows[rows["metric"] == f"{direction}_{metric}"]
                    # `queries` is NaN where the metric is no share (a drop rate): no interval
                    by_model = {
                        r.label: _cell(r.mean, r.std, r.n_seeds, latex, r.queries)
                        for r in sub.itertuples()
                    }
                    for r in sub.itertuples():
                        counts.setdefault(r.label, []).append(r.queries)
                    cells[(header, condition, column)] = {
                        m: by_model.get(m, MISSING) for m in models
                    }
    for header, per_model in queries.items():
        if (header, *N_COLUMN) in cells:
            cells[(header, *N_COLUMN)] = _n_cells(per_model, models)
    frame = pd.DataFrame(cells, index=pd.Index(models, name="Model"))
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    measured = frame.drop(columns=[("", "", "Params (M)")]).ne(MISSING).any(axis=1)
    several = [
        header
        for header in queries
        if (header, *N_COLUMN) in frame.columns
        and frame[(header, *N_COLUMN)].str.contains("/", regex=False).any()
    ]
    if several:
        notes.append(
            f"n of {', '.join(several)}: the conditions count different queries; their counts in "
            "the order of the columns"
        )
    if frame.shape[1] > 1 and not measured.all():
        absent = [m for m in models if not measured[m]]
        notes.append(
            f"no retrieval records (no text tower to rank captions with): {', '.join(absent)} "
            "left out"
        )
        frame = frame[measured]
    return frame, notes


def retrieval_datasets(table: pd.DataFrame) -> list[str]:
    """The datasets of the retrieval tasks' records (the stressed tasks and their baselines)."""
    names = {name for name, _ in tasks.stressed_tasks()}
    names |= {_baseline(info) for _, info in tasks.stressed_tasks()}
    return sorted(table.loc[table["task"].isin(names), "dataset"].astype(str).unique())


def to_markdown(table: pd.DataFrame) -> str:
    """One pipe table per retrieval direction (Markdown has no grouped headers)."""
    frame, _ = paper_table(table)
    params = frame[("", "", "Params (M)")]
    parts = []
    for direction in dict.fromkeys(frame.columns.get_level_values(0)):
        if not direction:
            continue
        block = frame[direction].copy()
        block.columns = [f"{cond} {metric}".strip() for cond, metric in block.columns]
        block.insert(0, "Params (M)", params)
        parts.append(
            f"### {direction}\n\n"
            f"{block.reset_index().to_markdown(index=False, disable_numparse=True)}"
        )
    return "\n\n".join(parts)


def to_latex(table: pd.DataFrame, caption: str, label: str = "tab:stress") -> str:
    """One booktabs `table*` per retrieval direction (the full width of a two-column paper each).

    Labels `<label>-i2t` and `<label>-t2i`; the caption names the direction.
    """
    frame, _ = paper_table(table, latex=True)
    params = frame[("", "", "Params (M)")]
    models = [latex_escape(m) for m in frame.index]
    parts = []
    for direction in dict.fromkeys(frame.columns.get_level_values(0)):
        if not direction:
            continue
        block = frame[direction].copy()
        block.insert(0, ("", "Params (M)"), params.to_numpy())
        block.insert(0, ("", "Model"), models)
        block.columns = pd.MultiIndex.from_tuples(
            [tuple(latex_escape(c) for c in col) for col in block.columns]
        )
        short = next((d for d in tasks.DIRECTIONS if _group_header(d) == direction), direction)
        latex = block.style.hide(axis="index").to_latex(
            hrules=True,
            multicol_align="c",
            column_format="lr" + "r" * (block.shape[1] - 2),
            caption=latex_escape(f"{direction}. {caption}"),
            label=f"{label}-{short}",
            position="t",
            position_float="centering",
            environment="table*",
        )
        # wide tables: scale the tabular to the text width (needs \usepackage{graphicx})
        latex = latex.replace(
            "\\begin{tabular}", "\\resizebox{\\textwidth}{!}{%\n\\begin{tabular}", 1
        )
        parts.append(latex.replace("\\end{tabular}\n", "\\end{tabular}%\n}\n", 1))
    return "\n".join(parts)


def render(table: pd.DataFrame, block: dict) -> tuple[str, str, list[str]]:
    """(Markdown, LaTeX, notes) of the stress table; `block` is the provenance the files carry."""
    from vlstress.io import dumps_json

    _, notes = paper_table(table)
    dataset = ", ".join(retrieval_datasets(table)) or "no retrieval data"
    seeds = records.max_replicates(table)
    caption = (
        f"Retrieval under stress on {dataset}: R@1, drop rate and false R@1 (%)"
        + (", mean ± std over variant seeds" if seeds > 1 else "")
        + f"; {MISSING} undefined. [lo, hi]: 95% Wilson interval of R@1 and false R@1 over the n "
        "queries of each direction (images for image → text, captions for text → image)"
        + (", of the mean over seeds" if seeds > 1 else "")
        + "; a drop rate is a ratio of two R@1, not a share: no interval. Models marked "
        "random-init have seeded random weights."
    )
    note_md = "".join(f"\n\n_Note: {n}._" for n in notes)
    markdown = (
        f"{caption}\n\n{to_markdown(table)}{note_md}\n\n<!-- provenance\n{dumps_json(block)}-->\n"
    )
    comment = "".join(f"% {line}\n" for line in dumps_json(block).splitlines())
    latex = (
        "% generated by `vlstress tables`; needs \\usepackage{booktabs,graphicx}\n"
        f"{comment}{to_latex(table, caption)}"
    )
    return markdown, latex, notes
