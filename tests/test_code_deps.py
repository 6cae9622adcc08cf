"""The scan of each source file's imports, kept between processes: keyed by the file's bytes, so an
edit is seen at once, and a broken cache file is only a slower start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlstress import code_deps


def fresh_process() -> None:
    """Forget what this process found (a new Snakemake start)."""
    for cached in (code_deps._scans, code_deps._direct, code_deps._reached, code_deps._module_file):
        cached.cache_clear()


@pytest.fixture()
def package(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "vlstress"
    (root / "data").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from vlstress import b\n")
    (root / "b.py").write_text("TABLE = 'data/table.csv'\n")
    (root / "c.py").write_text("")
    (root / "data/table.csv").write_text("x\n")
    fresh_process()
    yield root
    fresh_process()


def names(root: Path, module: str) -> set[str]:
    return {path.relative_to(root).as_posix() for path in code_deps.dependencies(module, root)}


def test_an_edited_file_is_scanned_again_in_the_next_process(package):
    assert names(package, "vlstress.a") == {"__init__.py", "a.py", "b.py", "data/table.csv"}
    cache = json.loads(code_deps.scan_cache_path().read_text())
    assert {key.split(":")[0] for key in cache["files"]} == {"__init__.py", "a.py", "b.py"}
    (package / "a.py").write_text("def f():\n    from . import c\n")
    fresh_process()
    assert names(package, "vlstress.a") == {"__init__.py", "a.py", "c.py"}
    # the old bytes' entry stays (a branch switched back finds it), the new one is added
    cache = json.loads(code_deps.scan_cache_path().read_text())
    assert sum(key.startswith("a.py:") for key in cache["files"]) == 2


def test_a_data_file_is_looked_up_on_disk_not_in_the_cache(package):
    assert "data/table.csv" in names(package, "vlstress.b")
    (package / "data/table.csv").unlink()
    fresh_process()
    assert names(package, "vlstress.b") == {"__init__.py", "b.py"}


def test_a_broken_cache_file_is_rewritten_with_the_same_answer(package):
    expected = names(package, "vlstress.a")
    code_deps.scan_cache_path().write_text("{not json")
    fresh_process()
    assert names(package, "vlstress.a") == expected
    assert json.loads(code_deps.scan_cache_path().read_text())["files"]


def test_the_cache_gives_what_a_fresh_scan_gives_for_the_whole_package(tmp_path, monkeypatch):
    import pkgutil

    import vlstress

    modules = [info.name for info in pkgutil.walk_packages(vlstress.__path__, "vlstress.")]
    runs = []
    for _ in range(2):  # the first fills an empty cache, the second reads it
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        fresh_process()
        runs.append({module: code_deps.dependencies(module) for module in modules})
    fresh_process()
    assert runs[0] == runs[1] and len(runs[0]) > 300
