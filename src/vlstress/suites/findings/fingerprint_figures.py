"""The figures of `vlstress fingerprints`: a forest plot of the group offsets (one panel per
grouping) and the lines they are offsets from (one panel per series, points coloured by group)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vlstress.report.figures import _add_notes, model_panels, placeholder
from vlstress.report.intervals import MIN_BOOTSTRAP_ITEMS
from vlstress.suites.findings.fingerprint_report import (
    ordered,
    series_label,
    space_text,
    why_untested,
)
from vlstress.suites.findings.fingerprints import OK, SERIES, Fingerprints, fitted, line_band

ROWS_PER_PANEL = 8  # forest rows of one grouping: more would not stay readable at paper size
UNTESTED_PER_PANEL = 3
ROW_IN, PANEL_IN = 0.36, 0.75  # inches per forest row, and per panel (title, axis)
TITLE_IN, LEGEND_IN, BANNER_IN = 0.35, 0.8, 0.4
MAX_SERIES_PANELS = 9  # panels of the lines figure (3 by 3)
FINDING, TESTED, UNTESTED = "#c0392b", "#34495e", "0.6"
OFFSET_AXIS = "offset from the pooled line (metric's units; points for %)"


def _title(result: Fingerprints, what: str) -> str:
    return (
        f"{what} against zero-shot top-1 on {result.settings.in_distribution}"
        f" (n = {result.n_models} models)"
    )


def _legend_handles(result: Fingerprints) -> list[Line2D]:
    alpha = f"{1 - result.settings.confidence:.2g}"
    level = f"{100 * result.settings.confidence:g}%"
    return [
        Line2D(
            [],
            [],
            color=FINDING,
            marker="o",
            label=f"finding (Holm p < {alpha}, interval excludes 0)",
        ),
        Line2D(
            [], [], color=TESTED, marker="o", label=f"tested: mean offset, {level} BCa interval"
        ),
        Line2D(
            [],
            [],
            color=UNTESTED,
            marker="o",
            markerfacecolor="white",
            linestyle="none",
            label=f"untested (< {result.settings.min_group} models, or alone): mean only",
        ),
    ]


def _panel_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """A grouping's rows to draw: the tested ones first (findings, then the smallest Holm p), at
    most ROWS_PER_PANEL in all and UNTESTED_PER_PANEL untested ones (they all look alike)."""
    rows = ordered(rows)
    tested = rows[rows["status"] == OK].head(ROWS_PER_PANEL)
    room = min(UNTESTED_PER_PANEL, ROWS_PER_PANEL - len(tested))
    return pd.concat([tested, rows[rows["status"] != OK].head(max(room, 0))])


def forest(result: Fingerprints) -> plt.Figure:
    """Group offsets with their intervals, one panel per grouping (`_panel_rows`)."""
    offsets = result.offsets
    if offsets.empty:
        return placeholder(
            _title(result, "Fingerprints"),
            "no series to compare: the summary has no headline metric besides the x axis, or no"
            " model has an attribute to group by",
        )
    groupings = [g for g in result.settings.attributes if g in set(offsets["grouping"])]
    every = {g: offsets[offsets["grouping"] == g] for g in groupings}
    shown = {g: _panel_rows(rows) for g, rows in every.items()}
    heights = [len(rows) for rows in shown.values()]
    banner = result.n_tested == 0
    top = TITLE_IN + LEGEND_IN + (BANNER_IN if banner else 0.0)  # inches above the panels
    height = top + ROW_IN * sum(heights) + PANEL_IN * len(groupings)
    fig, axes = plt.subplots(
        len(groupings),
        1,
        figsize=(7.0, height),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    notes = []
    for ax, grouping in zip(axes[:, 0], groupings):
        rows, total = shown[grouping], every[grouping]
        _forest_panel(ax, rows.reset_index(drop=True))
        tested = int((total["status"] == OK).sum())
        found = int(total["finding"].sum())
        state = f"{tested} of {len(total)} rows tested" if tested else "all rows too small"
        more = f"; {len(rows)} shown" if len(total) > len(rows) else ""
        ax.set_title(
            f"{grouping}: {found} finding(s), {state}{more}", loc="left", fontsize="medium"
        )
        if len(total) > len(rows):
            notes.append(f"{grouping}: {len(total) - len(rows)} more row(s) in the table")
    axes[-1, 0].set_xlabel(OFFSET_AXIS)
    fig.suptitle(
        _title(result, "Group offsets from the pooled line"),
        y=1.0 - 0.08 / height,
        va="top",
        fontsize="medium",
    )
    fig.legend(
        handles=_legend_handles(result),
        loc="upper center",
        bbox_to_anchor=(0.5, 1.0 - TITLE_IN / height),
        ncol=1,
        frameon=False,
        fontsize="small",
    )
    if banner:
        fig.text(
            0.5,
            1.0 - (TITLE_IN + LEGEND_IN) / height,
            textwrap.fill(
                f"No offset is tested: every group has fewer than {result.settings.min_group}"
                " models or is alone on its series. Grey points are untested means.",
                80,
            ),
            ha="center",
            va="top",
            color=FINDING,
            fontweight="bold",
            fontsize="small",
            gid="untested-banner",
        )
    fig.tight_layout(rect=(0, 0, 1, 1.0 - top / height), h_pad=1.2)
    _add_notes(fig, [*notes, f"lines: {space_text()}"])
    return fig


def _forest_panel(ax: plt.Axes, rows: pd.DataFrame) -> None:
    y = np.arange(len(rows))[::-1]  # the first row on top
    labels = []
    for pos, (_, row) in zip(y, rows.iterrows()):
        ok = row["status"] == OK
        colour = FINDING if row["finding"] else TESTED if ok else UNTESTED
        if ok:
            ax.errorbar(
                row["offset"],
                pos,
                xerr=[[row["offset"] - row["lo"]], [row["hi"] - row["offset"]]],
                fmt="o",
                color=colour,
                capsize=3,
                markersize=5,
                gid="interval",
            )
        elif np.isfinite(row["offset"]):
            ax.plot(
                row["offset"],
                pos,
                "o",
                markerfacecolor="white",
                color=colour,
                markersize=5,
                gid="too-small",
            )
        why = "only group" if why_untested(row["status"]).endswith("only group") else "too small"
        size = f"n = {row['n_models']}" + ("" if ok else f"; {why}")
        labels.append(
            f"{row['group']} ({size})\n"
            + textwrap.shorten(series_label(row, short=True), 62, placeholder="…")
        )
    ax.axvline(0, color="0.2", linewidth=0.9, zorder=0, gid="zero")
    ax.set_yticks(y, labels, fontsize="x-small")
    for tick, (_, row) in zip(ax.get_yticklabels(), rows.iterrows()):
        if row["finding"]:
            tick.set_color(FINDING)
            tick.set_fontweight("bold")
        elif row["status"] != OK:
            tick.set_color("0.45")
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.grid(axis="y", visible=False)
    left, right = ax.get_xlim()
    span = max(abs(left), abs(right), 1.0)
    ax.set_xlim(-span * 1.08, span * 1.08)  # zero in the middle


# --------------------------------------------------------------------------- the lines


def lines_grouping(result: Fingerprints) -> str | None:
    """The first grouping with a finding, else the first with two groups or more on some series,
    else the first grouping."""
    points = result.points
    if points.empty or not result.settings.attributes:
        return None
    found = set(result.findings["grouping"])
    for name in result.settings.attributes:
        if name in found:
            return name
    for name in result.settings.attributes:
        counts = points.dropna(subset=[name]).groupby(SERIES, dropna=False)[name].nunique()
        if (counts >= 2).any():
            return name
    return result.settings.attributes[0]


def _series_order(result: Fingerprints, grouping: str) -> list[tuple]:
    """Series with a finding in the grouping first, then by smallest Holm p, then by the number of
    groups, then as they came."""
    rows = result.offsets[result.offsets["grouping"] == grouping]
    keys = list(dict.fromkeys(map(tuple, result.points[SERIES].to_numpy())))
    rank = {}
    for key, part in rows.groupby(SERIES, sort=False, dropna=False):
        p = part["p_holm"].min()
        # then the series with more groups to compare
        rank[tuple(key)] = (not part["finding"].any(), p if np.isfinite(p) else 2.0, -len(part))
    return sorted(keys, key=lambda k: (*rank.get(k, (True, 2.0, 0)), keys.index(k)))


def lines(result: Fingerprints) -> plt.Figure:
    """For one grouping (`lines_grouping`): one panel per series, the models' points coloured by
    group, the pooled line and each large-enough group's line, at most MAX_SERIES_PANELS."""
    grouping = lines_grouping(result)
    title = "Fingerprint lines"
    if grouping is None:
        return placeholder(title, "no series to draw: no headline metric besides the x axis")
    order = _series_order(result, grouping)
    shown = order[:MAX_SERIES_PANELS]
    points = result.points
    groups = [
        g
        for g in dict.fromkeys(result.offsets.loc[result.offsets["grouping"] == grouping, "group"])
    ]
    palette = dict(zip(groups, sns.color_palette("colorblind", max(len(groups), 1))))
    fig, panels, firsts, _ = model_panels(len(shown), 3.3, 3.0, extra_width=2.6, sharey=False)
    for ax, key in zip(panels, shown):
        _lines_panel(ax, result, grouping, key, points, palette)
    for ax in panels:
        ax.set_xlabel(f"zero-shot top-1 on {result.settings.in_distribution} (%)")
    sizes = points.drop_duplicates("model").groupby(grouping)["model"].size()
    handles: list[Artist] = [
        Line2D(
            [], [], marker="o", linestyle="none", color=palette[g], label=f"{g} (n = {sizes[g]})"
        )
        for g in groups
    ]
    if points[grouping].isna().any():
        handles.append(
            Line2D([], [], marker="x", linestyle="none", color="0.5", label=f"no {grouping}")
        )
    handles += [
        Line2D([], [], color="black", label="pooled line (all models)"),
        Patch(
            facecolor="k",
            alpha=0.12,
            label=f"its {100 * result.settings.confidence:g}% band (bootstrap over models,"
            f" ≥ {MIN_BOOTSTRAP_ITEMS})",
        ),
        Line2D(
            [],
            [],
            color="0.4",
            linestyle="--",
            label=f"group line (≥ {result.settings.min_group} models)",
        ),
    ]
    fig.legend(
        handles=handles,
        title=grouping,
        loc="upper left",
        bbox_to_anchor=(1.0, 0.95),
        fontsize="small",
        title_fontsize="small",
        frameon=False,
    )
    fig.suptitle(_title(result, f"Each metric by {grouping}"))
    fig.tight_layout()
    notes = [f"lines: {space_text()}, drawn back in the metric's units"]
    if len(order) > len(shown):
        notes.append(
            f"showing {len(shown)} of {len(order)} series (findings first, then the smallest"
            " Holm p); every series is in the table"
        )
    _add_notes(fig, notes)
    return fig


