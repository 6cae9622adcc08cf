"""The engine's stages (the params gate, the gallery's data, model cards, the summary) and the
builders suites declare their stages with. Every other stage is declared by its suite
(`vlstress.suites.<name>.suite`); `vlstress.pipeline` puts them together from the registry.
Placeholders are explained in `vlstress.workflow.spec`.
"""

from __future__ import annotations

from vlstress.embedding.kinds import ALL_KINDS
from vlstress.outcomes import outcomes_path
from vlstress.workflow.paths import (
    CARD,
    CARD_FLAGS,
    CHECKED,
    FIGURES,
    MANIFEST,
    RAW,
    SUMMARY,
    TESTSET_EXTERNAL,
    TESTSET_FLAGS,
)
from vlstress.workflow.spec import Output, Stage

# every headline metric with its interval (`vlstress headlines`): what the tables and cards show
HEADLINES = "results/headlines.csv"


def small(path: str, **kw) -> Output:
    """A small text result tracked by git rather than the DVC cache."""
    return Output(path, cache=False, **kw)


def outcomes_of(record: str, **kw) -> Output:
    """The per-item outcomes file beside a record (vlstress.outcomes; in the DVC cache)."""
    return Output(str(outcomes_path(record)), outcomes=True, **kw)


def download_stage(name: str, block: str, raw: str, suite: str | None, doc: str) -> Stage:
    """`vlstress download` of a dataset block of params (`dataset`, or fine-tuning's
    `finetune.train`)."""
    flags = " ".join(
        f"--{flag.replace('_', '-')} {{p.{block}.{flag}}}"
        for flag in (
            "kind",
            "max_images",
            "images",
            "captions",
            "image_ids",
            "coco_url",
            "karpathy_url",
            "rococo_url",
        )
    )
    return Stage(
        name,
        f"vlstress download --dataset {{p.{block}.name}} {flags} --out {{out.raw}}",
        outputs={"raw": Output(raw, directory=True)},
        external=tuple(
            f"{block}.{key}"
            for key in ("images", "captions", "coco_url", "karpathy_url", "rococo_url")
        ),
        suite=suite,
        doc=doc,
        after=(CHECKED,),
    )


def testset_stage(
    name: str, axis: str, folder: str, suite: str, doc: str, disjoint_from: str | None = None
) -> Stage:
    """`vlstress testset` over the entries of a mapping of test-set entries (zero-shot test sets,
    OOD sets); `disjoint_from`: a test-set folder the sets must share no class with."""
    apart = " --disjoint-from {in.disjoint}" if disjoint_from else ""
    return Stage(
        name,
        "vlstress testset --name {%s}" % axis + TESTSET_FLAGS + apart + " --out {out.testset}",
        inputs={"disjoint": disjoint_from} if disjoint_from else {},
        outputs={"testset": Output(folder, directory=True)},
        axes=(axis,),
        external=TESTSET_EXTERNAL,
        suite=suite,
        doc=doc,
        after=(CHECKED,),
    )


def figures_stage(
    suite: str,
    module: str,
    names: dict[str, tuple[str, ...]],
    category: str,
    intervals: bool = False,
) -> Stage:
    """`vlstress figures` of one suite's figure module: each name -> the suites of which one must be
    on for it to be drawn (empty: whenever this suite is on). Its own stage, so editing one suite's
    figures redraws only them. `intervals`: its figures draw the headline table's intervals."""
    return Stage(
        f"{suite}_figures",
        "vlstress figures --summary {in.summary}"
        + (" --headlines {in.headlines}" if intervals else "")
        + f" --module {module} --out-dir {FIGURES} --only {{figures}}",
        inputs={"summary": SUMMARY, **({"headlines": HEADLINES} if intervals else {})},
        outputs={
            **{
                f"{name}_png": Output(
                    f"{FIGURES}/{name}.png", plot={}, caption=name, category=category, suites=on
                )
                for name, on in names.items()
            },
            **{
                f"{name}_pdf": Output(f"{FIGURES}/{name}.pdf", suites=on)
                for name, on in names.items()
            },
        },
        suite=suite,
        code=(module,),
        doc=f"the figures of the {suite} suite from the summary",
    )


