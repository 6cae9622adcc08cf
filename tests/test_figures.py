"""`vlstress figures`: the four paper figures, PNG + PDF with provenance, deterministic, degrading
clearly."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess

import numpy as np
import pytest
import yaml
from PIL import Image

from vlstress.pipeline import STAGES
from vlstress.report import records
from vlstress.report.figures import setup
from vlstress.suites.retrieval import figures

from conftest import REPO, copy_repo, finetune_off, run_cli
from report_fixtures import record_flags, write_records

MODULE = ("--module", "vlstress.suites.retrieval.figures")
FIGURE_STAGES = [stage for stage in STAGES if stage.subcommand == "figures"]

SUMMARIZE_FLAGS = (
    "--out-csv",
    "summary.csv",
    "--out-agg",
    "summary_agg.csv",
    "--out-md",
    "summary.md",
    "--out-scores",
    "scores",
    "--out-plot",
    "plots/stress.csv",
)


def summary_of(root, **kwargs):
    paths = write_records(root / "metrics", **kwargs)
    flags = [str(root / f) if i % 2 else f for i, f in enumerate(SUMMARIZE_FLAGS)]
    run_cli("summarize", *record_flags(paths), *flags)
    return root / "summary.csv"


@pytest.fixture(scope="module")
def full_summary(module_tmp):
    return summary_of(module_tmp.mktemp("full"))


@pytest.fixture(scope="module")
def original_only(module_tmp):
    return summary_of(module_tmp.mktemp("orig"), text=False, image=False)


@pytest.fixture(scope="module")
def no_image(module_tmp):
    return summary_of(module_tmp.mktemp("noimg"), image=False)


@pytest.fixture(scope="module")
def drawn(full_summary, module_tmp):
    out = module_tmp.mktemp("figs")
    result = run_cli("figures", "--summary", str(full_summary), *MODULE, "--out-dir", str(out))
    return out, result


def test_every_registered_figure_is_written_as_png_and_pdf(drawn):
    out, _ = drawn
    for name in figures.FIGURES:
        png, pdf = out / f"{name}.png", out / f"{name}.pdf"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert pdf.read_bytes()[:5] == b"%PDF-", name
        with Image.open(png) as image:
            assert image.width > 600 and image.height > 300
            block = json.loads(image.text["Description"])  # provenance in the PNG metadata
        assert block["step"] == "figures" and block["params"]["figure"] == name
        assert next(iter(block["inputs"])).endswith("summary.csv")  # the input, with its sha256
        assert b"figures" in pdf.read_bytes()  # provenance in the PDF Subject


@pytest.mark.slow
def test_figures_are_deterministic(full_summary, tmp_path):
    """Same summary, same command -> byte-identical PNG and PDF (no timestamps anywhere)."""
    args = (
        "figures",
        "--summary",
        str(full_summary),
        *MODULE,
        "--out-dir",
        str(tmp_path),
        "--only",
        "recall_bars,lambda_sweep",
    )
    run_cli(*args)
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    run_cli(*args)
    assert sorted(first) == [
        "lambda_sweep.pdf",
        "lambda_sweep.png",
        "recall_bars.pdf",
        "recall_bars.png",
    ]
    for name, data in first.items():
        assert (tmp_path / name).read_bytes() == data, name


def test_registry_matches_the_workflow():
    """Each suite's figure stage lists exactly its module's figures (both front ends build from it),
    every figure is drawn by one stage, and dvc.yaml declares them too."""
    assert {stage.name for stage in FIGURE_STAGES} >= {
        "retrieval_figures",
        "zeroshot_figures",
        "calibration_figures",
    }
    dvc = (REPO / "dvc.yaml").read_text()
    import yaml

    from vlstress.params import suites_on

    on = suites_on(yaml.safe_load((REPO / "params.yaml").read_text())) | {"retrieval"}
    seen = []
    for stage in FIGURE_STAGES:
        (module,) = stage.code
        names = list(importlib.import_module(module).FIGURES)
        assert [n.removesuffix("_png") for n in stage.outputs if n.endswith("_png")] == names, (
            stage.name
        )
        assert (
            stage.name == f"{stage.suite}_figures"
            and module == f"vlstress.suites.{stage.suite}.figures"
        )
        seen += names
        for name in names:
            if stage.suite in on:  # dvc.yaml lists the stages of the suites that are on
                assert f"results/figures/{name}.png" in dvc and f"results/figures/{name}.pdf" in dvc
            # a report caption per figure, in the suite's package
            assert (REPO / "src/vlstress/suites" / stage.suite / "report" / f"{name}.rst").is_file()
    assert len(seen) == len(set(seen))


def test_full_figures_have_all_panels(full_summary):
    table = records.read_summary(full_summary)
    setup()
    fig, notes = figures.recall_bars(table)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["image → text", "text → image"]
    assert notes == [
        f"error bars: {figures.WILSON_QUERIES}, of the mean over variant seeds",
        "dots: each variant seed's R@1 (the bar is their mean)",
    ]
    assert fig.get_suptitle().endswith(
        "\nn = 14 query images (image → text), 70 query captions (text → image)"
    )
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert legend == ["original", "mix λ=0.7", "mix λ=0.9", "patch λ=0.7", "patch λ=0.9"]
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    # readable names, random-init visible
    assert ticks == [
        "RN50\n(openai)",
        "ViT-B-32\n(random-init)",
    ]
    fig, _ = figures.lambda_sweep(table)
    assert sorted({ax.get_title() for ax in fig.axes} - {""}) == ["mix", "patch"]
    fig, _ = figures.false_r1_heatmap(table)
    heat = fig.axes[0]
    assert len(heat.get_xticklabels()) == 8 and len(heat.get_yticklabels()) == 2
    assert [t.get_text() for t in heat.texts][:4] == ["5.0", "10.0", "15.0", "20.0"]
    # n stated: each cell is a share of the direction's queries
    assert heat.get_title().endswith(
        "n = 14 query images (image → text), 70 query captions (text → image) per cell"
    )


def _wilson(pct, n):
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(pct / 100 * n, n, alpha=0.05, method="wilson")
    return 100 * lo, 100 * hi


def _error_bar_spans(ax):
    """(x, low, high) of every error bar drawn with ax.errorbar."""
    from matplotlib.container import ErrorbarContainer

    spans = []
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            for collection in container.lines[2]:
                spans += [(s[0][0], s[0][1], s[1][1]) for s in collection.get_segments()]
    return spans


def test_recall_bars_carry_wilson_intervals_over_the_queries_of_each_direction(full_summary):
    """Image → text counts images (14), text → image counts captions (70); a bar that is a mean
    over seeds takes the mean as a fractional count; its seeds show as dots."""
    table = records.read_summary(full_summary)
    setup()
    fig, _ = figures.recall_bars(table)
    i2t, t2i = fig.axes[:2]
    lows = {round(lo, 6): round(hi, 6) for _, lo, hi in _error_bar_spans(i2t)}
    lo, hi = _wilson(65.0, 14)  # RN50, original gallery, image → text
    assert lows[round(lo, 6)] == pytest.approx(hi)
    spans = _error_bar_spans(t2i)
    assert len(spans) == 2 * 5  # every bar: 2 models x (original + 4 image variants)
    for pct in (60.0, 52.0):  # RN50: original; mix λ=0.9, the mean of 53, 52, 51
        lo, hi = _wilson(pct, 70)
        assert any(a == pytest.approx(lo) and b == pytest.approx(hi) for _, a, b in spans), pct
    # the caption-counted interval is narrower than an image-counted one would be
    assert _wilson(60.0, 70)[1] - _wilson(60.0, 70)[0] < _wilson(60.0, 14)[1] - _wilson(60.0, 14)[0]
    dots = [c for c in t2i.collections if c.get_gid() == "seeds"]
    assert len(dots) == 2 * 4 and all(len(c.get_offsets()) == 3 for c in dots)  # 3 seeds a bar
    assert not [c for c in i2t.collections if c.get_gid() == "seeds"]  # one text set per bar


def test_lambda_sweep_shades_one_wilson_band_per_model_line(full_summary):
    """Two λ: each model's line has a band, the Wilson interval of its mean over seeds at each λ
    over the 70 query captions."""
    from matplotlib.collections import PolyCollection

    table = records.read_summary(full_summary)
    setup()
    fig, notes = figures.lambda_sweep(table)
    assert fig.get_suptitle().endswith("n = 70 query captions (text → image)")
    assert any(n.startswith(f"shaded: {figures.WILSON_QUERIES}") for n in notes)
    first = fig.axes[0]  # R@1, mix
    bands = [c for c in first.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # one per model
    lo, hi = _wilson(52.0, 70)  # RN50 mix λ=0.9: mean of 53, 52, 51
    heights = [path.vertices[:, 1] for band in bands for path in band.get_paths()]
    assert any(np.isclose(v, lo).any() and np.isclose(v, hi).any() for v in heights), (
        "RN50's band at λ=0.9"
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "recall_bars",
            "no image stress (text → image) records, the text → image panel is left out",
        ),
        ("false_r1_heatmap", "no image stress (text → image) records, its columns are left out"),
        ("lambda_sweep", "no image stress (text → image) records, the λ sweep is left out"),
        ("drop_vs_size", "no image stress (text → image) records, its markers are left out"),
    ],
)
def test_absent_image_family_is_noted_not_drawn(no_image, name, expected):
    table = records.read_summary(no_image)
    setup()
    fig, notes = figures.FIGURES[name](table)
    assert expected in notes
    if name == "recall_bars":
        assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["image → text"]
    if name == "lambda_sweep":  # a placeholder that says why, no axes with data
        assert not any(ax.lines or ax.collections for ax in fig.axes)


def test_original_only_degrades_without_crashing(original_only, tmp_path):
    result = run_cli(
        "figures", "--summary", str(original_only), *MODULE, "--out-dir", str(tmp_path)
    )
    assert "only original-gallery records" in result.stderr
    assert "the λ sweep is left out" in result.stderr
    assert all((tmp_path / f"{n}.png").is_file() for n in figures.FIGURES)
    table = records.read_summary(original_only)
    fig, _ = figures.recall_bars(table)
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["original gallery"]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "image → text",
        "text → image",
    ]


def _data_axes(fig):
    return [ax for ax in fig.axes if ax.lines or ax.collections or ax.patches]


@pytest.mark.slow
@pytest.mark.parametrize(
    "kinds, panels, sweep",
    [
        ({"retrieval": False, "image": False}, ["image → text"], False),
        ({"retrieval": False, "text": False}, ["text → image"], True),
    ],
    ids=["only-text-stress", "only-image-stress"],
)
def test_a_stress_suite_alone_draws_only_its_panels(tmp_path, kinds, panels, sweep):
    """No retrieval records and one stress task: every figure from what exists, no empty panel,
    notes say why."""
    summary = summary_of(tmp_path, **kinds)
    result = run_cli(
        "figures", "--summary", str(summary), *MODULE, "--out-dir", str(tmp_path / "figs")
    )
    assert all((tmp_path / "figs" / f"{n}.png").is_file() for n in figures.FIGURES)
    assert "no retrieval on the original gallery records" in result.stderr
    table = records.read_summary(summary)
    setup()
    fig, notes = figures.recall_bars(table)
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == panels
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "original" not in legend and legend  # no empty "original" bars
    fig, _ = figures.false_r1_heatmap(table)
    direction = "(I→T)" if panels == ["image → text"] else "(T→I)"
    assert all(t.get_text().endswith(direction) for t in fig.axes[0].get_xticklabels())
    fig, notes = figures.lambda_sweep(table)
    if sweep:
        assert sorted({ax.get_title() for ax in fig.axes} - {""}) == ["mix", "patch"]
        assert all(ax.lines for ax in fig.axes)  # every panel has curves
    else:
        assert "no image stress (text → image) records, the λ sweep is left out" in notes
        assert not _data_axes(fig)
    fig, notes = figures.drop_vs_size(table)
    assert len(_data_axes(fig)) == 1


def test_drop_rate_without_model_size_or_with_undefined_values(full_summary):
    table = records.read_summary(full_summary)
    table.loc[table["model"] == "rn50-openai", "n_params"] = float("nan")
    table.loc[
        (table["model"] == "vit-b-32-random") & (table["metric"] == "i2t_drop_rate"), "value"
    ] = float("nan")
    setup()
    _, notes = figures.drop_vs_size(table)
    assert any("model size unknown" in n and "RN50 (openai)" in n for n in notes)
    assert any("drop rate undefined" in n and "ViT-B-32 (random-init)" in n for n in notes)


def test_unknown_figure_is_a_clear_error(full_summary, tmp_path):
    result = run_cli(
        "figures",
        "--summary",
        str(full_summary),
        *MODULE,
        "--out-dir",
        str(tmp_path),
        "--only",
        "pie",
        check=False,
    )
    assert result.returncode == 2 and "unknown figure(s) pie" in result.stderr
    assert not any(tmp_path.iterdir())
    result = run_cli(
        "figures",
        "--summary",
        str(tmp_path / "nope.csv"),
        *MODULE,
        "--out-dir",
        str(tmp_path),
        check=False,
    )
    assert result.returncode == 2 and "summary table not found" in result.stderr
    result = run_cli(
        "figures",
        "--summary",
        str(full_summary),
        "--module",
        "os.path",
        "--out-dir",
        str(tmp_path),
        check=False,
    )
    assert result.returncode == 2 and "is not a suite module" in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")
def test_snakemake_report_collects_figures_and_tables(tmp_path):
    """`snakemake --report` in a copy of the repo, on hand-made records run through the rules'
    commands."""
    root = copy_repo(tmp_path / "repo")
    # suites whose steps draw report items upstream of the summary (reliability diagrams, ROC
    # curves, training logs) would need those files too: this test builds only the summary's figures
    # and tables
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["suites"].update(calibration=False, ood=False)
    params["models"] = {
        name: entry for name, entry in params["models"].items() if entry["pretrained"] is None
    }
    finetune_off(params)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    # metrics under results/metrics, summary outputs under results/
    summary = summary_of(root / "results")
    assert summary == root / "results" / "summary.csv"
    on = {name for name, value in params["suites"].items() if value} | {"retrieval"}
    drawn = []
    for stage in FIGURE_STAGES:
        if stage.suite in on:
            names = [
                n.removesuffix("_png")
                for n, out in stage.outputs.items()
                if n.endswith("_png") and (not out.suites or set(out.suites) & on)
            ]
            run_cli(
                "figures",
                "--summary",
                "results/summary.csv",
                "--module",
                stage.code[0],
                "--out-dir",
                "results/figures",
                cwd=root,
            )
            drawn += names
    run_cli(
        "tables",
        "--summary",
        "results/summary.csv",
        "--module",
        "vlstress.suites.retrieval.table",
        "--out-md",
        "results/tables/stress.md",
        "--out-tex",
        "results/tables/stress.tex",
        cwd=root,
    )
    # the figures rules follow the suite switches
    assert "calibration_ece" not in drawn and "recall_bars" in drawn
    targets = [
        *(f"results/figures/{n}.png" for n in drawn),
        "results/tables/stress.md",
        "results/summary_agg.csv",
    ]
    result = subprocess.run(  # only these targets: other steps' report items are not built here
        [shutil.which("snakemake"), "--report", "report.html", "--cores", "1", *targets],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    html = (root / "report.html").read_text(errors="replace")
    for name in [*drawn, "stress.md", "stress.tex", "summary_agg.csv"]:
        assert name in html, name


# --------------------------------------------------------------------------- overlapping text


def every_figure(table):
    """(name, figure) of every registered figure of every suite, drawn from `table`."""
    from vlstress.suites import registry

    for suite in registry.suites():
        try:
            module = importlib.import_module(f"vlstress.suites.{suite.name}.figures")
        except ModuleNotFoundError:
            continue
        for name, draw in module.FIGURES.items():
            yield name, draw(table)[0]


@pytest.mark.slow  # draws every figure a second time (~30 s); the fast tier draws them once
def test_no_figure_has_overlapping_text(full_summary):
    """Every registered figure, on the demo's summary (every task) and on the report fixtures
    (three seeds, two models), and the effective-robustness scatter: no tick label on another or
    on its axis label, no model label under the legend."""
    import matplotlib.pyplot as plt

    from vlstress.report.overlaps import overlapping_text
    from vlstress.suites.zeroshot import robustness_summary as summary
    from vlstress.suites.zeroshot.corruption_error import corruption_table

    setup()
    found = {}
    for source in (REPO / "results/summary.csv", full_summary):
        table = records.read_summary(source)
        for name, fig in every_figure(table):
            found[f"{source.parent.name}/{name}"] = overlapping_text(fig)
            plt.close(fig)
    table = records.read_summary(REPO / "results/summary.csv")
    top1, clean = summary.corruption_top1(table)
    corruptions = corruption_table(top1, clean, None)
    effective, lines, note = summary.effective(table, "objects", corruptions, "logit", "ols")
    names = dict(zip(table["model"], table["label"]))
    fig = summary.figure(effective, lines, note, "objects", names)
    found["effective_robustness"] = overlapping_text(fig)
    plt.close(fig)
    assert len(found) > 20 and {name: hits for name, hits in found.items() if hits} == {}


def test_the_overlap_check_sees_crowded_and_slanted_labels():
    import matplotlib.pyplot as plt

    from vlstress.report.overlaps import overlapping_text

    setup()
    names = ["gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur"]
    fig, ax = plt.subplots(figsize=(2.0, 2.0))
    ax.bar(names, [1, 2, 3, 4])
    assert any(
        "tick labels 'gaussian_noise' and 'shot_noise' overlap" in hit
        for hit in overlapping_text(fig)
    )
    ax.tick_params(axis="x", labelrotation=60)  # slanted: their screen boxes overlap, not the text
    assert overlapping_text(fig) == []
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(3, 3))
    ax.bar(["middle"], [1])  # one tick label, under the centred axis label
    ax.set_xlabel("corruption")
    ax.xaxis.labelpad = -14  # the axis label pulled up onto the tick label
    assert any("overlaps the axis label 'corruption'" in hit for hit in overlapping_text(fig))
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(3, 3))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="upper left")
    ax.annotate("a model", (0.02, 0.95), xycoords="axes fraction")
    assert any("under the legend" in hit for hit in overlapping_text(fig))
    plt.close(fig)


def test_recall_bars_leave_out_models_without_retrieval_records(full_summary):
    """A supervised classifier (no text tower) has zero-shot records only: no empty slot for it
    on the retrieval figure's axis."""
    import pandas as pd

    table = records.read_summary(full_summary)
    clip = table[table["label"] == "ViT-B-32 (random-init)"]
    classifier = clip.head(1).assign(
        model="r18", label="timm:resnet18 (random-init)", task="zeroshot", metric="top1"
    )
    setup()
    fig, _ = figures.recall_bars(pd.concat([table, classifier], ignore_index=True))
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["RN50\n(openai)", "ViT-B-32\n(random-init)"]


