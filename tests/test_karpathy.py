"""The karpathy dataset kind on the real shared data (skips without it) and its selection logic."""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import pytest

from vlstress import cli
from vlstress.caption_data import karpathy
from vlstress.errors import VlstressError

# The 22 images of ../shared/data/coco-mini that are in the Karpathy 5k test split (its README).
COCO_MINI_TEST_IDS = (
    "22192,22892,99053,105912,153797,172648,177861,241668,252639,253695,255165,"
    "262440,290843,361919,369771,439180,453302,458045,519208,519611,536038,540280"
)


def test_pinned_checksums_are_those_of_the_released_files(shared_data):
    src = karpathy.sources()
    rococo = shared_data / "rococo"
    pinned = {src["karpathy_test"]["file"]: src["karpathy_test"]} | {
        s["file"]: s for s in src["rococo"]["sets"].values()
    }
    for name, spec in pinned.items():
        data = (rococo / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == spec["sha256"], name
        assert len(data) == spec["size"], name


def test_coco_mini_karpathy_offline(tmp_path, shared_data, monkeypatch):
    """The offline recipe of docs/download.md: 22 real photos, their Karpathy captions, the official
    RoCOCO files."""
    rococo = shared_data / "rococo"
    raw = tmp_path / "raw"
    argv = ["download", "--dataset", "coco-mini-karpathy", "--kind", "karpathy", "--out", str(raw)]
    argv += [
        "--images",
        str(shared_data / "coco-mini" / "images"),
        "--image-ids",
        COCO_MINI_TEST_IDS,
    ]
    argv += [
        "--karpathy-url",
        str(rococo / "coco_karpathy_test.json"),
        "--rococo-url",
        rococo.as_uri(),
    ]
    argv += [
        "--coco-url",
        "http://127.0.0.1:9/never-used",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--retries",
        "1",
    ]
    assert cli.main(argv) == 0

    official = json.loads((rococo / "coco_karpathy_test.json").read_text())
    wanted = {int(i) for i in COCO_MINI_TEST_IDS.split(",")}
    expected = [e for e in official if int(e["image"][-16:-4]) in wanted]
    assert len(expected) == 22
    assert json.loads((raw / "captions.json").read_text()) == expected
    assert len(list((raw / "images").iterdir())) == 22
    for name in karpathy.rococo_sets():
        full = {e["image"]: e for e in json.loads((rococo / f"{name}.json").read_text())}
        text = (raw / "rococo" / f"{name}.json").read_text()
        # official format, same entries
        assert text == json.dumps([full[e["image"]] for e in expected])
    record = json.loads((raw / "download.json").read_text())
    assert record["source"]["n_images"] == 22 and record["source"]["coco_images"]["n_fetched"] == 0
    assert not (tmp_path / "cache").exists()  # every source was local: nothing cached

    manifest = tmp_path / "manifest.json"
    assert (
        cli.main(
            [
                "prepare",
                "--dataset",
                "coco-mini-karpathy",
                "--raw",
                str(raw),
                "--out",
                str(manifest),
            ]
        )
        == 0
    )
    entries = json.loads(manifest.read_text())["images"]
    assert len(entries) == 22
    by_image = {e["image"]: e for e in expected}
    for entry in entries:
        assert entry["caption"] == [c.strip() for c in by_image[entry["image"]]["caption"]]
        assert Path(entry["path"]).name == Path(entry["image"]).name
        assert str(int(entry["image"][-16:-4])) == entry["image_id"]


def test_coco_mini_wrong_file_for_pinned_checksum(tmp_path, shared_data, capsys):
    """A file that is not the released one (here: the val split) is refused, naming it."""
    rococo = shared_data / "rococo"
    wrong = rococo / "coco_karpathy_val.json"
    argv = ["download", "--dataset", "x", "--kind", "karpathy", "--out", str(tmp_path / "raw")]
    argv += ["--image-ids", "22192", "--karpathy-url", str(wrong), "--rococo-url", str(rococo)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "mismatch" in err and str(wrong) in err
    assert not (tmp_path / "raw").exists()


def entries(ids):
    return [{"image": f"val2014/COCO_val2014_{i:012d}.jpg", "caption": ["a", "b"]} for i in ids]


def test_select_keeps_split_order_and_max_images():
    data = entries([5, 3, 9, 1])
    assert karpathy.select(data, [1, 5], None, "x") == [data[0], data[3]]
    assert karpathy.select(data, None, 2, "x") == data[:2]
    assert karpathy.select(data, [9, 1, 3], 2, "x") == [data[1], data[2]]
    with pytest.raises(VlstressError, match="not in the Karpathy test split.*: 7"):
        karpathy.select(data, [1, 7], None, "x")
    with pytest.raises(VlstressError, match="COCO_val2014"):
        karpathy.select([{"image": "train2014/x.jpg", "caption": ["a"]}], None, None, "x")


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, None),
        ("", None),
        ("22192", [22192]),
        (22192, [22192]),
        ("3, 1,3", [3, 1]),
    ],
)
def test_parse_image_ids(value, expected):
    assert karpathy.parse_image_ids(value) == expected


def test_parse_image_ids_rejects_garbage():
    with pytest.raises(VlstressError, match="abc"):
        karpathy.parse_image_ids("1,abc")


def test_local_images_are_found_under_both_namings(tmp_path):
    from PIL import Image

    local = tmp_path / "local"
    local.mkdir()
    for name in ("000000000007.jpg", "COCO_val2014_000000000008.jpg"):
        Image.new("RGB", (4, 4)).save(local / name)
    wanted = [
        (karpathy.image_file(i), "http://127.0.0.1:9/never", karpathy.local_names(i))
        for i in (7, 8)
    ]
    fetched = karpathy.gather_images(
        wanted, local, tmp_path / "out", {"retries": 1}, workers=1, desc="t"
    )
    assert fetched == 0 and sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        karpathy.image_file(7),
        karpathy.image_file(8),
    ]
    with pytest.raises(VlstressError, match="local images folder not found"):
        karpathy.gather_images(
            wanted, tmp_path / "nope", tmp_path / "out2", {}, workers=1, desc="t"
        )


def test_cli_flags_exist():
    parser = argparse.ArgumentParser()
    karpathy.add_arguments(parser)
    args = parser.parse_args(
        [
            "--image-ids",
            "None",
            "--coco-url",
            "None",
            "--karpathy-url",
            "None",
            "--rococo-url",
            "None",
        ]
    )
    assert (
        args.image_ids is None
        and args.coco_url is None
        and args.karpathy_url is None
        and args.rococo_url is None
    )
