"""The stability suite (ImageNet-P protocol): known answers of flip probability and top-5 distance,
agreement with the reference code's formulas and with torchvision's affine, the sequences written,
the evaluation of a hand-made project, and bad input named."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.stability import metrics, perturbations, sequences
from vlstress.suites.stability.run import sequences_of

# ------------------------------------------------------------------ flip probability


def test_flip_probability_known_answers():
    # noise: every frame against frame 0 (the clean image)
    assert metrics.flip_probability([[0, 1, 0, 0]], noise=True) == pytest.approx(1 / 3)
    # motion: consecutive frames; 0->1 flips, 1->0 flips, 0->0 does not
    assert metrics.flip_probability([[0, 1, 0, 0]], noise=False) == pytest.approx(2 / 3)
    # mean over sequences, each weighted alike whatever its length
    assert metrics.flip_probability([[0, 1], [2, 2, 2, 2]], noise=False) == pytest.approx(0.5)
    # difficulty 2: subsequences [0, 2, 4] and [1, 3] of frames a b a c c -> pairs (a,a) (a,c) (b,c)
    assert metrics.flip_probability([[5, 6, 5, 7, 7]], noise=False, difficulty=2) == pytest.approx(
        2 / 3
    )
    # difficulty is ignored for noise (a stronger noise set, not a stride)
    assert metrics.flip_probability([[0, 1, 0]], noise=True, difficulty=3) == pytest.approx(0.5)


def _reference_flip_prob(predictions, noise, difficulty):
    """`flip_prob` of ImageNet-P/test.py (hendrycks/robustness 8190fe3), transcribed."""
    result = 0
    step_size = 1 if noise else difficulty
    for vid_preds in predictions:
        result_for_vid = []
        for i in range(step_size):
            prev_pred = vid_preds[i]
            for pred in vid_preds[i::step_size][1:]:
                result_for_vid.append(int(prev_pred != pred))
                if not noise:
                    prev_pred = pred
        result += np.mean(result_for_vid) / len(predictions)
    return result


def _reference_ranking_dist(ranks, noise, difficulty, n_classes):
    """`ranking_dist` + `dist(mode='top5')` of ImageNet-P/test.py, transcribed."""
    cum_sum_top5 = np.cumsum(np.asarray([0] + [1] * 5 + [0] * (n_classes - 1 - 5)))
    result = 0
    step_size = 1 if noise else difficulty
    for vid_ranks in ranks:
        result_for_vid = []
        for i in range(step_size):
            perm1 = vid_ranks[i]
            perm1_inv = np.argsort(perm1)
            for rank in vid_ranks[i::step_size][1:]:
                perm2 = rank
                sigma = perm2[perm1_inv]
                result_for_vid.append(
                    np.sum(np.abs(cum_sum_top5[:5] - cum_sum_top5[sigma - 1][:5]))
                )
                if not noise:
                    perm1 = perm2
                    perm1_inv = np.argsort(perm1)
        result += np.mean(result_for_vid) / len(ranks)
    return result


@pytest.mark.parametrize(("noise", "difficulty"), [(True, 1), (False, 1), (False, 2), (False, 3)])
def test_metrics_agree_with_the_reference_code(noise, difficulty):
    from scipy.stats import rankdata

    rng = np.random.default_rng(difficulty + 10 * noise)
    # few classes and coarse logits: ties and frequent flips, the cases a bug would show in
    logits = [rng.integers(0, 4, size=(int(rng.integers(7, 12)), 20)) for _ in range(6)]
    predictions = [frame.argmax(axis=1) for frame in logits]
    ranks = [np.array([rankdata(-row, method="ordinal") for row in frame]) for frame in logits]
    for mine, reference in zip(ranks, [metrics.ranks(frame) for frame in logits]):
        assert np.array_equal(mine, reference)  # scipy's ordinal ranks
    assert metrics.flip_probability(
        predictions, noise=noise, difficulty=difficulty
    ) == pytest.approx(_reference_flip_prob(predictions, noise, difficulty))
    assert metrics.mean_top5_distance(ranks, noise=noise, difficulty=difficulty) == pytest.approx(
        _reference_ranking_dist(ranks, noise, difficulty, 20)
    )


# ------------------------------------------------------------------ top-5 distance


def _ranks_of(order: list[int]) -> np.ndarray:
    """Class ranks (1 = top) of a frame whose classes are sorted as `order`."""
    ranks = np.empty(len(order), dtype=int)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def test_top5_distance_known_answers():
    same = _ranks_of([0, 1, 2, 3, 4, 5, 6, 7])
    assert metrics.top5_distance(same, same) == 0
    # the top two swap: |1 - 2| + |2 - 1|
    assert metrics.top5_distance(same, _ranks_of([1, 0, 2, 3, 4, 5, 6, 7])) == 2
    # a class below the top 5 changes nothing
    assert metrics.top5_distance(same, _ranks_of([0, 1, 2, 3, 4, 6, 5, 7])) == 0
    # the 5th leaves for rank 8, capped at 6: |5 - 6|
    assert metrics.top5_distance(same, _ranks_of([0, 1, 2, 3, 7, 5, 6, 4])) == 1
    # the top class falls to last: it counts |1 - 6| = 5, the others move up one each (4)
    assert metrics.top5_distance(same, _ranks_of([1, 2, 3, 4, 5, 6, 7, 0])) == 9
    sequences_ = [np.stack([same, _ranks_of([1, 0, 2, 3, 4, 5, 6, 7]), same])]
    assert metrics.mean_top5_distance(sequences_, noise=False) == pytest.approx(2.0)
    assert metrics.mean_top5_distance(sequences_, noise=True) == pytest.approx(1.0)


def test_relative_to_a_baseline():
    assert metrics.relative({"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 3.0}) == (pytest.approx(0.75), [])
    # the perturbations both have only
    assert metrics.relative({"a": 1.0, "c": 9.0}, {"a": 2.0}) == (pytest.approx(0.5), [])
    # a baseline that never flips: left out, and named
    assert metrics.relative({"a": 1.0, "b": 2.0}, {"a": 0.0, "b": 4.0}) == (
        pytest.approx(0.5),
        ["a"],
    )
    assert metrics.relative({"a": 1.0}, {"a": 0.0}) == (None, ["a"])
    assert metrics.relative({"a": 1.0}, {}) == (None, [])


def test_short_sequences_are_refused():
    with pytest.raises(VlstressError, match="sequence 1 has 1 frame"):
        metrics.flip_probability([[0, 1], [0]], noise=False)
    with pytest.raises(VlstressError, match="sequence 0 has 2 frame.*at least 3.*stride 2"):
        metrics.flip_probability([[0, 1]], noise=False, difficulty=2)
    with pytest.raises(VlstressError, match="no sequences"):
        metrics.mean_top5_distance([], noise=True)
    with pytest.raises(VlstressError, match="at least 5 classes"):
        metrics.mean_top5_distance([np.array([[1, 2, 3], [1, 2, 3]])], noise=True)


def test_sequences_are_regrouped_by_frame_and_gaps_are_named():
    entries = [
        {"path": "b1", "sequence": 1, "frame": 1},
        {"path": "a0", "sequence": 0, "frame": 0},
        {"path": "b0", "sequence": 1, "frame": 0},
        {"path": "a1", "sequence": 0, "frame": 1},
    ]
    assert sequences_of(entries, "x") == [[1, 3], [2, 0]]
    with pytest.raises(VlstressError, match=r"x: sequence 0 has frames \[0, 2\], not 0..1"):
        sequences_of([{"sequence": 0, "frame": 0}, {"sequence": 0, "frame": 2}], "x")
    with pytest.raises(VlstressError, match="frame 0 twice"):
        sequences_of([{"sequence": 0, "frame": 0}, {"sequence": 0, "frame": 0}], "x")
    with pytest.raises(VlstressError, match="image p has no sequence/frame"):
        sequences_of([{"path": "p", "label": 0}], "x")


# ------------------------------------------------------------------ the frames


@pytest.fixture(scope="module")
def photo() -> Image.Image:
    rng = np.random.default_rng(0)
    # smooth structure plus texture, not square, so that crops and warps matter
    y, x = np.mgrid[0:180, 0:240]
    base = np.stack([x / 240, y / 180, (x + y) / 420], axis=-1)
    pixels = np.clip(base + 0.2 * rng.random((180, 240, 3)), 0, 1)
    return Image.fromarray((255 * pixels).astype(np.uint8))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(angle=-7.0, resample="BILINEAR"),
        dict(scale=0.65, resample="BILINEAR"),
        dict(scale=1.06, resample="BILINEAR"),
        dict(translate=(-13, 0)),
        dict(shear=9.0, resample="BILINEAR"),
    ],
    ids=["rotate", "scale-down", "zoom", "translate", "shear"],
)
def test_affine_is_torchvision_affine_byte_for_byte(photo, kwargs):
    import torchvision.transforms.functional as F
    from torchvision.transforms import InterpolationMode

    resample = kwargs.pop("resample", "NEAREST")
    mine = perturbations.affine(photo, resample=getattr(Image.Resampling, resample), **kwargs)
    theirs = F.affine(
        photo,
        angle=kwargs.get("angle", 0.0),
        translate=list(kwargs.get("translate", (0, 0))),
        scale=kwargs.get("scale", 1.0),
        shear=kwargs.get("shear", 0.0),  # a number, as the reference's: [shear, 0]
        interpolation=getattr(InterpolationMode, resample),
    )
    assert np.array_equal(np.asarray(mine), np.asarray(theirs))


def test_every_perturbation_gives_its_frames(photo):
    for name, spec in perturbations.PERTURBATIONS.items():
        frames = perturbations.sequence(photo, name, size=64, seed=3)
        assert len(frames) == spec.frames, name
        assert all(f.shape == (64, 64, 3) and f.dtype == np.uint8 for f in frames), name
        again = perturbations.sequence(photo, name, size=64, seed=3)
        assert all(np.array_equal(a, b) for a, b in zip(frames, again)), f"{name} not seeded"
        assert any(not np.array_equal(frames[0], f) for f in frames[1:]), f"{name} never changes"
    assert set(perturbations.TEST) == {
        "gaussian_noise", "shot_noise", "motion_blur", "zoom_blur", "snow", "brightness",
        "translate", "rotate", "tilt", "scale",
    }  # fmt: skip


def test_noise_frames_start_clean_and_grow_with_difficulty(photo):
    clean = np.asarray(
        perturbations.center_crop(perturbations.resize_shorter(photo, 64), 64), dtype=float
    )
    spread = []
    for difficulty in (1, 2, 3):
        frames = perturbations.sequence(
            photo, "gaussian_noise", size=64, seed=0, difficulty=difficulty
        )
        assert np.array_equal(frames[0], clean.astype(np.uint8))
        spread.append(np.mean([np.abs(f - clean).mean() for f in frames[1:]]))
        different_seed = perturbations.sequence(photo, "gaussian_noise", size=64, seed=1)
        assert not np.array_equal(
            different_seed[1], perturbations.sequence(photo, "gaussian_noise", size=64, seed=0)[1]
        )
    assert spread[0] < spread[1] < spread[2]
    # brightness: frame 15 is the clean crop (shift 0), up to HSV round trip
    brightness = perturbations.sequence(photo, "brightness", size=64, seed=0)
    assert np.abs(brightness[15].astype(int) - clean).max() <= 1
    assert brightness[0].mean() < brightness[15].mean() < brightness[30].mean()


def test_unknown_perturbation_and_difficulty_are_named(photo):
    with pytest.raises(
        VlstressError, match="unknown perturbation 'rotat' \\(did you mean 'rotate'"
    ):
        perturbations.sequence(photo, "rotat", size=64, seed=0)
    with pytest.raises(VlstressError, match="difficulty must be 1, 2 or 3"):
        perturbations.sequence(photo, "rotate", size=64, seed=0, difficulty=4)


def _clean_set(root: Path, n: int, photo: Image.Image, broken: int | None = None):
    from vlstress.testsets import manifest as testsets

    images = []
    for i in range(n):
        path = root / "clean" / f"{i}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        if i == broken:
            path.write_bytes(b"not an image")
        else:
            photo.rotate(10 * i).save(path)
        images.append({"path": f"{i}.png", "label": i % 2})
    data = testsets.ClassificationSet(
        "toy", "folder", ["a", "b"], ["a", "b"], str(root / "clean"), images
    )
    testsets.write(root / "clean" / "manifest.json", data)
    return data


def test_generate_writes_a_set_of_sequences(tmp_path, photo):
    clean = _clean_set(tmp_path, 5, photo)
    data = sequences.generate(
        clean, "translate", n_images=3, seed=0, size=48, difficulty=1,
        out_dir=tmp_path / "out", workers=1, progress=False,
    )  # fmt: skip
    assert len(data.images) == 3 * 41
    assert {e["sequence"] for e in data.images} == {0, 1, 2}
    written = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert written["source"]["perturbation"] == "translate" and written["source"]["noise"] is False
    sources = sorted({e["source_path"] for e in data.images})
    assert sources == sorted(
        str(Path(clean.root) / clean.images[i]["path"]) for i in sequences.sample(5, 3, 0)
    )
    first = data.images[0]
    assert Image.open(tmp_path / "out" / first["path"]).size == (48, 48)
    # the same frames with two processes
    again = sequences.generate(
        clean, "translate", n_images=3, seed=0, size=48, difficulty=1,
        out_dir=tmp_path / "again", workers=2, progress=False,
    )  # fmt: skip
    for entry in again.images[::17]:
        assert (tmp_path / "again" / entry["path"]).read_bytes() == (
            tmp_path / "out" / entry["path"]
        ).read_bytes()


def test_a_broken_image_is_named_and_leaves_no_output(tmp_path, photo):
    clean = _clean_set(tmp_path, 3, photo, broken=1)
    with pytest.raises(VlstressError, match=r"clean/1\.png"):
        sequences.generate(
            clean, "rotate", n_images=None, seed=0, size=48, difficulty=1,
            out_dir=tmp_path / "out", workers=1, progress=False,
        )  # fmt: skip
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ the evaluation step


def _meta() -> dict:
    model = {"slug": "m", "arch": "X", "weights_label": "random-init (seed 0)"}
    return {"provenance": {"model": model, "seed": 0, "device": "cpu"}}


def _scores(order: list[int]) -> np.ndarray:
    """A frame's embedding whose scores against the identity classifier sort classes as `order`."""
    scores = np.zeros(6, dtype=np.float32)
    scores[order] = np.arange(6, 0, -1)
    return scores


