"""`vlstress figures`: the four paper figures, PNG + PDF with provenance, deterministic, degrading
clearly."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess

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
    assert notes == [figures.ERRORBAR_NOTE]
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


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "recall_bars",
            "no image stress (text → image) records, the text → image panel is left out",
        ),
        ("false_r1_heatmap", "no image stress (text → image) records, its columns are left out"),
        ("lambda_sweep", "no image stress (text → image) records, the λ sweep is left out"),
        ("drop_vs_size", "no image stress (text → image) records, its lines are left out"),
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
