"""A failed Snakemake job leaves its old outputs as they were, and runs again next time.

Snakemake deletes a job's outputs before it runs, and after a failure it still records the job as
finished from the new inputs (`persistence.finished` runs on error too): an old output put back
afterwards would then pass for one made from the inputs that failed, and the next run would not
try again. So, for the jobs about to run, `remember` notes before any job starts:
- each existing `update()` output (a git-tracked record or table, which Snakemake keeps and puts
  back from its own copy): its size, time and md5;
- each other existing output (embeddings, data folders, checkpoints: DVC keeps them in its
  cache): its time (a folder's: Snakemake's `.snakemake_timestamp` inside it) and a file's size;
- the Snakemake metadata record of every output, or that there was none.
`put_back`, after a failed run, does for the outputs of every job that did not finish: the
cached ones come back from the DVC cache as dvc.lock last recorded them (a run of either front end
commits there); outputs whose bytes are those of before get their old time back, so the steps
after them stay done; and every output's metadata is what it was. Old time and old metadata
against the new inputs: the failed job runs again at the next run, and only it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

from vlstress.pipeline import folder_times

STAMP = ".snakemake_timestamp"  # Snakemake's time of a folder output


@dataclass
class Before:
    """What the outputs of the jobs about to run were, before they ran."""

    kept: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # size, ns, md5
    cached: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # ns, a file's size
    metadata: dict[str, Any] = field(default_factory=dict)  # path -> record or None


_BEFORE = Before()


def _md5(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "md5").hexdigest()


def _time_path(path: str) -> str:
    return os.path.join(path, STAMP) if os.path.isdir(path) else path


def _record(workflow, path) -> Any:
    # Snakemake's metadata has no public read/write of a record: its own key and record methods
    persistence = workflow.persistence
    return persistence._read_record(persistence._get_key(path))


def _set_record(workflow, path, record: Any) -> None:
    persistence = workflow.persistence
    key = persistence._get_key(path)
    persistence._clear_cache()
    if record is None:
        persistence._delete_record(key)
    else:
        persistence._write_record(key, record)


def remember(workflow) -> Before:
    """Before the jobs run (`onstart`, the main process of a real run)."""
    from snakemake.io import is_flagged

    before = Before()
    for job in workflow.dag.needrun_jobs():
        for path in job.output:
            name = str(path)
            before.metadata[name] = (path, _record(workflow, path))
            if is_flagged(path, "update") and os.path.isfile(name):
                stat = os.stat(name)
                before.kept[name] = (stat.st_size, stat.st_mtime_ns, _md5(name))
            elif os.path.exists(_time_path(name)):
                stat = os.stat(_time_path(name))
                size = stat.st_size if os.path.isfile(name) else None
                before.cached[name] = (stat.st_mtime_ns, size)
    _BEFORE.kept, _BEFORE.cached, _BEFORE.metadata = before.kept, before.cached, before.metadata
    return before


def _unfinished(workflow) -> set[str]:
    done = {str(path) for job in workflow.dag.finished_jobs for path in job.output}
    return set(_BEFORE.metadata) - done


def _restore_time(path: str, ns: int) -> None:
    if os.path.isdir(path) and not os.path.exists(_time_path(path)):
        # DVC ignores Snakemake's marker (.dvcignore): a folder from its cache comes without it
        open(_time_path(path), "w").close()
    os.utime(_time_path(path), ns=(ns, ns))


def put_back(workflow, checkout=None, files: list[str] | None = None) -> list[str]:
    """After a failed run (`onerror`): the unfinished jobs' outputs as they were. Returns the
    cached outputs put back from the DVC cache."""
    unfinished = _unfinished(workflow)
    for path, (size, ns, digest) in _BEFORE.kept.items():
        # Snakemake copied it back (a new time); the same bytes get the old time
        if path in unfinished and os.path.isfile(path):
            stat = os.stat(path)
            if stat.st_mtime_ns != ns and stat.st_size == size and _md5(path) == digest:
                _restore_time(path, ns)
    back = _from_dvc_cache(
        sorted(p for p in _BEFORE.cached if p in unfinished and not os.path.exists(p)),
        checkout,
        files,
    )
    for path in back:
        time_ns, file_size = _BEFORE.cached[path]
        if file_size is None or os.path.getsize(path) == file_size:
            _restore_time(path, time_ns)
    # their old time, not one raised to their step's newer inputs (`folder_times`)
    folder_times.forget(back)
    for name in unfinished:
        path, record = _BEFORE.metadata[name]
        _set_record(workflow, path, record)
    return back


def _from_dvc_cache(lost: list[str], checkout, files: list[str] | None) -> list[str]:
    """`dvc checkout` of the outputs a failed job lost (only for params.yaml alone, which is what
    dvc.lock describes)."""
    if not lost or files != ["params.yaml"] or not os.path.isdir(".dvc"):
        return []
    if not shutil.which("dvc"):
        print(f"vlstress: dvc not on PATH; {len(lost)} deleted output(s) not put back: {lost}")
        return []
    if checkout is not None:
        checkout.release()  # `dvc checkout` takes the repository lock itself
    found = subprocess.run(
        ["dvc", "checkout", "--quiet", *lost], capture_output=True, text=True, check=False
    )
    back = [path for path in lost if os.path.exists(path)]
    if back:
        print(
            f"vlstress: put back {len(back)} output(s) of the failed step(s) from the DVC cache: "
            + ", ".join(back)
        )
    missing = [path for path in lost if not os.path.exists(path)]
    if missing:
        why = found.stderr.strip().splitlines()[-1] if found.stderr.strip() else ""
        print(
            "vlstress: not in the DVC cache (never recorded), so not put back: "
            + ", ".join(missing)
            + (f" ({why})" if why else "")
        )
    return back