def test_evaluate_stability_scores_a_hand_made_project(tmp_path, monkeypatch):
    import yaml

    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.record import read_records
    from vlstress.suites.stability.commands import evaluate_stability
    from vlstress.testsets import manifest as testsets

    from conftest import REPO

    monkeypatch.chdir(tmp_path)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["stability"].update(perturbations=["gaussian_noise", "rotate"], difficulty=1)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    classes = list("abcdef")
    clf = tmp_path / f"results/embeddings/m/classifiers/{params['stability']['testset']}.npy"
    write_npy(clf, np.eye(6, dtype=np.float32))
    write_json(sidecar(clf), {**_meta(), "classes": classes, "templates_source": "single"})
    base, swap = [0, 1, 2, 3, 4, 5], [1, 0, 2, 3, 4, 5]
    # two sequences of three frames (labels 0 and 2): the top-1 of each frame and its ranking
    frames = {
        "gaussian_noise": [[base, swap, base], [[2, 0, 1, 3, 4, 5]] * 3],
        "rotate": [[base, swap, base], [[2, 0, 1, 3, 4, 5]] * 2 + [[3, 2, 0, 1, 4, 5]]],
    }
    for name, seqs in frames.items():
        folder = tmp_path / "data" / "stability" / name
        images = [
            {"path": f"{s}/{f}.png", "label": [0, 2][s], "sequence": s, "frame": f}
            for s in range(2)
            for f in range(3)
        ]
        testsets.write(
            folder / "manifest.json",
            testsets.ClassificationSet(
                "toy-p", "perturbation-sequences", classes, classes, str(folder), images
            ),
        )
        emb = tmp_path / f"results/embeddings/m/zeroshot/stability/{name}.npy"
        write_npy(emb, np.stack([_scores(order) for seq in seqs for order in seq]))
        write_json(sidecar(emb), _meta())
    parser = argparse.ArgumentParser()
    evaluate_stability.add_arguments(parser)
    evaluate_stability.run(
        parser.parse_args(["--params", "params.yaml", "--model", "m", "--out", "out.json"])
    )
    records = {r.condition["perturbation"]: r for r in read_records(tmp_path / "out.json")}
    noise, rotate = records["gaussian_noise"].metrics, records["rotate"].metrics
    # noise: seq 0 flips at frame 1 only (vs frame 0): 1/2; seq 1 never: FP = 25 %
    assert noise["flip_probability"] == pytest.approx(25.0)
    assert noise["top5_distance"] == pytest.approx((2 + 0) / 2 / 2)
    # rotate: consecutive; seq 0 flips twice of 2, seq 1 once of 2: FP = 75 %
    assert rotate["flip_probability"] == pytest.approx(75.0)
    # seq 0: d = 2 twice; seq 1: 0, then [2,0,1,...] -> [3,2,0,1,...]: |1-2|+|2-3|+|3-4|+|4-1| = 6
    assert rotate["top5_distance"] == pytest.approx((2 + (0 + 6) / 2) / 2)
    assert noise["top1_first_frame"] == pytest.approx(100.0)  # frame 0: classes 0 and 2
    assert rotate["top1_frames"] == pytest.approx(100 * 4 / 6)
    assert records["rotate"].condition == {
        "set": "objects",
        "perturbation": "rotate",
        "difficulty": 1,
    }
    assert records["rotate"].dataset["n_images"] == 2 and records["rotate"].dataset["n_frames"] == 6
    # beside the records, one block of per-sequence outcomes per record, in the records' order
    from vlstress.outcomes import outcomes_path, read_outcomes
    from vlstress.suites.stability.resampling import flip_resampling

    order = [r.condition["perturbation"] for r in read_records(tmp_path / "out.json")]
    blocks = dict(zip(order, read_outcomes(outcomes_path(tmp_path / "out.json"))))
    assert blocks["rotate"].unit == "sequence" and blocks["rotate"].n == 2
    assert blocks["rotate"].column("flip_share").tolist() == [1.0, 0.5]
    assert blocks["rotate"].column("top5_distance").tolist() == [2.0, 3.0]
    assert blocks["gaussian_noise"].column("flip_share").tolist() == [0.5, 0.0]
    assert blocks["rotate"].column("label").tolist() == [0, 2]
    assert blocks["rotate"].column("first_correct").tolist() == [True, True]
    for name, block in blocks.items():
        resampled = flip_resampling(block)
        # the full block gives the record's value to the bit
        assert resampled.statistic(*resampled.samples) == records[name].metrics["flip_probability"]


