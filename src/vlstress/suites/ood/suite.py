"""Out-of-distribution detection with the zero-shot classifier (MCM, MSP, max logit, energy)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.ood.paths import (
    FIGURE_NAME,
    OOD_SET,
    RECORD_NAME,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.suites.ood.resampling import auroc_resampling, fpr95_resampling
from vlstress.workflow.paths import (
    CLASSIFIER,
    CLASSIFIERS,
    FIGURES,
    METRICS,
    TESTSET_EMB,
    ZEROSHOT_EMB,
    of,
)
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite
from vlstress.workflow.stages import (
    figures_stage,
    outcomes_of,
    small,
    tables_stage,
    testset_stage,
)

RECORD = f"{METRICS}/{RECORD_NAME}"
FIGURE = f"{FIGURES}/{FIGURE_NAME}"
EACH = ("oodset",)  # one detection job per model writes the files of every OOD set

SUITE = Suite(
    "ood",
    (
        "out-of-distribution detection with the zero-shot classifier (MCM, MSP, max logit, energy; "
        "AUROC, FPR@95)"
    ),
    needs=("ood",),
    requires=("zeroshot",),
    axes=(Axis("oodset", "ood.sets", r"[a-z0-9][a-z0-9_]*", keys=True),),
    stages=(
        testset_stage(
            "ood_testset",
            "oodset",
            OOD_SET,
            "ood",
            "the manifest of an out-of-distribution set (any test-set kind), sharing no class with "
            "the in-distribution set (refused before any model work)",
            disjoint_from="data/testsets/{p.ood.in_distribution}",
        ),
        Stage(
            "ood_detect",
            "vlstress ood-detect-sets {params_files} --model {model} --testset {in.testset}"
            " --image-emb {in.emb}/"
            + of(TESTSET_EMB, "p.ood.in_distribution")
            + " --classifier {in.classifiers}/"
            + of(CLASSIFIER, "p.ood.in_distribution")
            + " --emb {in.emb} --scores {p.ood.scores} --temperature {p.ood.temperature}"
            " --out-dir " + METRICS + " --fig-dir " + FIGURES,
            inputs={
                "testset": "data/testsets/{p.ood.in_distribution}",
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
            },
            input_lists={"ood_sets": "ood_sets"},
            outputs={
                "records": small(RECORD, record=True, each=EACH),
                "outcomes": outcomes_of(RECORD, each=EACH),
                "roc": small(f"{RECORD}.json", each=EACH),
                "png": Output(
                    FIGURE,
                    plot={},
                    caption="ood_roc",
                    category="OOD detection",
                    each=EACH,
                ),
                "pdf": Output(FIGURE.removesuffix(".png") + ".pdf", each=EACH),
            },
            axes=("model",),
            suite="ood",
            doc="in-distribution test set against every OOD set, every score, one job per model "
            "(one records file per set)",
        ),
        figures_stage(
            "ood", "vlstress.suites.ood.figures", {"ood_auroc": ()}, "Figures", intervals=True
        ),
        tables_stage(
            "ood",
            "vlstress.suites.ood.table",
            {
                "md": small("results/tables/ood.md", caption="tables", category="Tables"),
                "tex": small("results/tables/ood.tex", caption="tables", category="Tables"),
            },
            intervals=True,
        ),
    ),
    commands={
        "ood-detect": (
            "vlstress.suites.ood.commands.ood_detect",
            (
                "OOD detection with a zero-shot classifier (MCM, MSP, max logit, energy; AUROC, "
                "FPR@95)"
            ),
        ),
        "ood-detect-sets": (
            "vlstress.suites.ood.commands.ood_detect_sets",
            "OOD detection of one model on every OOD set (one records file and figure each)",
        ),
    },
    params="vlstress.suites.ood.params",
    pricing="vlstress.suites.ood.pricing",
    lists={
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
        "ood_sets": PathList(folders, data_folders, shaping_params),
    },
    providers={"zeroshot": "vlstress.suites.ood.sets"},
    tasks={
        "ood": Task(
            "out-of-distribution detection",
            (),
            noun="OOD sets and scores",
            names={"mcm": "MCM", "msp": "MSP", "max_logit": "max logit", "energy": "energy"},
            headlines=(
                Headline("auroc", "AUROC (%)", resampling=auroc_resampling),
                Headline("fpr95", "FPR@95 (%)", False, resampling=fpr95_resampling),
            ),
        )
    },
)
