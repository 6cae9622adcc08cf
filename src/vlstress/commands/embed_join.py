"""`vlstress embed-join`: the shard folders of a sharded embedding job joined into the folder one
job writes (vlstress.embedding.sets.join_shards): each set's rows end to end, its sidecar, and
its reuse entry kept (--reuse-dir); no model is loaded."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--parts-dir",
        required=True,
        type=Path,
        help="the folder of the shard folders 0 .. S-1 (`embed-zeroshot --shard K --out DIR/K`)",
    )
    parser.add_argument("--shards", required=True, type=int, help="S, the number of shards")
    parser.add_argument(
        "--reuse-dir",
        default=None,
        type=Path,
        help="reuse folder: sets the shards left to it are placed from there, joined sets kept",
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write (replaced as a whole)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.embedding.sets import join_shards

    join_shards([args.parts_dir / str(k) for k in range(args.shards)], args.out, args.reuse_dir)