def test_params_problems_name_the_entry():
    import yaml

    from vlstress.suites.stability.params import problems

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    on = frozenset({"zeroshot", "stability"})
    assert problems(params, on) == []
    params["stability"].update(perturbations=["rotat"], baseline="alexnet", testset="nope")
    found = problems(params, on)
    assert any("stability.testset: unknown test set 'nope'" in p for p in found)
    assert any("unknown perturbation 'rotat' (did you mean 'rotate'?)" in p for p in found)
    assert any("stability.baseline: unknown model 'alexnet'" in p for p in found)


def stability_summary(root: Path, values: dict[str, dict[str, tuple[float, float]]]):
    """The summary of hand-made stability records of set `objects` (14 sequences each): model ->
    perturbation -> (flip probability, top-5 distance)."""
    from vlstress.record import write_records
    from vlstress.report import records

    from report_fixtures import record

    paths = []
    for model, per in values.items():
        paths.append(root / "metrics" / model / "stability.json")
        conditions = {p: {"set": "objects", "perturbation": p, "difficulty": 1} for p in per}
        write_records(
            paths[-1],
            [
                record(
                    model,
                    "stability",
                    conditions[p],
                    {"flip_probability": fp, "top5_distance": t5d},
                )
                for p, (fp, t5d) in per.items()
            ],
        )
    return records.collect(paths)


