"""Image checks shared by every dataset kind: exists, decodes fully, named in errors."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, UnidentifiedImageError

from vlstress.errors import VlstressError


def check_image(path: Path) -> None:
    if not path.is_file():
        raise VlstressError(f"image not found: {path}")
    try:
        with Image.open(path) as img:
            img.load()  # full decode: catches truncated JPEGs that verify() lets through
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise VlstressError(f"image is corrupt or unreadable: {path} ({exc})") from None
