"""The single entry point. Every workflow step is one subcommand.

Snakemake rules and DVC stages call these subcommands with the same flags;
parameters reach the code only as flags. Commands live in `vlstress.commands.*`,
each module exposing `add_arguments(parser)` and `run(args)`; heavy imports
(torch, open_clip) stay inside `run` so `--help` is instant.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import logging
import os
import sys

from vlstress import cpu_kernels
from vlstress.errors import VlstressError

# The engine's subcommands: subcommand -> (module, one-line help). Each suite declares its own.
ENGINE_COMMANDS: dict[str, tuple[str, str]] = {
    "download": (
        "vlstress.commands.download",
        "fetch raw data for a dataset (HTTP, resumable, checksummed)",
    ),
    "prepare": ("vlstress.commands.prepare", "turn raw data into the canonical manifest"),
    "model-card": (
        "vlstress.commands.model_card",
        "check one model of the registry and write its card (architecture, weights, seed)",
    ),
    "testset": (
        "vlstress.commands.testset",
        "the labelled manifest of a classification test set (ImageNet family, CIFAR, COCO "
        "objects, folders)",
    ),
    "summarize": ("vlstress.commands.summarize", "merge metric JSONs into one table"),
    "headlines": (
        "vlstress.commands.headlines",
        "every headline metric of the run with n and its interval (Wilson, seeded BCa bootstrap)",
    ),
    "figures": (
        "vlstress.commands.figures",
        "the figures of one suite's figure module (PNG + PDF) from the summary",
    ),
    "tables": (
        "vlstress.commands.tables",
        "the tables of one suite's table module (Markdown + LaTeX) from the summary",
    ),
    "models": ("vlstress.commands.models", "list open_clip architectures and pretrained tags"),
    "pool": (
        "vlstress.commands.pool",
        "write the papers' model pool as a params fragment (open_clip, timm, LLaVA, fine-tuned), "
        "each model with its attributes",
    ),
    "embed-join": (
        "vlstress.commands.embed_join",
        "join the shard folders of a sharded embedding job into the folder one job writes",
    ),
    "code-stamp": (
        "vlstress.commands.code_stamp",
        "the md5 of each source file a step runs (the step's code dependency)",
    ),
    "fetch-weights": (
        "vlstress.commands.fetch_weights",
        "put every hub model of the params in the weight cache (for nodes without network)",
    ),
    "cost": (
        "vlstress.commands.cost",
        "price the grid of the params: images per suite, GPU-hours, CPU-hours, disk, wall time "
        "on G GPUs (plans only)",
    ),
    "pipeline": (
        "vlstress.commands.pipeline",
        "render dvc.yaml from the stage declarations (render), check it is current (check), list "
        "stages",
    ),
    "compare-results": (
        "vlstress.commands.compare_results",
        "compare a rebuilt results tree with another or the committed one, numbers within "
        "tolerances; exit 1 on a real difference",
    ),
    "exp": (
        "vlstress.commands.exp",
        "exp run: `dvc exp run` whose -S may switch suites (applies the overrides to params.yaml, "
        "renders dvc.yaml)",
    ),
}


def commands() -> dict[str, tuple[str, str]]:
    """subcommand -> (module, one-line help): the engine's, then each suite's (its `commands`)."""
    from vlstress.pipeline import commands as registered

    return registered()


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """Only the selected subcommand's module is imported: a step starts without loading the
    others."""
    parser = argparse.ArgumentParser(prog="vlstress", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, help_text) in commands().items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            module = importlib.import_module(module_name)
            module.add_arguments(cmd)
            cmd.set_defaults(_module=module)
    return parser


def _quiet_teardown() -> None:
    """Send what the interpreter prints while it shuts down to /dev/null: at exit, triton's
    nanobind bindings (loaded by torch under transformers) report ~25 lines of `nanobind: leaked
    ...`, which bury the step's own error in its log. Registered as the step starts, it runs after
    every exit handler the step's code registers; the step's error or traceback is printed
    before any of them."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    cpu_kernels.cap()  # before any command module loads numpy or torch: they read it once, at load
    step = argv is None  # this process is the step (`vlstress ...`), not a caller of main()
    if step:
        atexit.register(_quiet_teardown)
    argv = sys.argv[1:] if argv is None else argv
    done = False
    try:
        known = commands()
        selected = next((arg for arg in argv if arg in known), None)
        args = build_parser(selected).parse_args(argv)
        logging.basicConfig(
            level=logging.DEBUG if args.verbose else logging.INFO,
            format="%(levelname)s %(name)s: %(message)s",
        )
        try:
            args._module.run(args)
        except VlstressError as exc:
            print(f"vlstress {args.command}: error: {exc}", file=sys.stderr)
            return 2
        done = True
    finally:
        if step:
            if not done:
                _put_back_failed_stage()
            # the step is done: the interpreter's last garbage collections would walk every
            # object torch and open_clip made (~1 s of a model step's exit); frozen, they go
            # with the process. atexit handlers still run; what the step wrote is closed already
            gc.freeze()
    return 0


def _put_back_failed_stage() -> None:
    """A step that fails as a `dvc repro` stage's command: the cached outputs DVC deleted before
    it ran come back from the cache (`pipeline.failed_stage`)."""
    from vlstress.pipeline import failed_stage

    found = failed_stage.stage_of_this_step()
    if found is None:
        return
    try:
        failed_stage.put_back(*found)
    except Exception as exc:  # the step's own error stays the one that is reported
        print(f"vlstress: could not put back the outputs of {found[1]}: {exc!r}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
