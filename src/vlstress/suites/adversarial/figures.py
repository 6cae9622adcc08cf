"""Figures of the adversarial suite: adversarial_eps, robust top-1 against eps, one line per attack,
one panel per model (eps 0 = clean); adversarial_queries, attack success against the queries each
attack spent per image (the black-box attacks' cost beside the white-box ones)."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from vlstress.report.figures import FigureResult, _add_notes, _tick, model_panels
from vlstress.report.figures import metric_rows as _rows
from vlstress.report.figures import no_records as _none


def adversarial_eps(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "adversarial", ["robust_top1", "top1_clean"])
    if rows.empty:
        return _none("Robust accuracy against eps", "adversarial")
    rows["attack"] = rows["condition_dict"].map(lambda c: c.get("attack"))
    rows["eps"] = rows["condition_dict"].map(lambda c: float(c.get("eps", float("nan"))))
    labels = list(dict.fromkeys(rows["label"]))
    attacks = list(dict.fromkeys(rows["attack"]))
    palette = dict(zip(attacks, sns.color_palette("colorblind", len(attacks))))
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
            x, y = list(robust["eps"]), list(robust["value"])
            if (
                len(clean) and 0.0 not in x
            ):  # the clean accuracy of the same images is the point at eps 0
                x, y = [0.0, *x], [float(clean["value"].iloc[0]), *y]
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
    top = max(1.0, float(rows["value"].max()))
    axes[0].set_ylim(-0.05 * top, 1.08 * top)  # markers at 0 stay whole
    lasts[0].legend(
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
        title="attack",
    )
    n_images = sorted({int(v) for v in rows["n_images"].dropna()})
    fig.suptitle(
        f"Zero-shot accuracy under adversarial attacks ({', '.join(sorted(set(rows['dataset'])))})"
    )
    notes = [
        (
            f"{'/'.join(map(str, n_images))} attacked images per model; eps 0 = clean accuracy of "
            "the same images"
        )
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


def adversarial_queries(table: pd.DataFrame) -> FigureResult:
    rows = _rows(table, "adversarial", ["attack_success", "queries"])
    if rows.empty:
        return _none("Attack success against queries", "adversarial")
    rows["attack"] = rows["condition_dict"].map(lambda c: c.get("attack"))
    rows["eps"] = rows["condition_dict"].map(lambda c: float(c.get("eps", float("nan"))))
    wide = rows.pivot_table(
        index=["label", "attack", "eps"], columns="metric", values="value", sort=False
    ).reset_index()
    labels = list(dict.fromkeys(rows["label"]))
    attacks = list(dict.fromkeys(rows["attack"]))
    palette = dict(zip(attacks, sns.color_palette("colorblind", len(attacks))))
    markers = dict(zip(attacks, "osD^vP*X" * (1 + len(attacks) // 8)))
    fig, axes, firsts, lasts = model_panels(len(labels), 4.2, 3.6)
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
            points = mine[mine["attack"] == attack].sort_values("eps").dropna()
            if points.empty:
                continue
            ax.plot(
                points["queries"].clip(lower=1.0),
                points["attack_success"],
                marker=markers[attack],
                markerfacecolor="none",
                label=attack,
                color=palette[attack],
            )
        ax.set_xscale("log")
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
        "images broken; a gradient step counts one query"
    ]
    fig.tight_layout()
    _add_notes(fig, notes)
    return fig, notes


FIGURES = {
    "adversarial_eps": adversarial_eps,
    "adversarial_queries": adversarial_queries,
}