# ------------------------------------------------------------------- readable, honest figures


def _table(recs):
    """The summary's long table of in-memory records (what `summarize` writes, without files)."""
    import pandas as pd

    rows = [row for rec in recs for row in records.record_rows(rec)]
    return records.order(pd.DataFrame(rows, columns=records.RECORD_COLUMNS))


def _classified(model, task, dataset, condition, metrics, n_classes=5):
    from vlstress.record import Record

    from report_fixtures import MODELS

    info = dict(MODELS[model])
    return Record(
        task=task,
        model={"slug": model, "arch": info["arch"], "weights": info["weights_label"]},
        dataset={"name": dataset, "n_images": 30, "n_classes": n_classes},
        condition=condition,
        metrics=metrics,
        provenance={"step": "evaluate", "model": info, "params": {}, "seed": 0},
    )


def _data_markers(ax):
    """The lines of an axes that draw data markers (not error-bar caps, not reference lines)."""
    return [line for line in ax.lines if line.get_marker() not in ("None", None, "", "_", "|")]


def _same_size(table):
    table = table.copy()
    table["n_params"] = 43_224_449
    table.loc[table["model"] == "rn50-openai", "n_params"] = 43_226_497  # 0.005% larger
    return table


def test_drop_vs_size_draws_one_marker_per_model_and_condition_and_joins_no_models():
    """Sizes 0.005% apart: a linear, ordinal axis (no log stretch), each model its own slot, no
    line from one model to another, error bars inside the values a drop rate can take."""
    from report_fixtures import make_records

    table = _same_size(_table(make_records(lams=(0.9,))))
    setup()
    fig, notes = figures.drop_vs_size(table)
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear"
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert len(ticks) == 2 and ticks[0].endswith("43.22M") and ticks[1].endswith("43.23M")
    conditions = len(set(table.loc[table["metric"].str.endswith("drop_rate"), "condition"]))
    drawn = _data_markers(ax)
    # one marker set per condition, each with one point per model, no line between them
    points = [(x, c) for c, line in enumerate(drawn) for x in line.get_xdata()]
    assert len(points) == 2 * conditions == len(set(points))
    assert all(line.get_linestyle() == "None" for line in drawn)
    assert {round(x) for x, _ in points} == {0, 1}  # each model's markers inside its own slot
    for collection in ax.collections:  # error bars
        for segment in collection.get_segments():
            assert max(y for _, y in segment) <= 100.0
    assert any("one variant set, no error bar" in n for n in notes)
    assert any("mean ± 1 std over 3 variant seeds" in n for n in notes)
    assert ax.get_title().endswith(
        "n = 14 query images (image → text), 70 query captions (text → image) per marker"
    )
    assert any("not a share of them: no Wilson interval" in n for n in notes)


