"""Calibration of the zero-shot softmax (ECE, NLL, Brier) and temperature scaling carried to shifted
sets."""

from vlstress.report.display import Headline, Task
from vlstress.workflow.spec import Output, Stage, Suite
from vlstress.workflow.stages import figures_stage, small, tables_stage

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
                "records": small("results/metrics/{model}/calibration.json", record=True),
                "bins": small("results/metrics/{model}/calibration.json.json"),
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
            "calibration", "vlstress.suites.calibration.figures", {"calibration_ece": ()}, "Figures"
        ),
        tables_stage(
            "calibration",
            "vlstress.suites.calibration.table",
            {
                "md": small("results/tables/calibration.md", caption="tables", category="Tables"),
                "tex": small("results/tables/calibration.tex", caption="tables", category="Tables"),
            },
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
    tasks={
        "calibration": Task(
            "calibration of the zero-shot softmax",
            (),
            noun="sets",
            headlines=(
                Headline("ece", "ECE (%)", False),
                Headline("ece_ts", "ECE after temperature scaling (%)", False),
            ),
        )
    },
)
