"""Bad input gets a clear error naming the item, and leaves no partial output behind."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import run_cli


def make_coco_dir(root: Path, n: int = 3) -> tuple[Path, Path]:
    images = root / "images"
    images.mkdir(parents=True)
    rng = np.random.default_rng(0)
    entries, anns = [], []
    for i in range(1, n + 1):
        name = f"{i:012d}.jpg"
        Image.fromarray(rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)).save(
            images / name, quality=90
        )
        entries.append({"id": i, "file_name": name})
        anns += [
            {"id": i * 10 + k, "image_id": i, "caption": f"photo {i} caption {k}"} for k in range(5)
        ]
    captions = root / "captions.json"
    captions.write_text(json.dumps({"images": entries, "annotations": anns}))
    return images, captions


def download(images: Path, captions: Path, out: Path):
    return run_cli(
        "download",
        "--dataset",
        "t",
        "--kind",
        "coco-dir",
        "--images",
        str(images),
        "--captions",
        str(captions),
        "--out",
        str(out),
        check=False,
    )


def assert_clean_failure(result, *needles: str, absent: Path):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    assert not absent.exists(), f"partial output left behind: {absent}"
    leftovers = (
        [p.name for p in absent.parent.glob(f".{absent.name}*")] if absent.parent.exists() else []
    )
    assert not leftovers, leftovers


def test_coco_dir_roundtrip(tmp_path):
    images, captions = make_coco_dir(tmp_path / "src")
    out = tmp_path / "raw"
    assert download(images, captions, out).returncode == 0
    run_cli(
        "prepare", "--dataset", "t", "--raw", str(out), "--out", str(tmp_path / "manifest.json")
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [e["image_id"] for e in manifest["images"]] == ["1", "2", "3"]
    assert all(len(e["caption"]) == 5 for e in manifest["images"])
    assert manifest["provenance"]["step"] == "prepare"


def test_missing_image(tmp_path):
    images, captions = make_coco_dir(tmp_path / "src")
    (images / "000000000002.jpg").unlink()
    out = tmp_path / "raw"
    assert_clean_failure(
        download(images, captions, out), "image not found", "000000000002.jpg", absent=out
    )


def test_corrupt_jpeg(tmp_path):
    images, captions = make_coco_dir(tmp_path / "src")
    path = images / "000000000003.jpg"
    path.write_bytes(path.read_bytes()[:200])  # truncated JPEG
    out = tmp_path / "raw"
    assert_clean_failure(download(images, captions, out), "corrupt", "000000000003.jpg", absent=out)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"images": [', "not valid JSON"),
        ("", "is empty"),
        ('{"images": []}', "expected an object with 'images' and 'annotations'"),
        (
            '{"images": [{"id": 1}], "annotations": [{"image_id": 1, "caption": "x"}]}',
            "lacks 'id' or 'file_name'",
        ),
    ],
)
def test_malformed_annotations(tmp_path, content, message):
    images, captions = make_coco_dir(tmp_path / "src")
    captions.write_text(content)
    out = tmp_path / "raw"
    assert_clean_failure(download(images, captions, out), message, str(captions), absent=out)


def test_prepare_detects_image_corrupted_after_download(tmp_path):
    images, captions = make_coco_dir(tmp_path / "src")
    raw = tmp_path / "raw"
    download(images, captions, raw)
    (raw / "images" / "000000000001.jpg").write_bytes(b"not a jpeg")
    manifest = tmp_path / "prepared" / "manifest.json"
    result = run_cli(
        "prepare", "--dataset", "t", "--raw", str(raw), "--out", str(manifest), check=False
    )
    assert_clean_failure(result, "corrupt", "000000000001.jpg", absent=manifest)


def test_invalid_flag_values_are_named():
    result = run_cli(
        "evaluate",
        "--manifest",
        "m",
        "--image-emb",
        "a",
        "--text-emb",
        "b",
        "--ks",
        "1,0",
        "--out",
        "x",
        check=False,
    )
    assert result.returncode == 2 and "--ks" in result.stderr and "1,0" in result.stderr
    result = run_cli("download", "--dataset", "d", "--kind", "flickr", "--out", "x", check=False)
    assert result.returncode == 2 and "invalid choice: 'flickr'" in result.stderr


@pytest.mark.slow
def test_unknown_arch_through_the_cli(tmp_path):
    images, captions = make_coco_dir(tmp_path / "src", n=1)
    raw, manifest = tmp_path / "raw", tmp_path / "manifest.json"
    download(images, captions, raw)
    run_cli("prepare", "--dataset", "t", "--raw", str(raw), "--out", str(manifest))
    out = tmp_path / "emb" / "retrieval"
    result = run_cli(
        "embed-retrieval",
        "--manifest",
        str(manifest),
        "--model",
        "mystery",
        "--arch",
        "ViT-Z-1",
        "--pretrained",
        "None",
        "--out",
        str(out),
        check=False,
    )
    assert_clean_failure(
        result, "model 'mystery'", "unknown open_clip architecture 'ViT-Z-1'", absent=out
    )
