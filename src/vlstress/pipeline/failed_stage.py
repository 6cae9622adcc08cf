"""A failed DVC stage leaves its old cached outputs as they were.

`dvc repro` deletes a stage's outputs (all but the `persist` ones, the git-tracked records and
tables) before it runs the stage's command, and leaves them deleted when the command fails: a bad
input found by a step would cost the embeddings, folders or checkpoints of its last good run. So a
step that fails inside `dvc repro` (DVC names the stage in `DVC_STAGE`) puts back each cached
output its stage lost, from DVC's cache as `dvc.lock` last recorded it, through DVC's own
checkout of that output. `dvc checkout` itself cannot run there: `dvc repro`
holds the repository lock until the stage ends. dvc.lock is not touched, so the stage stays
changed and runs again next time. (Snakemake's side: `pipeline.failed_jobs`.)

For Snakemake, which decides from times, an output put back gets an old time: the one
`folder_times` remembered for the same content, else that of the oldest output of the stages
that read it, so they stay done; and nothing is remembered of it until a run makes it again, so
its time is not raised to its step's newer (failing) inputs.

A step killed outright (out of memory, SIGKILL) cannot do this; `dvc checkout` afterwards can.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def stage_of_this_step(
    environ: Mapping[str, str] = os.environ, cwd: str | None = None
) -> tuple[str, str] | None:
    """(project root, stage) when this process is the command of a stage `dvc repro` runs. The
    root is the working directory DVC runs the command in (every stage of the project's one
    dvc.yaml runs at its root), not `DVC_ROOT`: inside `dvc exp run --temp` or a queued
    experiment that names the user's own checkout, not the experiment's copy."""
    stage = environ.get("DVC_STAGE")
    root = os.getcwd() if cwd is None else cwd
    if not stage or not os.path.isdir(os.path.join(root, ".dvc")):
        return None
    return root, stage


def put_back(root: str, stage_name: str) -> list[str]:
    """Check out from DVC's cache every cached output of `stage_name` that is missing now;
    returns them. Reports on stderr what came back and what could not."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    repo = Repo(root)
    try:
        stage = next((s for s in repo.index.stages if s.addressing == stage_name), None)
        if stage is None:
            return []
        back: list[str] = []
        missing: list[str] = []
        for out in stage.outs:
            if not out.use_cache or out.persist or out.exists or not out.hash_info:
                continue  # kept in place, never cached, or never recorded
            path = os.path.relpath(out.fs_path, root)
            try:
                out.checkout()
            except DvcException:
                missing.append(path)
                continue
            (back if out.exists else missing).append(path)
        if back:
            _old_times(repo, stage, back)
    finally:
        repo.close()
    if back:
        print(
            f"vlstress: put back {len(back)} output(s) of the failed stage {stage_name} from the "
            "DVC cache: " + ", ".join(back),
            file=sys.stderr,
        )
    if missing:
        print(
            f"vlstress: not in the DVC cache, so not put back: {', '.join(missing)}",
            file=sys.stderr,
        )
    return back


def _old_times(repo, stage, back: list[str]) -> None:
    from vlstress.pipeline import folder_times

    readers = [
        os.path.relpath(out.fs_path, repo.root_dir)
        for reader in repo.index.graph.predecessors(stage)
        for out in reader.outs
    ]
    times = [folder_times.time_of(path) for path in readers if os.path.exists(path)]
    for path in back:
        ns = folder_times.remembered_time(path)
        if ns is None and times:
            ns = min(times)
        if ns is not None:
            folder_times.set_time(path, ns)
    folder_times.forget(back)
