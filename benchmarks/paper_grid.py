"""The papers' grid as params: the layout of params.imagenet.yaml with many models, every suite on.

Shared by `bench_planning.py` (planning the workflow at paper scale) and `vlstress cost` (pricing
it); run as a script it writes the pool's params file, `params.paper-grid.yaml`:

- `paper_base(demo)`: params.yaml with params.imagenet.yaml's blocks in place of the demo's (as
  that file says to use it: ImageNet and its shifts, NINCO, the 1,280 cue-conflict stimuli), the
  retrieval suites on params.yaml's dataset, the fine-tuned variant of the demo kept.
- `grid_params(demo, n)`: that layout with n models (the demo's two, the fine-tuned one included,
  plus seeded random-init ones cycling through `ARCHS`), every suite on and all 19 corruptions x
  5 severities: the planning benchmark's worst case.
- `pool_params(demo)`: the papers' pool, 255 models (84 zero-shot CLIP + 127 ImageNet baselines +
  44 fine-tuned, the model count of arXiv 2410.01534) and its 6 LLaVA assistants (the demo's tiny
  one and LLaVA-1.5 hub ids as stand-ins): the baselines timm classifiers cycling
  through `TIMM_ARCHS`, the others through `ARCHS` (a stand-in mix, not the papers' own list), with
  params.imagenet.yaml's 15 ImageNet-C corruptions x 5 severities and the retrieval suites on
  the real benchmark, COCO's Karpathy 5k test split. Random-init weights cost what real ones
  cost, so `vlstress cost` prices it as the real pool of that architecture mix.

    python benchmarks/paper_grid.py                      # writes params.paper-grid.yaml
    python benchmarks/paper_grid.py --models 84 --out /tmp/p.yaml
    vlstress cost --params params.paper-grid.yaml --gpus 8
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

ARCHS = ("ViT-B-32", "ViT-S-32", "RN50", "ViT-B-16", "ViT-L-14", "convnext_base")
# the supervised ImageNet baselines of the pool: timm classifiers (docs/models.md)
TIMM_ARCHS = (
    "timm:resnet50",
    "timm:vit_base_patch16_224",
    "timm:convnext_base",
    "timm:efficientnet_b0",
    "timm:resnet101",
    "timm:densenet121",
)
SEVERITIES = [1, 2, 3, 4, 5]
POOL = {"zero-shot CLIP": 84, "ImageNet-trained baselines": 127, "fine-tuned CLIP": 44}
# the paper's 6 LLaVA models on CLIP's vision encoder: assistants, answering the assistant suite's
# questions (not in the embedding count); stand-ins cycling through LLaVA-1.5's hub ids
ASSISTANTS = 6
LLAVA_IDS = ("llava-hf/llava-1.5-7b-hf", "llava-hf/llava-1.5-13b-hf")
POOL_FILE = ROOT / "params.paper-grid.yaml"
KARPATHY = {
    "name": "coco-karpathy-test",
    "kind": "karpathy",
    "images": None,
    "captions": None,
    "max_images": None,
    "image_ids": None,
    "coco_url": None,
    "karpathy_url": None,
    "rococo_url": None,
}


def paper_base(demo: dict) -> dict:
    """The papers' layout: params.yaml with params.imagenet.yaml's blocks in place of the demo's
    (as that file says to use it: ImageNet, its shifts, NINCO, the 1,280 stimuli), the retrieval
    suites on params.yaml's dataset, the fine-tuned variant of the demo kept."""
    imagenet = yaml.safe_load((ROOT / "params.imagenet.yaml").read_text())
    params = {**demo, **{key: value for key, value in imagenet.items() if key != "models"}}
    params["models"] = dict(demo["models"])
    baseline = next(iter(params["models"]))
    robustness = {**params["zeroshot"]["robustness"], "mce_baseline": baseline}
    params["zeroshot"] = {**params["zeroshot"], "robustness": robustness}
    params["stability"] = {**params["stability"], "baseline": baseline}
    params["overlap"] = {**params["overlap"], "detector": baseline}
    # ImageNet-D's splits have no published size `vlstress cost` could use without the folder:
    # the grid asks the assistant on ImageNet-A instead (the same number of questions per image)
    testsets = {
        name: entry
        for name, entry in params["zeroshot"]["testsets"].items()
        if entry["kind"] != "imagenet-d"
    }
    params["zeroshot"] = {**params["zeroshot"], "testsets": testsets}
    params["assistant"] = {
        **params["assistant"],
        "options_from": baseline,
        "testsets": ["imagenet_a"],
    }
    return params