def test_table_gives_mfp_and_mfr_against_the_baseline(tmp_path):
    """Hand-made records of two models through the summary: the table's means and the flip rate
    relative to the baseline, a zero baseline left out and noted."""
    from vlstress.report import records
    from vlstress.suites.stability import table

    fp = {
        "vit-b-32-random": {"rotate": 10.0, "gaussian_noise": 4.0, "brightness": 0.0},
        "rn50-openai": {"rotate": 5.0, "gaussian_noise": 1.0, "brightness": 2.0},
    }
    summary = stability_summary(
        tmp_path, {m: {p: (v, v / 10) for p, v in values.items()} for m, values in fp.items()}
    )
    markdown, latex, notes = table.render(summary, {}, "vit-b-32-random")
    agg = records.aggregate(summary)
    notes_seen: list[str] = []
    frame = table.frame(agg, "flip_probability", "mFP", "mFR (%)", "vit-b-32-random", notes_seen)
    assert frame is not None
    assert list(frame.columns) == ["gaussian_noise", "brightness", "rotate", "mFP", "mFR (%)"]
    openai = frame.loc["RN50 (openai)"]
    assert openai["mFP"] == "2.7"  # (5 + 1 + 2) / 3
    assert openai["mFR (%)"] == "37.5"  # (1/4 + 5/10) / 2, brightness left out (baseline 0)
    assert frame.loc["ViT-B-32 (random-init)"]["mFR (%)"] == "100.0"
    assert any("brightness, left out of the mean" in n for n in notes)
    assert "mFR (%)" in markdown and "mT5D rel. (\\%)" in latex
    _, _, missing = table.render(summary, {}, "vit-l-14")
    assert any("baseline 'vit-l-14' has no stability records" in n for n in missing)


