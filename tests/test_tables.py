"""`vlstress tables`: the RoCOCO-layout results table in Markdown and LaTeX (pandas renderers)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from vlstress.report import frames, records
from vlstress.suites.retrieval import table as tables

from conftest import run_cli
from report_fixtures import MODELS, record_flags, write_records


def table_of(root, **kwargs):
    return records.collect(write_records(root / "metrics", **kwargs))


@pytest.fixture(scope="module")
def full(module_tmp):
    return table_of(module_tmp.mktemp("full"))


def test_paper_layout_columns_and_rows(full):
    frame, notes = tables.paper_table(full)
    assert notes == []
    assert list(frame.index) == ["RN50 (openai)", "ViT-B-32 (random-init)"]  # smaller model first
    groups = list(dict.fromkeys(frame.columns.get_level_values(0)))
    assert groups == ["", "Image → Text", "Text → Image"]
    i2t = list(frame["Image → Text"].columns)
    assert i2t[:2] == [("", "n"), ("Original", "R@1")]  # n first: the queries of the direction
    assert i2t[2:5] == [
        ("same-concept", "R@1"),
        ("same-concept", "Drop"),
        ("same-concept", "False R@1"),
    ]
    assert [c for c, _ in i2t[2::3]] == ["same-concept", "diff-concept", "rand-voca", "danger"]
    t2i = [c for c, _ in frame["Text → Image"].columns]
    assert list(dict.fromkeys(t2i)) == [
        "",
        "Original",
        "mix λ=0.7",
        "mix λ=0.9",
        "patch λ=0.7",
        "patch λ=0.9",
    ]


def _wilson(pct: float, n: int) -> str:
    """The reference: statsmodels' Wilson interval of pct% of n, in percent, as the table prints
    it."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(pct / 100 * n, n, alpha=0.05, method="wilson")
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def test_cells_are_mean_pm_std_over_seeds_with_wilson_intervals(full):
    frame, _ = tables.paper_table(full)
    # rn50 mix λ=0.9: 60*0.9 - (1, 2, 3) -> 52.0 ± 1.0 over seeds; text → image: a share of the
    # 70 query captions (the mean over seeds a fractional count: 36.4 of 70)
    assert frame.loc["RN50 (openai)", ("Text → Image", "mix λ=0.9", "R@1")] == (
        f"52.0 ± 1.0 {_wilson(52.0, 70)}"
    )
    # image → text: a share of the 14 query images; single-seed text sets: no std
    assert frame.loc["RN50 (openai)", ("Image → Text", "same-concept", "R@1")] == (
        f"55.0 {_wilson(55.0, 14)}"
    )
    assert frame.loc["RN50 (openai)", ("Image → Text", "Original", "R@1")] == (
        f"65.0 {_wilson(65.0, 14)}"
    )
    # by hand, p = 0.65, n = 14, z = 1.96: centre (p + z²/2n) / (1 + z²/n) = 0.6177, half width
    # z √(p(1 − p)/n + z²/4n²) / (1 + z²/n) = 0.2237
    assert _wilson(65.0, 14) == "[39.4, 84.1]"
    # false R@1 is a share too; a drop rate is not: no interval
    false_r1 = frame.loc["RN50 (openai)", ("Image → Text", "danger", "False R@1")]
    assert false_r1.endswith(_wilson(float(false_r1.split()[0]), 14))
    assert "[" not in frame.loc["RN50 (openai)", ("Image → Text", "danger", "Drop")]
    # n: the queries of each direction
    assert frame.loc["RN50 (openai)", ("Image → Text", "", "n")] == "14"
    assert frame.loc["RN50 (openai)", ("Text → Image", "", "n")] == "70"
    assert (
        frame.loc["RN50 (openai)", ("", "", "Params (M)")]
        == f"{MODELS['rn50-openai']['n_params'] / 1e6:.0f}"
    )
    latex, _ = tables.paper_table(full, latex=True)
    assert latex.loc["RN50 (openai)", ("Text → Image", "mix λ=0.9", "R@1")] == (
        rf"52.0{{\scriptsize $\pm$1.0 {_wilson(52.0, 70)}}}"
    )
    assert latex.loc["RN50 (openai)", ("Image → Text", "danger", "Drop")].count("{") == 0


def test_n_lists_each_count_where_the_conditions_count_different_queries(full):
    """A caption set of some images only: its queries are fewer than the gallery's; the n column
    gives both, in column order, and a note says so."""
    table = full.copy()
    table.loc[table["task"] == "text-stress", "n_images"] = 12
    frame, notes = tables.paper_table(table)
    assert frame.loc["RN50 (openai)", ("Image → Text", "", "n")] == "14/12"
    assert frame.loc["RN50 (openai)", ("Image → Text", "same-concept", "R@1")] == (
        f"55.0 {_wilson(55.0, 12)}"
    )
    assert any(n.startswith("n of Image → Text: the conditions count different") for n in notes)


