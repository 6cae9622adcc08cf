"""Zero-shot classification on clean and naturally shifted test sets, and effective robustness.

A model's zero-shot work is two jobs: the classifier of every test set (group `classifiers`), and
every zero-shot image set (group `zeroshot`: this suite's test sets and the corrupted, typographic
and OOD copies other suites add). Two folders, so the attacks, which read only a classifier, do not
rerun when an image set is added.
"""

from vlstress.report.display import Headline, Task
from vlstress.suites.zeroshot import paths
from vlstress.workflow.paths import (
    CARD,
    CLASSIFIERS,
    METRICS,
    REUSE_FLAG,
    RUN_FLAGS,
    SHARDS,
    SUMMARY,
    TESTSET,
    ZEROSHOT_EMB,
    ZEROSHOT_RECORD,
    ZEROSHOT_SHARDS,
)
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite, count
from vlstress.workflow.stages import (
    figures_stage,
    outcomes_of,
    small,
    tables_stage,
    testset_stage,
)

EMBED_ZEROSHOT = (
    "vlstress embed-zeroshot {params_files} --sets images --sets-from {providers.zeroshot}"
    " --model-card {in.card} " + RUN_FLAGS + " " + REUSE_FLAG
)


def one_job(params) -> bool:
    return count(params, SHARDS) == 1


def sharded(params) -> bool:
    return count(params, SHARDS) > 1


def shard_folders(params) -> list[str]:
    return [f"{ZEROSHOT_SHARDS}/{k}" for k in range(count(params.values, SHARDS))]


