"""`dvc commit --force` of many stages with one write of each lock file.

`dvc commit a b c` commits its targets one at a time, and each one rewrites the whole dvc.lock
(a round trip through ruamel of a file of megabytes: seconds per stage on the demo, so minutes
for the end-of-run commit of a Snakemake run of a few dozen jobs). Committing the same stages
through DVC's own stage methods and writing each lock file once (`dump_stages`, what `dvc commit`
without targets does) gives the same dvc.lock.

Run as `python -m vlstress.pipeline.dvc_commit STAGE...` (the Snakemake front end's end-of-run
commit), in the project's root.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def commit(names: Sequence[str]) -> None:
    """Save and commit the named stages (their addresses, as `dvc stage list` gives them) and
    write their lock entries, one write per lock file. An unknown name is an error naming it."""
    from dvc.repo import Repo

    from vlstress.errors import VlstressError

    with Repo(".") as repo, repo.lock:
        by_name = {stage.addressing: stage for stage in repo.index.stages}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise VlstressError(f"no such DVC stage(s): {', '.join(unknown)}")
        groups: dict[str, list] = {}
        for name in dict.fromkeys(names):
            stage = by_name[name]
            stage.save()
            stage.commit(relink=True)
            groups.setdefault(stage.dvcfile.path, []).append(stage)
        for stages in groups.values():
            stages[0].dvcfile.dump_stages(stages, update_pipeline=False)


def main(argv: Sequence[str] | None = None) -> int:
    from vlstress.errors import VlstressError

    names = list(sys.argv[1:] if argv is None else argv)
    try:
        commit(names)
    except VlstressError as exc:
        print(f"vlstress: dvc commit: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
