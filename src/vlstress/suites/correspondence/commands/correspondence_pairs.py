"""`vlstress correspondence-pairs`: the pair list of one correspondence set.

A release (`scannet-1500`, `navi`, `spair-71k`) is read in place and its pairs chosen as Probe3D
does (seeded); a synthetic kind renders RGB-D scenes into the output folder first, in the layout of
the release it imitates, and reads them back with that release's reader. Writes OUT/pairs.json (the
pairs), OUT/protocol.json (how the evaluation prepares, matches and scores them) and, for a
synthetic kind, the rendered scenes. See vlstress.suites.correspondence.pair_lists.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_float, optional_int, optional_path, optional_str, seed_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--name", required=True, help="the set's name (a key of correspondence.sets)"
    )
    parser.add_argument(
        "--kind",
        required=True,
        help="scannet-1500 | navi | spair-71k | synthetic-scannet | synthetic-spair",
    )
    parser.add_argument(
        "--root", type=optional_path, default=None, help="the release folder (None: synthetic)"
    )
    parser.add_argument(
        "--pairs",
        type=optional_int,
        default=None,
        help="synthetic: pairs to render; spair-71k: per class and viewpoint bucket",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="rendering or sampling seed")
    parser.add_argument("--image-size", required=True, help="side, or height,width")
    parser.add_argument("--mean", required=True, help="normalisation mean r,g,b")
    parser.add_argument("--std", required=True, help="normalisation std r,g,b")
    parser.add_argument(
        "--matches", type=optional_int, default=None, help="ratio-test matches kept per pair"
    )
    parser.add_argument(
        "--scale-factor", type=optional_float, default=None, help="depth scale before matching"
    )
    parser.add_argument(
        "--thresholds", required=True, help="error thresholds with units, e.g. 5px,10px,20px"
    )
    parser.add_argument(
        "--binned", type=optional_str, default=None, help="the threshold recalled per rotation bin"
    )
    parser.add_argument(
        "--bins", type=optional_str, default=None, help="rotation bin edges in degrees"
    )
    parser.add_argument(
        "--max-angle", type=optional_float, default=None, help="navi: largest rotation of a pair"
    )
    parser.add_argument("--split", type=optional_str, default=None, help="spair: the split")
    parser.add_argument(
        "--out", required=True, type=Path, help="the set's folder (data/correspondence/<set>)"
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.suites.correspondence import pair_lists, settings

    protocol = settings.build(
        args.kind,
        args.image_size,
        args.mean,
        args.std,
        args.thresholds,
        matches=args.matches,
        scale_factor=args.scale_factor,
        binned=args.binned,
        bins=args.bins,
        max_angle=args.max_angle,
        split=args.split,
    )
    pair_lists.build(args.name, protocol, args.root, args.pairs, args.seed, args.out)
