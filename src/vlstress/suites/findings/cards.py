"""A robustness card per model (static HTML) and an index page comparing the run's models, from the
headline table (`headlines.headline_table`) of the summary and the metric records behind it.

A card shows the model (label, arch, weights, attributes), the caveats a reader must see before
any number (random-init weights, a calibration temperature on its search bound or worsening the
held-out NLL, headline numbers on fewer than `headlines.SMALL_N` items), every headline number
grouped by task with its interval, its item count, where the model sits among the run's models and
the published number where the run has one, a link to each number's record file, and one embedded
figure. Pages are self-contained (figure as a data URI, inline JavaScript, no network) and
deterministic: the same summary and records give the same bytes (no timestamps)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from vlstress import __version__
from vlstress.errors import VlstressError
from vlstress.io import atomic_dir
from vlstress.record import Record
from vlstress.report import headlines, tasks
from vlstress.report.cells import count_text, interval_text, value_text
from vlstress.report.headline_tables import with_percentiles
from vlstress.report.records import ATTRIBUTE_COLUMNS, RECORD_COLUMNS
from vlstress.suites.findings.card_figure import figure_uri

CASE = ("model", "task", "dataset", "condition")
RANDOM_INIT = "random-init"
PUBLISHED_TASK = "published-check"
PUBLISHED_AGAINST = ("zeroshot", "top1")  # the headline the published number is compared with
CALIBRATION_FLAGS = {
    "temperature_at_bound": "the calibration temperature sits on its search bound",
    "temperature_worsens_held_out_nll": "temperature scaling worsens the held-out NLL",
}
ATTRIBUTE_NAMES = {
    "family": "family",
    "tower": "image tower",
    "params_image_m": "image tower parameters (M)",
    "params_text_m": "text tower parameters (M)",
    "resolution": "resolution",
    "pretrain_data": "pretraining data",
    "samples_seen_b": "samples seen (B)",
    "loss": "loss",
    "finetune_method": "fine-tuning method",
    "finetune_base": "fine-tuned from",
}


# --------------------------------------------------------------------------- names and links


def page_name(model: str) -> str:
    """The card's file name: the slug where it is plain (letters, digits, `._+-`), else the slug
    with the rest as `_` and a short hash of the slug, so that two slugs never share a page; never
    `index.html` and never hidden."""
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", model)
    if safe != model or safe.startswith(".") or safe.lower() == "index":
        safe = f"{safe.lstrip('.') or '_'}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"
    return f"{safe}.html"


def record_links(found: Iterable[tuple[Path, Record]], out_dir: Path) -> dict[tuple, list[str]]:
    """(model, task, set, condition) -> the URLs of its record files (replicate seeds: several),
    relative to the cards folder `out_dir`. `condition` is the summary's canonical text."""
    base = os.path.abspath(out_dir)
    links: dict[tuple, set[str]] = {}
    for path, rec in found:
        key = (
            rec.model["slug"],
            rec.task,
            rec.dataset["name"],
            tasks.condition_key(rec.condition),
        )
        relative = Path(os.path.relpath(os.path.abspath(path), base)).as_posix()
        links.setdefault(key, set()).add(urllib.parse.quote(relative))
    return {key: sorted(urls) for key, urls in links.items()}


# --------------------------------------------------------------------------- what a card says


@dataclass(frozen=True)
class Model:
    slug: str
    label: str
    arch: str
    weights: str
    weights_kind: str
    random_base: str | None  # the random-init model it was fine-tuned from
    attributes: tuple[tuple[str, str], ...]
    page: str


@dataclass
class Card:
    model: Model
    caveats: list[str]
    groups: list[tuple[str, list[dict[str, Any]]]]  # task title -> its rows
    figure: str | None  # data URI
    n_models: int


def check_summary(summary: pd.DataFrame) -> None:
    """The columns of `vlstress summarize`'s long table (`read_summary` adds the optional ones)."""
    missing = [c for c in RECORD_COLUMNS if c not in summary.columns]
    if missing:
        raise VlstressError(
            f"the summary table lacks column(s) {', '.join(missing)}; re-run `vlstress summarize`"
        )


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def models(summary: pd.DataFrame) -> list[Model]:
    """Every model of the summary, in its order, with what the card says about its weights."""
    first = summary.drop_duplicates("model")
    kinds = dict(zip(first["model"].astype(str), first["weights_kind"].map(_text)))
    found = []
    for row in first.to_dict("records"):
        slug = str(row["model"])
        base = _text(row.get("finetune_base"))
        if not base and kinds[slug] == "checkpoint" and "+" in slug:
            base = slug.partition("+")[0]  # the fine-tuning suite names a variant <base>+<method>
        random_base = (
            base if base and (base == RANDOM_INIT or kinds.get(base) == RANDOM_INIT) else None
        )
        attributes = (
            [("parameters", f"{int(row['n_params']):,}")] if _text(row.get("n_params")) else []
        )
        attributes += [
            (ATTRIBUTE_NAMES[c], _text(row.get(c))) for c in ATTRIBUTE_COLUMNS if _text(row.get(c))
        ]
        found.append(
            Model(
                slug=slug,
                label=_text(row["label"]) or slug,
                arch=_text(row["arch"]),
                weights=_text(row["weights"]),
                weights_kind=kinds[slug],
                random_base=random_base,
                attributes=tuple(attributes),
                page=page_name(slug),
            )
        )
    return found


