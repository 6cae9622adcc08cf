"""The prompts suite: known answers of its computations (template counts and subsets, AutoCLIP's
weights, the ablation's metrics), the per-template text pass against the zero-shot classifier, the
params check, and its table and figures from records."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from vlstress.errors import VlstressError
from vlstress.suites.prompts import autoclip
from vlstress.suites.prompts.counts import subset, template_counts
from vlstress.suites.prompts.text import average

REPO = Path(__file__).resolve().parents[1]


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


# ---- template counts and subsets


def test_counts_double_up_to_the_set_size():
    assert template_counts(None, 7, "simple") == [1, 2, 4, 7]
    assert template_counts(None, 8, "x") == [1, 2, 4, 8]
    assert template_counts(None, 80, "openai") == [1, 2, 4, 8, 16, 32, 64, 80]
    assert template_counts(None, 1, "single") == [1]
    assert template_counts([4, 1], 7, "simple") == [1, 4]


def test_a_count_above_the_set_size_is_named():
    with pytest.raises(
        VlstressError, match=r"9 templates asked for, but the set 'simple' has only 7"
    ):
        template_counts([1, 9], 7, "simple")
    with pytest.raises(VlstressError, match="must be >= 1"):
        template_counts([0], 7, "simple")


def test_subsets_are_seeded_sorted_distinct_and_the_full_count_is_every_template():
    drawn = subset(80, 8, 3)
    assert drawn == sorted(drawn) and len(set(drawn)) == 8 and all(0 <= i < 80 for i in drawn)
    assert subset(80, 8, 3) == drawn and subset(80, 8, 4) != drawn
    assert subset(7, 7, 0) == list(range(7))
    with pytest.raises(VlstressError):
        subset(7, 8, 0)


def test_the_average_is_the_normalised_mean_of_the_chosen_templates():
    rows = unit(np.random.default_rng(0).normal(size=(3, 5, 4)))
    chosen = [0, 3]
    expected = unit(rows[:, chosen].mean(axis=1))
    np.testing.assert_allclose(average(rows, chosen), expected, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(average(rows), axis=1), 1.0)
    # one template: the classifier is that template's embedding
    np.testing.assert_allclose(average(rows, [2]), rows[:, 2], atol=1e-12)


# ---- AutoCLIP


def test_identical_templates_give_uniform_weights_and_autoclip_equals_averaging():
    rng = np.random.default_rng(1)
    classes = unit(rng.normal(size=(4, 16)))
    per_template = np.repeat(classes[:, None, :], 6, axis=1)  # 6 identical templates
    images = unit(rng.normal(size=(10, 16)))
    scores, weights = autoclip.scores(images, per_template, 0.85)
    np.testing.assert_allclose(weights, 1 / 6)
    np.testing.assert_allclose(scores, images @ average(per_template).T, atol=1e-12)


def test_the_weights_entropy_is_beta_times_log_templates():
    sims = np.random.default_rng(2).uniform(-0.2, 0.4, size=(50, 7, 5))
    for beta in (0.5, 0.85, 0.99):
        weights = autoclip.template_weights(sims, beta)
        np.testing.assert_allclose(weights.sum(axis=1), 1.0)
        np.testing.assert_allclose(autoclip.entropy(weights), beta * np.log(7), atol=1e-9)
    np.testing.assert_allclose(autoclip.template_weights(sims, 1.0), 1 / 7)


def test_the_gradient_is_that_of_logsumexp_of_the_weighted_scores():
    sims = np.random.default_rng(3).normal(size=(4, 5, 3))

    def objective(rho: np.ndarray) -> np.ndarray:
        w = np.exp(rho) / np.exp(rho).sum()
        z = np.einsum("t,ntc->nc", w, sims)
        return np.log(np.exp(z).sum(axis=1))

    eps = 1e-6
    numeric = np.stack(
        [
            (objective(eps * np.eye(5)[t]) - objective(-eps * np.eye(5)[t])) / (2 * eps)
            for t in range(5)
        ],
        axis=1,
    )
    np.testing.assert_allclose(autoclip.gradient(sims), numeric, atol=1e-8)


def test_a_template_that_matches_the_image_better_gains_weight_and_fixes_the_prediction():
    # one image, true class 0: template 0 sees it clearly, templates 1 and 2 lean to class 1
    sims = np.array([[[0.5, 0.1], [0.1, 0.35], [0.1, 0.35]]])
    weights = autoclip.template_weights(sims, 0.85)[0]
    assert weights[0] > 1 / 3 > weights[1] and weights[1] == pytest.approx(weights[2])
    averaged = sims[0].mean(axis=0)
    weighted = weights @ sims[0]
    assert averaged.argmax() == 1 and weighted.argmax() == 0
    # the closed form of this case: softmax(a * [0, -1, -1]) at entropy 0.85 log 3
    w0 = weights[0]
    h = -(w0 * np.log(w0) + 2 * weights[1] * np.log(weights[1]))
    assert h == pytest.approx(0.85 * np.log(3), abs=1e-9)


def test_one_template_and_bad_input():
    sims = np.random.default_rng(4).normal(size=(3, 1, 4))
    np.testing.assert_allclose(autoclip.template_weights(sims, 0.85), 1.0)
    with pytest.raises(VlstressError, match="beta"):
        autoclip.template_weights(sims, 0.0)
    with pytest.raises(VlstressError, match="do not match"):
        autoclip.scores(np.ones((2, 3)), np.ones((2, 4, 5)), 0.85)


# ---- the ablation's metrics


def test_the_ablation_metrics_are_those_of_the_calibration_and_ood_suites():
    from vlstress.suites.calibration.calibration import ece, nll
    from vlstress.suites.prompts.ablation import classification, detection

    cosines = np.array([[0.3, 0.1], [0.2, 0.25], [0.0, 0.3], [0.4, 0.35]])
    labels = np.array([0, 0, 1, 1])
    values = classification(cosines, labels, 10.0, 15)
    assert values["top1"] == 50.0  # rows 0 and 2 right
    assert values["ece"] == pytest.approx(100 * ece(10.0 * cosines, labels, 15))
    assert values["nll"] == pytest.approx(nll(10.0 * cosines, labels))
    # by hand: confidences 0.881, 0.622, 0.953, 0.622 (images right, wrong, right, wrong) in
    # bins 13, 9, 14, 9 of 15: ECE = sum_b n_b / N |accuracy_b - confidence_b|
    probs = np.exp(10 * cosines) / np.exp(10 * cosines).sum(axis=1, keepdims=True)
    confidence, right = probs.max(axis=1), probs.argmax(axis=1) == labels
    bins = np.floor(confidence * 15)
    assert bins.tolist() == [13, 9, 14, 9] and right.tolist() == [True, False, True, False]
    by_hand = sum(
        (bins == b).sum() / 4 * abs(right[bins == b].mean() - confidence[bins == b].mean())
        for b in set(bins)
    )
    assert values["ece"] == pytest.approx(100 * by_hand)
    # MCM: in-distribution images far more peaked than the OOD ones -> perfect separation
    peaked = np.array([[1.0, -1.0], [-1.0, 1.0]])
    flat = np.array([[0.1, 0.1], [0.0, 0.05]])
    found, scored = detection(peaked, flat)
    assert found == {"auroc": 100.0, "fpr95": 0.0}
    assert detection(flat, peaked)[0]["auroc"] == 0.0
    # the images' MCM scores, in- then out-of-distribution: every ID score above every OOD one
    assert scored.column("is_ood").tolist() == [False, False, True, True]
    inside, outside = np.split(scored.column("score"), 2)
    assert inside.min() > outside.max()
    # a classification record's outcomes: right as its top-1 counts it
    from vlstress.suites.prompts.ablation import classification_outcomes

    block = classification_outcomes(cosines, labels)
    assert block.column("correct").tolist() == [True, False, True, False]
    assert 100 * block.column("correct").mean() == values["top1"]


def test_autoclip_comparison_on_a_hand_made_set():
    from vlstress.suites.prompts.evaluation import compare

    # 2 classes, 3 templates in 3-d: template 0 of each class is the class's axis, the others
    # point elsewhere; every image lies on its class's axis
    per_template = np.zeros((2, 3, 3))
    per_template[0, 0] = [1, 0, 0]
    per_template[1, 0] = [0, 1, 0]
    per_template[:, 1] = per_template[:, 2] = unit(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))
    images = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    metrics, outcomes = compare(images, np.array([0, 1]), per_template, 0.85)
    assert metrics["top1_average"] == metrics["top1_uniform"] == metrics["top1_autoclip"] == 100.0
    assert metrics["gain"] == 0.0 and 1 / 3 < metrics["max_weight"] <= 1.0
    assert outcomes.n == 2 and outcomes.column("correct_autoclip").all()


def test_the_gain_is_a_paired_difference_on_the_images():
    """The outcomes give the record's gain; the headline table's interval of it is a paired BCa
    bootstrap over the images (narrower than two independent Wilson intervals would suggest when
    the two classifiers agree on most images), and the paired comparison of two models' gains
    resamples the same images."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.report.intervals import bootstrap_interval
    from vlstress.suites.prompts.resampling import autoclip_outcomes, gain_resampling

    rng = np.random.default_rng(7)
    average = rng.random(200) < 0.6
    # AutoCLIP fixes 20 of the averaged classifier's errors and breaks 4 of its hits
    weighted = average.copy()
    weighted[np.flatnonzero(~average)[:20]] = True
    weighted[np.flatnonzero(average)[:4]] = False
    block = autoclip_outcomes(average, average, weighted, rng.integers(0, 5, 200))
    found = gain_resampling(block)
    gain = float(found.statistic(*found.samples))
    assert gain == pytest.approx(100 * (16 / 200))
    lo, hi, method = bootstrap_interval(found, 0.95, 1000, 0)
    assert method == "BCa" and 0 < lo < gain < hi
    # the paired interval is much narrower than the two top-1s' Wilson intervals apart
    wilson = [proportion_confint(x.sum(), 200, method="wilson") for x in (average, weighted)]
    assert hi - lo < 0.5 * 100 * ((wilson[0][1] - wilson[0][0]) + (wilson[1][1] - wilson[1][0]))


