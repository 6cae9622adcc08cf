"""The robustness cards of the findings suite (`vlstress cards`): on a small hand-made run, each
card's caveats, intervals, standing among the models, published difference and record links; the
same input gives the same bytes; bad input fails before any output is written."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from vlstress.cli import main
from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes, outcomes_path, write_outcomes
from vlstress.record import Record, read_records, write_record, write_records
from vlstress.report.records import collect
from vlstress.suites.findings.cards import page_name, pages

# slug -> (arch, provenance weights kind, weights label, attributes): a random-init model, a model
# fine-tuned from it, a hub model
MODELS = {
    "vit-rand": ("ViT-S-32", "random-init", "random-init (seed 0)", {"family": "ViT"}),
    "vit-rand+ft": (
        "ViT-S-32",
        "checkpoint",
        "checkpoint:ft/model.safetensors",
        {"family": "ViT", "finetune_method": "standard", "finetune_base": "vit-rand"},
    ),
    "rn50-hub": ("RN50", "hub", "hub:openai", {"family": "ResNet"}),
}
ZEROSHOT_HITS = {"vit-rand": 2, "vit-rand+ft": 4, "rn50-hub": 8}  # of 14 images
OBJECTS = {"name": "objects", "n_images": 14, "n_classes": 5}
DEMO = {"name": "demo", "n_images": 40, "n_captions": 200}


def _record(slug: str, task: str, dataset: dict, condition: dict, metrics: dict) -> Record:
    arch, kind, label, attributes = MODELS[slug]
    return Record(
        task=task,
        model={"slug": slug, "arch": arch, "weights": label},
        dataset=dataset,
        condition=condition,
        metrics=metrics,
        provenance={
            "step": "evaluate",
            "model": {
                "arch": arch,
                "weights": kind,
                "pretrained": {"hub": "openai", "checkpoint": "ft/model.safetensors"}.get(kind),
                "slug": slug,
                "attributes": attributes,
            },
            "params": {},
            "seed": 0,
        },
    )


def _write_run(root: Path) -> list[Path]:
    """A results/metrics folder: zero-shot top-1 on 14 images, retrieval on 200 captions with two
    replicate seeds, calibration (one flag per model), one published number."""
    paths = []
    for slug, hits in ZEROSHOT_HITS.items():
        folder = root / "results" / "metrics" / slug
        path = folder / "zeroshot-objects.json"
        write_record(path, _record(slug, "zeroshot", OBJECTS, {}, {"top1": 100 * hits / 14}))
        # the images each model gets right: the first `hits` of the same 14
        correct = np.arange(14) < hits
        labels = np.arange(14, dtype=np.int32) % 5
        write_outcomes(
            outcomes_path(path), [Outcomes("image", {"correct": correct, "label": labels})]
        )
        paths.append(path)
        for seed, hits_t2i in ((1, 50), (2, 70)):  # of 200 captions: a mean of 30%
            path = folder / f"image-mix-seed{seed}.json"
            condition = {"perturbation": "mix", "lam": 0.9, "seed": seed}
            metrics = {"t2i_R@1": 100 * hits_t2i / 200 if slug != "rn50-hub" else 10.0}
            write_record(path, _record(slug, "image-stress", DEMO, condition, metrics))
            paths.append(path)
        path = folder / "calibration.json"
        at_bound = 1 if slug == "vit-rand" else 0
        write_records(
            path,
            [
                _record(
                    slug,
                    "calibration",
                    {**OBJECTS, "n_images": 30},
                    {"set": "objects", "split": "held-out"},
                    {
                        "ece": 5.0 + hits,
                        "ece_ts": 3.0,
                        "temperature_at_bound": at_bound,
                        "temperature_worsens_held_out_nll": 1 - at_bound,
                    },
                )
            ],
        )
        paths.append(path)
    path = root / "results" / "metrics" / "rn50-hub" / "published-check.json"
    write_record(
        path,
        _record(
            "rn50-hub",
            "published-check",
            OBJECTS,
            {"status": "compared"},
            {"published_top1": 60.0, "run_top1": 57.142857, "diff_pp": -2.857143},
        ),
    )
    paths.append(path)
    return paths


def _summary(root: Path, paths: list[Path]) -> Path:
    out = root / "results" / "summary.csv"
    collect(paths).to_csv(out, index=False)
    return out


def _cards(root: Path, paths: list[Path], summary: Path, *extra: str) -> int:
    """`vlstress headlines`, then `vlstress cards` on its table, as the workflow runs them."""
    flags = [arg for path in paths for arg in ("--record", str(path))]
    flags += [
        arg
        for path in paths
        if outcomes_path(path).is_file()
        for arg in ("--outcomes", str(outcomes_path(path)))
    ]
    headlines = root / "results" / "headlines.csv"
    intervals = ["--confidence", "0.95", "--bootstrap", "200"]
    found = main(
        [
            "headlines",
            *flags,
            "--summary",
            str(summary),
            *intervals,
            "--out-csv",
            str(headlines),
            "--out-md",
            str(root / "results" / "headlines.md"),
        ]
    )
    if found != 0:
        return found
    return main(
        [
            "cards",
            *flags,
            "--summary",
            str(summary),
            "--headlines",
            str(headlines),
            *intervals,
            "--out-dir",
            str(root / "results" / "cards"),
            "--out-comparisons-csv",
            str(root / "results" / "findings" / "comparisons.csv"),
            "--out-comparisons-md",
            str(root / "results" / "findings" / "comparisons.md"),
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("run")
    paths = _write_run(root)
    assert _cards(root, paths, _summary(root, paths)) == 0
    return root


def _card(root: Path, slug: str) -> str:
    return (root / "results" / "cards" / page_name(slug)).read_text(encoding="utf-8")


def _text(html: str) -> str:
    """The page's text, tags dropped and spaces joined."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _wilson(hits: int, n: int) -> tuple[float, float]:
    lo, hi = proportion_confint(hits, n, alpha=0.05, method="wilson")
    return 100 * lo, 100 * hi


