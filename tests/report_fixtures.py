"""Hand-made metric records, written through `vlstress.record.write_record`, for the summary, figure
and table tests."""

from __future__ import annotations

from pathlib import Path

from vlstress.record import Record, write_record

MODELS = {  # slug -> provenance.model
    "vit-b-32-random": {
        "arch": "ViT-B-32",
        "pretrained": None,
        "weights": "random-init",
        "weights_label": "random-init (seed 0)",
        "seed": 0,
        "slug": "vit-b-32-random",
        "n_params": 151_277_313,
    },
    "rn50-openai": {
        "arch": "RN50",
        "pretrained": "openai",
        "weights": "hub",
        "weights_label": "hub:openai",
        "seed": 0,
        "slug": "rn50-openai",
        "n_params": 102_007_137,
    },
}
TEXT_SETS = ("same_concept", "diff_concept", "rand_voca", "danger")
SEEDS = (1, 10, 100)


def record(model: str, task: str, condition: dict, metrics: dict) -> Record:
    info = dict(MODELS[model])
    return Record(
        task=task,
        model={"slug": model, "arch": info["arch"], "weights": info["weights_label"]},
        dataset={"name": "demo", "n_images": 14, "n_captions": 70},
        condition=condition,
        metrics=metrics,
        provenance={"step": "evaluate", "model": info, "params": {}, "seed": 0},
    )


def file_name(rec: Record) -> str:
    """`retrieval.json`, `text-stress-set=danger.json`,
    `image-stress-perturbation=mix,lam=0.9,seed=1.json`."""
    if not rec.condition:
        return f"{rec.task}.json"
    return f"{rec.task}-" + ",".join(f"{k}={v}" for k, v in rec.condition.items()) + ".json"


def t2i_value(model: str, method: str, lam: float, seed: int) -> float:
    """A known, seed-dependent R@1: base * lam - (5 for patch) - offset(seed)."""
    base = 60.0 if model == "rn50-openai" else 40.0
    return round(
        base * lam - (5.0 if method == "patch" else 0.0) - {1: 1.0, 10: 2.0, 100: 3.0}[seed], 4
    )


def make_records(
    *, retrieval: bool = True, text: bool = True, image: bool = True, lams=(0.9, 0.7), seeds=SEEDS
) -> list[Record]:
    """Retrieval on the original gallery (+ text sets) (+ image variants over lams x seeds), for
    both models."""
    out = []
    for model in MODELS:
        base = 60.0 if model == "rn50-openai" else 40.0
        if retrieval:
            out.append(
                record(
                    model,
                    "retrieval",
                    {},
                    {
                        "i2t_R@1": base + 5,
                        "i2t_R@5": 80.0,
                        "i2t_R@10": 90.0,
                        "t2i_R@1": base,
                        "t2i_R@5": 75.0,
                        "t2i_R@10": 85.0,
                    },
                )
            )
        if text:
            for i, name in enumerate(TEXT_SETS):
                r1 = base + 5 - 10 * (i + 1)
                out.append(
                    record(
                        model,
                        "text-stress",
                        {"set": name},
                        {
                            "i2t_R@1": r1,
                            "i2t_R@5": 70.0,
                            "i2t_R@10": 80.0,
                            "i2t_R@1_original": base + 5,
                            "i2t_false_R@1": 5.0 * (i + 1),
                            "i2t_drop_rate": 100 * (base + 5 - r1) / (base + 5),
                        },
                    )
                )
        if image:
            for method in ("mix", "patch"):
                for lam in lams:
                    for seed in seeds:
                        r1 = t2i_value(model, method, lam, seed)
                        out.append(
                            record(
                                model,
                                "image-stress",
                                {"perturbation": method, "lam": lam, "seed": seed},
                                {
                                    "t2i_R@1": r1,
                                    "t2i_R@5": 70.0,
                                    "t2i_R@10": 80.0,
                                    "t2i_R@1_original": base,
                                    "t2i_false_R@1": 100 - r1 - base / 2,
                                    "t2i_drop_rate": 100 * (base - r1) / base,
                                },
                            )
                        )
    return out


def write(root: Path, recs: list[Record]) -> list[Path]:
    paths = []
    for rec in recs:
        path = Path(root) / rec.model["slug"] / file_name(rec)
        write_record(path, rec)
        paths.append(path)
    return paths


def write_records(root: Path, **kwargs) -> list[Path]:
    """results/metrics-like folder of records; returns the list of their paths (what summarize is
    given)."""
    return write(root, make_records(**kwargs))


def record_flags(paths: list[Path]) -> list[str]:
    """`--record P1 --record P2 ...` for `vlstress summarize`."""
    return [arg for path in paths for arg in ("--record", str(path))]
