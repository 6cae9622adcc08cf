"""Where models fail: ImageNet-X's factors of variation (pose, background, pattern, colour, size,
...). One step per model reads the embeddings and classifier of an ImageNet val test set the
zero-shot jobs already wrote; one step across the models fits the factor-level effective
robustness from the summary."""

from vlstress.report.display import Headline, Task
from vlstress.suites.visual_factors.resampling import error_ratio_resampling
from vlstress.workflow.paths import (
    CLASSIFIER,
    CLASSIFIERS,
    SUMMARY,
    TESTSET_EMB,
    ZEROSHOT_EMB,
    of,
)
from vlstress.workflow.spec import Output, Stage, Suite
from vlstress.workflow.stages import outcomes_of, small

SUITE = Suite(
    "visual_factors",
    "ImageNet-X factors of variation: top-1 and error ratio per factor, factor-level effective "
    "robustness across models",
    needs=("visual_factors",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "visual_factors",
            "vlstress visual-factors --testset {in.testset} --image-emb {in.emb}/"
            + of(TESTSET_EMB, "p.visual_factors.testset")
            + " --classifier {in.classifiers}/"
            + of(CLASSIFIER, "p.visual_factors.testset")
            + " --annotations {p.visual_factors.annotations}"
            " --filter-prototypes {p.visual_factors.filter_prototypes}"
            " --complete {p.visual_factors.complete} --out {out.records}",
            inputs={
                "testset": "data/testsets/{p.visual_factors.testset}",
                "emb": ZEROSHOT_EMB,
                "classifiers": CLASSIFIERS,
            },
            outputs={
                "records": small("results/metrics/{model}/visual_factors.json", record=True),
                "predictions": small("results/metrics/{model}/visual_factors.json.json"),
                "outcomes": outcomes_of("results/metrics/{model}/visual_factors.json"),
            },
            axes=("model",),
            suite="visual_factors",
            doc="one model's top-1 and error ratio per ImageNet-X factor (one record each)",
        ),
        Stage(
            "factor_robustness",
            "vlstress factor-robustness --summary {in.summary}"
            " --transform {p.visual_factors.transform} --out-md {out.md} --out-tex {out.tex}"
            " --out-json {out.json} --out-scores {out.scores} --out-fig {out.png}",
            inputs={"summary": SUMMARY},
            outputs={
                "md": small(
                    "results/visual_factors/table.md", caption="visual_factors", category="Tables"
                ),
                "tex": small("results/visual_factors/table.tex"),
                "json": small("results/visual_factors/fits.json"),
                "scores": small("results/visual_factors/scores", directory=True, metric=True),
                "png": Output(
                    "results/figures/visual_factors.png",
                    plot={},
                    caption="visual_factors",
                    category="Figures",
                ),
                "pdf": Output("results/figures/visual_factors.pdf"),
            },
            suite="visual_factors",
            doc="error ratios of every model and the factor-level effective robustness (Huber "
            "line of factor top-1 against overall top-1 across models)",
        ),
    ),
    commands={
        "visual-factors": (
            "vlstress.suites.visual_factors.commands.visual_factors",
            "one model's top-1 and error ratio per ImageNet-X factor of variation",
        ),
        "factor-robustness": (
            "vlstress.suites.visual_factors.commands.factor_robustness",
            "ImageNet-X error ratios across models and factor-level effective robustness",
        ),
    },
    params="vlstress.suites.visual_factors.params",
    pricing="vlstress.suites.visual_factors.pricing",
    tasks={
        "visual_factors": Task(
            "ImageNet-X factors of variation",
            (),
            noun="factors",
            headlines=(
                Headline("error_ratio", "error ratio", False, resampling=error_ratio_resampling),
            ),
        )
    },
)
