"""The readers' tables say what their numbers are over and hold only rows that can have numbers:
the stress table leaves out models without retrieval records, the adversarial table states the n
of its attacked subset, the summary is one table per task with counts as integers and one
spelling of undefined, the fine-tuning comparison is a measure-per-row table with a legend that
says why a LoRA variant equals its base, and the corruption error and effective robustness are
Markdown tables too."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from vlstress.params import Params
from vlstress.report import figures, frames, records, summary
from vlstress.suites.adversarial import table as adversarial
from vlstress.suites.finetune.block import FinetuneParams
from vlstress.suites.finetune.table import (
    Finetuned,
    comparison,
    finetune_tables,
    legend,
    lora_reason,
    transposed,
)
from vlstress.suites.retrieval import table as stress
from vlstress.suites.zeroshot.corruption_error import corruption_table
from vlstress.suites.zeroshot.robustness_tables import ce_per_corruption, markdown

from conftest import REPO, run_cli
from report_fixtures import write_records


def _long_rows(model: str, label: str, task: str, dataset: str, n_images: int, metrics: dict,
               condition: dict | None = None) -> list[dict]:  # fmt: skip
    condition = condition or {}
    text = ",".join(f"{k}={v}" for k, v in condition.items()) or "original"
    return [
        {
            "model": model,
            "label": label,
            "arch": "x",
            "weights": "random-init (seed 0)",
            "weights_kind": "random-init",
            "n_params": 1000,
            "dataset": dataset,
            "n_images": n_images,
            "n_captions": None,
            "task": task,
            "condition": text,
            "condition_label": text,
            "condition_json": json.dumps(condition, sort_keys=True),
            "seed": None,
            "metric": metric,
            "value": value,
        }
        for metric, value in metrics.items()
    ]


# ------------------------------------------------------------------ stress.md


def test_the_stress_table_leaves_out_a_model_without_retrieval_records(tmp_path):
    table = records.collect(write_records(tmp_path / "metrics", lams=(0.9,)))
    classifier = pd.DataFrame(
        _long_rows("resnet", "resnet (random-init)", "zeroshot", "objects", 30, {"top1": 20.0})
    )
    table = pd.concat([table, classifier], ignore_index=True)
    frame, notes = stress.paper_table(table)
    assert "resnet (random-init)" not in frame.index
    assert list(frame.index) == ["RN50 (openai)", "ViT-B-32 (random-init)"]
    assert any("resnet (random-init) left out" in n for n in notes)
    markdown_text, _, _ = stress.render(table, {"step": "tables"})
    caption = markdown_text.splitlines()[0]
    # the caption names the retrieval data only, not every dataset of the run
    assert caption.startswith("Retrieval under stress on demo:") and "objects" not in caption
    assert f"{frames.MISSING} undefined" in caption
    assert "resnet (random-init) |" not in markdown_text


# ------------------------------------------------------------------ adversarial.md


def test_the_adversarial_captions_state_the_attacked_n_and_the_whole_set():
    rows = []
    for model in ("a", "b"):
        rows += _long_rows(model, model, "zeroshot", "objects", 30, {"top1": 40.0})
        rows += _long_rows(
            model,
            model,
            "adversarial",
            "objects",
            4,
            {"top1_clean": 25.0, "robust_top1": 0.0, "attack_success": 100.0, "queries": 3.0},
            {"attack": "pgd", "eps": 1.0},
        )
    table = pd.DataFrame(rows)
    md, _, _ = adversarial.render(table, {"step": "tables"})
    headings = [line for line in md.splitlines() if line.startswith("### ")]
    assert len(headings) == 2
    for heading in headings:
        assert "n=4 images of objects" in heading
        assert "over all 30" in heading


def test_the_adversarial_caption_gives_each_attacks_n_where_they_differ():
    rows = _long_rows("a", "a", "adversarial", "objects", 4, {"robust_top1": 0.0},
                      {"attack": "pgd", "eps": 1.0})  # fmt: skip
    rows += _long_rows("a", "a", "adversarial", "objects", 8, {"robust_top1": 0.0},
                       {"attack": "square", "eps": 4.0})  # fmt: skip
    text = adversarial.attacked(pd.DataFrame(rows))
    assert text == "pgd: n=4, square: n=8 of objects"


# ------------------------------------------------------------------ summary.md


def _agg() -> pd.DataFrame:
    rows = []
    for model, top1 in (("a", 40.0), ("b", 20.0)):
        rows += _long_rows(model, model.upper(), "zeroshot", "objects", 30,
                           {"top1": top1, "top5": 100.0})  # fmt: skip
        rows += _long_rows(
            model,
            model.upper(),
            "overlap",
            "objects",
            30,
            {"n_overlap": 15.0, "top1_overlap": top1, "gap": float("nan")},
        )
    return records.aggregate(pd.DataFrame(rows))


def test_the_summary_is_one_table_per_task_with_its_own_metrics():
    text = summary.markdown(_agg())
    assert text.startswith(summary.MARKDOWN_CAPTION)
    sections = text.split("\n### ")[1:]
    assert [s.split("\n")[0].split("(`")[1].split("`")[0] for s in sections] == [
        "zeroshot",
        "overlap",
    ]
    zeroshot_header = sections[0].split("\n")[2]
    assert [c.strip() for c in zeroshot_header.strip("|").split("|")] == ["model", "top1", "top5"]
    overlap_header = sections[1].split("\n")[2]
    assert "top5" not in overlap_header and "n_overlap" in overlap_header


def test_the_summary_prints_counts_as_integers_and_one_undefined_mark():
    text = summary.markdown(_agg())
    overlap = text.split("`overlap`")[1]
    row = next(line for line in overlap.splitlines() if line.startswith("| A "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    header = next(line for line in overlap.splitlines() if line.startswith("| model"))
    named = dict(zip([c.strip() for c in header.strip("|").split("|")], cells))
    assert named["n_overlap"] == "15"  # a count: no "15.00"
    assert named["top1_overlap"] == "40.00"
    assert named["gap"] == summary.UNDEFINED
    assert "n/a" not in text and "nan" not in text
    assert all(cell for line in text.splitlines() if line.startswith("| ") for cell in
               [c.strip() for c in line.strip("|").split("|")])  # fmt: skip


@pytest.mark.parametrize(
    "metric, values, count",
    [
        ("n_correct", [12.0, 4.0], True),
        ("n_correct", [12.5, 4.0], False),  # a mean over seeds that is no whole number
        ("top1", [40.0, 20.0], False),  # whole, but a percentage
        ("shape_decisions", [3.0], True),
    ],
)
def test_which_metrics_print_as_integers(metric, values, count):
    assert summary.is_count(metric, pd.Series(values)) is count


# ------------------------------------------------------------------ comparison.md


def _finetune_agg(base: str, variants: dict[str, float]) -> pd.DataFrame:
    rows = []
    for model, shift in {base: 0.0, **variants}.items():
        for task, condition, metric, value in (
            ("retrieval", "{}", "i2t_R@1", 40.0),
            ("text-stress", '{"set": "danger"}', "i2t_R@1", 30.0),
            ("text-stress", '{"set": "danger"}', "i2t_false_R@1", 20.0),
            ("zeroshot", "{}", "top1", 50.0),
        ):
            rows.append(
                {
                    "model": model,
                    "task": task,
                    "dataset": "objects" if task == "zeroshot" else "demo",
                    "condition_json": condition,
                    "metric": metric,
                    "mean": value + shift,
                }
            )
    return pd.DataFrame(rows)


def test_the_comparison_is_a_row_per_measure_with_changes_in_brackets():
    agg = _finetune_agg("base", {"base+sc": 5.0, "base+lora": 0.0})
    variants = [
        Finetuned("sc", "base+sc", "SC/VC", "w_sc 1, w_vc 1"),
        Finetuned("lora", "base+lora", "FLYP + LoRA", "rank 4", 4),
    ]
    values, changes, _ = comparison(agg, "base", variants)
    frame = transposed(values, changes)
    assert list(frame.columns) == ["base", "sc", "lora"]
    assert list(frame.index) == list(values.columns)  # a row per measure
    assert frame.loc["text danger false R@1", "sc"] == "25.0 (+5.0)"
    assert frame.loc["text danger false R@1", "base"] == "20.0"
    same = legend(values, changes, "base").set_index("variant")["same as base"]
    assert same.to_dict() == {"base": "–", "sc": "0 of 4", "lora": "4 of 4"}


def test_a_comparison_top1_of_one_set_has_its_wilson_interval_and_a_mean_none():
    """A zero-shot top-1 of one condition on a set is one share of its n images (n from the long
    summary): the Wilson interval (statsmodels) after the value, before the change; the mean
    corruption top-1, a top-1 averaged over two conditions of a set and R@1 have none."""
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.suites.finetune.table import top1_images

    agg = _finetune_agg("base", {"base+sc": 5.0})
    extra = []
    for model, shift in (("base", 0.0), ("base+sc", 5.0)):
        for condition, value in (('{"corruption": "fog", "severity": 1}', 60.0),
                                 ('{"corruption": "fog", "severity": 5}', 40.0)):  # fmt: skip
            extra.append(("corruption", "objects-c", condition, value + shift, model))
        for condition in ('{"templates": "simple"}', '{"templates": "openai"}'):
            extra.append(("zeroshot", "other", condition, 30.0 + shift, model))
    agg = pd.concat(
        [
            agg,
            pd.DataFrame(
                [
                    {"model": m, "task": t, "dataset": d, "condition_json": c, "metric": "top1",
                     "mean": v}
                    for t, d, c, v, m in extra
                ]
            ),
        ],
        ignore_index=True,
    )  # fmt: skip
    long = agg.rename(columns={"mean": "value"}).assign(n_images=40)
    images = top1_images(agg, long)
    assert images == {"zero-shot objects top-1": {"base": 40.0, "base+sc": 40.0}}
    values, changes, _ = comparison(agg, "base", [Finetuned("sc", "base+sc", "SC/VC", "")])
    frame = transposed(values, changes, images=images)

    def wilson(count: int, n: int) -> str:
        lo, hi = proportion_confint(count, n, alpha=0.05, method="wilson")
        return f"{100 * count / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"

    assert frame.loc["zero-shot objects top-1", "base"] == wilson(20, 40)  # 50 % of 40
    assert frame.loc["zero-shot objects top-1", "sc"] == f"{wilson(22, 40)} (+5.0)"  # 55 %
    assert frame.loc["mean corruption top-1", "base"] == "50.0"  # a mean: no interval
    assert frame.loc["mean corruption top-1", "sc"] == "55.0 (+5.0)"
    assert frame.loc["zero-shot other top-1", "base"] == "30.0"  # two conditions: a mean
    assert frame.loc["text danger R@1", "base"] == "30.0"
    # without the long summary: the values alone
    plain = transposed(values, changes)
    assert plain.loc["zero-shot objects top-1", "base"] == "50.0"


def test_the_comparison_says_why_a_lora_variant_equals_its_base(tmp_path):
    params = Params.load([REPO / "params.yaml"])
    block = params.block(FinetuneParams)
    lora = [
        slug
        for slug, model in params.models.items()
        if model.pretrained and "labelled/flyp_lora" in str(model.pretrained)
    ]
    if not lora or "flyp_lora" not in block.labelled.variants:
        pytest.skip("params.yaml has no flyp_lora variant")
    agg = _finetune_agg(block.base.slug, {lora[0]: 0.0})
    path = tmp_path / "agg.csv"
    agg.to_csv(path, index=False)
    tables = finetune_tables(params, [REPO / "params.yaml"], path)
    body = tables.markdown.split("| measure (%)")[1].split("<!--")[0]
    assert "No intervals" in tables.markdown and "| 50.0 " in body and "[" not in body
    long = tmp_path / "summary.csv"
    long_rows = agg.rename(columns={"mean": "value"}).assign(n_images=40, label=agg["model"])
    long_rows.reindex(columns=records.RECORD_COLUMNS).to_csv(long, index=False)
    counted = finetune_tables(params, [REPO / "params.yaml"], path, long)
    assert "95% Wilson interval over the n images of the set (objects: n = 40)" in counted.markdown
    assert "50.0 [35.2, 64.8]" in counted.markdown and "50.0 [35.2, 64.8]" in counted.latex
    assert "95\\% Wilson interval" in counted.latex
    assert str(long) in counted.markdown  # the long summary is an input of the provenance
    note = next(n for n in tables.notes if n.startswith("flyp_lora equals the base"))
    rank = block.labelled.variants["flyp_lora"].lora
    assert f"rank-{rank} LoRA adapters on the {block.lora.tower} tower" in note
    assert f"{block.steps} AdamW steps" in note
    assert note in tables.markdown
    reason = lora_reason(block, Finetuned("flyp_lora", lora[0], "FLYP + LoRA", "", rank))
    assert reason in note
    assert "Change against the base" in tables.markdown
    # the CSV keeps a row per model
    assert tables.csv.splitlines()[0].startswith("method,variant,model,settings,")


# ------------------------------------------------------------------ robustness.md


def _top1() -> pd.DataFrame:
    rows = []
    for model, fog, noise in (
        ("base", (80.0, 60.0), (70.0, 50.0)),
        ("m", (90.0, 70.0), (85.0, 75.0)),
    ):
        for severity, value in enumerate(fog, 1):
            rows.append(("fog", severity, model, value))
        for severity, value in enumerate(noise, 1):
            rows.append(("noise", severity, model, value))
    return pd.DataFrame(
        [{"corruption": c, "severity": s, "model": m, "top1": v} for c, s, m, v in rows]
    )


def test_ce_per_corruption_is_the_error_ratio_the_mce_averages():
    top1 = _top1()
    ce = ce_per_corruption(top1, "base")
    # m's fog errors 10 + 30 against the base's 20 + 40; noise 15 + 25 against 30 + 50
    assert ce.loc["m", "fog"] == pytest.approx(100 * 40 / 60)
    assert ce.loc["m", "noise"] == pytest.approx(100 * 40 / 80)
    assert (ce.loc["base"] == 100.0).all()
    table = corruption_table(top1, {"base": 90.0, "m": 95.0}, "base").set_index("model")
    assert table.loc["m", "mCE"] == pytest.approx(ce.loc["m"].mean())


def test_the_robustness_markdown_has_the_ce_and_effective_robustness_tables():
    top1 = _top1()
    corruptions = corruption_table(top1, {"base": 90.0, "m": 95.0}, "base")
    effective = pd.DataFrame(
        {
            "shift": ["corruptions (mean)"] * 2,
            "model": ["base", "m"],
            "id_accuracy": [0.9, 0.95],
            "shifted_accuracy": [0.7, 0.8],
            "predicted": [0.69, math.nan],
            "effective_robustness": [0.01, math.nan],
            "relative_robustness": [-0.2, -0.15],
            "line_source": ["run", "run"],
            "line": ["run's 2 models (no testbed line for demo-objects)"] * 2,
        }
    )
    text = markdown(corruptions, top1, "base", effective, "objects", None, {"m": "M (x)"})
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| model") and "CE fog" in line)
    assert [c.strip() for c in header.strip("|").split("|")][:4] == [
        "model",
        "CE fog",
        "CE noise",
        "mCE",
    ]
    m_row = next(line for line in lines if line.startswith("| M (x)") and "66.7" in line)
    assert "50.0" in m_row and "58.3" in m_row  # CE fog, CE noise, mCE
    # the ER table: shift, line, model, ID and shifted top-1, predicted, ER, its interval, RR
    er_rows = [line for line in lines if line.startswith("| corruptions (mean)")]
    cells = {
        row.split("|")[3].strip(): [c.strip() for c in row.split("|")[1:-1]] for row in er_rows
    }
    assert cells["M (x)"][1] == "run's 2 models (no testbed line for demo-objects)"
    assert cells["M (x)"][3:] == [
        "95.0",
        "80.0",
        frames.MISSING,
        frames.MISSING,
        frames.MISSING,
        "-15.0",
    ]
    assert cells["base"][3:] == ["90.0", "70.0", "69.0", "+1.0", frames.MISSING, "-20.0"]
    assert "baseline base" in text and "2 corruption(s) × 2 severities" in text


def test_the_robustness_command_writes_the_markdown_beside_its_csvs(tmp_path):
    """`vlstress robustness --out-md` on the demo's tracked summary: both tables, as the CSVs
    hold them."""
    summary_csv = REPO / "results" / "summary.csv"
    table = records.read_summary(summary_csv)
    if not ((table["task"] == "corruption").any() and (table["task"] == "zeroshot").any()):
        pytest.skip("the tracked summary has no corruption and zero-shot records")
    baseline = table.loc[table["task"] == "corruption", "model"].iloc[0]
    in_distribution = table.loc[table["task"] == "zeroshot", "dataset"].iloc[0]
    out = tmp_path / "out"
    flags = [
        "robustness", "--summary", str(summary_csv), "--in-distribution", str(in_distribution),
        "--mce-baseline", str(baseline), "--out-corruptions", str(out / "c.csv"),
        "--out-effective", str(out / "e.csv"), "--out-json", str(out / "r.json"),
        "--out-scores", str(out / "scores"), "--out-fig", str(out / "er.png"),
    ]  # fmt: skip
    run_cli(*flags, "--out-md", str(out / "robustness.md"))
    text = (out / "robustness.md").read_text()
    assert "### Corruption error" in text and "### Effective robustness" in text
    assert "| model" in text and "<!-- provenance" in text
    corruptions = pd.read_csv(out / "c.csv")
    marked = figures.mark_random_init(table)  # a fine-tuned variant of a random-init model says so
    labels = dict(zip(marked["model"], marked["label"]))
    variants = [m for m, label in labels.items() if label.endswith("(random-init base)")]
    assert all(f"| {labels[m]} " in text for m in variants if m in set(corruptions["model"]))
    for row in corruptions.itertuples():
        line = next(x for x in text.splitlines() if x.startswith(f"| {labels[row.model]} "))
        assert f"{row.mCA:.1f}" in line, (row.model, line)
