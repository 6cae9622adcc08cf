"""The single entry point. Every workflow step is one subcommand.

Snakemake rules and DVC stages call these subcommands with the same flags;
parameters reach the code only as flags. Commands live in `vlstress.commands.*`,
each module exposing `add_arguments(parser)` and `run(args)`; heavy imports
(torch, open_clip) stay inside `run` so `--help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from vlstress import cpu_kernels
from vlstress.errors import VlstressError

# subcommand -> (module, one-line help). Adding a step is one entry here.
COMMANDS: dict[str, tuple[str, str]] = {
    "download": ("vlstress.commands.download", "fetch raw data for a dataset (HTTP, resumable, checksummed)"),
    "prepare": ("vlstress.commands.prepare", "turn raw data into the canonical manifest"),
    "model-card": ("vlstress.commands.model_card", "check one model of the registry and write its card (architecture, weights, seed)"),
    "embed-retrieval": (
        "vlstress.suites.retrieval.commands.embed_retrieval",
        "every retrieval set of one model in one process (images, captions, image variants, caption sets), unchanged sets reused",
    ),
    "evaluate": ("vlstress.suites.retrieval.commands.evaluate", "retrieval metrics (Recall@K) from embeddings"),
    "ei-scores": ("vlstress.suites.rococo_text.commands.ei_scores", "embedding influence of every caption word (1 - cos with the word deleted)"),
    "evaluate-text": ("vlstress.suites.rococo_text.commands.evaluate_text", "image-to-text metrics against original + altered captions"),
    "nlp-data": ("vlstress.suites.rococo_text.commands.nlp_data", "install the offline NLP resources (WordNet for nltk) into a folder"),
    "text-variants": ("vlstress.suites.rococo_text.commands.text_variants", "one RoCOCO caption set (same/diff concept, rand-voca, danger; generated or official)"),
    "text-stats": ("vlstress.suites.rococo_text.commands.text_stats", "statistics of the caption sets (table + figure), beside the official sets"),
    "image-variants": ("vlstress.suites.rococo_image.commands.image_variants", "perturbed-image variant of the test set (a registry perturbation: mix, patch, flip, ...)"),
    "evaluate-image": ("vlstress.suites.rococo_image.commands.evaluate_image", "text-to-image metrics against original + mixed images"),
    "testset": ("vlstress.commands.testset", "the labelled manifest of a classification test set (ImageNet family, CIFAR, COCO objects, folders)"),
    "embed-zeroshot": ("vlstress.suites.zeroshot.commands.embed_zeroshot", "the zero-shot classifiers, or every zero-shot image set (test sets, corrupted, typographic, OOD), of one model in one job"),
    "evaluate-zeroshot": ("vlstress.suites.zeroshot.commands.evaluate_zeroshot", "zero-shot accuracy of one model on a clean, corrupted or typographic test set"),
    "corrupt": ("vlstress.suites.corruptions.commands.corrupt", "ImageNet-C style corruptions of a test set (seeded, parallel)"),
    "typographic": ("vlstress.suites.typographic.commands.typographic", "typographic attack: a wrong class name written on each image (seeded)"),
    "attack": ("vlstress.suites.adversarial.commands.attack", "one adversarial attack (torchattacks) on a model's zero-shot classifier, at each eps"),
    "calibrate": ("vlstress.suites.calibration.commands.calibrate", "calibration of a model's zero-shot softmax (ECE, NLL, Brier; temperature scaling) on every set"),
    "ood-detect": ("vlstress.suites.ood.commands.ood_detect", "OOD detection with a zero-shot classifier (MCM, MSP, max logit, energy; AUROC, FPR@95)"),
    "train-split": ("vlstress.suites.finetune.commands.train_split", "the training manifest of fine-tuning without any test image or caption"),
    "finetune": ("vlstress.suites.finetune.commands.finetune", "fine-tune a model with the CLIP loss + RoCOCO's semantic and visual contrastive losses"),
    "finetune-table": ("vlstress.suites.finetune.commands.finetune_table", "base model against its fine-tuned variants on every metric of the run"),
    "robustness": ("vlstress.suites.zeroshot.commands.robustness", "corruption (mCE), typographic and effective-robustness tables of this run's records"),
    "effective-robustness": ("vlstress.suites.zeroshot.commands.effective_robustness", "effective and relative robustness from any table of ID and shifted accuracies"),
    "summarize": ("vlstress.commands.summarize", "merge metric JSONs into one table"),
    "figures": ("vlstress.commands.figures", "the paper's figures (PNG + PDF) from the summary table"),
    "tables": ("vlstress.commands.tables", "the paper's results table (Markdown + LaTeX) from the summary table"),
    "models": ("vlstress.commands.models", "list open_clip architectures and pretrained tags"),
    "pipeline": ("vlstress.commands.pipeline", "render dvc.yaml from the stage table (render), check it is current (check), list stages"),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """Only the selected subcommand's module is imported: a step starts without loading the others."""
    parser = argparse.ArgumentParser(prog="vlstress", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            module = importlib.import_module(module_name)
            module.add_arguments(cmd)
            cmd.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    cpu_kernels.cap()  # before any command module loads numpy or torch: they read it once, at load
    argv = sys.argv[1:] if argv is None else argv
    selected = next((arg for arg in argv if arg in COMMANDS), None)
    args = build_parser(selected).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        args._module.run(args)
    except VlstressError as exc:
        print(f"vlstress {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