def test_drop_vs_size_error_bars_are_clipped_at_100():
    from report_fixtures import make_records

    table = _table(make_records(lams=(0.9,)))
    drops = table["metric"] == "t2i_drop_rate"
    # seeds at 100, 100 and 40: mean 80, std ~35 -> the bar would reach 115
    table.loc[drops, "value"] = table.loc[drops, "seed"].map({1: 100.0, 10: 100.0, 100: 40.0})
    setup()
    fig, _ = figures.drop_vs_size(table)
    tops = [max(y for _, y in s) for c in fig.axes[0].collections for s in c.get_segments()]
    assert tops and max(tops) == 100.0


def test_lambda_sweep_with_one_lambda_keeps_every_model_visible():
    """One λ: each model a marker of its own shape, side by side (not stacked on one x)."""
    from matplotlib.collections import PolyCollection

    from report_fixtures import make_records

    table = _table(make_records(lams=(0.9,)))
    setup()
    fig, notes = figures.lambda_sweep(table)
    for ax in fig.axes[:4]:
        drawn = _data_markers(ax)
        assert len(drawn) == 2  # one per model
        assert len({line.get_marker() for line in drawn}) == 2
        assert len({float(line.get_xdata()[0]) for line in drawn}) == 2
        assert all(line.get_linestyle() == "None" for line in drawn)  # no one-point "curve"
        # a lone point's Wilson interval: a shaded box, one per model
        assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 2
    assert any("one marker per model" in n for n in notes)


