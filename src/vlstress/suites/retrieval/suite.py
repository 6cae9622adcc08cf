"""Original retrieval (always on): image → text and text → image Recall@K on the test gallery.

Its embedding job embeds every retrieval set of a model in one process: the gallery's images and
captions here, and the sets other suites add to the `retrieval` embedding group (image variants,
caption sets), so the start-up of a model step is paid once per model (docs/throughput.md).
"""

from vlstress.embedding.kinds import IMAGE_TEXT_KINDS
from vlstress.report.display import Headline, Task
from vlstress.workflow.paths import (
    CARD,
    EVALUATE_FLAGS,
    MANIFEST,
    RETRIEVAL_EMB,
    REUSE_FLAG,
    RUN_FLAGS,
)
from vlstress.workflow.spec import Output, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

RETRIEVAL_RECORD = "results/metrics/{model}/original.json"

SUITE = Suite(
    "retrieval",
    "retrieval on the original gallery (image → text, text → image), always on",
    always=True,
    pricing="vlstress.suites.retrieval.pricing",
    stages=(
        Stage(
            "embed_retrieval",
            (
                "vlstress embed-retrieval --manifest {in.manifest} {params_files}"
                " --model-card {in.card} "
            )
            + RUN_FLAGS
            + " --sets-from {providers.retrieval} "
            + REUSE_FLAG
            + " --out {out.emb}",
            inputs={"manifest": MANIFEST, "card": CARD},
            input_lists={"sets": "retrieval_sets"},
            outputs={"emb": Output(RETRIEVAL_EMB, directory=True)},
            axes=("model",),
            model_kinds=IMAGE_TEXT_KINDS,
            gpu=True,
            doc="every retrieval set of a model in one job (originals, image variants, caption "
            "sets): the start-up is paid once per model, and sets unchanged since an earlier "
            "run are reused",
        ),
        Stage(
            "evaluate",
            (
                "vlstress evaluate --manifest {in.manifest} --image-emb {in.emb}/images.npy"
                " --text-emb {in.emb}/texts.npy "
            )
            + EVALUATE_FLAGS
            + " --out {out.record}",
            inputs={"manifest": MANIFEST, "emb": RETRIEVAL_EMB},
            outputs={
                "record": Output(RETRIEVAL_RECORD, cache=False, record=True),
                "outcomes": outcomes_of(RETRIEVAL_RECORD),
            },
            axes=("model",),
            model_kinds=IMAGE_TEXT_KINDS,
        ),
        # the stress figures need a suite whose records stress retrieval (declared by their tasks'
        # baseline)
        figures_stage(
            "retrieval",
            "vlstress.suites.retrieval.figures",
            {
                "recall_bars": (),
                "false_r1_heatmap": ("rococo_text", "rococo_image"),
                "lambda_sweep": ("rococo_image",),
                "drop_vs_size": ("rococo_text", "rococo_image"),
            },
            "Figures",
        ),
        tables_stage(
            "retrieval",
            "vlstress.suites.retrieval.table",
            {
                "md": small("results/tables/stress.md", caption="tables", category="Tables"),
                "tex": small("results/tables/stress.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "embed-retrieval": (
            "vlstress.suites.retrieval.commands.embed_retrieval",
            "every retrieval set of one model in one process (images, captions, image variants, "
            "caption sets), unchanged sets reused",
        ),
        "evaluate": (
            "vlstress.suites.retrieval.commands.evaluate",
            "retrieval metrics (Recall@K) from embeddings",
        ),
    },
    tasks={
        "retrieval": Task(
            "retrieval on the original gallery",
            ("i2t", "t2i"),
            noun="original gallery",
            headlines=(
                Headline(
                    "i2t_R@1",
                    "image → text R@1 (%)",
                    proportion=True,
                    item_column="hit1",
                    item_where=("direction", "i2t"),
                ),
                Headline(
                    "t2i_R@1",
                    "text → image R@1 (%)",
                    proportion=True,
                    n_column="n_captions",
                    item_column="hit1",
                    item_where=("direction", "t2i"),
                ),
            ),
        )
    },
)
