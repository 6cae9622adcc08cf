"""Parameter edits on a built workflow (slow: a few minutes): the retrieval suites of the small demo
(tests/test_workflow.py's params with the zero-shot suites off), built by Snakemake.

An edit of `evaluate.ks` reruns only the metric steps that read it and what is drawn or tabulated
after them, in both front ends' plans; a lambda removed from params.yaml disappears from the
summary, the tables and the scores in both front ends.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from vlstress.pipeline import STAGES

from conftest import ran_stages, stale_stages
from test_workflow import REPORT_STEPS, fresh_project, sh

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")


@pytest.fixture(scope="module")
def project(module_tmp) -> Path:
    root = fresh_project(module_tmp.mktemp("edits") / "repo", zeroshot=False)
    sh("snakemake", "--cores", "2", cwd=root)
    return root


def test_a_forced_rerun_of_a_folder_step_leaves_nothing_to_do(project):
    """A step with a folder output forced to run again writes the same bytes: neither front end has
    anything left to do, whichever forced it (Snakemake used to see a newer folder and plan every
    step after it)."""
    plan = sh("snakemake", "-n", cwd=project)
    assert "Nothing to be done" in plan, plan[-3000:]
    sh("snakemake", "--cores", "2", "--forcerun", "download", "--until", "download", cwd=project)
    plan = sh("snakemake", "-n", cwd=project)
    assert "Nothing to be done" in plan, plan[-3000:]
    assert ran_stages(sh("dvc", "repro", "-f", "-s", "download", cwd=project)) == {"download"}
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=project)
    plan = sh("snakemake", "-n", cwd=project)
    assert "Nothing to be done" in plan, plan[-3000:]


def summary_lams(root: Path) -> set[str]:
    import pandas as pd

    table = pd.read_csv(root / "results/summary.csv")
    return set(table.loc[table["task"] == "image-stress", "condition"])


def test_param_edit_reruns_only_dependent_stages(project):
    params_path = project / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["evaluate"]["ks"] = "1,5"
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    plan = sh("snakemake", "-n", cwd=project)
    planned = set(re.findall(r"^(?:local)?rule (\w+):", plan, flags=re.M)) - {"all"}
    assert "evaluate" in planned, plan[-3000:]
    # the metric stages that read ks, and what is drawn or tabulated from the summary after them
    report = {stage.name for stage in STAGES if stage.subcommand in REPORT_STEPS}
    assert planned <= {"evaluate", "evaluate_text", "evaluate_image", *report}, planned
    status = sh("dvc", "status", cwd=project)
    changed = stale_stages(status)
    assert "evaluate@vit-s-32-random" in changed, status
    # only the metric stages use ks; the gate rechecks every params edit (and reruns nothing itself)
    assert all(stage.startswith("evaluate") or stage == "check_params" for stage in changed), status
    ran = ran_stages(sh("dvc", "repro", cwd=project))
    assert changed <= ran
    upstream = {
        "download",
        "prepare",
        "model_card",
        "scorer_card",
        "nlp_data",
        "ei_scores",
        "text_variants",
        "image_variants",
    }
    assert not {s for s in ran if s.split("@")[0] in upstream or s.startswith("embed")}, ran
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=project)


def edit_lams(root: Path, lams: list[float]) -> None:
    params_path = root / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["image_variants"]["lams"] = lams
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.mark.parametrize("front_end", ["snakemake", "dvc"])
def test_a_removed_lambda_disappears_from_summary_tables_and_figures(project, front_end):
    sh("git", "checkout", "-q", "--", "params.yaml", cwd=project)
    sh("snakemake", "--cores", "2", cwd=project)
    assert summary_lams(project) == {"perturbation=mix,lam=0.9", "perturbation=mix,lam=0.5"}
    edit_lams(project, [0.9])
    sh(
        *(["snakemake", "--cores", "2"] if front_end == "snakemake" else ["dvc", "repro"]),
        cwd=project,
    )
    assert summary_lams(project) == {"perturbation=mix,lam=0.9"}
    for table in ("results/summary.md", "results/tables/stress.md", "results/tables/stress.tex"):
        text = (project / table).read_text().replace("$\\lambda$", "λ")
        assert "λ=0.9" in text and "λ=0.5" not in text, table
    scores = [p.parent.name for p in (project / "results/scores/image-stress").rglob("*.json")]
    assert scores
    assert "perturbation=mix,lam=0.9" in scores and not any("lam=0.5" in s for s in scores)
    # the record of the removed lambda may stay on disk: it is simply not read
    assert (project / "results/metrics/vit-s-32-random/image-mix-lam0.5-seed1.json").is_file()
