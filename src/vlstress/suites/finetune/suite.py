"""Robust fine-tuning with RoCOCO's semantic and visual contrastive losses; the fine-tuned models
are models of the run (a model entry whose `pretrained` is a checkpoint this suite writes)."""

from vlstress.suites.finetune.paths import (
    BASE_CARD,
    FINETUNED,
    LABELLED_FINETUNED,
    LABELLED_TRAIN,
    TRAIN_CAPTIONS,
    TRAIN_MANIFEST,
    TRAIN_RAW,
    WISE,
)
from vlstress.suites.rococo_text.paths import NLTK_DATA
from vlstress.workflow.paths import (
    CARD_FLAGS,
    CHECKED,
    MANIFEST,
    RUN_FLAGS,
    SUMMARY,
    SUMMARY_AGG,
    TESTSET_EXTERNAL,
    TESTSET_FLAGS,
)
from vlstress.workflow.spec import Axis, Output, Stage, Suite
from vlstress.workflow.stages import download_stage, small

# the flags of both training stages: the schedule of the finetune block, a variant's LoRA adapters
SCHEDULE_FLAGS = (
    " --steps {p.finetune.steps}"
    " --train-batch-size {p.finetune.batch_size} --lr {p.finetune.lr}"
    " --weight-decay {p.finetune.weight_decay} --warmup {p.finetune.warmup}"
    " --accumulate {p.finetune.accumulate} --freeze {p.finetune.freeze}"
    " --checkpoint-every {p.finetune.checkpoint_every} --train-seed {p.finetune.seed}"
)
LORA_FLAGS = (
    " --lora-rank {item.lora} --lora-alpha {p.finetune.lora.alpha}"
    " --lora-dropout {p.finetune.lora.dropout} --lora-tower {p.finetune.lora.tower}"
    " --lora-modules {p.finetune.lora.modules}"
)


def training_outputs(model: str, log: str, title: str) -> dict[str, Output]:
    """A training stage's outputs: the weights, their sidecar, the log (a DVC plot)."""
    return {
        "model": Output(model),
        "meta": small(f"{model}.json"),
        "log": small(
            log,
            plot={"x": "step", "y": "total", "template": "linear", "title": title},
            caption="finetune_log",
            category="Robust fine-tuning",
        ),
    }


