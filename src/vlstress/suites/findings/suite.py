"""What the numbers mean: the run's headline metrics with intervals, fingerprints (each model
attribute's offset from the pooled line of a robustness metric against in-distribution top-1), and
a robustness card per model, and paired comparisons of models on the same items. Report stages:
they read the summary, the records and their per-item outcomes (no model work)."""

from vlstress.workflow.paths import SUMMARY
from vlstress.workflow.spec import Output, Stage, Suite
from vlstress.workflow.stages import HEADLINES, small

FINDINGS = "results/findings"

SUITE = Suite(
    "findings",
    "headline metrics with intervals, fingerprints by model attributes, a robustness card per"
    " model",
    needs=("findings",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "fingerprints",
            "vlstress fingerprints --summary {in.summary}"
            " --in-distribution {p.zeroshot.in_distribution}"
            " --attributes {p.findings.attributes} --min-group {p.findings.min_group}"
            " --bootstrap {p.intervals.bootstrap} --confidence {p.intervals.confidence}"
            " --seed {p.seed} --out-csv {out.csv} --out-md {out.md} --out-tex {out.tex}"
            " --out-json {out.json} --out-fig {out.png} --out-lines {out.lines_png}",
            inputs={"summary": SUMMARY},
            outputs={
                "csv": small(f"{FINDINGS}/fingerprints.csv"),
                "md": small(
                    f"{FINDINGS}/fingerprints.md", caption="fingerprints", category="Tables"
                ),
                "tex": small(f"{FINDINGS}/fingerprints.tex"),
                "json": small(f"{FINDINGS}/fingerprints.json"),
                "png": Output(
                    "results/figures/fingerprints.png",
                    plot={},
                    caption="fingerprints",
                    category="Figures",
                ),
                "pdf": Output("results/figures/fingerprints.pdf"),
                "lines_png": Output(
                    "results/figures/fingerprint_lines.png",
                    plot={},
                    caption="fingerprint_lines",
                    category="Figures",
                ),
                "lines_pdf": Output("results/figures/fingerprint_lines.pdf"),
            },
            suite="findings",
            doc="each model attribute's offset from the pooled line of every headline metric"
            " against in-distribution top-1, with intervals and Holm's correction",
        ),
        Stage(
            "cards",
            "vlstress cards {params_files} --summary {in.summary} --headlines {in.headlines}"
            " --confidence {p.intervals.confidence} --bootstrap {p.intervals.bootstrap}"
            " --seed {p.seed} --compare {p.findings.compare}"
            " --out-dir {out.cards}"
            " --out-comparisons-csv {out.comparisons_csv}"
            " --out-comparisons-md {out.comparisons_md}",
            inputs={"summary": SUMMARY, "headlines": HEADLINES},
            input_lists={"records": "records", "outcomes": "outcomes"},
            outputs={
                # pages with embedded figures: in the DVC cache (and remote), as the figures are
                "cards": Output(
                    "results/cards",
                    directory=True,
                    caption="cards",
                    category="Robustness cards",
                    htmlindex="index.html",
                ),
                "comparisons_csv": small(f"{FINDINGS}/comparisons.csv"),
                "comparisons_md": small(
                    f"{FINDINGS}/comparisons.md", caption="comparisons", category="Tables"
                ),
            },
            suite="findings",
            doc="a static HTML robustness card per model and an index comparing them, from the"
            " headline table; paired comparisons of models (McNemar, Holm)",
        ),
    ),
    commands={
        "fingerprints": (
            "vlstress.suites.findings.commands.fingerprints",
            "robustness fingerprints of model attributes: offsets from the pooled line, intervals",
        ),
        "cards": (
            "vlstress.suites.findings.commands.cards",
            "a static HTML robustness card per model and a sortable index of all models",
        ),
    },
    params="vlstress.suites.findings.params",
)
