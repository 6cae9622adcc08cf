"""Data overlap: near-duplicates of test images in a training collection (faiss), and accuracy on
the overlapping vs the clean subset."""

from vlstress.report.display import Headline, Task
from vlstress.suites.overlap.paths import (
    COLLECTION,
    DETECTED,
    RECORD,
    set_folders,
    set_params,
    set_paths,
    testset_folders,
    testset_paths,
)
from vlstress.workflow.paths import CARD, RUN_FLAGS, ZEROSHOT_EMB
from vlstress.workflow.spec import Output, PathList, Stage, Suite
from vlstress.workflow.stages import figures_stage, outcomes_of, small, tables_stage

DETECTOR = "{p.overlap.detector}"

SUITE = Suite(
    "overlap",
    "data overlap: near-duplicates of test images in a training collection, accuracy on both",
    needs=("overlap",),
    requires=("zeroshot",),
    stages=(
        Stage(
            "overlap_collection",
            "vlstress overlap-collection --kind {p.overlap.train.kind}"
            " --path {in.train} --max-images {p.overlap.train.max_images}"
            " --planted {p.overlap.planted} --seed {p.overlap.seed} --out {out.collection}",
            # a dependency in both front ends: edits of the collection (or the shard list, the
            # embedding file) rerun it; inside the project, the step that makes it runs first
            inputs={"train": "{p.overlap.train.path}"},
            outputs={"collection": Output(COLLECTION, directory=True)},
            suite="overlap",
            doc="the training collection listed, and the planted duplicates that calibrate",
        ),
        Stage(
            "overlap_detect",
            "vlstress overlap-detect {params_files} --collection {in.collection}"
            " --model-card {in.card} " + RUN_FLAGS + " --index {p.overlap.index}"
            " --nlist {p.overlap.nlist} --nprobe {p.overlap.nprobe}"
            " --threshold {p.overlap.threshold} --recall {p.overlap.recall}"
            " --index-seed {p.overlap.seed} --out {out.detected}",
            inputs={
                "collection": COLLECTION,
                "card": CARD.replace("{model}", DETECTOR),
                "emb": ZEROSHOT_EMB.replace("{model}", DETECTOR),
            },
            input_lists={"sets": "overlap_testsets"},
            outputs={"detected": small(DETECTED)},
            suite="overlap",
            gpu=True,
            doc="the detector embeds the collection; faiss finds each test image's nearest one",
        ),
        Stage(
            "evaluate_overlap",
            "vlstress evaluate-overlap {params_files} --model {model} --detected {in.detected}"
            " --out {out.records}",
            inputs={"detected": DETECTED},
            input_lists={"sets": "overlap_sets"},
            outputs={"records": small(RECORD, record=True), "outcomes": outcomes_of(RECORD)},
            axes=("model",),
            suite="overlap",
            doc="top-1 on the overlapping and the clean subset of every test set, per model",
        ),
        figures_stage(
            "overlap", "vlstress.suites.overlap.figures", {"overlap_accuracy": ()}, "Figures"
        ),
        tables_stage(
            "overlap",
            "vlstress.suites.overlap.table",
            {
                "md": small("results/tables/overlap.md", caption="tables", category="Tables"),
                "tex": small("results/tables/overlap.tex", caption="tables", category="Tables"),
            },
        ),
    ),
    commands={
        "overlap-collection": (
            "vlstress.suites.overlap.commands.overlap_collection",
            "list a training collection (folder, shards, embeddings) and plant duplicates",
        ),
        "overlap-detect": (
            "vlstress.suites.overlap.commands.overlap_detect",
            "near-duplicates of the test images in the training collection (faiss)",
        ),
        "evaluate-overlap": (
            "vlstress.suites.overlap.commands.evaluate_overlap",
            "top-1 of one model on the overlapping and the clean subset of each test set",
        ),
    },
    params="vlstress.suites.overlap.params",
    pricing="vlstress.suites.overlap.pricing",
    lists={
        "overlap_sets": PathList(set_paths, set_folders, set_params),
        "overlap_testsets": PathList(testset_paths, testset_folders, set_params),
    },
    tasks={
        "overlap": Task(
            "accuracy on training-set near-duplicates",
            (),
            noun="test sets",
            headlines=(
                Headline(
                    "top1_clean_subset",
                    "top-1 on the clean subset (%)",
                    proportion=True,
                    n_metric="n_clean_subset",
                    # two models on the same clean images: McNemar
                    item_column="correct",
                    item_where=("subset", "clean"),
                ),
            ),
        )
    },
)
