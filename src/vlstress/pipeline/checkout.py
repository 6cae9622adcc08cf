"""One run at a time in a checkout, whichever front end starts it.

A Snakemake run (its main process, not a dry run) holds DVC's own repository lock
(`.dvc/tmp/lock`, the lock `dvc repro` takes) for as long as it runs, so a `dvc repro`
started meanwhile stops at once with DVC's "Unable to acquire lock" before touching
anything. A Snakemake run started while DVC works is refused before it builds its DAG:
either the repository lock is held, or DVC's read/write lock on the outputs of the stage
it is running names a live process. Holding the lock also tells a new Snakemake run that
no other one is alive, so locks left in `.snakemake/locks` by a killed run are stale and
are cleared: after `kill -9` the plain rerun just works.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from vlstress.errors import VlstressError
from vlstress.io import process_alive

DVC_LOCK = Path(".dvc/tmp/lock")
DVC_RWLOCK = Path(".dvc/tmp/rwlock")
SNAKEMAKE_LOCKS = Path(".snakemake/locks")


def _holder(path: Path) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        return "another process"
    return f"process {text}" if text.isdigit() else "another process"


def dvc_stage_pids(rwlock: Path = DVC_RWLOCK) -> list[int]:
    """Live processes that DVC's read/write lock lists as using this checkout's outputs."""
    try:
        data = json.loads(rwlock.read_text())
    except (OSError, ValueError):
        return []
    pids = set()
    for mode in ("read", "write"):
        for entry in (data.get(mode) or {}).values():
            for info in entry if isinstance(entry, list) else [entry]:
                if isinstance(info, dict) and isinstance(info.get("pid"), int):
                    pids.add(info["pid"])
    return sorted(pid for pid in pids if pid != os.getpid() and process_alive(pid))


class CheckoutLock:
    """DVC's repository lock, held by this process until `release()` (or exit)."""

    def __init__(self, lock) -> None:
        self._lock = lock

    def release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def claim(root: Path = Path(".")) -> CheckoutLock | None:
    """Take the checkout for a Snakemake run; refuse with a clear message if DVC (or another run)
    has it."""
    if not (root / ".dvc").is_dir():
        return None  # not a DVC project: nothing to share the checkout with
    import zc.lockfile

    pids = dvc_stage_pids(root / DVC_RWLOCK)
    if pids:
        raise VlstressError(
            f"a DVC run (process {', '.join(map(str, pids))}) is running a stage in this checkout; "
            "wait for it to finish, then run Snakemake (nothing was touched)"
        )
    lock_path = root / DVC_LOCK
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        lock = zc.lockfile.LockFile(str(lock_path))
    except zc.lockfile.LockError:
        raise VlstressError(
            f"this checkout is in use: {_holder(lock_path)} holds {DVC_LOCK} (a `dvc repro` or "
            "another Snakemake run); wait for it to finish (nothing was touched)"
        ) from None
    # no other run is alive: locks a killed Snakemake left behind are stale
    shutil.rmtree(root / SNAKEMAKE_LOCKS, ignore_errors=True)
    return CheckoutLock(lock)
