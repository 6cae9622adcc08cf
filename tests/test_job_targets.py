"""`rule all` asks Snakemake for one output of each job (`job_targets`), not for every output:
every job is still asked for, and a lost intermediate file is made again, as DVC would."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vlstress.pipeline import (
    active_stages,
    output_templates,
    stage_axis_values,
    substitute_params,
)
from vlstress.pipeline import snakemake as front_end

from conftest import REPO, committed_copy

ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}


def job_outputs(config: dict) -> dict[tuple, list[str]]:
    """(stage, axis values) -> its outputs, as Snakemake expands them."""
    found = {}
    for stage in active_stages(config):
        outs = [
            substitute_params(template, config)
            for out in stage.outputs.values()
            for template in output_templates(out, config)
        ]
        for combo in itertools.product(
            *(stage_axis_values(stage, config, axis) for axis in stage.axes)
        ):
            values = dict(zip(stage.axes, combo))
            found[(stage.name, combo)] = [os.path.normpath(t.format(**values)) for t in outs]
    return found


def without_assistant(config: dict) -> dict:
    models = {k: v for k, v in config["models"].items() if not v["arch"].startswith("llava")}
    assert len(models) < len(config["models"])
    return {**config, "models": models}


@pytest.mark.parametrize("edit", [dict, without_assistant], ids=["demo", "no-assistant"])
def test_one_target_for_each_job(edit):
    """The demo, and the demo without its assistant, whose steps then have no job."""
    config = edit(yaml.safe_load((REPO / "params.yaml").read_text()))
    targets = [os.path.normpath(path) for path in front_end.job_targets(config)]
    outputs = job_outputs(config)
    assert len(targets) == len(set(targets)) == len(outputs)
    assert len(targets) < len(front_end.targets(config)) / 2  # the point: fewer look-ups
    maker = {path: key for key, paths in outputs.items() for path in paths}
    assert {maker[path] for path in targets} == set(outputs)


def test_a_lost_record_is_made_again(tmp_path):
    """Every output of the demo made (stand-ins, one mtime), then one record deleted: the summary
    read from it is no older than the records left, yet a plain `snakemake` plans the job that
    makes it again (as `dvc repro` does), not nothing."""
    pytest.importorskip("snakemake")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_planning import build_everything, same_time

    root = committed_copy(tmp_path / "repo", dict)
    same_time(build_everything(root, yaml.safe_load((root / "params.yaml").read_text())))
    lost = "results/metrics/resnet18-random/adversarial-pgd.json"
    (root / lost).unlink()
    result = subprocess.run(
        ["snakemake", "-n"], cwd=root, env=ENV, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    planned = {
        path.removesuffix(" (update)")
        for line in re.findall(r"^\s+output: (.*)$", result.stdout, flags=re.M)
        for path in line.split(", ")
    }
    assert lost in planned, result.stdout[-3000:]
    assert "results/metrics/resnet18-random/original.json" not in planned  # the rest is built
