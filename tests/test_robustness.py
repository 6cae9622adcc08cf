"""Effective and relative robustness: known answers, the published-table acceptance check, errors,
the figure."""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vlstress.errors import VlstressError
from vlstress.io import sha256_file
from vlstress.suites.zeroshot import baselines, robustness
from vlstress.suites.zeroshot.commands import effective_robustness as command

PUBLISHED_SHIFTS = ["imagenetv2", "imagenet-r", "imagenet_sketch", "imagenet-a", "objectnet"]


def logit(p):
    return math.log(p / (1 - p))


def expit(z):
    return 1 / (1 + math.exp(-z))


def run_command(tmp_path: Path, *flags: str, fig: bool = False) -> tuple[pd.DataFrame, dict]:
    """The subcommand end to end through its own argparse flags; returns its CSV and JSON. Without
    `--baselines`, the line is fitted over every model of the tables (`all`; the default,
    `imagenet-trained`, has its own tests)."""
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    if "--baselines" not in flags:
        flags = (*flags, "--baselines", "all")
    outs = ["--out-csv", str(tmp_path / "er.csv"), "--out-json", str(tmp_path / "er.json")]
    if fig:
        outs += ["--out-fig", str(tmp_path / "er.png")]
    command.run(parser.parse_args([*flags, *outs]))
    return pd.read_csv(tmp_path / "er.csv"), json.loads((tmp_path / "er.json").read_text())


def long_table(rows: list[tuple[str, float, float]], shift: str = "s") -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "id_accuracy", "shifted_accuracy"]).assign(
        shift=shift
    )


# --------------------------------------------------------------------------- known answers


def test_line_through_two_points_is_exact():
    # logit(shift) = 2 logit(id) - 1 through id = expit(0), expit(1)
    ids = [expit(0.0), expit(1.0)]
    line = robustness.fit_line(ids, [expit(-1.0), expit(1.0)], "logit", "ols")
    assert (line.slope, line.intercept, line.n, line.transform, line.fit) == pytest.approx(
        (2.0, -1.0, 2, "logit", "ols")
    )
    linear = robustness.fit_line([0.2, 0.6], [0.1, 0.3], "linear", "ols")
    assert (linear.slope, linear.intercept) == pytest.approx((0.5, 0.0), abs=1e-12)
    assert linear.predict([0.4]) == pytest.approx([0.2])


@pytest.mark.parametrize("name", ["logit", "probit", "linear"])
def test_transforms_round_trip(name):
    transform = robustness.TRANSFORMS[name]
    p = np.array([0.001, 0.01, 0.1, 0.37, 0.5, 0.9, 0.999])
    assert transform.to_accuracy(transform.to_axis(p)) == pytest.approx(p, abs=1e-12)


def test_logit_and_probit_values_and_clipping():
    assert robustness.TRANSFORMS["logit"].to_axis(0.8) == pytest.approx(math.log(4))
    assert robustness.TRANSFORMS["probit"].to_axis(0.975) == pytest.approx(1.959963984540054)
    eps = robustness.EPSILON
    assert robustness.TRANSFORMS["logit"].to_axis([0.0, 1.0]) == pytest.approx(
        [logit(eps), logit(1 - eps)]
    )
    assert np.all(np.isfinite(robustness.TRANSFORMS["probit"].to_axis([0.0, 1.0])))
    # no clipping needed
    assert robustness.TRANSFORMS["linear"].to_axis([0.0, 1.0]) == pytest.approx([0.0, 1.0])


def test_effective_and_relative_robustness_known_answers():
    # baselines on logit(shift) = logit(id) - 1; "on" sits on the line, "above" is 10 pp over it
    table = long_table(
        [
            ("a", expit(0.0), expit(-1.0)),
            ("b", expit(2.0), expit(1.0)),
            ("on", expit(1.0), expit(0.0)),
            ("above", 0.5, expit(-1.0) + 0.1),
        ]
    )
    out = robustness.effective_robustness(table, baselines=["a", "b"]).set_index("model")
    assert out.loc["on", "effective_robustness"] == pytest.approx(0.0, abs=1e-12)
    assert out.loc["on", "predicted"] == pytest.approx(0.5)
    assert out.loc["above", "effective_robustness"] == pytest.approx(0.1)
    assert out.loc["above", "effective_robustness_pp"] == pytest.approx(10.0)
    assert out.loc["on", "relative_robustness"] == pytest.approx(0.5 - expit(1.0))
    assert out.loc["above", "relative_robustness_pp"] == pytest.approx(
        100 * (expit(-1.0) + 0.1 - 0.5)
    )
    assert out["baseline"].to_dict() == {"a": True, "above": False, "b": True, "on": False}
    assert list(out.index) == ["a", "above", "b", "on"]  # sorted rows


