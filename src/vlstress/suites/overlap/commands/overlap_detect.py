"""`vlstress overlap-detect`: near-duplicates of the test images in the training collection, by
the detector model's embeddings (vlstress.suites.overlap.detect)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vlstress.argtypes import optional_float
from vlstress.embedding.flags import add_model_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", action="append", required=True, type=Path, help="params")
    parser.add_argument("--collection", required=True, type=Path, help="overlap-collection's out")
    add_model_arguments(parser)
    parser.add_argument("--index", default="auto", choices=("auto", "flat", "ivf"))
    parser.add_argument("--nlist", type=int, default=1024, help="IVF lists")
    parser.add_argument("--nprobe", type=int, default=16, help="IVF lists searched")
    parser.add_argument(
        "--threshold", type=optional_float, default=None, help="None: calibrated on the planted"
    )
    parser.add_argument("--recall", type=float, default=0.95, help="of the planted duplicates")
    parser.add_argument("--index-seed", type=int, default=0, help="IVF k-means seed")
    parser.add_argument("--out", required=True, type=Path, help="detect.json")


def run(args: argparse.Namespace) -> None:
    import numpy as np

    from vlstress import provenance
    from vlstress.embedding import models
    from vlstress.embedding.encoders import encode_images
    from vlstress.embedding.files import load_embeddings
    from vlstress.embedding.flags import batch_size, model_params, model_spec
    from vlstress.io import read_json, sha256_file, write_json
    from vlstress.params import Params
    from vlstress.suites.overlap.detect import detect
    from vlstress.suites.overlap.paths import evaluations
    from vlstress.testsets import manifest as testsets

    params = Params.load(args.params)  # which test sets (overlap.testsets)
    listing = args.collection / "collection.json"
    collection = read_json(listing, "overlap collection")
    spec = model_spec(args)
    device = models.resolve_device(args.device)
    found = {}
    for e in evaluations(params):
        one = e.for_model(spec.slug)
        n = len(testsets.load(one.testset).images)
        found[e.condition["set"]], _ = load_embeddings(Path(one.embeddings), n, "test-set image")
    model, preprocess, _ = models.load(spec, device, threads=args.threads)

    def embed(paths: list[Path]) -> np.ndarray:
        return encode_images(
            model, preprocess, paths, batch_size=batch_size(args, device), device=device,
            workers=args.workers, precision=args.precision, desc="training images",
        )  # fmt: skip

    result = detect(
        collection,
        embed,
        found,
        index_kind=args.index,
        nlist=args.nlist,
        nprobe=args.nprobe,
        threshold=args.threshold,
        recall=args.recall,
        seed=args.index_seed,
    )
    result["provenance"] = provenance.build(
        "overlap-detect",
        {**model_params(args, spec), "index": args.index, "nlist": args.nlist,
         "nprobe": args.nprobe, "recall": args.recall, "threshold": args.threshold},
        seed=args.index_seed,
        model=models.describe(spec, model),
        device=device,
        inputs={str(listing): sha256_file(listing)},
        packages=("faiss-cpu",),
    )  # fmt: skip
    write_json(args.out, result)
