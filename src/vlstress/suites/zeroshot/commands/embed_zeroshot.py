"""`vlstress embed-zeroshot`: the zero-shot sets of one model, embedded in one process.

`--sets classifiers` writes a folder of `<test set>.npy`: the zero-shot classifier of each test
set's class names, from --templates (group `classifiers`). `--sets images` writes a folder of
image embeddings (group `zeroshot`): `testsets/<test set>.npy`, and what the suites that are on add
(`corrupted/<corruption>_s<severity>.npy`, `typographic.npy`, `ood/<OOD set>.npy`). `--sets-from`
names the modules that add them (the workflow lists them). Each file has its provenance sidecar
`<file>.json`. The model and its start-up are paid once per folder (docs/throughput.md); with
--reuse-dir, a set unchanged since an earlier run is copied from there instead of embedded again.
With --shard K --shards S, the job embeds the K-th of S runs of whole batches of every image set
into a shard folder, which `vlstress embed-join` joins with the others into the folder one job
writes, byte for byte (vlstress.embedding.sets.write_shard; docs/cluster.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import suite_modules
from vlstress.commands.reuse import add_reuse_argument, reuse_folder
from vlstress.embedding.flags import add_model_arguments, model_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        required=True,
        type=Path,
        help="params file(s): which suites are on",
    )
    parser.add_argument(
        "--sets",
        required=True,
        choices=("classifiers", "images"),
        help="the classifiers of the test sets, or every image set",
    )
    parser.add_argument(
        "--sets-from", required=True, type=suite_modules, help="modules that add sets (comma list)"
    )
    parser.add_argument(
        "--templates",
        default=None,
        help="prompt templates of the classifiers (default: zeroshot.templates of the params)",
    )
    parser.add_argument(
        "--imagenet-maps",
        default=None,
        help="set=file,... : the test sets' classes as ImageNet-1k classes, for a timm model's "
        "classifiers (default: zeroshot.imagenet_maps of the params; None = none)",
    )
    parser.add_argument(
        "--shard", type=int, default=None, help="with --shards: the shard this job embeds (0-based)"
    )
    parser.add_argument(
        "--shards", type=int, default=None, help="the number of shards the image sets are split in"
    )
    add_model_arguments(parser)
    add_reuse_argument(parser)
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (replaced as a whole)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.embedding import sets as embedding_sets
    from vlstress.errors import VlstressError
    from vlstress.suites.zeroshot.embedding_plan import plan

    if (args.shard is None) != (args.shards is None):
        raise VlstressError("--shard and --shards go together")
    if args.shards is not None and not 0 <= args.shard < args.shards:
        raise VlstressError(
            f"--shard {args.shard}: shards of {args.shards} are 0 to {args.shards - 1}"
        )
    # the workflow renders null as "None": no map given (not "the params' value")
    maps = "" if args.imagenet_maps == "None" else args.imagenet_maps
    found = plan(args.params, args.sets, args.sets_from, args.templates, maps)
    loaded = embedding_sets.load(model_spec(args), args)
    reuse = reuse_folder(args, args.sets_from)
    if args.shards is None:
        embedding_sets.write_folder(found, loaded, "embed-zeroshot", args.out, reuse)
    else:
        embedding_sets.write_shard(
            found, loaded, "embed-zeroshot", args.out, args.shard, args.shards, reuse
        )
