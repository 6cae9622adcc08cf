"""Typographic attacks: a wrong class name per image, seeded styles, pixels changed inside the
text box only, byte-identical reruns, all-or-nothing errors and the `vlstress typographic`
command."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.corruptions.imagenet_c import load_rgb, resize_center_crop
from vlstress.suites.typographic import overlay as typographic
from vlstress.suites.typographic.commands import typographic as typographic_command
from vlstress.testsets import manifest as cls_manifest
from vlstress.testsets.manifest import ClassificationSet

from test_corruptions import make_clean_set


@pytest.fixture()
def clean(tmp_path: Path) -> ClassificationSet:
    data = make_clean_set(tmp_path / "clean", sizes=[(64 + 9 * i, 48 + 7 * i) for i in range(8)])
    data.classes = ["cat", "dog", "sports car"]
    return data


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_wrong_class_is_uniform_among_the_others():
    rng = np.random.default_rng(0)
    for label in range(4):
        counts = Counter(typographic.wrong_class(label, 4, rng) for _ in range(3000))
        assert label not in counts and set(counts) == set(range(4)) - {label}
        assert all(abs(c / 3000 - 1 / 3) < 0.04 for c in counts.values()), counts


def test_generate_is_deterministic_and_writes_wrong_names(clean, tmp_path):
    data = typographic.generate(clean, 7, tmp_path / "a", size=96, progress=False)
    typographic.generate(clean, 7, tmp_path / "b", size=96, progress=False)
    images = files(tmp_path / "a")
    images.pop("manifest.json")  # differs: its root names the folder
    assert len(images) == 8 and all(
        images[k] == v for k, v in files(tmp_path / "b").items() if k != "manifest.json"
    )
    loaded = cls_manifest.load(tmp_path / "a" / "manifest.json")
    assert (
        loaded.to_dict() == data.to_dict()
        and loaded.kind == "typographic"
        and loaded.root == str(tmp_path / "a")
    )
    assert loaded.labels == clean.labels
    for entry in loaded.images:
        assert (
            entry["written"] != entry["label"] and entry["text"] == clean.classes[entry["written"]]
        )
        assert entry["source_path"].startswith(clean.root)
    assert (
        loaded.source["font"]["file"] == typographic.FONT_FILE
        and len(loaded.source["font"]["sha256"]) == 64
    )
    other = typographic.generate(clean, 8, tmp_path / "c", size=96, progress=False)
    assert [e["box"] for e in other.images] != [e["box"] for e in data.images]


def wcag(rgb) -> float:
    """WCAG 2 relative luminance, written out here (not the module's)."""

    def channel(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(float(v)) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(l1: float, l2: float) -> float:
    return (max(l1, l2) + 0.05) / (min(l1, l2) + 0.05)


def test_the_text_is_legible_against_its_background(clean, tmp_path):
    """Every fill has a WCAG contrast >= 4.5 with the mean colour under its box (recomputed here
    from the clean image), every stroke >= 4.5 with its fill, and the recorded contrasts are
    those."""
    data = typographic.generate(clean, 3, tmp_path / "t", size=96, progress=False)
    moved = 0
    for index, entry in enumerate(data.images):
        image = resize_center_crop(load_rgb(Path(entry["source_path"])), 96)
        under = np.asarray(image.crop(tuple(entry["box"])), dtype=np.float64).reshape(-1, 3)
        achieved = ratio(wcag(entry["fill"]), wcag(under.mean(axis=0)))
        assert achieved >= 4.5 and achieved == pytest.approx(entry["contrast"], rel=1e-9)
        if entry["stroke_width"]:
            stroke = ratio(wcag(entry["stroke_fill"]), wcag(entry["fill"]))
            assert stroke >= 4.5 and stroke == pytest.approx(entry["stroke_contrast"], rel=1e-9)
        else:
            assert entry["stroke_contrast"] is None
        rng = typographic.image_rng(3, index)
        typographic.wrong_class(entry["label"], len(data.classes), rng)
        rng.uniform(*typographic.FONT_FRACTION)
        drawn = [int(v) for v in rng.integers(0, 256, 3)]  # the seeded colour before the fix
        moved += drawn != entry["fill"]
    assert moved  # some seeded colours were too close to their background: the check can fail
    # a grey on grey is moved to black or white, as little as needed
    fill, achieved = typographic.legible((120, 120, 120), wcag((128, 128, 128)))
    assert achieved >= 4.5 and ratio(wcag(fill), wcag((128, 128, 128))) == pytest.approx(achieved)
    assert max(fill) < 120 or min(fill) > 120


def test_text_changes_pixels_inside_its_box_only(clean, tmp_path):
    data = typographic.generate(clean, 1, tmp_path / "t", size=0, progress=False)
    for entry, path in zip(data.images, data.image_paths()):
        before = np.asarray(load_rgb(entry["source_path"]), dtype=int)
        after = np.asarray(Image.open(path), dtype=int)
        changed = np.abs(after - before).sum(axis=2) > 0
        left, top, right, bottom = entry["box"]
        assert 0 <= left < right <= after.shape[1] and 0 <= top < bottom <= after.shape[0]
        inside = np.zeros_like(changed)
        inside[top:bottom, left:right] = True
        assert not changed[~inside].any(), entry
        assert changed[inside].mean() > 0.05, entry  # the text is really there
        # the box is tight: ink touches each of its sides
        rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
        assert top <= rows[0] <= top + 2 and bottom - 3 <= rows[-1] < bottom, entry
        assert left <= cols[0] <= left + 2 and right - 3 <= cols[-1] < right, entry


def test_long_names_shrink_to_fit():
    from PIL import ImageDraw

    classes = ["a", "a long class name for a small image"]
    style = typographic.draw_style((160, 100), 0, classes, np.random.default_rng(0))
    left, top, right, bottom = style.box
    assert style.text == classes[1] and right <= 160 and bottom <= 100
    # shrunk to the largest size that fits: one pixel more would not
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    box_left, _, r, _ = typographic.text_box(
        measure, style.text, style.font_size + 1, style.stroke_width
    )
    assert r - box_left > 160
    with pytest.raises(VlstressError, match="does not fit"):
        typographic.draw_style((32, 32), 0, ["a", "automobile"], np.random.default_rng(0))


def test_resize_policy_and_errors(clean, tmp_path):
    data = typographic.generate(clean, 0, tmp_path / "s", size=64, progress=False)
    assert all(Image.open(p).size == (64, 64) for p in data.image_paths())
    (Path(clean.root) / "imgs/im5.png").write_bytes(b"garbage")
    with pytest.raises(VlstressError, match="im5.png"):
        typographic.generate(clean, 0, tmp_path / "bad", progress=False)
    assert not (tmp_path / "bad").exists()
    one_class = ClassificationSet(
        **{
            **clean.__dict__,
            "classes": ["cat"],
            "class_ids": ["c"],
            "images": [{"path": "imgs/im0.png", "label": 0}],
        }
    )
    with pytest.raises(VlstressError, match="at least 2 classes"):
        typographic.generate(one_class, 0, tmp_path / "one", progress=False)


def test_command(clean, tmp_path):
    # a test-set folder, as the workflow passes it
    cls_manifest.write(Path(clean.root) / "manifest.json", clean)
    parser = argparse.ArgumentParser()
    typographic_command.add_arguments(parser)
    args = parser.parse_args(
        ["--manifest", clean.root, "--seed", "2", "--size", "80", "--out", str(tmp_path / "t")]
    )
    typographic_command.run(args)
    data = cls_manifest.load(tmp_path / "t" / "manifest.json")
    assert data.provenance["step"] == "typographic" and data.provenance["seed"] == 2
    assert (
        data.provenance["font"]["sha256"] == data.source["font"]["sha256"]
        and "freetype2" in data.provenance["packages"]
    )
    assert len(data.images) == len(clean.images)


def test_real_photos(shared_data, tmp_path):
    photos = sorted((shared_data / "coco-mini" / "images").glob("*.jpg"))[:3]
    clean = ClassificationSet(
        dataset="coco",
        kind="folders",
        classes=["person", "dog", "pizza"],
        class_ids=["1", "2", "3"],
        root="/",
        images=[{"path": str(p).lstrip("/"), "label": i} for i, p in enumerate(photos)],
    )
    data = typographic.generate(clean, 0, tmp_path / "t", progress=False)
    for entry, path in zip(data.images, data.image_paths()):
        assert Image.open(path).size == (224, 224) and entry["written"] != entry["label"]
        before = np.asarray(resize_center_crop(load_rgb(entry["source_path"]), 224), dtype=int)
        changed = np.abs(np.asarray(Image.open(path), dtype=int) - before).sum(axis=2) > 0
        left, top, right, bottom = entry["box"]
        assert changed[top:bottom, left:right].sum() == changed.sum() > 0
