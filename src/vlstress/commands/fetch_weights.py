"""`vlstress fetch-weights`: put every hub model of the params in the weight cache ahead of a run.

Every model the params name: the `models:` registry (open_clip, timm and LLaVA models: an
assistant's hub snapshot, weights and processor files) and any other block naming an `arch` and
`pretrained` (the EI scorer, the fine-tuning base). For cluster nodes without
network: run it where the network is (a login node), with `embed.cache_dir` on a file system the
nodes share, then run the workflow with `HF_HUB_OFFLINE=1` so that no job tries the network.
Random-init models and local checkpoints need nothing; an unknown tag or repository or an
unreachable hub is an error naming the model (every model is tried, then all failures are listed).
A hub repository's snapshot (an `hf-hub:` open_clip model, a timm tag, a LLaVA) is fetched at the
revision the entry names (main by default) and each file checked against the hub's checksum
(docs/models.md, "Hub models").
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping
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
    from vlstress.embedding.hub import HF_HUB
    from vlstress.errors import VlstressError
    from vlstress.params import Params

    params = Params.load(args.params or [Path("params.yaml")])
    cache = params.embed.cache_dir
    failed = []
    for slug, (arch, pretrained) in model_entries(params.values).items():
        spec = models.ModelSpec(slug, arch, pretrained, params.seed, cache)
        if spec.weights_kind != "hub":
            log.info("%s: %s, nothing to fetch", slug, spec.weights_label())
            continue
        try:
            if spec.kind == "llava":  # an assistant: its hub snapshot, not a model in memory
                from vlstress.embedding import llava_models

                llava_models.fetch(slug, str(pretrained), cache)
            elif arch.startswith(HF_HUB) or (spec.kind == "timm" and models.hub_ref(spec)):
                models.check_spec(spec)  # a hub repository's snapshot: no model built
                folder = models.hub_snapshot(spec)
                if arch.startswith(HF_HUB):  # a tokenizer from a repository of its own, too
                    models.hub_tokenizer(spec, folder)
            else:  # an open_clip tag: open_clip knows where its weights are
                models.load(spec, "cpu")
        except VlstressError as exc:
            failed.append(str(exc))
            continue
        log.info("%s: %s %s cached in %s", slug, arch, pretrained, cache)
    if failed:
        raise VlstressError(f"{len(failed)} model(s) not fetched:\n" + "\n".join(failed))


def model_entries(values: Mapping, where: str = "") -> dict[str, tuple[str, str | None]]:
    """Every mapping of the params with an `arch` and a `pretrained` (a model, wherever a block
    names one), by its slug (its key, or its `slug` field), once per (arch, weights)."""
    found: dict[str, tuple[str, str | None]] = {}
    for key, value in values.items():
        if not isinstance(value, Mapping):
            continue
        if "arch" in value and "pretrained" in value:
            entry = (str(value["arch"]), value["pretrained"])
            if entry not in found.values():
                name = key if where in ("", "models.") else f"{where}{key}"
                found[str(value.get("slug", name))] = entry
        else:
            for slug, entry in model_entries(value, f"{where}{key}.").items():
                if entry not in found.values():
                    found[slug] = entry
    return found
