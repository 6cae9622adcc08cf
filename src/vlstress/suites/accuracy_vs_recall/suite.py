"""Zero-shot classification accuracy against retrieval R@1 across the models of a run: one stage
that reads the summary (no model work)."""

from vlstress.workflow.paths import SUMMARY
from vlstress.workflow.spec import Output, Stage, Suite
from vlstress.workflow.stages import small

SUITE = Suite(
    "accuracy_vs_recall",
    "does zero-shot accuracy predict retrieval? top-1 against R@1 across models"
    " (line, Pearson, Spearman)",
    needs=("accuracy_vs_recall",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "accuracy_vs_recall",
            "vlstress accuracy-vs-recall --summary {in.summary}"
            " --testset {p.accuracy_vs_recall.testset} --out-md {out.md} --out-tex {out.tex}"
            " --out-json {out.json} --out-scores {out.scores} --out-fig {out.png}",
            inputs={"summary": SUMMARY},
            outputs={
                "md": small(
                    "results/accuracy_vs_recall/table.md",
                    caption="accuracy_vs_recall",
                    category="Tables",
                ),
                "tex": small("results/accuracy_vs_recall/table.tex"),
                "json": small("results/accuracy_vs_recall/fits.json"),
                "scores": small("results/accuracy_vs_recall/scores", directory=True, metric=True),
                "png": Output(
                    "results/figures/accuracy_vs_recall.png",
                    plot={},
                    caption="accuracy_vs_recall",
                    category="Figures",
                ),
                "pdf": Output("results/figures/accuracy_vs_recall.pdf"),
            },
            suite="accuracy_vs_recall",
            doc="zero-shot top-1 against retrieval R@1 across models, per retrieval condition",
        ),
    ),
    commands={
        "accuracy-vs-recall": (
            "vlstress.suites.accuracy_vs_recall.commands.accuracy_vs_recall",
            "zero-shot top-1 against retrieval R@1 across models (line, Pearson, Spearman)",
        ),
    },
    params="vlstress.suites.accuracy_vs_recall.params",
    pricing="vlstress.suites.accuracy_vs_recall.pricing",
)
