"""Hand-made metric records (the contract of commands/evaluate.py) for the summary, figure and table tests."""

from __future__ import annotations

import json
from pathlib import Path

MODELS = {  # slug -> provenance.model
    "vit-b-32-random": {"arch": "ViT-B-32", "pretrained": None, "weights": "random-init", "weights_label": "random-init (seed 0)", "seed": 0, "slug": "vit-b-32-random", "n_params": 151_277_313},
    "rn50-openai": {"arch": "RN50", "pretrained": "openai", "weights": "hub", "weights_label": "hub:openai", "seed": 0, "slug": "rn50-openai", "n_params": 102_007_137},
}  # fmt: skip
TEXT_SETS = ("same_concept", "diff_concept", "rand_voca", "danger")
SEEDS = (1, 10, 100)


def record(model: str, evaluation: str, stress: str, variant: str, metrics: dict, lam=None, seed=None) -> dict:
    info = dict(MODELS[model])
    return {
        "model": model,
        "weights": info["weights_label"],
        "dataset": "demo",
        "evaluation": evaluation,
        "stress": stress,
        "variant": variant,
        "lam": lam,
        "variant_seed": seed,
        "n_images": 14,
        "n_captions": 70,
        "metrics": metrics,
        "provenance": {"step": "evaluate", "model": info, "params": {}, "seed": 0},
    }


def t2i_value(model: str, method: str, lam: float, seed: int) -> float:
    """A known, seed-dependent R@1: base * lam - (5 for patch) - offset(seed)."""
    base = 60.0 if model == "rn50-openai" else 40.0
    return round(base * lam - (5.0 if method == "patch" else 0.0) - {1: 1.0, 10: 2.0, 100: 3.0}[seed], 4)


def write_records(root: Path, *, text: bool = True, image: bool = True, lams=(0.9, 0.7), seeds=SEEDS) -> Path:
    """results/metrics-like folder: original (+ text sets) (+ image variants over lams x seeds)."""
    out = []
    for model in MODELS:
        base = 60.0 if model == "rn50-openai" else 40.0
        out.append(record(model, "original", "none", "original", {"i2t_R@1": base + 5, "i2t_R@5": 80.0, "i2t_R@10": 90.0, "t2i_R@1": base, "t2i_R@5": 75.0, "t2i_R@10": 85.0}))
        if text:
            for i, name in enumerate(TEXT_SETS):
                r1 = base + 5 - 10 * (i + 1)
                out.append(record(model, f"text-{name}", "text", name, {"i2t_R@1": r1, "i2t_R@5": 70.0, "i2t_R@10": 80.0, "i2t_R@1_original": base + 5, "i2t_false_R@1": 5.0 * (i + 1), "i2t_drop_rate": 100 * (base + 5 - r1) / (base + 5)}, seed=0))
        if image:
            for method in ("mix", "patch"):
                for lam in lams:
                    for seed in seeds:
                        r1 = t2i_value(model, method, lam, seed)
                        out.append(record(model, f"image-{method}-lam{lam}-seed{seed}", "image", method, {"t2i_R@1": r1, "t2i_R@5": 70.0, "t2i_R@10": 80.0, "t2i_R@1_original": base, "t2i_false_R@1": 100 - r1 - base / 2, "t2i_drop_rate": 100 * (base - r1) / base}, lam=lam, seed=seed))
    for rec in out:
        path = root / rec["model"] / f"{rec['evaluation']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec, indent=2, sort_keys=True))
    return root
