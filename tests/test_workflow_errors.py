"""Workflow-level bad input: invalid params and unknown model slugs fail before any work, naming the
item."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import copy_repo

pytest.importorskip("snakemake")
ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}


@pytest.fixture()
def project(tmp_path) -> Path:
    return copy_repo(tmp_path / "repo")


def dry_run(root: Path, *targets: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["snakemake", "-n", "--cores", "1", *targets],
        cwd=root,
        env=ENV,
        capture_output=True,
        text=True,
    )


def edit_params(root: Path, edit) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    edit(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda p: p["embed"].update(batch_size=0), "batch_size"),
        (lambda p: p["dataset"].update(kind="flickr"), "flickr"),
        (lambda p: p["models"].update(bad={"arch": "ViT-B-32"}), "pretrained"),
        (lambda p: p["evaluate"].update(ks="1,five"), "1,five"),
        (lambda p: p.update(modles=p.pop("models")), "did you mean 'models'"),
        (lambda p: p.update(models={}), "models"),
    ],
)
def test_invalid_params_are_rejected_by_the_schema(project, edit, needle):
    edit_params(project, edit)
    result = dry_run(project)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "validat" in output.lower() and needle in output, output[-3000:]
    assert not (project / "data" / "prepared" / "manifest.json").exists()


def test_unknown_model_slug_is_named(project):
    result = dry_run(project, "results/metrics/no-such-model/original.json")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "unknown model 'no-such-model'" in output, output[-3000:]


def test_valid_params_dry_run_plans_every_model(project):
    result = dry_run(project)
    assert result.returncode == 0, result.stderr[-3000:]
    models = yaml.safe_load((project / "params.yaml").read_text())["models"]
    planned = result.stdout + result.stderr
    for slug, entry in models.items():
        # an assistant answers questions and embeds nothing: only its answers are planned
        assistant = entry["arch"].startswith("llava")
        assert (f"results/metrics/{slug}/zeroshot-objects.json" in planned) != assistant
        assert (f"results/metrics/{slug}/assistant-objects.json" in planned) == assistant
        # retrieval needs a text tower: a timm classifier has none
        retrieval = f"results/metrics/{slug}/original.json" in planned
        assert retrieval == (not entry["arch"].startswith(("timm:", "llava"))), slug


@pytest.mark.slow
def test_a_failed_step_prints_its_own_error_on_the_console(project, tmp_path):
    # paths that exist (a missing one is refused before planning: the params gate), so the step
    # itself runs and fails on the malformed captions file
    images = tmp_path / "images"
    images.mkdir()
    captions = tmp_path / "broken-captions.json"
    captions.write_text("{not json")

    def edit(params):
        params["dataset"].update(kind="coco-dir", images=str(images), captions=str(captions))

    edit_params(project, edit)
    result = subprocess.run(
        ["snakemake", "--cores", "1", "data/raw/demo"],
        cwd=project,
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "vlstress: step failed" in output and "broken-captions.json" in output, output[-3000:]
    assert "nanobind" not in output
    assert not (project / "data" / "raw" / "demo").exists()