def test_relative_values_are_computed_from_unrounded_means(tmp_path):
    """A known answer that the summary's 4-decimal means would change: FP 0.00018 against the
    baseline's 0.00012 is an mFR of 150%, not 0.0002 / 0.0001 = 200%; T5D 0.00026 against 0.00014
    is 185.7%, not 0.0003 / 0.0001 = 300%. Each caption names n and the baseline model."""
    from vlstress.suites.stability import table

    values = {"vit-b-32-random": (0.00012, 0.00014), "rn50-openai": (0.00018, 0.00026)}
    summary = stability_summary(tmp_path, {m: {"rotate": v} for m, v in values.items()})
    markdown, latex, notes = table.render(summary, {}, "vit-b-32-random")
    fp_row, t5d_row = (
        [c.strip() for c in line.strip("|").split("|")]
        for line in markdown.splitlines()
        if line.startswith("| RN50")
    )
    # the last column is the AlexNet-normalised one (here: not comparable), the one before it
    # the ratio to the run's baseline
    assert fp_row[-2] == "150.0", fp_row  # mFR; 200.0 from the rounded means
    assert t5d_row[-2] == "185.7", t5d_row  # relative mT5D; 300.0 from the rounded means
    assert fp_row[-1] == t5d_row[-1] == "not comparable"
    assert fp_row[1] == t5d_row[1] == "14"  # n: the sequences per perturbation
    # the captions name n (the fixture's records have 14 sequences) and the baseline model
    for name in ("mFR", "mT5D rel."):
        assert (
            f"n = 14 sequences per perturbation; {name} against the baseline model "
            "ViT-B-32 (random-init)" in markdown
        )
    assert "ViT-B-32 (random-init)" in latex and "n = 14 sequences" in latex
    # each caption says which values have an interval: the flip probabilities (none here: no
    # headline table given), not the top-5 distance
    assert markdown.count(table.FP_INTERVALS) == 1 and markdown.count(table.NO_INTERVAL) == 1