def test_fine_tuned_variants_of_a_random_init_model_are_marked_on_every_figure(tmp_path):
    from vlstress.report import figure_set
    from vlstress.report.figures import mark_random_init

    from report_fixtures import make_records

    table = _table(make_records(lams=(0.9,)))
    tuned = table[table["model"] == "vit-b-32-random"].assign(
        model="vit-b-32-random+sc_vc", label="vit-b-32-random+sc_vc", weights_kind="checkpoint"
    )
    hub = table[table["model"] == "rn50-openai"].assign(
        model="rn50-openai+sc_vc", label="rn50-openai+sc_vc", weights_kind="checkpoint"
    )
    import pandas as pd

    marked = mark_random_init(pd.concat([table, tuned, hub]))
    labels = set(marked["label"])
    assert "vit-b-32-random+sc_vc (random-init base)" in labels
    assert "rn50-openai+sc_vc" in labels  # a pretrained base: nothing to mark
    assert "ViT-B-32 (random-init)" in labels
    seen = []
    summary = tmp_path / "summary.csv"
    summary.write_text("x\n")

    def spy(frame):
        seen.extend(frame["label"])
        return figures.placeholder("t", "r"), []

    figure_set.draw(
        {"spy": spy},
        ["spy"],
        pd.concat([table, tuned]),
        summary,
        tmp_path,
        __import__("logging").getLogger("t"),
    )
    assert "vit-b-32-random+sc_vc (random-init base)" in seen