def test_card_states_the_caveats_a_reader_must_see(run):
    text = _text(_card(run, "vit-rand"))
    assert 'class="badge random"' in _card(run, "vit-rand")
    assert "Random-init weights" in text
    assert "calibration temperature sits on its search bound on objects (objects held-out)" in text
    assert "worsens the held-out NLL" not in text  # that flag is the other models'
    # the 14-image zero-shot top-1 is the only headline under 30 items: 2 of 14, its half width
    lo, hi = _wilson(2, 14)
    assert f"n = 14: interval ±{(hi - lo) / 2:.1f} points (1 headline number: zero-shot" in text
    fine_tuned = _card(run, "vit-rand+ft")
    assert "fine-tuned from a random-init base" in fine_tuned
    assert "Random-init weights" not in _text(fine_tuned)
    assert "worsens the held-out NLL on objects" in _text(fine_tuned)
    hub = _text(_card(run, "rn50-hub"))
    assert "random-init" not in hub.replace("Random-init", "")


def test_card_rows_give_interval_standing_and_published_difference(run):
    hub = _text(_card(run, "rn50-hub"))
    lo, hi = _wilson(8, 14)
    assert f"57.1 [{lo:.1f}, {hi:.1f}] 14" in hub
    # the best zero-shot top-1 of three models; the worst text → image R@1 (10% < 30%)
    assert "100 (2 of 2 others)" in hub
    assert "0 (0 of 2 others)" in hub
    assert "60.0 (run − published -2.9 pp)" in hub
    # ECE: no interval; the 60-item, two-seed R@1: its Wilson interval over 200 captions
    assert "—, needs per-item outcomes" in hub
    vit = _text(_card(run, "vit-rand"))
    lo, hi = _wilson(60, 200)
    assert f"30.0 [{lo:.1f}, {hi:.1f}] 200 × 2 seeds" in vit
    assert "run − published" not in vit  # no published number for it


def test_record_links_resolve_to_the_rows_records(run):
    cards = run / "results" / "cards"
    for slug in ZEROSHOT_HITS:
        html = _card(run, slug)
        rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
        linked = 0
        for row in rows:
            hrefs = re.findall(r'class="record" href="([^"]+)"', row)
            for href in hrefs:
                target = (cards / unquote(href)).resolve()
                assert target.is_file(), href
                assert {r.model["slug"] for r in read_records(target)} == {slug}
            if "mix λ=0.9" in row:
                assert sorted(Path(unquote(h)).name for h in hrefs) == [
                    "image-mix-seed1.json",
                    "image-mix-seed2.json",
                ]
            linked += bool(hrefs)
        assert linked == 4  # zero-shot, image stress, ECE, ECE after scaling