def test_the_figure_shows_a_value_of_zero(tmp_path):
    """A flip probability of 0 has no bar: the figure marks it on the axis, labelled 0, in the
    model's colour (and marks nothing where a value is above 0)."""
    import matplotlib

    matplotlib.use("Agg")
    from vlstress.suites.stability.figures import stability

    fp = {"vit-b-32-random": {"rotate": 0.0, "brightness": 2.0}, "rn50-openai": {"rotate": 5.0}}
    summary = stability_summary(
        tmp_path, {m: {p: (v, 1.0) for p, v in values.items()} for m, values in fp.items()}
    )
    fig, notes = stability(summary)
    assert "n = 14 sequences each" in fig._suptitle.get_text()
    assert notes[0].startswith("n = 14 sequences per perturbation") and "no interval" in notes[1]
    fp_axes = fig.axes[0]
    zeros = [t for t in fp_axes.texts if t.get_text() == "0"]
    assert len(zeros) == 1 and not [t for t in fig.axes[1].texts if t.get_text() == "0"]
    marks = [line for line in fp_axes.lines if list(line.get_ydata()) == [0, 0]]
    assert len(marks) == 1 and marks[0].get_linewidth() > 1
    # under the rotate group (x = 1: brightness first), in the colour of the model's bars
    assert abs(zeros[0].xy[0] - 1) < 0.5
    (vit_bar,) = [bar for bar in fp_axes.patches if bar.get_height() == 2.0]
    assert tuple(marks[0].get_color()) == tuple(vit_bar.get_facecolor())


