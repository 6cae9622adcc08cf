"""3D awareness: dense correspondence of frozen image towers (Probe3D's protocol on ScanNet, NAVI,
SPair-71k, or synthetic RGB-D scenes)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.correspondence.paths import PAIRS, RECORD
from vlstress.suites.correspondence.resampling import recall_resampling
from vlstress.workflow.paths import CARD, CHECKED, RUN_FLAGS
from vlstress.workflow.spec import Axis, Output, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

SET_FLAGS = " ".join(
    f"--{field.replace('_', '-')} {{item.{field}}}"
    for field in (
        "kind",
        "root",
        "pairs",
        "seed",
        "image_size",
        "mean",
        "std",
        "matches",
        "scale_factor",
        "thresholds",
        "binned",
        "bins",
        "max_angle",
        "split",
    )
)

SUITE = Suite(
    "correspondence",
    "3D awareness: dense correspondence of frozen image towers (Probe3D: ScanNet, NAVI, SPair-71k)",
    needs=("correspondence",),
    axes=(Axis("corrset", "correspondence.sets", r"[a-z0-9][a-z0-9_]*", keys=True),),
    stages=(
        Stage(
            "correspondence_pairs",
            "vlstress correspondence-pairs --name {corrset} " + SET_FLAGS + " --out {out.pairs}",
            outputs={"pairs": Output(PAIRS, directory=True)},
            axes=("corrset",),
            external=("item.root",),
            suite="correspondence",
            after=(CHECKED,),
            doc=(
                "the pair list of a correspondence set (its release read in place, or synthetic "
                "RGB-D scenes rendered) with its protocol's settings"
            ),
        ),
        Stage(
            "evaluate_correspondence",
            "vlstress evaluate-correspondence --pairs {in.pairs} --model-card {in.card} "
            + RUN_FLAGS
            + " --out {out.records}",
            inputs={"pairs": PAIRS, "card": CARD},
            outputs={
                "records": small(RECORD, record=True),
                "outcomes": outcomes_of(RECORD),
            },
            axes=("model", "corrset"),
            suite="correspondence",
            gpu=True,
            doc=(
                "dense features of the model's image tower on every pair, matched and scored "
                "(one record for all pairs, one per rotation or viewpoint bin)"
            ),
        ),
        figures_stage(
            "correspondence",
            "vlstress.suites.correspondence.figures",
            {"correspondence_bins": (), "correspondence_recall": ()},
            "3D awareness",
            intervals=True,
        ),
        tables_stage(
            "correspondence",
            "vlstress.suites.correspondence.table",
            {
                "md": small(
                    "results/tables/correspondence.md", caption="tables", category="Tables"
                ),
                "tex": small(
                    "results/tables/correspondence.tex", caption="tables", category="Tables"
                ),
            },
            intervals=True,
        ),
    ),
    commands={
        "correspondence-pairs": (
            "vlstress.suites.correspondence.commands.correspondence_pairs",
            "the pair list of a correspondence set (a release read in place, or synthetic scenes)",
        ),
        "evaluate-correspondence": (
            "vlstress.suites.correspondence.commands.evaluate_correspondence",
            "dense correspondence of one model's image tower on a pair list (Probe3D's protocol)",
        ),
    },
    params="vlstress.suites.correspondence.params",
    pricing="vlstress.suites.correspondence.pricing",
    tasks={
        "correspondence": Task(
            "dense correspondence (3D awareness)",
            (),
            noun="correspondence sets and bins",
            # n: the pairs (the bootstrap's items), not the images
            headlines=(
                Headline("recall", "recall (%)", resampling=recall_resampling, n_metric="n_pairs"),
            ),
        )
    },
)
