"""A step that fails keeps the old git-tracked files it writes (records, tables) in both front ends:
DVC renders them `persist: true`, Snakemake flags them `update()` and puts back their time.

The runs (slow: a small project built by Snakemake, a tiny CLIP, original retrieval only) corrupt
the embeddings a model's evaluation reads, a problem no params check can see; the evaluation then
fails in each front end, and its old record is there, byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vlstress.outcomes import outcomes_path
from vlstress.pipeline import STAGES, dvc
from vlstress.pipeline.snakemake import rule_spec

from conftest import committed_copy, run_ok, tool_env

pytest.importorskip("snakemake")

MODEL = "tiny"
RECORD = f"results/metrics/{MODEL}/original.json"
EMBEDDINGS = f"results/embeddings/{MODEL}/retrieval"
STAMP = ".snakemake_timestamp"  # Snakemake's time of a folder output


def retrieval_only(params: dict) -> dict:
    params["suites"] = {name: False for name in params["suites"]}
    params["dataset"]["max_images"] = 3
    params["models"] = {MODEL: {"arch": "vlstress-tiny", "pretrained": None}}
    params["embed"].update(threads=1, workers=0)
    return params


def test_git_tracked_files_are_kept_while_their_step_runs(repo_root):
    import yaml
    from snakemake.io import is_flagged

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    stages = {stage.name: stage for stage in STAGES}
    stage = stages["evaluate"]
    assert dvc.kept(stage.outputs["record"])
    entry = dvc.stage_entry(stage, params)
    # the record is kept in place, and so are its per-item outcomes (cached all the same)
    assert entry["do"]["outs"] == [
        {RECORD.replace(MODEL, "${key}"): {"cache": False, "persist": True}},
        {str(outcomes_path(RECORD.replace(MODEL, "${key}"))): {"persist": True}},
    ]
    rule = rule_spec(stage, params, ["params.yaml"])
    assert is_flagged(rule.output["record"], "update")
    assert not dvc.kept(stage.outputs["outcomes"])
    # a cached file comes back from the DVC cache, a folder is replaced whole: neither is kept
    embed = stages["embed_retrieval"]
    assert not dvc.kept(embed.outputs["emb"])
    assert not is_flagged(rule_spec(embed, params, ["params.yaml"]).output["emb"], "update")


class FakeMetadata:
    """Snakemake's metadata store, as `failed_jobs` uses it: records by output path."""

    def __init__(self, records: dict[str, str]) -> None:
        self.records = dict(records)

    def _get_key(self, path) -> str:
        return str(path)

    def _read_record(self, key: str):
        return self.records.get(key)

    def _write_record(self, key: str, record) -> None:
        self.records[key] = record

    def _delete_record(self, key: str) -> bool:
        return self.records.pop(key, None) is not None

    def _clear_cache(self) -> None:
        pass


def test_a_failed_jobs_outputs_get_their_time_and_metadata_back(tmp_path):
    """Kept files whose bytes are those of before get their old time back; every output of a job
    that did not finish gets the metadata record it had (Snakemake records a failed job as
    finished from its new inputs); a job that finished keeps what it wrote."""
    from types import SimpleNamespace

    from snakemake.ioflags import update

    from vlstress.pipeline import failed_jobs

    same, rewritten, done = (tmp_path / name for name in ("same.json", "new.json", "done.json"))
    fresh = tmp_path / "fresh.json"  # an output the failed job never made before
    for path in (same, rewritten, done):
        path.write_text("old")
        os.utime(path, ns=(10**18, 10**18))
    failed = SimpleNamespace(output=[update(str(same)), update(str(rewritten)), str(fresh)])
    finished = SimpleNamespace(output=[update(str(done))])
    dag = SimpleNamespace(needrun_jobs=lambda: [failed, finished], finished_jobs=[])
    old = {str(p): f"record of {p.name}" for p in (same, rewritten, done)}
    workflow = SimpleNamespace(dag=dag, persistence=FakeMetadata(old))
    failed_jobs.remember(workflow)
    for path, text in ((same, "old"), (rewritten, "new"), (done, "old"), (fresh, "new")):
        path.write_text(text)  # a copy put back, a file the job wrote before it failed, a rerun
    workflow.persistence.records = {str(p): "finished from the new inputs" for p in failed.output}
    workflow.persistence.records[str(done)] = "the rerun's"
    dag.finished_jobs = [finished]
    assert failed_jobs.put_back(workflow) == []  # no DVC here: nothing to take from its cache
    assert same.stat().st_mtime_ns == 10**18
    assert rewritten.stat().st_mtime_ns != 10**18
    assert done.stat().st_mtime_ns != 10**18
    assert workflow.persistence.records == {
        str(same): "record of same.json",
        str(rewritten): "record of new.json",
        str(done): "the rerun's",
    }