def test_a_bar_of_height_zero_is_marked():
    from report_fixtures import make_records

    table = _table(make_records(lams=(0.9,)))
    table.loc[(table["model"] == "rn50-openai") & (table["metric"] == "i2t_R@1"), "value"] = 0.0
    setup()
    fig, notes = figures.recall_bars(table)
    zeros = [t for t in fig.axes[0].texts if t.get_text() == "0"]
    assert len(zeros) == 5  # the original bar and the four text-stress sets of RN50
    assert "a bar of height 0 is marked by a 0 in its colour" in notes


def test_zero_shot_and_stylized_accuracy_draw_chance_from_the_class_count():
    from vlstress.suites.stylized import figures as stylized
    from vlstress.suites.zeroshot import figures as zeroshot

    recs = [
        _classified(m, "zeroshot", "objects", {}, {"top1": 20.0 + i, "top5": 90.0})
        for i, m in enumerate(("vit-b-32-random", "rn50-openai"))
    ] + [
        _classified(
            m, "stylized", "objects-stylized", {"networks": "x"}, {"top1": 21.0, "top1_clean": 30.0}
        )
        for m in ("vit-b-32-random", "rn50-openai")
    ]
    table = _table(recs)
    assert set(table["n_classes"]) == {5}
    setup()
    for fig, notes in (zeroshot.zeroshot_accuracy(table), stylized.stylized_accuracy(table)):
        ax = fig.axes[0]
        levels = [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == "--"]
        assert levels == [20.0]
        assert any(t.get_text() == "chance 20%" for t in ax.texts)
        assert "n = 30 images per model" in " ".join(notes)


