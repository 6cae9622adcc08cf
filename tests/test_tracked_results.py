"""Every file git tracks under results/ is an output of the current pipeline: a record left behind
by a model or variant that was removed from params.yaml is not shipped as if it were a result."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

import pytest

from conftest import REPO


def _pipeline_outputs(repo: Path) -> set[PurePosixPath]:
    from dvc.repo import Repo

    with Repo(str(repo)) as dvc_repo:
        return {PurePosixPath(out.def_path) for out in dvc_repo.index.outs}


def _tracked_results(repo: Path) -> list[PurePosixPath]:
    listed = subprocess.run(
        ["git", "ls-files", "results"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    return [PurePosixPath(path) for path in listed]


def _orphans(tracked: list[PurePosixPath], outputs: set[PurePosixPath]) -> list[str]:
    """Tracked files that are no output and lie in no output folder. A `.gitignore` counts when
    it sits in a folder that holds an output (DVC writes one beside its cached outputs) or is the
    one that keeps an output folder's place in git."""
    folders_with_outputs = {parent for out in outputs for parent in out.parents}
    orphans = []
    for path in tracked:
        if path in outputs or any(parent in outputs for parent in path.parents):
            continue
        if path.name == ".gitignore" and path.parent in folders_with_outputs:
            continue
        orphans.append(str(path))
    return orphans


def test_orphans_are_found() -> None:
    outputs = {PurePosixPath("results/a.json"), PurePosixPath("results/figs")}
    tracked = [
        PurePosixPath(p)
        for p in (
            "results/a.json",
            "results/figs/x.png",
            "results/.gitignore",
            "results/old/b.json",
            "results/old/.gitignore",
        )
    ]
    assert _orphans(tracked, outputs) == ["results/old/b.json", "results/old/.gitignore"]


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the project's git checkout")
def test_every_tracked_result_is_a_pipeline_output() -> None:
    orphans = _orphans(_tracked_results(REPO), _pipeline_outputs(REPO))
    assert not orphans, (
        f"{len(orphans)} tracked file(s) under results/ are produced by no stage of dvc.yaml "
        f"(left from a removed model or variant? `git rm` them): {orphans[:20]}"
    )