# ------------------------------------------------------------------ the released videos


def _write_video(path: Path, frames: int, shade: int) -> None:
    import cv2

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 1, (48, 48))
    for i in range(frames):
        frame = np.zeros((48, 48, 3), dtype=np.uint8)
        frame[..., 2] = shade  # BGR: red in RGB
        frame[:, : 4 * (i + 1)] = 255
        writer.write(frame)
    writer.release()


def test_released_videos_are_read_for_the_sampled_images(tmp_path):
    from vlstress.testsets import manifest as testsets

    wnids = ["n01440764", "n01443537"]
    images = [
        {"path": f"{wnids[i % 2]}/ILSVRC2012_val_{i:08d}.JPEG", "label": i % 2} for i in range(4)
    ]
    clean = testsets.ClassificationSet("val", "imagenet", ["a", "b"], wnids, str(tmp_path), images)
    root = tmp_path / "ImageNet-P"
    for i, entry in enumerate(images):
        stem = Path(entry["path"]).with_suffix(".mp4")
        _write_video(root / "rotate" / stem, 5, 40 * i)
        _write_video(root / "shot_noise_2" / stem, 3, 40 * i)
    data = sequences.read_released(
        clean, "rotate", root, n_images=3, seed=0, size=224, difficulty=1,
        out_dir=tmp_path / "out", progress=False,
    )  # fmt: skip
    rows = sequences.sample(4, 3, 0)
    assert [e["label"] for e in data.images if e["frame"] == 0] == [
        images[r]["label"] for r in rows
    ]
    assert {e["frame"] for e in data.images} == set(range(5))
    frame = np.asarray(Image.open(tmp_path / "out" / "000000" / "02.png"), dtype=int)
    assert frame.shape == (48, 48, 3)
    assert frame[:, :10].mean() > 200 and frame[:, 20:, 1].mean() < 40  # white bar, then red/black
    # noise sets of difficulty 2 and 3 are folders of their own
    noise = sequences.read_released(
        clean, "shot_noise", root, n_images=None, seed=0, size=224, difficulty=2,
        out_dir=tmp_path / "noise", progress=False,
    )  # fmt: skip
    assert len(noise.images) == 4 * 3 and noise.source["noise"] is True
    # a missing video and a one-frame video are named, and leave no output
    (root / "rotate" / Path(images[rows[1]]["path"]).with_suffix(".mp4")).unlink()
    with pytest.raises(VlstressError, match=r"ImageNet-P video not found: .*rotate/n014"):
        sequences.read_released(
            clean, "rotate", root, n_images=3, seed=0, size=224, difficulty=1,
            out_dir=tmp_path / "out2", progress=False,
        )  # fmt: skip
    assert not (tmp_path / "out2").exists()
    _write_video(root / "scale" / Path(images[0]["path"]).with_suffix(".mp4"), 1, 0)
    with pytest.raises(VlstressError, match="1 frame\\(s\\) decoded; a sequence needs at least 2"):
        sequences.decode_video(root / "scale" / Path(images[0]["path"]).with_suffix(".mp4"))


