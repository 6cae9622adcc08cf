"""The embedded demo dataset: real photos shipped inside scikit-image (`skimage.data`)
with five captions per photo written by this project (vlstress/data/demo_captions.json).

Offline by construction: only images bundled with the scikit-image wheel are used.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.io import sha256_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo kind has no flags of its own."""


CAPTIONS = "data/demo_captions.json"


def demo_captions(resource: str = CAPTIONS) -> dict[str, dict[str, Any]]:
    import json

    return json.loads(resources.files("vlstress").joinpath(resource).read_text(encoding="utf-8"))


def load_photo(loader: str) -> np.ndarray:
    import skimage.data

    try:
        image = getattr(skimage.data, loader)()
    except Exception as exc:  # a loader that would need a download is a packaging error here
        raise VlstressError(
            f"demo image {loader!r} is not available offline in scikit-image: {exc}"
        ) from exc
    if isinstance(image, tuple):  # stereo pairs: keep the left view
        image = image[0]
    return image


def materialize(args: argparse.Namespace, out: Path, resource: str = CAPTIONS) -> dict[str, Any]:
    import skimage

    entries = list(demo_captions(resource).items())
    if args.max_images:
        entries = entries[: args.max_images]
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    files: dict[str, str] = {}
    for image_id, (name, spec) in enumerate(entries, start=1):
        file_name = f"{name}.png"
        path = out / "images" / file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(load_photo(spec["loader"])).convert("RGB").save(
            path, format="PNG", optimize=False
        )
        files[f"images/{file_name}"] = sha256_file(path)
        images.append({"id": image_id, "file_name": file_name})
        annotations.extend(
            {"image_id": image_id, "id": image_id * 100 + k, "caption": c}
            for k, c in enumerate(spec["captions"])
        )
    return {
        "captions": {"images": images, "annotations": annotations},
        "files": files,
        "source": {
            "package": "scikit-image",
            "version": skimage.__version__,  # type: ignore[attr-defined]  # missing from its stub
            "captions": f"vlstress/{resource}",
        },
    }