SUITE = Suite(
    "finetune",
    (
        "robust fine-tuning with RoCOCO's semantic and visual contrastive losses; the fine-tuned "
        "models are models of the run"
    ),
    needs=("finetune",),
    requires=(
        "rococo_text",
    ),  # its altered training captions come from the text stress-test's generators (WordNet)
    axes=(
        Axis("variant", "finetune.variants", r"[a-z0-9][a-z0-9_]*", keys=True),
        Axis("alpha", "finetune.wise.alphas", r"[0-9][0-9.e-]*"),
        Axis("labelled", "finetune.labelled.variants", r"[a-z0-9][a-z0-9_]*", keys=True),
    ),
    stages=(
        download_stage(
            "train_download",
            "finetune.train",
            TRAIN_RAW,
            "finetune",
            "fetch or copy the images and captions of the training data",
        ),
        Stage(
            "train_prepare",
            (
                "vlstress prepare --dataset {p.finetune.train.name} --raw {in.raw}"
                " --out {out.manifest}"
            ),
            inputs={"raw": TRAIN_RAW},
            outputs={"manifest": Output("data/finetune/train_all.json")},
            suite="finetune",
            doc="the manifest of the training data",
        ),
        Stage(
            "train_split",
            "vlstress train-split --train {in.train} --test {in.test} --out {out.manifest}",
            inputs={"train": "data/finetune/train_all.json", "test": MANIFEST},
            outputs={"manifest": Output(TRAIN_MANIFEST)},
            suite="finetune",
            doc="the training manifest without any test image or test caption",
        ),
        Stage(
            "train_captions",
            "vlstress text-variants --manifest {in.manifest} --set train"
            " --kind {p.finetune.text_kind} --seed {p.finetune.seed} --words {p.finetune.words}"
            " --strategy random --strategy-seed {p.finetune.seed} --pool {p.text_variants.pool}"
            " --source generated --nltk-data {in.nltk_data} --out {out.captions}",
            inputs={"manifest": TRAIN_MANIFEST, "nltk_data": NLTK_DATA},
            outputs={"captions": Output(TRAIN_CAPTIONS), "meta": Output(f"{TRAIN_CAPTIONS}.json")},
            suite="finetune",
            doc=(
                "one altered caption (one word replaced) per training caption: the semantic "
                "negatives"
            ),
        ),
        Stage(
            "base_card",
            "vlstress model-card --model {p.finetune.base.slug} --arch {p.finetune.base.arch}"
            " --pretrained {p.finetune.base.pretrained} " + CARD_FLAGS + " --out {out.card}",
            outputs={"card": Output(BASE_CARD)},
            external=("finetune.base.pretrained",),
            suite="finetune",
            doc="the model card of the model that is fine-tuned",
            after=(CHECKED,),
        ),
        Stage(
            "finetune",
            (
                "vlstress finetune --train {in.train} --train-captions {in.captions}"
                " --test {in.test} --model-card {in.card} "
            )
            + RUN_FLAGS
            + " --variant {variant} --w-sc {item.w_sc} --w-vc {item.w_vc} --form {p.finetune.form}"
            " --margin {p.finetune.margin}"
            + SCHEDULE_FLAGS
            + " --method {p.finetune.method} --lam {p.finetune.lam} --processes {p.finetune.nproc}"
            + LORA_FLAGS
            + " --out {out.model} --out-log {out.log}",
            inputs={
                "train": TRAIN_MANIFEST,
                "captions": TRAIN_CAPTIONS,
                "test": MANIFEST,
                "card": BASE_CARD,
            },
            outputs=training_outputs(
                FINETUNED, "results/finetune/{variant}/log.csv", "fine-tuning loss per step"
            ),
            axes=("variant",),
            suite="finetune",
            gpu=True,
            gpus="finetune.nproc",
            doc=(
                "fine-tune the base model with the CLIP loss + w_sc * SC + w_vc * VC, every weight "
                "or LoRA adapters (resumes a killed run)"
            ),
        ),
        Stage(
            "labelled_train",
            "vlstress testset --name labelled-train"
            + TESTSET_FLAGS.replace("{item.", "{p.finetune.labelled.train.")
            + " --out {out.testset}",
            outputs={"testset": Output(LABELLED_TRAIN, directory=True)},
            external=tuple(
                key.replace("item.", "finetune.labelled.train.") for key in TESTSET_EXTERNAL
            ),
            suite="finetune",
            doc="the labelled images of FLYP and standard fine-tuning (a classification set)",
            after=(CHECKED,),
        ),
        Stage(
            "finetune_labelled",
            (
                "vlstress finetune --loss {item.loss} --classes {in.classes}"
                " --templates {p.finetune.labelled.templates} --test {in.test}"
                " --model-card {in.card} "
            )
            + RUN_FLAGS
            + " --variant {labelled}"
            + SCHEDULE_FLAGS
            + " --processes {p.finetune.nproc}"
            + LORA_FLAGS
            + " --out {out.model} --out-log {out.log}",
            inputs={"classes": LABELLED_TRAIN, "test": MANIFEST, "card": BASE_CARD},
            outputs=training_outputs(
                LABELLED_FINETUNED,
                "results/finetune/labelled/{labelled}/log.csv",
                "fine-tuning loss per step (labelled images)",
            ),
            axes=("labelled",),
            external=("finetune.labelled.templates",),
            suite="finetune",
            gpu=True,
            gpus="finetune.nproc",
            doc=(
                "fine-tune the base model on labelled images: FLYP (the CLIP loss on prompts of "
                "their classes) or standard (cross-entropy through a zero-shot-initialised head), "
                "every weight or LoRA adapters (resumes a killed run)"
            ),
        ),
        Stage(
            "wise_ft",
            "vlstress wise-ft --model-card {in.card} --threads {p.embed.threads}"
            " --finetuned {in.finetuned} --alpha {alpha} --out {out.model}",
            inputs={
                "card": BASE_CARD,
                "finetuned": FINETUNED.replace("{variant}", "{p.finetune.wise.of}"),
            },
            outputs={"model": Output(WISE), "meta": small(f"{WISE}.json")},
            axes=("alpha",),
            external=("finetune.base.pretrained",),
            suite="finetune",
            doc="WiSE-FT: the weights (1 - alpha) * base + alpha * variant finetune.wise.of",
        ),
        Stage(
            "finetune_table",
            "vlstress finetune-table {params_files} --summary {in.summary} --counts {in.counts}"
            " --out-md {out.md} --out-csv {out.csv} --out-tex {out.tex}",
            inputs={"summary": SUMMARY_AGG, "counts": SUMMARY},
            outputs={
                "md": small(
                    "results/finetune/comparison.md",
                    caption="finetune_table",
                    category="Robust fine-tuning",
                ),
                "csv": small("results/finetune/comparison.csv"),
                "tex": small("results/finetune/comparison.tex"),
            },
            suite="finetune",
            doc=(
                "base model against its fine-tuned variants on every metric of the run (RoCOCO's "
                "open question)"
            ),
        ),
    ),
    commands={
        "train-split": (
            "vlstress.suites.finetune.commands.train_split",
            "the training manifest of fine-tuning without any test image or caption",
        ),
        "finetune": (
            "vlstress.suites.finetune.commands.finetune",
            (
                "fine-tune a model with the CLIP loss + RoCOCO's semantic and visual contrastive "
                "losses"
            ),
        ),
        "wise-ft": (
            "vlstress.suites.finetune.commands.wise_ft",
            "WiSE-FT: (1 - alpha) * base + alpha * a fine-tuned variant's weights",
        ),
        "finetune-table": (
            "vlstress.suites.finetune.commands.finetune_table",
            "base model against its fine-tuned variants on every metric of the run",
        ),
    },
    params="vlstress.suites.finetune.params",
    pricing="vlstress.suites.finetune.pricing",
)
