"""`vlstress exp run`: `dvc exp run` whose `-S` overrides may switch suites.

dvc.yaml lists only the stages of the suites that are on, and DVC's templating cannot make stages
vanish on a param (`foreach`/`matrix` take a list or a dict, `${...}` is a plain key path, with no
conditionals), so `dvc exp run -S suites.ood=false` stops at `check_params` (which puts the
switch back: `undo_switch`). Here each combination of the overrides is applied to params.yaml with
DVC's own Hydra helpers, checked, and dvc.yaml rendered for it; then `dvc exp run` runs with the
other arguments unchanged. A queued (`--queue`) or temporary (`--temp`, `--dry`) experiment leaves
the workspace as it was, as DVC's own `-S` does; one run in the workspace leaves its params and
dvc.yaml applied, as DVC does.
"""

from __future__ import annotations

import contextlib
import io
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vlstress.errors import VlstressError

PARAMS = Path("params.yaml")
SET_PARAM = ("-S", "--set-param")
NAME = ("-n", "--name")


@dataclass(frozen=True)
class Request:
    """What `vlstress exp run ARGS` asks for."""

    combinations: list[list[str]]  # the params.yaml overrides of each experiment (--run-all: none)
    passthrough: list[str]  # the arguments for `dvc exp run`, without -S
    name: str | None  # -n NAME; a sweep names its experiments NAME-1, NAME-2, ... as DVC does
    sweep: bool
    restore: bool  # the experiment runs outside the workspace: put its files back after each


def _dvc_exp_run_args(args: list[str]) -> dict:
    """`dvc exp run ARGS` parsed by DVC's own parser (its options, as a dict)."""
    from dvc.cli import DvcParserError, parse_args

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # DVC prints its whole help on an error
            parsed = vars(parse_args(["exp", "run", *args]))
    except DvcParserError:
        raise VlstressError(
            f"`dvc exp run` refuses {shlex.join(args)} (see `dvc exp run --help`)"
        ) from None
    return {key: value for key, value in parsed.items() if key not in ("func", "parser")}


def _without(args: list[str], options: tuple[str, str], key: str) -> list[str]:
    """`args` without one option and its values (`-S V`, `-SV`, `--set-param V`,
    `--set-param=V`), checked with DVC's parser: the rest means what it meant."""
    short, long = options
    kept, skip = [], False
    for index, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            kept += args[index:]
            break
        elif arg in options:
            skip = True
        elif not (arg.startswith(long + "=") or (arg.startswith(short) and len(arg) > 2)):
            kept.append(arg)
    before, after = _dvc_exp_run_args(args), _dvc_exp_run_args(kept)
    if after[key] not in (None, []) or {**after, key: before[key]} != before:
        raise VlstressError(
            f"write {short} as its own argument ({short} VALUE), not joined to other short options"
        )
    return kept


def parse(args: list[str]) -> Request:
    """Split the arguments into params.yaml overrides and the rest (checked with DVC's parser)."""
    from dvc.exceptions import InvalidArgumentError
    from dvc.utils.cli_parse import to_path_overrides
    from dvc.utils.hydra import get_hydra_sweeps, to_hydra_overrides
    from hydra.errors import OverrideParseException

    options = _dvc_exp_run_args(args)
    passthrough = _without(args, SET_PARAM, "set_param")
    overrides = to_path_overrides(options["set_param"])
    others = sorted(path for path in overrides if Path(path) != PARAMS)
    if others:
        raise VlstressError(
            f"-S overrides params.yaml only (dvc.yaml is rendered from it); not {', '.join(others)}"
        )
    if options["run_all"]:  # runs the queue: nothing of the workspace to apply
        if overrides:
            raise VlstressError("-S has no effect with --run-all: queue the experiments first")
        return Request([], passthrough, options["name"], sweep=False, restore=False)
    found = [value for values in overrides.values() for value in values]
    try:
        sweep = any(override.is_sweep_override() for override in to_hydra_overrides(found))
        combinations = get_hydra_sweeps({str(PARAMS): found}) if sweep else [{str(PARAMS): found}]
    except (InvalidArgumentError, OverrideParseException) as exc:
        raise VlstressError(f"-S {shlex.join(found)}: {exc}") from None
    restore = bool(options["queue"] or options["tmp_dir"] or options["dry"])
    if sweep and not options["queue"]:
        raise VlstressError("sweep overrides can't be used without `--queue` (as in DVC)")
    return Request(
        combinations=[list(combination.get(str(PARAMS), [])) for combination in combinations],
        passthrough=_without(passthrough, NAME, "name") if sweep else passthrough,
        name=options["name"],
        sweep=sweep,
        restore=restore,
    )


def _load(overrides: list[str], params_file: Path) -> dict:
    """Apply the overrides to `params_file` (DVC's Hydra helper) and check the params."""
    from dvc.exceptions import InvalidArgumentError
    from dvc.utils.hydra import apply_overrides

    from vlstress import params as params_module
    from vlstress import params_check

    if overrides:
        try:
            apply_overrides(params_file, overrides)
        except InvalidArgumentError as exc:
            raise VlstressError(f"-S {shlex.join(overrides)}: {exc.__cause__ or exc}") from None
    where = f"params.yaml with -S {shlex.join(overrides)}" if overrides else "params.yaml"
    return params_check.validate(params_module.load([params_file]), where)