def tables_stage(
    suite: str, module: str, outputs: dict[str, Output], intervals: bool = False
) -> Stage:
    """`vlstress tables` of one suite's table module (Markdown + LaTeX); `intervals`: the module
    shows the headline table's intervals (its `render` takes `headlines`)."""
    flags = " ".join(f"--out-{name.replace('_', '-')} {{out.{name}}}" for name in outputs)
    inputs = {"summary": SUMMARY, **({"headlines": HEADLINES} if intervals else {})}
    return Stage(
        f"{suite}_tables",
        "vlstress tables --summary {in.summary}"
        + (" --headlines {in.headlines}" if intervals else "")
        + f" --module {module} {flags}",
        inputs=inputs,
        outputs=outputs,
        suite=suite,
        code=(module,),
        doc=f"the tables of the {suite} suite from the summary"
        + (" and the headline table" if intervals else ""),
    )


GATE = Stage(
    "check_params",
    "vlstress pipeline check {params_files} --stamp {out.stamp}",
    inputs={"params": "params.yaml"},
    # cached by DVC, never tracked by git: DVC deletes a stage's outputs before running it, so a
    # failing check must not leave a tracked file deleted (`dvc pull` restores the stamp)
    outputs={"stamp": Output(CHECKED)},
    doc="params valid and dvc.yaml current, before any step works (every first step waits for it)",
)

DATA = (
    download_stage("download", "dataset", RAW, None, "fetch or copy the raw data of the dataset"),
    Stage(
        "prepare",
        "vlstress prepare --dataset {p.dataset.name} --raw {in.raw} --out {out.manifest}",
        inputs={"raw": RAW},
        outputs={"manifest": Output(MANIFEST)},
        doc="the canonical manifest of images and captions",
    ),
    Stage(
        "model_card",
        "vlstress model-card --model {model} --arch {item.arch} --pretrained {item.pretrained} "
        + CARD_FLAGS
        + " --out {out.card}",
        outputs={"card": Output(CARD)},
        axes=("model",),
        external=("item.pretrained",),  # a local checkpoint
        doc="check a model of the registry once; every step that uses it reads this card",
        model_kinds=ALL_KINDS,
        after=(CHECKED,),
    ),
)

# DVC's own bar_horizontal with the x scale from 0 (`.dvc/plots/bar_horizontal_zero.json`; the
# built-in one starts its bars at the smallest value, which makes small differences look large)
PLOT_TEMPLATE = "bar_horizontal_zero"

SUMMARIZE = Stage(
    "summarize",
    "vlstress summarize {params_files} --out-csv {out.csv} --out-agg {out.agg} --out-md {out.md}"
    " --out-scores {out.scores} --out-plot {out.plot}",
    input_lists={"records": "records"},
    outputs={
        "csv": small(SUMMARY),
        "csv_meta": small(f"{SUMMARY}.json"),
        "agg": small("results/summary_agg.csv", caption="summary", category="Tables"),
        "agg_meta": small("results/summary_agg.csv.json"),
        "md": small("results/summary.md"),
        "scores": small("results/scores", directory=True, metric=True),
        "scores_meta": small("results/scores.json"),
        "plot": small(
            "results/plots/stress.csv",
            plot={
                "template": PLOT_TEMPLATE,
                "x": "R@1",
                "y": "case",
                "title": "R@1 (%) per model, direction and condition (mean over variant seeds)",
            },
        ),
        "plot_meta": small("results/plots/stress.csv.json"),
    },
    doc="every record the current params produce (an explicit list) -> summary tables",
)

HEADLINE_TABLE = Stage(
    "headlines",
    "vlstress headlines {params_files} --summary {in.summary}"
    " --confidence {p.intervals.confidence} --bootstrap {p.intervals.bootstrap} --seed {p.seed}"
    " --out-csv {out.csv} --out-md {out.md}",
    inputs={"summary": SUMMARY},
    input_lists={"records": "records", "outcomes": "outcomes"},
    outputs={
        "csv": small(HEADLINES),
        "md": small("results/headlines.md", caption="headlines", category="Tables"),
    },
    doc="every headline metric with n and its interval (Wilson for shares, a seeded BCa bootstrap"
    " of the per-item outcomes for the rest), for the tables and cards",
)

# More views of the summary's plot data (`dvc plots show`), declared beside the stage that writes
# it.
EXTRA_PLOTS = (
    {
        "stage": "summarize",
        "title": "false R@1 per model and condition",
        "options": {
            "template": PLOT_TEMPLATE,
            "x": "false_R@1",
            "y": {"results/plots/stress.csv": "case"},
            "title": "false R@1 (%) per model, direction and stress condition",
        },
    },
    {
        "stage": "summarize",
        "title": "drop rate per model and condition",
        "options": {
            "template": PLOT_TEMPLATE,
            "x": "drop_rate",
            "y": {"results/plots/stress.csv": "case"},
            "title": "drop rate of R@1 (%) per model, direction and stress condition",
        },
    },
)