def _flagged(summary: pd.DataFrame, model: str, metric: str) -> list[str]:
    rows = summary[
        (summary["model"] == model)
        & (summary["task"] == "calibration")
        & (summary["metric"] == metric)
        & (summary["value"] == 1)
    ]
    return list(dict.fromkeys(f"{r.dataset} ({r.condition_label})" for r in rows.itertuples()))


def caveats(model: Model, summary: pd.DataFrame, rows: pd.DataFrame) -> list[str]:
    """What a reader must know before reading the model's numbers."""
    out = []
    if model.weights_kind == RANDOM_INIT:
        out.append(
            "Random-init weights: these numbers describe an untrained network, not what the "
            "architecture reaches once trained."
        )
    if model.random_base:
        out.append(
            f"Fine-tuned from a random-init base ({model.random_base}): its weights were trained "
            "from random ones, whatever its name says."
        )
    for metric, text in CALIBRATION_FLAGS.items():
        where = _flagged(summary, model.slug, metric)
        if where:
            out.append(f"Calibration: {text} on {', '.join(where)}.")
    small = rows[rows["n"] < headlines.SMALL_N]
    for n, group in small.groupby("n", sort=True):
        titles = ", ".join(dict.fromkeys(group["task_title"]))
        width = ((group["hi"] - group["lo"]) / 2).max()
        spread = f"interval ±{width:.1f} points" if np.isfinite(width) else "no interval yet"
        out.append(
            f"n = {count_text(n)}: {spread} ({len(group)} headline number"
            f"{'s' if len(group) > 1 else ''}: {titles})."
        )
    return out


def published_numbers(summary: pd.DataFrame) -> dict[tuple[str, str], dict[str, float]]:
    """(model, set) -> published_top1, run_top1, diff_pp (run − published) where the run has a
    published number to compare with."""
    rows = summary[summary["task"] == PUBLISHED_TASK]
    if rows.empty:
        return {}
    values = rows.groupby(["model", "dataset", "metric"])["value"].mean().unstack("metric")
    out = {}
    for (model, dataset), numbers in values.iterrows():
        if pd.notna(numbers.get("published_top1")) and pd.notna(numbers.get("diff_pp")):
            out[(str(model), str(dataset))] = {
                "published": float(numbers["published_top1"]),
                "run": float(numbers.get("run_top1", float("nan"))),
                "diff": float(numbers["diff_pp"]),
            }
    return out


def _standing(percentile: float, n_models: int) -> str:
    if not np.isfinite(percentile):
        return "—"
    others = n_models - 1
    k = round(percentile / 100 * others)
    return f"{percentile:.0f} ({k} of {others} other{'s' if others > 1 else ''})"


