"""`vlstress exp run`: DVC experiments that switch suites (`-S suites.X=...`), which plain
`dvc exp run` cannot (dvc.yaml lists only the stages of the suites that are on).

In a committed copy of the repository with the quick workflow's small params (three demo photos,
a tiny CLIP, original retrieval and one RoCOCO image variant), switching `rococo_image` off queues
an experiment whose dvc.yaml has no image stages and which runs through; the workspace files stay
as they were. The queued run takes about a minute and a half, the workspace runs half a minute
(slow tier); the rest take seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vlstress import params as params_module
from vlstress.errors import VlstressError
from vlstress.pipeline import dvc
from vlstress.pipeline.experiments import parse
from vlstress.pipeline.rendered import suites_switched

from conftest import REPO, TINY_CLIP, committed_copy
from test_quick_workflow import small

pytest.importorskip("dvc")

IMAGE_STAGES = ("image_variants:", "evaluate_image:")
WORKSPACE = ("params.yaml", "dvc.yaml", "workflow/schemas/config.schema.yaml")


@pytest.fixture(scope="module")
def env(module_tmp) -> dict[str, str]:
    configs = module_tmp.mktemp("model-configs")
    (configs / "vlstress-tiny.json").write_text(json.dumps(TINY_CLIP))
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    return {**os.environ, "PATH": path, "VLSTRESS_MODEL_CONFIGS": str(configs)}


@pytest.fixture
def project(tmp_path) -> Path:
    """A fresh committed copy (for the tests that queue experiments)."""
    root = committed_copy(tmp_path / "repo", small)
    assert all(stage in (root / "dvc.yaml").read_text() for stage in IMAGE_STAGES)
    return root


@pytest.fixture(scope="module")
def shared(module_tmp) -> Path:
    """One committed copy for the tests that leave it as they found it."""
    return committed_copy(module_tmp.mktemp("exp") / "repo", small)


def sh(*cmd: str, cwd: Path, env: dict[str, str], check: bool = True):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result


def files(root: Path) -> dict[str, bytes]:
    return {name: (root / name).read_bytes() for name in WORKSPACE}


def queued(root: Path, env: dict[str, str]) -> dict[str, str]:
    """Experiment name -> its stash commit, of the experiments in DVC's queue."""
    stash = ["refs/exps/celery/stash"]  # absent until something is queued
    log = sh("git", "reflog", "show", "--format=%H %gs", *stash, cwd=root, env=env, check=False)
    log = log.stdout
    return {line.rsplit(":", 1)[1]: line.split()[0] for line in log.splitlines() if ":" in line}


def show(root: Path, rev: str, path: str, env: dict[str, str]) -> str:
    return sh("git", "show", f"{rev}:{path}", cwd=root, env=env).stdout


def test_arguments_other_than_set_param_pass_through_unchanged():
    request = parse(["-S", "suites.ood=false", "--queue", "-n", "x", "-f", "--temp"])
    assert request.combinations == [["suites.ood=false"]]
    assert request.passthrough == ["--queue", "-n", "x", "-f", "--temp"]
    assert request.restore and not request.sweep
    sweep = parse(["--set-param=suites.ood=true,false", "-Sseed=1", "--queue", "--name=s", "-f"])
    assert sweep.sweep and sweep.name == "s" and sweep.passthrough == ["--queue", "-f"]
    assert len(sweep.combinations) == 2 and all("seed=1" in c for c in sweep.combinations)
    assert not parse(["-S", "seed=1"]).restore  # in the workspace: left applied, as DVC does
    with pytest.raises(VlstressError, match="without `--queue`"):
        parse(["-S", "suites.ood=true,false"])


@pytest.mark.slow
def test_a_queued_experiment_switches_a_suite_off_and_runs(project, env):
    before = files(project)
    result = sh(
        *"vlstress exp run -S suites.rococo_image=false --queue -n x".split(), cwd=project, env=env
    )
    assert "Queued experiment 'x'" in result.stdout + result.stderr
    assert files(project) == before
    stash = queued(project, env)["x"]
    dvc_yaml = show(project, stash, "dvc.yaml", env)
    assert not any(stage in dvc_yaml for stage in IMAGE_STAGES)
    params = yaml.safe_load(show(project, stash, "params.yaml", env))
    assert params["suites"]["rococo_image"] is False

    sh("vlstress", "exp", "run", "--run-all", cwd=project, env=env)  # passed through
    status = sh("dvc", "queue", "status", cwd=project, env=env).stdout
    assert re.search(r"\bx\s.*\bSuccess\b", status), status
    refs = sh("git", "for-each-ref", "--format=%(refname)", "refs/exps", cwd=project, env=env)
    ref = next(line for line in refs.stdout.splitlines() if line.endswith("/x"))
    lock = show(project, ref, "dvc.lock", env)
    assert "evaluate@tiny" in lock and "summarize" in lock and "image_variants" not in lock
    assert files(project) == before
    assert sh("git", "status", "--porcelain", "-uno", cwd=project, env=env).stdout == ""