def test_same_input_gives_the_same_bytes(run, tmp_path):
    cards = run / "results" / "cards"
    before = {p.name: p.read_bytes() for p in sorted(cards.iterdir())}
    assert sorted(before) == ["index.html", "rn50-hub.html", "vit-rand+ft.html", "vit-rand.html"]
    paths = sorted((run / "results" / "metrics").rglob("*.json"))
    assert _cards(run, paths, run / "results" / "summary.csv") == 0
    after = {p.name: p.read_bytes() for p in sorted(cards.iterdir())}
    assert after == before
    # each card embeds its figure, and the provenance names the summary's hash
    html = before["vit-rand.html"].decode()
    assert html.count('src="data:image/png;base64,') == 1
    block = json.loads(
        re.search(r'<script type="application/json" id="provenance">(.*?)</script>', html, re.S)[1]
    )
    digest = hashlib.sha256((run / "results" / "summary.csv").read_bytes()).hexdigest()
    headlines = hashlib.sha256((run / "results" / "headlines.csv").read_bytes()).hexdigest()
    assert block["inputs"] == {
        str(run / "results" / "summary.csv"): digest,
        str(run / "results" / "headlines.csv"): headlines,
    }
    assert f'content="{digest}"' in html


def test_index_links_every_card_with_its_numbers(run):
    html = (run / "results" / "cards" / "index.html").read_text(encoding="utf-8")
    pages = re.findall(r'<td data-value="[^"]*"><a href="([^"]+)">', html)
    assert sorted(unquote(p) for p in pages) == [
        "rn50-hub.html",
        "vit-rand+ft.html",
        "vit-rand.html",
    ]
    # the zero-shot column: one set and condition, its value and interval
    lo, hi = _wilson(8, 14)
    assert re.search(rf'data-value="57.14\d*"[^>]*>57.1<small>\[{lo:.1f}, {hi:.1f}\]</small>', html)
    assert "<script>" in html and "addEventListener" in html


def test_headline_tables(run):
    table = pd.read_csv(run / "results" / "headlines.csv")
    zeroshot = table[table["task"] == "zeroshot"].set_index("model")
    assert zeroshot["percentile"].to_dict() == {
        "vit-rand": 0.0,
        "vit-rand+ft": 50.0,
        "rn50-hub": 100.0,
    }
    assert zeroshot.loc["rn50-hub", "lo"] == pytest.approx(_wilson(8, 14)[0])
    markdown = (run / "results" / "headlines.md").read_text(encoding="utf-8")
    assert "Intervals (95%): Wilson's score interval for proportions" in markdown
    lo, hi = _wilson(2, 14)
    assert f"| 14.3 [{lo:.1f}, {hi:.1f}]" in markdown
    assert "vit-rand+ft (random-init base)" in markdown


def test_paired_comparisons_use_mcnemar_and_holm(run):
    from scipy.stats import binomtest

    table = pd.read_csv(run / "results" / "findings" / "comparisons.csv")
    rows = table.set_index(["model_a", "model_b"])
    assert sorted(rows.index) == [
        ("rn50-hub", "vit-rand"),
        ("rn50-hub", "vit-rand+ft"),
        ("vit-rand", "vit-rand+ft"),
    ]
    # McNemar's exact test is the two-sided binomial test of the discordant images
    for (a, b), only in {
        ("rn50-hub", "vit-rand"): (6, 0),
        ("vit-rand", "vit-rand+ft"): (0, 2),
    }.items():
        assert (rows.loc[(a, b), "a_only"], rows.loc[(a, b), "b_only"]) == only
        assert rows.loc[(a, b), "p"] == pytest.approx(binomtest(only[0], sum(only)).pvalue)
    assert rows.loc[("rn50-hub", "vit-rand"), "difference"] == pytest.approx(100 * 6 / 14)
    # 6 of 6 discordant images favour rn50-hub (p = 0.031), but not after Holm over 3 tests
    assert rows.loc[("rn50-hub", "vit-rand"), "p_holm"] == pytest.approx(3 * 0.5**5)
    assert not table["significant"].any()
    markdown = (run / "results" / "findings" / "comparisons.md").read_text(encoding="utf-8")
    assert "Holm's correction across the 3 tested comparisons" in markdown
    assert markdown.count("not significant") == 3


