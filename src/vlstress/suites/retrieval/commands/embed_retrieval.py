"""`vlstress embed-retrieval`: every retrieval set of one model, embedded in one process.

Writes a folder: `images.npy` and `texts.npy` (the manifest's images and captions), and the sets
the suites that are on add to the `retrieval` group (`--sets-from`: their provider modules, e.g.
`image_variants/<variant>.npy`, `text_variants/<set>.npy`), each with its provenance sidecar
`<file>.json`. The model and its start-up are paid once (docs/throughput.md); with --reuse-dir,
a set unchanged since an earlier run is copied from there instead of embedded again
(vlstress.embedding.sets). What is embedded: vlstress.suites.retrieval.embedding_plan.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import suite_modules
from vlstress.commands.reuse import add_reuse_argument, reuse_folder
from vlstress.embedding.flags import add_model_arguments, model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        required=True,
        type=Path,
        help="manifest from `vlstress prepare` (images and captions)",
    )
    parser.add_argument(
        "--params",
        action="append",
        type=Path,
        default=[],
        help="params file(s): which suites are on",
    )
    parser.add_argument(
        "--sets-from",
        type=suite_modules,
        default=[],
        help="modules that add sets to the group (comma list)",
    )
    add_model_arguments(parser)
    add_reuse_argument(parser)
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (replaced as a whole)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.embedding import sets as embedding_sets
    from vlstress.suites.retrieval.embedding_plan import plan

    found = plan(args.manifest, args.params, args.sets_from)
    loaded = embedding_sets.load(model_spec(args), args)
    embedding_sets.write_folder(
        found, loaded, "embed-retrieval", args.out, reuse_folder(args, args.sets_from)
    )