@pytest.fixture(scope="module")
def project(module_tmp) -> tuple[Path, dict[str, str]]:
    pytest.importorskip("dvc")
    tmp = module_tmp.mktemp("keep_outputs")
    configs = tmp / "model-configs"
    configs.mkdir()
    env = tool_env(configs)
    root = committed_copy(tmp / "repo", retrieval_only)
    run_ok("snakemake", "--cores", "2", cwd=root, env=env)
    return root, env


def corrupt(root: Path) -> tuple[bytes, int]:
    """Garbage in place of the model's image embeddings, its folder now newer: (the good bytes, the
    folder's old time)."""
    images = root / EMBEDDINGS / "images.npy"
    good, stamp = images.read_bytes(), os.stat(root / EMBEDDINGS / STAMP).st_mtime_ns
    images.write_bytes(b"not an array")
    (root / EMBEDDINGS / STAMP).touch()
    return good, stamp


def put_back(root: Path, good: bytes, stamp: int) -> None:
    (root / EMBEDDINGS / "images.npy").write_bytes(good)
    os.utime(root / EMBEDDINGS / STAMP, ns=(stamp, stamp))


def run_fails(*cmd: str, root: Path, env: dict[str, str]) -> str:
    import subprocess

    result = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    return output


@pytest.mark.slow
def test_snakemake_keeps_a_failed_steps_record_and_its_time(project):
    root, env = project
    record = root / RECORD
    before, ns = record.read_bytes(), record.stat().st_mtime_ns
    good, stamp = corrupt(root)
    output = run_fails("snakemake", "--cores", "1", root=root, env=env)
    assert "vlstress: step failed" in output and "evaluate" in output, output[-3000:]
    assert record.read_bytes() == before
    # with its old time, the steps after it stay done once the input is good again
    assert record.stat().st_mtime_ns == ns
    # the failure is not forgotten: as it is, the next run tries the step again
    plan = run_ok("snakemake", "-n", "--cores", "1", cwd=root, env=env)
    assert "evaluate" in plan and "Nothing to be done" not in plan, plan[-3000:]
    put_back(root, good, stamp)
    # the input as it was: the old record is the one it makes, nothing is left to do
    plan = run_ok("snakemake", "-n", "--cores", "1", cwd=root, env=env)
    assert "Nothing to be done" in plan, plan[-3000:]


@pytest.mark.slow
def test_dvc_keeps_a_failed_steps_record(project):
    root, env = project
    record = root / RECORD
    before = record.read_bytes()
    good, stamp = corrupt(root)
    # the evaluation alone (a whole `dvc repro` would first embed again over the bad file)
    output = run_fails("dvc", "repro", "--single-item", f"evaluate@{MODEL}", root=root, env=env)
    assert "evaluate" in output, output[-3000:]
    assert record.read_bytes() == before
    put_back(root, good, stamp)
    status = run_ok("dvc", "status", cwd=root, env=env)
    assert "Data and pipelines are up to date" in status, status[-3000:]


def embeddings(root: Path) -> dict[str, bytes]:
    """The model's retrieval embeddings folder: each file's bytes (Snakemake's marker left out)."""
    folder = root / EMBEDDINGS
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != STAMP
    }