# ---- the text pass


def test_the_mean_of_the_per_template_embeddings_is_the_zero_shot_classifier(tiny_arch):
    import open_clip
    import torch

    from vlstress.suites.prompts.text import per_template
    from vlstress.suites.zeroshot.classifier import build

    model, _, _ = open_clip.create_model_and_transforms(tiny_arch, pretrained=None)
    model.eval()
    tokenizer = open_clip.get_tokenizer(tiny_arch)
    classes = ["cat", "dog", "car", "cup of coffee"]
    templates = ["a photo of a {c}.", "a drawing of the {c}.", "{c}"]
    rows = per_template(model, tokenizer, classes, templates, device="cpu")
    assert rows.shape == (4, 3, 32) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=-1), 1.0, atol=1e-5)
    classifier = build(model, tokenizer, classes, templates, device="cpu")
    # one text pass: the classifier is the rows' mean to the bit
    np.testing.assert_array_equal(average(rows).astype(np.float32), classifier)
    # and the rows are the full-context encode_text's to float rounding (trimmed encoder)
    with torch.no_grad():
        full = model.encode_text(tokenizer([t.replace("{c}", "car") for t in templates]))
    np.testing.assert_allclose(
        rows[2], torch.nn.functional.normalize(full, dim=-1).numpy(), atol=1e-5
    )


