"""Models placed on (or off) the line of published baselines (`vlstress effective-robustness`).

Reads one or more wide CSV tables (one row per model; an ID-accuracy column and one column
per shift). `SHIPPED` names the tables shipped with vlstress (`vlstress/data/published`, see its
SOURCES.md): `published`, zero-shot accuracies of 121 open_clip models, and `testbed`, 85
ImageNet-trained models of imagenet-testbed, on ImageNet and five shifts. Per shift, a line is
fitted over the baseline models (by default the ImageNet-trained ones) on logit, probit or
linear axes (OLS or Huber, vlstress.suites.zeroshot.robustness); every model gets predicted
shifted accuracy,
effective robustness (ER, shifted − predicted) and relative robustness (RR, shifted − ID).

Units: `--scale 100` reads percent, `--scale 1` fractions (of the --csv files; the shipped tables
carry their own: `published` fractions, `testbed` percent); outputs are fractions, plus ER and RR
in percentage points (`*_pp`).

Also the command's flags (`add_arguments`): `place` reads them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PUBLISHED = "published"
PUBLISHED_FILE = "data/published/openclip_zeroshot.csv"
TESTBED = "testbed"
IMAGENET_TRAINED = "imagenet-trained"


@dataclass(frozen=True)
class Shipped:
    """A reference table shipped in `vlstress/data/published` (SOURCES.md there)."""

    file: str
    scale: int  # 1 = fractions, 100 = percent, as the source wrote them
    imagenet_trained: bool  # its models were trained on ImageNet only (the usual ER baselines)


SHIPPED = {
    # zero-shot CLIP models (open_clip's results): a CLIP-among-CLIP line
    PUBLISHED: Shipped(PUBLISHED_FILE, 1, imagenet_trained=False),
    # imagenet-testbed's standard-trained models: the line of Taori et al. / Radford et al.
    TESTBED: Shipped("data/published/testbed_standard.csv", 100, imagenet_trained=True),
}
PUBLISHED_SHIFTS = ["imagenetv2", "imagenet-r", "imagenet_sketch", "imagenet-a", "objectnet"]


def _names(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of `vlstress effective-robustness`."""
    parser.add_argument(
        "--csv",
        action="append",
        required=True,
        help=(
            f"wide accuracy table, one row per model (repeatable; '{PUBLISHED}' = open_clip's "
            f"zero-shot CLIP models, '{TESTBED}' = imagenet-testbed's ImageNet-trained models)"
        ),
    )
    parser.add_argument(
        "--model-column", default="model", help="column naming the model (default: model)"
    )
    parser.add_argument(
        "--id-column",
        default="imagenet1k",
        help="in-distribution accuracy column (default: imagenet1k)",
    )
    parser.add_argument(
        "--shift-column",
        action="append",
        default=None,
        help=f"shifted accuracy column (repeatable; default: {' '.join(PUBLISHED_SHIFTS)})",
    )
    parser.add_argument(
        "--baselines",
        default=IMAGENET_TRAINED,
        help=(
            f"models the line is fitted on: {IMAGENET_TRAINED} (default: the ImageNet-trained "
            f"models of the tables, i.e. --csv {TESTBED}) | all (every model, CLIP ones "
            f"included: a model's ER then depends on the run) | {PUBLISHED} | {TESTBED} | "
            "name,name | @file (one name a line)"
        ),
    )
    parser.add_argument(
        "--transform",
        default="logit",
        choices=["logit", "probit", "linear"],
        help="axis transform (default: logit)",
    )
    parser.add_argument(
        "--fit", default="ols", choices=["ols", "huber"], help="line fit (default: ols)"
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=1,
        choices=[1, 100],
        help="1 = fractions, 100 = percent (the --csv files other than 'published')",
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help="logit/probit clip of 0 and 1 accuracies (default: vlstress.robustness.EPSILON)",
    )
    parser.add_argument(
        "--highlight",
        type=_names,
        default=[],
        help="name,name: models drawn in colour besides the non-baselines",
    )
    parser.add_argument(
        "--out-csv",
        required=True,
        type=Path,
        help="one row per (shift, model); provenance in <file>.json",
    )
    parser.add_argument(
        "--out-json",
        required=True,
        type=Path,
        help="lines, coloured models' numbers and provenance",
    )
    parser.add_argument(
        "--out-fig", type=Path, default=None, help="PNG to write (a PDF is written beside it)"
    )


