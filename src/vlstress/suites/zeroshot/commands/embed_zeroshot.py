"""`vlstress embed-zeroshot`: the zero-shot sets of one model, embedded in one process.

`--sets classifiers` writes a folder of `<test set>.npy`: the zero-shot classifier of each test
set's class names, from --templates. `--sets images` writes a folder of image embeddings:
`testsets/<test set>.npy`, `corrupted/<corruption>_s<severity>.npy`, `typographic.npy` and
`ood/<OOD set>.npy`. Each file has its provenance sidecar `<file>.json`. The sets are those of
the zero-shot suites that are on in the params files (`vlstress.pipeline.stages.
zeroshot_embedding_sets`), the list the workflow gives the job as inputs. The model and its
start-up are paid once per folder (docs/throughput.md); with --reuse-dir, a set unchanged since
an earlier run is copied from there instead of embedded again (vlstress.embedding_sets).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import add_model_arguments, model_spec
from vlstress.commands.reuse import add_reuse_argument, reuse_folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", action="append", required=True, type=Path, help="params file(s): the zero-shot sets of the suites that are on")
    parser.add_argument("--sets", required=True, choices=("classifiers", "images"), help="the classifiers of the test sets, or every image set")
    parser.add_argument("--templates", default=None, help="prompt templates of the classifiers (default: zeroshot.templates of the params)")
    add_model_arguments(parser)
    add_reuse_argument(parser)
    parser.add_argument("--out", required=True, type=Path, help="folder to write (replaced as a whole)")


def run(args: argparse.Namespace) -> None:
    from vlstress.embedding import sets as embedding_sets
    from vlstress import params as params_module
    from vlstress.errors import VlstressError
    from vlstress.pipeline.stages import zeroshot_embedding_sets

    config = params_module.validate(params_module.load(args.params), ", ".join(map(str, args.params)))
    sets = zeroshot_embedding_sets(config, args.sets)
    if not sets:
        raise VlstressError("the params switch the zeroshot suite off: there is no zero-shot set to embed")
    if args.sets == "classifiers":
        templates = args.templates or config["zeroshot"]["templates"]
        plan = [(name, embedding_sets.classifier(Path(folder), templates)) for name, folder in sets]
    else:
        plan = [(name, embedding_sets.testset_images(Path(folder), name.removesuffix(".npy"))) for name, folder in sets]
    embedding_sets.require_files([item for _, item in plan])
    loaded = embedding_sets.load(model_spec(args), args)
    embedding_sets.write_folder(plan, loaded, "embed-zeroshot", args.out, reuse_folder(args))
