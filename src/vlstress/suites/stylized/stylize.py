"""A stylized copy of a classification test set (`vlstress stylize`): each image, resized and
centre cropped to `size` as the corruptions are, gets the AdaIN style of a seeded choice among the
style images (resized and cropped alike). Writes OUT/images/<index>.png and OUT/manifest.json
(entries keep `label` and add `style` and `source_path`). All or nothing (a temporary folder
replaces OUT when every image succeeded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlstress.io import atomic_dir
from vlstress.suites.corruptions.imagenet_c import load_rgb, resize_center_crop, save_image
from vlstress.suites.stylized.adain import Stylizer
from vlstress.suites.stylized.styles import choose
from vlstress.testsets.manifest import ClassificationSet
from vlstress.testsets.manifest import write as write_manifest


def _tensor(image, size: int):
    import torch

    pixels = np.asarray(resize_center_crop(image, size), dtype=np.float32) / 255.0
    return torch.from_numpy(pixels).permute(2, 0, 1)


def generate(
    clean: ClassificationSet,
    stylizer: Stylizer,
    styles: list[Path],
    *,
    alpha: float,
    seed: int,
    size: int,
    out_dir: str | Path,
    batch_size: int = 8,
    provenance: dict[str, Any] | None = None,
    progress: bool = True,
) -> ClassificationSet:
    import torch
    from tqdm.auto import tqdm

    style_pixels = [_tensor(load_rgb(path), size) for path in styles]
    chosen = [choose(styles, seed, str(entry["path"])) for entry in clean.images]
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        (tmp / "images").mkdir()
        bar = tqdm(total=len(clean.images), desc="stylize", unit="img", disable=not progress)
        for start in range(0, len(clean.images), batch_size):
            rows = range(start, min(start + batch_size, len(clean.images)))
            content = torch.stack(
                [_tensor(load_rgb(Path(clean.root) / clean.images[i]["path"]), size) for i in rows]
            )
            style = torch.stack([style_pixels[chosen[i]] for i in rows])
            out = stylizer(content, style, alpha)
            for i, image in zip(rows, out):
                pixels = (image.permute(1, 2, 0).numpy() * 255.0 + 0.5).astype(np.uint8)
                save_image(pixels, tmp / "images" / f"{i:06d}.png", "png")
            bar.update(len(rows))
        bar.close()
        images = [
            {
                "path": f"images/{i:06d}.png",
                "label": entry["label"],
                "style": styles[chosen[i]].name,
                "source_path": str(Path(clean.root) / entry["path"]),
            }
            for i, entry in enumerate(clean.images)
        ]
        data = clean.derived(
            f"{clean.dataset}-stylized",
            "stylized",
            str(out_dir),
            images,
            {
                "method": "AdaIN (Huang & Belongie 2017), pytorch-AdaIN's networks",
                "alpha": alpha,
                "seed": seed,
                "size": size,
                "styles": [p.name for p in styles],
                "weights": stylizer.described,
            },
            provenance=provenance or {},
        )
        write_manifest(tmp / "manifest.json", data)
    return data
