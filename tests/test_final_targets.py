"""`rule all` asks Snakemake for one output of each job nothing reads (`final_targets`), not for
every output: every job of the workflow must still be reached from those, through the inputs of
the rules that read the others."""

from __future__ import annotations

import itertools
import os

import pytest
import yaml

from vlstress.pipeline import (
    active_stages,
    output_templates,
    stage_axis_values,
    substitute_params,
)
from vlstress.pipeline import snakemake as front_end

from conftest import REPO


def jobs(config: dict, specs: list) -> dict[tuple, tuple[list[str], list[str]]]:
    """(stage, axis values) -> (its outputs, the files its rule reads), as Snakemake expands
    them."""
    found = {}
    for stage, spec in zip(active_stages(config), specs):
        outs = [
            substitute_params(template, config)
            for out in stage.outputs.values()
            for template in output_templates(out, config)
        ]
        reads = [
            template
            for value in spec.input.values()
            if not callable(value)
            for template in (value if isinstance(value, list) else [value])
        ]
        for combo in itertools.product(
            *(stage_axis_values(stage, config, axis) for axis in stage.axes)
        ):
            values = dict(zip(stage.axes, combo))
            paths = [template.format(**values) for template in outs]
            inputs = [str(template).format(**values) for template in reads]
            found[(stage.name, combo)] = (paths, inputs)
    return found


def without_assistant(config: dict) -> dict:
    models = {k: v for k, v in config["models"].items() if not v["arch"].startswith("llava")}
    assert len(models) < len(config["models"])
    return {**config, "models": models}


@pytest.mark.parametrize("edit", [dict, without_assistant], ids=["demo", "no-assistant"])
def test_every_job_is_reached_from_the_final_targets(edit):
    """The demo, and the demo without its assistant, whose steps then have no job (their code
    stamps still do, and nothing reads them)."""
    config = edit(yaml.safe_load((REPO / "params.yaml").read_text()))
    specs = front_end.rules(config, ["params.yaml"])
    everything = jobs(config, specs)
    maker = {os.path.normpath(path): key for key, (outs, _) in everything.items() for path in outs}
    final = front_end.final_targets(config, specs)
    assert len(final) < len(front_end.targets(config)) / 10  # the point: far fewer look-ups
    assert "results/summary.csv" not in final  # read by the report steps
    assert any(path.startswith("results/figures/") for path in final)
    reached, todo = set(), [maker[os.path.normpath(path)] for path in final]
    while todo:
        key = todo.pop()
        if key in reached:
            continue
        reached.add(key)
        todo += [maker[p] for p in map(os.path.normpath, everything[key][1]) if p in maker]
    assert reached == set(everything), sorted(set(everything) - reached)[:10]
