"""The typed params: one object built once, each suite's block declared in its package, which suites
are on computed in one place."""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib
from pathlib import Path

import pytest
import yaml

from vlstress import params as params_module
from vlstress import params_check, typed
from vlstress.errors import VlstressError
from vlstress.params import Params, suites_on
from vlstress.suites import registry

SRC = Path(__file__).resolve().parents[1] / "src" / "vlstress"


def block_classes() -> dict[str, type]:
    """Every params block a suite declares (`vlstress.suites.<suite>.block`), by its key."""
    found = {}
    for suite in registry.suites():
        try:
            module = importlib.import_module(f"vlstress.suites.{suite.name}.block")
        except ModuleNotFoundError:
            continue
        for value in vars(module).values():
            if dataclasses.is_dataclass(value) and "KEY" in vars(value):
                found[value.KEY] = value
    return found


def demo() -> dict:
    return yaml.safe_load((SRC.parents[1] / "params.yaml").read_text())


def test_every_suite_block_has_one_dataclass_with_the_schemas_keys():
    schema = params_check.schema()
    classes = block_classes()
    suite_blocks = {
        key
        for suite in registry.suites()
        if suite.params
        for key in importlib.import_module(suite.params).SCHEMA
    }
    assert set(classes) == suite_blocks
    for key, kind in classes.items():
        assert set(typed.keys(kind)) == set(schema["properties"][key]["properties"]), key
    # the test-set entry of the engine's schema, shared by zero-shot and OOD sets
    assert set(typed.keys(params_module.Testset)) == set(schema["$defs"]["testset"]["properties"])


def test_the_demo_params_are_typed_with_real_lists_and_nones():
    params = Params.of(demo())
    assert params.evaluate.ks == (1, 5, 10)  # "1,5,10" in the file: DVC interpolates strings
    assert params.embed.workers is None and params.embed.batch_size == 32
    assert params.models["vit-s-32-alt-random"].pretrained is None
    blocks = {key: params.block(kind) for key, kind in block_classes().items()}
    attack = blocks["adversarial"].attacks[0]
    assert (attack.name, attack.eps, attack.steps, attack.alpha) == ("pgd", (1.0, 4.0), 3, None)
    objects = blocks["zeroshot"].testsets["objects"]
    assert objects.keep is not None and "cup of coffee" in objects.keep and objects.drop is None
    assert blocks["text_variants"].sets["danger"].words == ("weapon", "criminal", "minefield")
    assert blocks["image_variants"].lams == (0.9,) and blocks["corruptions"].severities == (1, 5)
    assert blocks["finetune"].freeze is None and blocks["finetune"].train.kind == "demo-train"
    # built once: the same object each time
    assert params.block(block_classes()["ood"]) is params.block(block_classes()["ood"])


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda p: p["embed"].update(batch_size="many"), "`embed.batch_size`: expected an integer"),
        (lambda p: p["evaluate"].update(ks="1,x"), "`evaluate.ks[1]`: expected an integer"),
        (lambda p: p["evaluate"].update(ties="random"), "`evaluate.ties`: expected one of"),
        (lambda p: p["models"]["vit-s-32-alt-random"].pop("arch"), "`arch` is missing"),
        (lambda p: p["embed"].update(colour=1), "`embed`: unknown key(s) colour"),
    ],
)
def test_a_wrong_value_is_an_error_naming_its_key(edit, needle):
    values = demo()
    edit(values)
    with pytest.raises(VlstressError) as error:
        Params.of(values)
    assert needle in str(error.value)


def test_a_block_that_is_absent_or_wrong_is_named():
    values = demo()
    del values["ood"]
    with pytest.raises(VlstressError, match="no `ood` block"):
        Params.of(values).block(block_classes()["ood"])
    values = demo()
    values["adversarial"]["attacks"][0]["eps"] = "1,big"
    with pytest.raises(VlstressError, match=r"`adversarial.attacks\[0\].eps\[1\]`"):
        Params.of(values).block(block_classes()["adversarial"])


def test_which_suites_are_on_is_computed_in_one_place():
    values = demo()
    values["suites"].update(ood=False, typographic=0)
    on = suites_on(values)
    assert "zeroshot" in on and "ood" not in on and "typographic" not in on
    assert Params.of(values).on == on
    assert suites_on({"suites": None}) == frozenset()
    # no other module reads the `suites:` switches
    readers = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value == "suites":
                readers.append(path.relative_to(SRC).as_posix())
    # params.py computes it; the check names unknown switches; the renderer and the zero-shot
    # lists name `suites` as a param that shapes their outputs (DVC `params:`); the stale check
    # renders dvc.yaml for other switches (to tell a suite switch from other edits)
    assert sorted(set(readers)) == [
        "params.py",
        "params_check.py",
        "pipeline/__init__.py",
        "pipeline/rendered.py",
        "suites/zeroshot/paths.py",
    ]


def test_the_typed_view_does_not_change_the_mapping_templates_read():
    values = demo()
    before = copy.deepcopy(values)
    params = Params.of(values)
    for kind in block_classes().values():
        params.block(kind)
    assert params.values == before
