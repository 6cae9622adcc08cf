"""The written outputs of `vlstress fingerprints` but the figures: the summary table (which
attribute moves which robustness, by how much, and whether the interval excludes zero) as Markdown
and LaTeX, every row as CSV, and the numbers with their provenance as JSON."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from vlstress.report.frames import MISSING, latex_escape
from vlstress.suites.findings.fingerprints import MIN_SERIES_MODELS, OK, Fingerprints

TABLE_COLUMNS = ["grouping", "group", "series", "n", "offset [interval]", "Holm p", "finding"]


def series_label(row: pd.Series | dict[str, Any], short: bool = False) -> str:
    """`zero-shot classification under corruptions · objects-c-fog · fog 5 · top-1 (%)`: what a
    series measures, readable (`short`: the task's name, not its title, for figures)."""
    task = row["task"] if short else row["task_title"]
    parts = [task, row["dataset"], row["condition_label"], row["metric_label"]]
    return " · ".join(str(p) for p in parts if str(p) not in ("", "original", "nan", "None"))


def _number(value: float) -> str:
    return MISSING if math.isnan(value) else f"{value:.1f}"


def why_untested(status: str) -> str:
    """A too-small row's status, short: `too small: 2 models`, `too small: only group`,
    `too small: 2 models on the series`."""
    if "single group" in status:
        return "too small: only group"
    count = status.removeprefix("too small: ").split(" (")[0]
    plural = "model" if count.startswith("1 ") else "models"
    return f"too small: {count.replace('model(s)', plural)}"


def offset_cell(row: pd.Series) -> str:
    """`+3.1 [1.2, 5.0]`, the interval's method named where it is not BCa; a too-small row says
    why it has none."""
    if row["status"] != OK:
        return why_untested(str(row["status"]))
    text = f"{row['offset']:+.1f} [{_number(row['lo'])}, {_number(row['hi'])}]"
    return text if row["interval_method"] == "BCa" else f"{text} ({row['interval_method']})"


def finding_cell(row: pd.Series) -> str:
    """`yes: more robust` / `yes: less robust` (the metric's direction decides), else empty."""
    if not row["finding"]:
        return ""
    better = (row["offset"] > 0) == bool(row["higher_is_better"])
    return "yes: more robust" if better else "yes: less robust"


def ordered(offsets: pd.DataFrame) -> pd.DataFrame:
    """Findings first, then the other tested rows, then the untested ones; by Holm p within
    (ties by the raw p), else as they came."""
    rank = (~offsets["finding"]).astype(int) + (offsets["status"] != OK).astype(int)
    keyed = offsets.assign(
        _rank=rank, _p=offsets["p_holm"].fillna(2.0), _raw=offsets["p"].fillna(2.0)
    )
    return keyed.sort_values(["_rank", "_p", "_raw"], kind="stable").drop(
        columns=["_rank", "_p", "_raw"]
    )


def frame(result: Fingerprints) -> pd.DataFrame:
    """The summary table as text cells, rows in `ordered` order."""
    rows = ordered(result.offsets)
    return pd.DataFrame(
        {
            "grouping": rows["grouping"],
            "group": rows["group"],
            "series": rows.apply(series_label, axis=1),
            "n": rows["n_models"].astype(int).astype(str),
            "offset [interval]": rows.apply(offset_cell, axis=1),
            "Holm p": rows["p_holm"].map(lambda p: MISSING if math.isnan(p) else f"{p:.2g}"),
            "finding": rows.apply(finding_cell, axis=1),
        },
        columns=TABLE_COLUMNS,
    )


def space_text() -> str:
    return (
        "a Theil–Sen line over all models, in logit space for shares (clipped to 0.5–99.5%)"
        " and linear otherwise"
    )


def caption(result: Fingerprints) -> str:
    s = result.settings
    level = f"{100 * s.confidence:g}%"
    return (
        f"Robustness fingerprints over {result.n_models} models: each group's mean offset from the"
        f" pooled line of a headline metric against zero-shot top-1 on {s.in_distribution}"
        f" ({space_text()}), in the metric's units (points for percentages), with its {level}"
        f" BCa bootstrap interval ({s.n_resamples} resamples, seed {s.seed}) and the Holm-adjusted"
        f" p of a one-sample t-test ({result.n_tested} tests). A finding: Holm p <"
        f" {1 - s.confidence:.2g} and an interval that excludes 0. Groups of fewer than"
        f" {s.min_group} models, a group alone on its series and a series of fewer than"
        f" {MIN_SERIES_MODELS} models are too small to test"
    )


def markdown(result: Fingerprints, block: dict[str, Any]) -> str:
    from vlstress.io import dumps_json

    table = frame(result)
    body = (
        table.to_markdown(index=False, disable_numparse=True)
        if not table.empty
        else "_No series to compare: the summary has no headline metric besides the x axis._"
    )
    found = result.findings
    headline = (
        f"{len(found)} finding(s) among {result.n_tested} tested offsets"
        if result.n_tested
        else "no offset tested: every group is too small"
    )
    notes = "".join(f"\n\n_Note: {note}._" for note in result.notes)
    return (
        f"### {caption(result)}\n\n**{headline}.**\n\n{body}{notes}\n\n"
        f"<!-- provenance\n{dumps_json(block)}-->\n"
    )


def latex(result: Fingerprints, block: dict[str, Any]) -> str:
    """A longtable (the rows run over pages): needs booktabs and longtable."""
    from vlstress.io import dumps_json

    comment = "".join(f"% {line}\n" for line in dumps_json(block).splitlines())
    head = (
        "% generated by `vlstress fingerprints`; needs \\usepackage{booktabs,longtable}\n" + comment
    )
    table = frame(result)
    if table.empty:
        return head + "% no series to compare\n"
    cells = table.map(latex_escape)
    cells.columns = [latex_escape(c) for c in cells.columns]
    text = cells.style.hide(axis="index").to_latex(
        hrules=True,
        column_format="llp{0.36\\linewidth}rp{0.16\\linewidth}rl",
        caption=latex_escape(caption(result)),
        label="tab:fingerprints",
        environment="longtable",
    )
    notes = "".join(f"% Note: {note}\n" for note in result.notes)
    return f"{head}{notes}{{\\small\n{text}}}\n"


def csv_text(result: Fingerprints) -> str:
    """Every row, every column (the intervals and p-values unrounded), in `ordered` order."""
    rows = ordered(result.offsets).copy()
    rows.insert(
        rows.columns.get_loc("metric_label") + 1, "series", rows.apply(series_label, axis=1)
    )
    return str(rows.to_csv(index=False, lineterminator="\n"))


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {key: _plain(value) for key, value in row.items()}
        for row in table.astype("object").to_dict(orient="records")
    ]


def numbers(result: Fingerprints, block: dict[str, Any]) -> dict[str, Any]:
    """The JSON body: the settings, every row (NaN as null), the lines, the notes, provenance."""
    s = result.settings
    return {
        "in_distribution": s.in_distribution,
        "n_models": result.n_models,
        "settings": {
            "attributes": list(s.attributes),
            "min_group": s.min_group,
            "bootstrap": {"method": "BCa", "n_resamples": s.n_resamples, "seed": s.seed},
            "confidence": s.confidence,
            "line": space_text(),
            "test": "one-sample t-test of the group's residuals against 0, Holm-adjusted",
        },
        "n_tested": result.n_tested,
        "findings": [
            f"{row['grouping']}={row['group']}: {offset_cell(row)} on {series_label(row)}"
            for _, row in ordered(result.findings).iterrows()
        ],
        "offsets": _records(ordered(result.offsets)),
        "pooled_lines": _records(result.pooled),
        "group_lines": _records(result.group_lines),
        "notes": result.notes,
        "provenance": block,
    }
