"""What the suites' tables share: the empty-cell mark, LaTeX escaping, a share with its interval
and an item count as cells, and rendering a set of (caption, frame) tables as Markdown and LaTeX
(pandas `to_markdown`, `Styler.to_latex`), a value with the headline table's interval."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from vlstress.report.headlines import Interval

MISSING = "–"
LATEX_SPECIAL = re.compile(r"([&%$#_{}])")


def latex_escape(text: str) -> str:
    """Escape user-provided names (model tags may hold `_`); λ becomes $\\lambda$."""
    text = (
        LATEX_SPECIAL.sub(r"\\\1", text)
        .replace("~", r"\textasciitilde{}")
        .replace("^", r"\textasciicircum{}")
    )
    return text.replace("λ", r"$\lambda$").replace("→", r"$\rightarrow$").replace("±", r"$\pm$")


def cell(value: float | None, digits: int = 1) -> str:
    return (
        MISSING
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def interval_text(value: float | None, n: float | None, digits: int = 1, scale: float = 1.0) -> str:
    """` [lo, hi]`: the 95% Wilson interval of a share over n items, in the value's unit (`scale`
    of it make 100 %: 1 for percent, 100 for a fraction); empty where the value or n is unknown
    or n is 0."""
    from vlstress.report.intervals import wilson_percent

    if value is None or n is None or pd.isna(value) or pd.isna(n):
        return ""
    lo, hi = wilson_percent([value * scale], [n])
    if not (math.isfinite(lo[0]) and math.isfinite(hi[0])):
        return ""
    return f" [{lo[0] / scale:.{digits}f}, {hi[0] / scale:.{digits}f}]"


def share_cell(value: float | None, n: float | None, digits: int = 1, scale: float = 1.0) -> str:
    """`25.0 [4.6, 69.9]`: a share and its 95% Wilson interval over n items (the value alone where
    n is unknown or 0, `–` where the value is undefined)."""
    text = cell(None if value is None or pd.isna(value) else float(value), digits)
    return text if text == MISSING else text + interval_text(value, n, digits, scale)


def headline_cell(value: float | None, found: Interval | None, digits: int = 1) -> str:
    """`15.8 [2.1, 35.9]`: a value with its interval from the headline table (`vlstress
    headlines`); the value alone where the table gives it none (fewer than 10 items, a degenerate
    bootstrap, a mean over replicate seeds), `–` where the value is undefined."""
    text = cell(None if value is None or pd.isna(value) else float(value), digits)
    if text == MISSING or found is None:
        return text
    if not (math.isfinite(found.lo) and math.isfinite(found.hi)):
        return text
    return f"{text} [{found.lo:.{digits}f}, {found.hi:.{digits}f}]"


def count_cell(n: float | None) -> str:
    """An item count: whole as an integer, a mean over replicates with one decimal."""
    if n is None or pd.isna(n):
        return MISSING
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"


def to_markdown(found: dict[str, tuple[str, pd.DataFrame]], notes: list[str]) -> str:
    parts = [
        f"### {caption}\n\n{frame.reset_index().to_markdown(index=False, disable_numparse=True)}"
        for caption, frame in found.values()
    ]
    parts += [f"_Note: {note}._" for note in notes]
    return "\n\n".join(parts)


def to_latex(found: dict[str, tuple[str, pd.DataFrame]], label: str, empty: str) -> str:
    parts = []
    for name, (caption, frame) in found.items():
        block = frame.reset_index()
        block.columns = [latex_escape(str(c)).replace("ε", r"$\varepsilon$") for c in block.columns]
        block = block.map(lambda v: latex_escape(str(v)))
        latex = block.style.hide(axis="index").to_latex(
            hrules=True,
            column_format="l" * len(frame.index.names) + "r" * frame.shape[1],
            caption=latex_escape(caption).replace("ε", r"$\varepsilon$"),
            label=f"{label}-{name}",
            position="t",
            position_float="centering",
            environment="table*",
        )
        latex = latex.replace(
            "\\begin{tabular}", "\\resizebox{\\textwidth}{!}{%\n\\begin{tabular}", 1
        )
        parts.append(latex.replace("\\end{tabular}\n", "\\end{tabular}%\n}\n", 1))
    return "\n".join(parts) if parts else f"% {empty}\n"


def render_frames(
    name: str, caption: str, frame: pd.DataFrame | None, block: dict
) -> tuple[str, str, list[str]]:
    """(Markdown, LaTeX, notes) of one suite's table; a suite without records gets a note
    instead."""
    return render_frame_set(name, {name: (caption, frame)}, block)


def render_frame_set(
    name: str,
    frames: dict[str, tuple[str, pd.DataFrame | None]],
    block: dict,
    notes: list[str] | None = None,
) -> tuple[str, str, list[str]]:
    """(Markdown, LaTeX, notes) of a suite's tables (name -> (caption, frame or None)), the ones
    with rows, and its notes (printed under the tables); a suite without records gets a note
    instead."""
    from vlstress.io import dumps_json

    found = {key: (caption, f) for key, (caption, f) in frames.items() if f is not None}
    notes = list(notes or []) + (
        [] if found else [f"no {name} records: the {name} suite is off or has not run"]
    )
    markdown = f"{to_markdown(found, notes)}\n\n<!-- provenance\n{dumps_json(block)}-->\n"
    comment = "".join(f"% {line}\n" for line in dumps_json(block).splitlines())
    latex = to_latex(found, "tab:holistic", f"no {name} records")
    return (
        markdown,
        "% generated by `vlstress tables`; needs "
        f"\\usepackage{{booktabs,graphicx}}\n{comment}{latex}",
        notes,
    )
