"""`vlstress compare-results`: a rebuilt results tree against another one, or against the committed
one, within stated tolerances (vlstress.results_compare): numbers in JSON, YAML (dvc.lock), CSV
and .npy files agree when |a - b| <= atol + rtol * max(|a|, |b|), other files byte for byte, and a
digest that differs only because the file it names differs within tolerance is reported as
following from it. Every difference is printed; the exit status is 1 when one is real.

    vlstress compare-results results /elsewhere/results    # two folders
    vlstress compare-results --against HEAD                # results/ and dvc.lock vs the commit
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vlstress.argtypes import non_negative_float
from vlstress.errors import VlstressError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trees", nargs="*", type=Path, help="two folders (without --against)")
    parser.add_argument(
        "--against",
        metavar="REV",
        help="compare the working tree's PATHS with their committed version at this git revision",
    )
    parser.add_argument(
        "--paths",
        nargs="+",
        default=["results", "dvc.lock"],
        help="with --against: the tracked files and folders compared (default: results dvc.lock)",
    )
    parser.add_argument("--repo", type=Path, default=Path("."), help="with --against: the checkout")
    parser.add_argument("--rtol", type=non_negative_float, default=1e-5, help="relative tolerance")
    parser.add_argument("--atol", type=non_negative_float, default=1e-5, help="absolute tolerance")


def run(args: argparse.Namespace) -> None:
    from vlstress import results_compare

    if args.against is not None:
        if args.trees:
            raise VlstressError("give two folders or --against REV, not both")
        found = results_compare.against(args.against, args.paths, args.repo, args.rtol, args.atol)
        title = f"first: {' '.join(args.paths)} at {args.against}; second: the working tree"
    else:
        if len(args.trees) != 2:
            raise VlstressError("give two folders to compare (or --against REV)")
        first, second = args.trees
        found = results_compare.compare_trees(first, second, None, args.rtol, args.atol)
        title = f"first: {first}; second: {second}"
    print(f"{title}; numbers within rtol {args.rtol:g}, atol {args.atol:g}")
    print(found.report())
    if found.real:
        sys.exit(1)
