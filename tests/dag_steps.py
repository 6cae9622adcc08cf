"""Dump the steps of the Snakemake or the DVC DAG as JSON: [{name, cmd, deps, outs}].

Run as a script (`python tests/dag_steps.py snakemake|dvc ROOT`) so that each
tool's global state stays out of the test process.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def snakemake_steps(root: Path) -> list[dict]:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import DAGSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1), snakefile=root / "Snakefile", workdir=root
        )
        workflow_api.dag(dag_settings=DAGSettings(forceall=True))
        workflow = workflow_api._workflow  # the API exposes no job listing; this is what printdag uses
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        steps = []
        for job in workflow.dag.jobs:
            if job.rule.norun:
                continue
            steps.append(
                {
                    "name": f"{job.rule.name}{dict(job.wildcards_dict) or ''}",
                    "cmd": job.shellcmd,
                    "log": [str(f) for f in job.log],
                    "deps": sorted(str(f) for f in job.input),
                    "outs": sorted(str(f) for f in job.output),
                }
            )
        return steps


def dvc_steps(root: Path) -> list[dict]:
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        return [
            {
                "name": stage.addressing,
                "cmd": stage.cmd,
                "deps": sorted(dep.def_path for dep in stage.deps),
                "outs": sorted(out.def_path for out in stage.outs),
            }
            for stage in repo.index.stages
            if stage.cmd
        ]


if __name__ == "__main__":
    tool, root = sys.argv[1], Path(sys.argv[2]).resolve()
    os.chdir(root)
    steps = snakemake_steps(root) if tool == "snakemake" else dvc_steps(root)
    json.dump(steps, sys.stdout, indent=1, sort_keys=True)