@pytest.mark.parametrize(
    ("compare", "pairs"),
    [
        # each fine-tuned variant with its base (from the summary's finetune_base)
        ("base", [("vit-rand+ft", "vit-rand")]),
        # every model with the reference, the reference always model b
        ("rn50-hub", [("vit-rand", "rn50-hub"), ("vit-rand+ft", "rn50-hub")]),
        # two references: their own pair once
        (
            "rn50-hub,vit-rand",
            [("vit-rand", "rn50-hub"), ("vit-rand+ft", "rn50-hub"), ("vit-rand+ft", "vit-rand")],
        ),
    ],
)
def test_comparisons_pair_what_compare_names(tmp_path, compare, pairs):
    paths = _write_run(tmp_path)
    assert _cards(tmp_path, paths, _summary(tmp_path, paths), "--compare", compare) == 0
    table = pd.read_csv(tmp_path / "results" / "findings" / "comparisons.csv")
    assert sorted(set(zip(table["model_a"], table["model_b"]))) == sorted(pairs)
    # Holm's correction runs over the rows compared, not over every pair
    if compare == "base":
        only = table.set_index(["model_a", "model_b"]).loc[("vit-rand+ft", "vit-rand")]
        assert (only["a_only"], only["b_only"]) == (2, 0)
        assert only["p_holm"] == pytest.approx(only["p"])
    markdown = (tmp_path / "results" / "findings" / "comparisons.md").read_text(encoding="utf-8")
    described = {
        "base": "each fine-tuned variant against its base model",
        "rn50-hub": "each model against rn50-hub",
        "rn50-hub,vit-rand": "each model against rn50-hub, vit-rand",
    }[compare]
    assert described in markdown


def test_an_unknown_reference_model_is_refused_by_name(tmp_path, capsys):
    paths = _write_run(tmp_path)
    summary = _summary(tmp_path, paths)
    assert _cards(tmp_path, paths, summary, "--compare", "rn50-hub,vit-rnd") == 2
    err = capsys.readouterr().err
    assert "reference model(s) vit-rnd not in the summary" in err and "rn50-hub" in err
    assert not (tmp_path / "results" / "cards").exists()
    assert not (tmp_path / "results" / "findings").exists()
    assert _cards(tmp_path, paths, summary, "--compare", " , ") == 2
    assert "expected 'all', 'base' or comma-separated model slugs" in capsys.readouterr().err


def test_page_names_are_safe_and_distinct():
    assert page_name("vit-b-32+sc_vc") == "vit-b-32+sc_vc.html"
    odd = [page_name(s) for s in ("a/b", "a b", "a_b", "index", "..x")]
    assert odd[2] == "a_b.html"
    assert len(set(odd)) == len(odd)
    assert all(re.fullmatch(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]*\.html", n) for n in odd)
    assert "index.html" not in odd


def test_bad_summary_fails_without_output(tmp_path, capsys):
    paths = _write_run(tmp_path)
    summary = _summary(tmp_path, paths)
    table = pd.read_csv(summary)
    table.drop(columns=["condition_label"]).to_csv(summary, index=False)
    assert _cards(tmp_path, paths, summary) == 2
    assert "lacks column(s) condition_label" in capsys.readouterr().err
    assert not (tmp_path / "results" / "cards").exists()
    assert not (tmp_path / "results" / "findings").exists()
    # a summary row whose record is not among those given: the records and the summary disagree
    summary = _summary(tmp_path, paths)
    assert _cards(tmp_path, [p for p in paths if p.name != "calibration.json"], summary) == 2
    err = capsys.readouterr().err
    assert re.search(
        r"no metric record among those given holds model '[^']+', task 'calibration'", err
    )
    assert not (tmp_path / "results" / "cards").exists()
    assert list((tmp_path / "results").glob(".cards*")) == []


def test_pages_refuse_a_table_that_is_not_a_summary(tmp_path):
    paths = _write_run(tmp_path)
    table = collect(paths).drop(columns=["n_images", "loss"])
    with pytest.raises(VlstressError, match=r"lacks column\(s\) loss, n_images; re-run"):
        pages(
            table,
            pd.DataFrame(),
            [],
            tmp_path / "cards",
            confidence=0.95,
            summary_sha256="0" * 64,
            provenance={},
        )


def test_the_params_check_names_an_unknown_reference_model():
    import copy

    import yaml

    from vlstress import params_check

    params = yaml.safe_load((Path(__file__).parents[1] / "params.yaml").read_text())
    assert params_check.problems(params) == []
    for good in ("all", "base", "resnet18-random", "resnet18-random,vit-s-32-alt-random"):
        params["findings"]["compare"] = good
        assert params_check.problems(params) == [], good
    bad = copy.deepcopy(params)
    bad["findings"]["compare"] = "resnet18-random,resnet-18-random"
    (problem,) = params_check.problems(bad)
    assert "findings.compare: unknown model 'resnet-18-random'" in problem
    assert "did you mean 'resnet18-random'" in problem
    bad["findings"]["compare"] = ","
    (problem,) = params_check.problems(bad)
    assert "expected all, base or comma-separated model slugs" in problem
    bad["findings"]["compare"] = "resnet18-random, vit-s-32-alt-random"  # one shell word
    assert any("findings.compare" in p for p in params_check.problems(bad))
    del bad["findings"]["compare"]
    assert any("compare" in p for p in params_check.problems(bad))