def test_an_older_summary_without_class_counts_still_reads(tmp_path):

    table = _table([_classified("rn50-openai", "zeroshot", "objects", {}, {"top1": 20.0})])
    old = tmp_path / "summary.csv"
    table.drop(columns=["n_classes"]).to_csv(old, index=False)
    read = records.read_summary(old)
    assert list(read.columns) == records.RECORD_COLUMNS and read["n_classes"].isna().all()


def test_corruption_severity_starts_at_zero_and_draws_only_measured_severities():
    from vlstress.suites.corruptions import figures as corruptions

    recs = [
        _classified(
            m,
            "corruption",
            f"objects-c-{c}",
            {"corruption": c, "severity": s},
            {"top1": 30.0 - s, "top1_clean": 40.0},
        )
        for m in ("vit-b-32-random", "rn50-openai")
        for c in ("fog", "gaussian_noise")
        for s in (1, 5)
    ]
    setup()
    fig, notes = corruptions.corruption_severity(_table(recs))
    for ax in fig.axes[:2]:
        assert ax.get_ylim()[0] == 0
        data = _data_markers(ax)
        assert data and all(line.get_linestyle() == "None" for line in data)
        xs = sorted(round(x) for line in data for x in line.get_xdata())
        assert xs == [0, 1, 1, 5, 5]  # the clean point once, each corruption at 1 and 5
        assert [int(t) for t in ax.get_xticks()] == [0, 1, 5]
    assert "n = 30 images per model" in notes[0]


