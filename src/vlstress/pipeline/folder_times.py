"""A folder output, or a file output over 1 MB, keeps its time while its bytes stay the same
(Snakemake, after a forced rerun).

Snakemake decides from times: a folder output (a test set, a stylized copy) is as new as its
`.snakemake_timestamp`, or the folder itself, and a file as its mtime. For a file up to
`CHECKSUM_LIMIT` Snakemake itself looks past a newer time to the bytes it recorded (its
`--max-checksum-file-size`, 1 MB); a larger one (embeddings, a model's weights) is handled here
as a folder is. A step forced to run again (`snakemake --forcerun X
--until X`, `dvc repro -f -s X`) writes the same bytes with a new time, and Snakemake then wanted
to rerun every step downstream, while DVC (content hashes) had nothing to do. So both front ends
agree, the time of each folder output is remembered with a digest of its content (each file's
name, size and md5, the md5 cached by size and time: `external`):

- after a Snakemake run (`remember`, its `onsuccess`), a folder whose content is the one
  remembered gets its remembered time back (never older than the newest input of its step, or the
  step would run again and again); a new content is remembered with its new time;
- when Snakemake reads the Snakefile (`restore`), a folder rewritten meanwhile (by DVC) with the
  bytes remembered gets its remembered time back too. A folder whose own time and timestamp are
  those remembered is not read at all.

The record lives under .snakemake/ (this checkout's, as Snakemake's own metadata).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vlstress.io import write_text
from vlstress.pipeline import external

RECORD = Path(".snakemake/vlstress/folder-times.json")
CHECKSUM_LIMIT = 1_000_000  # bytes: Snakemake's own max_checksum_file_size
TIMESTAMP = ".snakemake_timestamp"  # Snakemake's marker of a folder output's time


def _load() -> dict[str, dict[str, Any]]:
    try:
        found = json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or damaged: rebuilt
        return {}
    return found if isinstance(found, dict) else {}


def _save(record: dict[str, dict[str, Any]]) -> None:
    try:
        write_text(RECORD, json.dumps(record, sort_keys=True))
    except OSError:  # a read-only checkout: nothing remembered
        pass


def _ignored(name: str) -> bool:
    """Files that are not the folder's data (as .dvcignore says): Snakemake's marker, the
    .gitignore DVC writes, the temp files of atomic writes."""
    return name in (TIMESTAMP, ".gitignore") or (name.startswith(".") and name.endswith(".tmp"))


def digest(folder: str) -> str:
    """Each file's path below the folder, size and md5: the folder's content."""
    return external.fingerprint([folder], skip=_ignored)


def time_of(path: str) -> int:
    """The time Snakemake reads for a path (ns): a folder's timestamp file, else its own mtime."""
    stamp = os.path.join(path, TIMESTAMP)
    if os.path.isdir(path) and os.path.isfile(stamp):
        return os.stat(stamp).st_mtime_ns
    return os.stat(path).st_mtime_ns


def set_time(folder: str, ns: int) -> None:
    if not os.path.isdir(folder):  # a large file output: its own time
        os.utime(folder, ns=(ns, ns))
        return
    stamp = os.path.join(folder, TIMESTAMP)
    if not os.path.exists(stamp):
        Path(stamp).touch()
    os.utime(stamp, ns=(ns, ns))


def _newest(inputs: Iterable[str]) -> int:
    times = [time_of(path) for path in inputs if os.path.exists(path)]
    return max(times, default=0)


def _settle(folder: str, held: dict[str, Any] | None, inputs: list[str]) -> dict[str, Any]:
    """The folder's entry after comparing it with what was remembered (its time put back when the
    content is the same)."""
    content = digest(folder)
    if held is not None and held.get("digest") == content:
        # never older than an input of its step: Snakemake would run it again, forever
        ns = max(int(held["time"]), _newest(inputs))
        if time_of(folder) != ns:
            set_time(folder, ns)
    else:
        ns = time_of(folder)
    return {
        "digest": content,
        "time": ns,
        "inputs": inputs,
        "folder_mtime": os.stat(folder).st_mtime_ns,
    }


def _unchanged(folder: str, held: dict[str, Any]) -> bool:
    same_folder = os.stat(folder).st_mtime_ns == held.get("folder_mtime")
    return same_folder and time_of(folder) == held["time"]


def remember(outputs: Iterable[tuple[str, list[str]]]) -> None:
    """After a run: each (folder or large file output, the inputs of its step) of the run's
    jobs."""
    record, changed = _load(), False
    for folder, inputs in outputs:
        folder = os.path.normpath(folder)
        if not _kept(folder):
            continue
        held = record.get(folder)
        if held is not None and _unchanged(folder, held) and held.get("inputs") == inputs:
            continue
        record[folder] = _settle(folder, held, inputs)
        changed = True
    if changed:
        _save(record)


def restore() -> None:
    """Before planning: folders rewritten since the last run with the same bytes get their time
    back."""
    record, changed = _load(), False
    for folder, held in list(record.items()):
        if not _kept(folder):
            continue
        if _unchanged(folder, held):
            continue
        record[folder] = _settle(folder, held, list(held.get("inputs", [])))
        changed = True
    if changed:
        _save(record)


def forget(paths: Iterable[str]) -> None:
    """Outputs of a failed step put back as they were: their old time must stand against inputs
    that may now be newer (the step is to run again), so nothing is remembered of them until a run
    makes them again."""
    record = _load()
    gone = [os.path.normpath(path) for path in paths if os.path.normpath(path) in record]
    for path in gone:
        del record[path]
    if gone:
        _save(record)


def _kept(path: str) -> bool:
    """A folder, or a file larger than Snakemake checksums itself."""
    if os.path.isdir(path):
        return True
    return os.path.isfile(path) and os.path.getsize(path) > CHECKSUM_LIMIT


def job_folders(workflow) -> list[tuple[str, list[str]]]:
    """(folder or large file output, inputs of its job) of every job of a Snakemake run's DAG."""
    found = []
    for job in workflow.dag.jobs:
        inputs = sorted(os.path.normpath(str(path)) for path in job.input)
        for path in job.output:
            if getattr(path, "is_directory", False) or _kept(str(path)):
                found.append((str(path), inputs))
    return found


def remembered_time(path: str) -> int | None:
    """The time remembered for an output whose content is still the one remembered, else None."""
    held = _load().get(os.path.normpath(path))
    if held is None or not _kept(path) or held.get("digest") != digest(path):
        return None
    return int(held["time"])
