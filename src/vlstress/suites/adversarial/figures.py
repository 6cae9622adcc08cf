"""Figures of the adversarial suite: adversarial_eps, robust top-1 against eps, one line per attack,
one panel per model (eps 0 = clean), each line in its 95% Wilson band over the attacked images;
adversarial_queries, attack success against the queries each attack spent per image (the
black-box attacks' cost beside the white-box ones), 95% Wilson bars over the correctly classified
images that each success counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from vlstress.report.figures import (
    WILSON_BAND_NOTE,
    FigureResult,
    _add_notes,
    _tick,
    model_panels,
    wilson_band,
    wilson_errorbars,
)
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none

SUCCESS_BARS_NOTE = (
    "error bars: 95% Wilson interval over the n correctly classified images each success counts"
)


def images(rows: pd.DataFrame) -> pd.Series:
    """The attacked images behind each row (NaN where the records do not say)."""
    if "n_images" not in rows:
        return pd.Series(np.nan, index=rows.index)
    return pd.to_numeric(rows["n_images"], errors="coerce").astype("float64")


def correct_images(top1_clean: Any, n_images: Any) -> np.ndarray:
    """The images an attack's success is a share of: those classified right before the attack
    (clean top-1 % of the attacked n; a fractional count where replicates are averaged)."""
    return np.asarray(top1_clean, dtype="float64") / 100.0 * np.asarray(n_images, dtype="float64")


def adversarial_eps(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "adversarial", ["robust_top1", "top1_clean"])
    if rows.empty:
        return _none("Robust accuracy against eps", "adversarial")
    rows["attack"] = rows["condition_dict"].map(lambda c: c.get("attack"))
    rows["eps"] = rows["condition_dict"].map(lambda c: float(c.get("eps", float("nan"))))
    rows["n"] = images(rows)
    labels = list(dict.fromkeys(rows["label"]))
    attacks = list(dict.fromkeys(rows["attack"]))
    palette = dict(zip(attacks, sns.color_palette("colorblind", len(attacks))))
    banded = False
    # attacks often coincide (every image broken at once): each its own marker and dash, the
    # first drawn largest, so that a curve under another stays visible
    markers = dict(zip(attacks, "osD^vP*X" * (1 + len(attacks) // 8)))
    dashes = dict(zip(attacks, ["-", "--", ":", "-."] * (1 + len(attacks) // 4)))
    sizes = {attack: 9.0 - 5.0 * i / max(1, len(attacks) - 1) for i, attack in enumerate(attacks)}
    fig, axes, firsts, lasts = model_panels(len(labels), 4.2, 3.6)
    for ax, label in zip(axes, labels):
        mine = rows[rows["label"] == label]
        for attack in attacks:
            robust = mine[
                (mine["attack"] == attack) & (mine["metric"] == "robust_top1")
            ].sort_values("eps")
            clean = mine[(mine["attack"] == attack) & (mine["metric"] == "top1_clean")]
            if robust.empty:
                continue
            x, y, n = list(robust["eps"]), list(robust["value"]), list(robust["n"])
            if (
                len(clean) and 0.0 not in x
            ):  # the clean accuracy of the same images is the point at eps 0
                x, y = [0.0, *x], [float(clean["value"].iloc[0]), *y]
                n = [float(clean["n"].iloc[0]), *n]
            banded |= wilson_band(ax, x, y, n, palette[attack], alpha=0.12)
            ax.plot(
                x,
                y,
                marker=markers[attack],
                markersize=sizes[attack],
                markerfacecolor="none",
                linestyle=dashes[attack],
                label=attack,
                color=palette[attack],
            )
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("eps (1/255 of the attack's norm)")
    for ax in firsts:
        ax.set_ylabel("robust top-1 (%)")
    top = 100.0 if banded else max(1.0, float(rows["value"].max()))
    axes[0].set_ylim(-0.05 * top, 1.08 * top)  # markers at 0 and whole bands stay in
    lasts[0].legend(
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
        title="attack",
    )
    n_images = sorted({int(v) for v in rows["n"].dropna()})
    fig.suptitle(
        f"Zero-shot accuracy under adversarial attacks ({', '.join(sorted(set(rows['dataset'])))})"
    )
    notes = [
        (
            f"n = {'/'.join(map(str, n_images)) or 'unknown'} attacked images per model; eps 0 = "
            "clean accuracy of the same images"
        ),
        WILSON_BAND_NOTE if banded else "no band: n unknown",
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def adversarial_queries(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "adversarial", ["attack_success", "queries", "top1_clean"])
    if rows.empty or not rows["metric"].isin(["attack_success", "queries"]).any():
        return _none("Attack success against queries", "adversarial")
    rows["attack"] = rows["condition_dict"].map(lambda c: c.get("attack"))
    rows["eps"] = rows["condition_dict"].map(lambda c: float(c.get("eps", float("nan"))))
    rows["n"] = images(rows)
    keys = ["label", "attack", "eps"]
    wide = rows.pivot_table(
        index=keys, columns="metric", values="value", sort=False, dropna=False
    ).reset_index()
    wide = wide.merge(rows.groupby(keys, sort=False)["n"].max().reset_index(), on=keys)
    clean = wide["top1_clean"] if "top1_clean" in wide else np.nan
    wide["n_correct"] = correct_images(clean, wide["n"])
    labels = list(dict.fromkeys(rows["label"]))
    attacks = list(dict.fromkeys(rows["attack"]))
    palette = dict(zip(attacks, sns.color_palette("colorblind", len(attacks))))
    markers = dict(zip(attacks, "osD^vP*X" * (1 + len(attacks) // 8)))
    fig, axes, firsts, lasts = model_panels(len(labels), 4.2, 3.6)
    bars = False
    for ax, label in zip(axes, labels):
        mine = wide[wide["label"] == label]
        if "attack_success" not in mine or mine["attack_success"].isna().all():
            ax.text(
                0.5,
                0.5,
                "no image classified right:\nattack success undefined",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize="small",
            )
        for attack in attacks:
            points = (
                mine[mine["attack"] == attack]
                .sort_values("eps")
                .dropna(subset=["queries", "attack_success"])
            )
            if points.empty:
                continue
            x = points["queries"].clip(lower=1.0)
            bars |= wilson_errorbars(
                ax, x, points["attack_success"], points["n_correct"], palette[attack]
            )
            ax.plot(
                x,
                points["attack_success"],
                marker=markers[attack],
                markerfacecolor="none",
                label=attack,
                color=palette[attack],
            )
        ax.set_xscale("log")
        ax.margins(x=0.08)  # points at the fewest and most queries clear of the frame
        # decades only: the minor labels of a short range (3 to 30 queries) run into each other
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(_tick(label), fontsize="medium")
        ax.set_xlabel("queries per image (model evaluations)")
    for ax in firsts:
        ax.set_ylabel("attack success (%)")
    axes[0].set_ylim(-5.0, 105.0)
    # every attack in the legend, drawn or not in the last panel (a model that classifies no image
    # right has no success to draw)
    handles = [
        Line2D([], [], marker=markers[a], markerfacecolor="none", color=palette[a], label=a)
        for a in attacks
    ]
    lasts[0].legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
        title="attack",
    )
    fig.suptitle(f"Attack success against query cost ({', '.join(sorted(set(rows['dataset'])))})")
    notes = [
        "one point per eps, joined smallest eps first; success = % of the correctly classified "
        "images broken; a gradient step counts one query",
        correct_note(wide),
        SUCCESS_BARS_NOTE if bars else "no interval drawn: n unknown",
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def correct_note(wide: pd.DataFrame) -> str:
    """`n = 1–3 correctly classified of 4 attacked images per (model, eps)`: what the success
    shares count."""
    known = wide.dropna(subset=["n_correct"])
    if known.empty:
        return "n: correctly classified images unknown"
    low, high = float(known["n_correct"].min()), float(known["n_correct"].max())
    span = f"{low:.3g}" if low == high else f"{low:.3g}–{high:.3g}"
    attacked = "/".join(str(int(v)) for v in sorted(set(known["n"])))
    return f"n = {span} correctly classified of {attacked} attacked images per (model, eps)"


FIGURES = {
    "adversarial_eps": adversarial_eps,
    "adversarial_queries": adversarial_queries,
}
