"""Shape bias on the cue-conflict stimuli: the definition on hand-made decisions, model-vs-human's
ImageNet-1k mapping (mean, not sum), counts by hand on real stimuli, the stimuli's checks (every
file against its pinned sha256, missing and extra categories named), the download (resumed,
checked) from a local HTTP server, and the table and figure of a summary."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_download import Server  # a local HTTP server with Range support
from test_holistic_commands import MODEL, unit, write_classifier, write_embeddings

from vlstress import cli
from vlstress.errors import VlstressError
from vlstress.record import read_records
from vlstress.suites.shape_bias import decisions, stimuli
from vlstress.suites.shape_bias.run import evaluate
from vlstress.testsets import manifest as testsets

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "cue-conflict"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/cue-conflict absent")


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


# ------------------------------------------------------------------ the definition


def test_shape_bias_known_answer():
    # stimulus: (shape, texture, decision); the 4th has no cue conflict and is left out
    shapes = [0, 0, 1, 1, 2]
    textures = [1, 2, 0, 1, 0]
    chosen = [0, 2, 2, 1, 0]  # shape, texture, other, (no conflict), texture
    found = decisions.counts(chosen, shapes, textures)
    assert found["shape_bias"] == pytest.approx(1 / 3)
    assert found["shape_decisions"] == pytest.approx(25.0)
    assert found["texture_decisions"] == pytest.approx(50.0)
    assert found["other_decisions"] == pytest.approx(25.0)
    assert (found["n_conflict"], found["n_no_conflict"]) == (4, 1)


def test_shape_bias_is_undefined_without_shape_or_texture_decisions():
    found = decisions.counts([2, 2], [0, 1], [1, 0])
    assert found["shape_bias"] is None and found["other_decisions"] == 100.0
    assert decisions.counts([0], [0], [0])["shape_decisions"] is None  # no conflict at all


def test_per_category_groups_by_shape():
    names = ["a", "b", "c"]
    found = decisions.by_category([0, 1, 1, 2], [0, 0, 1, 2], [1, 1, 0, 0], names)
    assert list(found) == ["all", "a", "b", "c"]
    assert found["a"]["shape_bias"] == pytest.approx(0.5)  # one shape, one texture decision
    assert found["b"]["shape_bias"] == 1.0 and found["c"]["shape_bias"] == 1.0
    assert found["all"]["shape_bias"] == pytest.approx(3 / 4)


def test_imagenet16_decision_averages_probabilities():
    names = stimuli.categories()
    indices = decisions.imagenet16_indices()
    assert sum(len(v) for v in indices.values()) == 207
    probs = np.zeros((2, 1000))
    # knife has one class at 0.3; dog's 109 classes hold 0.005 each (0.545 in all): the mean picks
    # knife, a sum would pick dog
    probs[0, indices["knife"][0]] = 0.3
    probs[0, list(indices["dog"])] = 0.005
    probs[1, indices["oven"][0]] = 0.9
    chosen = decisions.imagenet16_decisions(probs, names)
    assert [names[i] for i in chosen] == ["knife", "oven"]
    with pytest.raises(VlstressError, match="1000 probabilities"):
        decisions.imagenet16_decisions(np.zeros((1, 16)), names)


def test_pinned_list_is_the_full_set():
    rows = stimuli.pinned()
    assert len(rows) == 1280 and len(stimuli.categories()) == 16
    assert all(sum(r.shape == c for r in rows) == 80 for c in stimuli.categories())
    assert sum(r.shape == r.texture for r in rows) == 80
    assert all(stimuli.texture_from_name(r.file) == r.texture for r in rows)
    # the demo's stimuli are released files, byte for byte
    for path in stimuli.DEMO.rglob("*.png"):
        name = path.relative_to(stimuli.DEMO).as_posix()
        match = [r for r in rows if r.file == name]
        assert match and hashlib.sha256(path.read_bytes()).hexdigest() == match[0].sha256


# ------------------------------------------------------------------ the stimuli


def build(tmp_path: Path, source: str, *extra: str) -> int:
    return cli.main(["cue-conflict", "--source", source, *extra, "--out", str(tmp_path / "set")])


def test_demo_stimuli_make_a_labelled_set(tmp_path):
    assert build(tmp_path, "demo") == 0
    data = testsets.load(tmp_path / "set")
    assert data.classes == stimuli.categories() and len(data.images) == 17
    entry = next(e for e in data.images if e["path"] == "car/car1-chair3.png")
    assert data.classes[entry["label"]] == "car" and data.classes[entry["texture"]] == "chair"
    assert (tmp_path / "set/images/car/car1-chair3.png").is_file()
    assert data.source["complete"] is False and "CC BY 4.0" in data.source["licence"]


@needs_shared
def test_a_local_folder_is_checked_file_by_file(tmp_path):
    folder = tmp_path / "cc"
    shutil.copytree(SHARED, folder, ignore=shutil.ignore_patterns("*.tsv", "*.json", "LICENSE"))
    assert build(tmp_path, str(folder), "--per-category", "2") == 0
    assert len(testsets.load(tmp_path / "set").images) == 32

    shutil.rmtree(folder / "oven")
    assert build(tmp_path / "a", str(folder)) == 2  # a VlstressError: exit 2, the message named
    shutil.copytree(SHARED / "oven", folder / "oven")
    shutil.copytree(SHARED / "oven", folder / "ovens")
    with pytest.raises(VlstressError, match="not one of the 16 categories: ovens"):
        stimuli.gather(str(folder), None, tmp_path / "b", cache_dir=tmp_path / "cache")
    shutil.rmtree(folder / "ovens")
    shutil.rmtree(folder / "truck")
    with pytest.raises(VlstressError, match="missing: truck"):
        stimuli.gather(str(folder), None, tmp_path / "b", cache_dir=tmp_path / "cache")
    shutil.copytree(SHARED / "truck", folder / "truck")
    # one byte changed: named, with both checksums
    target = folder / "car" / "car1-airplane1.png"
    target.write_bytes(target.read_bytes()[:-1] + b"\x00")
    with pytest.raises(VlstressError, match=r"car1-airplane1.png: sha256 .* differs"):
        stimuli.gather(str(folder), None, tmp_path / "b", cache_dir=tmp_path / "cache")
    target.unlink()
    (folder / "car" / "car1-car9.png").write_bytes(b"x")
    with pytest.raises(VlstressError, match="car/car1-car9.png is not one of the 1,280"):
        stimuli.gather(str(folder), None, tmp_path / "b", cache_dir=tmp_path / "cache")
    (folder / "car" / "car1-car9.png").unlink()
    # the shared subset is the first 6 of each category: 7 are more than there are
    with pytest.raises(VlstressError, match="per_category 7 needs .* missing 17"):
        stimuli.gather(str(folder), 7, tmp_path / "b", cache_dir=tmp_path / "cache")
    assert not (tmp_path / "a" / "set").exists()  # a failed build leaves no output


@needs_shared
def test_download_resumes_and_checks_every_file(tmp_path):
    server = Server()
    try:
        wanted = stimuli.first_per_category(list(stimuli.pinned()), 1)
        for s in wanted:
            server.files[f"/stimuli/{s.file}"] = (SHARED / s.file).read_bytes()
        first = f"/stimuli/{wanted[0].file}"
        server.truncate[first] = 1000  # the first transfer breaks off; the retry resumes it
        cache = tmp_path / "cache"
        chosen, where = stimuli.gather(
            server.url + "/stimuli", 1, tmp_path / "images", cache_dir=cache
        )
        assert [s.file for s in chosen] == [s.file for s in wanted]
        assert where["url"] == server.url + "/stimuli" and where["complete"] is False
        ranges = [rng for path, rng in server.requests if path == first]
        assert ranges == [None, "bytes=1000-"]
        for s in wanted:
            assert (tmp_path / "images" / s.file).read_bytes() == (SHARED / s.file).read_bytes()
        # a mirror serving another file is refused, naming the URL
        shutil.rmtree(cache)
        server.files[first] = server.files[first][:-1] + b"\x01"
        with pytest.raises(VlstressError, match=r"checksum mismatch for http://.*airplane1"):
            stimuli.gather(server.url + "/stimuli", 1, tmp_path / "again", cache_dir=cache)
    finally:
        server.close()


# ------------------------------------------------------------------ one model's records


def fake_model_outputs(tmp_path: Path, folder: Path, decide) -> tuple[Path, Path]:
    """Embeddings that put each stimulus on the category `decide(shape, texture)` names (the
    classifier: one unit vector per category)."""
    data = testsets.load(folder)
    rows = np.array(
        [
            np.eye(16)[
                data.classes.index(decide(data.classes[e["label"]], data.classes[e["texture"]]))
            ]
            for e in data.images
        ]
    )
    emb = tmp_path / "emb.npy"
    clf = tmp_path / "clf.npy"
    write_embeddings(emb, rows)
    write_classifier(clf, data.classes, np.eye(16))
    return emb, clf


@needs_shared
def test_counts_by_hand_on_real_stimuli(tmp_path):
    folder = tmp_path / "cc"
    shutil.copytree(SHARED, folder, ignore=shutil.ignore_patterns("*.tsv", "*.json", "LICENSE"))
    assert build(tmp_path, str(folder), "--per-category", "3") == 0
    # a model that goes by shape for animals, by texture for everything else
    animals = {"bear", "bird", "cat", "dog", "elephant"}
    emb, clf = fake_model_outputs(
        tmp_path, tmp_path / "set", lambda shape, texture: shape if shape in animals else texture
    )
    records, sidecar, outcomes = evaluate(tmp_path / "set", emb, clf)
    by_condition = {r.condition["category"]: r.metrics for r in records}
    # each record's stimuli as outcomes: the shape bias again, to the bit
    from vlstress.suites.shape_bias.resampling import shape_bias_resampling

    assert len(outcomes) == len(records)
    for record, block in zip(records, outcomes):
        found = shape_bias_resampling(block)
        assert float(found.statistic(*found.samples)) == record.metrics["shape_bias"]
    assert outcomes[0].n == 48 and int(outcomes[0].column("shape_decision").sum()) == 14
    # by hand from the file names (first 3 per folder, byte order: `bear1-` before `bear10`): the
    # no-conflict stimuli are bear1-bear3, bicycle1-bicycle3 and car1-car2
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.png"))
    first3 = [
        n for c in stimuli.categories() for n in [m for m in names if m.startswith(c + "/")][:3]
    ]
    conflict = [n for n in first3 if n.split("/")[0] != stimuli.texture_from_name(n)]
    assert len(first3) == 48 and len(conflict) == 45
    shape = sum(n.split("/")[0] in animals for n in conflict)
    assert shape == 14  # 3 each for bird, cat, dog, elephant; bear has one without conflict
    overall = by_condition["all"]
    assert overall["n_conflict"] == 45 and overall["n_no_conflict"] == 3
    assert overall["shape_bias"] == pytest.approx(14 / 45)
    assert overall["other_decisions"] == 0.0
    assert by_condition["bear"]["shape_bias"] == 1.0 and by_condition["bear"]["n_conflict"] == 2
    assert by_condition["truck"]["shape_bias"] == 0.0
    assert {s["decision"] for s in sidecar["stimuli"] if s["shape"] == "dog"} == {"dog"}
    assert records[0].model["slug"] == MODEL["slug"]


def test_the_command_writes_records_and_decisions(tmp_path):
    assert build(tmp_path, "demo") == 0
    emb, clf = fake_model_outputs(tmp_path, tmp_path / "set", lambda shape, texture: texture)
    out = tmp_path / "shape_bias.json"
    code = cli.main(
        ["shape-bias", "--testset", str(tmp_path / "set"), "--image-emb", str(emb),
         "--classifier", str(clf), "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    records = read_records(out)
    assert records[0].condition == {"category": "all"} and records[0].metrics["shape_bias"] == 0.0
    assert records[0].metrics["n_conflict"] == 16
    assert len(json.loads(Path(f"{out}.json").read_text())["stimuli"]) == 17
    # the outcomes beside the records: one block per record, every stimulus of its category
    from vlstress.outcomes import outcomes_path, read_outcomes

    blocks = read_outcomes(outcomes_path(out))
    assert len(blocks) == len(records) and blocks[0].n == 17
    assert not blocks[0].column("shape_decision").any()
    assert int(blocks[0].column("texture_decision").sum()) == 16  # the no-conflict one: neither
    # a category's block holds the stimuli of that shape class: together, every stimulus once
    assert sum(block.n for block in blocks[1:]) == 17
    for record, block in zip(records[1:], blocks[1:]):
        assert len(set(block.column("label"))) == 1, record.condition


def test_an_imagenet_head_decides_by_mean_category_probability(tmp_path, monkeypatch):
    """`decision: imagenet16`: the provider builds a classifier over the 1000 ImageNet classes,
    and each stimulus goes to the category of highest mean probability."""
    import yaml

    from vlstress.params import Params
    from vlstress.suites.shape_bias import sets
    from vlstress.testsets.labelmaps import imagenet_classnames

    monkeypatch.chdir(tmp_path)
    assert build(tmp_path, "demo") == 0
    shutil.move(tmp_path / "set", tmp_path / "data/shape_bias/cue-conflict")
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["shape_bias"]["decision"] = "imagenet16"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    ((name, item),) = sets.classifiers(Params.load([tmp_path / "params.yaml"]))
    assert name == "cue-conflict.npy" and item.fields["classes"] == list(imagenet_classnames())
    # each stimulus sits on the first ImageNet class of its texture: every decision is texture
    folder = tmp_path / "data/shape_bias/cue-conflict"
    data = testsets.load(folder)
    first = {c: i[0] for c, i in decisions.imagenet16_indices().items()}
    rows = np.eye(1000)[[first[data.classes[e["texture"]]] for e in data.images]]
    write_embeddings(tmp_path / "emb.npy", rows)
    write_classifier(tmp_path / "clf.npy", list(imagenet_classnames()), np.eye(1000))
    records, found, _ = evaluate(folder, tmp_path / "emb.npy", tmp_path / "clf.npy")
    assert (
        records[0].metrics["shape_bias"] == 0.0 and records[0].metrics["texture_decisions"] == 100
    )
    assert "mean probability" in records[0].provenance["params"]["decision"]
    assert all(s["decision"] == s["texture"] for s in found["stimuli"])


def test_a_plain_test_set_is_refused(tmp_path):
    from test_holistic_commands import write_set

    folder = write_set(tmp_path, "set", "objects", ["a", "b"], [0, 1])
    emb, clf = tmp_path / "e.npy", tmp_path / "c.npy"
    write_embeddings(emb, unit(np.eye(2, 4)))
    write_classifier(clf, ["a", "b"], np.eye(2, 4))
    with pytest.raises(VlstressError, match="not a cue-conflict set"):
        evaluate(folder, emb, clf)


# ------------------------------------------------------------------ table and figure


def summary_rows(values: dict[str, dict[str, float | None]]) -> pd.DataFrame:
    """A long summary table of shape-bias records: model label -> category -> shape bias."""
    rows = []
    for label, by_category in values.items():
        for category, value in by_category.items():
            metrics = {"shape_bias": value, "shape_decisions": 10.0, "texture_decisions": 20.0,
                       "other_decisions": 70.0, "n_conflict": 16}  # fmt: skip
            for metric, v in metrics.items():
                rows.append(
                    {
                        "model": label,
                        "label": label,
                        "dataset": "cue-conflict",
                        "task": "shape_bias",
                        "condition": json.dumps({"category": category}),
                        "condition_json": json.dumps({"category": category}),
                        "metric": metric,
                        "value": np.nan if v is None else v,
                        "seed": np.nan,
                    }  # fmt: skip
                )
    return pd.DataFrame(rows)


def test_table_and_figure_from_the_summary():
    """Shape bias is a share of the shape + texture decisions (here 30 % of 16 stimuli: 4.8, a
    fractional count), the decision shares of the stimuli: every interval is statsmodels' Wilson
    interval over that n, in the table, the legend and the bars."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report import figures
    from vlstress.suites.shape_bias import figures as shape_figures
    from vlstress.suites.shape_bias.table import shape_bias_table

    table = summary_rows(
        {
            "ViT-B-32 (random-init)": {"all": 0.25, "cat": 1.0, "dog": 0.0},
            "RN50 (random-init)": {"all": 0.5, "cat": None, "dog": 0.5},
        }
    )
    agg = table.assign(mean=table["value"])
    frame = shape_bias_table(agg)
    assert list(frame.index) == ["ViT-B-32 (random-init)", "RN50 (random-init)"]
    lo, hi = proportion_confint(0.5 * 4.8, 4.8, method="wilson")
    assert frame.loc["RN50 (random-init)", "Shape bias"] == f"0.500 [{lo:.3f}, {hi:.3f}]"
    assert frame.loc["RN50 (random-init)", "n (shape + texture)"] == "4.8"
    lo, hi = proportion_confint(0.1 * 16, 16, method="wilson")
    assert frame.loc["RN50 (random-init)", "Shape (%)"] == f"10.0 [{100 * lo:.1f}, {100 * hi:.1f}]"
    assert frame.loc["RN50 (random-init)", "Stimuli"] == "16"
    figures.setup()
    fig, notes = shape_figures.shape_bias(table)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["cat", "dog"]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    vit = proportion_confint(0.25 * 4.8, 4.8, method="wilson")
    rn50 = proportion_confint(0.5 * 4.8, 4.8, method="wilson")
    assert labels == [
        "humans (pooled): 0.96",
        f"ViT-B-32 (random-init): 0.25 [{vit[0]:.2f}, {vit[1]:.2f}], n = 4.8",
        f"RN50 (random-init): 0.50 [{rn50[0]:.2f}, {rn50[1]:.2f}], n = 4.8",
    ]
    # one bar per defined point: ViT's cat and dog, RN50's dog (its cat is undefined)
    bars = [c for c in ax.containers if type(c).__name__ == "ErrorbarContainer"]
    spans = sorted(
        (round(s[0][0], 6), round(s[1][0], 6)) for c in bars for s in c.lines[2][0].get_segments()
    )
    expected = [proportion_confint(p * 4.8, 4.8, method="wilson") for p in (1.0, 0.0, 0.5)]
    assert spans == sorted((round(lo, 6), round(hi, 6)) for lo, hi in expected)
    assert "cue-conflict images per model" in notes[0]  # n, or that the records do not say
    assert notes[1] == shape_figures.INTERVAL_NOTE
    assert notes[2:] == [
        "RN50 (random-init): no shape or texture decision (shape bias undefined) for cat"
    ]