# ---- params


def _params(**prompts) -> dict:
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["suites"]["prompts"] = True
    params["prompts"] = {"counts": None, "seeds": 3, "seed": 0, "bins": 15, "beta": 0.85, **prompts}
    return params


def test_the_params_check_names_a_count_above_the_template_set(tmp_path):
    from vlstress.params_check import problems

    assert not [p for p in problems(_params()) if "prompts" in p]
    params = _params(counts="1,2,9")
    templates = tmp_path / "templates.txt"
    templates.write_text("a photo of a {c}.\na {c}.\n")
    params["zeroshot"]["templates"] = str(templates)
    found = [p for p in problems(params) if "prompts" in p]
    assert found == [
        f"prompts.counts: 9 templates asked for, but the set {str(templates)!r} has only 2"
    ]
    found = [p for p in problems(_params(beta=1.5, seeds=0)) if "prompts" in p]
    assert len(found) == 2 and any("beta" in p for p in found) and any("seeds" in p for p in found)


def test_the_classifier_job_refuses_a_count_above_the_set_before_any_model_work(tmp_path):
    from vlstress.params import Params
    from vlstress.suites.prompts.sets import classifiers

    params = _params(counts="1,8")  # the demo's zeroshot.templates: simple (7)
    with pytest.raises(VlstressError, match="8 templates asked for, but the set 'simple' has"):
        classifiers(Params.of(params))


# ---- table and figures


