"""`vlstress models`: the open_clip architectures and pretrained tags this install knows."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--arch", default=None, help="only this architecture's tags")


def run(args: argparse.Namespace) -> None:
    import open_clip

    archs = [args.arch] if args.arch else open_clip.list_models()
    for arch in archs:
        tags = open_clip.list_pretrained_tags_by_model(arch)
        print(
            f"{arch}: "
            f"{', '.join(tags) if tags else '(no pretrained tags; use null or a checkpoint)'}"
        )
