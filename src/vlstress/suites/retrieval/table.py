"""The paper's results table (RoCOCO layout) from the long summary table, as pandas frames.

Rows: models (smallest first). Columns, grouped by the retrieval direction of each
stress task of the registry (`report.tasks`): image → text (R@1 on the original
gallery, then for each text set R@1, drop rate and false R@1) and text → image
(original, then each image variant and λ). Cells: mean over replicate seeds, `± std`
when there are several seeds, `–` when undefined (e.g. drop rate with an original
R@1 of 0). A model without a retrieval record (an image classifier or an assistant: no text
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

log = logging.getLogger(__name__)

# stressed column -> header; the original gallery only shows R@1
CELL_METRICS = {"R@1": "R@1", "drop_rate": "Drop", "false_R@1": "False R@1"}


def _cell(mean: float, std: float, n: int, latex: bool) -> str:
    if mean is None or math.isnan(mean):
        return MISSING
    if n > 1 and not math.isnan(std):
        return f"{mean:.1f}{{\\scriptsize $\\pm${std:.1f}}}" if latex else f"{mean:.1f} ± {std:.1f}"
    return f"{mean:.1f}"


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
    agg = records.aggregate(table)
    notes = []
    models = records.models(agg)
    cells: dict[tuple[str, str, str], dict[str, str]] = {}
    sizes = agg.drop_duplicates("label").set_index("label")["n_params"]
    cells[("", "", "Params (M)")] = {
        m: MISSING if pd.isna(sizes[m]) else f"{sizes[m] / 1e6:.0f}" for m in models
    }
    for name, info in tasks.stressed_tasks():
        for direction in info.directions:
            header = _group_header(direction)
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
            if original.empty:
                notes.append(
                    f"no original-gallery {header} R@1 ({info.baseline} records): the {header} "
                    "group has no Original column"
                )
            else:
                by_model = {
                    r.label: _cell(r.mean, r.std, r.n_seeds, latex) for r in original.itertuples()
                }
                cells[(header, "Original", "R@1")] = {m: by_model.get(m, MISSING) for m in models}
            for condition in records.conditions(agg, name):
                rows = stressed[stressed["condition_label"] == condition]
                for metric, column in CELL_METRICS.items():
                    sub = rows[rows["metric"] == f"{direction}_{metric}"]
                    by_model = {
                        r.label: _cell(r.mean, r.std, r.n_seeds, latex) for r in sub.itertuples()
                    }
                    cells[(header, condition, column)] = {
                        m: by_model.get(m, MISSING) for m in models
                    }
    frame = pd.DataFrame(cells, index=pd.Index(models, name="Model"))
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    measured = frame.drop(columns=[("", "", "Params (M)")]).ne(MISSING).any(axis=1)
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
        block.columns = [f"{cond} {metric}" for cond, metric in block.columns]
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
        + f"; {MISSING} undefined. Models marked random-init have seeded random weights."
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
