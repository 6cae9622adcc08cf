"""Calibration of the zero-shot softmax (ECE, NLL, Brier) and temperature scaling carried to shifted
sets."""

from vlstress.report.display import Headline, Task
from vlstress.suites.calibration.resampling import ece_resampling, ece_ts_resampling
from vlstress.workflow.spec import Output, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

RECORD = "results/metrics/{model}/calibration.json"

SUITE = Suite(
    "calibration",
    (
        "calibration of the zero-shot softmax (ECE, NLL, Brier) and temperature scaling carried to "
        "shifted sets"
    ),
    needs=("calibration",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "calibrate",
            "vlstress calibrate {params_files} --model {model}"
            " --evaluations-from {providers.evaluations}"
            " --in-distribution {p.calibration.in_distribution}"
            " --fit-fraction {p.calibration.fit_fraction} --seed {p.calibration.seed}"
            " --bins {p.calibration.bins} --out {out.records} --out-fig {out.png}",
            input_lists={"sets": "zeroshot_sets"},
            outputs={
                "records": small(RECORD, record=True),
                "outcomes": outcomes_of(RECORD),
                "bins": small(f"{RECORD}.json"),
                "png": Output(
                    "results/figures/reliability_{model}.png",
                    plot={},
                    caption="reliability",
                    category="Calibration",
                ),
                "pdf": Output("results/figures/reliability_{model}.pdf"),
            },
            axes=("model",),
            suite="calibration",
            doc=(
                "temperature fitted on a seeded split of the in-distribution set, scored on its "
                "held-out rest and applied unchanged to every shifted set"
            ),
        ),
        figures_stage(
            "calibration",
            "vlstress.suites.calibration.figures",
            {"calibration_ece": ()},
            "Figures",
            intervals=True,
        ),
        tables_stage(
            "calibration",
            "vlstress.suites.calibration.table",
            {
                "md": small("results/tables/calibration.md", caption="tables", category="Tables"),
                "tex": small("results/tables/calibration.tex", caption="tables", category="Tables"),
            },
            intervals=True,
        ),
    ),
    commands={
        "calibrate": (
            "vlstress.suites.calibration.commands.calibrate",
            (
                "calibration of a model's zero-shot softmax (ECE, NLL, Brier; temperature scaling) "
                "on every set"
            ),
        ),
    },
    params="vlstress.suites.calibration.params",
    pricing="vlstress.suites.calibration.pricing",
    tasks={
        "calibration": Task(
            "calibration of the zero-shot softmax",
            (),
            noun="sets",
            headlines=(
                Headline("ece", "ECE (%)", False, resampling=ece_resampling),
                Headline(
                    "ece_ts",
                    "ECE after temperature scaling (%)",
                    False,
                    resampling=ece_ts_resampling,
                ),
            ),
        )
    },
)
