"""Zero-shot classification of an AdaIN-stylized copy of a test set (Stylized-ImageNet's recipe)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.stylized.paths import (
    STYLIZED,
    STYLIZED_EMB,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.workflow.paths import CLASSIFIER, CLASSIFIERS, ZEROSHOT_EMB, of
from vlstress.workflow.spec import Output, PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

SUITE = Suite(
    "stylized",
    "zero-shot classification of an AdaIN-stylized copy of a test set (Stylized-ImageNet)",
    needs=("stylized",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "stylize",
            "vlstress stylize --manifest {in.testset} --styles {p.stylized.styles}"
            " --weights {p.stylized.weights} --pins {p.stylized.pins}"
            " --alpha {p.stylized.alpha} --seed {p.stylized.seed} --size {p.stylized.size}"
            " --device {p.embed.device} --threads {p.embed.threads} --out {out.stylized}",
            inputs={"testset": "data/testsets/{p.stylized.testset}"},
            outputs={"stylized": Output(STYLIZED, directory=True)},
            suite="stylized",
            gpu=True,
            doc="each image of the test set in the AdaIN style of a seeded choice of style image",
        ),
        Stage(
            "evaluate_stylized",
            (
                "vlstress evaluate-zeroshot --task stylized --testset {in.testset}"
                " --image-emb {in.emb}/"
            )
            + STYLIZED_EMB
            + " --classifier {in.classifiers}/"
            + of(CLASSIFIER, "p.stylized.testset")
            + " --clean-record {in.clean} --out {out.record}",
            inputs={
                "testset": STYLIZED,
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
                "clean": "results/metrics/{model}/zeroshot-{p.stylized.testset}.json",
            },
            outputs={
                "record": small("results/metrics/{model}/stylized.json", record=True),
                "per_class": small("results/metrics/{model}/stylized.json.json"),
                "outcomes": outcomes_of("results/metrics/{model}/stylized.json"),
            },
            axes=("model",),
            suite="stylized",
        ),
        figures_stage(
            "stylized",
            "vlstress.suites.stylized.figures",
            {"stylized_accuracy": ()},
            "Figures",
        ),
        tables_stage(
            "stylized",
            "vlstress.suites.stylized.table",
            {
                "md": small("results/tables/stylized.md", caption="tables", category="Tables"),
                "tex": small("results/tables/stylized.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "stylize": (
            "vlstress.suites.stylized.commands.stylize",
            "an AdaIN-stylized copy of a test set (Stylized-ImageNet's recipe; seeded styles)",
        ),
    },
    params="vlstress.suites.stylized.params",
    pricing="vlstress.suites.stylized.pricing",
    lists={
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
        "zeroshot_sets": PathList(folders, data_folders, shaping_params),
    },
    providers={"zeroshot": "vlstress.suites.stylized.sets"},
    tasks={
        "stylized": Task(
            "zero-shot classification of stylized images",
            (),
            noun="stylizations",
            headlines=(Headline("top1", "top-1 (%)", proportion=True, item_column="correct"),),
        )
    },
)
