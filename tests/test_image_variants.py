"""Image variants: partners, boxes, mixers (known answers), the faithful files against the
official mix_images.py procedure, the clean mode, determinism and errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlstress import cli
from vlstress.caption_data.manifest import load_manifest
from vlstress.errors import VlstressError
from vlstress.suites.rococo_image import variants

from conftest import embed_set


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    """Five small random photos (different sizes, one grayscale) and a manifest."""
    rng = np.random.default_rng(0)
    entries = []
    for i, (h, w) in enumerate([(40, 60), (50, 50), (64, 48), (30, 70), (45, 45)]):
        path = tmp_path / "images" / f"img{i}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if i == 3:
            Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8), mode="L").save(path)
        else:
            Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(path)
        entries.append(
            {
                "image": f"img{i}.png",
                "path": str(path),
                "image_id": str(i),
                "caption": [f"photo {i}", f"picture {i}"],
            }
        )
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"dataset": "synthetic", "images": entries, "provenance": {}}))
    return manifest


def run(*args: str) -> int:
    return cli.main([str(a) for a in args])


# --- partners and boxes ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5, 100, 5000])
@pytest.mark.parametrize("seed", [1, 10, 100])
def test_partners_are_a_seeded_permutation_never_itself(n, seed):
    partners = variants.partner_indices(n, seed)
    assert sorted(partners.tolist()) == list(range(n))
    assert not np.any(partners == np.arange(n))
    assert np.array_equal(partners, variants.partner_indices(n, seed))


def test_partners_differ_between_seeds_and_need_two_images():
    assert not np.array_equal(variants.partner_indices(50, 1), variants.partner_indices(50, 10))
    with pytest.raises(VlstressError, match="at least 2 images"):
        variants.partner_indices(1, 1)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.9, 0.99, 1.0])
def test_boxes_cover_one_minus_lam_inside_the_image(lam):
    boxes = variants.box_fractions(200, lam, np.random.default_rng(3))
    top, left, h, w = boxes.T
    assert np.allclose(h * w, 1 - lam)
    assert (
        np.all(top >= 0)
        and np.all(left >= 0)
        and np.all(top + h <= 1 + 1e-12)
        and np.all(left + w <= 1 + 1e-12)
    )
    for box in boxes[:20]:
        y, x, bh, bw = variants.pixel_box(box, 384, 384)
        assert 0 <= y and y + bh <= 384 and 0 <= x and x + bw <= 384
        assert abs(bh * bw / 384**2 - (1 - lam)) < 0.01


def test_plan_is_shared_by_mix_and_patch_and_seeded():
    a = variants.make_plan(10, "mix", 0.9, 1)
    b = variants.make_plan(10, "patch", 0.9, 1)
    assert np.array_equal(a.partners, b.partners)
    assert a.box(0) is None and b.box(0) is not None
    with pytest.raises(VlstressError, match="unknown image variant method 'blur'"):
        variants.make_plan(10, "blur", 0.9, 1)


# --- mixers: known answers -------------------------------------------------------------------


def test_mix_known_answer():
    x, p = torch.ones(3, 4, 4), torch.zeros(3, 4, 4)
    assert torch.allclose(variants.mix(x, p, 0.9), torch.full((3, 4, 4), 0.9))
    x, p = torch.full((3, 2, 2), 0.2), torch.full((3, 2, 2), 1.0)
    assert torch.allclose(variants.mix(x, p, 0.75), torch.full((3, 2, 2), 0.4))


def test_patch_known_answer():
    x, p = torch.zeros(3, 10, 10), torch.ones(3, 10, 10)
    out = variants.patch(x, p, 0.75, [0.1, 0.2, 0.5, 0.5])
    expected = torch.zeros(3, 10, 10)
    expected[:, 1:6, 2:7] = 1
    assert torch.equal(out, expected)
    assert torch.equal(x, torch.zeros(3, 10, 10)), "the input image is left untouched"
    # a box of side sqrt(1 - lam) covers 1 - lam of the pixels
    out = variants.patch(
        torch.zeros(3, 100, 100),
        torch.ones(3, 100, 100),
        0.9,
        variants.box_fractions(1, 0.9, np.random.default_rng(0))[0],
    )
    assert abs(out[0].mean().item() - 0.1) < 0.01


def test_lam_one_keeps_the_original_in_both_methods():
    x, p = torch.rand(3, 8, 8), torch.rand(3, 8, 8)
    plan = variants.make_plan(2, "patch", 1.0, 1)
    assert torch.equal(variants.apply(plan, 0, x, p), x)
    assert torch.equal(variants.mix(x, p, 1.0), x)


# --- faithful mode ---------------------------------------------------------------------------


def official_mixed_jpeg(
    image_path: str, partner_path: str, lam: float, out: Path, box=None
) -> bytes:
    """The official mix_images.py procedure for one pair: torchvision Resize((384, 384), bicubic),
    ToTensor, blend (or paste the box), torchvision.utils.save_image to a .jpg."""
    import torchvision.transforms as T
    from torchvision.transforms.functional import InterpolationMode
    from torchvision.utils import save_image

    transform = T.Compose(
        [T.Resize((384, 384), interpolation=InterpolationMode.BICUBIC), T.ToTensor()]
    )
    x = transform(Image.open(image_path).convert("RGB"))
    p = transform(Image.open(partner_path).convert("RGB"))
    if box is None:
        mixed = lam * x + (1 - lam) * p
    else:
        y0, x0, bh, bw = box
        mixed = x.clone()
        mixed[:, y0 : y0 + bh, x0 : x0 + bw] = p[:, y0 : y0 + bh, x0 : x0 + bw]
    save_image(mixed, out)
    return out.read_bytes()


@pytest.mark.parametrize("method", ["mix", "patch"])
def test_faithful_files_match_the_official_procedure(dataset, tmp_path, method):
    out = tmp_path / "variant"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            method,
            "--lam",
            "0.9",
            "--seed",
            "1",
            "--out",
            out,
        )
        == 0
    )
    manifest = load_manifest(out / "manifest.json")
    source = load_manifest(dataset)["images"]
    assert manifest["variant"]["evaluation"] == f"image-{method}-lam0.9-seed1"
    for i, entry in enumerate(manifest["images"]):
        partner = entry["partner_index"]
        assert partner != i and entry["partner"] == source[partner]["image"]
        assert entry["caption"] == source[i]["caption"]
        box = None if entry["box"] is None else variants.pixel_box(entry["box"], 384, 384)
        expected = official_mixed_jpeg(
            source[i]["path"], source[partner]["path"], 0.9, tmp_path / f"ref{i}.jpg", box
        )
        assert Path(entry["path"]).read_bytes() == expected, entry["image"]
        with Image.open(entry["path"]) as img:
            assert img.size == (384, 384) and img.format == "JPEG"


def test_faithful_arrays_are_torchvisions_bit_for_bit(dataset):
    """The faithful mode runs in NumPy (no torch in the step): Resize + ToTensor, the blend and
    save_image's quantisation give torchvision's very values."""
    import torchvision.transforms as T
    from torchvision.transforms.functional import InterpolationMode

    transform = T.Compose(
        [T.Resize((384, 384), interpolation=InterpolationMode.BICUBIC), T.ToTensor()]
    )
    paths = [entry["path"] for entry in load_manifest(dataset)["images"]]
    x, p = (variants.faithful_tensor(path) for path in paths[:2])
    tx, tp = (transform(Image.open(path).convert("RGB")) for path in paths[:2])
    assert x.dtype == np.float32 and np.array_equal(x, tx.numpy()) and np.array_equal(p, tp.numpy())
    for lam in (0.9, 0.5, 0.1):
        mixed, expected = variants.mix(x, p, lam), lam * tx + (1 - lam) * tp
        assert np.array_equal(mixed, expected.numpy())
        quantised = expected.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(torch.uint8)
        assert np.array_equal(np.asarray(variants.to_pil(mixed)), quantised.numpy())
        assert np.array_equal(np.asarray(variants.to_pil(expected)), quantised.numpy())


def test_faithful_output_is_byte_identical_across_runs(dataset, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert (
            run(
                "image-variants",
                "--manifest",
                dataset,
                "--method",
                "patch",
                "--lam",
                "0.5",
                "--seed",
                "10",
                "--out",
                out,
            )
            == 0
        )
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b and len(files_a) == 6
    for rel in files_a:
        if rel.name == "manifest.json":  # paths differ (out folder), everything else is equal
            ja, jb = json.loads((a / rel).read_text()), json.loads((b / rel).read_text())
            assert [e["sha256"] for e in ja["images"]] == [e["sha256"] for e in jb["images"]]
        else:
            assert (a / rel).read_bytes() == (b / rel).read_bytes()
    c = tmp_path / "c"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "patch",
            "--lam",
            "0.5",
            "--seed",
            "100",
            "--out",
            c,
        )
        == 0
    )
    assert (c / "images" / "img0.jpg").read_bytes() != (a / "images" / "img0.jpg").read_bytes()


def test_faithful_manifest_is_embeddable_as_plain_images(dataset, tmp_path, tiny_arch):
    out = tmp_path / "variant"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "mix",
            "--lam",
            "0.9",
            "--seed",
            "1",
            "--out",
            out,
        )
        == 0
    )
    emb = tmp_path / "emb.npy"
    embed_set(
        "images",
        out / "manifest.json",
        ["--model", "t", "--arch", tiny_arch, "--pretrained", "None", "--device", "cpu"],
        emb,
    )
    assert np.load(emb).shape == (5, 32)


# --- clean mode and the variant embedding step -----------------------------------------------


def model_flags(arch: str) -> list[str]:
    """The model the originals are embedded with (embed_originals), named by its registry flags."""
    return ["--model", "t", "--arch", arch, "--pretrained", "None", "--seed", "3"]


def embed_originals(dataset: Path, tmp_path: Path, arch: str) -> Path:
    ref = tmp_path / "emb" / "images.npy"
    embed_set(
        "images",
        dataset,
        [
            "--model",
            "t",
            "--arch",
            arch,
            "--pretrained",
            "None",
            "--seed",
            "3",
            "--device",
            "cpu",
            "--batch-size",
            "2",
        ],
        ref,
    )
    return ref


def test_clean_mode_lam_one_reproduces_the_original_embeddings(dataset, tmp_path, tiny_arch):
    ref = embed_originals(dataset, tmp_path, tiny_arch)
    out = tmp_path / "clean"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "mix",
            "--lam",
            "1.0",
            "--seed",
            "1",
            "--mode",
            "clean",
            "--out",
            out,
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["variant"]["mode"] == "clean" and not (out / "images").exists()
    assert all("path" not in e for e in manifest["images"]), (
        "clean variants cannot be embedded as plain images by mistake"
    )
    emb = tmp_path / "clean.npy"
    embed_set(
        "variant", out, [*model_flags(tiny_arch), "--device", "cpu", "--batch-size", "2"], emb
    )
    # lam = 1 gives the very input tensors of `ref`, in the same batches of 2: the same computation,
    # so bit-equal
    assert np.array_equal(np.load(emb), np.load(ref))
    meta = json.loads((tmp_path / "clean.npy.json").read_text())
    ref_meta = json.loads((ref.parent / "images.npy.json").read_text())
    assert meta["provenance"]["model"] == ref_meta["provenance"]["model"]
    assert meta["variant"]["name"] == "mix_lam1.0_seed1"


def test_clean_mode_mixes_the_preprocessed_tensors(dataset, tmp_path, tiny_arch):
    """Clean mix = the model applied to lam * preprocess(x) + (1 - lam) * preprocess(partner)."""
    from vlstress.embedding import models
    from vlstress.embedding.encoders import encode_images, load_rgb

    ref = embed_originals(dataset, tmp_path, tiny_arch)
    out = tmp_path / "clean"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "mix",
            "--lam",
            "0.6",
            "--seed",
            "10",
            "--mode",
            "clean",
            "--out",
            out,
        )
        == 0
    )
    emb = tmp_path / "clean.npy"
    embed_set("variant", out, [*model_flags(tiny_arch), "--device", "cpu"], emb)
    model, preprocess, _ = models.load(models.ModelSpec("t", tiny_arch, None, seed=3), "cpu")
    entries = json.loads((out / "manifest.json").read_text())["images"]
    by_hand = encode_images(
        model,
        lambda i: (
            0.6 * preprocess(load_rgb(entries[i]["source_path"]))
            + 0.4 * preprocess(load_rgb(entries[entries[i]["partner_index"]]["source_path"]))
        ),
        list(range(5)),
        batch_size=64,
        device="cpu",
        load=lambda i: i,
    )
    assert np.allclose(np.load(emb), by_hand, atol=1e-6)
    assert not np.allclose(np.load(emb), np.load(ref), atol=1e-3)


def test_faithful_variant_embedding_uses_the_reference_model(dataset, tmp_path, tiny_arch):
    embed_originals(dataset, tmp_path, tiny_arch)
    out = tmp_path / "faithful"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "patch",
            "--lam",
            "0.9",
            "--seed",
            "1",
            "--out",
            out,
        )
        == 0
    )
    emb = tmp_path / "v.npy"
    embed_set(
        "variant", out, [*model_flags(tiny_arch), "--device", "cpu", "--batch-size", "64"], emb
    )
    direct = tmp_path / "direct.npy"
    embed_set(
        "images",
        out / "manifest.json",
        [
            "--model",
            "t",
            "--arch",
            tiny_arch,
            "--pretrained",
            "None",
            "--seed",
            "3",
            "--device",
            "cpu",
            "--batch-size",
            "64",
        ],
        direct,
    )
    # same files, same model, same batches: the same computation, so bit-equal on one machine
    assert np.array_equal(np.load(emb), np.load(direct))


# --- errors: clear, and no partial output ----------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--lam", "1.5"], "lam must be in [0, 1], got '1.5'"),
        (["--lam", "abc"], "lam must be a number in [0, 1], got 'abc'"),
        (["--lam", "0.9", "--jpeg-quality", "101"], "--jpeg-quality must be in 1..100"),
    ],
)
def test_bad_flags_are_clear_errors(dataset, tmp_path, capsys, args, message):
    out = tmp_path / "v"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "mix",
            "--seed",
            "1",
            "--out",
            out,
            *args,
        )
        == 2
    )
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_missing_image_names_the_file_and_leaves_nothing(dataset, tmp_path, capsys):
    Path(load_manifest(dataset)["images"][2]["path"]).unlink()
    out = tmp_path / "v"
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "mix",
            "--lam",
            "0.9",
            "--seed",
            "1",
            "--out",
            out,
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "image not found" in err and "img2.png" in err
    assert not out.exists() and not any(p.name.startswith(".v.") for p in tmp_path.iterdir())


def test_clashing_file_names_are_an_error(tmp_path):
    entries = [{"image": "a/x.png"}, {"image": "b/x.jpg"}]
    with pytest.raises(VlstressError, match="would both be saved as x.jpg"):
        variants.variant_file_names(entries)


def test_names():
    assert variants.variant_name("mix", "0.9", 1) == "mix_lam0.9_seed1"
    assert variants.evaluation_name("patch", "0.9", 100) == "image-patch-lam0.9-seed100"
    assert math.isclose(variants.parse_lam("0.90"), 0.9)


def test_faithful_on_real_coco_photos_matches_the_official_procedure(shared_data, tmp_path):
    """Real COCO JPEGs (various sizes, some grayscale in COCO): same bytes as mix_images.py."""
    photos = sorted((shared_data / "coco-mini" / "images").glob("*.jpg"))[:4]
    entries = [
        {"image": p.name, "path": str(p), "image_id": p.stem, "caption": ["a photo"]}
        for p in photos
    ]
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"dataset": "coco-mini", "images": entries, "provenance": {}}))
    for method in ("mix", "patch"):
        out = tmp_path / method
        assert (
            run(
                "image-variants",
                "--manifest",
                manifest,
                "--method",
                method,
                "--lam",
                "0.9",
                "--seed",
                "100",
                "--out",
                out,
            )
            == 0
        )
        for i, entry in enumerate(load_manifest(out / "manifest.json")["images"]):
            box = None if entry["box"] is None else variants.pixel_box(entry["box"], 384, 384)
            expected = official_mixed_jpeg(
                str(photos[i]),
                str(photos[entry["partner_index"]]),
                0.9,
                tmp_path / f"{method}{i}.jpg",
                box,
            )
            assert Path(entry["path"]).read_bytes() == expected, entry["image"]


# --- flip: a perturbation without partner or box, through the whole image stress-test -----------


@pytest.fixture()
def demo_photos(tmp_path: Path) -> Path:
    """Three demo photos (scikit-image, offline) through `vlstress download` + `prepare`."""
    raw = tmp_path / "raw"
    assert (
        run("download", "--dataset", "demo", "--kind", "demo", "--max-images", "3", "--out", raw)
        == 0
    )
    manifest = tmp_path / "manifest.json"
    assert run("prepare", "--dataset", "demo", "--raw", raw, "--out", manifest) == 0
    return manifest


def official_style_flipped_jpeg(image_path: str, out: Path) -> bytes:
    """As official_mixed_jpeg, with the mirrored image in place of the mix."""
    import torchvision.transforms as T
    from torchvision.transforms.functional import InterpolationMode
    from torchvision.utils import save_image

    transform = T.Compose(
        [T.Resize((384, 384), interpolation=InterpolationMode.BICUBIC), T.ToTensor()]
    )
    save_image(transform(Image.open(image_path).convert("RGB")).flip(-1), out)
    return out.read_bytes()


def test_flip_known_answer_and_registry_entry():
    x = torch.arange(12.0).reshape(1, 3, 4)
    assert torch.equal(variants.flip(x), x[..., [3, 2, 1, 0]])
    assert np.array_equal(variants.flip(x.numpy()), x.numpy()[..., ::-1])
    plan = variants.make_plan(4, "flip", 0.3, 1)
    assert plan.box(0) is None and plan.partner(0) is None
    assert torch.equal(variants.apply(plan, 0, x, None), x.flip(-1)), (
        "flip needs no partner and ignores lam"
    )


def test_flip_through_image_variants_embedding_and_evaluation(demo_photos, tmp_path, tiny_arch):
    source = load_manifest(demo_photos)["images"]
    out = tmp_path / "flip"
    assert (
        run(
            "image-variants",
            "--manifest",
            demo_photos,
            "--method",
            "flip",
            "--lam",
            "0.9",
            "--seed",
            "1",
            "--out",
            out,
        )
        == 0
    )
    manifest = load_manifest(out / "manifest.json")
    assert manifest["variant"]["name"] == "flip_lam0.9_seed1"
    for i, entry in enumerate(manifest["images"]):
        assert entry["partner"] is None and entry["partner_index"] is None and entry["box"] is None
        assert entry["caption"] == source[i]["caption"]
        # the mirror of the original: the official-style file of the left-right flipped image, byte
        # for byte
        assert Path(entry["path"]).read_bytes() == official_style_flipped_jpeg(
            source[i]["path"], tmp_path / f"ref{i}.jpg"
        )
        with Image.open(entry["path"]) as flipped, Image.open(source[i]["path"]) as original:
            mirrored = np.asarray(
                original.convert("RGB")
                .resize((384, 384), Image.BICUBIC)
                .transpose(Image.FLIP_LEFT_RIGHT),
                dtype=float,
            )
            got = np.asarray(flipped, dtype=float)
            unflipped = np.asarray(
                original.convert("RGB").resize((384, 384), Image.BICUBIC), dtype=float
            )
            # JPEG-close to the mirror only
            assert np.abs(got - mirrored).mean() < 0.2 * np.abs(got - unflipped).mean()

    ref = embed_originals(demo_photos, tmp_path, tiny_arch)
    texts = tmp_path / "emb" / "texts.npy"
    embed_set(
        "captions",
        demo_photos,
        [
            "--model",
            "t",
            "--arch",
            tiny_arch,
            "--pretrained",
            "None",
            "--seed",
            "3",
            "--device",
            "cpu",
        ],
        texts,
    )
    emb = tmp_path / "emb" / "flip.npy"
    embed_set(
        "variant", out, [*model_flags(tiny_arch), "--device", "cpu", "--batch-size", "2"], emb
    )
    assert np.load(emb).shape == np.load(ref).shape
    record_path = tmp_path / "metrics" / "image-flip.json"
    argv = [
        "evaluate-image",
        "--manifest",
        demo_photos,
        "--image-emb",
        ref,
        "--text-emb",
        texts,
        "--variant",
        out,
        "--variant-emb",
        emb,
    ]
    assert run(*argv, "--out", record_path) == 0
    record = json.loads(record_path.read_text())
    assert record["task"] == "image-stress" and record["condition"] == {
        "perturbation": "flip",
        "lam": 0.9,
        "seed": 1,
    }
    assert record["dataset"] == {"name": "demo", "n_images": 3, "n_captions": 15}
    assert set(record["metrics"]) == {
        "t2i_R@1",
        "t2i_R@5",
        "t2i_R@10",
        "t2i_R@1_original",
        "t2i_false_R@1",
        "t2i_drop_rate",
    }


def test_flip_clean_mode_flips_the_preprocessed_tensor(demo_photos, tmp_path):
    from vlstress.embedding.encoders import load_rgb

    out = tmp_path / "clean"
    assert (
        run(
            "image-variants",
            "--manifest",
            demo_photos,
            "--method",
            "flip",
            "--lam",
            "1.0",
            "--seed",
            "1",
            "--mode",
            "clean",
            "--out",
            out,
        )
        == 0
    )
    manifest = load_manifest(out / "manifest.json")
    plan = variants.plan_from_manifest(manifest)

    def preprocess(image):
        return torch.from_numpy(np.asarray(image.resize((16, 16)), dtype=np.float32)).permute(
            2, 0, 1
        )

    mixer = variants.CleanMixer([e["source_path"] for e in manifest["images"]], plan, preprocess)
    for i, entry in enumerate(manifest["images"]):
        assert torch.equal(mixer(i), preprocess(load_rgb(entry["source_path"])).flip(-1))


# --- corruptions as perturbations: text-to-image retrieval against corrupted images -------------


def test_corruption_perturbation_is_registered_seeded_and_faithful_only(dataset, tmp_path, capsys):
    from vlstress.suites.corruptions.imagenet_c import CORRUPTIONS

    assert all(
        f"{name}_s{s}" in variants.PERTURBATIONS for name in CORRUPTIONS for s in range(1, 6)
    )
    a, b, plain = tmp_path / "a", tmp_path / "b", tmp_path / "plain"
    for out in (a, b):
        assert (
            run(
                "image-variants",
                "--manifest",
                dataset,
                "--method",
                "gaussian_noise_s3",
                "--lam",
                "1",
                "--seed",
                "1",
                "--out",
                out,
            )
            == 0
        )
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "flip",
            "--lam",
            "1",
            "--seed",
            "1",
            "--out",
            plain,
        )
        == 0
    )
    entries = json.loads((a / "manifest.json").read_text())["images"]
    assert all(entry["partner"] is None and entry["box"] is None for entry in entries)
    for name in ("img0.jpg", "img2.jpg"):
        assert (a / "images" / name).read_bytes() == (b / "images" / name).read_bytes()  # seeded
        with (
            Image.open(a / "images" / name) as noisy,
            Image.open(plain / "images" / name) as flipped,
        ):
            original = np.asarray(flipped)[:, ::-1].astype(float)
            # severity-3 noise shows
            assert np.abs(np.asarray(noisy).astype(float) - original).mean() > 5
    assert (
        run(
            "image-variants",
            "--manifest",
            dataset,
            "--method",
            "fog_s3",
            "--lam",
            "1",
            "--seed",
            "1",
            "--mode",
            "clean",
            "--out",
            tmp_path / "c",
        )
        == 2
    )
    assert "use --mode faithful" in capsys.readouterr().err and not (tmp_path / "c").exists()
