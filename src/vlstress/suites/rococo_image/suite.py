"""RoCOCO image stress-tests: each test image mixed or patched with a partner (text → image)."""

from vlstress.embedding.kinds import IMAGE_TEXT_KINDS
from vlstress.report.display import Headline, Task
from vlstress.suites.rococo_image.paths import (
    RECORD_NAME,
    VARIANT_DIR,
    folders,
    shaping_params,
    variant_folders,
)
from vlstress.workflow.paths import EVALUATE_FLAGS, MANIFEST, METRICS, RAW, RETRIEVAL_EMB
from vlstress.workflow.spec import Axis, Output, PathList, Stage, Suite
from vlstress.workflow.stages import outcomes_of

IMAGE_RECORD = f"{METRICS}/{RECORD_NAME}"
EACH = ("method", "lam", "seed")  # the variant axes one evaluation job writes a record of each

SUITE = Suite(
    "rococo_image",
    "RoCOCO image stress-tests: images mixed / patched with a partner (text → image)",
    needs=("image_variants",),
    axes=(
        Axis("method", "image_variants.methods", r"[a-z][a-z0-9_]*"),
        Axis("lam", "image_variants.lams", r"[0-9][0-9.e-]*"),
        Axis("seed", "image_variants.seeds", r"[0-9]+"),
    ),
    stages=(
        Stage(
            "image_variants",
            "vlstress image-variants --manifest {in.manifest} --method {method} --lam {lam}"
            " --seed {seed} --mode {p.image_variants.mode} --size {p.image_variants.size}"
            " --jpeg-quality {p.image_variants.jpeg_quality} --out {out.variant}",
            inputs={"manifest": MANIFEST, "raw": RAW},
            outputs={"variant": Output(VARIANT_DIR, directory=True)},
            axes=("method", "lam", "seed"),
            suite="rococo_image",
        ),
        Stage(
            "evaluate_image",
            "vlstress evaluate-images {params_files} --manifest {in.manifest} --emb {in.emb} "
            + EVALUATE_FLAGS
            + " --out-dir "
            + METRICS,
            inputs={"manifest": MANIFEST, "emb": RETRIEVAL_EMB},
            input_lists={"variants": "image_variant_sets"},
            outputs={
                "record": Output(IMAGE_RECORD, cache=False, record=True, each=EACH),
                "outcomes": outcomes_of(IMAGE_RECORD, each=EACH),
            },
            axes=("model",),
            model_kinds=IMAGE_TEXT_KINDS,
            suite="rococo_image",
            doc="every image variant of a model, one job per model (one record per variant)",
        ),
    ),
    commands={
        "image-variants": (
            "vlstress.suites.rococo_image.commands.image_variants",
            (
                "perturbed-image variant of the test set (a registry perturbation: mix, patch, "
                "flip, ...)"
            ),
        ),
        "evaluate-image": (
            "vlstress.suites.rococo_image.commands.evaluate_image",
            "text-to-image metrics against original + mixed images",
        ),
        "evaluate-images": (
            "vlstress.suites.rococo_image.commands.evaluate_images",
            "text-to-image metrics of one model on every image variant (one record each)",
        ),
    },
    params="vlstress.suites.rococo_image.params",
    pricing="vlstress.suites.rococo_image.pricing",
    lists={
        "retrieval_sets": PathList(variant_folders, folders, shaping_params),
        "image_variant_sets": PathList(variant_folders, folders, shaping_params),
    },
    providers={"retrieval": "vlstress.suites.rococo_image.sets"},
    tasks={
        "image-stress": Task(
            "image stress (text → image)",
            ("t2i",),
            baseline="retrieval",
            names={"mix": "mix", "patch": "patch"},
            noun="image variants",
            distractor="a mixed image",
            sweep="lam",
            sweep_label="λ (share of the original image)",
            headlines=(
                Headline(
                    "t2i_R@1",
                    "text → image R@1 (%)",
                    proportion=True,
                    n_column="n_captions",
                    item_column="hit1",
                ),
            ),
        )
    },
)
