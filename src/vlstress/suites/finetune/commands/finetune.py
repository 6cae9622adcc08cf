"""`vlstress finetune`: fine-tune a model of the registry with the CLIP loss + w_sc * SC +
w_vc * VC.

Training pairs (vlstress.suites.finetune.data): the training manifest's images and captions, the
altered caption of each caption (a caption set made from the *training* captions by `vlstress
text-variants`), and each image mixed with a partner training image (seeded plan, --method,
--lam). Before training, the step fails if any training image or caption is in the test manifest.

Writes the fine-tuned weights as a safetensors checkpoint (`--out`, loadable by open_clip as
`pretrained: <path>`, so a model entry with that path evaluates it like any other model), its
sidecar (`<out>.json`: base model, settings, training counts, provenance) and the training log
(`--out-log`, one row per step: learning rate, loss terms, margins; a DVC plot). A killed run
started again with the same command resumes from its last checkpoint (`--resume`, every
--checkpoint-every steps) and ends at the same weights as an uninterrupted run.

With --lora-rank R > 0 only LoRA adapters of rank R train, on the --lora-modules Linear layers of
the --lora-tower (peft; vlstress.suites.finetune.lora); they are merged into the weights written,
so the checkpoint loads like any other.

With --processes N > 1 the step runs itself under torchrun (N data-parallel processes: N GPUs on
CUDA, gloo processes on CPU); rank 0 writes the outputs. See vlstress.suites.finetune.run for the
work and vlstress.suites.finetune.flags for the flags.
"""

from __future__ import annotations

import argparse
import logging

from vlstress.suites.finetune import flags

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    flags.add_finetune_arguments(parser)


def run(args: argparse.Namespace) -> None:
    from vlstress.suites.finetune import run as step

    if step.under_torchrun(args.processes, log):
        return
    from safetensors.torch import save_file

    from vlstress.io import atomic_path, sidecar, write_json, write_text

    finetuned = step.finetune(args)
    if finetuned is None:  # a data-parallel process other than rank 0
        return
    with atomic_path(args.out) as tmp:  # a head's class names go in the file's metadata
        save_file(finetuned.state, str(tmp), metadata=finetuned.metadata)
    write_text(args.out_log, finetuned.log_csv())
    write_json(sidecar(args.out), finetuned.sidecar())
    # the finished weights are the result: the resume state is no longer needed
    finetuned.resume.unlink(missing_ok=True)
    step.log_summary(finetuned, log)
