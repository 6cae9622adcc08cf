"""The correspondence suite's wiring: params checks, protocol settings, pair lists of the synthetic
kinds, the records and outcomes of an evaluation (aggregation of known per-pair errors), the end to
end step on a random-init tower, the figures, table and pricing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from vlstress.errors import VlstressError
from vlstress.suites.correspondence import catalogue, settings

from conftest import REPO

SCENES = dict(
    kind="synthetic-scannet", image_size="480,640", mean="0.5,0.5,0.5", std="0.5,0.5,0.5",
    thresholds="5px,10px,20px", matches=1000, scale_factor=0.25, binned="10px",
    bins="0,15,30,60,180",
)  # fmt: skip


def demo_params() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def test_params_problems_name_the_set_and_field():
    from vlstress.suites.correspondence.params import problems

    params = demo_params()
    on = frozenset({"correspondence"})
    assert problems(params, on) == []
    sets = params["correspondence"]["sets"]
    sets["scenes"]["kind"] = "scannet"
    sets["corners"]["thresholds"] = "10px"
    found = problems(params, on)
    assert found[0].startswith("correspondence.sets.scenes.kind: unknown correspondence set kind")
    assert found[1] == (
        "correspondence.sets.corners.thresholds: threshold '10px': the spair protocol measures "
        "errors in box"
    )
    params = demo_params()
    params["correspondence"]["sets"]["scenes"].update(matches=None, binned="2cm")
    found = problems(params, on)
    assert "correspondence.sets.scenes: the scannet protocol needs matches" in found
    assert any(f.startswith("correspondence.sets.scenes.binned: threshold '2cm'") for f in found)
    params = demo_params()
    params["correspondence"]["sets"]["scenes"].update(kind="scannet-1500", root=None)
    assert problems(params, on) == [
        "correspondence.sets.scenes.root: a scannet-1500 set reads the release folder named here"
    ]


def test_thresholds_and_bins_parse_with_their_units():
    found = catalogue.parse_thresholds("1cm,2cm,5px", "navi")
    assert [(t.value, t.unit, t.metric) for t in found] == [
        (1.0, "cm", "recall_1cm"), (2.0, "cm", "recall_2cm"), (5.0, "px", "recall_5px"),
    ]  # fmt: skip
    assert found[1].metres == pytest.approx(0.02)
    assert catalogue.parse_thresholds("0.1box", "spair")[0].metric == "pck_0.1box"
    with pytest.raises(ValueError, match="expected a number and a unit"):
        catalogue.parse_thresholds("10", "scannet")
    with pytest.raises(ValueError, match="increasing"):
        catalogue.parse_bins("0,30,15")


def test_the_protocol_file_round_trips(tmp_path):
    from vlstress.io import write_json

    protocol = settings.build(**SCENES)
    assert protocol.image_size == (480, 640) and protocol.headline.metric == "recall_10px"
    write_json(tmp_path / settings.FILE, {**protocol.to_json(), "set": "scenes"})
    assert settings.read(tmp_path) == ("scenes", protocol)
    with pytest.raises(VlstressError, match="needs scale_factor"):
        settings.build(**{**SCENES, "scale_factor": None})
    with pytest.raises(VlstressError, match="not found: build the set's pair list first"):
        settings.read(tmp_path / "nothing")


def _build(out: Path, name: str = "scenes", count: int = 4, seed: int = 0, **changes):
    from vlstress.suites.correspondence import pair_lists

    return pair_lists.build(name, settings.build(**{**SCENES, **changes}), None, count, seed, out)


def test_a_synthetic_pair_list_is_byte_stable_and_spreads_its_rotations(tmp_path):
    first = _build(tmp_path / "a" / "scenes")
    _build(tmp_path / "b" / "scenes")
    files = sorted(
        p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file()
    )
    assert files == sorted(
        p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file()
    )
    for relative in files:
        if relative.name == "pairs.json":  # names its own folder
            continue
        assert (tmp_path / "a" / relative).read_bytes() == (tmp_path / "b" / relative).read_bytes()
    angles = sorted(pair.rotation_deg for pair in first.pairs)
    assert angles == pytest.approx([5.0, 28.333, 51.667, 75.0], abs=0.01)
    assert first.header.synthetic and first.header.root.endswith("a/scenes/release")
    other = _build(tmp_path / "c" / "scenes", seed=1)
    image = Path(first.pairs[0].images[0])
    assert (tmp_path / "a/scenes/release" / image).read_bytes() != (
        tmp_path / "c/scenes/release" / image
    ).read_bytes()  # another seed, other textures
    assert len(other.pairs) == 4


def test_a_release_kind_needs_its_folder(tmp_path):
    from vlstress.suites.correspondence import pair_lists

    protocol = settings.build(**{**SCENES, "kind": "scannet-1500"})
    with pytest.raises(VlstressError, match="needs --root"):
        pair_lists.build("s", protocol, None, None, 0, tmp_path / "s")
    with pytest.raises(VlstressError, match="missing file .*intrinsics.npz"):
        (tmp_path / "empty").mkdir()
        pair_lists.build("s", protocol, tmp_path / "empty", None, 0, tmp_path / "s")
    assert not (tmp_path / "s").exists()  # nothing half-written


def _scores(protocol, errors_per_pair, angles, groups=None):
    from vlstress.suites.correspondence.evaluation import _score
    from vlstress.suites.correspondence.resampling import EACH_PAIR

    groups = groups or [EACH_PAIR] * len(angles)
    return [
        _score({"px": np.asarray(e, float), "box": np.asarray(e, float)}, protocol.thresholds, a, g)
        for e, a, g in zip(errors_per_pair, angles, groups, strict=True)
    ]


def test_records_aggregate_known_errors_as_probe3d():
    """Per-pair errors with known recalls: the all-pairs record's recalls are Probe3D's mean over
    every match, each rotation bin's the mean of its pairs' 10 px recall; an empty bin gets no
    record; the outcomes' statistic gives each record's recall back."""
    from vlstress.suites.correspondence.evaluation import records_of
    from vlstress.suites.correspondence.resampling import recall_resampling

    protocol = settings.build(**SCENES)
    errors = [[1, 6, 12, 30], [4, 9, 25, 25], [15, 15, 15, 15], [0, 0, 0, 50]]
    angles = [3.0, 10.0, 40.0, 70.0]
    model = {"slug": "m", "arch": "A", "weights_label": "random-init (seed 0)"}
    made = records_of(
        "scenes", protocol, _scores(protocol, errors, angles), {"name": "scenes"}, {"model": model}
    )
    everything = np.concatenate(errors)
    first = made.records[0]
    assert first.condition["bin"] == "all" and first.metrics["n_pairs"] == 4
    for threshold in (5, 10, 20):
        assert first.metrics[f"recall_{threshold}px"] == pytest.approx(
            100 * np.mean(everything < threshold)
        )
    assert first.metrics["recall"] == first.metrics["recall_10px"]
    bins = {r.condition["bin"]: r.metrics for r in made.records[1:]}
    assert list(bins) == ["0-15", "30-60", "60-180"]  # 15-30 holds no pair
    assert bins["0-15"]["recall"] == pytest.approx((50 + 50) / 2)
    assert bins["30-60"]["recall"] == 0 and bins["60-180"]["recall"] == pytest.approx(75)
    for record, outcomes in zip(made.records, made.outcomes, strict=True):
        sampled = recall_resampling(outcomes)
        assert sampled.statistic(*sampled.samples) == pytest.approx(record.metrics["recall"])


def test_spair_records_average_the_classes():
    """SPair: keypoints pool within a class, the classes are averaged (Probe3D); buckets are the
    viewpoint variations found."""
    from vlstress.suites.correspondence.evaluation import records_of
    from vlstress.suites.correspondence.resampling import recall_resampling

    protocol = settings.build(
        kind="synthetic-spair", image_size="800", mean="0.5,0.5,0.5", std="0.5,0.5,0.5",
        thresholds="0.1box", split="test",
    )  # fmt: skip
    errors = [[0.05, 0.2], [0.01, 0.02, 0.5, 0.5], [0.3]]
    made = records_of(
        "corners", protocol, _scores(protocol, errors, [0.0, 1.0, 0.0], [0, 0, 1]),
        {"name": "corners"}, {"model": {"slug": "m", "arch": "A", "weights_label": "x"}},
    )  # fmt: skip
    # class 0 pools 3 of 6 keypoints (50%), class 1 has 0 of 1: the mean is 25%
    assert made.records[0].metrics["pck_0.1box"] == pytest.approx(25.0)
    assert made.records[0].metrics["n_keypoints"] == 7
    buckets = {r.condition["bin"]: r.metrics["recall"] for r in made.records[1:]}
    assert buckets == {"0": pytest.approx((50 + 0) / 2), "1": pytest.approx(50.0)}
    for record, outcomes in zip(made.records, made.outcomes, strict=True):
        sampled = recall_resampling(outcomes)
        assert sampled.statistic(*sampled.samples) == pytest.approx(record.metrics["recall"])
    # pairs that say which of Probe3D's samples drew them: `all` is its own sample, a bucket's
    # record holds the pairs of that bucket's sample only
    from dataclasses import replace

    scores = _scores(protocol, errors, [0.0, 1.0, 0.0], [0, 0, 1])
    scores = [replace(s, samples=m) for s, m in zip(scores, [("0",), ("1", "all"), ("all",)])]
    made = records_of("corners", protocol, scores, {"name": "corners"}, made.records[0].provenance)
    assert made.records[0].metrics["n_pairs"] == 2  # the `all` sample: pairs 2 and 3
    assert made.records[0].metrics["recall"] == pytest.approx((50 + 0) / 2)
    assert {r.condition["bin"]: r.metrics["n_pairs"] for r in made.records[1:]} == {"0": 1, "1": 1}


def test_pairs_that_keep_fewer_matches_are_refused_by_name():
    """Probe3D's recall over every match equals the mean of the pairs' recalls (what the intervals
    resample) only when every pair keeps as many matches: a pair with fewer is named."""
    from vlstress.suites.correspondence.evaluation import check_counts

    protocol = settings.build(**SCENES)
    found = _scores(protocol, [[1.0] * 4, [1.0] * 3, [2.0] * 4], [1.0, 2.0, 3.0])
    with pytest.raises(VlstressError, match="pair b keeps 3 matches, others 4"):
        check_counts("scenes", protocol, found, ["a", "b", "c"])
    check_counts("scenes", protocol, [found[0], found[2]], ["a", "c"])
    empty = _scores(protocol, [[1.0] * 4, []], [1.0, 2.0])
    with pytest.raises(VlstressError, match="pair\\(s\\) y have no match"):
        check_counts("scenes", protocol, empty, ["x", "y"])


def _evaluate(pairs: Path, out: Path) -> list[dict]:
    from vlstress.suites.correspondence.commands import evaluate_correspondence

    parser = argparse.ArgumentParser()
    evaluate_correspondence.add_arguments(parser)
    args = parser.parse_args(
        ["--pairs", str(pairs), "--model", "vit", "--arch", "ViT-S-32-alt", "--pretrained",
         "None", "--device", "cpu", "--threads", "1", "--batch-size", "2", "--out", str(out)]
    )  # fmt: skip
    evaluate_correspondence.run(args)
    return json.loads(out.read_text())


@pytest.mark.slow
def test_the_step_on_a_random_init_tower_is_deterministic(tmp_path):
    """End to end on two rendered pairs: the records name the set, protocol and bins, say the
    pairs are synthetic and which layer was read; a rerun writes the same bytes."""
    _build(tmp_path / "scenes", count=2)
    found = _evaluate(tmp_path / "scenes", tmp_path / "a.json")
    _evaluate(tmp_path / "scenes", tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert [r["condition"]["bin"] for r in found] == ["all", "0-15", "60-180"]
    first = found[0]
    assert first["dataset"]["synthetic"] is True and first["metrics"]["n_pairs"] == 2
    assert 0 <= first["metrics"]["recall_5px"] <= first["metrics"]["recall_20px"] <= 100
    assert first["provenance"]["params"]["features"]["rule"] == "probe3d-clip"
    assert first["metrics"]["n_matches"] == 2 * 1000


def _summary(tmp_path: Path) -> pd.DataFrame:
    from vlstress.record import write_records
    from vlstress.report import records

    from report_fixtures import record

    paths = []
    for model, tower, base in (
        ("vit-b-32-random", "transformer", 40.0),
        ("rn50-openai", "cnn", 60.0),
    ):
        rows = []
        condition = {
            "set": "scenes",
            "protocol": "scannet",
            "bin_by": "rotation",
            "threshold": "10px",
        }
        metrics = {"recall": base, "recall_5px": base / 2, "recall_10px": base,
                   "recall_20px": base + 10, "n_pairs": 4, "n_matches": 4000}  # fmt: skip
        rows.append(record(model, "correspondence", {**condition, "bin": "all"}, metrics))
        for k, label in enumerate(("0-15", "15-30")):
            metrics = {"recall": base - 10 * k, "n_pairs": 2, "n_matches": 2000}
            rows.append(record(model, "correspondence", {**condition, "bin": label}, metrics))
        for rec in rows:
            rec.provenance["model"]["attributes"] = {"tower": tower}
        paths.append(tmp_path / model / "correspondence-scenes.json")
        write_records(paths[-1], rows)
    return records.collect(paths)


def test_the_table_and_figures_show_each_model_by_tower(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from vlstress.suites.correspondence import figures, table

    summary = _summary(tmp_path)
    frame = table.correspondence_table(summary)
    assert frame is not None
    assert frame.loc["RN50 (openai)", "tower"] == "cnn"
    assert frame.loc["RN50 (openai)", "scenes: 10 px"] == "60.0"
    assert frame.loc["ViT-B-32 (random-init)", "scenes: 10 px @ 15-30"] == "30.0"
    assert frame.loc["ViT-B-32 (random-init)", "scenes: n"] == "4"
    fig, notes = figures.correspondence_bins(summary)
    lines = fig.axes[0].get_lines()
    assert sorted(list(line.get_ydata()) for line in lines) == [[40.0, 30.0], [60.0, 50.0]]
    styles = figures.model_styles(figures.correspondence_rows(summary))
    assert styles["RN50 (openai)"]["color"] != styles["ViT-B-32 (random-init)"]["color"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["0-15\n(n=2)", "15-30\n(n=2)"]
    fig, _ = figures.correspondence_recall(summary)
    assert sorted(list(line.get_ydata()) for line in fig.axes[0].get_lines()) == [
        [20.0, 40.0, 50.0], [30.0, 60.0, 70.0],
    ]  # fmt: skip


def test_pricing_counts_pairs_at_the_protocol_size(tmp_path):
    from vlstress.suites.correspondence import pricing

    entry = {"kind": "scannet-1500", "image_size": "480,640"}
    assert pricing.pixels_per_image(entry) == pytest.approx(480 * 640 / 224**2)

    class Context:
        project = tmp_path
        given = {"navi": 300}

    assert pricing.pairs_of(Context, "s", entry) == (1500, "ScanNet-1500")
    assert pricing.pairs_of(Context, "navi", {"kind": "navi"}) == (300, "given (--size)")
    with pytest.raises(VlstressError, match="--size other=N"):
        pricing.pairs_of(Context, "other", {"kind": "navi"})
    synthetic = {"kind": "synthetic-spair", "pairs": 8}
    assert pricing.pairs_of(Context, "c", synthetic) == (12, "rendered")
    assert pricing.pairs_of(Context, "c", {**synthetic, "pairs": 1}) == (6, "rendered")
    built = tmp_path / "data/correspondence/s"
    built.mkdir(parents=True)
    (built / "pairs.json").write_text(json.dumps({"pairs": [{}, {}, {}]}))
    assert pricing.pairs_of(Context, "s", entry) == (3, "pair list")


def test_pricing_knows_the_synthetic_spair_buckets():
    from collections import Counter

    from vlstress.suites.correspondence import pricing, synthetic

    azimuths = synthetic.SPAIR_AZIMUTHS
    buckets = Counter(
        synthetic.bucket(abs(b - a)) for i, a in enumerate(azimuths) for b in azimuths[i + 1 :]
    )
    assert tuple(buckets[k] for k in (0, 1, 2)) == pricing.SYNTHETIC_SPAIR_BUCKETS
    assert len(synthetic.SPAIR_CLASSES) == pricing.SYNTHETIC_SPAIR_CLASSES


def pooled_class_mean(correct, counted, group) -> float:
    """Probe3D's class average, written out: each drawn class with something counted."""
    if (group == -1).all():
        return 100 * np.mean(correct / counted)
    shares = [
        correct[group == g].sum() / counted[group == g].sum()
        for g in np.unique(group)
        if counted[group == g].sum() > 0
    ]
    return 100 * np.mean(shares)


def test_the_recall_of_a_batch_of_resampled_pairs_is_that_of_each_resample():
    """scipy's vectorized bootstrap hands the statistic resamples as rows: each row's class mean
    (or mean over pairs) is that of the resample alone, a class not drawn left out of its mean."""
    from vlstress.suites.correspondence.resampling import EACH_PAIR, class_mean_recall

    rng = np.random.default_rng(5)
    counted = rng.integers(0, 6, (8, 9)).astype(float)
    correct = np.minimum(rng.integers(0, 6, (8, 9)), counted)
    for group in (rng.integers(0, 3, (8, 9)), np.full((8, 9), EACH_PAIR)):
        safe = np.where(group == EACH_PAIR, np.maximum(counted, 1), counted)
        batch = class_mean_recall(correct, safe, group)
        expected = [pooled_class_mean(c, k, g) for c, k, g in zip(correct, safe, group)]
        assert batch.shape == (8,)
        np.testing.assert_allclose(batch, expected, rtol=1e-12)
        np.testing.assert_allclose(class_mean_recall(correct.T, safe.T, group.T, axis=0), batch)
    # a resample whose pairs count nothing has no recall
    assert np.isnan(class_mean_recall(np.zeros(3), np.zeros(3), np.array([0, 0, 1])))
