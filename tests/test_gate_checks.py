"""Bad input that needs no model is refused by the params check (the gate), before any step runs:
a step that fails has already lost its old outputs (Snakemake and DVC delete a job's outputs before
running it). And a failed step's console output shows its own error, not the interpreter's
teardown noise."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from vlstress import params as params_module
from vlstress import params_check
from vlstress.pipeline.snakemake import SHELL

from conftest import REPO


@pytest.fixture(scope="module")
def demo() -> dict:
    return params_module.load([REPO / "params.yaml"])


def problems(params: dict) -> list[str]:
    return params_check.problems(copy.deepcopy(params))


def test_the_demo_params_pass_the_gate(demo):
    assert problems(demo) == []


@pytest.mark.parametrize(("templates", "size"), [("simple", 7), ("openai", 80)])
def test_a_prompt_count_above_an_open_clip_template_set_is_refused(demo, templates, size):
    params = copy.deepcopy(demo)
    params["zeroshot"]["templates"] = templates
    params["prompts"]["counts"] = f"1,{size}"
    assert problems(params) == []
    params["prompts"]["counts"] = f"1,{size + 1}"
    found = problems(params)
    assert found == [
        f"prompts.counts: {size + 1} templates asked for, but the set {templates!r} has only {size}"
    ]


def test_the_template_set_sizes_are_those_open_clip_loads():
    pytest.importorskip("open_clip")
    from vlstress.suites.prompts.params import template_pool_size
    from vlstress.suites.zeroshot.templates import TEMPLATE_SETS, resolve

    for name in TEMPLATE_SETS:
        assert template_pool_size(name) == len(resolve(name)[0]), name


def test_an_ood_set_sharing_classes_with_the_in_distribution_set_is_refused(demo):
    params = copy.deepcopy(demo)
    ident = params["ood"]["in_distribution"]
    kept = params["zeroshot"]["testsets"][ident]["keep"].split(",")
    params["ood"]["sets"]["scenes"]["drop"] = ",".join(kept[1:])  # the first class stays in both
    (found,) = problems(params)
    assert found.startswith("ood.sets.scenes: shares 1 class(es) with the in-distribution set ")
    assert repr(ident) in found and kept[0] in found


def test_an_ood_set_dropping_no_class_it_has_is_refused(demo):
    params = copy.deepcopy(demo)
    params["ood"]["sets"]["scenes"]["drop"] = "astronaut,no such class"
    (found,) = problems(params)
    assert found.startswith("ood.sets.scenes: ") and "'no such class' is no class" in found


def test_the_gates_classes_of_a_set_are_those_its_step_writes(demo, tmp_path):
    pytest.importorskip("skimage")
    from vlstress.testsets.known_classes import known_set
    from vlstress.testsets.testset_folder import write_testset

    entries = {
        "objects": demo["zeroshot"]["testsets"]["objects"],
        "scenes": demo["ood"]["sets"]["scenes"],
        "train": {"kind": "demo-train-objects", "keep": None, "drop": None, "classnames": None},
    }
    for name, entry in entries.items():
        options = {k: entry.get(k) for k in ("root", "annotations", "classnames", "corruption")}
        options.update(max_per_class=1, min_size=32, label="category")
        names = entry["keep"] or entry["drop"]
        built = write_testset(
            tmp_path / name,
            name=name,
            kind=entry["kind"],
            options=options,
            keep=entry["keep"].split(",") if entry["keep"] else None,
            drop=entry["drop"].split(",") if entry["drop"] else None,
        )
        known = known_set(entry, name)
        assert known is not None and known.classes == built.classes, (name, names)
        assert known.class_ids == built.class_ids


def llava_folder(root: Path, *names: str) -> Path:
    root.mkdir()
    for name in names:  # a config names the LLaVA class that loads it (llava_entries.MODEL_CLASSES)
        (root / name).write_text('{"model_type": "llava"}' if name == "config.json" else "{}")
    return root


def test_a_llava_folder_without_tokenizer_files_is_refused(demo, tmp_path):
    folder = llava_folder(
        tmp_path / "llava", "config.json", "preprocessor_config.json", "model.safetensors"
    )
    params = copy.deepcopy(demo)
    params["models"]["mine"] = {"arch": "llava", "pretrained": str(folder)}
    (found,) = problems(params)
    assert found.startswith("models.mine: model 'mine': LLaVA folder ")
    assert "tokenizer files" in found and "config.json" not in found.split("lacks")[1][:20]
    (folder / "tokenizer.json").write_text("{}")
    assert problems(params) == []
    params["models"]["mine"]["pretrained"] = str(tmp_path / "absent")
    (found,) = problems(params)
    assert found.startswith("models.mine: ") and "LLaVA folder not found" in found


def test_an_unknown_timm_architecture_is_refused_with_close_names(demo):
    params = copy.deepcopy(demo)
    params["models"]["rn"] = {"arch": "timm:resnet5", "pretrained": None}
    (found,) = problems(params)
    assert found.startswith("models.rn: model 'rn': unknown timm architecture 'resnet5'")
    assert "did you mean resnet50" in found
    params["models"]["rn"]["arch"] = "timm:resnet50.a1_in1k"
    (found,) = problems(params)
    assert "a pretrained tag goes in `pretrained`" in found
    params["models"]["rn"]["arch"] = "timm:resnet50"
    assert problems(params) == []


def test_timm_names_read_from_its_source_are_its_registry():
    from vlstress.embedding import timm_names

    if timm_names.names() is None:
        pytest.skip("timm is not installed")
    timm = pytest.importorskip("timm")
    from timm.models import _registry

    current, deprecated = timm_names.names()
    assert current == set(timm.list_models())
    assert current | deprecated == set(_registry._model_entrypoints)
    assert all(timm.is_model(name) for name in deprecated)


# --------------------------------------------------------------- a failed step's console output

LEAK_REPORT = "\n".join(
    [
        "nanobind: leaked 1 instances!",
        ' - leaked instance 0x5cc67bd07b00 of type "triton._C.libtriton.ir.context"',
        "nanobind: leaked 1 types!",
        ' - leaked type "triton._C.libtriton.ir.context"',
        "nanobind: leaked 20 functions!",
        *[f' - leaked function "f{i}"' for i in range(20)],
        " - ... skipped remainder",
        "nanobind: this is likely caused by a reference counting issue in the binding code.",
        "See https://nanobind.readthedocs.io/en/latest/refleaks.html",
        "",
    ]
)


def failing_step(tmp_path: Path) -> Path:
    """A `vlstress download` step that fails, in a process where something prints a nanobind leak
    report at teardown, after the step's exit handlers (as triton's bindings do)."""
    script = tmp_path / "step.py"
    script.write_text(
        "import atexit, os, sys\n"
        f"atexit.register(os.write, 2, {LEAK_REPORT.encode()!r})\n"
        "sys.argv = ['vlstress', 'download', '--dataset', 't', '--kind', 'coco-dir',\n"
        f"            '--images', {str(tmp_path / 'no-such-folder')!r},\n"
        f"            '--captions', {str(tmp_path / 'c.json')!r},\n"
        f"            '--out', {str(tmp_path / 'o')!r}]\n"
        "from vlstress.cli import main\n"
        "sys.exit(main())\n"
    )
    return script


def test_a_failed_steps_console_shows_its_error_not_a_leak_report(tmp_path):
    """The Snakemake rule's shell command, as Snakemake fills it in and runs it (bash, strict)."""
    log = tmp_path / "step.log"
    command = f"{sys.executable} {failing_step(tmp_path)}"
    shell = SHELL.format(params=SimpleNamespace(command=command), log=log)
    result = subprocess.run(
        ["bash", "-c", f"set -euo pipefail; {shell}"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "vlstress: step failed (exit 2)" in result.stderr
    assert "vlstress download: error:" in result.stderr, result.stderr
    assert "no-such-folder" in result.stderr
    assert "nanobind" not in log.read_text()


def test_a_step_prints_nothing_after_its_exit(tmp_path):
    """What the interpreter prints at teardown, after the step's exit handlers, is not the step's:
    `vlstress` sends it to /dev/null, its error stays (DVC shows a step's output as it comes)."""
    result = subprocess.run(
        [sys.executable, str(failing_step(tmp_path))],
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert result.returncode == 2
    assert "vlstress download: error:" in result.stderr and "no-such-folder" in result.stderr
    assert "nanobind" not in result.stderr, result.stderr


def test_a_steps_traceback_is_printed_before_its_exit(tmp_path):
    code = (
        "import sys\n"
        "sys.argv = ['vlstress', 'models']\n"
        "import vlstress.commands.models as s\n"
        "s.run = lambda args: (_ for _ in ()).throw(RuntimeError('a bug, with its traceback'))\n"
        "from vlstress.cli import main\n"
        "sys.exit(main())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "RuntimeError: a bug, with its traceback" in (
        result.stderr
    )