def _records(tmp_path: Path) -> list[Path]:
    from vlstress import provenance
    from vlstress.record import assemble, write_records

    files = []
    from report_fixtures import MODELS

    for slug, base in (("vit-b-32-random", 40.0), ("rn50-openai", 30.0)):
        block = provenance.build("test", {}, model=MODELS[slug])
        dataset = {"name": "objects", "kind": "demo-objects", "n_images": 20, "n_classes": 7}
        found = []
        for k in (1, 2, 4, 7):
            for seed in (0, 1, 2):
                top1 = base + 3 * np.log2(k) + seed
                found.append(
                    assemble(
                        "prompt_count",
                        dataset=dataset,
                        condition={"set": "objects", "templates": k, "seed": seed},
                        metrics={"top1": top1, "ece": 20.0 - k + base / 10, "nll": 1.5},
                        provenance=block,
                    )
                )
                found.append(
                    assemble(
                        "prompt_count_ood",
                        dataset={**dataset, "ood": "scenes"},
                        condition={"set": "objects", "ood": "scenes", "templates": k, "seed": seed},
                        metrics={"auroc": 60.0 + k + base / 10, "fpr95": 80.0},
                        provenance=block,
                    )
                )
        for condition in (
            {"set": "objects"},
            {"set": "objects", "corruption": "fog", "severity": 5},
            {"set": "objects", "attack": "typographic"},
        ):
            found.append(
                assemble(
                    "autoclip",
                    dataset=dataset,
                    condition=condition,
                    metrics={
                        "top1_average": base,
                        "top1_uniform": base,
                        "top1_autoclip": base + 1,
                        "gain": 1.0,
                        "max_weight": 0.3,
                    },
                    provenance=block,
                )
            )
        path = tmp_path / f"{slug}.json"
        write_records(path, found)
        files.append(path)
    return files


