"""`vlstress compare-results`: a rebuilt results tree against another, numbers within tolerances,
digests that follow from tolerated differences reported as such, every real difference named."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from vlstress.cli import main
from vlstress.results_compare import close, compare_trees


def _write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(root: Path, similarity: float = 0.969258, top1: float = 50.0) -> None:
    """A small project: an overlap result, a record whose provenance holds its digest, a summary
    CSV, a table, an embedding file and a dvc.lock listing them."""
    detected = _write(
        root,
        "results/overlap/detect.json",
        json.dumps({"threshold": 0.9801, "testsets": {"objects": {
            "similarity": [0.5, similarity], "flagged": [False, False], "nearest": [2, 5]}}},
            indent=2),
    )  # fmt: skip
    record = _write(
        root,
        "results/metrics/m/overlap.json",
        json.dumps({"metrics": {"top1": top1, "n_overlap": 0}, "provenance": {
            "inputs": {"results/overlap/detect.json": _digest(detected)}}}, indent=2),
    )  # fmt: skip
    _write(root, "results/summary.csv", f"model,top1\nm,{top1}\n")
    _write(root, "results/tables/overlap.md", "| model | top1 |\n| m | 50.0 |\n")
    np.save(root / "results" / "emb.npy", np.array([[0.6, 0.8]], np.float32))
    lock = {
        "stages": {
            "overlap_detect": {"outs": [{"path": "results/overlap/detect.json",
                                         "md5": hashlib.md5(detected.read_bytes()).hexdigest(),
                                         "size": detected.stat().st_size}]},
            "evaluate_overlap": {"outs": [{"path": "results/metrics/m/overlap.json",
                                           "md5": hashlib.md5(record.read_bytes()).hexdigest(),
                                           "size": record.stat().st_size}]},
        }
    }  # fmt: skip
    _write(root, "dvc.lock", yaml.safe_dump(lock))


def test_the_tolerance_is_relative_and_absolute():
    assert close(0.969258, 0.969257) and close(0.96926, 0.96925)  # a 5-decimal last place
    assert not close(0.9693, 0.9692) and not close(50.0, 50.01)
    assert close(0.0, 1e-6) and not close(0.0, 1e-4)
    assert close(100.0, 100.0005) and not close(100.0, 100.005)


def test_a_last_bit_change_passes_with_a_note(tmp_path, capsys):
    build(tmp_path / "a")
    build(tmp_path / "b", similarity=0.969257)
    found = compare_trees(tmp_path / "a", tmp_path / "b")
    assert found.real == []
    lines = {(d.path, d.where): d for d in found.differences}
    sim = lines["results/overlap/detect.json", "testsets.objects.similarity[1]"]
    assert sim.verdict == "tolerated" and "0.969258 vs 0.969257" in sim.detail
    digest = lines[
        "results/metrics/m/overlap.json", "provenance.inputs.results/overlap/detect.json"
    ]
    assert digest.verdict == "follows" and "detect.json differs within tolerance" in digest.detail
    # dvc.lock: the md5 of detect.json, and of the record whose only difference is that digest
    assert lines["dvc.lock", "stages.overlap_detect.outs[0].md5"].verdict == "follows"
    assert lines["dvc.lock", "stages.evaluate_overlap.outs[0].md5"].verdict == "follows"
    assert main(["compare-results", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "tolerated  results/overlap/detect.json: testsets.objects.similarity[1]" in out
    assert "0 different (0 real differences)" in out


def test_a_real_change_fails_naming_the_file_and_the_key(tmp_path, capsys):
    build(tmp_path / "a")
    build(tmp_path / "b", top1=60.0)
    found = compare_trees(tmp_path / "a", tmp_path / "b")
    real = {(d.path, d.where) for d in found.real}
    assert ("results/metrics/m/overlap.json", "metrics.top1") in real
    assert ("results/summary.csv", "row 1, top1") in real
    # the lock's digest of that record follows from the real difference: not counted twice
    lock = [d for d in found.differences if d.path == "dvc.lock"]
    assert lock and all("real difference in results/metrics/m/overlap.json" in d.detail
                        for d in lock)  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        main(["compare-results", str(tmp_path / "a"), str(tmp_path / "b")])
    assert exit_.value.code == 1
    assert "DIFFERENT  results/metrics/m/overlap.json: metrics.top1: 50.0 vs 60.0" in (
        capsys.readouterr().out
    )


def test_other_files_bytes_arrays_and_missing_files(tmp_path):
    build(tmp_path / "a")
    build(tmp_path / "b")
    _write(tmp_path / "b", "results/tables/overlap.md", "| model | top1 |\n| m | 50.1 |\n")
    np.save(tmp_path / "b" / "results" / "emb.npy", np.array([[0.6, 0.8000001]], np.float32))
    _write(tmp_path / "b", "results/new.json", "{}")
    (tmp_path / "a" / "results" / "summary.csv").unlink()
    found = compare_trees(tmp_path / "a", tmp_path / "b")
    verdicts = {d.path: d.verdict for d in found.differences}
    assert verdicts == {
        "results/tables/overlap.md": "different",  # byte for byte
        "results/emb.npy": "tolerated",
        "results/new.json": "different",
        "results/summary.csv": "different",
    }
    assert "only in the second tree" in next(
        d.detail for d in found.differences if d.path == "results/new.json"
    )


def test_a_digest_of_an_unchanged_file_is_a_real_difference(tmp_path):
    build(tmp_path / "a")
    build(tmp_path / "b")
    record = tmp_path / "b" / "results/metrics/m/overlap.json"
    data = json.loads(record.read_text())
    data["provenance"]["inputs"]["results/overlap/detect.json"] = "0" * 64
    record.write_text(json.dumps(data, indent=2))
    (real,) = [d for d in compare_trees(tmp_path / "a", tmp_path / "b").real
               if d.path.endswith("overlap.json")]  # fmt: skip
    assert "detect.json is the same in both trees" in real.detail


def test_against_a_commit(tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = tmp_path / "repo"
    build(repo)

    def git(*args):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "demo")
    build(repo, similarity=0.969257)  # a rebuild on another CPU
    assert main(["compare-results", "--against", "HEAD", "--repo", str(repo)]) == 0
    assert "tolerated  results/overlap/detect.json" in capsys.readouterr().out
    build(repo, top1=40.0)
    with pytest.raises(SystemExit):
        main(["compare-results", "--against", "HEAD", "--repo", str(repo)])
    assert "DIFFERENT  results/metrics/m/overlap.json: metrics.top1" in capsys.readouterr().out
