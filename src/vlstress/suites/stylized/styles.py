"""Style images: the demo's (textures and non-object photos shipped with scikit-image) or a folder
(Stylized-ImageNet's are Kaggle's Painter by Numbers paintings), and the seeded choice of one per
content image."""

from __future__ import annotations

import hashlib
from pathlib import Path

from vlstress.errors import VlstressError

DEMO = ("brick.png", "grass.png", "gravel.png", "hubble_deep_field.jpg", "ihc.png", "retina.jpg")
EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def style_paths(source: str) -> list[Path]:
    """The style images of `source`, sorted: `demo` or a folder (searched recursively)."""
    if source == "demo":
        import skimage

        folder = Path(skimage.__file__).parent / "data"
        return [folder / name for name in DEMO]
    folder = Path(source)
    if not folder.is_dir():
        raise VlstressError(f"style folder not found: {folder}")
    found = sorted(p for p in folder.rglob("*") if p.suffix.lower() in EXTENSIONS)
    if not found:
        raise VlstressError(f"style folder {folder} holds no image ({', '.join(EXTENSIONS)})")
    return found


def choose(styles: list[Path], seed: int, key: str) -> int:
    """Index of the style of the content image `key` (its manifest path): a hash of (seed, key),
    so a choice does not depend on the other images or their order."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % len(styles)
