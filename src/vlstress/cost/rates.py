"""The measured rates the cost model prices with, each with where it came from.

The embedding rates come from one `benchmarks/bench_embedding.py` result (`--rate-file`; by
default `benchmarks/results/bench_embedding-h100.json`, one H100 with 16 cores): images/s of the
fastest image path (decode in DataLoader workers + resize on the GPU + the model), the data
path's ceiling (decoding alone, all workers), one core's decoding rate and captions/s. The other
figures are read from the benchmark results beside that file when they are there, else they are
the constants below, which are those files' own numbers (docs/throughput.md, README):

| figure | file (beside the rate file) | constant |
|---|---|---|
| start-up of a GPU job | `bench_workflow-h100-notransformers.json`: `fixed_s` | 9.05 s |
| mixing/patching one image (CPU) | the same: `image_variants` jobs' CPU s / image | 9.07 ms |
| one caption of a caption set (CPU) | the same: `text_variants` jobs | 0.47 ms |
| text statistics, per caption (CPU) | the same: `text_stats` job | 0.63 ms |
| EI scores, per caption (GPU) | the same: `ei_scores` job less its start-up | 0.59 ms |
| one attack step, in clean passes | `bench_attack.json`: PGD-10 = 25.6 clean passes | 2.56 |
| one corrupted image (one core) | `corruptions.json` of `bench_corruptions.py` | 35.5 ms |
| one ImageNet-P frame (one core) | `bench_stability.json`: mean of the 10 | 16.5 ms |
| exact faiss search (one core) | `bench_overlap.json`: multiply-adds/s | 39.5 G/s |

(`bench_workflow-h100.json` when the `-notransformers` run is not there.)

The corruption constant is the README's extrapolation from `bench_corruptions.py`: about 37
core-hours for ImageNet-C's 50,000 x 15 x 5 images at 224 px; decoding the source JPEG is added
per corrupted image (one `corrupt` step per corruption and severity).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError

DEFAULT_RATE_FILE = Path("benchmarks/results/bench_embedding-h100.json")
WORKFLOW_FILES = ("bench_workflow-h100-notransformers.json", "bench_workflow-h100.json")
ATTACK_FILE = "bench_attack.json"
CORRUPTION_FILES = ("corruptions.json", "bench_corruptions.json")
STABILITY_FILE = "bench_stability.json"
OVERLAP_FILE = "bench_overlap.json"


def _label(file_name: str) -> str:
    """A rate source's label: its benchmark's name (`bench_<name>[-<machine>...].json`)."""
    return Path(file_name).stem.removeprefix("bench_").split("-")[0]


# the constants (see the module's table)
STARTUP_S = 9.05
IMAGE_VARIANT_CORE_S = 45.33 / 5000
TEXT_VARIANT_CORE_S = 11.79 / 25000
TEXT_STATS_CORE_S = 15.68 / 25000
EI_GPU_S = (23.75 - 9.05) / 25000
GRADIENT_PASS = 25.6 / 10
CORRUPTION_CORE_S = 37 * 3600 / (50_000 * 15 * 5)
IMAGENET_C_IMAGES = 50_000
STABILITY_FRAME_CORE_S = 1 / 60.7  # bench_stability.json: 60.7 frames/s, decoding and PNG included
FAISS_FLAT_MACS_PER_CORE_S = 39.5e9  # bench_overlap.json: exact inner-product search, one core


@dataclass(frozen=True)
class Rates:
    device: str  # where the embedding rates were measured
    reference_arch: str  # the architecture they were measured with
    images_per_s: float  # image embedding end to end (decoding, preprocessing, the model)
    data_path_images_per_s: float | None  # decoding alone: no architecture embeds faster
    captions_per_s: float
    decode_core_s: float  # one core decoding one COCO-size JPEG
    startup_s: float  # fixed cost of one GPU job (imports, CUDA, building the model)
    gradient_pass: float  # one attack step (forward + backward), in clean forward passes
    corruption_core_s: Mapping[str, float]  # one core, one corrupted image, by corruption
    corruption_default_core_s: float  # a corruption the file does not name
    image_variant_core_s: float
    text_variant_core_s: float
    text_stats_core_s: float
    ei_gpu_s: float
    stability_frame_core_s: float = STABILITY_FRAME_CORE_S  # one core, one ImageNet-P frame
    # one core's multiply-adds per second in an exact faiss search (query x training row x width)
    search_macs_per_core_s: float = FAISS_FLAT_MACS_PER_CORE_S
    gpu_utilisation_percent: float | None = None  # of the measured image path, when recorded
    sources: Mapping[str, str] = field(default_factory=dict)

    def corruption_s(self, name: str) -> float:
        return self.corruption_core_s.get(name, self.corruption_default_core_s)


def _read(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VlstressError(f"{what} not found: {path}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise VlstressError(f"{what} {path} is not readable JSON: {exc}") from None
    if not isinstance(data, dict):
        raise VlstressError(f"{what} {path}: expected a JSON object")
    return data


def _embedding(path: Path) -> dict[str, Any]:
    """The figures of a bench_embedding result."""
    data = _read(path, "rate file")
    try:
        paths = [p for p in data["image_paths"] if p.get("images_per_s")]
        best = max(paths, key=lambda p: p["images_per_s"])
        decode = data.get("decode_only") or {}
        decode_rates = {k: v["images_per_s"] for k, v in decode.items() if isinstance(v, dict)}
        captions = float(data["text"]["captions_per_s"])
        arch = data["provenance"]["model"]["arch"]
    except (KeyError, TypeError, ValueError) as exc:
        raise VlstressError(
            f"rate file {path}: not a benchmarks/bench_embedding.py result ({exc!r} missing)"
        ) from None
    machine = data.get("machine") or {}
    device = machine.get("gpu") or f"CPU ({machine.get('cpu_model', 'unknown')})"
    serial = decode_rates.get("workers=0")
    return {
        "device": device,
        "reference_arch": arch,
        "images_per_s": float(best["images_per_s"]),
        "data_path_images_per_s": max(decode_rates.values()) if decode_rates else None,
        "captions_per_s": captions,
        # one core decoding (the serial data path); the GPU node's 3.9 ms when not measured
        "decode_core_s": 1 / serial if serial else 1 / 258.06,
        "gpu_utilisation_percent": best.get("gpu_utilisation_percent"),
        "sources": {
            "embedding": (
                f"{path}: {best['images_per_s']:,.0f} images/s ({best['path']}), "
                f"{captions:,.0f} captions/s, {arch} on {device}"
            ),
        },
    }


def _jobs(data: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    return [job for job in data.get("run", {}).get("jobs", []) if job.get("stage") == stage]


def _workflow(folder: Path) -> dict[str, Any]:
    for name in WORKFLOW_FILES:
        path = folder / name
        if not path.is_file():
            continue
        data = _read(path, "workflow benchmark")
        images, captions = data.get("images"), data.get("captions")
        fixed = data.get("fixed_s")
        variants = _jobs(data, "image_variants")
        texts = _jobs(data, "text_variants")
        stats = _jobs(data, "text_stats")
        ei = _jobs(data, "ei_scores")
        if not (images and captions and fixed and variants and texts and stats and ei):
            continue
        return {
            "startup_s": float(fixed),
            "image_variant_core_s": sum(j["cpu_s"] for j in variants) / (images * len(variants)),
            "text_variant_core_s": sum(j["cpu_s"] for j in texts) / (captions * len(texts)),
            "text_stats_core_s": sum(j["cpu_s"] for j in stats) / (captions * len(stats)),
            "ei_gpu_s": max(sum(j["s"] for j in ei) / len(ei) - fixed, 0.0) / captions,
            "sources": {
                _label(
                    WORKFLOW_FILES[0]
                ): f"{path}: start-up {fixed} s per job, CPU stages per item"
            },
        }
    return {
        "startup_s": STARTUP_S,
        "image_variant_core_s": IMAGE_VARIANT_CORE_S,
        "text_variant_core_s": TEXT_VARIANT_CORE_S,
        "text_stats_core_s": TEXT_STATS_CORE_S,
        "ei_gpu_s": EI_GPU_S,
        "sources": {
            _label(
                WORKFLOW_FILES[0]
            ): "constants of bench_workflow-h100-notransformers.json (not found)"
        },
    }


def _attack(folder: Path) -> dict[str, Any]:
    path = folder / ATTACK_FILE
    if path.is_file():
        data = _read(path, "attack benchmark")
        steps = (data.get("provenance") or {}).get("params", {}).get("steps")
        passes = data.get("attack_cost_in_clean_passes")
        if steps and passes:
            return {
                "gradient_pass": float(passes) / int(steps),
                "sources": {
                    _label(ATTACK_FILE): f"{path}: {data.get('attack')} = {passes} clean passes"
                },
            }
    return {
        "gradient_pass": GRADIENT_PASS,
        "sources": {
            _label(ATTACK_FILE): "constant: PGD-10 = 25.6 clean passes (bench_attack.json)"
        },
    }


def _corruptions(folder: Path) -> dict[str, Any]:
    for name in CORRUPTION_FILES:
        path = folder / name
        if not path.is_file():
            continue
        data = _read(path, "corruption benchmark")
        rates = {
            n: r["one_core_img_s"]
            for n, r in (data.get("rates") or {}).items()
            if isinstance(r, dict) and r.get("one_core_img_s")
        }
        estimate = (data.get("imagenet_c_estimate") or {}).get("one_core_img_s") or {}
        rates = {**estimate, **rates}
        if not rates:
            continue
        core_s = {n: 1 / float(r) for n, r in rates.items() if r}
        return {
            "corruption_core_s": core_s,
            "corruption_default_core_s": sum(core_s.values()) / len(core_s),
            "sources": {
                _label(CORRUPTION_FILES[1]): f"{path}: one-core rate of {len(core_s)} corruptions"
            },
        }
    return {
        "corruption_core_s": {},
        "corruption_default_core_s": CORRUPTION_CORE_S,
        "sources": {
            _label(CORRUPTION_FILES[1]): (
                "constant: ~37 core-hours for 50,000 x 15 x 5 images at 224 px (README, "
                "bench_corruptions.py); no corruptions.json"
            )
        },
    }


def _stability(folder: Path) -> dict[str, Any]:
    path = folder / STABILITY_FILE
    if path.is_file():
        rate = (_read(path, "stability benchmark").get("imagenet_p") or {}).get(
            "mean_test_frames_per_s"
        )
        if rate:
            return {
                "stability_frame_core_s": 1 / float(rate),
                "sources": {
                    _label(STABILITY_FILE): f"{path}: {float(rate):.1f} frames/s on one core"
                },
            }
    return {
        "stability_frame_core_s": STABILITY_FRAME_CORE_S,
        "sources": {
            _label(STABILITY_FILE): "constant: 60.7 frames/s on one core (bench_stability.json)"
        },
    }


def _overlap(folder: Path) -> dict[str, Any]:
    path = folder / OVERLAP_FILE
    if path.is_file():
        rate = (_read(path, "overlap benchmark").get("flat_search") or {}).get(
            "one_core_macs_per_s"
        )
        if rate:
            return {
                "search_macs_per_core_s": float(rate),
                "sources": {
                    _label(
                        OVERLAP_FILE
                    ): f"{path}: {float(rate) / 1e9:.1f} G multiply-adds/s on one core"
                },
            }
    return {
        "search_macs_per_core_s": FAISS_FLAT_MACS_PER_CORE_S,
        "sources": {
            _label(
                OVERLAP_FILE
            ): "constant: 39.5 G multiply-adds/s on one core (bench_overlap.json)"
        },
    }


def load(rate_file: Path = DEFAULT_RATE_FILE) -> Rates:
    """The rates of an embedding benchmark result and the results beside it."""
    parts = [_embedding(rate_file)]
    folder = rate_file.parent
    parts += [_workflow(folder), _attack(folder), _corruptions(folder), _stability(folder)]
    parts.append(_overlap(folder))
    merged: dict[str, Any] = {"sources": {}}
    for part in parts:
        merged["sources"].update(part.pop("sources"))
        merged.update(part)
    return Rates(**merged)
