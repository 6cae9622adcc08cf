"""`vlstress embed-retrieval`: every retrieval set of one model, embedded in one process.

Writes a folder: `images.npy` and `texts.npy` (the manifest's images and captions),
`image_variants/<variant>.npy` for each image variant folder and `text_variants/<set>.npy`
for each caption set, each with its provenance sidecar `<file>.json`. The sets come from
--image-variant / --caption-set, or from the params files (--params: the variants and caption
sets of the suites that are on, as the workflow lists them). The model and its start-up are
paid once (docs/throughput.md); with --reuse-dir, a set unchanged since an earlier run is
copied from there instead of embedded again (vlstress.embedding_sets).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import add_model_arguments, model_spec
from vlstress.commands.reuse import add_reuse_argument, reuse_folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--manifest", required=True, type=Path, help="manifest from `vlstress prepare` (images and captions)")
    parser.add_argument("--image-variant", action="append", type=Path, default=[], help="an image variant folder (repeatable)")
    parser.add_argument("--caption-set", action="append", type=Path, default=[], help="a caption set file (repeatable)")
    parser.add_argument(
        "--params", action="append", type=Path, default=None,
        help="params file(s): add the image variants and caption sets of the suites that are on",
    )  # fmt: skip
    add_model_arguments(parser)
    add_reuse_argument(parser)
    parser.add_argument("--out", required=True, type=Path, help="folder to write (replaced as a whole)")


def run(args: argparse.Namespace) -> None:
    from vlstress.embedding import sets as embedding_sets
    from vlstress.errors import VlstressError

    variants, caption_sets = list(args.image_variant), list(args.caption_set)
    if args.params:
        from vlstress import params as params_module
        from vlstress.pipeline import LISTS

        config = params_module.validate(params_module.load(args.params))
        variants += [Path(p) for p in LISTS["image_variant_sets"].paths(config)]
        caption_sets += [Path(p) for p in LISTS["text_sets"].paths(config)]
    plan = [("images.npy", embedding_sets.original_images(args.manifest)), ("texts.npy", embedding_sets.captions(args.manifest, "texts"))]
    plan += [(f"image_variants/{folder.name}.npy", embedding_sets.image_variant(folder)) for folder in variants]
    plan += [(f"text_variants/{path.stem}.npy", embedding_sets.captions(path)) for path in caption_sets]
    names = [name for name, _ in plan]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise VlstressError(f"two sets would write the same file: {', '.join(clashes)} (image variant folders and caption sets need distinct names)")
    embedding_sets.require_files([item for _, item in plan])
    loaded = embedding_sets.load(model_spec(args), args)
    embedding_sets.write_folder(plan, loaded, "embed-retrieval", args.out, reuse_folder(args))
