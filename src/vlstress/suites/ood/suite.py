"""Out-of-distribution detection with the zero-shot classifier (MCM, MSP, max logit, energy)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.ood.paths import (
    OOD_EMB,
    OOD_SET,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.suites.ood.resampling import auroc_resampling, fpr95_resampling
from vlstress.workflow.paths import (
    CLASSIFIER,
    CLASSIFIERS,
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

RECORD = "results/metrics/{model}/ood-{oodset}.json"

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
            "vlstress ood-detect --testset {in.testset} --image-emb {in.emb}/"
            + of(TESTSET_EMB, "p.ood.in_distribution")
            + " --classifier {in.classifiers}/"
            + of(CLASSIFIER, "p.ood.in_distribution")
            + " --ood-testset {in.ood_testset} --ood-emb {in.emb}/"
            + OOD_EMB
            + " --scores {p.ood.scores}"
            " --temperature {p.ood.temperature} --out {out.records} --out-fig {out.png}",
            inputs={
                "testset": "data/testsets/{p.ood.in_distribution}",
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
                "ood_testset": OOD_SET,
            },
            outputs={
                "records": small(RECORD, record=True),
                "outcomes": outcomes_of(RECORD),
                "roc": small(f"{RECORD}.json"),
                "png": Output(
                    "results/figures/ood_roc_{model}_{oodset}.png",
                    plot={},
                    caption="ood_roc",
                    category="OOD detection",
                ),
                "pdf": Output("results/figures/ood_roc_{model}_{oodset}.pdf"),
            },
            axes=("model", "oodset"),
            suite="ood",
            doc="in-distribution test set against one OOD set, every score (one record per score)",
        ),
        figures_stage("ood", "vlstress.suites.ood.figures", {"ood_auroc": ()}, "Figures"),
        tables_stage(
            "ood",
            "vlstress.suites.ood.table",
            {
                "md": small("results/tables/ood.md", caption="tables", category="Tables"),
                "tex": small("results/tables/ood.tex", caption="tables", category="Tables"),
            },
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
    },
    params="vlstress.suites.ood.params",
    pricing="vlstress.suites.ood.pricing",
    lists={"zeroshot_data": PathList(folders, data_folders, shaping_params)},
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
