"""The code a step depends on, found from its imports instead of listed by hand.

Starting from the command module of a `vlstress <subcommand>`, follow every import of a
`vlstress` module (top-level or inside functions, relative or absolute, and module
names written as strings in registries such as `caption_data.kinds.KINDS`) and every package
data file or folder named as `"data/<path>"` (e.g. `"data/published/testbed_standard.csv"`).
The result is the set of files whose edit may change the step's output, so both front ends
rerun exactly the steps that use an edited file.
`cli.py` only dispatches and is left out (adding a subcommand reruns nothing).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
from functools import cache
from pathlib import Path

PACKAGE = "vlstress"
MODULE_STRING = re.compile(r"^vlstress(\.[A-Za-z_][A-Za-z0-9_]*)+$")
DATA_STRING = re.compile(r"^data/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")
NOT_DEPENDENCIES = {"vlstress.cli", "vlstress.__main__"}
# A suite's declarations (`vlstress/suites/<suite>/suite.py`) name the modules of its commands,
# checks, set providers and figures as strings: those are other steps' code, not code a step that
# reads the declarations runs, so module names written there are not followed (imports are).
DECLARATIONS = re.compile(r"^suites/[a-z0-9_]+/suite\.py$")


def package_root() -> Path:
    return Path(__file__).resolve().parent


@cache
def _module_file(module: str, root: Path) -> Path | None:
    parts = module.split(".")[1:]
    base = root.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve_relative(current: str, is_package: bool, level: int, module: str | None) -> str:
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _scan(source: str, current: str, is_package: bool) -> tuple[list[str], list[str]]:
    """(module names, `data/...` strings) one source file writes: its imports (top-level or inside
    functions, relative ones resolved) and its string constants that look like either."""
    modules: set[str] = set()
    strings: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _resolve_relative(current, is_package, node.level, node.module)
            modules.add(base)
            # `from . import x` may name a module
            modules.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if MODULE_STRING.match(node.value) or DATA_STRING.match(node.value):
                strings.add(node.value)
    return sorted(modules), sorted(strings)


# Parsing the package's ~500 files is most of what planning a workflow costs (every Snakemake start,
# every gate check): each file's scan is kept in a cache file, keyed by the file's bytes.
SCAN_VERSION = 1


def scan_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vlstress" / f"import-scan-v{SCAN_VERSION}.json"


class _ScanCache:
    def __init__(self) -> None:
        self.path = scan_cache_path()
        self.entries: dict[str, list] = {}
        self.added = False
        try:
            found = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = {}  # none yet, or unreadable: every file is scanned again and it is rewritten
        if isinstance(found, dict) and found.get("python") == list(sys.version_info[:2]):
            self.entries = found.get("files", {})

    def scan(self, path: Path, root: Path) -> tuple[list[str], list[str]]:
        data = path.read_bytes()
        key = f"{path.relative_to(root).as_posix()}:{hashlib.sha1(data).hexdigest()}"
        if key not in self.entries:
            current = _module_name(path, root)
            self.entries[key] = list(
                _scan(data.decode("utf-8"), current, path.name == "__init__.py")
            )
            self.added = True
        modules, strings = self.entries[key]
        return modules, strings

    def save(self) -> None:
        if not self.added:
            return
        from vlstress.io import write_text

        try:
            write_text(
                self.path, json.dumps({"python": list(sys.version_info[:2]), "files": self.entries})
            )
        except OSError:
            pass  # a read-only home: the next process scans again, with the same result
        self.added = False


@cache
def _scans() -> _ScanCache:
    return _ScanCache()


@cache
def _direct(path: Path, root: Path) -> tuple[frozenset[str], frozenset[Path]]:
    """(vlstress modules, package data files) that one source file refers to."""
    names, strings = _scans().scan(path, root)
    declaration = bool(DECLARATIONS.match(path.relative_to(root).as_posix()))
    modules = set(names)
    data: set[Path] = set()
    for value in strings:
        if MODULE_STRING.match(value):
            if not declaration:
                modules.add(value)
        elif (root / value).is_file():
            data.add(root / value)
        elif (root / value).is_dir():
            # a folder of package data (e.g. the shipped ImageNet class maps): its files
            data.update(p for p in (root / value).iterdir() if p.is_file())
    return frozenset(m for m in modules if m == PACKAGE or m.startswith(PACKAGE + ".")), frozenset(
        data
    )


def dependencies(module: str, root: Path | None = None) -> list[Path]:
    """Every source and data file of the package that `module` reaches, sorted (found once per
    module and process: a render asks for the modules of every stage, most of them shared)."""
    found = list(_reached(module, root or package_root()))
    _scans().save()
    return found


@cache
def _reached(module: str, root: Path) -> tuple[Path, ...]:
    seen: set[Path] = set()
    todo = [module]
    names: set[str] = set()
    while todo:
        name = todo.pop()
        if name in names or name in NOT_DEPENDENCIES:
            continue
        names.add(name)
        # importing a.b.c runs a/__init__ and a/b/__init__ too
        parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]
        todo.extend(p for p in parents if p not in names)
        path = _module_file(name, root)
        if path is None or path in seen:
            continue
        seen.add(path)
        modules, data = _direct(path, root)
        seen.update(data)
        todo.extend(modules - names)
    return tuple(sorted(seen))


def digest(*modules: str) -> str:
    """sha256 of every source and data file the modules reach (paths and bytes)."""
    root = package_root()
    found = hashlib.sha256()
    for path in sorted({path for module in modules for path in dependencies(module, root)}):
        found.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return found.hexdigest()