SUITE = Suite(
    "zeroshot",
    "zero-shot classification on clean and naturally shifted test sets, effective robustness",
    needs=("zeroshot",),
    axes=(
        Axis("testset", "zeroshot.testsets", r"[a-z0-9][a-z0-9_]*", keys=True),
        Axis("shard", SHARDS, r"[0-9]+", count=True),
    ),
    stages=(
        testset_stage(
            "testset",
            "testset",
            TESTSET,
            "zeroshot",
            (
                "the labelled manifest of a classification test set (materialised crops / CIFAR "
                "images included)"
            ),
        ),
        Stage(
            "zeroshot_classifiers",
            "vlstress embed-zeroshot {params_files} --sets classifiers"
            " --sets-from {providers.classifiers} --templates {p.zeroshot.templates}"
            " --imagenet-maps {p.zeroshot.imagenet_maps}"
            " --model-card {in.card} " + RUN_FLAGS + " " + REUSE_FLAG + " --out {out.classifiers}",
            inputs={"card": CARD},
            input_lists={"testsets": "zeroshot_testsets"},
            outputs={"classifiers": Output(CLASSIFIERS, directory=True)},
            axes=("model",),
            external=("zeroshot.templates", "zeroshot.imagenet_maps"),
            suite="zeroshot",
            gpu=True,
            doc="the zero-shot classifier of every test set of a model (prompt templates) in one "
            "job; unchanged ones reused",
        ),
        Stage(
            "embed_zeroshot",
            EMBED_ZEROSHOT + " --out {out.emb}",
            inputs={"card": CARD},
            input_lists={"sets": "zeroshot_data"},
            outputs={"emb": Output(ZEROSHOT_EMB, directory=True)},
            axes=("model",),
            suite="zeroshot",
            gpu=True,
            when=one_job,
            doc="every zero-shot image set of a model in one job (each test set, corruption, "
            "typographic attack and OOD set); unchanged sets are reused",
        ),
        Stage(
            "embed_zeroshot_shard",
            EMBED_ZEROSHOT + " --shard {shard} --shards {p.cluster.embed_shards} --out {out.part}",
            inputs={"card": CARD},
            input_lists={"sets": "zeroshot_data"},
            outputs={"part": Output(f"{ZEROSHOT_SHARDS}/{{shard}}", directory=True)},
            axes=("model", "shard"),
            suite="zeroshot",
            gpu=True,
            when=sharded,
            priced_as="embed_zeroshot",
            doc="with cluster.embed_shards > 1: one shard of every zero-shot image set of a model "
            "(a run of whole batches of each set)",
        ),
        Stage(
            "embed_zeroshot_join",
            "vlstress embed-join --parts-dir "
            + ZEROSHOT_SHARDS
            + " --shards {p.cluster.embed_shards}"
            " " + REUSE_FLAG + " --out {out.emb}",
            input_lists={"parts": "zeroshot_shards"},
            outputs={"emb": Output(ZEROSHOT_EMB, directory=True)},
            axes=("model",),
            suite="zeroshot",
            when=sharded,
            doc="with cluster.embed_shards > 1: a model's shard folders joined into the folder one "
            "job writes, byte for byte (no model is loaded)",
        ),
        Stage(
            "evaluate_zeroshot",
            "vlstress evaluate-testsets {params_files} --model {model} --out-dir " + METRICS,
            inputs={"emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS},
            input_lists={"testsets": "clean_testsets"},
            outputs={
                "record": small(ZEROSHOT_RECORD, record=True, each=("testset",)),
                "per_class": small(f"{ZEROSHOT_RECORD}.json", each=("testset",)),
                "outcomes": outcomes_of(ZEROSHOT_RECORD, each=("testset",)),
            },
            axes=("model",),
            suite="zeroshot",
            doc="every clean test set of a model, one job per model (one record per test set)",
        ),
        Stage(
            "robustness",
            "vlstress robustness {params_files} --summary {in.summary}"
            " --in-distribution {p.zeroshot.in_distribution}"
            " --mce-baseline {p.zeroshot.robustness.mce_baseline}"
            " --transform {p.zeroshot.robustness.transform} --fit {p.zeroshot.robustness.fit}"
            " --baselines {p.zeroshot.robustness.baselines}"
            " --bootstrap {p.zeroshot.robustness.bootstrap} --seed {p.seed}"
            " --confidence {p.intervals.confidence}"
            " --interval-bootstrap {p.intervals.bootstrap}"
            " --out-corruptions {out.corruptions} --out-effective {out.effective}"
            " --out-md {out.md} --out-tex {out.tex} --out-json {out.json}"
            " --out-scores {out.scores} --out-fig {out.png}",
            inputs={"summary": SUMMARY},
            # the per-image outcomes behind the mCA and mCE intervals
            input_lists={"records": "records", "outcomes": "outcomes"},
            outputs={
                "corruptions": small(
                    "results/robustness/corruptions.csv",
                    caption="robustness",
                    category="Zero-shot robustness",
                ),
                "effective": small(
                    "results/robustness/effective.csv",
                    caption="robustness",
                    category="Zero-shot robustness",
                ),
                "md": small(
                    "results/robustness/robustness.md",
                    caption="robustness",
                    category="Zero-shot robustness",
                ),
                "tex": small("results/robustness/effective.tex"),
                "json": small("results/robustness/robustness.json"),
                "scores": small("results/robustness/scores", directory=True, metric=True),
                "png": Output(
                    "results/figures/effective_robustness.png",
                    plot={},
                    caption="effective_robustness",
                    category="Zero-shot robustness",
                ),
                "pdf": Output("results/figures/effective_robustness.pdf"),
            },
            # a CSV of published baselines named by zeroshot.robustness.baselines is an input
            external=("zeroshot.robustness.baselines",),
            suite="zeroshot",
            doc="mCE of the corruptions and effective robustness of every shift (against "
            "imagenet-testbed's line where the shift has one, else the run's), from the summary",
        ),
        Stage(
            "published_check",
            "vlstress published-check {params_files} --model {model}"
            " --tolerance {p.zeroshot.published.tolerance}"
            " --protocol-tolerance {p.zeroshot.published.protocol_tolerance} --out {out.records}",
            input_lists={"evaluations": "zeroshot_records"},
            outputs={"records": small("results/metrics/{model}/published-check.json", record=True)},
            axes=("model",),
            suite="zeroshot",
            doc="clean top-1 on each test set beside open_clip's or imagenet-testbed's published "
            "number, where the protocol is the published one",
        ),
        figures_stage(
            "zeroshot", "vlstress.suites.zeroshot.figures", {"zeroshot_accuracy": ()}, "Figures"
        ),
        tables_stage(
            "zeroshot",
            "vlstress.suites.zeroshot.published_table",
            {
                "md": small("results/tables/published.md", caption="tables", category="Tables"),
                "tex": small("results/tables/published.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "embed-zeroshot": (
            "vlstress.suites.zeroshot.commands.embed_zeroshot",
            "the zero-shot classifiers, or every zero-shot image set (test sets, corrupted, "
            "typographic, OOD), of one model in one job",
        ),
        "evaluate-zeroshot": (
            "vlstress.suites.zeroshot.commands.evaluate_zeroshot",
            "zero-shot accuracy of one model on a clean, corrupted or typographic test set",
        ),
        "evaluate-testsets": (
            "vlstress.suites.zeroshot.commands.evaluate_testsets",
            "zero-shot accuracy of one model on every clean test set (one record each)",
        ),
        "robustness": (
            "vlstress.suites.zeroshot.commands.robustness",
            "corruption (mCE), typographic and effective-robustness tables of this run's records",
        ),
        "published-check": (
            "vlstress.suites.zeroshot.commands.published_check",
            "one model's clean top-1 on each test set beside the published number",
        ),
        "effective-robustness": (
            "vlstress.suites.zeroshot.commands.effective_robustness",
            "effective and relative robustness from any table of ID and shifted accuracies",
        ),
    },
    params="vlstress.suites.zeroshot.params",
    pricing="vlstress.suites.zeroshot.pricing",
    lists={
        "zeroshot_shards": PathList(shard_folders, shard_folders, lambda params: [SHARDS]),
        "zeroshot_testsets": PathList(
            paths.testset_folders, paths.data_folders, paths.testset_params
        ),
        # this suite's own test sets (others add theirs to `zeroshot_testsets`)
        "clean_testsets": PathList(paths.testset_folders, paths.data_folders, paths.testset_params),
        "zeroshot_sets": PathList(
            paths.evaluation_paths, paths.evaluation_folders, paths.shaping_params
        ),
        "zeroshot_data": PathList(paths.testset_folders, paths.data_folders, paths.shaping_params),
        "zeroshot_records": PathList(paths.record_paths, paths.record_deps, paths.shaping_params),
    },
    providers={
        "classifiers": "vlstress.suites.zeroshot.sets",
        "zeroshot": "vlstress.suites.zeroshot.sets",
        "evaluations": "vlstress.suites.zeroshot.paths",
    },
    tasks={
        "zeroshot": Task(
            "zero-shot classification",
            (),
            noun="test sets",
            headlines=(Headline("top1", "top-1 (%)", proportion=True, item_column="correct"),),
        ),
        "published-check": Task("clean top-1 against the published number", (), noun="test sets"),
    },
)