def test_the_flip_bootstrap_resamples_sequences():
    """A BCa interval over sequences brackets the record's FP, matches scipy's bootstrap of the
    mean flip share, and two models on the same sequences are compared with the paired
    bootstrap."""
    from scipy.stats import bootstrap

    from vlstress.report.intervals import bootstrap_interval
    from vlstress.suites.findings.comparisons import comparison_table
    from vlstress.suites.stability.resampling import flip_resampling, sequence_outcomes

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 10, 60)

    def block(shares):
        return sequence_outcomes(shares, 2 * shares, shares < 0.5, labels)

    steady, shaky = block(rng.uniform(0, 0.2, 60)), block(rng.uniform(0.3, 0.7, 60))
    value = 100 * steady.column("flip_share").mean()
    lo, hi, method = bootstrap_interval(flip_resampling(steady), 0.95, 2000, 0)
    assert method == "BCa" and lo < value < hi
    reference = bootstrap(
        (100 * steady.column("flip_share"),),
        np.mean,
        confidence_level=0.95,
        n_resamples=2000,
        method="BCa",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert (lo, hi) == pytest.approx((reference.low, reference.high), abs=1e-9)
    case = ("toy-p", "stability", "{}")  # (model, dataset, task, condition) keys
    items = {("steady", *case): [steady], ("shaky", *case): [shaky]}
    (row,) = comparison_table(items, 0.95, 1000, 0).to_dict("records")
    assert (row["model_a"], row["model_b"], row["n"]) == ("shaky", "steady", 60)
    assert row["test"] == "paired BCa bootstrap" and row["lo"] > 0 and row["significant"]
    assert row["difference"] == pytest.approx(
        100 * (shaky.column("flip_share").mean() - steady.column("flip_share").mean())
    )


def test_three_sequences_are_too_few_to_test():
    """The demo's 3 sequences per perturbation: no bootstrap and no p, the row says why, Holm's
    correction counts only the rows tested, and the Markdown says "not tested" where a p of 0
    used to say "significant"."""
    from vlstress.report.intervals import TOO_FEW_ITEMS
    from vlstress.suites.findings.comparisons import comparison_table, comparisons_markdown
    from vlstress.suites.stability.resampling import sequence_outcomes

    rng = np.random.default_rng(3)

    def block(shares, labels):
        return sequence_outcomes(shares, 2 * shares, shares < 0.5, labels)

    few, many = rng.integers(0, 10, 3), rng.integers(0, 10, 60)
    items = {
        ("steady", "toy-p", "stability", "{}"): [block(np.array([0.0, 0.1, 0.0]), few)],
        ("shaky", "toy-p", "stability", "{}"): [block(np.array([0.6, 0.7, 0.5]), few)],
        ("steady", "toy-q", "stability", "{}"): [block(rng.uniform(0, 0.2, 60), many)],
        ("shaky", "toy-q", "stability", "{}"): [block(rng.uniform(0.3, 0.7, 60), many)],
    }
    table = comparison_table(items, 0.95, 1000, 0).set_index("dataset")
    small, large = table.loc["toy-p"], table.loc["toy-q"]
    assert small["test"] == f"none: {TOO_FEW_ITEMS}" and small["n"] == 3
    assert small["difference"] == pytest.approx(100 * (0.6 - 1 / 30))
    assert np.isnan(small["p"]) and np.isnan(small["p_holm"]) and not small["significant"]
    # one tested row: Holm over it alone leaves its p as it is
    assert large["p_holm"] == pytest.approx(large["p"]) and large["significant"]
    text = comparisons_markdown(table.reset_index(), 0.95)
    assert "not tested" in text and "the 1 tested comparisons" in text


def test_flip_probability_cells_show_the_headline_interval(tmp_path):
    """Given the headline table, each flip probability shows its interval (the case's, matched on
    model, set, task and condition); a case the table gives none shows its value alone; the top-5
    distance never has one."""
    from vlstress.report.headlines import COLUMNS
    from vlstress.suites.stability import table

    summary = stability_summary(
        tmp_path,
        {  # flip probability in percent
            m: {p: (fp, 0.5) for p in ("rotate", "brightness")}
            for m, fp in (("vit-b-32-random", 1.2), ("rn50-openai", 3.4))
        },
    )
    rows = summary[summary["metric"] == "flip_probability"].copy()
    rows["lo"] = [1.0 if m == "rn50-openai" else float("nan") for m in rows["model"]]
    rows["hi"] = rows["value"] + 2.0
    rows["interval"] = "BCa bootstrap"
    for column in COLUMNS:
        rows[column] = rows[column] if column in rows else float("nan")
    rows["percentile"] = float("nan")
    markdown, _, _ = table.render(summary, {}, None, rows)
    fp_table = markdown.split("### Top-5")[0]
    rn50 = next(line for line in fp_table.splitlines() if line.startswith("| RN50"))
    cells = [c.strip() for c in rn50.strip("|").split("|")]
    # brightness, rotate: 3.4 with [1.0, 5.4] from the table (the value in percent)
    assert cells[2:4] == ["3.4 [1.0, 5.4]", "3.4 [1.0, 5.4]"], cells
    vit = next(line for line in fp_table.splitlines() if line.startswith("| ViT-B-32"))
    assert "[" not in vit  # its rows have no lower bound: no interval
    assert "[" not in markdown.split("### Top-5")[1].split("<!--")[0]