def test_two_models_shape_bias_is_compared_on_the_same_stimuli():
    """The paired comparisons take shape bias through its resampling: a paired bootstrap of the
    difference on the same stimuli, the values the records' (percent); stimuli of other shape
    classes are not paired."""
    from vlstress.suites.findings.comparisons import comparison_table
    from vlstress.suites.shape_bias.resampling import stimulus_outcomes

    rng = np.random.default_rng(2)
    shapes = rng.integers(0, 16, 60)
    textures = (shapes + rng.integers(1, 16, 60)) % 16  # every stimulus a conflict
    by_shape = np.where(rng.random(60) < 0.8, shapes, textures)  # about 80% shape decisions
    by_texture = np.where(rng.random(60) < 0.2, shapes, textures)  # about 20%
    items = {
        (model, "cue-conflict", "shape_bias", "category=all"): [
            stimulus_outcomes(chosen, shapes, textures)
        ]
        for model, chosen in (("shapely", by_shape), ("texturey", by_texture))
    }
    table = comparison_table(items, n_resamples=300)
    (row,) = table[table["metric"] == "shape_bias"].itertuples(index=False)
    assert row.test == "paired BCa bootstrap" and row.n == 60
    assert row.value_a == pytest.approx(100 * np.mean(by_shape == shapes))
    assert row.value_b == pytest.approx(100 * np.mean(by_texture == shapes))
    assert row.lo < row.difference < row.hi and row.lo > 0 and row.significant
    other = {k: v for k, v in items.items() if k[0] == "shapely"}
    other[("texturey", "cue-conflict", "shape_bias", "category=all")] = [
        stimulus_outcomes(by_texture, (shapes + 1) % 16, textures)
    ]
    assert comparison_table(other, n_resamples=300).empty
