"""Corruptions: the registry against imagecorruptions, seeded per-image determinism, the
ImageNet-C resize policy, corrupted sets (1 vs 2 workers byte-identical, all or nothing)
and the `vlstress corrupt` command."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.corruptions import imagenet_c as corruptions
from vlstress.suites.corruptions.commands import corrupt as corrupt_command
from vlstress.testsets import manifest as cls_manifest
from vlstress.testsets.manifest import ClassificationSet

RANDOM = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "glass_blur",
    "motion_blur",
    "snow",
    "frost",
    "fog",
    "elastic_transform",
    "speckle_noise",
    "spatter",
}


def make_clean_set(
    root: Path, sizes=((48, 40), (40, 56), (36, 36), (64, 64), (50, 33))
) -> ClassificationSet:
    """Small smooth photos-like images (one grayscale) under root, labels cycling over 3 classes."""
    rng = np.random.default_rng(0)
    images = []
    for i, (w, h) in enumerate(sizes):
        field = rng.random((4, 4, 3))
        array = np.asarray(
            Image.fromarray((field * 255).astype(np.uint8)).resize((w, h), Image.BILINEAR)
        )
        image = Image.fromarray(array).convert("L") if i == 2 else Image.fromarray(array)
        (root / "imgs").mkdir(parents=True, exist_ok=True)
        image.save(root / "imgs" / f"im{i}.png")
        images.append({"path": f"imgs/im{i}.png", "label": i % 3})
    return ClassificationSet(
        dataset="toy",
        kind="folders",
        classes=["cat", "dog", "car"],
        class_ids=["c", "d", "r"],
        root=str(root),
        images=images,
    )


@pytest.fixture()
def clean(tmp_path: Path) -> ClassificationSet:
    return make_clean_set(tmp_path / "clean")


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


# --- registry and one image ------------------------------------------------------------------


def test_registry_is_imagecorruptions_with_its_families():
    import imagecorruptions

    assert list(corruptions.CORRUPTIONS) == imagecorruptions.get_corruption_names("all")
    for family in ("noise", "blur", "weather", "digital"):
        assert [
            n for n, f in corruptions.CORRUPTIONS.items() if f == family
        ] == imagecorruptions.get_corruption_names(family)
    assert [
        n for n, f in corruptions.CORRUPTIONS.items() if f == "extra"
    ] == imagecorruptions.get_corruption_names("validation")
    assert corruptions.IMAGENET_C == imagecorruptions.get_corruption_names("common")


def test_every_corruption_is_seeded_keeps_odd_shapes_and_leaves_numpy_state_alone():
    image = np.random.default_rng(1).integers(0, 256, (33, 47, 3), dtype=np.uint8)
    for name in corruptions.CORRUPTIONS:
        np.random.seed(5)
        before = np.random.get_state()[1].copy()
        first = corruptions.corrupt_image(image, name, 3, 7)
        assert np.array_equal(np.random.get_state()[1], before), name
        np.random.random(3)  # whatever ran before does not matter
        again = corruptions.corrupt_image(image, name, 3, 7)
        other = corruptions.corrupt_image(image, name, 3, 8)
        assert first.shape == (33, 47, 3) and first.dtype == np.uint8, name
        assert first.tobytes() == again.tobytes(), name
        assert (first.tobytes() != other.tobytes()) == (name in RANDOM), name


def test_noise_grows_with_severity():
    image = np.full((64, 64, 3), 128, np.uint8)
    diffs = [
        np.abs(corruptions.corrupt_image(image, "gaussian_noise", s, 3).astype(float) - 128).mean()
        for s in corruptions.SEVERITIES
    ]
    assert all(a < b for a, b in zip(diffs, diffs[1:])), diffs


def test_bad_name_or_severity():
    image = np.zeros((32, 32, 3), np.uint8)
    with pytest.raises(VlstressError, match="unknown corruption"):
        corruptions.corrupt_image(image, "rain", 1, 0)
    with pytest.raises(VlstressError, match="severity"):
        corruptions.corrupt_image(image, "fog", 6, 0)


def test_resize_center_crop_is_torchvision_resize_256_crop_224():
    from torchvision import transforms

    rng = np.random.default_rng(2)
    reference = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    for w, h in [(640, 426), (424, 640), (300, 300), (100, 80)]:
        image = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
        ours = corruptions.resize_center_crop(image, 224)
        assert ours.size == (224, 224)
        assert np.array_equal(np.asarray(ours), np.asarray(reference(image))), (w, h)
    image = Image.new("RGB", (97, 61))
    assert corruptions.resize_center_crop(image, 0) is image
    assert corruptions.resize_center_crop(image, 64).size == (64, 64)


def test_as_perturbation_on_channels_first_float_images():
    import torch

    apply = corruptions.as_perturbation("shot_noise", 2)
    image = torch.rand(3, 40, 48)
    out = apply(image)
    assert out.shape == image.shape and out.dtype == torch.float32
    assert torch.equal(out, apply(image.clone())) and not torch.equal(out, image)
    array = image.numpy()
    assert np.allclose(apply(array), out.numpy())


# --- a corrupted set ---------------------------------------------------------------------------


def test_generate_writes_severity_folders_and_a_manifest(clean, tmp_path):
    out = tmp_path / "out"
    data = corruptions.generate(
        clean, "gaussian_noise", [1, 3], 11, out, size=32, workers=1, progress=False
    )
    assert sorted(files(out)) == [f"s{s}/{i:06d}.png" for s in (1, 3) for i in range(5)]
    loaded = cls_manifest.load(out / "manifest.json")
    assert loaded.to_dict() == data.to_dict()
    assert (
        loaded.root == str(out) and loaded.kind == "corruption" and loaded.classes == clean.classes
    )
    assert [e["severity"] for e in loaded.images] == [1] * 5 + [3] * 5
    assert [e["label"] for e in loaded.images] == clean.labels * 2
    assert loaded.images[6]["source_path"] == str(Path(clean.root) / "imgs/im1.png")
    for path in loaded.image_paths():
        assert Image.open(path).size == (32, 32)
    # severity 3 is further from the clean crop than severity 1, image by image
    for i in range(5):
        crop = np.asarray(
            corruptions.resize_center_crop(
                corruptions.load_rgb(Path(clean.root) / f"imgs/im{i}.png"), 32
            ),
            float,
        )
        d1, d3 = (
            np.abs(np.asarray(Image.open(out / f"s{s}/{i:06d}.png"), float) - crop).mean()
            for s in (1, 3)
        )
        assert d1 < d3


def test_files_do_not_depend_on_workers_chunks_or_order(clean, tmp_path):
    one = corruptions.generate(
        clean, "frost", [2, 5], 4, tmp_path / "one", size=0, workers=1, chunk_size=5, progress=False
    )
    two = corruptions.generate(
        clean, "frost", [2, 5], 4, tmp_path / "two", size=0, workers=2, chunk_size=1, progress=False
    )
    assert files(tmp_path / "one") == files(tmp_path / "two")
    assert [dict(e, source_path=None) for e in one.images] == [
        dict(e, source_path=None) for e in two.images
    ]
    # an image's corruption depends on its manifest path, not its position
    flipped = ClassificationSet(**{**clean.__dict__, "images": clean.images[::-1]})
    corruptions.generate(
        flipped, "frost", [2], 4, tmp_path / "flipped", size=0, workers=1, progress=False
    )
    assert (tmp_path / "flipped/s2/000000.png").read_bytes() == (
        tmp_path / "one/s2/000004.png"
    ).read_bytes()
    other_seed = corruptions.generate(
        clean, "frost", [2], 5, tmp_path / "seed5", size=0, workers=1, progress=False
    )
    assert other_seed.images[0]["path"] == "s2/000000.png"
    assert (tmp_path / "seed5/s2/000000.png").read_bytes() != (
        tmp_path / "one/s2/000000.png"
    ).read_bytes()


@pytest.mark.parametrize("workers", [1, 2])
def test_unreadable_image_names_it_and_writes_nothing(clean, tmp_path, workers):
    (Path(clean.root) / "imgs/im3.png").write_bytes(b"not a png")
    out = tmp_path / "out"
    with pytest.raises(VlstressError, match="im3.png"):
        corruptions.generate(
            clean, "contrast", [1], 0, out, size=32, workers=workers, chunk_size=1, progress=False
        )
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["clean"]  # no temporary folder left either


def test_too_small_for_imagecorruptions(clean, tmp_path):
    tiny = make_clean_set(tmp_path / "tiny", sizes=((40, 20),))
    with pytest.raises(VlstressError, match="cannot corrupt image .*im0.png"):
        corruptions.generate(
            tiny, "contrast", [1], 0, tmp_path / "out", size=0, workers=1, progress=False
        )
    with pytest.raises(VlstressError, match="size must be"):
        corruptions.generate(
            clean, "contrast", [1], 0, tmp_path / "out", size=16, workers=1, progress=False
        )


# --- the command -------------------------------------------------------------------------------


def run_command(*argv: str) -> None:
    parser = argparse.ArgumentParser()
    corrupt_command.add_arguments(parser)
    corrupt_command.run(parser.parse_args([str(a) for a in argv]))


def test_command_writes_a_classification_manifest_with_provenance(clean, tmp_path):
    cls_manifest.write(tmp_path / "clean.json", clean)
    out = tmp_path / "c"
    run_command(
        "--manifest",
        tmp_path / "clean.json",
        "--corruption",
        "jpeg_compression",
        "--severities",
        "1,5",
        "--seed",
        3,
        "--size",
        40,
        "--workers",
        1,
        "--out",
        out,
    )
    data = cls_manifest.load(out / "manifest.json")
    assert data.source["corruption"] == "jpeg_compression" and data.source["severities"] == [1, 5]
    assert data.provenance["step"] == "corrupt" and data.provenance["seed"] == 3
    assert data.provenance["packages"]["imagecorruptions-imaug"] == "1.1.5"
    assert len(data.images) == 10 and Image.open(data.image_paths()[0]).size == (40, 40)


def test_command_rejects_bad_flags(tmp_path):
    for flags in (
        ["--corruption", "rain"],
        ["--corruption", "fog", "--size", "8"],
        ["--corruption", "fog", "--workers", "-1"],
    ):
        with pytest.raises(SystemExit):
            run_command("--manifest", "m.json", "--seed", 0, "--out", tmp_path / "o", *flags)
    with pytest.raises(VlstressError, match="severity"):
        corruptions.generate(
            make_clean_set(tmp_path / "c"), "fog", [6], 0, tmp_path / "o", progress=False
        )
    assert not (tmp_path / "o").exists()


def test_real_photos(shared_data, tmp_path):
    photos = sorted((shared_data / "coco-mini" / "images").glob("*.jpg"))[:2]
    clean = ClassificationSet(
        dataset="coco",
        kind="folders",
        classes=["a", "b"],
        class_ids=["a", "b"],
        root="/",
        images=[{"path": str(p).lstrip("/"), "label": i} for i, p in enumerate(photos)],
    )
    data = corruptions.generate(clean, "snow", [4], 0, tmp_path / "snow", workers=1, progress=False)
    for path in data.image_paths():
        assert Image.open(path).size == (224, 224)


# ----------------------------------------------------------------------------- evaluate-corruptions


def _condition_files(root: Path, corruption: str, severity: int, predicted: list[int]) -> None:
    """A corrupted copy of a 6-image, 3-class set (every image of `severity`) and the model's
    embeddings of it: image i is predicted as class predicted[i] (one-hot rows)."""
    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.testsets import manifest as testsets

    images = [
        {"path": f"{i}.png", "label": label, "severity": severity}
        for i, label in enumerate([0, 0, 1, 1, 2, 2])
    ]
    folder = root / "data" / "corruptions" / corruption / f"s{severity}"
    data = testsets.ClassificationSet(
        "objects-c", "corruption", ["a", "b", "c"], ["a", "b", "c"], str(folder), images
    )
    testsets.write(folder / "manifest.json", data)
    emb = root / "results/embeddings/m/zeroshot/corrupted" / f"{corruption}_s{severity}.npy"
    write_npy(emb, np.eye(3, dtype=np.float32)[predicted])
    write_json(sidecar(emb), _meta())


def _meta() -> dict:
    model = {"slug": "m", "arch": "X", "weights_label": "random-init (seed 0)"}
    return {"provenance": {"model": model, "seed": 0, "device": "cpu"}}


def _corruption_project(root: Path) -> tuple[Path, dict[tuple[str, int], float]]:
    """params.yaml (the demo's, corruptions fog and gaussian_noise at severities 1 and 5), the
    clean classifier and every condition's files; the top-1 each condition must give."""
    import yaml

    from vlstress.io import sidecar, write_json, write_npy

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["corruptions"].update(names=["fog", "gaussian_noise"], severities=[1, 5])
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    clf = root / "results/embeddings/m/classifiers" / f"{params['corruptions']['testset']}.npy"
    write_npy(clf, np.eye(3, dtype=np.float32))
    write_json(sidecar(clf), {**_meta(), "classes": ["a", "b", "c"], "templates_source": "single"})
    predictions = {
        ("fog", 1): [0, 0, 1, 1, 2, 2],  # all right
        ("fog", 5): [0, 1, 1, 2, 2, 0],  # 3 of 6
        ("gaussian_noise", 1): [0, 0, 1, 1, 2, 0],  # 5 of 6
        ("gaussian_noise", 5): [1, 1, 2, 2, 0, 0],  # none
    }
    for (corruption, severity), predicted in predictions.items():
        _condition_files(root, corruption, severity, predicted)
    expected = {
        key: 100 * sum(p == t for p, t in zip(v, [0, 0, 1, 1, 2, 2])) / 6
        for key, v in predictions.items()
    }
    return root / "params.yaml", expected


def _evaluate_corruptions(*argv: str) -> None:
    from vlstress.suites.corruptions.commands import evaluate_corruptions

    parser = argparse.ArgumentParser()
    evaluate_corruptions.add_arguments(parser)
    evaluate_corruptions.run(parser.parse_args(list(argv)))


def test_evaluate_corruptions_writes_one_record_per_condition(tmp_path, monkeypatch):
    from vlstress.record import read_record

    monkeypatch.chdir(tmp_path)
    params, expected = _corruption_project(tmp_path)
    _evaluate_corruptions("--params", str(params), "--model", "m", "--out-dir", "out")
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == sorted(
        name
        for c, s in expected
        for name in (
            f"corruption-{c}-s{s}.json",
            f"corruption-{c}-s{s}.json.json",
            f"corruption-{c}-s{s}.outcomes.npz",
        )
    )
    for (corruption, severity), top1 in expected.items():
        record = read_record(tmp_path / "out" / f"corruption-{corruption}-s{severity}.json")
        assert record.task == "corruption"
        assert record.condition == {"corruption": corruption, "severity": severity}
        assert record.metrics["top1"] == pytest.approx(top1)
        assert record.dataset["n_images"] == 6


def test_evaluate_corruptions_writes_nothing_when_one_condition_is_bad(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    params, _ = _corruption_project(tmp_path)
    missing = tmp_path / "results/embeddings/m/zeroshot/corrupted/gaussian_noise_s5.npy"
    missing.unlink()
    with pytest.raises(VlstressError, match="gaussian_noise_s5.npy"):
        _evaluate_corruptions("--params", str(params), "--model", "m", "--out-dir", "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