def _lines_panel(
    ax: plt.Axes,
    result: Fingerprints,
    grouping: str,
    key: tuple,
    points: pd.DataFrame,
    palette: dict[str, tuple[float, float, float]],
) -> None:
    mask = np.logical_and.reduce([points[c].to_numpy() == v for c, v in zip(SERIES, key)])
    data = points[mask]
    info = data.iloc[0]
    proportion = bool(info["proportion"])
    known = data[data[grouping].notna()]
    for group, part in known.groupby(grouping, sort=False):
        ax.scatter(
            part["x"], part["y"], s=22, color=palette.get(str(group), "0.5"), edgecolor="white"
        )
    unknown = data[data[grouping].isna()]
    if not unknown.empty:
        ax.scatter(unknown["x"], unknown["y"], s=22, marker="x", color="0.5")
    # models with the same values hide each other: mark a point shared by k models ×k
    shared = data.groupby([data["x"].round(6), data["y"].round(6)]).size()
    for (x, y), count in shared[shared > 1].items():
        ax.annotate(
            f"×{count}", (x, y), xytext=(4, 3), textcoords="offset points", fontsize="x-small"
        )
    grid = np.linspace(data["x"].min(), data["x"].max(), 100)

    def select(table: pd.DataFrame) -> pd.DataFrame:
        return table[np.logical_and.reduce([table[c] == v for c, v in zip(SERIES, key)])]

    pooled = select(result.pooled)
    settings = result.settings
    band = line_band(
        data["x"].to_numpy(), data["y"].to_numpy(), proportion, grid,
        settings.n_resamples, settings.confidence, settings.seed,
    )  # fmt: skip
    if band is not None and not pooled.empty:
        ax.fill_between(grid, band[0], band[1], color="k", alpha=0.12, linewidth=0, gid="band")
    for _, line in pooled.iterrows():
        ax.plot(
            grid, fitted(grid, line["slope"], line["intercept"], proportion), "k-", gid="pooled"
        )
    own = select(result.group_lines)
    for _, line in own[own["grouping"] == grouping].iterrows():
        ax.plot(
            grid,
            fitted(grid, line["slope"], line["intercept"], proportion),
            "--",
            color=palette.get(str(line["group"]), "0.4"),
            linewidth=1.2,
            gid="group-line",
        )
    missing = (
        "; no line (fewer than 3 models)"
        if pooled.empty
        else f"; no band (under {MIN_BOOTSTRAP_ITEMS})"
        if band is None
        else ""
    )
    ax.set_title(
        textwrap.fill(series_label(info, short=True), 34) + f"\n(n = {len(data)} models{missing})",
        fontsize="small",
    )
    ax.set_ylabel(str(info["metric_label"]))
