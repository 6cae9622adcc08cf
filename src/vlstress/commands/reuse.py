"""The `--reuse-dir` flag of the commands that embed every set of a model in one job
(`embed-retrieval`, `embed-zeroshot`): earlier results of unchanged sets (vlstress.embedding.sets).
Not a command itself."""

from __future__ import annotations

import argparse

from vlstress.argtypes import optional_path


def add_reuse_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reuse-dir",
        type=optional_path,
        default=None,
        help="folder of earlier results to reuse for unchanged sets (None = embed every set)",
    )


def reuse_folder(args: argparse.Namespace, providers: list[str] | tuple[str, ...] = ()):
    """The --reuse-dir folder keyed on the digest of the embedding code and of the modules that
    build the sets (None: embed every set)."""
    if args.reuse_dir is None:
        return None
    from vlstress.code_deps import digest
    from vlstress.embedding import sets as embedding_sets

    return embedding_sets.Reuse(args.reuse_dir, digest(embedding_sets.__name__, *providers))
