"""The published check: each model's clean top-1 beside open_clip's or imagenet-testbed's number,
flagged past the tolerance, and compared only where the protocol is the published one."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from vlstress.errors import VlstressError
from vlstress.record import assemble, read_records, write_record
from vlstress.suites.zeroshot import published
from vlstress.suites.zeroshot.published_table import FLAG, published_table
from vlstress.testsets import manifest as testsets

DATA = Path(published.__file__).resolve().parents[2] / "data" / "published"
OPEN_CLIP = {
    "slug": "vit-b-32-openai",
    "kind": "open_clip",
    "arch": "ViT-B-32",
    "pretrained": "openai",
    "weights": "hub",
    "weights_label": "hub:openai",
    "seed": 0,
}
TIMM = {
    "slug": "resnet50-tv",
    "kind": "timm",
    "arch": "timm:resnet50",
    "pretrained": "tv_in1k",
    "weights": "hub",
    "weights_label": "hub:tv_in1k",
    "seed": 0,
}


def shipped(table: str, row: str, column: str) -> float:
    """A published value in percent, read from the shipped CSV here (not through the module)."""
    path = DATA / ("openclip_zeroshot.csv" if table == "open_clip" else "testbed_standard.csv")
    with path.open(encoding="utf-8") as handle:
        (found,) = [line for line in csv.DictReader(handle) if line["model"] == row]
    value = float(found[column])
    return 100.0 * value if table == "open_clip" else value


def names_map(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path = tmp_path / "names.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["testbed", "timm", "note"])
        writer.writerows(rows)
    return path


def evaluation(
    tmp_path: Path,
    name: str,
    kind: str,
    top1: float,
    *,
    model: dict = OPEN_CLIP,
    n_images: int | None = None,
    n_classes: int | None = None,
    templates: str = "openai",
    source: dict | None = None,
    options: dict | None = None,
    task: str = "zeroshot",
) -> tuple[Path, Path]:
    """A zero-shot record and the manifest of its test set (a few images listed: the record's
    n_images is what the run saw)."""
    from vlstress import provenance

    full_images, full_classes = published.FULL_SETS.get(kind, (30, 5))
    n_images = full_images if n_images is None else n_images
    n_classes = full_classes if n_classes is None else n_classes
    folder = tmp_path / "data" / "testsets" / name
    data = testsets.ClassificationSet(
        dataset=name,
        kind=kind,
        classes=[f"class {i}" for i in range(n_classes)],
        class_ids=[f"c{i}" for i in range(n_classes)],
        root=str(folder),
        images=[{"path": "a.png", "label": 0}],
        source=dict(source or {}),
        provenance={
            "params": {"max_per_class": None, "keep": None, "drop": None, **(options or {})}
        },
    )
    testsets.write(folder / testsets.MANIFEST_NAME, data)
    record = assemble(
        task,
        dataset={"name": name, "kind": kind, "n_images": n_images, "n_classes": n_classes},
        condition={},
        metrics={"top1": top1, "top5": None, "mean_per_class_recall": top1},
        provenance=provenance.build(
            "evaluate-zeroshot", {"ks": [1, 5], "task": task, "templates": templates}, model=model
        ),
    )
    path = tmp_path / "results" / "metrics" / model["slug"] / f"zeroshot-{name}.json"
    write_record(path, record)
    return path, folder


def reasons(record) -> str:
    """The reasons of a check in words (the record's provenance)."""
    return "; ".join(record.provenance["reasons"])


def one(tmp_path, *args, tolerance=0.5, protocol_tolerance=4.0, names=None, **kw):
    """The check's record of one evaluation."""
    (record,) = published.check_model(
        [evaluation(tmp_path, *args, **kw)], tolerance, protocol_tolerance, names
    )
    return record


# --------------------------------------------------------------------------- tolerance and flag


def test_a_difference_at_the_tolerance_passes_and_just_past_it_is_flagged(tmp_path):
    value = shipped("open_clip", "ViT-B-32/openai", "imagenet1k")
    within = one(tmp_path / "a", "imagenet", "imagenet", value + 0.49)
    past = one(tmp_path / "b", "imagenet", "imagenet", value + 0.51)
    below = one(tmp_path / "c", "imagenet", "imagenet", value - 0.51)
    for record, flagged in ((within, 0), (past, 1), (below, 1)):
        assert record.task == "published-check"
        assert record.condition["status"] == published.CLEAN
        assert record.condition["reference"] == "open_clip ViT-B-32/openai"
        assert record.metrics["published_top1"] == pytest.approx(value)
        assert record.metrics["tolerance_pp"] == 0.5
        assert record.metrics["flagged"] == flagged
    assert within.metrics["diff_pp"] == pytest.approx(0.49)
    assert below.metrics["diff_pp"] == pytest.approx(-0.51)
    # the tolerance is the param's: 0.6 passes what 0.5 flags
    wider = one(tmp_path / "d", "imagenet", "imagenet", value + 0.51, tolerance=0.6)
    assert wider.metrics["flagged"] == 0 and wider.metrics["tolerance_pp"] == 0.6


def test_a_run_several_points_off_every_published_number_is_flagged(tmp_path):
    """A planted preprocessing error (every set 4 points low) is flagged on every set, and the
    table says so."""
    found = []
    for kind, column in published.COLUMNS.items():
        value = shipped("open_clip", "ViT-B-32/openai", column)
        source = {"border_crop_px": 2} if kind == "objectnet" else {}
        found.append(evaluation(tmp_path, kind.replace("-", "_"), kind, value - 4.0, source=source))
    records = published.check_model(found, 0.5, 4.0)
    assert [r.metrics["flagged"] for r in records] == [1] * 6
    assert all(r.metrics["diff_pp"] == pytest.approx(-4.0) for r in records)
    out = tmp_path / "published-check.json"
    from vlstress.record import write_records
    from vlstress.report import records as summary

    write_records(out, records)
    frame = published_table(summary.collect([out]))
    assert frame is not None and len(frame) == 6
    assert frame["verdict"].str.startswith(FLAG).all()
    assert (frame["diff (pp)"] == "-4.00").all()


def _table(tmp_path, checks):
    from vlstress.record import write_records
    from vlstress.report import records as summary

    out = tmp_path / "published-check.json"
    write_records(out, checks)
    return published_table(summary.collect([out]))


def test_the_run_top1_shows_its_wilson_interval_over_the_images_it_scored(tmp_path):
    """12 of 30 images right: 40.00 and the Wilson interval of 12/30 (statsmodels), n = 30."""
    from statsmodels.stats.proportion import proportion_confint

    record = one(tmp_path, "objects", "demo-objects", 40.0)
    frame = _table(tmp_path, [record])
    assert frame is not None
    (row,) = frame.to_dict("records")
    lo, hi = proportion_confint(12, 30, alpha=0.05, method="wilson")
    assert row["run top-1"] == f"40.00 [{100 * lo:.2f}, {100 * hi:.2f}]"
    assert row["run top-1"] == "40.00 [24.59, 57.68]"
    assert row["n"] == "30"
    assert row["published top-1"] == "–"  # no interval on the published number


def test_a_subset_off_the_published_number_but_inside_its_interval_says_so(tmp_path):
    """Part of the set: an off verdict whose 95% interval holds the published number is noted (the
    sample's noise can explain it); on the whole set the same difference gets no such note (the
    published number is of the same images). The verdict stays what the check decided."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report import records as summary
    from vlstress.suites.zeroshot.published_table import WITHIN, render

    value = shipped("open_clip", "ViT-B-32/openai", "imagenet1k")
    n = 40_000
    subset = one(tmp_path / "a", "val", "imagenet", value + 0.4, n_images=n, tolerance=0.1)
    whole = one(tmp_path / "b", "imagenet", "imagenet", value + 0.3, tolerance=0.1)
    far = one(tmp_path / "c", "far", "imagenet", value + 3.0, n_images=n, tolerance=0.1)
    assert [r.metrics["flagged"] for r in (subset, whole, far)] == [1, 1, 1]
    for record, images in ((subset, n), (whole, 50_000)):  # inside the interval, both
        lo, hi = proportion_confint(
            record.metrics["run_top1"] / 100 * images, images, alpha=0.05, method="wilson"
        )
        assert 100 * lo < value < 100 * hi
    frame = _table(tmp_path, [subset, whole, far])
    assert frame is not None
    rows = frame.reset_index().set_index("set")
    lo, hi = proportion_confint((value + 0.4) / 100 * n, n, alpha=0.05, method="wilson")
    assert rows.loc["val", "run top-1"] == f"{value + 0.4:.2f} [{100 * lo:.2f}, {100 * hi:.2f}]"
    assert rows.loc["val", "n"] == "40000"
    assert frame["verdict"].str.startswith(FLAG).all()  # the verdicts are unchanged
    notes = rows["note"]
    assert WITHIN in notes["val"] and "part of the set (40,000 images)" in notes["val"]
    assert WITHIN not in notes["imagenet"]  # the whole set: the interval excuses nothing
    assert WITHIN not in notes["far"]  # 3 points off: outside the interval
    assert rows.loc["imagenet", "n"] == "50000"
    _, _, table_notes = render(summary.collect([tmp_path / "published-check.json"]), {})
    (flagged,) = [n for n in table_notes if "off the published number" in n]
    assert "of them, 1 saw part of the set" in flagged


# --------------------------------------------------------------------------- matching


def test_open_clip_and_timm_models_are_matched_to_their_rows(tmp_path):
    names = names_map(tmp_path, [("resnet50", "resnet50.tv_in1k", "torchvision weights")])
    clip = one(tmp_path / "a", "v2", "imagenet-v2", 50.0)
    assert clip.condition["reference"] == "open_clip ViT-B-32/openai"
    assert clip.condition["column"] == "imagenetv2"
    assert clip.metrics["published_top1"] == pytest.approx(
        shipped("open_clip", "ViT-B-32/openai", "imagenetv2")
    )
    timm = one(tmp_path / "b", "sketch", "imagenet-sketch", 20.0, model=TIMM, names=names)
    assert timm.condition["reference"] == "imagenet-testbed resnet50"
    assert timm.metrics["published_top1"] == pytest.approx(
        shipped("testbed", "resnet50", "imagenet_sketch")
    )
    assert "torchvision weights" in reasons(timm)
    # timm models score by class map, not prompts: the templates do not matter
    assert timm.condition["status"] == published.CLEAN


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"weights": "random-init", "pretrained": None}, "random-init: no published number"),
        ({"weights": "checkpoint", "pretrained": "ft/model.safetensors"}, "local checkpoint"),
        ({"pretrained": "no-such-tag"}, "not in a published table (open_clip ViT-B-32/no-such"),
        ({"kind": "timm", "arch": "timm:resnet50", "pretrained": "a1_in1k"}, "timm resnet50.a1"),
    ],
)
def test_a_model_without_a_published_row_is_listed_with_the_reason(tmp_path, change, reason):
    names = names_map(tmp_path, [("resnet50", "resnet50.tv_in1k", "")])
    record = one(tmp_path, "val", "imagenet", 60.0, model={**OPEN_CLIP, **change}, names=names)
    assert record.condition["status"] == published.NO_NUMBER
    assert reason in reasons(record)
    assert record.condition["why"] in ("random-init", "checkpoint", "no-row")
    assert record.metrics["run_top1"] == 60.0
    assert record.metrics["published_top1"] is None and record.metrics["flagged"] is None


def test_a_set_of_another_kind_has_no_published_column(tmp_path):
    record = one(tmp_path, "objects", "demo-objects", 40.0)
    assert record.condition["status"] == published.NO_NUMBER
    assert "no published column for a demo-objects set" in reasons(record)


def test_the_name_map_refuses_a_timm_name_mapped_twice_and_skips_empty_ones(tmp_path):
    names = names_map(
        tmp_path, [("resnet50", "resnet50.tv_in1k", ""), ("FixPNASNet", "", "no timm weights")]
    )
    assert published.read_timm_names(names).rows == {"resnet50.tv_in1k": ("resnet50", "")}
    twice = names_map(tmp_path, [("resnet50", "x.y", ""), ("resnet101", "x.y", "")])
    with pytest.raises(VlstressError, match="x.y is mapped to both resnet50 and resnet101"):
        published.read_timm_names(twice)
    with pytest.raises(VlstressError, match="not found"):
        published.read_timm_names(tmp_path / "absent.csv")


def test_the_shipped_name_map_names_rows_of_the_testbed_table():
    path = published.names_path()
    if not path.is_file():
        pytest.skip(f"{path} not shipped")
    names = published.read_timm_names()
    tables = published.read_tables()
    for timm, (row, _) in names.rows.items():
        assert tables.has_row(published.TESTBED_TABLE, row), (timm, row)


# --------------------------------------------------------------------------- protocol


def test_a_subset_widens_the_tolerance_by_its_sampling_error(tmp_path):
    value = shipped("open_clip", "ViT-B-32/openai", "imagenet1k")
    record = one(
        tmp_path, "val", "imagenet", value + 1.0, n_images=5000, options={"max_per_class": 5}
    )
    assert record.condition["status"] == published.DIFFERS
    assert "5,000 of 50,000 images, max_per_class 5" in reasons(record)
    p, n = value / 100, 5000
    two_se = 200 * (p * (1 - p) / n * (1 - n / 50_000)) ** 0.5
    assert record.metrics["tolerance_pp"] == pytest.approx(0.5 + two_se)
    assert record.metrics["flagged"] == 0  # 1 point is within 0.5 + 2 SE (about 1.3) here


def test_other_templates_or_class_names_use_the_protocol_tolerance(tmp_path):
    value = shipped("open_clip", "ViT-B-32/openai", "imagenet-r")
    simple = one(tmp_path / "a", "r", "imagenet-r", value - 3.0, templates="simple")
    assert simple.condition["status"] == published.DIFFERS
    assert "templates simple, published openai (80)" in reasons(simple)
    assert simple.metrics["tolerance_pp"] == 4.0 and simple.metrics["flagged"] == 0
    names = one(tmp_path / "b", "r", "imagenet-r", value - 4.5, options={"classnames": "mine.txt"})
    assert "class names from mine.txt" in reasons(names)
    assert names.metrics["flagged"] == 1


@pytest.mark.parametrize(
    ("kind", "kw", "reason"),
    [
        ("imagenet", {"options": {"keep": "goldfish"}}, "classes selected"),
        ("imagenet-a", {"n_classes": 1000}, "scored on 1000 classes, published on 200"),
        ("imagenet", {"task": "corruption"}, "a corrupted or derived copy"),
        ("imagenet", {"source": {"clean_dataset": "val"}}, "a corrupted or derived copy"),
        ("objectnet", {"source": {}}, "ObjectNet border crop None px, published 2 px"),
        ("imagenet-v2", {"source": {"root": "/d/imagenetv2-threshold0.7"}}, "variant threshold"),
        ("imagenet", {"n_images": 60_000}, "60,000 images, the published set has 50,000"),
    ],
)
def test_a_set_off_the_published_protocol_is_not_comparable(tmp_path, kind, kw, reason):
    column = published.COLUMNS[kind]
    value = shipped("open_clip", "ViT-B-32/openai", column)
    record = one(tmp_path, "x", kind, value + 10.0, **kw)
    assert record.condition["status"] == published.NOT_COMPARABLE
    assert reason in reasons(record)
    # the numbers side by side, no verdict: never a silent pass
    assert record.metrics["published_top1"] == pytest.approx(value)
    assert record.metrics["diff_pp"] == pytest.approx(10.0)
    assert record.metrics["flagged"] is None and record.metrics["tolerance_pp"] is None


def test_the_fields_of_a_loaded_manifest_decide_the_protocol(tmp_path):
    """A manifest as `vlstress testset` writes it (classes kept by `select_classes`, the options in
    its provenance), written and loaded: its fields, not the test, say subset and selection."""
    record = read_records(evaluation(tmp_path, "a", "imagenet", 50.0, n_images=2)[0])[0]
    whole = testsets.ClassificationSet(
        dataset="val",
        kind="imagenet",
        classes=[f"class {i}" for i in range(1000)],
        class_ids=[f"n{i:08d}" for i in range(1000)],
        root="val",
        images=[{"path": f"{i}.png", "label": i} for i in range(2)],
        source={"classes_without_images": [f"n{i:08d}" for i in range(2, 1000)]},
        provenance={"params": {"max_per_class": 1, "keep": None, "drop": None}},
    )
    testsets.write(tmp_path / "whole.json", whole)
    subset = published.protocol(
        published.set_facts(testsets.load(tmp_path / "whole.json"), record), "open_clip"
    )
    assert subset.status == published.DIFFERS
    assert subset.reasons == (("subset", "2 of 50,000 images, max_per_class 1"),)
    kept = testsets.select_classes(whole, ["n00000000"], None)
    testsets.write(tmp_path / "kept.json", kept)
    selected = published.protocol(
        published.set_facts(testsets.load(tmp_path / "kept.json"), record), "timm"
    )
    assert selected.status == published.NOT_COMPARABLE
    assert ("selected", "classes selected (keep/drop: 1 of 1000 classes)") in selected.reasons


# --------------------------------------------------------------------------- the command


def test_the_command_writes_a_record_per_test_set_and_the_table_says_why(tmp_path, monkeypatch):
    """The demo's case: a random-init model on the demo's set (no published number), run as the
    workflow runs it, from the params."""
    from vlstress.cli import main
    from vlstress.report import records as summary
    from vlstress.suites.zeroshot.published_table import render

    repo = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    slug = "vit-s-32-alt-random"
    model = {**OPEN_CLIP, "slug": slug, "arch": "ViT-S-32-alt", "pretrained": None}
    model.update(weights="random-init", weights_label="random-init (seed 0)")
    evaluation(Path("."), "objects", "demo-objects", 40.0, model=model, templates="simple")
    out = Path("results/metrics") / slug / "published-check.json"
    main(
        ["published-check", "--params", str(repo / "params.yaml"), "--model", slug]
        + ["--tolerance", "0.5", "--protocol-tolerance", "4", "--out", str(out)]
    )
    (record,) = read_records(out)
    assert record.dataset["name"] == "objects" and record.metrics["run_top1"] == 40.0
    assert record.condition["status"] == published.NO_NUMBER
    assert reasons(record).startswith("random-init: no published number")
    markdown, latex, notes = render(summary.collect([out]), {"step": "tables"})
    assert "random-init: no published number" in markdown and "no published number" in latex
    assert any("nothing to check" in note for note in notes)
    assert record.condition["why"] == "random-init+no-column"
    provenance = json.loads(out.read_text())[0]["provenance"]
    assert provenance["params"]["tolerance"] == 0.5
    # the shipped tables are named inside the package, not where it is installed
    shipped = [name for name in provenance["inputs"] if name.endswith(".csv")]
    assert "vlstress/data/published/openclip_zeroshot.csv" in shipped
    assert all(name.startswith("vlstress/data/published/") for name in shipped)


def test_a_timm_model_on_objectnet_is_compared_within_the_protocol_tolerance(tmp_path):
    """imagenet-testbed scored ObjectNet 1.0-beta's images (the released set has 60 more), by the
    top logit of each class's ImageNet classes, as this project does (imagenet_map.MAX_LOGIT)."""
    names = names_map(tmp_path, [("resnet50", "resnet50.tv_in1k", "")])
    value = shipped("testbed", "resnet50", "objectnet")
    record = one(
        tmp_path, "on", "objectnet", value + 3.0, model=TIMM, names=names,
        source={"border_crop_px": 2},
    )  # fmt: skip
    assert record.condition["status"] == published.DIFFERS
    assert "ObjectNet 1.0-beta (18,514 images" in reasons(record)
    assert "mean probability" not in reasons(record) and "class-map" not in record.condition["why"]
    assert record.metrics["tolerance_pp"] == 4.0 and record.metrics["flagged"] == 0


def test_the_whole_sets_are_the_published_sizes_vlstress_cost_knows():
    from vlstress.cost.sizes import PUBLISHED

    assert set(published.FULL_SETS) == set(published.COLUMNS)
    assert {kind: PUBLISHED[kind][:2] for kind in published.COLUMNS} == published.FULL_SETS


def test_the_condition_stays_short_enough_to_name_a_metrics_file():
    """The summary names a DVC metrics file after the condition: a set that breaks every rule it
    can at once, under the longest published row, still fits in one file name (255 bytes); the
    reasons in words go to the provenance."""
    from vlstress.io import score_name
    from vlstress.report.tasks import condition_key

    tables = published.read_tables()
    longest = max((f"{table} {row}" for table, row in tables.values), key=len)
    facts = published.SetFacts(
        "objectnet",
        1,
        100,
        source={"clean_dataset": "x", "selected": {"classes": 1, "of": 113}},
        options={"classnames": "mine.txt"},
        templates="simple",
        task="corruption",
    )
    rule = published.protocol(facts, "open_clip")
    assert len(rule.reasons) == 6 and rule.status == published.NOT_COMPARABLE
    why = tuple(code for code, _ in rule.reasons)
    worst = published.Check(longest, "imagenet_sketch", rule.status, why, (), 1.0)
    name = score_name("published-check", "x", condition_key(worst.condition()), "m")
    assert max(len(part.encode()) for part in name.split("/")) < 255


def test_the_params_check_refuses_a_protocol_tolerance_below_the_tolerance():
    import yaml

    from vlstress import params_check

    params = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    assert params["zeroshot"]["published"]["tolerance"] == 0.5  # the documented default
    params["zeroshot"]["published"].update(tolerance=1.0, protocol_tolerance=0.5)
    with pytest.raises(VlstressError, match="protocol_tolerance .0.5. is below"):
        params_check.validate(params)
    params["zeroshot"]["published"].pop("tolerance")
    with pytest.raises(VlstressError, match="'tolerance' is a required property"):
        params_check.validate(params)