def test_autoclip_gain_is_drawn_and_its_set_names_read_horizontally():
    from vlstress.suites.prompts import figures as prompts

    recs = [
        _classified(
            "vit-b-32-random",
            "autoclip",
            "objects",
            {"set": "objects", **extra},
            {"top1_average": 30.0, "top1_uniform": 31.0, "top1_autoclip": 33.5, "gain": 3.5},
        )
        for extra in ({}, {"corruption": "fog", "severity": 5})
    ]
    setup()
    fig, notes = prompts.autoclip_gain(_table(recs))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["gain +3.5", "gain +3.5"]
    assert all(t.get_rotation() == 0 for t in ax.get_yticklabels())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["objects", "objects: fog s5"]


def test_prompt_count_keeps_models_with_equal_values_apart():
    from vlstress.suites.prompts import figures as prompts

    recs = [
        _classified(
            m,
            "prompt_count",
            "objects",
            {"set": "objects", "templates": k, "subset": s},
            {"top1": 30.0, "ece": 5.0, "nll": 1.0},
        )
        for m in ("vit-b-32-random", "rn50-openai")
        for k in (1, 2)
        for s in (0, 1)
    ]
    setup()
    fig, notes = prompts.prompt_count(_table(recs))
    lines = [line for line in fig.axes[0].lines if len(line.get_xdata()) == 2]
    assert len(lines) == 2 and lines[0].get_marker() != lines[1].get_marker()
    assert list(lines[0].get_xdata()) != list(lines[1].get_xdata())  # side by side, not stacked
    assert any("the same values at every point" in n for n in notes)


def test_corruption_error_draws_the_error_per_corruption_and_model():
    from vlstress.suites.corruptions import figures as corruptions

    recs = [
        _classified(
            m,
            "corruption",
            f"objects-c-{c}",
            {"corruption": c, "severity": s},
            {"top1": 40.0 - s - (10.0 if m == "rn50-openai" else 0.0), "top1_clean": 50.0},
        )
        for m in ("vit-b-32-random", "rn50-openai")
        for c in ("fog", "gaussian_noise")
        for s in (1, 5)
    ]
    setup()
    fig, notes = corruptions.corruption_error(_table(recs))
    ax = fig.axes[0]
    groups = [t.get_text() for t in ax.get_xticklabels()]
    assert groups == ["clean", "fog", "gaussian noise", "mean over corruptions"]
    heights = sorted({round(p.get_height(), 6) for p in ax.patches if p.get_width() > 0})
    # errors: clean 50; ViT 100 - (39 + 35) / 2 = 63, RN50 73
    assert heights == [50.0, 63.0, 73.0]
    assert any(t.get_text() == "chance error 80%" for t in ax.texts)
    assert "n = 30 images per model" in notes[-1]


def test_models_on_one_point_of_the_effective_robustness_scatter_are_rings():
    import numpy as np

    from vlstress.suites.zeroshot.robustness_figure import _ring_sizes

    sizes = _ring_sizes(np.array([0.1, 0.5, 0.1, 0.1]), np.array([0.2, 0.3, 0.2, 0.2]))
    assert sizes[0] > sizes[2] > sizes[3] == sizes[1]  # the first drawn is the widest ring


