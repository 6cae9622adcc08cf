"""`vlstress zeroshot-classifier`: the zero-shot classifier of one model for one test set's class names.

An artifact per (model, class names, templates): `.npy` (classes x dim) + sidecar with the
class names, the templates and provenance (vlstress.zeroshot.classifier).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import models, provenance
from ..argtypes import add_model_arguments, model_params, model_spec
from ..classification import manifest as testsets
from ..io import sha256_file, sidecar, write_json, write_npy
from ..zeroshot import templates as template_sets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testset", required=True, type=Path, help="test-set folder (or its manifest.json) of `vlstress testset`")
    parser.add_argument(
        "--templates",
        default="openai",
        help=f"{', '.join(template_sets.TEMPLATE_SETS)}, or a .txt/.json file with {{c}} templates (JSON keyed by dataset: FILE#KEY)",
    )
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help=".npy to write (sidecar: <out>.json)")


def run(args: argparse.Namespace) -> None:
    from ..zeroshot.classifier import build, model_logit_scale

    testset = testsets.load(args.testset)
    templates, description = template_sets.resolve(args.templates)
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    model, _, tokenizer = models.load(spec, device, threads=args.threads)
    weights = build(model, tokenizer, testset.classes, templates, device=device, precision=args.precision)
    write_npy(args.out, weights)
    manifest_file = testsets.manifest_path(args.testset)
    write_json(
        sidecar(args.out),
        {
            "kind": "zeroshot-classifier",
            "shape": list(weights.shape),
            "dataset": testset.dataset,
            "classes": testset.classes,
            "templates": templates,
            "templates_source": args.templates,
            **model_logit_scale(model),
            "provenance": provenance.build(
                "zeroshot-classifier",
                {**model_params(args, spec), "templates": args.templates, "templates_description": description},
                seed=spec.seed,
                model=models.describe(spec, model),
                device=device,
                inputs={str(manifest_file): sha256_file(manifest_file)},
            ),
        },
    )
