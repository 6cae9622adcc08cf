"""Zero-shot classification under typographic attacks (a wrong class name written on the image)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.typographic.paths import (
    TYPOGRAPHIC,
    TYPOGRAPHIC_EMB,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.workflow.paths import CLASSIFIER, CLASSIFIERS, ZEROSHOT_EMB, of
from vlstress.workflow.spec import Output, PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small

SUITE = Suite(
    "typographic",
    "zero-shot classification under typographic attacks (a wrong class name written on the image)",
    needs=("typographic",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "typographic",
            "vlstress typographic --manifest {in.testset} --seed {p.typographic.seed}"
            " --size {p.typographic.size} --out {out.attacked}",
            inputs={"testset": "data/testsets/{p.typographic.testset}"},
            outputs={"attacked": Output(TYPOGRAPHIC, directory=True)},
            suite="typographic",
            doc="a wrong class name written on each image (seeded font size, colour, position)",
        ),
        Stage(
            "evaluate_typographic",
            (
                "vlstress evaluate-zeroshot --task typographic --testset {in.testset}"
                " --image-emb {in.emb}/"
            )
            + TYPOGRAPHIC_EMB
            + " --classifier {in.classifiers}/"
            + of(CLASSIFIER, "p.typographic.testset")
            + " --clean-record {in.clean} --out {out.record}",
            inputs={
                "testset": TYPOGRAPHIC,
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
                "clean": "results/metrics/{model}/zeroshot-{p.typographic.testset}.json",
            },
            outputs={
                "record": small("results/metrics/{model}/typographic.json", record=True),
                "per_class": small("results/metrics/{model}/typographic.json.json"),
                "outcomes": outcomes_of("results/metrics/{model}/typographic.json"),
            },
            axes=("model",),
            suite="typographic",
        ),
        figures_stage(
            "typographic",
            "vlstress.suites.typographic.figures",
            {"typographic_attack": ()},
            "Figures",
        ),
    ),
    commands={
        "typographic": (
            "vlstress.suites.typographic.commands.typographic",
            "typographic attack: a wrong class name written on each image (seeded)",
        ),
    },
    params="vlstress.suites.typographic.params",
    pricing="vlstress.suites.typographic.pricing",
    lists={
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
        "zeroshot_sets": PathList(folders, data_folders, shaping_params),
    },
    providers={
        "zeroshot": "vlstress.suites.typographic.sets",
        "evaluations": "vlstress.suites.typographic.paths",
    },
    tasks={
        "typographic": Task(
            "zero-shot classification under a typographic attack",
            (),
            noun="attacks",
            headlines=(
                Headline("top1", "top-1 (%)", proportion=True, item_column="correct"),
                Headline(
                    "attack_success",
                    "attack success (%)",
                    False,
                    proportion=True,
                    item_column="written_hit",
                ),
            ),
        )
    },
)
