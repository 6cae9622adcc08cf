"""The written outputs of `vlstress accuracy-vs-recall` but the figure (vlstress.suites.
accuracy_vs_recall.report): the table with the notes under it, and the numbers (DVC metrics)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vlstress.suites.accuracy_vs_recall.correlation import Fit


def tables(found: list[Fit], notes: list[str], block: dict[str, Any]) -> tuple[str, str]:
    """(Markdown, LaTeX) of the fits; the Markdown says each note above its provenance."""
    from vlstress.report.frames import render_frames
    from vlstress.suites.accuracy_vs_recall import report

    table = report.frame(found)
    markdown, latex, _ = render_frames(
        "accuracy_vs_recall", report.CAPTION, table if found else None, block
    )
    markdown = markdown.replace(
        "\n\n<!-- provenance",
        "".join(f"\n\n_Note: {n}._" for n in notes) + "\n\n<!-- provenance",
        1,
    )
    return markdown, latex


def numbers(
    testset: str, found: list[Fit], notes: list[str], block: dict[str, Any]
) -> dict[str, Any]:
    """The JSON body: every fit (NaN as null), the notes and the provenance."""
    import math
    from dataclasses import asdict

    fits = [
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in asdict(item).items()}
        for item in found
    ]
    return {"testset": testset, "fits": fits, "notes": notes, "provenance": block}


def scores(found: list[Fit]) -> dict[str, dict[str, Any]]:
    """DVC metrics: one file per fit, `<task>/<direction>/<condition>.json`, its numbers."""
    import math
    from dataclasses import asdict

    from vlstress.io import score_name

    files = {}
    for item in found:
        values = asdict(item)
        condition = values.pop("condition").replace("λ", "lam")  # label `mix λ=0.9`: ASCII name
        name = score_name(values.pop("task"), values.pop("direction"), condition)
        files[name] = {
            k: None if isinstance(v, float) and math.isnan(v) else v
            for k, v in values.items()
            if not isinstance(v, str)
        }
    return files
