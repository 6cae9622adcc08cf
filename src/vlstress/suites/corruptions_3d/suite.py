"""Zero-shot classification under 3D Common Corruptions (Kar et al., CVPR 2022): depth-aware
corruptions made from a test set's images and their depth, or read from ImageNet-3DCC."""

from vlstress.report.display import Headline, Task
from vlstress.suites.corruptions_3d.names import CORRUPTIONS
from vlstress.suites.corruptions_3d.paths import (
    CORRUPTED,
    RECORD,
    TASK,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.workflow.paths import CLASSIFIERS, ZEROSHOT_EMB
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

EACH = ("corruption_3d", "severity_3d")

SUITE = Suite(
    "corruptions_3d",
    "zero-shot classification under 3D Common Corruptions (depth of field, 3D fog; ImageNet-3DCC)",
    needs=("corruptions_3d",),
    requires=("zeroshot",),
    axes=(
        Axis("corruption_3d", "corruptions_3d.names", r"[a-z][a-z0-9_]*"),
        Axis("severity_3d", "corruptions_3d.severities", r"[1-5]"),
    ),
    stages=(
        Stage(
            "corrupt_3d",
            "vlstress corrupt-3d --manifest {in.testset} --corruption {corruption_3d}"
            " --severities {severity_3d} --source {p.corruptions_3d.source}"
            " --depth {p.corruptions_3d.depth}"
            " --depth-encoding {p.corruptions_3d.depth_encoding}"
            " --size {p.corruptions_3d.size} --seed {p.corruptions_3d.seed}"
            " --workers {p.corruptions_3d.workers}"
            " --out {out.corrupted}",
            inputs={"testset": "data/testsets/{p.corruptions_3d.testset}"},
            outputs={"corrupted": Output(CORRUPTED, directory=True)},
            axes=EACH,
            external=("corruptions_3d.depth",),
            suite="corruptions_3d",
            doc="one 3D corruption at one severity of the test set (parallel over the cores)",
        ),
        Stage(
            "evaluate_corruption_3d",
            "vlstress evaluate-corruptions-3d {params_files} --model {model}"
            " --clean-record {in.clean} --out-dir results/metrics/{model}",
            inputs={
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
                "clean": "results/metrics/{model}/zeroshot-{p.corruptions_3d.testset}.json",
            },
            input_lists={"sets": "corrupted_3d_sets"},
            outputs={
                "record": small(RECORD, record=True, each=EACH),
                "per_class": small(f"{RECORD}.json", each=EACH),
                "outcomes": outcomes_of(RECORD, each=EACH),
            },
            axes=("model",),
            suite="corruptions_3d",
            doc="every 3D corruption at every severity, one job per model (one record each)",
        ),
        figures_stage(
            "corruptions_3d",
            "vlstress.suites.corruptions_3d.figures",
            {"corruption_3d_severity": ()},
            "Figures",
        ),
        tables_stage(
            "corruptions_3d",
            "vlstress.suites.corruptions_3d.table",
            {
                "md": small(
                    "results/tables/corruptions_3d.md",
                    caption="corruption_3d_table",
                    category="Tables",
                ),
                "tex": small("results/tables/corruptions_3d.tex"),
            },
        ),
    ),
    commands={
        "corrupt-3d": (
            "vlstress.suites.corruptions_3d.commands.corrupt_3d",
            "a 3D Common Corruption of a test set (depth of field, 3D fog) or ImageNet-3DCC's",
        ),
        "evaluate-corruptions-3d": (
            "vlstress.suites.corruptions_3d.commands.evaluate_corruptions_3d",
            "zero-shot classification of one model on every 3D-corrupted copy (one record each)",
        ),
    },
    params="vlstress.suites.corruptions_3d.params",
    pricing="vlstress.suites.corruptions_3d.pricing",
    lists={
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
        "zeroshot_sets": PathList(folders, data_folders, shaping_params),
        "corrupted_3d_sets": PathList(folders, data_folders, shaping_params),
    },
    providers={"zeroshot": "vlstress.suites.corruptions_3d.sets"},
    tasks={
        TASK: Task(
            "zero-shot classification under 3D common corruptions",
            (),
            names={name: name.replace("_", " ") for name in CORRUPTIONS},
            noun="3D corruptions",
            headlines=(Headline("top1", "top-1 (%)", proportion=True, item_column="correct"),),
        )
    },
)