def test_percent_scale_gives_the_same_answer():
    rows = [("a", 0.5, 0.3), ("b", 0.8, 0.6), ("c", 0.7, 0.55)]
    fractions = robustness.effective_robustness(long_table(rows))
    percent = robustness.effective_robustness(
        long_table([(m, 100 * i, 100 * s) for m, i, s in rows]), scale=100
    )
    pd.testing.assert_frame_equal(fractions, percent, check_exact=False, rtol=1e-12)


def test_fit_per_shift_uses_only_baselines():
    table = pd.concat(
        [
            long_table([("a", 0.5, 0.3), ("b", 0.8, 0.6), ("new", 0.6, 0.9)], "s1"),
            long_table([("a", 0.5, 0.4), ("b", 0.8, 0.7), ("new", 0.6, 0.1)], "s2"),
        ]
    )
    lines = robustness.fit_lines(table, baselines=["a", "b"])
    assert list(lines) == ["s1", "s2"]
    for shift, shifted in (("s1", [0.3, 0.6]), ("s2", [0.4, 0.7])):
        expected = robustness.fit_line([0.5, 0.8], shifted)
        assert (lines[shift].slope, lines[shift].intercept, lines[shift].n) == pytest.approx(
            (expected.slope, expected.intercept, 2)
        )


def test_huber_resists_an_outlier_that_drags_ols():
    rng = np.random.default_rng(0)
    ids = np.linspace(0.2, 0.85, 30)
    true_slope, true_intercept = 0.9, -0.5
    inliers = np.array([expit(true_slope * logit(p) + true_intercept) for p in ids]) + rng.normal(
        0, 0.003, ids.size
    )
    # two far-above models
    ids_out, shifted_out = (
        np.append(ids, [0.84, 0.83]),
        np.append(inliers, [0.99, 0.985]),
    )
    ols = robustness.fit_line(ids_out, shifted_out, "logit", "ols")
    huber = robustness.fit_line(ids_out, shifted_out, "logit", "huber")
    inlier_line = robustness.fit_line(ids, inliers, "logit", "ols")
    assert abs(huber.slope - ols.slope) > 0.1
    assert abs(huber.slope - inlier_line.slope) < 0.2 * abs(ols.slope - inlier_line.slope)
    assert abs(huber.intercept - true_intercept) < abs(ols.intercept - true_intercept)
    # the robust line predicts the inliers better
    assert np.abs(huber.predict(ids) - inliers).mean() < np.abs(ols.predict(ids) - inliers).mean()
    # on clean data both agree
    clean = robustness.fit_line(ids, inliers, "logit", "huber")
    assert clean.slope == pytest.approx(inlier_line.slope, abs=0.02)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "table, kwargs, message",
    [
        (long_table([("a", 0.5, 0.3)]), {}, "at least 2"),
        (
            long_table([("a", 0.5, 0.3), ("b", 0.6, 0.4), ("c", 0.7, 0.5)]),
            {"baselines": ["a"]},
            "1 baseline model",
        ),
        (long_table([("a", 0.5, 0.3), ("b", 0.5, 0.4)]), {}, "different ID accuracies"),
        (long_table([("a", 0.5, 0.3), ("b", 1.2, 0.4)]), {}, r"\[0, 1\]"),
        (long_table([("a", 0.5, -0.1), ("b", 0.7, 0.4)]), {}, r"\[0, 1\]"),
        (
            long_table([("a", 50.0, 30.0), ("b", 70.0, 40.0)]),
            {},
            "look like percent: use scale 100",
        ),
        (
            long_table([("a", 0.5, 0.3), ("b", 0.7, 0.4)]),
            {"scale": 100},
            "look like fractions, use scale 1",
        ),
        (long_table([("a", 0.5, 0.3), ("b", 0.7, 0.4)]), {"scale": 10}, "scale must be 1"),
        (
            long_table([("a", 0.5, float("nan")), ("b", 0.7, 0.4)]),
            {},
            r"shifted_accuracy has missing.*NaN.*a \(s\)",
        ),
        (
            long_table([("a", "x", 0.3), ("b", 0.7, 0.4)]),
            {},
            "id_accuracy has missing or non-numeric",
        ),
        (long_table([("a", 0.5, 0.3), ("a", 0.7, 0.4)]), {}, r"more than once.*a \(s\)"),
        (
            long_table([("a", 0.5, 0.3), ("b", 0.7, 0.4)]),
            {"baselines": ["a", "zz"]},
            "not in the table: zz",
        ),
        (long_table([("a", 0.5, 0.3), ("b", 0.7, 0.4)]), {"fit": "lasso"}, "unknown fit 'lasso'"),
        (
            long_table([("a", 0.5, 0.3), ("b", 0.7, 0.4)]),
            {"transform": "log"},
            "unknown transform 'log'",
        ),
        (
            pd.DataFrame({"model": ["a"], "shifted_accuracy": [0.3]}),
            {},
            "lacks column.*id_accuracy",
        ),
    ],
)
def test_bad_tables_raise_clear_errors(table, kwargs, message):
    with pytest.raises(VlstressError, match=message):
        robustness.effective_robustness(table, **kwargs)