def _wilson(percent: float, n: float) -> tuple[float, float]:
    """The reference: statsmodels' Wilson interval of percent% of n items, in percent."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(percent / 100.0 * n, n, alpha=0.05, method="wilson")
    return 100.0 * lo, 100.0 * hi


def test_the_table_shows_mean_and_spread_per_count_and_the_autoclip_gain(tmp_path):
    from vlstress.report import records
    from vlstress.suites.prompts.table import ablation_table, autoclip_table, image_counts, render

    long = records.collect(_records(tmp_path))
    agg = records.aggregate(long)
    table = ablation_table(agg, image_counts(long, "prompt_count"))
    assert table is not None
    assert list(table.columns) == ["n", "Top-1", "ECE", "NLL", "AUROC vs scenes"]
    assert table.index.get_level_values("templates").tolist() == [1, 2, 4, 7] * 2
    # three seeds base + 3 log2 k + {0, 1, 2}: mean base + 3 log2 k + 1, std 1; top-1's Wilson
    # interval over the 20 images at the mean (9.4 of 20: a fractional count)
    vit = records.models(agg)[-1]
    assert vit.startswith("ViT-B-32")
    lo, hi = _wilson(47.0, 20)
    assert table.loc[(vit, "objects", 4), "Top-1"] == f"47.0 ± 1.0 [{lo:.1f}, {hi:.1f}]"
    assert table.loc[(vit, "objects", 4), "n"] == "20"
    assert table.loc[(vit, "objects", 7), "AUROC vs scenes"] == "71.0 ± 0.0"  # not a share
    assert table.loc[(vit, "objects", 7), "ECE"].count("[") == 0
    # without the images' count: the value alone, n unknown
    bare = ablation_table(agg)
    assert bare is not None and bare.loc[(vit, "objects", 4), "Top-1"] == "47.0 ± 1.0"
    assert set(bare["n"]) == {"–"}
    gains = autoclip_table(agg, image_counts(long, "autoclip"))
    assert gains is not None and set(gains["Gain"]) == {"1.0"}  # no headline table: no interval
    # with the headline table's interval of each gain (a paired bootstrap): in the cell
    from vlstress.report.headlines import Interval, case_key

    rows = records.rows(agg, "autoclip", "gain")
    found = {
        (*case_key(r.model, r.dataset, r.task, r.condition), "gain"): Interval(
            0.25, 1.75, "BCa", 20
        )
        for r in rows.itertuples()
    }
    paired = autoclip_table(agg, image_counts(long, "autoclip"), found)
    assert paired is not None and set(paired["Gain"]) == {"1.0 [0.2, 1.8]"}
    lo, hi = _wilson(41.0, 20)
    assert gains.loc[(vit, "objects"), "Top-1 (AutoCLIP)"] == f"41.0 [{lo:.1f}, {hi:.1f}]"
    assert set(gains["n"]) == {"20"}
    markdown, latex, notes = render(long, {"step": "tables"})
    assert "AUROC vs scenes" in markdown and "\\begin{tabular}" in latex and notes == []
    assert f"41.0 [{lo:.1f}, {hi:.1f}]" in markdown and "no interval" in markdown


def test_prompt_count_bands_top1_only_with_its_wilson_interval(tmp_path):
    from matplotlib.collections import LineCollection, PolyCollection

    from vlstress.report import figures, records
    from vlstress.suites.prompts.figures import prompt_count

    figures.setup()
    fig, notes = prompt_count(records.collect(_records(tmp_path)))
    top1, ece, auroc = fig.axes[:3]
    bands = [c for c in top1.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # one per model line
    assert not [c for ax in (ece, auroc) for c in ax.collections if isinstance(c, PolyCollection)]
    # the spread over subsets: a bar per point (4 counts) in every panel
    assert all(
        sum(len(c.get_segments()) for c in ax.collections if isinstance(c, LineCollection)) == 8
        for ax in (top1, ece, auroc)
    )
    # each band's ends at one template: the Wilson interval of the mean top-1 (base + 1) of 20
    ends = set()
    for band in bands:
        vertices = band.get_paths()[0].vertices
        first = vertices[:, 0].min()
        ends.add(tuple(sorted({round(y, 6) for x, y in vertices if np.isclose(x, first)})))
    assert ends == {tuple(round(v, 6) for v in _wilson(top, 20)) for top in (41.0, 31.0)}
    assert any("Wilson" in n and "ECE and AUROC are not shares" in n for n in notes)
    assert "n = 20 images per model (objects)" in notes


def test_autoclip_gain_draws_a_wilson_bar_per_top1_and_none_on_the_gain(tmp_path):
    from matplotlib.collections import LineCollection

    from vlstress.report import figures, records
    from vlstress.suites.prompts.figures import GAIN_NOTE, autoclip_gain

    figures.setup()
    fig, notes = autoclip_gain(records.collect(_records(tmp_path)))
    ax = fig.axes[0]
    spans = sorted(
        tuple(round(x, 6) for x in segment[:, 0])
        for c in ax.collections
        if isinstance(c, LineCollection)
        for segment in c.get_segments()
    )
    assert len(spans) == 9  # 3 sets x 3 methods, the gain texts bare
    first = records.models(records.collect(_records(tmp_path)))[0]
    base = 30.0 if first.startswith("RN50") else 40.0
    want = sorted(
        [tuple(round(v, 6) for v in _wilson(base, 20))] * 6
        + [tuple(round(v, 6) for v in _wilson(base + 1.0, 20))] * 3
    )
    assert spans == want
    assert GAIN_NOTE in notes and "no interval drawn" in GAIN_NOTE
    assert "n = 20 images per model (objects)" in notes


def test_the_figures_draw_every_model(tmp_path):
    from vlstress.report import figures, records
    from vlstress.report.figures import _tick
    from vlstress.suites.prompts.figures import FIGURES

    table = records.collect(_records(tmp_path))
    figures.setup()
    for name, draw in FIGURES.items():
        fig, notes = draw(table)
        assert any(note.startswith("n = ") for note in notes)  # the images behind each value
        labels = {t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().texts}
        if name == "prompt_count":
            models = records.models(table)
            assert len(fig.axes) == 3 and labels == {_tick(model) for model in models}
            assert [ax.get_title() for ax in fig.axes] == [
                "objects",
                "objects",
                "objects vs scenes",
            ]
            assert fig.axes[0].get_xscale() == "log"
        else:
            assert labels == {
                "averaged templates",
                "mean template cosine (uniform weights)",
                "AutoCLIP (per-image weights)",
            }
        png = tmp_path / f"{name}.png"
        figures.save(fig, png, {"step": "test"})
        assert png.stat().st_size > 10_000
    empty = table[table["task"] == "none"]
    fig, notes = FIGURES["prompt_count"](empty)
    assert notes and "no prompts records" in notes[0]