def published_path(name: str = PUBLISHED) -> Path:
    """The file of a shipped table (`published`, `testbed`)."""
    from importlib import resources

    return Path(str(resources.files("vlstress").joinpath(SHIPPED[name].file)))


def read_wide(path: Path, model_column: str, id_column: str, shift_columns: list[str]):
    """One wide table -> (long rows model, shift, id_accuracy, shifted_accuracy; the rows left out).

    A row with an empty cell among the accuracies used is left out and named ("model (column,
    ...)"): published tables (imagenet-testbed's) lack some models' shifts. Columns absent are an
    error naming them; text where a number should be is an error too (robustness.validate_table).
    """
    import pandas as pd

    from vlstress.errors import VlstressError

    if not path.is_file():
        raise VlstressError(f"file not found: {path}")
    try:
        # only an empty cell is empty: "n/a" or "None" where a number belongs stays an error
        wide = pd.read_csv(path, dtype={model_column: str}, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise VlstressError(f"not a readable CSV: {exc}") from None
    wanted = [model_column, id_column, *shift_columns]
    missing = [c for c in wanted if c not in wide.columns]
    if missing:
        raise VlstressError(
            f"lacks column(s) {', '.join(missing)}; has {', '.join(map(str, wide.columns))}"
        )
    used = [id_column, *shift_columns]
    empty = wide[used].isna()
    skipped = [
        f"{wide.at[i, model_column]} ({', '.join(c for c in used if empty.at[i, c])})"
        for i in wide.index[empty.any(axis=1)]
    ]
    wide = wide[~empty.any(axis=1)]
    if wide.empty:
        raise VlstressError(f"every row lacks some of the accuracies {', '.join(used)}")
    long = wide.melt(
        id_vars=[model_column, id_column],
        value_vars=shift_columns,
        var_name="shift",
        value_name="shifted_accuracy",
    )
    return long.rename(columns={model_column: "model", id_column: "id_accuracy"}), skipped


def read_tables(args: argparse.Namespace, shift_columns: list[str]):
    """All --csv tables as one long frame in fractions, and the sha256 of every input."""
    import pandas as pd

    from vlstress.errors import VlstressError
    from vlstress.io import sha256_file
    from vlstress.suites.zeroshot.robustness import validate_table

    frames, inputs = [], {}
    seen: dict[str, str] = {}  # model -> the table it came from
    skipped: dict[str, list[str]] = {}  # table -> its rows left out for an empty accuracy
    for spec in args.csv:
        path, scale = (
            (published_path(spec), SHIPPED[spec].scale)
            if spec in SHIPPED
            else (Path(spec), args.scale)
        )
        try:
            long, left_out = read_wide(path, args.model_column, args.id_column, shift_columns)
            frame = validate_table(long, scale)
        except VlstressError as exc:
            raise VlstressError(f"accuracy table {spec}: {exc}") from None
        for model in sorted(set(frame["model"])):
            if model in seen:
                raise VlstressError(f"model {model} is in both {seen[model]} and {spec}")
            seen[model] = spec
        frames.append(frame)
        inputs[str(path)] = sha256_file(path)
        if left_out:
            skipped[spec] = left_out
    return pd.concat(frames, ignore_index=True), inputs, seen, skipped


def resolve_baselines(spec: str, origin: dict[str, str]) -> str | list[str]:
    from vlstress.errors import VlstressError

    if spec == "all":
        return "all"
    if spec == IMAGENET_TRAINED:
        tables = [name for name, table in SHIPPED.items() if table.imagenet_trained]
        names = sorted(m for m, source in origin.items() if source in tables)
        if not names:
            raise VlstressError(
                f"--baselines {IMAGENET_TRAINED} (the default) needs ImageNet-trained models: add "
                f"--csv {TESTBED} (imagenet-testbed's standard-trained models), name the "
                "baselines, or pass --baselines all to fit over every model of the tables"
            )
        return names
    if spec in SHIPPED:
        names = sorted(m for m, source in origin.items() if source == spec)
        if not names:
            raise VlstressError(f"--baselines {spec} needs --csv {spec}")
        return names
    if spec.startswith("@"):
        path = Path(spec[1:])
        if not path.is_file():
            raise VlstressError(f"baselines file not found: {path}")
        return [
            line.strip()
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")
        ]
    return _names(spec)


@dataclass(frozen=True)
class Placement:
    """Every model against the lines of the baselines: one row per (shift, model)."""

    results: Any  # pandas.DataFrame of robustness.effective_robustness
    lines: dict[str, Any]  # shift -> robustness.Line
    coloured: list[str]  # the models drawn in colour (and summarised in the JSON)
    inputs: dict[str, str]  # table path -> sha256
    params: dict[str, Any]  # what provenance records
    skipped: dict[str, list[str]]  # table -> rows left out: "model (empty columns)"


def place(args: argparse.Namespace) -> Placement:
    """The lines and every model's numbers, from the flags of `add_arguments`."""
    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot import robustness

    shift_columns = list(dict.fromkeys(args.shift_column or PUBLISHED_SHIFTS))
    if args.id_column in shift_columns:
        raise VlstressError(f"--id-column {args.id_column} is also a --shift-column")
    epsilon = robustness.EPSILON if args.epsilon is None else args.epsilon
    table, inputs, origin, skipped = read_tables(args, shift_columns)
    baselines = resolve_baselines(args.baselines, origin)
    lines = robustness.fit_lines(table, baselines, args.transform, args.fit, 1, epsilon)
    results = robustness.effective_robustness(
        table, baselines, args.transform, args.fit, 1, epsilon, lines=lines
    )
    unknown = sorted(set(args.highlight) - set(results["model"]))
    if unknown:
        raise VlstressError(f"--highlight model(s) not in the tables: {', '.join(unknown)}")
    from vlstress.suites.zeroshot.robustness_figure import coloured_models

    # one's own models in colour; the shipped tables' models that are not baselines (the CLIP
    # models under the default) stay plain, unless highlighted
    coloured = [
        model
        for model in coloured_models(results, args.highlight)
        if model in args.highlight or origin.get(model) not in SHIPPED
    ]
    params = {
        "csv": list(args.csv),
        "model_column": args.model_column,
        "id_column": args.id_column,
        "shift_columns": shift_columns,
        "baselines": args.baselines,
        "transform": args.transform,
        "fit": args.fit,
        "scale": args.scale,
        "epsilon": epsilon,
        "highlight": list(args.highlight),
        "skipped_rows": skipped,
    }
    return Placement(results, lines, coloured, inputs, params, skipped)


def summary(results, lines, coloured: list[str]) -> dict:
    """The JSON body: the line of every shift and the numbers of the coloured models."""
    models: dict = {}
    for row in results[results["model"].isin(coloured)].itertuples(index=False):
        models.setdefault(row.model, {"shifts": {}})["shifts"][row.shift] = {
            "id_accuracy": row.id_accuracy,
            "shifted_accuracy": row.shifted_accuracy,
            "predicted": row.predicted,
            "effective_robustness": row.effective_robustness,
            "relative_robustness": row.relative_robustness,
            "effective_robustness_pp": row.effective_robustness_pp,
            "relative_robustness_pp": row.relative_robustness_pp,
            "baseline": bool(row.baseline),
        }
    for entry in models.values():
        values = [v["effective_robustness_pp"] for v in entry["shifts"].values()]
        entry["mean_effective_robustness_pp"] = sum(values) / len(values)
    return {
        "lines": {shift: line.to_dict() for shift, line in lines.items()},
        "models": models,
        "n_models": int(results["model"].nunique()),
        "n_baselines": int(results.loc[results["baseline"], "model"].nunique()),
        "units": "fractions in [0, 1]; *_pp in percentage points",
    }


def csv_sidecar(results, block: dict) -> dict:
    """The provenance sidecar of the CSV (`<out-csv>.json`)."""
    return {"rows": len(results), "columns": list(results.columns), "provenance": block}


def mean_effective_robustness(results, model: str) -> float:
    """One model's effective robustness in percentage points, averaged over the shifts."""
    return results.loc[results["model"] == model, "effective_robustness_pp"].mean()


def figure(placed: Placement, baselines: str, id_column: str, highlight: list[str]):
    """The scatter per shift, captioned with the baselines and the inputs' sha256 (after
    vlstress.report.figures.setup)."""
    from vlstress.suites.zeroshot import robustness_figure

    results = placed.results
    digest = ", ".join(f"{Path(p).name} sha256 {h[:12]}" for p, h in placed.inputs.items())
    caption = (
        f"vlstress effective-robustness; {len(results['model'].unique())} models, baselines: "
        f"{baselines}; {digest}"
    )
    return robustness_figure.draw(
        results, placed.lines, highlight, id_name=id_column, caption=caption
    )