def card_rows(
    rows: pd.DataFrame,
    links: Mapping[tuple, list[str]],
    published: Mapping[tuple[str, str], dict[str, float]],
    pool_size: pd.Series,
) -> list[tuple[str, list[dict[str, Any]]]]:
    """The model's headline rows as cells, grouped by task title (in the table's order)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows.to_dict("records"):
        key = tuple(row[c] for c in CASE)
        urls = links.get(key)
        if not urls:
            raise VlstressError(
                f"no metric record among those given holds model {row['model']!r}, task "
                f"{row['task']!r}, set {row['dataset']!r}, condition {row['condition']!r}, which "
                "the summary has: the summary and the records disagree; re-run `vlstress summarize`"
            )
        against = None
        if (row["task"], row["metric"]) == PUBLISHED_AGAINST:
            found = published.get((row["model"], row["dataset"]))
            if found:
                against = f"{found['published']:.1f} (run − published {found['diff']:+.1f} pp)"
        n_models = int(pool_size.get(key[1:] + (row["metric"],), 1))
        seeds = int(row["n_seeds"]) if pd.notna(row["n_seeds"]) else 1
        groups.setdefault(row["task_title"], []).append(
            {
                "dataset": row["dataset"],
                "condition": row["condition_label"],
                "metric": row["metric_label"],
                "value": value_text(row["value"]),
                "interval": interval_text(row["lo"], row["hi"], row["interval"]),
                "n": count_text(row["n"]) if pd.notna(row["n"]) else "?",
                "small": bool(pd.notna(row["n"]) and row["n"] < headlines.SMALL_N),
                "seeds": seeds,
                "standing": _standing(row["percentile"], n_models),
                "published": against,
                "records": urls,
            }
        )
    return list(groups.items())


# --------------------------------------------------------------------------- the index


def _n_text(n: float) -> str:
    return count_text(n) if pd.notna(n) else "?"


def index_columns(table: pd.DataFrame) -> list[dict[str, Any]]:
    """One column per (task, headline metric): the model's value where the metric has a single
    (set, condition), else the mean over the model's sets and conditions (the header says which)."""
    columns = []
    for (task, metric), group in table.groupby(["task", "metric"], sort=False):
        cases = group[["dataset", "condition"]].drop_duplicates()
        first = group.iloc[0]
        single = len(cases) == 1
        how = (
            f"{first['dataset']} · {first['condition_label']}"
            if single
            else f"mean over {len(cases)} sets × conditions"
        )
        cells = {}
        for model, rows in group.groupby("model", sort=False):
            tip = "; ".join(
                f"{r['dataset']} · {r['condition_label']}: {value_text(r['value'])} "
                f"{interval_text(r['lo'], r['hi'], r['interval'])}, n = {_n_text(r['n'])}"
                for r in rows.to_dict("records")
            )
            mean = float(rows["value"].mean())
            if not single:
                small = f"of {len(rows)}"
            elif np.isfinite(rows["lo"].iloc[0]):
                small = interval_text(rows["lo"].iloc[0], rows["hi"].iloc[0])
            else:
                small = "no interval"
            cells[str(model)] = {
                "value": mean,
                "text": value_text(mean),
                "small": small,
                "tip": tip,
            }
        columns.append(
            {
                "title": first["task_title"],
                "metric": first["metric_label"],
                "how": how,
                "better": "high" if first["higher_is_better"] else "low",
                "cells": cells,
            }
        )
    return columns


# --------------------------------------------------------------------------- pages


def _provenance_json(block: Mapping[str, Any]) -> Markup:
    """The provenance as JSON safe inside <script>: no `<`, `>` or `&` as such."""
    text = json.dumps(block, sort_keys=True, indent=1, ensure_ascii=False, default=str)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return Markup(text)


def _environment():
    from jinja2 import DictLoader, Environment, StrictUndefined, select_autoescape

    from vlstress.suites.findings import pages

    return Environment(
        loader=DictLoader({"card.html.j2": pages.CARD, "index.html.j2": pages.INDEX}),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def pages(
    summary: pd.DataFrame,
    headline_rows: pd.DataFrame,
    found: Iterable[tuple[Path, Record]],
    out_dir: Path,
    *,
    confidence: float,
    summary_sha256: str,
    provenance: Mapping[str, Any],
) -> dict[str, str]:
    """File name -> HTML of every card and of `index.html`, from the summary and its headline
    table (`headlines.headline_table`)."""
    check_summary(summary)
    table = with_percentiles(headline_rows)
    links = record_links(found, out_dir)
    published = published_numbers(summary)
    pool_size = table.groupby(["task", "dataset", "condition", "metric"])["model"].nunique()
    env = _environment()
    common = {
        "version": __version__,
        "summary_sha256": summary_sha256,
        "confidence": f"{100 * confidence:g}",
        "provenance": _provenance_json(provenance),
        "small_n": headlines.SMALL_N,
    }
    everyone = models(summary)
    out = {}
    for model in everyone:
        rows = table[table["model"] == model.slug]
        card = Card(
            model=model,
            caveats=caveats(model, summary, rows),
            groups=card_rows(rows, links, published, pool_size),
            figure=figure_uri(model.slug, rows, table),
            n_models=len(everyone),
        )
        out[model.page] = env.get_template("card.html.j2").render(card=card, **common)
    out["index.html"] = env.get_template("index.html.j2").render(
        models=everyone, columns=index_columns(table), **common
    )
    return out


def write_pages(out_dir: Path, found: Mapping[str, str]) -> None:
    """The cards folder, replaced as a whole."""
    with atomic_dir(out_dir) as tmp:
        for name, html in sorted(found.items()):
            (tmp / name).write_text(html, encoding="utf-8")