def test_roc_curves_that_coincide_stay_visible_and_the_legend_is_off_the_panel():
    from vlstress.suites.ood.roc import roc_figure

    setup()
    same = ([0.0, 0.5, 1.0], [0.0, 0.8, 1.0], 65.0, 51.25, 77.5)
    fig = roc_figure("t", {"msp": same, "mcm": same, "energy": (*same[:3], np.nan, np.nan)})
    ax = fig.axes[0]
    curves = [line for line in ax.lines if len(line.get_xdata()) == 3]
    assert curves[0].get_linewidth() > curves[1].get_linewidth()
    assert curves[0].get_linestyle() != curves[1].get_linestyle()
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    # each AUROC with its interval (none given: the value alone), the legend's title says which
    assert texts[0] == "msp (AUROC 65.0% [51.2, 77.5])"
    assert texts[1] == "mcm (AUROC 65.0% [51.2, 77.5]), same curve as msp"
    assert texts[2] == "energy (AUROC 65.0%), same curve as msp"
    assert "95% BCa bootstrap interval" in ax.get_legend().get_title().get_text()
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.y1 < ax.get_window_extent().y0  # below the panel


def test_the_text_statistics_legends_are_below_the_panels(tmp_path):
    import matplotlib.pyplot as plt

    from vlstress.suites.rococo_text import stats

    captured = {}
    original = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        captured["fig"] = fig
        return original(fig, *args, **kwargs)

    plt.Figure.savefig = keep
    try:
        sets = {
            name: {
                "generated": {
                    "one_word_pct": 90.0,
                    "mean_cosine": 0.8,
                    "n_altered": 70,
                    "n_images": 14,
                    "pos_pct": dict.fromkeys(stats.POS_NAMES, 20.0),
                }
            }
            for name in ("same_concept", "danger")
        }
        stats.plot(sets, tmp_path / "s.png", tmp_path / "s.pdf")
    finally:
        plt.Figure.savefig = original
    fig = captured["fig"]
    fig.canvas.draw()
    for ax in fig.axes:
        if ax.get_legend() is not None:
            assert ax.get_legend().get_window_extent().y1 < ax.get_window_extent().y0
    # n stated: the captions behind each bar
    assert "n = 70 altered captions of 14 images" in fig.get_suptitle()


def test_accuracy_vs_recall_marks_models_on_one_point():
    import pandas as pd

    from vlstress.suites.accuracy_vs_recall import report

    pairs = pd.DataFrame(
        {
            "model": ["a", "b", "c"],
            "direction": ["i2t"] * 3,
            "task": ["retrieval"] * 3,
            "condition": ["original"] * 3,
            "accuracy": [40.0, 40.0, 20.0],
            "recall": [14.0, 14.0, 7.0],
        }
    )
    setup()
    fig = report.figure(pairs, [], "objects", [])
    assert [t.get_text() for t in fig.axes[0].texts] == ["×2"]


def test_dvc_bar_plots_start_at_zero_and_load_vega_from_the_checkout():
    """`dvc plots show`: every bar template used starts its bars at 0 (DVC's own bar_horizontal
    does not), and the HTML template loads vega, vega-lite and vega-embed from .dvc/plots/js (what
    `make plots-js` fetches), the CDN only as a fallback."""
    import re

    document = yaml.safe_load((REPO / "dvc.yaml").read_text())
    options = [opts for entry in document.get("plots", []) for opts in entry.values()]
    for stage in document["stages"].values():
        for out in stage.get("plots", []):
            if isinstance(out, dict):
                options += [opts for opts in out.values() if isinstance(opts, dict)]
    bars = {opts["template"] for opts in options if "bar" in str(opts.get("template"))}
    assert bars == {"bar_horizontal_zero"}
    for name in bars:
        spec = json.loads((REPO / ".dvc/plots" / f"{name}.json").read_text())
        assert spec["mark"]["type"] == "bar" and spec["encoding"]["x"]["scale"]["zero"] is True
    assert "html_template = plots/offline.html" in (REPO / ".dvc/config").read_text()
    html = (REPO / ".dvc/plots/offline.html").read_text()
    assert "{plot_divs}" in html and "{scripts}" not in html  # no CDN tags of DVC's own
    names = ["vega", "vega-lite", "vega-embed"]
    assert re.findall(r'<script src="([^"]+)"></script>', html) == [
        f"../.dvc/plots/js/{name}.min.js" for name in names
    ]
    makefile = (REPO / "Makefile").read_text()
    packages = re.search(r"^VEGA_PACKAGES := (.*)$", makefile, re.M).group(1).split()
    assert [p.rsplit("@", 1)[0] for p in packages] == names
    assert "/plots/js" in (REPO / ".dvc/.gitignore").read_text().split()
