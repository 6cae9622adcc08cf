"""Stability under small changes: ImageNet-P style perturbation sequences, flip probability and
top-5 distance."""

from vlstress.report.display import Headline, Task
from vlstress.suites.stability.paths import RECORD, SEQUENCES, data_folders, folders, shaping_params
from vlstress.suites.stability.resampling import flip_resampling
from vlstress.workflow.paths import CLASSIFIERS, SUMMARY, ZEROSHOT_EMB
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite
from vlstress.workflow.stages import HEADLINES, outcomes_of, small

SUITE = Suite(
    "stability",
    "stability under ImageNet-P style perturbation sequences: flip probability, top-5 distance",
    needs=("stability",),
    requires=("zeroshot",),
    axes=(Axis("perturbation", "stability.perturbations", r"[a-z][a-z0-9_]*"),),
    stages=(
        Stage(
            "perturbation_sequences",
            "vlstress perturbation-sequences --manifest {in.testset} --perturbation {perturbation}"
            " --source {p.stability.source} --n-images {p.stability.n_images}"
            " --seed {p.stability.seed} --size {p.stability.size}"
            " --difficulty {p.stability.difficulty} --workers {p.stability.workers}"
            " --out {out.frames}",
            inputs={"testset": "data/testsets/{p.stability.testset}"},
            outputs={"frames": Output(SEQUENCES, directory=True)},
            axes=("perturbation",),
            suite="stability",
            doc="one perturbation's frame sequences of a seeded sample of the test set",
        ),
        Stage(
            "evaluate_stability",
            "vlstress evaluate-stability {params_files} --model {model} --out {out.records}",
            inputs={"emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS},
            input_lists={"sets": "stability_sets"},
            outputs={"records": small(RECORD, record=True), "outcomes": outcomes_of(RECORD)},
            axes=("model",),
            suite="stability",
            doc="flip probability and top-5 distance on every perturbation, one job per model",
        ),
        Stage(
            "stability_report",
            "vlstress stability-report --summary {in.summary} --headlines {in.headlines}"
            " --baseline {p.stability.baseline}"
            " --out-md {out.md} --out-tex {out.tex} --out-fig {out.png}",
            inputs={"summary": SUMMARY, "headlines": HEADLINES},
            outputs={
                "md": small("results/tables/stability.md", caption="tables", category="Tables"),
                "tex": small("results/tables/stability.tex", caption="tables", category="Tables"),
                "png": Output(
                    "results/figures/stability.png",
                    plot={},
                    caption="stability",
                    category="Figures",
                ),
                "pdf": Output("results/figures/stability.pdf"),
            },
            suite="stability",
            doc="the tables and figure of the suite, mFR and mT5D against the baseline model",
        ),
    ),
    commands={
        "perturbation-sequences": (
            "vlstress.suites.stability.commands.perturbation_sequences",
            "ImageNet-P style perturbation sequences of a test set (seeded, parallel)",
        ),
        "evaluate-stability": (
            "vlstress.suites.stability.commands.evaluate_stability",
            "flip probability and top-5 distance of one model on every perturbation",
        ),
        "stability-report": (
            "vlstress.suites.stability.commands.stability_report",
            "the stability tables and figure (mFR, mT5D against a baseline model)",
        ),
    },
    params="vlstress.suites.stability.params",
    pricing="vlstress.suites.stability.pricing",
    lists={
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
        "zeroshot_sets": PathList(folders, data_folders, shaping_params),
        "stability_sets": PathList(folders, data_folders, shaping_params),
    },
    providers={"zeroshot": "vlstress.suites.stability.sets"},
    tasks={
        "stability": Task(
            "stability under perturbation sequences (ImageNet-P)",
            (),
            noun="perturbations",
            headlines=(
                Headline(
                    "flip_probability",
                    "flip probability (%)",
                    False,
                    resampling=flip_resampling,
                ),
            ),
        )
    },
)