@pytest.mark.slow  # a repro and two experiments in the workspace: about 40 s
def test_in_the_workspace_the_switch_stays_applied_as_dvc_leaves_it(project, env):
    sh("dvc", "repro", "-q", "code_prepare", cwd=project, env=env)  # the gate's stamp, a code stamp
    before = files(project)
    # plain DVC: the gate stops the experiment, names the command and leaves the workspace as it
    # was (params.yaml, and the gate's stamp DVC deleted: no code stamp looks changed)
    result = sh(
        *"dvc exp run -S suites.rococo_image=false code_prepare".split(),
        cwd=project,
        env=env,
        check=False,
    )
    assert result.returncode != 0
    assert "vlstress exp run -S suites.rococo_image=false" in result.stdout + result.stderr
    assert "params.yaml is back as committed" in result.stdout + result.stderr
    assert files(project) == before
    assert (project / "results" / "params.checked").is_file()
    status = sh("dvc", "status", "code_prepare", cwd=project, env=env).stdout
    assert "up to date" in status, status
    sh(*"vlstress exp run -S suites.rococo_image=false check_params".split(), cwd=project, env=env)
    assert "rococo_image: false" in (project / "params.yaml").read_text()
    assert not any(stage in (project / "dvc.yaml").read_text() for stage in IMAGE_STAGES)
    assert "check_params" in (project / "dvc.lock").read_text()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-S", "other.yaml:seed=1"], "-S overrides params.yaml only"),
        (["-S", "suites.rococo_image=maybe"], "suites.rococo_image: 'maybe' is not of type"),
        (["-S", "suites.nosuch=true"], "Could not override 'suites.nosuch'"),
        (["-S", "seed=0,x"], "failed validation"),  # the first is valid: neither is queued
    ],
)
def test_bad_overrides_are_refused_and_touch_nothing(shared, env, args, needle):
    before = files(shared)
    result = sh("vlstress", "exp", "run", *args, "--queue", cwd=shared, env=env, check=False)
    assert result.returncode == 2
    assert needle in result.stderr, result.stderr
    assert files(shared) == before
    assert queued(shared, env) == {}  # (the sweep test, which queues, comes last)


def test_the_gate_names_the_command_for_a_switched_suite(shared, env):
    original = (shared / "params.yaml").read_text()
    params = yaml.safe_load(original)
    params["suites"]["rococo_image"] = False
    try:
        (shared / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        result = sh("vlstress", "pipeline", "check", cwd=shared, env=env, check=False)
    finally:
        (shared / "params.yaml").write_text(original)
    assert result.returncode == 2
    assert "DVC cannot add or remove stages on a param" in result.stderr, result.stderr
    assert "`vlstress exp run -S suites.rococo_image=false`" in result.stderr
    assert "vlstress pipeline render" in result.stderr


def test_the_gate_undoes_a_switch_only_inside_dvc_exp_run(shared, env):
    from dvc.utils.hydra import apply_overrides

    before = files(shared)
    check = "vlstress pipeline check --params params.yaml --stamp results/params.checked".split()
    try:
        # by hand: the edit is the user's, and stays
        apply_overrides(shared / "params.yaml", ["suites.rococo_image=false"])
        switched = (shared / "params.yaml").read_bytes()
        result = sh(*check, cwd=shared, env=env, check=False)
        assert result.returncode == 2 and "vlstress exp run -S" in result.stderr
        assert (shared / "params.yaml").read_bytes() == switched
        # as `dvc exp run -S suites.rococo_image=false -S seed=7` leaves it: the switch is undone
        apply_overrides(shared / "params.yaml", ["seed=7"])
        result = sh(*check, cwd=shared, env={**env, "DVC_EXP_NAME": "x"}, check=False)
        assert result.returncode == 2
        assert "suites.rococo_image=false undone in params.yaml" in result.stderr, result.stderr
        params = yaml.safe_load((shared / "params.yaml").read_text())
        assert params["suites"]["rococo_image"] is True and params["seed"] == 7
        assert not (shared / "results" / "params.checked").exists()  # none before: none now
    finally:
        (shared / "params.yaml").write_bytes(before["params.yaml"])
    assert files(shared) == before


def test_the_hint_is_for_a_switch_only():
    params = params_module.load([REPO / "params.yaml"])
    current = dvc.render(params)
    off = {**params, "suites": {**params["suites"], "ood": False, "calibration": False}}
    assert suites_switched(off, current) == ["suites.calibration=false", "suites.ood=false"]
    assert suites_switched(params, current) is None
    # dvc.yaml differs in more than the suites (a stage edited): no hint, the diff as before
    assert suites_switched(off, current.replace("${seed}", "0", 1)) is None
    assert "--seed ${seed}" in current


def test_a_sweep_queues_one_experiment_per_value(shared, env):
    project = shared  # the last test of the module: its queue and edit stay
    (project / "params.yaml").write_text((project / "params.yaml").read_text() + "# mine\n")
    before = files(project)
    sh(
        *"vlstress exp run -S suites.rococo_image=true,false --queue -n s".split(),
        cwd=project,
        env=env,
    )
    assert files(project) == before  # uncommitted edits included, byte for byte
    stash = queued(project, env)
    assert set(stash) == {"s-1", "s-2"}
    # the first value leaves the suites as they are: dvc.yaml rendered unchanged
    assert show(project, stash["s-1"], "dvc.yaml", env) == before["dvc.yaml"].decode()
    assert not any(s in show(project, stash["s-2"], "dvc.yaml", env) for s in IMAGE_STAGES)
