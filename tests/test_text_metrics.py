"""Known-answer tests of the text stress-test metrics and `vlstress evaluate-text`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlstress.cli import main
from vlstress.outcomes import outcomes_path, read_outcomes
from vlstress.retrieval_metrics import rows_by_owner, stress_recalls
from vlstress.suites.rococo_text.caption_sets import split_variant_entries


def i2t_text_stress(image_emb, original_emb, original_image, altered_emb, **kwargs):
    """The text stress-test: images query originals + altered captions; ground truth = own
    originals."""
    gt = rows_by_owner(original_image, len(image_emb))
    return stress_recalls(image_emb, original_emb, gt, altered_emb, prefix="i2t", **kwargs)


def from_scores(scores: np.ndarray, n_original: int):
    """Embeddings whose image @ gallery.T is exactly `scores` (images = identity rows)."""
    scores = np.asarray(scores, dtype=np.float32)
    images = np.eye(scores.shape[0], dtype=np.float32)
    gallery = scores.T.copy()
    return images, gallery[:n_original], gallery[n_original:]


def test_known_answer_with_ties():
    #                 originals: img0 img0 img1 img1 | altered (any owner)
    scores = [
        # img0: an altered caption strictly above its GT -> miss, false
        [
            0.9,
            0.5,
            0.3,
            0.2,
            0.95,
            0.1,
            0.1,
            0.1,
        ],
        # img1: altered ties with the GT -> hit (ties go to GT), not false
        [
            0.1,
            0.2,
            0.8,
            0.7,
            0.1,
            0.1,
            0.8,
            0.3,
        ],
    ]
    images, originals, altered = from_scores(scores, 4)
    out = i2t_text_stress(images, originals, [0, 0, 1, 1], altered, ks=(1, 5))
    assert out == {
        "i2t_R@1": 50.0,
        "i2t_R@5": 100.0,
        "i2t_R@1_original": 100.0,
        "i2t_false_R@1": 50.0,
        "i2t_drop_rate": 50.0,
    }


def test_altered_tied_with_another_original_is_not_false():
    scores = [
        # img0: other image's original ties an altered caption at the top
        [
            0.2,
            0.2,
            0.9,
            0.1,
            0.9,
            0.0,
            0.0,
            0.0,
        ],
        # img1: altered strictly above everything -> false
        [
            0.1,
            0.1,
            0.5,
            0.6,
            0.0,
            0.0,
            0.0,
            0.7,
        ],
    ]
    images, originals, altered = from_scores(scores, 4)
    out = i2t_text_stress(images, originals, [0, 0, 1, 1], altered, ks=(1,))
    assert out["i2t_R@1"] == 0.0
    assert out["i2t_R@1_original"] == 50.0  # img0 misses already on the original gallery
    assert out["i2t_false_R@1"] == 50.0  # only img1: for img0 the lower-index original wins the tie
    assert out["i2t_drop_rate"] == 100.0


def test_drop_rate_undefined_when_original_recall_is_zero():
    scores = [[0.1, 0.9, 0.5], [0.9, 0.1, 0.5]]  # originals: img0, img1; one altered caption
    images, originals, altered = from_scores(scores, 2)
    out = i2t_text_stress(images, originals, [0, 1], altered, ks=(1,))
    assert out["i2t_R@1_original"] == 0.0 and out["i2t_drop_rate"] is None


def test_six_captions_chunked():
    # img0 has 6 originals (rows 0-5), img1 has 5 (rows 6-10); 11 altered captions
    rng = np.random.default_rng(0)
    scores = rng.uniform(0, 0.5, size=(2, 22))
    scores[0, 5] = 0.8  # img0's 6th caption is its best
    scores[0, 11 + 5] = 0.81  # ... but its 6th altered caption beats it
    scores[1, 6] = 0.9  # img1 hit
    images, originals, altered = from_scores(scores, 11)
    owners = [0] * 6 + [1] * 5
    for chunk in (1, 2):
        out = i2t_text_stress(images, originals, owners, altered, ks=(1, 5, 10), chunk_size=chunk)
        assert out["i2t_R@1"] == 50.0 and out["i2t_R@5"] == 100.0
        assert out["i2t_R@1_original"] == 100.0
        assert out["i2t_false_R@1"] == 50.0 and out["i2t_drop_rate"] == 50.0


def test_known_answer_with_ties_pessimistic():
    """The scores of test_known_answer_with_ties: img1's tie with an altered caption is now a miss
    and false."""
    scores = [
        [0.9, 0.5, 0.3, 0.2, 0.95, 0.1, 0.1, 0.1],
        [0.1, 0.2, 0.8, 0.7, 0.1, 0.1, 0.8, 0.3],
    ]
    images, originals, altered = from_scores(scores, 4)
    out = i2t_text_stress(images, originals, [0, 0, 1, 1], altered, ks=(1, 5), ties="pessimistic")
    assert out == {
        "i2t_R@1": 0.0,
        "i2t_R@5": 100.0,
        "i2t_R@1_original": 100.0,
        "i2t_false_R@1": 100.0,
        "i2t_drop_rate": 100.0,
    }


def test_split_variant_entries_rows():
    manifest_images = {"a": ["a1", "a2"], "b": ["b1"]}
    entries = [
        {"image": "b", "caption": ["b1", "B1"]},
        {"image": "a", "caption": ["a1", "a2", "A1"]},
    ]
    assert split_variant_entries(entries, manifest_images, "set") == (["b", "a"], [1, 4])


# --- the command, end to end on hand-made embeddings ------------------------------------------

MODEL = {"slug": "toy", "arch": "toy-arch", "weights_label": "random-init (seed 0)", "seed": 0}


def write_emb(path: Path, array: np.ndarray, inputs: dict | None = None, model=MODEL):
    np.save(path, np.asarray(array, dtype=np.float32))
    block = {"model": model, "seed": 0, "device": "cpu"}
    if inputs is not None:
        block["inputs"] = inputs
    path.with_name(path.name + ".json").write_text(json.dumps({"provenance": block}))


@pytest.fixture
def toy(tmp_path):
    """3 images (the second with 6 captions); a caption set over all of them; scores with a known
    answer."""
    caps = {
        "a.jpg": ["a dog runs.", "a brown dog"],
        "b.jpg": [f"cat {i}" for i in range(6)],
        "c.jpg": ["a red car", "a fast car"],
    }
    manifest = {
        "dataset": "toy",
        "images": [{"image": k, "path": k, "caption": v} for k, v in caps.items()],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    altered = {k: [c.replace(c.split()[-1], "X") for c in v] for k, v in caps.items()}
    variant = [{"image": k, "caption": caps[k] + altered[k]} for k in caps]
    (tmp_path / "set.json").write_text(json.dumps(variant))
    # 10 originals (a:0-1, b:2-7, c:8-9);
    # variant rows: a 0-3 (altered 2,3), b 4-15 (10-15), c 16-19 (18,19)
    dim = 3 + 10 + 10
    images = np.zeros((3, dim), np.float32)
    images[:, :3] = np.eye(3)
    originals = np.zeros((10, dim), np.float32)
    owners = [0, 0, 1, 1, 1, 1, 1, 1, 2, 2]
    for j, i in enumerate(owners):
        originals[j, i] = 0.5 + 0.01 * j
    variant_emb = np.zeros((20, dim), np.float32)
    orig_rows = [0, 1, 4, 5, 6, 7, 8, 9, 16, 17]
    alt_rows = [2, 3, 10, 11, 12, 13, 14, 15, 18, 19]
    variant_emb[orig_rows] = originals
    for j, i in zip(alt_rows, owners):
        variant_emb[j, i] = 0.1
    variant_emb[15, 1] = 0.9  # b's 6th altered caption beats all of b's originals -> miss + false
    variant_emb[18, 2] = 0.59  # c: altered ties c's best original (0.59) -> hit
    originals[9, 2] = 0.59
    write_emb(tmp_path / "images.npy", images)
    write_emb(tmp_path / "texts.npy", originals)
    from vlstress.io import sha256_file

    write_emb(
        tmp_path / "text_set.npy",
        variant_emb,
        inputs={"set.json": sha256_file(tmp_path / "set.json")},
    )
    return tmp_path


def evaluate(d: Path, *extra: str, variant: str = "set.json", out: str = "out.json") -> int:
    return main(
        [
            "evaluate-text",
            "--manifest",
            str(d / "manifest.json"),
            "--image-emb",
            str(d / "images.npy"),
            "--original-emb",
            str(d / "texts.npy"),
            "--variant-captions",
            str(d / variant),
            "--variant-emb",
            str(d / "text_set.npy"),
            "--set",
            "same_concept",
            "--ks",
            "1,5,10",
            "--out",
            str(d / out),
            *extra,
        ]
    )


def test_command_record(toy):
    assert evaluate(toy) == 0
    record = json.loads((toy / "out.json").read_text())
    assert record["schema"] == "vlstress.record/1" and record["task"] == "text-stress"
    assert record["condition"] == {"set": "same_concept"}
    assert record["model"] == {"slug": "toy", "arch": "toy-arch", "weights": "random-init (seed 0)"}
    dataset = record["dataset"]
    assert (
        dataset["name"] == "toy"
        and dataset["n_images"] == 3
        and dataset["n_captions"] == 10
        and dataset["n_altered_captions"] == 10
    )
    assert dataset["subset"]["evaluated_on_subset"] is False
    assert record["provenance"]["params"]["ties"] == "optimistic"
    m = record["metrics"]
    assert m["i2t_R@1"] == pytest.approx(200 / 3) and m["i2t_R@5"] == 100.0
    assert m["i2t_R@1_original"] == 100.0
    assert m["i2t_false_R@1"] == pytest.approx(100 / 3)
    assert m["i2t_drop_rate"] == pytest.approx(100 / 3)
    assert "provenance" in record and record["provenance"]["step"] == "evaluate-text"
    # deterministic bytes
    first = (toy / "out.json").read_bytes()
    assert evaluate(toy) == 0 and (toy / "out.json").read_bytes() == first


def test_command_ties_pessimistic(toy):
    """c's altered caption ties c's best original: a hit by default, a miss (and false) when
    pessimistic."""
    assert evaluate(toy, "--ties", "pessimistic") == 0
    record = json.loads((toy / "out.json").read_text())
    assert record["provenance"]["params"]["ties"] == "pessimistic"
    m = record["metrics"]
    assert m["i2t_R@1"] == pytest.approx(100 / 3) and m["i2t_R@1_original"] == 100.0
    assert m["i2t_false_R@1"] == pytest.approx(200 / 3) and m["i2t_drop_rate"] == pytest.approx(
        200 / 3
    )


@pytest.mark.parametrize(
    "ties, rank, hit1, false_top1",
    [
        ("optimistic", [1, 2, 1], [True, False, True], [False, True, False]),
        ("pessimistic", [1, 2, 2], [True, False, False], [False, True, True]),
    ],
)
def test_command_writes_the_image_outcomes(toy, ties, rank, hit1, false_top1):
    """One block, one item per image query: b's altered caption beats its originals; c's ties."""
    assert evaluate(toy, "--ties", ties) == 0
    [block] = read_outcomes(outcomes_path(toy / "out.json"))
    assert block.unit == "image" and block.n == 3
    assert block.column("rank").tolist() == rank
    assert block.column("hit1").tolist() == hit1
    assert block.column("hit1_original").tolist() == [True, True, True]
    assert block.column("false_top1").tolist() == false_top1
    m = json.loads((toy / "out.json").read_text())["metrics"]
    assert 100 * block.column("hit1").mean() == pytest.approx(m["i2t_R@1"])
    assert 100 * block.column("hit1_original").mean() == pytest.approx(m["i2t_R@1_original"])
    assert 100 * block.column("false_top1").mean() == pytest.approx(m["i2t_false_R@1"])


def test_command_subset(toy):
    data = json.loads((toy / "set.json").read_text())
    (toy / "sub.json").write_text(json.dumps(data[1:]))  # b and c only
    from vlstress.io import sha256_file

    emb = np.load(toy / "text_set.npy")[4:]
    write_emb(toy / "text_set.npy", emb, inputs={"sub.json": sha256_file(toy / "sub.json")})
    assert evaluate(toy, variant="sub.json") == 0
    record = json.loads((toy / "out.json").read_text())
    assert record["dataset"]["n_images"] == 2 and record["dataset"]["n_captions"] == 8
    subset = record["dataset"]["subset"]
    assert subset["evaluated_on_subset"] is True and subset["n_manifest_images"] == 3
    assert (
        subset["note"]
        == "caption set covers 2 of 3 manifest images; all metrics (including R@1_original) "
        "use those images only"
    )
    assert record["metrics"]["i2t_R@1"] == 50.0 and record["metrics"]["i2t_false_R@1"] == 50.0


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.append({"image": "zzz.jpg", "caption": ["x", "y"]}), "not in the manifest"),
        (lambda d: d[0]["caption"].extend(["x", "y"]), "at most 2 altered"),
        (lambda d: d[1]["caption"].__delitem__(slice(3, None)), "expected 6 originals"),
        (
            lambda d: [e["caption"].__delitem__(slice(len(e["caption"]) // 2, None)) for e in d],
            "no altered captions",
        ),
        (lambda d: d[2]["caption"].__setitem__(0, "a blue car"), "caption 0"),
        (lambda d: d.append(dict(d[0])), "listed twice"),
    ],
)
def test_command_errors(toy, capsys, edit, message):
    data = json.loads((toy / "set.json").read_text())
    edit(data)
    (toy / "bad.json").write_text(json.dumps(data))
    assert evaluate(toy, variant="bad.json") == 2
    assert message in capsys.readouterr().err
    assert not (toy / "out.json").exists()


def test_command_stale_or_foreign_embeddings(toy, capsys):
    # content changed after embedding
    (toy / "set.json").write_text((toy / "set.json").read_text() + "\n")
    assert evaluate(toy) == 2
    assert "another caption file" in capsys.readouterr().err
    write_emb(toy / "texts.npy", np.load(toy / "texts.npy"), model={**MODEL, "slug": "other"})
    assert evaluate(toy) == 2
    assert "different models" in capsys.readouterr().err


def test_command_six_originals_five_altered(toy):
    """Official RoCOCO layout for 6-caption images: 6 originals + 5 altered (11 captions)."""
    data = json.loads((toy / "set.json").read_text())
    data[1]["caption"].pop()  # drop b's 6th altered caption (the one that beat the ground truth)
    (toy / "set65.json").write_text(json.dumps(data))
    from vlstress.io import sha256_file

    emb = np.delete(np.load(toy / "text_set.npy"), 15, axis=0)
    write_emb(toy / "text_set.npy", emb, inputs={"set65.json": sha256_file(toy / "set65.json")})
    assert evaluate(toy, variant="set65.json") == 0
    record = json.loads((toy / "out.json").read_text())
    assert record["dataset"]["n_captions"] == 10 and record["dataset"]["n_altered_captions"] == 9
    assert record["metrics"]["i2t_R@1"] == 100.0 and record["metrics"]["i2t_false_R@1"] == 0.0


@pytest.mark.parametrize("set_name", ["same_concept", "danger"])
def test_official_rococo_sets_are_accepted(shared_data, tmp_path, set_name):
    """The official files (incl. their 6 + 5 images) pass the checks against a Karpathy-test
    manifest."""
    test = json.loads((shared_data / "rococo" / "coco_karpathy_test.json").read_text())
    six = [e for e in test if len(e["caption"]) == 6][:2]
    chosen = six + test[:3]
    names = {e["image"] for e in chosen}
    manifest = {
        "dataset": "karpathy-test-slice",
        "images": [{**e, "path": e["image"]} for e in chosen],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    official = [
        e
        for e in json.loads((shared_data / "rococo" / f"{set_name}.json").read_text())
        if e["image"] in names
    ]
    (tmp_path / "set.json").write_text(json.dumps(official))
    from vlstress.io import sha256_file

    rng = np.random.default_rng(0)

    def unit(n):
        a = rng.normal(size=(n, 8))
        return a / np.linalg.norm(a, axis=1, keepdims=True)

    n_orig = sum(len(e["caption"]) for e in chosen)
    n_set = sum(len(e["caption"]) for e in official)
    assert n_set == 2 * n_orig - len(six)  # 6 + 5 for each 6-caption image
    write_emb(tmp_path / "images.npy", unit(len(chosen)))
    write_emb(tmp_path / "texts.npy", unit(n_orig))
    write_emb(
        tmp_path / "text_set.npy",
        unit(n_set),
        inputs={"set.json": sha256_file(tmp_path / "set.json")},
    )
    assert evaluate(tmp_path) == 0
    record = json.loads((tmp_path / "out.json").read_text())
    dataset = record["dataset"]
    assert (
        dataset["n_images"] == 5
        and dataset["n_captions"] == n_orig
        and dataset["n_altered_captions"] == n_orig - len(six)
    )


# --- every caption set of a model in one job (`evaluate-texts`) ----------------------------------


def per_model_project(d: Path) -> None:
    """The toy laid out as the workflow keeps it: params.yaml naming two caption sets, the sets
    under data/text_variants, the model's retrieval folder; `danger` is the toy's set with its
    altered captions moved away (its own numbers)."""
    import shutil

    import yaml

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    sets = params["text_variants"]["sets"]
    params["text_variants"]["sets"] = {name: sets[name] for name in ("same_concept", "danger")}
    (d / "params.yaml").write_text(yaml.safe_dump(params))
    (d / "data/text_variants").mkdir(parents=True)
    (d / "emb/text_variants").mkdir(parents=True)
    for name in ("images.npy", "texts.npy"):
        for suffix in ("", ".json"):
            shutil.copy(d / (name + suffix), d / "emb" / (name + suffix))
    for name, scale in (("same_concept", 1.0), ("danger", 0.1)):
        shutil.copy(d / "set.json", d / f"data/text_variants/{name}.json")
        emb = np.load(d / "text_set.npy")
        emb[[2, 3, 10, 11, 12, 13, 14, 15, 18, 19]] *= scale
        write_emb(d / f"emb/text_variants/{name}.npy", emb)


def evaluate_texts(d: Path) -> int:
    argv = ["evaluate-texts", "--params", "params.yaml", "--manifest", "manifest.json"]
    return main([*argv, "--emb", "emb", "--ks", "1,5,10", "--out-dir", "metrics/toy"])


def test_evaluate_texts_writes_what_evaluate_text_writes_for_each_set(toy, monkeypatch):
    from vlstress.record import read_record

    per_model_project(toy)
    monkeypatch.chdir(toy)
    assert evaluate_texts(toy) == 0
    written = sorted(p.name for p in (toy / "metrics/toy").iterdir())
    assert written == [
        f"text-{n}.{e}" for n in ("danger", "same_concept") for e in ("json", "outcomes.npz")
    ]
    for name in ("same_concept", "danger"):
        one = f"one-{name}.json"
        argv = ["evaluate-text", "--manifest", "manifest.json", "--image-emb", "emb/images.npy"]
        argv += ["--original-emb", "emb/texts.npy", "--ks", "1,5,10", "--set", name, "--out", one]
        argv += ["--variant-captions", f"data/text_variants/{name}.json"]
        assert main([*argv, "--variant-emb", f"emb/text_variants/{name}.npy"]) == 0
        many = toy / f"metrics/toy/text-{name}.json"
        got, want = read_record(many), read_record(toy / one)
        assert (got.condition, got.dataset, got.metrics) == (
            want.condition,
            want.dataset,
            want.metrics,
        )
        [a], [b] = read_outcomes(outcomes_path(many)), read_outcomes(outcomes_path(toy / one))
        assert a.column("rank").tolist() == b.column("rank").tolist()
    same = read_record(toy / "metrics/toy/text-same_concept.json").metrics
    assert same["i2t_R@1"] == pytest.approx(200 / 3)  # the toy's known answer (test_command_record)
    assert read_record(toy / "metrics/toy/text-danger.json").metrics["i2t_R@1"] == 100.0


def test_evaluate_texts_writes_nothing_when_one_set_is_missing(toy, monkeypatch, capsys):
    per_model_project(toy)
    monkeypatch.chdir(toy)
    (toy / "data/text_variants/same_concept.json").unlink()
    assert evaluate_texts(toy) == 2
    assert "same_concept.json" in capsys.readouterr().err
    assert not (toy / "metrics").exists()
