"""Zero-shot classification under ImageNet-C style corruptions (accuracy, mCE)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.corruptions.paths import (
    CORRUPTED,
    RECORD,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.workflow.paths import CLASSIFIERS, ZEROSHOT_EMB
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small

SUITE = Suite(
    "corruptions",
    "zero-shot classification under ImageNet-C style corruptions (accuracy, mCE)",
    needs=("corruptions",),
    requires=("zeroshot",),
    axes=(
        Axis("corruption", "corruptions.names", r"[a-z][a-z0-9_]*"),
        Axis("severity", "corruptions.severities", r"[1-5]"),
    ),
    stages=(
        Stage(
            "corrupt",
            "vlstress corrupt --manifest {in.testset} --corruption {corruption}"
            " --source {p.corruptions.source}"
            " --severities {severity} --seed {p.corruptions.seed} --size {p.corruptions.size}"
            " --workers {p.corruptions.workers} --out {out.corrupted}",
            inputs={"testset": "data/testsets/{p.corruptions.testset}"},
            outputs={"corrupted": Output(CORRUPTED, directory=True)},
            axes=("corruption", "severity"),
            suite="corruptions",
            doc="one corruption at one severity of the test set (parallel over the node's cores)",
        ),
        Stage(
            "evaluate_corruption",
            "vlstress evaluate-corruptions {params_files} --model {model}"
            " --clean-record {in.clean} --out-dir results/metrics/{model}",
            inputs={
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
                "clean": "results/metrics/{model}/zeroshot-{p.corruptions.testset}.json",
            },
            input_lists={"sets": "corrupted_sets"},
            outputs={
                "record": small(RECORD, record=True, each=("corruption", "severity")),
                "per_class": small(f"{RECORD}.json", each=("corruption", "severity")),
                "outcomes": outcomes_of(RECORD, each=("corruption", "severity")),
            },
            axes=("model",),
            suite="corruptions",
            doc="every corruption at every severity, one job per model (one record per condition)",
        ),
        figures_stage(
            "corruptions",
            "vlstress.suites.corruptions.figures",
            {"corruption_heatmap": (), "corruption_severity": (), "corruption_error": ()},
            "Figures",
        ),
    ),
    commands={
        "corrupt": (
            "vlstress.suites.corruptions.commands.corrupt",
            "ImageNet-C style corruptions of a test set (seeded, parallel)",
        ),
        "evaluate-corruptions": (
            "vlstress.suites.corruptions.commands.evaluate_corruptions",
            "zero-shot classification of one model on every corrupted copy (one record each)",
        ),
    },
    params="vlstress.suites.corruptions.params",
    pricing="vlstress.suites.corruptions.pricing",
    lists={
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
        "zeroshot_sets": PathList(folders, data_folders, shaping_params),
        "corrupted_sets": PathList(folders, data_folders, shaping_params),
    },
    providers={
        "zeroshot": "vlstress.suites.corruptions.sets",
        "evaluations": "vlstress.suites.corruptions.paths",
    },
    tasks={
        "corruption": Task(
            "zero-shot classification under corruptions",
            (),
            noun="corruptions",
            headlines=(Headline("top1", "top-1 (%)", proportion=True, item_column="correct"),),
        )
    },
)
