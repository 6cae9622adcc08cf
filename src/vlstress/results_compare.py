"""Two results trees compared within stated tolerances (`vlstress compare-results`): a rebuilt
`results/` (and `dvc.lock`) against the committed one or another build, every difference named.

Each file present in both trees is read by its kind:

- `.json`, `.yaml`, `.yml`, `.lock` (dvc.lock): compared value by value, at every key and index;
- `.csv`: cell by cell (a cell that reads as a number on both sides is a number);
- `.npy`: shape, dtype, then element by element;
- anything else (Markdown, LaTeX, figures, code stamps): byte for byte.

Two numbers agree when `|a - b| <= atol + rtol * max(|a|, |b|)` (both integers: only when equal,
since they count; booleans: only when equal). The defaults, rtol = atol = 1e-5, are what float32
arithmetic can promise across CPUs: a float32 carries about 7 significant digits (2^-24 relative)
and a sum of a few hundred terms in another order (another CPU's kernels) moves by some 1e-7 to
1e-6, and values written rounded to 5 decimals (the overlap suite's cosines) may then differ in
their last place, 1e-5. A number that differs by more, a string, a boolean or a structure that
differs, a file only one tree has, is a real difference.

A digest (a string of 32, 40 or 64 hexadecimal digits, an md5 with DVC's `.dir`, or the `size`
beside one in dvc.lock) that differs follows from the number differences when the file it names
(the key it is stored under, as a record's `provenance.inputs`, or the `path` beside it, as in
dvc.lock) differs within tolerance only, or holds such files (a folder); it is a real difference
when that file is the same in both trees or differs for real. A digest of a file outside the
trees is accepted as following only when the trees have tolerated differences, and the report
says it could not be checked.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError

RTOL = 1e-5
ATOL = 1e-5
STRUCTURED = {".json", ".yaml", ".yml", ".lock"}
HASH = re.compile(r"^(?:[0-9a-f]{32}(?:\.dir)?|[0-9a-f]{40}|[0-9a-f]{64})$")

# the verdict on one difference, and on a file (its worst difference)
SAME, TOLERATED, FOLLOWS, DIFFERENT = "same", "tolerated", "follows", "different"
_RANK = {SAME: 0, TOLERATED: 1, FOLLOWS: 1, DIFFERENT: 2}


@dataclass
class Difference:
    """One difference: in `path` (relative to the trees), at `where` (keys and indices; '' for the
    whole file), its verdict and what was found."""

    path: str
    where: str
    verdict: str
    detail: str
    names: str | None = None  # a digest's file, relative to the trees (None: not a digest)

    def line(self) -> str:
        label = {TOLERATED: "tolerated", FOLLOWS: "follows", DIFFERENT: "DIFFERENT"}[self.verdict]
        at = f": {self.where}" if self.where else ""
        return f"{label:<10} {self.path}{at}: {self.detail}"


@dataclass
class Comparison:
    n_files: int
    differences: list[Difference]

    @property
    def real(self) -> list[Difference]:
        return [d for d in self.differences if d.verdict == DIFFERENT]

    def report(self) -> str:
        by_file: dict[str, str] = {}
        for d in self.differences:
            if _RANK[d.verdict] >= _RANK[by_file.get(d.path, SAME)]:
                by_file[d.path] = d.verdict
        counts = {v: sum(1 for s in by_file.values() if s == v) for v in (TOLERATED, FOLLOWS)}
        lines = [d.line() for d in self.differences]
        lines.append(
            f"{self.n_files} files: {self.n_files - len(by_file)} identical, "
            f"{counts[TOLERATED] + counts[FOLLOWS]} within tolerance, "
            f"{sum(1 for s in by_file.values() if s == DIFFERENT)} different "
            f"({len(self.real)} real differences)"
        )
        return "\n".join(lines)


def close(a: float, b: float, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Whether two numbers agree within the tolerance (symmetric in a and b)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def compare_trees(
    a: Path, b: Path, files: list[str] | None = None, rtol: float = RTOL, atol: float = ATOL
) -> Comparison:
    """Every difference between the files of folders `a` and `b` (or the `files` given, relative
    paths), digests resolved against the files they name."""
    a, b = Path(a), Path(b)
    if files is None:
        files = sorted(set(_walk(a)) | set(_walk(b)))
    found: list[Difference] = []
    for rel in files:
        pa, pb = a / rel, b / rel
        if not pa.is_file() or not pb.is_file():
            side = "the first" if pa.is_file() else "the second"
            found.append(Difference(rel, "", DIFFERENT, f"only in {side} tree"))
            continue
        found += _compare_file(rel, pa, pb, rtol, atol)
    _resolve_digests(found, files, a.resolve().name)
    return Comparison(len(files), found)


def against(
    rev: str, paths: list[str], repo: Path, rtol: float = RTOL, atol: float = ATOL
) -> Comparison:
    """The working tree's files under `paths` (as git tracks them at `rev` or in the index)
    against their committed version at `rev`."""
    import tempfile

    listed = _git(repo, "ls-tree", "-r", "--name-only", rev, "--", *paths).splitlines()
    listed += _git(repo, "ls-files", "--", *paths).splitlines()
    files = sorted(set(filter(None, listed)))
    if not files:
        raise VlstressError(f"git tracks no file under {' '.join(paths)} (at {rev} or now)")
    with tempfile.TemporaryDirectory(prefix="vlstress-compare-") as tmp:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", rev, "--", *paths],
            cwd=repo, capture_output=True, check=False,
        )  # fmt: skip
        if archive.returncode != 0 and not archive.stdout:
            # a path absent at rev: archive what is there, one path at a time
            archive = _archive_each(repo, rev, paths)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
                tar.extractall(tmp, filter="data")
            else:  # pragma: no cover
                tar.extractall(tmp)  # noqa: S202 (git's own archive of this repository)
        return compare_trees(Path(tmp), repo, files, rtol, atol)


def _archive_each(repo: Path, rev: str, paths: list[str]) -> subprocess.CompletedProcess:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as out:
        for path in paths:
            one = subprocess.run(
                ["git", "archive", "--format=tar", rev, "--", path],
                cwd=repo, capture_output=True, check=False,
            )  # fmt: skip
            if one.returncode != 0:
                continue
            with tarfile.open(fileobj=io.BytesIO(one.stdout)) as tar:
                for member in tar.getmembers():
                    out.addfile(member, tar.extractfile(member) if member.isfile() else None)
    return subprocess.CompletedProcess([], 0, buffer.getvalue(), b"")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise VlstressError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _walk(root: Path) -> Iterator[str]:
    if root.is_file():
        raise VlstressError(f"{root} is a file: compare two folders")
    if not root.is_dir():
        raise VlstressError(f"no such folder: {root}")
    for path in root.rglob("*"):
        if path.is_file():
            yield path.relative_to(root).as_posix()


# ----------------------------------------------------------------------------- one file


def _compare_file(rel: str, pa: Path, pb: Path, rtol: float, atol: float) -> list[Difference]:
    da, db = pa.read_bytes(), pb.read_bytes()
    if da == db:
        return []
    suffix = pa.suffix.lower()
    try:
        if suffix in STRUCTURED:
            va, vb = _structured(da, suffix), _structured(db, suffix)
            return list(_values(rel, "", va, vb, rtol, atol, None))
        if suffix == ".csv":
            return _csv(rel, da, db, rtol, atol)
        if suffix == ".npy":
            return _npy(rel, da, db, rtol, atol)
    except (ValueError, UnicodeDecodeError):  # not what its name says: compared as bytes
        pass
    return [Difference(rel, "", DIFFERENT, f"the bytes differ ({len(da)} vs {len(db)} bytes)")]


def _structured(data: bytes, suffix: str) -> Any:
    if suffix == ".json":
        return json.loads(data)
    import yaml

    try:
        return yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _values(
    rel: str, where: str, a: Any, b: Any, rtol: float, atol: float, owner: dict | None
) -> Iterator[Difference]:
    """The differences between two parsed values (`owner`: the mapping holding them)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            at = f"{where}.{key}" if where else str(key)
            if key not in a or key not in b:
                yield Difference(
                    rel, at, DIFFERENT, f"only in the {'second' if key in b else 'first'}"
                )
            else:
                yield from _values(rel, at, a[key], b[key], rtol, atol, {"": key, **a})
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield Difference(rel, where, DIFFERENT, f"{len(a)} items vs {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _values(rel, f"{where}[{i}]", x, y, rtol, atol, None)
        return
    if a == b and type(a) is type(b):
        return
    if _number(a) and _number(b):
        exact = isinstance(a, int) and isinstance(b, int)
        if not exact and close(float(a), float(b), rtol, atol):
            yield Difference(rel, where, TOLERATED, f"{a!r} vs {b!r} (|diff| {abs(a - b):.1e})")
            return
        if exact and owner is not None and where.rsplit(".", 1)[-1] == "size" and "path" in owner:
            yield Difference(rel, where, DIFFERENT, f"{a} vs {b}", names=str(owner["path"]))
            return
        yield Difference(rel, where, DIFFERENT, f"{a!r} vs {b!r}")
        return
    if isinstance(a, str) and isinstance(b, str) and HASH.match(a) and HASH.match(b):
        named = None
        if owner is not None:
            named = str(owner["path"]) if "path" in owner else str(owner[""])
        yield Difference(rel, where, DIFFERENT, f"digest {a[:12]}.. vs {b[:12]}..", names=named)
        return
    yield Difference(rel, where, DIFFERENT, f"{_short(a)} vs {_short(b)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _csv(rel: str, da: bytes, db: bytes, rtol: float, atol: float) -> list[Difference]:
    ra = list(csv.reader(io.StringIO(da.decode())))
    rb = list(csv.reader(io.StringIO(db.decode())))
    if len(ra) != len(rb):
        return [Difference(rel, "", DIFFERENT, f"{len(ra)} rows vs {len(rb)}")]
    header = ra[0] if ra else []
    found = []
    for i, (x, y) in enumerate(zip(ra, rb)):
        if len(x) != len(y):
            found.append(Difference(rel, f"row {i}", DIFFERENT, f"{len(x)} cells vs {len(y)}"))
            continue
        for j, (u, v) in enumerate(zip(x, y)):
            if u == v:
                continue
            column = header[j] if i and j < len(header) else f"column {j}"
            at = f"row {i}, {column}"
            fu, fv = _float(u), _float(v)
            if fu is not None and fv is not None and close(fu, fv, rtol, atol):
                found.append(Difference(rel, at, TOLERATED, f"{u} vs {v}"))
            elif HASH.match(u) and HASH.match(v):
                found.append(Difference(rel, at, DIFFERENT, f"digest {u[:12]}.. vs {v[:12]}.."))
            else:
                found.append(Difference(rel, at, DIFFERENT, f"{_short(u)} vs {_short(v)}"))
    return found


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _npy(rel: str, da: bytes, db: bytes, rtol: float, atol: float) -> list[Difference]:
    import numpy as np

    xa = np.load(io.BytesIO(da), allow_pickle=False)
    xb = np.load(io.BytesIO(db), allow_pickle=False)
    if xa.shape != xb.shape or xa.dtype != xb.dtype:
        detail = f"{xa.dtype}{list(xa.shape)} vs {xb.dtype}{list(xb.shape)}"
        return [Difference(rel, "", DIFFERENT, detail)]
    if xa.dtype.kind != "f":
        unequal = int(np.count_nonzero(xa != xb))
        return [Difference(rel, "", DIFFERENT, f"{unequal} elements differ")] if unequal else []
    fa, fb = xa.astype(np.float64), xb.astype(np.float64)
    gap = np.abs(fa - fb)
    bad = ~(
        (gap <= atol + rtol * np.maximum(np.abs(fa), np.abs(fb))) | (np.isnan(fa) & np.isnan(fb))
    )
    n, worst = int(np.count_nonzero(bad)), float(np.nanmax(gap)) if gap.size else 0.0
    if n:
        return [Difference(rel, "", DIFFERENT, f"{n} of {xa.size} elements beyond tolerance")]
    return [
        Difference(rel, "", TOLERATED, f"elements within tolerance (largest |diff| {worst:.1e})")
    ]


# ----------------------------------------------------------------------------- digests


def _resolve_digests(found: list[Difference], files: list[str], root_name: str) -> None:
    """A digest's verdict from the file (or folder) it names, repeated until nothing changes: a
    record's input digest follows from a file whose own digests follow."""
    digests = [d for d in found if d.names is not None]
    if not digests:
        return
    known = set(files)
    tolerated_somewhere = any(d.verdict == TOLERATED for d in found)

    def status(path: str) -> str:
        verdicts = [d.verdict for d in found if d.path == path]
        return max(verdicts, key=_RANK.__getitem__, default=SAME)

    def target(named: str) -> tuple[str, list[str]]:
        """(the name as the trees know it, the files it covers: itself or a folder's)."""
        name = named.strip("/")
        for candidate in (name, name.split("/", 1)[1] if name.startswith(root_name + "/") else ""):
            if candidate in known:
                return candidate, [candidate]
            inside = [f for f in known if candidate and f.startswith(candidate + "/")]
            if inside:
                return candidate, inside
        return name, []

    for d in digests:
        d.verdict, d.detail = DIFFERENT, d.detail.split(" (")[0]
    for _ in range(len(digests) + 1):
        changed = False
        for d in digests:
            name, covered = target(d.names or "")
            statuses = [status(f) for f in covered if f != d.path]
            base = d.detail.split(" (")[0]
            if not covered:
                verdict = FOLLOWS if tolerated_somewhere else DIFFERENT
                why = (
                    f"{name} is not in the compared trees; "
                    + ("may follow from the tolerated differences" if tolerated_somewhere else
                       "and nothing else differs")
                )  # fmt: skip
            elif any(s == DIFFERENT for s in statuses):
                verdict, why = FOLLOWS, f"follows from the real difference in {name}"
            elif any(s in (TOLERATED, FOLLOWS) for s in statuses):
                verdict, why = FOLLOWS, f"{name} differs within tolerance"
            else:
                verdict, why = DIFFERENT, f"{name} is the same in both trees"
            if (verdict, f"{base} ({why})") != (d.verdict, d.detail):
                d.verdict, d.detail, changed = verdict, f"{base} ({why})", True
        if not changed:
            break