def test_command_errors_name_the_file_and_columns(tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text("model,imagenet1k,imagenet-r\nm1,60,70\nm2,70,75\n")
    with pytest.raises(VlstressError, match=r"mine.csv.*lacks column\(s\) objectnet"):
        run_command(
            tmp_path,
            "--csv",
            str(mine),
            "--shift-column",
            "imagenet-r",
            "--shift-column",
            "objectnet",
            "--scale",
            "100",
        )
    with pytest.raises(VlstressError, match="look like percent"):
        run_command(tmp_path, "--csv", str(mine), "--shift-column", "imagenet-r")
    with pytest.raises(VlstressError, match="highlight.*nope"):
        run_command(
            tmp_path,
            "--csv",
            str(mine),
            "--shift-column",
            "imagenet-r",
            "--scale",
            "100",
            "--highlight",
            "nope",
        )
    with pytest.raises(VlstressError, match="not found"):
        run_command(tmp_path, "--csv", str(tmp_path / "absent.csv"))
    with pytest.raises(VlstressError, match="needs --csv published"):
        run_command(
            tmp_path,
            "--csv",
            str(mine),
            "--shift-column",
            "imagenet-r",
            "--scale",
            "100",
            "--baselines",
            "published",
        )
    assert not (tmp_path / "er.csv").exists()  # nothing half-written


def test_rows_with_an_empty_accuracy_are_left_out_and_named(tmp_path, caplog):
    """imagenet-testbed's raw table lacks some models' shifts: those rows are left out, counted and
    named (log and provenance); the lines are fitted on the rest."""
    table = tmp_path / "testbed.csv"
    table.write_text(
        "model,val,imagenet-r,objectnet,unused\n"
        "a,60,30,20,\n"
        "b,70,40,,1\n"  # no objectnet
        "c,80,50,40,\n"
        "d,,55,45,\n"  # no ID accuracy
        "e,90,60,50,\n"
    )
    flags = ["--csv", str(table), "--id-column", "val", "--scale", "100"]
    flags += ["--shift-column", "imagenet-r", "--shift-column", "objectnet"]
    with caplog.at_level("WARNING"):
        results, summary = run_command(tmp_path, *flags)
    assert sorted(set(results["model"])) == ["a", "c", "e"]
    left_out = ["b (objectnet)", "d (val)"]
    assert summary["provenance"]["params"]["skipped_rows"] == {str(table): left_out}
    assert f"2 row(s) left out, an accuracy empty: {'; '.join(left_out)}" in caplog.text
    # text where a number belongs is still an error, not a skipped row
    table.write_text("model,val,imagenet-r,objectnet\na,60,lots,20\nc,80,50,40\n")
    with pytest.raises(VlstressError, match="non-numeric"):
        run_command(tmp_path, *flags)


# --------------------------------------------------------------------------- the published table


def published_rows() -> list[dict[str, str]]:
    with open(baselines.published_path(), newline="") as fh:
        return list(csv.DictReader(fh))


def test_published_table_is_shipped_as_documented():
    path = baselines.published_path()
    rows = published_rows()
    assert len(rows) >= 50
    assert list(rows[0]) == ["model", "name", "pretrained", "imagenet1k", *PUBLISHED_SHIFTS]
    assert len({r["model"] for r in rows}) == len(rows)
    assert all(r["model"] == f"{r['name']}/{r['pretrained']}" for r in rows)
    sources = (path.parent / "SOURCES.md").read_text()
    assert "mlfoundations/open_clip" in sources and "MIT" in sources
    # the note describes this very file
    assert f"sha256 of the trimmed copy: `{sha256_file(path)}`" in sources


def test_published_logit_fit_matches_a_hand_computation(tmp_path):
    """Acceptance: on >= 50 published models the subcommand reproduces numpy.polyfit on logit
    accuracies to 1e-6."""
    rows = published_rows()
    results, summary = run_command(
        tmp_path, "--csv", "published", "--transform", "logit", "--fit", "ols"
    )
    assert summary["n_models"] == summary["n_baselines"] == len(rows) >= 50
    for shift in PUBLISHED_SHIFTS:
        ids = [float(r["imagenet1k"]) for r in rows]
        shifted = [float(r[shift]) for r in rows]
        assert all(0 < v < 1 for v in ids + shifted)  # no clipping involved in the hand computation
        slope, intercept = np.polyfit([logit(p) for p in ids], [logit(p) for p in shifted], 1)
        line = summary["lines"][shift]
        assert abs(line["slope"] - slope) < 1e-6 and abs(line["intercept"] - intercept) < 1e-6
        assert line["n"] == len(rows)
        got = results[results["shift"] == shift].set_index("model")
        assert len(got) == len(rows)
        for r, p, s in zip(rows, ids, shifted):
            predicted = expit(slope * logit(p) + intercept)
            assert abs(got.loc[r["model"], "predicted"] - predicted) < 1e-6
            assert abs(got.loc[r["model"], "effective_robustness"] - (s - predicted)) < 1e-6
            assert abs(got.loc[r["model"], "relative_robustness"] - (s - p)) < 1e-6
    # rows sorted and deterministic; provenance names the input with its sha256
    assert list(zip(results["shift"], results["model"])) == sorted(
        zip(results["shift"], results["model"])
    )
    provenance = summary["provenance"]
    assert provenance["inputs"] == {
        str(baselines.published_path()): sha256_file(baselines.published_path())
    }
    assert provenance["params"]["transform"] == "logit" and provenance["params"]["fit"] == "ols"
    sidecar = json.loads((tmp_path / "er.csv.json").read_text())
    assert sidecar["rows"] == len(results) and "provenance" in sidecar


def test_own_models_placed_among_published_baselines(tmp_path):
    mine = tmp_path / "mine.csv"
    shifts = ",".join(PUBLISHED_SHIFTS)
    mine.write_text(
        f"model,imagenet1k,{shifts}\nmy-clip,62,55,80,50,40,55\nmy-sup,76,64,36,24,5,40\n"
    )
    rows = published_rows()
    results, summary = run_command(
        tmp_path,
        "--csv",
        str(mine),
        "--scale",
        "100",
        "--csv",
        "published",
        "--baselines",
        "published",
    )
    published_only, _ = run_command(tmp_path / "p", "--csv", "published")
    assert summary["n_baselines"] == len(rows) and summary["n_models"] == len(rows) + 2
    assert set(summary["models"]) == {"my-clip", "my-sup"}  # this run's models are reported
    for shift in PUBLISHED_SHIFTS:  # own models do not move the line
        assert summary["lines"][shift]["slope"] == pytest.approx(
            robustness.fit_line(
                [float(r["imagenet1k"]) for r in rows], [float(r[shift]) for r in rows]
            ).slope,
            abs=1e-12,
        )
    er = summary["models"]["my-sup"]["shifts"]["imagenet-r"]
    assert er["effective_robustness"] < -0.3 and er["relative_robustness"] == pytest.approx(
        0.36 - 0.76
    )
    base = published_only.set_index(["shift", "model"])["effective_robustness"]
    merged = results.set_index(["shift", "model"])["effective_robustness"]
    assert np.allclose(merged.loc[base.index], base, atol=1e-12)
    # the same baselines named in a file give the same lines
    listing = tmp_path / "baselines.txt"
    listing.write_text("# published models\n" + "\n".join(r["model"] for r in rows) + "\n")
    _, again = run_command(
        tmp_path / "f",
        "--csv",
        str(mine),
        "--scale",
        "100",
        "--csv",
        "published",
        "--baselines",
        f"@{listing}",
    )
    assert again["lines"] == summary["lines"]


def test_outputs_are_byte_identical_across_runs(tmp_path):
    for out in ("a", "b"):
        run_command(
            tmp_path / out, "--csv", "published", "--fit", "huber", "--shift-column", "imagenet-r"
        )
    for name in ("er.csv", "er.json", "er.csv.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


# --------------------------------------------------------------------------- the figure


def test_figure_draws_baselines_fit_identity_and_labelled_models():
    from vlstress.suites.zeroshot import robustness_figure

    table = pd.concat(
        [
            long_table(
                [("a", 0.3, 0.2), ("b", 0.5, 0.35), ("c", 0.8, 0.7), ("mine", 0.6, 0.6)], "s1"
            ),
            long_table(
                [("a", 0.3, 0.1), ("b", 0.5, 0.2), ("c", 0.8, 0.5), ("mine", 0.6, 0.2)], "s2"
            ),
        ]
    )
    lines = robustness.fit_lines(table, ["a", "b", "c"], "probit", "huber")
    results = robustness.effective_robustness(table, ["a", "b", "c"], lines=lines)
    fig = robustness_figure.draw(results, lines, highlight=["c"], id_name="imagenet1k")
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["s1", "s2"]
    assert "probit" in fig._suptitle.get_text() and "Huber" in fig._suptitle.get_text()
    for ax in panels:
        collections = {c.get_gid(): c for c in ax.collections}
        assert len(collections["baselines"].get_offsets()) == 2  # a, b grey; c is highlighted
        assert set(collections) == {"baselines", "model:c", "model:mine"}
        lines_by_gid = {line.get_gid(): line for line in ax.get_lines()}
        assert set(lines_by_gid) == {"fit", "identity"}
        assert lines_by_gid["identity"].get_linestyle() == "--"
        x, y = lines_by_gid["fit"].get_data()
        line = lines[ax.get_title()]
        assert np.allclose(y, line.slope * np.asarray(x) + line.intercept)
        labels = [t.get_text() for t in ax.texts]  # the ER at each point, the name in the legend
        assert len(labels) == 2 and all(re.fullmatch(r"ER [+-]\d+\.\d pp", t) for t in labels)
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert "50" in ticks and all(re.fullmatch(r"\d+(\.\d+)?", t) for t in ticks)
        position = ax.get_xticks()[ticks.index("50")]
        assert position == pytest.approx(0.0)  # probit(0.5) = 0: ticks sit at transformed positions
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    legend = [t.get_text() for found in legends for t in found.get_texts()]
    assert "mine" in legend and "c" in legend
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_each_family_of_model_has_its_marker_and_legend_entry():
    from vlstress.suites.zeroshot import robustness_figure

    table = long_table([("clip-a", 0.3, 0.2), ("clip-b", 0.5, 0.4), ("r50", 0.7, 0.3)], "s1")
    lines = robustness.fit_lines(table, "all", "logit", "ols")
    results = robustness.effective_robustness(table, "all", lines=lines)
    families = {"clip-a": "open_clip", "clip-b": "open_clip", "r50": "timm"}
    fig = robustness_figure.draw(
        results, lines, highlight=list(families), families=families, id_name="imagenet"
    )
    (ax,) = [ax for ax in fig.axes if ax.axison]
    points = {c.get_gid(): c for c in ax.collections}

    def vertices(gid: str) -> int:  # a circle is a many-sided path, a square has 4 corners + close
        return len(points[gid].get_paths()[0].vertices)

    assert vertices("model:r50") == 5 and vertices("model:clip-a") > 5
    legend = (
        fig.legends[0] if fig.legends else next(a.get_legend() for a in fig.axes if a.get_legend())
    )
    entries = [t.get_text() for t in legend.get_texts()]
    assert "supervised ImageNet (timm)" in entries and "image-text (open_clip)" in entries
    # one family only: no key needed
    alone = robustness_figure.draw(results, lines, families=dict.fromkeys(families, "open_clip"))
    texts = [t.get_text() for a in alone.axes if a.get_legend() for t in a.get_legend().get_texts()]
    assert "image-text (open_clip)" not in texts
    import matplotlib.pyplot as plt

    plt.close(fig)
    plt.close(alone)


def test_command_writes_png_and_pdf(tmp_path):
    run_command(
        tmp_path,
        "--csv",
        "published",
        "--shift-column",
        "imagenet-r",
        "--highlight",
        "ViT-L-14/openai",
        fig=True,
    )
    png, pdf = tmp_path / "er.png", tmp_path / "er.pdf"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert pdf.read_bytes()[:5] == b"%PDF-"


def test_cli_entry(tmp_path):
    from vlstress import cli

    code = cli.main(
        [
            "effective-robustness",
            "--csv",
            "published",
            "--baselines",
            "all",
            "--out-csv",
            str(tmp_path / "e.csv"),
            "--out-json",
            str(tmp_path / "e.json"),
        ]
    )
    assert code == 0 and (tmp_path / "e.csv").is_file()
    assert (
        cli.main(
            [
                "effective-robustness",
                "--csv",
                str(tmp_path / "none.csv"),
                "--out-csv",
                str(tmp_path / "x.csv"),
                "--out-json",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )


# --------------------------------------------------------------------------- ImageNet-trained lines


def test_the_testbed_table_is_shipped_as_documented():
    path = baselines.published_path("testbed")
    assert sha256_file(path) == ("df999510c77d5e50a0f50cc27342095785fcf543ede0730ba4bb308305f714bf")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 85 and list(rows[0]) == ["model", "imagenet1k", *PUBLISHED_SHIFTS]
    assert {"alexnet", "resnet50", "vgg16_bn"} <= {row["model"] for row in rows}
    sources = (path.parent / "SOURCES.md").read_text()
    assert (
        "testbed_standard.csv" in sources and "490b62ad8c59f3317aa58183158c0d1ddb7e67e3" in sources
    )


def test_the_default_line_is_fitted_on_imagenet_trained_models_only(tmp_path):
    """The usual protocol: CLIP models are placed against the line of ImageNet-trained models, so
    a model's effective robustness does not depend on which other CLIP models are in the run."""
    from vlstress import cli

    flags = ["effective-robustness", "--csv", "published", "--csv", "testbed"]
    outs = ["--out-csv", str(tmp_path / "e.csv"), "--out-json", str(tmp_path / "e.json")]
    assert cli.main([*flags, *outs]) == 0
    results = pd.read_csv(tmp_path / "e.csv")
    summary = json.loads((tmp_path / "e.json").read_text())
    clip = {row["model"] for row in published_rows()}
    fitted = set(results.loc[results["baseline"], "model"])
    # the 5 testbed models without an ImageNet-R accuracy are left out, and named
    assert fitted and not fitted & clip and len(fitted) == 80
    assert {line["n"] for line in summary["lines"].values()} == {80}
    left_out = summary["provenance"]["params"]["skipped_rows"]["testbed"]
    assert len(left_out) == 5 and all(row.endswith("(imagenet-r)") for row in left_out)
    assert summary["provenance"]["params"]["baselines"] == "imagenet-trained"
    # a CLIP model's ER is the same whichever other CLIP models are in the tables
    few = tmp_path / "few.csv"
    kept = [row for row in published_rows()][:3]
    few.write_text(
        "model,"
        + ",".join(["imagenet1k", *PUBLISHED_SHIFTS])
        + "\n"
        + "".join(
            row["model"] + "," + ",".join(row[c] for c in ["imagenet1k", *PUBLISHED_SHIFTS]) + "\n"
            for row in kept
        )
    )
    small = ["effective-robustness", "--csv", str(few), "--csv", "testbed"]
    outs2 = ["--out-csv", str(tmp_path / "f.csv"), "--out-json", str(tmp_path / "f.json")]
    assert cli.main([*small, *outs2]) == 0
    alone = pd.read_csv(tmp_path / "f.csv").set_index(["shift", "model"])["effective_robustness"]
    among = results.set_index(["shift", "model"])["effective_robustness"]
    for key, value in alone.items():
        if key[1] in {row["model"] for row in kept}:
            assert value == pytest.approx(among[key], abs=1e-12), key


def test_the_default_needs_imagenet_trained_models(tmp_path):
    with pytest.raises(VlstressError, match="add --csv testbed"):
        run_command(tmp_path, "--csv", "published", "--baselines", "imagenet-trained")


def test_labels_of_close_models_do_not_overlap_each_other_or_the_points():
    """Four models within a point of accuracy of one another (the demo's base, its LoRA variant,
    WiSE-FT, ...): each label is moved apart (adjustText), none covers another label or a
    model's marker."""
    from matplotlib.transforms import Bbox

    from vlstress.suites.zeroshot import robustness_figure

    close = [("m1", 0.40, 0.30), ("m2", 0.401, 0.301), ("m3", 0.405, 0.298), ("m4", 0.41, 0.31)]
    table = long_table([("a", 0.2, 0.1), ("b", 0.6, 0.45), *close], "s1")
    lines = robustness.fit_lines(table, ["a", "b"], "logit", "ols")
    results = robustness.effective_robustness(table, ["a", "b"], lines=lines)
    names = {m: f"vit-b-32-random+variant_{m}" for m, _, _ in close}
    fig = robustness_figure.draw(results, lines, id_name="imagenet", names=names)
    fig.canvas.draw()
    (ax,) = [ax for ax in fig.axes if ax.axison]
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text().startswith("ER ")]
    assert len(boxes) == 4
    for i, box in enumerate(boxes):
        assert not any(box.overlaps(other) for other in boxes[i + 1 :])
    markers = [
        ax.transData.transform(c.get_offsets()[0])
        for c in ax.collections
        if (c.get_gid() or "").startswith("model:")
    ]
    for box in boxes:
        assert not any(Bbox.from_bounds(*(m - 3), 6, 6).overlaps(box) for m in markers)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_the_labelled_figure_is_the_same_bytes_every_time(tmp_path, monkeypatch):
    """Label placement is bounded by iterations, not by wall-clock time: a busy CPU draws the same
    figure."""
    import adjustText
    import matplotlib.pyplot as plt

    from vlstress.report.figures import setup
    from vlstress.suites.zeroshot import robustness_figure

    close = [("m1", 0.40, 0.30), ("m2", 0.401, 0.301), ("m3", 0.405, 0.298), ("m4", 0.41, 0.31)]
    table = long_table([("a", 0.2, 0.1), ("b", 0.6, 0.45), ("c", 0.9, 0.8), *close], "s1")
    lines = robustness.fit_lines(table, ["a", "b", "c"], "logit", "ols")
    results = robustness.effective_robustness(table, ["a", "b", "c"], lines=lines)
    setup()
    pngs = []
    for slow in (False, True):
        if slow:  # every clock reading a second later: a time limit would cut the placement short
            ticks = iter(range(10**6))
            monkeypatch.setattr(adjustText, "timer", lambda: float(next(ticks)))
        fig = robustness_figure.draw(results, lines, id_name="imagenet")
        fig.savefig(tmp_path / f"{slow}.png", format="png", metadata={"Software": None})
        plt.close(fig)
        pngs.append((tmp_path / f"{slow}.png").read_bytes())
    assert pngs[0] == pngs[1]
