"""`vlstress fetch-weights`: put every hub model of the params in the weight cache ahead of a run.

For cluster nodes without network: run it where the network is (a login node), with
`embed.cache_dir` on a file system the nodes share, then run the workflow with
`HF_HUB_OFFLINE=1` so that no job tries the network. Random-init models and local checkpoints
need nothing; an unknown tag or an unreachable hub is an error naming the model (every model is
tried, then all failures are listed).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        action="append",
        type=Path,
        help="params file(s), merged in order (default: params.yaml)",
    )


def run(args: argparse.Namespace) -> None:
    from vlstress.embedding import models
    from vlstress.errors import VlstressError
    from vlstress.params import Params

    params = Params.load(args.params or [Path("params.yaml")])
    cache = params.embed.cache_dir
    failed = []
    for slug, entry in params.models.items():
        spec = models.ModelSpec(slug, entry.arch, entry.pretrained, params.seed, cache)
        if spec.weights_kind != "hub":
            log.info("%s: %s, nothing to fetch", slug, spec.weights_label())
            continue
        try:
            models.load(spec, "cpu")
        except VlstressError as exc:
            failed.append(str(exc))
            continue
        log.info("%s: %s %s cached in %s", slug, entry.arch, entry.pretrained, cache)
    if failed:
        raise VlstressError(f"{len(failed)} model(s) not fetched:\n" + "\n".join(failed))