@pytest.mark.slow
def test_snakemake_puts_back_a_failed_steps_cached_outputs(project):
    """Snakemake deletes a job's outputs before it runs; when the job then fails, the outputs DVC
    keeps in its cache (here a model's retrieval embeddings) come back as they were, and once the
    input is good again nothing is left to do in either front end."""
    root, env = project
    before = embeddings(root)
    assert "images.npy" in before
    manifest = root / "data" / "prepared" / "manifest.json"
    good, ns = manifest.read_bytes(), manifest.stat().st_mtime_ns
    manifest.write_text("{ not json")  # the embedding step fails on its own input
    output = run_fails("snakemake", "--cores", "1", root=root, env=env)
    assert "embed_retrieval" in output and "manifest.json" in output, output[-3000:]
    assert f"put back 1 output(s) of the failed step(s) from the DVC cache: {EMBEDDINGS}" in output
    assert embeddings(root) == before
    plan = run_ok("snakemake", "-n", "--cores", "1", cwd=root, env=env)
    assert "embed_retrieval" in plan and "Nothing to be done" not in plan, plan[-3000:]
    manifest.write_bytes(good)
    os.utime(manifest, ns=(ns, ns))
    plan = run_ok("snakemake", "-n", "--cores", "1", cwd=root, env=env)
    assert "Nothing to be done" in plan, plan[-3000:]
    status = run_ok("dvc", "status", cwd=root, env=env)
    assert "Data and pipelines are up to date" in status, status[-3000:]


@pytest.mark.slow
def test_dvc_puts_back_a_failed_stages_cached_outputs(project):
    """DVC deletes a stage's cached outputs before its command runs; when the step then fails, it
    checks them out of DVC's cache (DVC holds the repository lock meanwhile), the stage stays
    changed, and once the input is good again nothing is left to do in either front end."""
    root, env = project
    before = embeddings(root)
    assert "images.npy" in before
    manifest = root / "data" / "prepared" / "manifest.json"
    good, ns = manifest.read_bytes(), manifest.stat().st_mtime_ns
    manifest.write_text("{ not json")
    stage = f"embed_retrieval@{MODEL}"
    output = run_fails("dvc", "repro", "--single-item", stage, root=root, env=env)
    assert "manifest.json" in output, output[-3000:]
    assert f"put back 1 output(s) of the failed stage {stage} from the DVC cache: {EMBEDDINGS}" in (
        output
    )
    assert embeddings(root) == before
    status = run_ok("dvc", "status", stage, cwd=root, env=env)
    assert "changed deps" in status and "data/prepared" in status, status[-3000:]
    assert "deleted" not in status and "modified" not in status.split("changed deps")[0]
    manifest.write_bytes(good)
    os.utime(manifest, ns=(ns, ns))
    status = run_ok("dvc", "status", cwd=root, env=env)
    assert "Data and pipelines are up to date" in status, status[-3000:]
    plan = run_ok("snakemake", "-n", "--cores", "1", cwd=root, env=env)
    assert "Nothing to be done" in plan, plan[-3000:]


def test_a_failed_step_finds_its_stage_only_inside_a_dvc_project(tmp_path):
    """The stage DVC names, in the folder DVC runs the command in (a queued experiment's copy,
    not the checkout `DVC_ROOT` names there); nothing outside `dvc repro` or a DVC project."""
    from vlstress.pipeline.failed_stage import stage_of_this_step

    (tmp_path / ".dvc").mkdir()
    env = {"DVC_STAGE": "embed@tiny", "DVC_ROOT": "/elsewhere"}
    assert stage_of_this_step(env, str(tmp_path)) == (str(tmp_path), "embed@tiny")
    assert stage_of_this_step({"DVC_ROOT": str(tmp_path)}, str(tmp_path)) is None
    assert stage_of_this_step(env, str(tmp_path / "sub")) is None
