"""Text-to-image metrics of the image stress-test (metrics.stress_recalls with prefix t2i):
known answers, the official per-row argsort evaluation (eval_clip_t2i.py) as reference, and
the evaluate-image record."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlstress import cli
from vlstress.outcomes import outcomes_path, read_outcomes
from vlstress.record import read_record
from vlstress.retrieval_metrics import stress_recalls


def t2i_image_stress(image_emb, variant_emb, text_emb, caption_image, **kwargs):
    """The image stress-test: captions query originals + mixed images; ground truth = own
    original."""
    return stress_recalls(
        text_emb, image_emb, [[int(i)] for i in caption_image], variant_emb, prefix="t2i", **kwargs
    )


# 3 images (unit vectors), their mixed versions, 4 captions (caption 3 belongs to image 0).
IMAGES = np.eye(3, dtype=np.float32)
MIXED = np.array([[0.5, 0, 0], [0, 2, 0], [0, 0, 0.9]], dtype=np.float32)
TEXTS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.9, 0]], dtype=np.float32)
CAPTION_IMAGE = [0, 1, 2, 0]
# gallery scores [img0 img1 img2 mix0 mix1 mix2]:
#   c0 [1 0 0 .5 0 0]      rank 0, top-1 img0
#   c1 [0 1 0 0 2 0]       rank 1 (mix1 above), top-1 mix1 -> false hit
#   c2 [0 0 1 0 0 .9]      rank 0, top-1 img2
#   c3 [.1 .9 0 .05 1.8 0] rank 2 (img1, mix1 above), top-1 mix1 -> false hit
# original-only gallery: ranks 0, 0, 0, 1
KNOWN = {
    "t2i_R@1": 50.0,
    "t2i_R@2": 75.0,
    "t2i_R@5": 100.0,
    "t2i_R@1_original": 75.0,
    "t2i_false_R@1": 50.0,
    "t2i_drop_rate": 100 * (75 - 50) / 75,
}


def test_known_answers():
    got = t2i_image_stress(IMAGES, MIXED, TEXTS, CAPTION_IMAGE, ks=(1, 2, 5), chunk_size=3)
    assert got.keys() == KNOWN.keys()
    for key, value in KNOWN.items():
        assert got[key] == pytest.approx(value), key


def test_chunk_size_does_not_change_the_numbers():
    rng = np.random.default_rng(0)
    images, mixed, texts = (
        rng.normal(size=(20, 8)),
        rng.normal(size=(20, 8)),
        rng.normal(size=(100, 8)),
    )
    caption_image = np.repeat(np.arange(20), 5)
    a = t2i_image_stress(images, mixed, texts, caption_image, chunk_size=1)
    b = t2i_image_stress(images, mixed, texts, caption_image, chunk_size=1000)
    assert a == b


def official_t2i(images, mixed, texts, caption_image):
    """eval_clip_t2i.py itm_eval: a full argsort per caption row over [originals; mixed]."""
    sims = texts @ np.concatenate([images, mixed]).T
    n = len(images)
    ranks = np.zeros(len(texts))
    false_cnt = 0
    for index, score in enumerate(sims):
        inds = np.argsort(score)[::-1]
        ranks[index] = np.where(inds == caption_image[index])[0][0]
        if inds[0] >= n:
            false_cnt += 1
    return {
        "t2i_R@1": 100.0 * len(np.where(ranks < 1)[0]) / len(ranks),
        "t2i_R@5": 100.0 * len(np.where(ranks < 5)[0]) / len(ranks),
        "t2i_R@10": 100.0 * len(np.where(ranks < 10)[0]) / len(ranks),
        "t2i_false_R@1": 100 * false_cnt / len(ranks),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_the_official_argsort_evaluation(seed):
    """Continuous random embeddings (no ties): identical numbers to the official code."""
    rng = np.random.default_rng(seed)
    n, d = 60, 16
    images = rng.normal(size=(n, d))
    mixed = 0.9 * images + 0.1 * images[rng.permutation(n)] + 0.3 * rng.normal(size=(n, d))
    caption_image = np.repeat(np.arange(n), 5)
    texts = images[caption_image] + 1.5 * rng.normal(size=(5 * n, d))
    ours = t2i_image_stress(images, mixed, texts, caption_image, chunk_size=17)
    official = official_t2i(images, mixed, texts, caption_image)
    for key, value in official.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key
    assert 0 < ours["t2i_false_R@1"] < 100 and 0 < ours["t2i_R@1"] < 100


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="do not match"):
        t2i_image_stress(IMAGES, MIXED[:, :2], TEXTS, CAPTION_IMAGE)


def test_ties_between_an_original_and_a_mixed_image():
    # caption 0 ties its own image with mix0; caption 1 ties its own image with img0 (an original)
    images = np.eye(2, dtype=np.float32)
    mixed = np.array([[1.0, 0.0], [0.0, 0.5]], dtype=np.float32)
    texts = np.array([[1.0, 0.0], [1.0, 1.0]], dtype=np.float32)
    optimistic = t2i_image_stress(images, mixed, texts, [0, 1], ks=(1,))
    pessimistic = t2i_image_stress(images, mixed, texts, [0, 1], ks=(1,), ties="pessimistic")
    assert optimistic == {
        "t2i_R@1": 100.0,
        "t2i_R@1_original": 100.0,
        "t2i_false_R@1": 0.0,
        "t2i_drop_rate": 0.0,
    }
    # pessimistic: both miss; caption 0's top-1 is mix0 (false), caption 1's is img0 (an original: a
    # miss, not false)
    assert pessimistic == {
        "t2i_R@1": 0.0,
        "t2i_R@1_original": 50.0,
        "t2i_false_R@1": 50.0,
        "t2i_drop_rate": 100.0,
    }


# --- the evaluate-image command --------------------------------------------------------------

MODEL = {
    "slug": "toy",
    "arch": "toy-arch",
    "pretrained": None,
    "weights": "random-init",
    "weights_label": "random-init (seed 0)",
    "seed": 0,
}
VARIANT = {
    "method": "patch",
    "lam": 0.9,
    "lam_text": "0.9",
    "seed": 10,
    "mode": "faithful",
    "name": "patch_lam0.9_seed10",
    "evaluation": "image-patch-lam0.9-seed10",
}


def write_emb(path: Path, array: np.ndarray, **extra) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, array)
    meta = {"provenance": {"model": MODEL, "seed": 0, "device": "cpu", "params": {}}, **extra}
    path.with_name(path.name + ".json").write_text(json.dumps(meta))


@pytest.fixture()
def toy(tmp_path: Path) -> dict[str, Path]:
    entries = [
        {"image": "a.jpg", "path": "a.jpg", "image_id": "1", "caption": ["c0", "c3"]},
        {"image": "b.jpg", "path": "b.jpg", "image_id": "2", "caption": ["c1"]},
        {"image": "c.jpg", "path": "c.jpg", "image_id": "3", "caption": ["c2"]},
    ]
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"dataset": "toy", "images": entries, "provenance": {}}))
    variant = tmp_path / "variant"
    variant.mkdir()
    (variant / "manifest.json").write_text(
        json.dumps({"dataset": "toy", "variant": VARIANT, "images": entries, "provenance": {}})
    )
    texts = TEXTS[[0, 3, 1, 2]]  # manifest order: captions of a (c0, c3), b (c1), c (c2)
    write_emb(tmp_path / "images.npy", IMAGES)
    write_emb(tmp_path / "texts.npy", texts)
    write_emb(tmp_path / "mixed.npy", MIXED, variant=VARIANT)
    return {"manifest": manifest, "variant": variant, "root": tmp_path}


def evaluate(toy, **override) -> tuple[int, Path]:
    root = toy["root"]
    args = {
        "--manifest": toy["manifest"],
        "--image-emb": root / "images.npy",
        "--text-emb": root / "texts.npy",
        "--variant": toy["variant"],
        "--variant-emb": root / "mixed.npy",
        "--ks": "1,2,5",
        "--chunk-size": "2",
        "--out": root / "metrics" / "toy" / "image-patch-lam0.9-seed10.json",
    }
    args.update(override)
    argv = ["evaluate-image"] + [str(x) for kv in args.items() for x in kv]
    return cli.main(argv), Path(args["--out"])


def test_evaluate_image_writes_the_metric_record(toy):
    code, out = evaluate(toy)
    assert code == 0
    record = json.loads(out.read_text())
    assert list(record) == sorted(
        ["schema", "task", "model", "dataset", "condition", "metrics", "provenance"]
    )
    assert record["schema"] == "vlstress.record/1" and record["task"] == "image-stress"
    assert record["model"] == {"slug": "toy", "arch": "toy-arch", "weights": "random-init (seed 0)"}
    assert record["dataset"] == {"name": "toy", "n_images": 3, "n_captions": 4}
    assert record["condition"] == {"perturbation": "patch", "lam": 0.9, "seed": 10}
    assert record["metrics"].keys() == KNOWN.keys()
    for key, value in KNOWN.items():
        assert record["metrics"][key] == pytest.approx(value), key
    params = record["provenance"]["params"]
    assert (
        record["provenance"]["step"] == "evaluate-image"
        and params["variant"]["mode"] == "faithful"
        and params["ties"] == "optimistic"
    )
    assert read_record(out).condition == record["condition"]  # valid against the record schema


def test_evaluate_image_writes_the_caption_outcomes(toy):
    """One block, one item per caption query in manifest order (c0, c3, c1, c2), the items behind
    KNOWN (see the gallery scores)."""
    code, out = evaluate(toy)
    assert code == 0
    path = outcomes_path(out)
    assert path.name == "image-patch-lam0.9-seed10.outcomes.npz"
    [block] = read_outcomes(path)
    assert block.unit == "caption" and block.n == 4
    assert block.column("rank").tolist() == [1, 3, 2, 1]
    assert block.column("hit1").tolist() == [True, False, False, True]
    assert block.column("hit1_original").tolist() == [True, False, True, True]
    assert block.column("false_top1").tolist() == [False, True, True, False]
    assert 100 * block.column("hit1").mean() == KNOWN["t2i_R@1"]
    assert 100 * block.column("hit1_original").mean() == KNOWN["t2i_R@1_original"]
    assert 100 * block.column("false_top1").mean() == KNOWN["t2i_false_R@1"]


def test_evaluate_image_ties_flag(toy):
    code, out = evaluate(toy, **{"--ties": "pessimistic"})
    assert code == 0
    record = json.loads(out.read_text())
    assert record["provenance"]["params"]["ties"] == "pessimistic"
    for key, value in KNOWN.items():  # no exact ties in the toy scores: the same numbers
        assert record["metrics"][key] == pytest.approx(value), key


def test_evaluate_image_rejects_mismatched_inputs(toy, capsys):
    root = toy["root"]
    write_emb(root / "other.npy", MIXED, variant={**VARIANT, "name": "mix_lam0.9_seed10"})
    code, out = evaluate(toy, **{"--variant-emb": root / "other.npy"})
    assert code == 2 and "embeds another variant" in capsys.readouterr().err and not out.exists()
    write_emb(root / "short.npy", MIXED[:2], variant=VARIANT)
    code, out = evaluate(toy, **{"--variant-emb": root / "short.npy"})
    assert code == 2 and "expected 3 rows" in capsys.readouterr().err and not out.exists()


# --- every variant of a model in one job (`evaluate-images`) -------------------------------------


def per_model_project(toy, seeds=(10, 11)) -> Path:
    """The toy laid out as the workflow keeps it: params.yaml naming the variants, the variant
    folders under data/image_variants, the model's retrieval folder; variant seed 11 is a second
    copy of the patch variant (its own embeddings: MIXED scaled, so its numbers differ)."""
    import yaml

    from conftest import REPO

    root = toy["root"]
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["image_variants"].update(methods=["patch"], lams=[0.9], seeds=list(seeds))
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    emb = root / "emb"
    write_emb(emb / "images.npy", IMAGES)
    write_emb(emb / "texts.npy", TEXTS[[0, 3, 1, 2]])
    entries = json.loads(toy["manifest"].read_text())["images"]
    for seed, mixed in zip(seeds, (MIXED, MIXED * [[1], [0.1], [1]])):
        name = f"patch_lam0.9_seed{seed}"
        variant = {**VARIANT, "seed": seed, "name": name, "evaluation": f"image-{name}"}
        folder = root / "data/image_variants" / name
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(
            json.dumps({"dataset": "toy", "variant": variant, "images": entries, "provenance": {}})
        )
        write_emb(emb / "image_variants" / f"{name}.npy", mixed, variant=variant)
    return root


def evaluate_images(root: Path) -> int:
    argv = ["evaluate-images", "--params", "params.yaml", "--manifest", "manifest.json"]
    return cli.main([*argv, "--emb", "emb", "--ks", "1,2,5", "--out-dir", "metrics/toy"])


def test_evaluate_images_writes_what_evaluate_image_writes_for_each_variant(toy, monkeypatch):
    root = per_model_project(toy)
    monkeypatch.chdir(root)
    assert evaluate_images(root) == 0
    written = sorted(p.name for p in (root / "metrics/toy").iterdir())
    assert written == [
        f"image-patch-lam0.9-seed{seed}.{ext}"
        for seed in (10, 11)
        for ext in ("json", "outcomes.npz")
    ]
    for seed in (10, 11):
        name = f"patch_lam0.9_seed{seed}"
        code, one = evaluate(
            toy,
            **{
                "--variant": root / "data/image_variants" / name,
                "--variant-emb": root / "emb/image_variants" / f"{name}.npy",
                "--out": root / "one" / f"{seed}.json",
            },
        )
        assert code == 0
        many = root / "metrics/toy" / f"image-patch-lam0.9-seed{seed}.json"
        got, want = read_record(many), read_record(one)
        assert (got.condition, got.dataset) == (want.condition, want.dataset)
        assert got.metrics == want.metrics
        [a], [b] = read_outcomes(outcomes_path(many)), read_outcomes(outcomes_path(one))
        assert a.column("rank").tolist() == b.column("rank").tolist()
    first = read_record(root / "metrics/toy/image-patch-lam0.9-seed10.json").metrics
    assert first == pytest.approx(KNOWN)
    assert read_record(root / "metrics/toy/image-patch-lam0.9-seed11.json").metrics != first


def test_evaluate_images_writes_nothing_when_one_variant_is_missing(toy, monkeypatch, capsys):
    root = per_model_project(toy)
    monkeypatch.chdir(root)
    (root / "emb/image_variants/patch_lam0.9_seed11.npy").unlink()
    assert evaluate_images(root) == 2
    assert "patch_lam0.9_seed11.npy" in capsys.readouterr().err
    assert not (root / "metrics").exists()