def with_models(params: dict, demo: dict, n_models: int, n_timm: int = 0) -> dict:
    """`params` with n models (its own, plus seeded random-init ones: timm classifiers cycling
    through TIMM_ARCHS until there are `n_timm`, then image-text ones cycling through ARCHS) and
    every suite of the demo's `suites:` on."""
    models = dict(params["models"])
    timm_left = n_timm - sum(entry["arch"].startswith("timm:") for entry in models.values())
    embedding = sum(not entry["arch"].startswith("llava") for entry in models.values())
    for i in range(n_models - embedding):
        arch = TIMM_ARCHS[i % len(TIMM_ARCHS)] if i < timm_left else ARCHS[i % len(ARCHS)]
        slug = arch.removeprefix("timm:").replace("_", "-").lower()
        models[f"m{i:03d}-{slug}"] = {"arch": arch, "pretrained": None}
    return {**params, "models": models, "suites": dict.fromkeys(demo["suites"], True)}


def grid_params(base: dict, n_models: int) -> dict:
    """The paper layout with N models (the demo's two, the fine-tuned one included, plus
    random-init ones of several architectures), all 19 corruptions x 5 severities and every suite
    on."""
    from vlstress.suites.corruptions.imagenet_c import CORRUPTIONS

    params = with_models(paper_base(base), base, n_models)
    params["corruptions"] = {**params["corruptions"], "names": list(CORRUPTIONS)}
    params["corruptions"]["severities"] = SEVERITIES
    return params


def pool_params(base: dict, n_models: int = sum(POOL.values())) -> dict:
    """The papers' pool: the paper layout (params.imagenet.yaml's 15 corruptions x 5 severities)
    with n models, every suite on, the retrieval suites on the Karpathy 5k test split."""
    n_timm = round(POOL["ImageNet-trained baselines"] * n_models / sum(POOL.values()))
    params = with_models(paper_base(base), base, n_models, n_timm)
    params["dataset"] = dict(KARPATHY)
    have = sum(entry["arch"].startswith("llava") for entry in params["models"].values())
    for i in range(ASSISTANTS - have):
        hub = LLAVA_IDS[i % len(LLAVA_IDS)]
        slug = f"a{i:03d}-" + hub.split("/")[1].replace(".", "-").lower()
        params["models"][slug] = {"arch": "llava", "pretrained": hub}
    # every pair of ~260 models would be ~34,000 comparisons per condition: the fine-tuned
    # variants against their bases instead
    params["findings"] = {**params["findings"], "compare": "base"}
    # a model's zero-shot images in as many jobs as keep every job under cluster.max_job_hours on
    # the reference GPU (ViT-L/14's one job would take 37.6 h): the cost model's fewest
    params["cluster"] = {**params["cluster"], "embed_shards": 1}
    from vlstress.cost.rates import DEFAULT_RATE_FILE
    from vlstress.pipeline import resources

    pricer = resources.job_pricer(params, ROOT / DEFAULT_RATE_FILE)
    params["cluster"]["embed_shards"] = resources.fewest_shards(params, pricer).get(
        "cluster.embed_shards", 1
    )
    return params


HEADER = """\
# The papers' pool for `vlstress cost`, written by `python benchmarks/paper_grid.py` (do not edit;
# run it again after params.yaml or params.imagenet.yaml change): params.yaml with
# params.imagenet.yaml's blocks, every suite on, the retrieval suites on the Karpathy 5k test
# split, and {models} models
#   ({pool})
# and {assistants} LLaVA assistants (the demo's tiny one and LLaVA-1.5 hub ids as stand-ins:
# `vlstress cost` counts their questions, it does not price generation);
# the demo's six (four fine-tuned: SC/VC, FLYP through LoRA, standard, WiSE-FT; one timm
# classifier) and seeded random-init ones: the ImageNet baselines as timm classifiers cycling
# through
#   {timm_archs}
# the others cycling through
#   {archs}
# (a stand-in architecture mix, not the papers' own list: random weights cost what real ones do).
# A complete params file, not blocks to merge:
#   vlstress cost --params params.paper-grid.yaml --gpus 8
"""


def render(params: dict) -> str:
    pool = " + ".join(f"{n} {what}" for what, n in POOL.items())
    header = HEADER.format(
        models=sum(not e["arch"].startswith("llava") for e in params["models"].values()),
        assistants=sum(e["arch"].startswith("llava") for e in params["models"].values()),
        pool=pool,
        archs=", ".join(ARCHS),
        timm_archs=", ".join(a.removeprefix("timm:") for a in TIMM_ARCHS),
    )
    return header + yaml.safe_dump(params, sort_keys=False, width=100, default_flow_style=None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=sum(POOL.values()), help="model count")
    parser.add_argument("--out", type=Path, default=POOL_FILE, help="params file to write")
    args = parser.parse_args()
    demo = yaml.safe_load((ROOT / "params.yaml").read_text())
    args.out.write_text(render(pool_params(demo, args.models)))
    print(f"wrote {args.out} ({args.models} models)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