def apply(overrides: list[str], dvc_yaml: Path) -> dict:
    """Apply the overrides to params.yaml, check the params and render dvc.yaml for them."""
    from vlstress.pipeline import rendered

    params = _load(overrides, PARAMS)
    rendered.write(params, dvc_yaml)
    return params


def check(overrides: list[str], dvc_yaml: Path) -> None:
    """`apply` on a copy of params.yaml, the rendering kept in memory: no workspace file changes."""
    from vlstress.pipeline import rendered

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / PARAMS.name
        copy.write_bytes(PARAMS.read_bytes())
        rendered.texts(_load(overrides, copy), dvc_yaml)


EXPERIMENT_ENV = "DVC_EXP_NAME"  # set by `dvc exp run` for the commands of its stages


def undo_switch(params: dict, params_file: Path, dvc_yaml: Path, stamp: Path) -> str | None:
    """In a plain `dvc exp run -S suites.X=...` (the gate runs inside `dvc exp run`, and params
    differ from dvc.yaml only in the suites that are on), put params_file back and the gate's stamp
    too (DVC deleted it before the gate ran; its bytes are fixed), so that no `code_*` stage looks
    changed. params_file gets its committed bytes back when they plus the switch are what DVC
    wrote (its own -S was the whole change); else the switch alone is undone, with DVC's override
    helper. What was done, for the error message (None: nothing)."""
    import os
    import tempfile

    from vlstress.io import atomic_path, write_text
    from vlstress.pipeline import GATE_STAMP
    from vlstress.pipeline.rendered import suites_switched

    if not os.environ.get(EXPERIMENT_ENV) or not dvc_yaml.is_file():
        return None
    switched = suites_switched(params, dvc_yaml.read_text(encoding="utf-8"))
    if not switched:
        return None
    try:
        from dvc.utils.hydra import apply_overrides
    except ImportError:
        return None
    back = [f"{s.partition('=')[0]}={str(s.endswith('=false')).lower()}" for s in switched]
    now = params_file.read_bytes()
    committed = subprocess.run(
        ["git", "show", f"HEAD:./{params_file.as_posix()}"], capture_output=True, check=False
    ).stdout
    done = (
        f"{shlex.join(switched)} undone in {params_file} (any other -S stays applied, as DVC "
        "leaves it)"
    )
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / params_file.name
        copy.write_bytes(committed)
        try:
            apply_overrides(copy, switched)
            same = bool(committed) and copy.read_bytes() == now
        except Exception:  # not a committed params file DVC reads: undo the switch alone
            same = False
    if same:
        with atomic_path(params_file) as tmp:
            tmp.write_bytes(committed)
        done = f"{params_file} is back as committed"
    else:
        try:
            apply_overrides(params_file, back)
        except Exception:  # the switch stays, as DVC leaves it
            return None
    lock = dvc_yaml.with_name("dvc.lock")
    if lock.is_file() and str(stamp) in lock.read_text(encoding="utf-8"):
        write_text(stamp, GATE_STAMP)
    return done


class Snapshot:
    """The bytes of files (or their absence), to put back exactly."""

    def __init__(self, paths: list[Path]):
        self.saved = {path: path.read_bytes() if path.is_file() else None for path in paths}

    def restore(self) -> None:
        for path, data in self.saved.items():
            if data is None:
                path.unlink(missing_ok=True)
            elif not path.is_file() or path.read_bytes() != data:
                path.write_bytes(data)


def _dvc_exp_run(command: list[str]) -> int:
    return subprocess.call([sys.executable, "-m", "dvc", "exp", "run", *command])


def run(args: list[str]) -> None:
    """`vlstress exp run ARGS`: one `dvc exp run` per combination of the -S overrides."""
    from vlstress.params import suites_on
    from vlstress.pipeline import rendered

    dvc_yaml = rendered.DVC_YAML
    request = parse(args)
    if request.combinations and not PARAMS.is_file():
        raise VlstressError("no params.yaml here: run `vlstress exp run` in the repository root")
    for combination in request.combinations:  # all of them are valid before any is queued
        check(combination, dvc_yaml)
    snapshot = Snapshot([PARAMS, dvc_yaml, rendered.SCHEMA])
    # (overrides, `dvc exp run` arguments); --run-all runs the queue with no overrides to apply
    runs: list[tuple[list[str] | None, list[str]]] = []
    for index, combination in enumerate(request.combinations, 1):
        name = ["--name", f"{request.name}-{index}"] if request.sweep and request.name else []
        runs.append((combination, [*name, *request.passthrough]))
    if not request.combinations:
        runs.append((None, list(request.passthrough)))
    for overrides, command in runs:
        if overrides is not None:
            try:
                params = apply(overrides, dvc_yaml)
            except BaseException:
                snapshot.restore()
                raise
            on = ", ".join(sorted(suites_on(params))) or "none"
            print(
                f"vlstress exp run: {shlex.join(overrides) or 'params.yaml as it is'} "
                f"(suites on: {on}): dvc exp run {shlex.join(command)}",
                file=sys.stderr,
                flush=True,
            )
        try:
            code = _dvc_exp_run(command)
        finally:
            if request.restore:
                snapshot.restore()
        if code != 0:
            raise VlstressError(f"`dvc exp run {shlex.join(command)}` failed (exit {code})")
