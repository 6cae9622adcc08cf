"""Shape bias on the texture/shape cue-conflict stimuli (Geirhos et al. 2019): does the zero-shot
classifier decide by an object's shape or by its texture? The stimuli are one more zero-shot image
set and classifier of each model's two zero-shot jobs."""

from vlstress.report.display import Headline, Task
from vlstress.suites.shape_bias.paths import (
    STIMULI,
    STIMULI_CLASSIFIER,
    STIMULI_EMB,
    classifier_params,
    data_folders,
    folders,
    shaping_params,
)
from vlstress.suites.shape_bias.resampling import shape_bias_resampling
from vlstress.workflow.paths import CHECKED, CLASSIFIERS, ZEROSHOT_EMB
from vlstress.workflow.spec import Output, PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

SUITE = Suite(
    "shape_bias",
    "shape bias on the texture/shape cue-conflict stimuli (shape vs texture decisions, per "
    "category)",
    needs=("shape_bias",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "cue_conflict",
            "vlstress cue-conflict --source {p.shape_bias.source}"
            " --per-category {p.shape_bias.per_category} --out {out.stimuli}",
            outputs={"stimuli": Output(STIMULI, directory=True)},
            external=("shape_bias.source",),
            suite="shape_bias",
            doc="the cue-conflict stimuli as a labelled test set (fetched or copied, every file "
            "checked against its pinned sha256)",
            after=(CHECKED,),
        ),
        Stage(
            "shape_bias",
            "vlstress shape-bias --testset {in.stimuli} --image-emb {in.emb}/"
            + STIMULI_EMB
            + " --classifier {in.classifiers}/"
            + STIMULI_CLASSIFIER
            + " --out {out.records}",
            inputs={"stimuli": STIMULI, "emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS},
            outputs={
                "records": small("results/metrics/{model}/shape_bias.json", record=True),
                "decisions": small("results/metrics/{model}/shape_bias.json.json"),
                "outcomes": outcomes_of("results/metrics/{model}/shape_bias.json"),
            },
            axes=("model",),
            suite="shape_bias",
            doc="one model's shape bias, overall and per shape category (one record each)",
        ),
        figures_stage(
            "shape_bias", "vlstress.suites.shape_bias.figures", {"shape_bias": ()}, "Figures"
        ),
        tables_stage(
            "shape_bias",
            "vlstress.suites.shape_bias.table",
            {
                "md": small("results/tables/shape_bias.md", caption="tables", category="Tables"),
                "tex": small("results/tables/shape_bias.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "cue-conflict": (
            "vlstress.suites.shape_bias.commands.cue_conflict",
            "the texture/shape cue-conflict stimuli as a labelled test set (checked, pinned)",
        ),
        "shape-bias": (
            "vlstress.suites.shape_bias.commands.shape_bias",
            "one model's shape bias on the cue-conflict stimuli (overall and per category)",
        ),
    },
    params="vlstress.suites.shape_bias.params",
    pricing="vlstress.suites.shape_bias.pricing",
    lists={
        "zeroshot_testsets": PathList(folders, data_folders, classifier_params),
        "zeroshot_data": PathList(folders, data_folders, shaping_params),
    },
    providers={
        "classifiers": "vlstress.suites.shape_bias.sets",
        "zeroshot": "vlstress.suites.shape_bias.sets",
    },
    tasks={
        "shape_bias": Task(
            "shape bias (cue-conflict)",
            (),
            noun="categories",
            headlines=(
                Headline(
                    "shape_bias",
                    "shape bias (% of shape or texture decisions)",
                    proportion=True,
                    n_metric="n_conflict",
                    n_share=("shape_decisions", "texture_decisions"),
                    scale=100.0,
                    condition="category=all",
                    # a paired bootstrap of two models' shape bias on the same stimuli
                    resampling=shape_bias_resampling,
                ),
            ),
        )
    },
)
