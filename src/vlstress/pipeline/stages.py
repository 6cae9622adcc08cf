"""The stage table: every step of the workflow, declared once.

`dvc.yaml` is rendered from it (`vlstress pipeline render`) and `workflow/Snakefile`
builds one named rule per entry from it. A new suite is a module of commands plus
entries here with `suite="<name>"` and a boolean under `suites:` in params.yaml.
Placeholders are explained in `vlstress.pipeline.spec`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vlstress.pipeline.spec import Axis, Output, Stage, Suite

AXES: dict[str, Axis] = {
    axis.name: axis
    for axis in (
        Axis("model", "models", r"[A-Za-z0-9][A-Za-z0-9_.+-]*", keys=True),
        Axis("set", "text_variants.sets", r"[a-z0-9][a-z0-9_]*", keys=True),
        Axis("method", "image_variants.methods", r"[a-z][a-z0-9_]*"),
        Axis("lam", "image_variants.lams", r"[0-9][0-9.e-]*"),
        Axis("seed", "image_variants.seeds", r"[0-9]+"),
        Axis("testset", "zeroshot.testsets", r"[a-z0-9][a-z0-9_]*", keys=True),
        Axis("corruption", "corruptions.names", r"[a-z][a-z0-9_]*"),
        Axis("severity", "corruptions.severities", r"[1-5]"),
        Axis("attack", "adversarial.attacks", r"[a-z0-9][a-z0-9_]*", named="name"),
        Axis("oodset", "ood.sets", r"[a-z0-9][a-z0-9_]*", keys=True),
        Axis("variant", "finetune.variants", r"[a-z0-9][a-z0-9_]*", keys=True),
    )
}

# Suites switched on under `suites:` in params.yaml (absent = off). Original retrieval always runs.
SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite(
            "rococo_text",
            "RoCOCO text stress-tests: one word of each caption replaced (image → text)",
            needs=("ei", "text_variants"),
        ),
        Suite(
            "rococo_image",
            "RoCOCO image stress-tests: images mixed / patched with a partner (text → image)",
            needs=("image_variants",),
        ),
        Suite(
            "zeroshot",
            "zero-shot classification on clean and naturally shifted test sets, effective robustness",
            needs=("zeroshot",),
        ),
        Suite(
            "corruptions",
            "zero-shot classification under ImageNet-C style corruptions (accuracy, mCE)",
            needs=("corruptions",),
            requires=("zeroshot",),
        ),
        Suite(
            "typographic",
            "zero-shot classification under typographic attacks (a wrong class name written on the image)",
            needs=("typographic",),
            requires=("zeroshot",),
        ),
        Suite(
            "adversarial",
            "zero-shot classification under adversarial attacks in pixel space (torchattacks): robust accuracy against eps",
            needs=("adversarial",),
            requires=("zeroshot",),
        ),
        Suite(
            "calibration",
            "calibration of the zero-shot softmax (ECE, NLL, Brier) and temperature scaling carried to shifted sets",
            needs=("calibration",),
            requires=("zeroshot",),
        ),
        Suite(
            "ood",
            "out-of-distribution detection with the zero-shot classifier (MCM, MSP, max logit, energy; AUROC, FPR@95)",
            needs=("ood",),
            requires=("zeroshot",),
        ),
        Suite(
            "finetune",
            "robust fine-tuning with RoCOCO's semantic and visual contrastive losses; the fine-tuned models are models of the run",
            needs=("finetune",),
            requires=("rococo_text",),  # its altered training captions come from the text stress-test's generators (WordNet)
        ),
    )
}

RAW = "data/raw/{p.dataset.name}"
MANIFEST = "data/prepared/manifest.json"
EMB = "results/embeddings/{model}"
VARIANT = "{method}_lam{lam}_seed{seed}"
VARIANT_DIR = f"data/image_variants/{VARIANT}"
# every retrieval set of a model, one folder written by one job (embed_retrieval); files inside it:
RETRIEVAL_EMB = f"{EMB}/retrieval"
VARIANT_EMB = f"image_variants/{VARIANT}.npy"
TEXT_SET = "data/text_variants/{set}.json"
TEXT_SET_EMB = "text_variants/{set}.npy"
EI_SCORES = "results/text/ei_scores.json"
NLTK_DATA = "{p.text_variants.nltk_data}"
SUMMARY = "results/summary.csv"
CHECKED = "results/params.checked"
EVALUATE_FLAGS = "--ks {p.evaluate.ks} --chunk-size {p.evaluate.chunk_size} --ties {p.evaluate.ties}"
CARD = "results/models/{model}.json"
SCORER_CARD = "results/text/scorer.json"
CARD_FLAGS = "--seed {p.seed} --cache-dir {p.embed.cache_dir}"
TESTSET = "data/testsets/{testset}"
# the zero-shot classifiers of a model (one job, zeroshot_classifiers) and every zero-shot image set
# of it (one job, embed_zeroshot): two folders, so the attacks, which read only a classifier, do not
# rerun when an image set is added; files inside them:
CLASSIFIERS = f"{EMB}/classifiers"
ZEROSHOT_EMB = f"{EMB}/zeroshot"
CLASSIFIER = "{testset}.npy"
TESTSET_EMB = "testsets/{testset}.npy"
CORRUPTED_EMB = "corrupted/{corruption}_s{severity}.npy"
TYPOGRAPHIC_EMB = "typographic.npy"
OOD_EMB = "ood/{oodset}.npy"


def _of(template: str, testset: str) -> str:
    """A per-test-set file template for the test set a param names (`{p.corruptions.testset}`...)."""
    return template.replace("{testset}", "{%s}" % testset)

ZEROSHOT_RECORD = "results/metrics/{model}/zeroshot-{testset}.json"
CORRUPTED = "data/corruptions/{corruption}/s{severity}"
CORRUPTION_SOURCE = "data/testsets/{p.corruptions.testset}"
TYPOGRAPHIC = "data/typographic/{p.typographic.testset}"
RUN_FLAGS = (
    "--device {p.embed.device} --batch-size {p.embed.batch_size} --cuda-batch-size {p.embed.cuda_batch_size} --threads {p.embed.threads}"
    " --workers {p.embed.workers} --precision {p.embed.precision}"
)
TESTSET_FLAGS = (
    " --kind {item.kind} --root {item.root} --annotations {item.annotations} --classnames {item.classnames}"
    " --max-per-class {item.max_per_class} --min-size {item.min_size} --label {item.label} --corruption {item.corruption}"
    ' --keep "{item.keep}" --drop "{item.drop}"'  # quoted: class names may hold spaces
)
TESTSET_EXTERNAL = ("item.root", "item.annotations", "item.classnames")
OOD_SET = "data/ood/{oodset}"
ATTACK_TESTSET = "data/testsets/{p.adversarial.testset}"
TRAIN_RAW = "data/raw/{p.finetune.train.name}"
TRAIN_MANIFEST = "data/finetune/train.json"
TRAIN_CAPTIONS = "data/finetune/train_captions.json"
BASE_CARD = "results/finetune/base.json"
FINETUNED = "results/finetune/{variant}/model.safetensors"


def _small(path: str, **kw) -> Output:
    """A small text result tracked by git rather than the DVC cache."""
    return Output(path, cache=False, **kw)


def _download_stage(name: str, block: str, raw: str, suite: str | None, doc: str) -> Stage:
    """`vlstress download` of a dataset block of params (`dataset`, or fine-tuning's `finetune.train`)."""
    flags = " ".join(
        f"--{flag.replace('_', '-')} {{p.{block}.{flag}}}"
        for flag in ("kind", "max_images", "images", "captions", "image_ids", "coco_url", "karpathy_url", "rococo_url")
    )
    return Stage(
        name,
        f"vlstress download --dataset {{p.{block}.name}} {flags} --out {{out.raw}}",
        outputs={"raw": Output(raw, directory=True)},
        external=tuple(f"{block}.{key}" for key in ("images", "captions", "coco_url", "karpathy_url", "rococo_url")),
        suite=suite,
        doc=doc,
        after=(CHECKED,),
    )


def _testset_stage(name: str, axis: str, folder: str, suite: str, doc: str) -> Stage:
    """`vlstress testset` over the entries of a mapping of test-set entries (zero-shot test sets, OOD sets)."""
    return Stage(
        name,
        "vlstress testset --name {%s}" % axis + TESTSET_FLAGS + " --out {out.testset}",
        outputs={"testset": Output(folder, directory=True)},
        axes=(axis,),
        external=TESTSET_EXTERNAL,
        suite=suite,
        doc=doc,
        after=(CHECKED,),
    )


FIGURES = {  # name -> suites of which at least one must be on (empty: always drawn)
    "recall_bars": (),
    "false_r1_heatmap": ("rococo_text", "rococo_image"),
    "lambda_sweep": ("rococo_image",),
    "drop_vs_size": ("rococo_text", "rococo_image"),
    "zeroshot_accuracy": ("zeroshot",),
    "corruption_heatmap": ("corruptions",),
    "corruption_severity": ("corruptions",),
    "typographic_attack": ("typographic",),
    "adversarial_eps": ("adversarial",),
    "calibration_ece": ("calibration",),
    "ood_auroc": ("ood",),
}

STAGES: list[Stage] = [
    # ------------------------------------------------------------------ gate
    Stage(
        "check_params",
        "vlstress pipeline check {params_files} --stamp {out.stamp}",
        inputs={"params": "params.yaml"},
        outputs={"stamp": _small(CHECKED)},
        doc="params valid and dvc.yaml current, before any step works (every first step waits for it)",
    ),
    # ------------------------------------------------------------------ data
    _download_stage("download", "dataset", RAW, None, "fetch or copy the raw data of the dataset"),
    Stage(
        "prepare",
        "vlstress prepare --dataset {p.dataset.name} --raw {in.raw} --out {out.manifest}",
        inputs={"raw": RAW},
        outputs={"manifest": Output(MANIFEST)},
        doc="the canonical manifest of images and captions",
    ),
    # ------------------------------------------------------------------ original retrieval
    Stage(
        "model_card",
        "vlstress model-card --model {model} --arch {item.arch} --pretrained {item.pretrained} " + CARD_FLAGS + " --out {out.card}",
        outputs={"card": Output(CARD)},
        axes=("model",),
        external=("item.pretrained",),  # a local checkpoint
        doc="check a model of the registry once; every step that uses it reads this card",
        after=(CHECKED,),
    ),
    Stage(
        "embed_retrieval",
        "vlstress embed-retrieval --manifest {in.manifest} {params_files} --model-card {in.card} " + RUN_FLAGS
        + " --reuse-dir {p.embed.cache_dir}/embeddings --out {out.emb}",
        inputs={"manifest": MANIFEST, "card": CARD},
        input_lists={"image_variants": "image_variant_sets", "caption_sets": "text_sets"},
        outputs={"emb": Output(RETRIEVAL_EMB, directory=True)},
        axes=("model",),
        gpu=True,
        doc="every retrieval set of a model in one job (originals, image variants, caption sets): the start-up"
        " is paid once per model, and sets unchanged since an earlier run are reused",
    ),
    Stage(
        "evaluate",
        "vlstress evaluate --manifest {in.manifest} --image-emb {in.emb}/images.npy --text-emb {in.emb}/texts.npy "
        + EVALUATE_FLAGS
        + " --out {out.record}",
        inputs={"manifest": MANIFEST, "emb": RETRIEVAL_EMB},
        outputs={"record": _small("results/metrics/{model}/original.json", record=True)},
        axes=("model",),
    ),
    # ------------------------------------------------------------------ RoCOCO image stress-tests
    Stage(
        "image_variants",
        "vlstress image-variants --manifest {in.manifest} --method {method} --lam {lam} --seed {seed}"
        " --mode {p.image_variants.mode} --size {p.image_variants.size}"
        " --jpeg-quality {p.image_variants.jpeg_quality} --out {out.variant}",
        inputs={"manifest": MANIFEST, "raw": RAW},
        outputs={"variant": Output(VARIANT_DIR, directory=True)},
        axes=("method", "lam", "seed"),
        suite="rococo_image",
    ),
    Stage(
        "evaluate_image",
        "vlstress evaluate-image --manifest {in.manifest} --image-emb {in.emb}/images.npy --text-emb {in.emb}/texts.npy"
        " --variant {in.variant} --variant-emb {in.emb}/" + VARIANT_EMB + " " + EVALUATE_FLAGS + " --out {out.record}",
        inputs={"manifest": MANIFEST, "emb": RETRIEVAL_EMB, "variant": VARIANT_DIR},
        outputs={"record": _small("results/metrics/{model}/image-{method}-lam{lam}-seed{seed}.json", record=True)},
        axes=("model", "method", "lam", "seed"),
        suite="rococo_image",
    ),
    # ------------------------------------------------------------------ RoCOCO text stress-tests
    Stage(
        "nlp_data",
        "vlstress nlp-data --out {out.nltk_data}",
        outputs={"nltk_data": Output(NLTK_DATA, directory=True, persist=True)},
        suite="rococo_text",
        after=(CHECKED,),
    ),
    Stage(
        "scorer_card",
        "vlstress model-card --model {p.ei.scorer.slug} --arch {p.ei.scorer.arch} --pretrained {p.ei.scorer.pretrained} "
        + CARD_FLAGS
        + " --out {out.card}",
        outputs={"card": Output(SCORER_CARD)},
        external=("ei.scorer.pretrained",),
        suite="rococo_text",
        doc="the model card of the EI scorer",
        after=(CHECKED,),
    ),
    Stage(
        "ei_scores",
        "vlstress ei-scores --manifest {in.manifest} --model-card {in.card} " + RUN_FLAGS
        + " --block-size {p.ei.block_size} --out {out.scores}",
        inputs={"manifest": MANIFEST, "card": SCORER_CARD},
        outputs={"scores": Output(EI_SCORES)},
        suite="rococo_text",
        gpu=True,
    ),
    Stage(
        "text_variants",
        "vlstress text-variants --manifest {in.manifest} --ei-scores {in.ei} --set {set} --kind {item.kind}"
        " --seed {item.seed} --words {item.words} --strategy {p.text_variants.strategy}"
        " --strategy-seed {p.text_variants.strategy_seed} --pool {p.text_variants.pool}"
        " --source {p.text_variants.source} --official-dir {p.text_variants.official_dir}"
        " --raw {in.raw} --nltk-data {in.nltk_data} --out {out.variants}",
        inputs={"manifest": MANIFEST, "ei": EI_SCORES, "raw": RAW, "nltk_data": NLTK_DATA},
        outputs={"variants": Output(TEXT_SET), "meta": Output(f"{TEXT_SET}.json")},
        axes=("set",),
        external=("text_variants.official_dir",),
        suite="rococo_text",
    ),
    Stage(
        "evaluate_text",
        "vlstress evaluate-text --manifest {in.manifest} --image-emb {in.emb}/images.npy"
        " --original-emb {in.emb}/texts.npy --variant-captions {in.variant_captions}"
        " --variant-emb {in.emb}/" + TEXT_SET_EMB + " --set {set} " + EVALUATE_FLAGS + " --out {out.record}",
        inputs={"manifest": MANIFEST, "emb": RETRIEVAL_EMB, "variant_captions": TEXT_SET},
        outputs={"record": _small("results/metrics/{model}/text-{set}.json", record=True)},
        axes=("model", "set"),
        suite="rococo_text",
    ),
    Stage(
        "text_stats",
        "vlstress text-stats --manifest {in.manifest} --variants-dir data/text_variants {params_files}"
        " --source {p.text_variants.source} --official-dir {p.text_variants.official_dir} --raw {in.raw}"
        " --nltk-data {in.nltk_data} --model-card {in.card} " + RUN_FLAGS + " --out {out.json} --out-csv {out.csv}"
        " --out-md {out.md} --out-fig {out.png}",
        inputs={"manifest": MANIFEST, "raw": RAW, "nltk_data": NLTK_DATA, "card": SCORER_CARD},
        input_lists={"variants": "text_sets"},
        outputs={
            "json": _small("results/text/stats.json"),
            "csv": _small("results/text/stats.csv"),
            "md": _small("results/text/stats.md"),
            "png": Output("results/figures/text_stats.png", caption="text_stats", category="Text stress-tests"),
            "pdf": Output("results/figures/text_stats.pdf"),
        },
        external=("text_variants.official_dir",),
        suite="rococo_text",
    ),
    # ------------------------------------------------------------------ zero-shot classification
    _testset_stage("testset", "testset", TESTSET, "zeroshot",
                   "the labelled manifest of a classification test set (materialised crops / CIFAR images included)"),  # fmt: skip
    Stage(
        "zeroshot_classifiers",
        "vlstress embed-zeroshot {params_files} --sets classifiers --templates {p.zeroshot.templates} --model-card {in.card} "
        + RUN_FLAGS + " --reuse-dir {p.embed.cache_dir}/embeddings --out {out.classifiers}",
        inputs={"card": CARD},
        input_lists={"testsets": "zeroshot_testsets"},
        outputs={"classifiers": Output(CLASSIFIERS, directory=True)},
        axes=("model",),
        external=("zeroshot.templates",),
        suite="zeroshot",
        gpu=True,
        doc="the zero-shot classifier of every test set of a model (prompt templates) in one job; unchanged ones reused",
    ),
    Stage(
        "embed_zeroshot",
        "vlstress embed-zeroshot {params_files} --sets images --model-card {in.card} " + RUN_FLAGS
        + " --reuse-dir {p.embed.cache_dir}/embeddings --out {out.emb}",
        inputs={"card": CARD},
        input_lists={"sets": "zeroshot_data"},
        outputs={"emb": Output(ZEROSHOT_EMB, directory=True)},
        axes=("model",),
        suite="zeroshot",
        gpu=True,
        doc="every zero-shot image set of a model in one job (each test set, corruption, typographic attack and OOD"
        " set); unchanged sets are reused",
    ),
    Stage(
        "evaluate_zeroshot",
        "vlstress evaluate-zeroshot --testset {in.testset} --image-emb {in.emb}/" + TESTSET_EMB
        + " --classifier {in.classifiers}/" + CLASSIFIER + " --out {out.record}",
        inputs={"testset": TESTSET, "emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS},
        outputs={
            "record": _small(ZEROSHOT_RECORD, record=True),
            "per_class": _small(f"{ZEROSHOT_RECORD}.json"),
        },
        axes=("model", "testset"),
        suite="zeroshot",
    ),
    # ------------------------------------------------------------------ corruptions
    Stage(
        "corrupt",
        "vlstress corrupt --manifest {in.testset} --corruption {corruption} --severities {severity}"
        " --seed {p.corruptions.seed} --size {p.corruptions.size} --workers {p.corruptions.workers} --out {out.corrupted}",
        inputs={"testset": CORRUPTION_SOURCE},
        outputs={"corrupted": Output(CORRUPTED, directory=True)},
        axes=("corruption", "severity"),
        suite="corruptions",
        doc="one corruption at one severity of the test set (parallel over the node's cores)",
    ),
    Stage(
        "evaluate_corruption",
        "vlstress evaluate-zeroshot --task corruption --corruption {corruption} --severity {severity}"
        " --testset {in.testset} --image-emb {in.emb}/" + CORRUPTED_EMB
        + " --classifier {in.classifiers}/" + _of(CLASSIFIER, "p.corruptions.testset") + " --clean-record {in.clean} --out {out.record}",
        inputs={"testset": CORRUPTED, "emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS, "clean": "results/metrics/{model}/zeroshot-{p.corruptions.testset}.json"},
        outputs={
            "record": _small("results/metrics/{model}/corruption-{corruption}-s{severity}.json", record=True),
            "per_class": _small("results/metrics/{model}/corruption-{corruption}-s{severity}.json.json"),
        },
        axes=("model", "corruption", "severity"),
        suite="corruptions",
    ),
    # ------------------------------------------------------------------ typographic attacks
    Stage(
        "typographic",
        "vlstress typographic --manifest {in.testset} --seed {p.typographic.seed} --size {p.typographic.size}"
        " --out {out.attacked}",
        inputs={"testset": "data/testsets/{p.typographic.testset}"},
        outputs={"attacked": Output(TYPOGRAPHIC, directory=True)},
        suite="typographic",
        doc="a wrong class name written on each image (seeded font size, colour, position)",
    ),
    Stage(
        "evaluate_typographic",
        "vlstress evaluate-zeroshot --task typographic --testset {in.testset} --image-emb {in.emb}/" + TYPOGRAPHIC_EMB
        + " --classifier {in.classifiers}/" + _of(CLASSIFIER, "p.typographic.testset") + " --clean-record {in.clean} --out {out.record}",
        inputs={"testset": TYPOGRAPHIC, "emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS, "clean": "results/metrics/{model}/zeroshot-{p.typographic.testset}.json"},
        outputs={
            "record": _small("results/metrics/{model}/typographic.json", record=True),
            "per_class": _small("results/metrics/{model}/typographic.json.json"),
        },
        axes=("model",),
        suite="typographic",
    ),
    # ------------------------------------------------------------------ adversarial attacks
    Stage(
        "attack",
        "vlstress attack --testset {in.testset} --classifier {in.classifiers}/" + _of(CLASSIFIER, "p.adversarial.testset")
        + " --model-card {in.card} " + RUN_FLAGS
        + " --attack {attack} --kind {item.attack.kind} --norm {item.attack.norm} --eps {item.attack.eps}"
        " --steps {item.attack.steps} --alpha {item.attack.alpha} --restarts {item.attack.restarts}"
        " --extra {item.attack.extra} --n-images {p.adversarial.n_images} --attack-seed {p.adversarial.seed} --out {out.records}",
        inputs={"testset": ATTACK_TESTSET, "classifiers": CLASSIFIERS, "card": CARD},
        outputs={
            "records": _small("results/metrics/{model}/adversarial-{attack}.json", record=True),
            "per_image": _small("results/metrics/{model}/adversarial-{attack}.json.json"),
        },
        axes=("model", "attack"),
        suite="adversarial",
        gpu=True,
        doc="one attack at every eps of its list on a seeded sample of the test set (one record per eps)",
    ),
    # ------------------------------------------------------------------ calibration
    Stage(
        "calibrate",
        "vlstress calibrate {params_files} --model {model} --in-distribution {p.calibration.in_distribution}"
        " --fit-fraction {p.calibration.fit_fraction} --seed {p.calibration.seed} --bins {p.calibration.bins}"
        " --out {out.records} --out-fig {out.png}",
        input_lists={"sets": "zeroshot_sets"},
        outputs={
            "records": _small("results/metrics/{model}/calibration.json", record=True),
            "bins": _small("results/metrics/{model}/calibration.json.json"),
            "png": Output("results/figures/reliability_{model}.png", plot={}, caption="reliability", category="Calibration"),
            "pdf": Output("results/figures/reliability_{model}.pdf"),
        },
        axes=("model",),
        suite="calibration",
        doc="temperature fitted on a held-out split of the in-distribution set, applied unchanged to every shifted set",
    ),
    # ------------------------------------------------------------------ OOD detection
    _testset_stage("ood_testset", "oodset", OOD_SET, "ood", "the manifest of an out-of-distribution set (any test-set kind)"),
    Stage(
        "ood_detect",
        "vlstress ood-detect --testset {in.testset} --image-emb {in.emb}/" + _of(TESTSET_EMB, "p.ood.in_distribution")
        + " --classifier {in.classifiers}/" + _of(CLASSIFIER, "p.ood.in_distribution")
        + " --ood-testset {in.ood_testset} --ood-emb {in.emb}/" + OOD_EMB + " --scores {p.ood.scores}"
        " --temperature {p.ood.temperature} --out {out.records} --out-fig {out.png}",
        inputs={"testset": "data/testsets/{p.ood.in_distribution}", "emb": ZEROSHOT_EMB, "classifiers": CLASSIFIERS, "ood_testset": OOD_SET},
        outputs={
            "records": _small("results/metrics/{model}/ood-{oodset}.json", record=True),
            "roc": _small("results/metrics/{model}/ood-{oodset}.json.json"),
            "png": Output("results/figures/ood_roc_{model}_{oodset}.png", plot={}, caption="ood_roc", category="OOD detection"),
            "pdf": Output("results/figures/ood_roc_{model}_{oodset}.pdf"),
        },
        axes=("model", "oodset"),
        suite="ood",
        doc="in-distribution test set against one OOD set, every score (one record per score)",
    ),
    # ------------------------------------------------------------------ robust fine-tuning
    _download_stage("train_download", "finetune.train", TRAIN_RAW, "finetune", "fetch or copy the images and captions of the training data"),
    Stage(
        "train_prepare",
        "vlstress prepare --dataset {p.finetune.train.name} --raw {in.raw} --out {out.manifest}",
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
        "vlstress text-variants --manifest {in.manifest} --set train --kind {p.finetune.text_kind} --seed {p.finetune.seed}"
        " --words {p.finetune.words} --strategy random --strategy-seed {p.finetune.seed} --pool {p.text_variants.pool}"
        " --source generated --nltk-data {in.nltk_data} --out {out.captions}",
        inputs={"manifest": TRAIN_MANIFEST, "nltk_data": NLTK_DATA},
        outputs={"captions": Output(TRAIN_CAPTIONS), "meta": Output(f"{TRAIN_CAPTIONS}.json")},
        suite="finetune",
        doc="one altered caption (one word replaced) per training caption: the semantic negatives",
    ),
    Stage(
        "base_card",
        "vlstress model-card --model {p.finetune.base.slug} --arch {p.finetune.base.arch} --pretrained {p.finetune.base.pretrained} "
        + CARD_FLAGS
        + " --out {out.card}",
        outputs={"card": Output(BASE_CARD)},
        external=("finetune.base.pretrained",),
        suite="finetune",
        doc="the model card of the model that is fine-tuned",
        after=(CHECKED,),
    ),
    Stage(
        "finetune",
        "vlstress finetune --train {in.train} --train-captions {in.captions} --test {in.test} --model-card {in.card} "
        + RUN_FLAGS
        + " --variant {variant} --w-sc {item.w_sc} --w-vc {item.w_vc} --form {p.finetune.form} --margin {p.finetune.margin}"
        " --steps {p.finetune.steps} --train-batch-size {p.finetune.batch_size} --lr {p.finetune.lr}"
        " --weight-decay {p.finetune.weight_decay} --warmup {p.finetune.warmup} --accumulate {p.finetune.accumulate}"
        " --freeze {p.finetune.freeze} --checkpoint-every {p.finetune.checkpoint_every} --train-seed {p.finetune.seed}"
        " --method {p.finetune.method} --lam {p.finetune.lam} --processes {p.finetune.nproc} --out {out.model} --out-log {out.log}",
        inputs={"train": TRAIN_MANIFEST, "captions": TRAIN_CAPTIONS, "test": MANIFEST, "card": BASE_CARD},
        outputs={
            "model": Output(FINETUNED),
            "meta": _small(f"{FINETUNED}.json"),
            "log": _small(
                "results/finetune/{variant}/log.csv",
                plot={"x": "step", "y": "total", "template": "linear", "title": "fine-tuning loss per step"},
                caption="finetune_log",
                category="Robust fine-tuning",
            ),
        },
        axes=("variant",),
        suite="finetune",
        gpu=True,
        gpus="finetune.nproc",
        doc="fine-tune the base model with the CLIP loss + w_sc * SC + w_vc * VC (resumes a killed run)",
    ),
    # ------------------------------------------------------------------ report
    Stage(
        "summarize",
        "vlstress summarize {params_files} --out-csv {out.csv} --out-agg {out.agg} --out-md {out.md}"
        " --out-json {out.json} --out-plot {out.plot}",
        input_lists={"records": "records"},
        outputs={
            "csv": _small(SUMMARY),
            "csv_meta": _small(f"{SUMMARY}.json"),
            "agg": _small("results/summary_agg.csv", caption="summary", category="Tables"),
            "agg_meta": _small("results/summary_agg.csv.json"),
            "md": _small("results/summary.md"),
            "json": _small("results/metrics.json", metric=True),
            "json_meta": _small("results/metrics.json.json"),
            "plot": _small(
                "results/plots/stress.csv",
                plot={
                    "template": "bar_horizontal",
                    "x": "R@1",
                    "y": "case",
                    "title": "R@1 (%) per model, direction and condition (mean over variant seeds)",
                },
            ),
            "plot_meta": _small("results/plots/stress.csv.json"),
        },
        doc="every record the current params produce (an explicit list) -> summary tables",
    ),
    Stage(
        "figures",
        "vlstress figures --summary {in.summary} --out-dir results/figures --only {figures}",
        inputs={"summary": SUMMARY},
        outputs={
            **{
                f"{name}_png": Output(f"results/figures/{name}.png", plot={}, caption=name, category="Figures", suites=suites)
                for name, suites in FIGURES.items()
            },
            **{f"{name}_pdf": Output(f"results/figures/{name}.pdf", suites=suites) for name, suites in FIGURES.items()},
        },
    ),
    Stage(
        "tables",
        "vlstress tables --summary {in.summary} --out-md {out.md} --out-tex {out.tex}"
        " --out-holistic-md {out.holistic_md} --out-holistic-tex {out.holistic_tex}",
        inputs={"summary": SUMMARY},
        outputs={
            "md": _small("results/tables/stress.md", caption="tables", category="Tables"),
            "tex": _small("results/tables/stress.tex", caption="tables", category="Tables"),
            "holistic_md": _small("results/tables/holistic.md", caption="holistic_tables", category="Tables"),
            "holistic_tex": _small("results/tables/holistic.tex", caption="holistic_tables", category="Tables"),
        },
    ),
]

STAGES.append(
    Stage(
        "robustness",
        "vlstress robustness --summary {in.summary} --in-distribution {p.zeroshot.in_distribution}"
        " --mce-baseline {p.zeroshot.robustness.mce_baseline} --transform {p.zeroshot.robustness.transform}"
        " --fit {p.zeroshot.robustness.fit} --out-corruptions {out.corruptions} --out-effective {out.effective}"
        " --out-json {out.json} --out-fig {out.png}",
        inputs={"summary": SUMMARY},
        outputs={
            "corruptions": _small("results/robustness/corruptions.csv", caption="robustness", category="Zero-shot robustness"),
            "effective": _small("results/robustness/effective.csv", caption="robustness", category="Zero-shot robustness"),
            "json": _small("results/robustness/metrics.json", metric=True),
            "png": Output("results/figures/effective_robustness.png", plot={}, caption="effective_robustness", category="Zero-shot robustness"),
            "pdf": Output("results/figures/effective_robustness.pdf"),
        },
        suite="zeroshot",
        doc="mCE of the corruptions and effective robustness of every shift, from the summary",
    )
)

STAGES.append(
    Stage(
        "finetune_table",
        "vlstress finetune-table {params_files} --summary {in.summary} --out-md {out.md} --out-csv {out.csv} --out-tex {out.tex}",
        inputs={"summary": "results/summary_agg.csv"},
        outputs={
            "md": _small("results/finetune/comparison.md", caption="finetune_table", category="Robust fine-tuning"),
            "csv": _small("results/finetune/comparison.csv"),
            "tex": _small("results/finetune/comparison.tex"),
        },
        suite="finetune",
        doc="base model against its fine-tuned variants on every metric of the run (RoCOCO's open question)",
    )
)

# More views of a stage's plot data (`dvc plots show`), declared beside the stage that writes it.
EXTRA_PLOTS = [
    {
        "stage": "summarize",
        "title": "false R@1 per model and condition",
        "options": {
            "template": "bar_horizontal",
            "x": "false_R@1",
            "y": {"results/plots/stress.csv": "case"},
            "title": "false R@1 (%) per model, direction and stress condition",
        },
    },
    {
        "stage": "summarize",
        "title": "drop rate per model and condition",
        "options": {
            "template": "bar_horizontal",
            "x": "drop_rate",
            "y": {"results/plots/stress.csv": "case"},
            "title": "drop rate of R@1 (%) per model, direction and stress condition",
        },
    },
]


# ------------------------------------------------------------------ the zero-shot evaluations of a model


@dataclass(frozen=True)
class Evaluation:
    """One zero-shot evaluation the params produce for every model (paths keep `{model}`)."""

    condition: dict[str, Any]  # {"set": name} (+ "corruption"/"severity", or "attack": "typographic")
    testset: str  # the test-set folder
    embeddings: str
    classifier: str

    def paths(self) -> list[str]:
        return [self.testset, self.embeddings, self.classifier]

    def for_model(self, model: str) -> "Evaluation":
        return Evaluation(self.condition, *(path.replace("{model}", model) for path in self.paths()))


def _on(params: dict[str, Any]) -> set[str]:
    return {name for name, value in (params.get("suites") or {}).items() if value}


def _in(folder: str, template: str, **values: Any) -> str:
    """A file inside a model's classifier or zero-shot folder, with the given axis values."""
    return f"{folder}/" + template.format(**{name: str(value) for name, value in values.items()})


def zeroshot_evaluations(params: dict[str, Any]) -> list[Evaluation]:
    """Every (test set, embeddings, classifier) the zero-shot suites that are on evaluate, in a fixed order:
    the test sets (sorted), each corruption at each severity, the typographic attack."""
    on = _on(params)
    if "zeroshot" not in on:
        return []
    classifier = lambda name: _in(CLASSIFIERS, CLASSIFIER, testset=name)  # noqa: E731
    found = [
        Evaluation({"set": name}, TESTSET.replace("{testset}", name), _in(ZEROSHOT_EMB, TESTSET_EMB, testset=name), classifier(name))
        for name in sorted(params["zeroshot"]["testsets"])
    ]
    if "corruptions" in on:
        clean = params["corruptions"]["testset"]
        for corruption in params["corruptions"]["names"]:
            for severity in params["corruptions"]["severities"]:
                folder = CORRUPTED.replace("{corruption}", str(corruption)).replace("{severity}", str(severity))
                emb = _in(ZEROSHOT_EMB, CORRUPTED_EMB, corruption=corruption, severity=severity)
                found.append(Evaluation({"set": clean, "corruption": corruption, "severity": int(severity)}, folder, emb, classifier(clean)))
    if "typographic" in on:
        clean = params["typographic"]["testset"]
        folder = TYPOGRAPHIC.replace("{p.typographic.testset}", clean)
        found.append(Evaluation({"set": clean, "attack": "typographic"}, folder, _in(ZEROSHOT_EMB, TYPOGRAPHIC_EMB), classifier(clean)))
    return found


def zeroshot_embedding_sets(params: dict[str, Any], sets: str) -> list[tuple[str, str]]:
    """What a model's zero-shot job writes: (file inside its folder, the test-set folder it reads).
    `classifiers`: one per test set (CLASSIFIERS); `images`: the image set of every evaluation, then
    the OOD sets (ZEROSHOT_EMB)."""
    on = _on(params)
    if "zeroshot" not in on:
        return []
    if sets == "classifiers":
        return [(CLASSIFIER.format(testset=name), TESTSET.replace("{testset}", name)) for name in sorted(params["zeroshot"]["testsets"])]
    if sets != "images":
        raise ValueError(f"unknown zero-shot sets {sets!r} (classifiers, images)")
    found = [(e.embeddings.removeprefix(f"{ZEROSHOT_EMB}/"), e.testset) for e in zeroshot_evaluations(params)]
    if "ood" in on:
        found += [(OOD_EMB.format(oodset=name), OOD_SET.replace("{oodset}", name)) for name in sorted(params["ood"]["sets"])]
    return found


def evaluation_folders(params: dict[str, Any]) -> list[str]:
    """DVC: the folders holding every path of `zeroshot_evaluations` (as dependencies)."""
    on = _on(params)
    folders = ["data/testsets", ZEROSHOT_EMB, CLASSIFIERS]
    folders += [folder for suite, folder in (("corruptions", "data/corruptions"), ("typographic", "data/typographic")) if suite in on]
    return folders


def evaluation_params(params: dict[str, Any]) -> list[str]:
    """DVC: the params that decide which zero-shot evaluations exist."""
    on = _on(params)
    found = ["suites", "zeroshot.testsets"]
    if "corruptions" in on:
        found += ["corruptions.testset", "corruptions.names", "corruptions.severities"]
    if "typographic" in on:
        found += ["typographic.testset"]
    return found
