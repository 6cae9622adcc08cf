"""Robustness across time: pm-k accuracy on anchor frames and their neighbours
(ImageNet-Vid-Robust)."""

from vlstress.report.display import Headline, Task
from vlstress.suites.video.paths import RECORD, set_folders, set_params, set_paths
from vlstress.workflow.spec import PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

SUITE = Suite(
    "video",
    "accuracy across time: pm-k on anchor frames and their neighbours (ImageNet-Vid-Robust)",
    needs=("video",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "evaluate_video",
            "vlstress evaluate-video {params_files} --model {model} --k {p.video.k}"
            " --out {out.records}",
            inputs={},
            input_lists={"sets": "video_sets"},
            outputs={"records": small(RECORD, record=True), "outcomes": outcomes_of(RECORD)},
            axes=("model",),
            suite="video",
            doc="pm-0 .. pm-k on every video test set, one job per model",
        ),
        figures_stage("video", "vlstress.suites.video.figures", {"video_pmk": ()}, "Figures"),
        tables_stage(
            "video",
            "vlstress.suites.video.table",
            {
                "md": small("results/tables/video.md", caption="tables", category="Tables"),
                "tex": small("results/tables/video.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "evaluate-video": (
            "vlstress.suites.video.commands.evaluate_video",
            "pm-k of one model on every video test set (anchors and their neighbours)",
        ),
    },
    params="vlstress.suites.video.params",
    lists={"video_sets": PathList(set_paths, set_folders, set_params)},
    tasks={
        "video": Task(
            "accuracy across time (pm-k)",
            (),
            noun="video test sets",
            headlines=(
                # two models on the same anchors: McNemar
                Headline("pm10", "pm-10 (% of anchors)", proportion=True, item_column="pm10"),
            ),
        )
    },
)
