"""The prompts suite end to end: a tiny CLIP on the demo's photos, the zero-shot
test set with a corrupted and a typographic copy and an OOD set, built by Snakemake in a fresh copy
(slow tier: a few minutes). Checks what must hold whatever the weights: the per-template text
embeddings come from the classifier job, the averaged classifier of every template is the zero-shot
suite's own, DVC rerunning the suite's steps writes the same bytes, and a template count above the
set's size is refused before any model work."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import (
    committed_copy,
    dvc_reruns_to_the_same_bytes,
    finetune_off,
    locked_stages,
    run_cli,
    run_ok,
    tool_env,
)

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")

PROMPTS = {"counts": None, "seeds": 3, "seed": 0, "bins": 15, "beta": 0.85}
COUNTS = [1, 2, 4, 7]  # zeroshot.templates: simple (7 templates)
SEEDS = [0, 1, 2]
ON = ("zeroshot", "corruptions", "typographic", "ood", "prompts")


def small(params: dict) -> dict:
    finetune_off(params)
    params["suites"] = {name: name in ON for name in params["suites"]} | {"prompts": True}
    params["dataset"]["max_images"] = 3
    params["models"] = {"tiny": {"arch": "vlstress-tiny", "pretrained": None}}
    params["embed"].update(threads=1, workers=0)
    params["zeroshot"]["templates"] = "simple"
    params["zeroshot"]["robustness"]["mce_baseline"] = "tiny"
    params["corruptions"].update(names=["fog"], severities=[1], size=64)
    params["typographic"]["size"] = 64
    params["prompts"] = dict(PROMPTS)
    return params


@pytest.fixture(scope="module")
def env(module_tmp) -> dict[str, str]:
    return tool_env(module_tmp.mktemp("model-configs"))


@pytest.fixture(scope="module")
def built(module_tmp, env) -> Path:
    root = committed_copy(module_tmp.mktemp("smk") / "repo", small)
    run_ok("snakemake", "--cores", "2", cwd=root, env=env)
    return root


def records(root: Path, name: str) -> list[dict]:
    found = json.loads((root / f"results/metrics/tiny/{name}.json").read_text())
    return found if isinstance(found, list) else [found]


def test_the_classifier_job_writes_the_per_template_embeddings(built):
    folder = built / "results/embeddings/tiny/classifiers"
    rows = np.load(folder / "prompts/objects.npy")
    meta = json.loads((folder / "prompts/objects.npy.json").read_text())
    classifier = np.load(folder / "objects.npy")
    assert meta["kind"] == "zeroshot-templates" and meta["templates_source"] == "simple"
    assert rows.shape == (classifier.shape[0], 7, classifier.shape[1]) and meta["logit_scale"] > 0
    # the zero-shot classifier is the normalised mean of the per-template rows
    mean = rows.astype(np.float64).mean(axis=1)
    np.testing.assert_allclose(
        mean / np.linalg.norm(mean, axis=1, keepdims=True), classifier, atol=1e-5
    )


def test_the_ablation_records_every_count_and_seed(built):
    root = built
    found = records(root, "prompt-ablation")
    clean = records(root, "zeroshot-objects")[0]["metrics"]["top1"]
    ablation = [r for r in found if r["task"] == "prompt_count"]
    ood = [r for r in found if r["task"] == "prompt_count_ood"]
    assert [(r["condition"]["templates"], r["condition"]["seed"]) for r in ablation] == [
        (k, s) for k in COUNTS for s in SEEDS
    ]
    assert {r["condition"]["ood"] for r in ood} == {"scenes"} and len(ood) == len(ablation)
    for r in ablation:
        assert 0 <= r["metrics"]["top1"] <= 100 and 0 <= r["metrics"]["ece"] <= 100
        if r["condition"]["templates"] == 7:  # every template: the zero-shot classifier itself
            assert r["metrics"]["top1"] == pytest.approx(clean)
    assert all(0 <= r["metrics"]["auroc"] <= 100 for r in ood)
    subsets = json.loads((root / "results/metrics/tiny/prompt-ablation.json.json").read_text())
    drawn = subsets["sets"]["objects"]["subsets"]
    assert sorted(drawn, key=int) == [str(k) for k in COUNTS]
    assert all(len(chosen) == int(k) for k, seeds in drawn.items() for chosen in seeds.values())
    assert drawn["7"]["0"] == list(range(7))


def test_autoclip_runs_beside_averaging_on_every_evaluation(built):
    root = built
    found = records(root, "autoclip")
    assert [r["condition"] for r in found] == [
        {"set": "objects"},
        {"set": "objects", "corruption": "fog", "severity": 1},
        {"set": "objects", "attack": "typographic"},
    ]
    clean = records(root, "zeroshot-objects")[0]["metrics"]["top1"]
    assert found[0]["metrics"]["top1_average"] == pytest.approx(clean)
    for r in found:
        m = r["metrics"]
        assert m["gain"] == pytest.approx(m["top1_autoclip"] - m["top1_average"])
        assert 1 / 7 - 1e-9 <= m["max_weight"] <= 1.0 and 0 <= m["top1_uniform"] <= 100


def test_the_report_and_dvc_rerunning_the_suite_writes_the_same_bytes(built, env):
    for figure in ("prompt_count", "autoclip_gain"):
        assert (built / f"results/figures/{figure}.png").stat().st_size > 10_000
    table = (built / "results/tables/prompts.md").read_text()
    assert "AUROC vs scenes" in table and "Top-1 (AutoCLIP)" in table
    summary = (built / "results/summary.csv").read_text()
    assert "prompt_count_ood" in summary and "autoclip" in summary
    assert "Nothing to be done" in run_ok("snakemake", "-n", cwd=built, env=env)
    assert "Data and pipelines are up to date" in run_ok("dvc", "status", cwd=built, env=env)
    # the suite's model steps, and the classifier job that writes the per-template embeddings
    steps = locked_stages(built, "zeroshot_classifiers", "prompt_ablation", "autoclip")
    assert len(steps) == 3, steps
    dvc_reruns_to_the_same_bytes(built, steps, env)


def test_a_count_above_the_template_set_is_refused_before_any_model_work(built, tmp_path):
    root = built
    override = tmp_path / "counts.yaml"
    override.write_text(yaml.safe_dump({"prompts": {"counts": "1,8"}}))
    result = run_cli(
        "embed-zeroshot",
        "--params",
        "params.yaml",
        "--params",
        str(override),
        "--sets",
        "classifiers",
        "--sets-from",
        "vlstress.suites.zeroshot.sets,vlstress.suites.prompts.sets",
        "--arch",
        "RN50",
        "--out",
        str(tmp_path / "out"),
        cwd=root,
        check=False,
    )
    assert result.returncode != 0
    assert "8 templates asked for, but the set 'simple' has only 7" in result.stderr
    assert not (tmp_path / "out").exists()