def test_markdown_and_latex_rendering(full):
    md = tables.to_markdown(full)
    assert "### Image → Text" in md and "### Text → Image" in md
    assert "ViT-B-32 (random-init)" in md and "| same-concept R@1" in md
    tex = tables.to_latex(full, caption="Results ± std")
    for piece in (
        r"\toprule",
        r"\midrule",
        r"\bottomrule",
        r"\multicolumn{3}{c}{same-concept}",
        r"\multicolumn{3}{c}{mix $\lambda$=0.9}",
        r"\caption{Image $\rightarrow$ Text. Results $\pm$ std}",
        r"\label{tab:stress-i2t}",
        r"\label{tab:stress-t2i}",
    ):
        assert piece in tex, piece
    assert tex.count(r"\begin{table*}") == 2  # one table per retrieval direction
    assert "λ" not in tex and "±" not in tex and "→" not in tex  # pure ASCII LaTeX


def test_latex_escapes_user_names():
    assert frames.latex_escape("laion2b_s34b_b79k & co 50%") == r"laion2b\_s34b\_b79k \& co 50\%"


def test_absent_family_keeps_the_original_column_and_says_so(tmp_path):
    frame, notes = tables.paper_table(table_of(tmp_path, image=False))
    assert list(frame["Text → Image"].columns) == [("", "n"), ("Original", "R@1")]
    assert any("no image stress" in n for n in notes)


def test_only_retrieval_keeps_both_original_columns(tmp_path):
    frame, notes = tables.paper_table(table_of(tmp_path, text=False, image=False))
    assert list(frame["Image → Text"].columns) == [("", "n"), ("Original", "R@1")]
    assert list(frame["Text → Image"].columns) == [("", "n"), ("Original", "R@1")]
    assert frame.loc["RN50 (openai)", ("Text → Image", "Original", "R@1")] == (
        f"60.0 {_wilson(60.0, 70)}"
    )
    assert any("no text stress" in n for n in notes) and any("no image stress" in n for n in notes)
    assert "### Image → Text" in tables.to_markdown(
        table_of(tmp_path / "again", text=False, image=False)
    )


@pytest.mark.parametrize(
    "kinds, kept, left_out",
    [
        ({"retrieval": False, "image": False}, "Image → Text", "Text → Image"),
        ({"retrieval": False, "text": False}, "Text → Image", "Image → Text"),
    ],
    ids=["only-text-stress", "only-image-stress"],
)
def test_a_stress_suite_alone_has_only_its_group(tmp_path, kinds, kept, left_out):
    """No retrieval records: no empty Original column; the other direction's group is left out;
    notes say so."""
    table = table_of(tmp_path, **kinds)
    frame, notes = tables.paper_table(table)
    assert list(dict.fromkeys(frame.columns.get_level_values(0))) == ["", kept]
    assert "Original" not in set(frame[kept].columns.get_level_values(0))
    assert any(f"the {left_out} group is left out" in n for n in notes)
    assert any(f"the {kept} group has no Original column" in n for n in notes)
    assert (frame != frames.MISSING).all().all()  # every cell has a value
    md, tex = tables.to_markdown(table), tables.to_latex(table, caption="Results.")
    assert f"### {kept}" in md and f"### {left_out}" not in md
    assert tex.count(r"\begin{table*}") == 1


def test_undefined_values_show_a_dash(tmp_path):
    table = table_of(tmp_path, image=False)
    table.loc[
        (table["model"] == "vit-b-32-random") & (table["metric"] == "i2t_drop_rate"), "value"
    ] = float("nan")
    frame, _ = tables.paper_table(table)
    assert frame.loc["ViT-B-32 (random-init)", ("Image → Text", "danger", "Drop")] == frames.MISSING


def test_cli_writes_both_files_with_provenance(tmp_path):
    paths = write_records(tmp_path / "metrics", lams=(0.9,))
    out = tmp_path / "out"
    run_cli(
        "summarize",
        *record_flags(paths),
        "--out-csv",
        str(out / "s.csv"),
        "--out-agg",
        str(out / "a.csv"),
        "--out-md",
        str(out / "s.md"),
        "--out-scores",
        str(out / "scores"),
        "--out-plot",
        str(out / "p.csv"),
    )
    args = (
        "tables",
        "--summary",
        str(out / "s.csv"),
        "--module",
        "vlstress.suites.retrieval.table",
        "--out-md",
        str(out / "t.md"),
        "--out-tex",
        str(out / "t.tex"),
    )
    run_cli(*args)
    md, tex = (out / "t.md").read_text(), (out / "t.tex").read_text()
    assert md.startswith("Retrieval under stress on demo") and "mean ± std over variant seeds" in md
    assert "[lo, hi]: 95% Wilson interval of R@1 and false R@1 over the n queries" in md
    provenance = json.loads(md.split("<!-- provenance\n")[1].split("-->")[0])
    assert provenance["step"] == "tables"
    assert tex.startswith("% generated by `vlstress tables`") and r"\begin{table*}" in tex
    run_cli(*args)  # deterministic
    assert (out / "t.md").read_text() == md and (out / "t.tex").read_text() == tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_latex_compiles_and_fits_a_two_column_page(full, tmp_path):
    (tmp_path / "table.tex").write_text(tables.to_latex(full, caption="Results."))
    (tmp_path / "doc.tex").write_text(
        "\\documentclass[twocolumn]{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n"
        "\\input{table.tex}\nText.\n\\end{document}\n"
    )
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert result.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log
