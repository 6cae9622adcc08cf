"""The stage table and the two front ends built from it (dry runs only; fast)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vlstress import params as params_module
from vlstress import params_check
from vlstress.code_deps import dependencies
from vlstress.errors import VlstressError
from vlstress.pipeline import (
    STAGES,
    SUITES,
    active_stages,
    code_paths,
    dvc,
    expand,
    record_paths,
)

from conftest import REPO, copy_repo, finetune_off

ENV = {
    **os.environ,
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}


def demo_params() -> dict:
    return params_module.load([REPO / "params.yaml"])


def with_suites(params: dict, **suites: bool) -> dict:
    """The params with only these suites on (without finetune, the models of its checkpoints are
    left out too)."""
    out = {**params, "suites": suites}
    return out if suites.get("finetune") else finetune_off({**out, "suites": dict(suites)})


def sh(*cmd: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result


# ----------------------------------------------------------------------------- the table


def test_checked_in_schema_is_the_whole_params_schema():
    """workflow/schemas/config.schema.yaml: the engine's keys and every suite's blocks, current."""
    import jsonschema

    from vlstress.pipeline import rendered

    text = (REPO / "workflow/schemas/config.schema.yaml").read_text()
    assert text == rendered.schema_text(), "run `vlstress pipeline render`"
    schema = yaml.safe_load(text)
    for suite in SUITES.values():
        assert set(suite.needs) <= set(schema["properties"]), suite.name
    jsonschema.validate(demo_params(), schema)  # what snakemake.utils.validate would check


def test_checked_in_dvc_yaml_is_the_rendering_of_the_table():
    assert (REPO / "dvc.yaml").read_text() == dvc.render(demo_params()), (
        "run `vlstress pipeline render`"
    )


def test_no_dependency_is_an_empty_file():
    """DVC warns twice per command about an empty dependency ("... is empty."), a warning a user
    cannot act on."""
    document = yaml.safe_load((REPO / "dvc.yaml").read_text())
    deps = {
        dep
        for stage in document["stages"].values()
        for dep in stage.get("do", stage).get("deps", [])
        if "${" not in dep
    }
    assert deps and not [
        dep for dep in sorted(deps) if (REPO / dep).is_file() and not (REPO / dep).stat().st_size
    ]


@pytest.mark.slow  # two `pipeline check` processes (~35 s); the fast tier compares the rendering
def test_the_check_fails_when_a_stage_changes_without_re_rendering(tmp_path):
    stale = tmp_path / "dvc.yaml"
    stale.write_text(
        (REPO / "dvc.yaml").read_text().replace("--chunk-size ${evaluate.chunk_size}", "", 1)
    )
    result = subprocess.run(
        [sys.executable, "-m", "vlstress", "pipeline", "check", "--dvc-yaml", str(stale)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "stale" in result.stderr and "chunk-size" in result.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "vlstress", "pipeline", "check"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr


def test_every_stage_names_its_subcommand_and_a_suite_that_exists():
    names = [stage.name for stage in STAGES]
    assert len(names) == len(set(names))
    for stage in STAGES:
        assert stage.suite is None or stage.suite in SUITES, stage.name
        assert code_paths(stage), stage.name


def test_code_deps_follow_imports_lazy_imports_registries_and_data_files():
    deps = {
        p.as_posix().split("src/vlstress/")[1]
        for p in dependencies("vlstress.suites.retrieval.commands.embed_retrieval")
    }
    assert {
        "suites/retrieval/commands/embed_retrieval.py",
        "embedding/encoders.py",
        "embedding/models.py",
        "io.py",
        "provenance.py",
        "__init__.py",
        "suites/__init__.py",
        "suites/retrieval/__init__.py",
    } <= deps
    assert "cli.py" not in deps and not any(
        path.endswith(("figures.py", "suite.py")) for path in deps
    )
    download = {
        p.as_posix().split("src/vlstress/")[1] for p in dependencies("vlstress.commands.download")
    }
    # kinds are named as strings in caption_data.kinds.KINDS; their data files are read through
    # importlib.resources
    assert {
        "caption_data/karpathy.py",
        "caption_data/demo.py",
        "data/karpathy_sources.json",
        "data/demo_captions.json",
    } <= download
    # a shipped table in a subfolder of data/ is a dependency of the step that reads it
    robustness = {
        p.as_posix().split("src/vlstress/")[1]
        for p in dependencies("vlstress.suites.zeroshot.commands.robustness")
    }
    assert "data/published/testbed_standard.csv" in robustness
    # a suite's declarations name other steps' modules as strings: those are not followed
    registry = {
        p.as_posix().split("src/vlstress/")[1] for p in dependencies("vlstress.suites.registry")
    }
    assert (
        "suites/calibration/suite.py" in registry
        and "suites/calibration/commands/calibrate.py" not in registry
    )


def suite_imports(folder: Path, skip: str = "") -> set[str]:
    """The `vlstress.suites.<name>` packages the Python files under `folder` import (but those
    in its subfolder `skip`)."""
    import ast

    found = set()
    for path in folder.rglob("*.py"):
        if skip and path.relative_to(folder).parts[0] == skip:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found |= {m.split(".")[2] for m in names if m.startswith("vlstress.suites.")}
    return found


def test_the_engine_imports_no_suite_and_suites_only_the_code_they_use():
    """Outside vlstress/suites/ only the registry is imported; between suites, the imports are
    exactly these (library code one suite uses of another): a new one is a deliberate edit here."""
    src = REPO / "src/vlstress"
    # the engine reaches the suites through `from vlstress.suites import registry` only
    assert suite_imports(src, skip="suites") == set()
    between = {name: suite_imports(src / "suites" / name) - {name} for name in SUITES}
    assert between == {
        "retrieval": set(),
        "rococo_text": set(),
        "rococo_image": {
            "corruptions"
        },  # the ImageNet-C corruptions as text-to-image perturbations
        "zeroshot": set(),  # its robustness summary computes mCE itself: no circle
        "corruptions": {"zeroshot"},
        # zero-shot's evaluations; the corruptions' image loading, crop and saving, released kinds
        "corruptions_3d": {"corruptions", "zeroshot"},
        "typographic": {"corruptions", "zeroshot"},  # the resize + crop of the corrupted copies
        "adversarial": {"zeroshot"},
        "calibration": {"zeroshot"},
        "ood": {"zeroshot"},
        # the SC captions' generators, VC's mixing, FLYP's prompt templates
        "finetune": {"rococo_text", "rococo_image", "zeroshot"},
        "accuracy_vs_recall": {"zeroshot"},  # the logit line and bootstrap band of robustness
        "shape_bias": {"zeroshot"},  # the 16-category classifier, built and loaded as zero-shot's
        "visual_factors": {
            "zeroshot"
        },  # its classifier, and the robust line of effective robustness
        # zero-shot's evaluations and templates; OOD sets and MCM; calibration's ECE (in NumPy)
        "prompts": {"zeroshot", "ood", "calibration"},
        # zero-shot's evaluations and classifier; the corruptions' image loading and saving
        "stability": {"zeroshot", "corruptions"},
        "video": {"zeroshot"},  # its evaluations and classifier
        "stylized": {"zeroshot", "corruptions"},  # the copy's evaluation; the resize and crop
        "overlap": {"zeroshot", "corruptions"},  # its evaluations and classifier; image loading
        "assistant": {"zeroshot"},  # a classifier's scores among the options
        "correspondence": set(),  # its own model step: dense features of the image tower
        "findings": set(),  # reads the summary, the records and their outcomes
    }


REPORT_STEPS = (
    "pipeline",
    "summarize",
    "figures",
    "tables",
    "robustness",
    "finetune-table",
    "stability-report",
    "fingerprints",
    "cards",
)
MODEL_LIBRARIES = {"torch", "torchvision", "open_clip", "timm", "torchattacks", "torchmetrics"}


def test_steps_without_a_model_do_not_import_torch():
    """The report steps (summary, figures, tables, robustness summaries) and the gate: no module
    they run imports a deep-learning library, not even lazily (found from the code, as code_deps
    finds a step's files)."""
    import ast

    from vlstress.pipeline import stage_modules

    report = [s for s in STAGES if s.subcommand in (*REPORT_STEPS, "accuracy-vs-recall")]
    assert len(report) >= 10
    for stage in report:
        for path in {p for module in stage_modules(stage) for p in dependencies(module)}:
            if path.suffix != ".py":
                continue
            imported = set()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    imported |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    imported.add(node.module.split(".")[0])
            assert not imported & MODEL_LIBRARIES, (
                stage.name,
                path.name,
                imported & MODEL_LIBRARIES,
            )


def test_every_report_caption_is_a_file_of_its_suite():
    from vlstress.pipeline.snakemake import caption_path

    captions = [
        (stage, out.caption) for stage in STAGES for out in stage.outputs.values() if out.caption
    ]
    assert len(captions) > 20
    for stage, caption in captions:
        path = (REPO / "workflow" / caption_path(stage, caption)).resolve()
        assert path.is_file(), (stage.name, caption)
        suite = f"src/vlstress/suites/{stage.suite}/" if stage.suite else "workflow/report/"
        assert path.relative_to(REPO).as_posix().startswith(suite), (stage.name, path)


def test_suites_off_remove_their_stages_and_outputs():
    params = demo_params()
    everything = {
        s.name for s in active_stages(with_suites(params, rococo_text=True, rococo_image=True))
    }
    only_text = {s.name for s in active_stages(with_suites(params, rococo_text=True))}
    none = {s.name for s in active_stages(with_suites(params))}
    # each stage kind has its code stamp step, switched with it
    assert {s for s in none if s.startswith("code_")} == {
        f"code_{s}" for s in none if "code_" not in s and s != "check_params"
    }
    none = {s for s in none if not s.startswith("code_")}
    assert {"evaluate_image", "image_variants", "code_image_variants"} <= everything - only_text
    assert {"evaluate_text", "ei_scores", "text_stats"} <= only_text - none
    assert none == {
        "check_params",
        "download",
        "prepare",
        "model_card",
        "embed_retrieval",
        "evaluate",
        "summarize",
        "headlines",
        "retrieval_figures",
        "retrieval_tables",
    }
    figures = next(s for s in active_stages(with_suites(params)) if s.name == "retrieval_figures")
    assert [name for name in figures.outputs if name.endswith("_png")] == ["recall_bars_png"]


def test_record_paths_are_exactly_what_the_params_produce():
    params = demo_params()
    paths = [str(p) for p in record_paths(params)]
    n_models, n_sets = len(params["models"]), len(params["text_variants"]["sets"])
    image = params["image_variants"]
    n_image = len(image["methods"]) * len(image["lams"]) * len(image["seeds"])
    n_zeroshot = len(params["zeroshot"]["testsets"])
    n_corrupted = len(params["corruptions"]["names"]) * len(params["corruptions"]["severities"])
    block_3d = params["corruptions_3d"]
    n_corrupted += len(block_3d["names"]) * len(block_3d["severities"])
    n_attacks, n_ood = len(params["adversarial"]["attacks"]), len(params["ood"]["sets"])
    n_asked = len(params["assistant"]["testsets"])
    # calibration, shape bias, prompt ablation, AutoCLIP, stability, stylized, overlap, the
    # published check: one file per model; one choice among the options per test set asked
    n_files = 1 + n_sets + n_image + n_zeroshot + n_corrupted + 1 + n_attacks + 1 + n_ood + 7
    n_files += n_asked + len(params["correspondence"]["sets"])  # one file per correspondence set
    # a timm classifier: no retrieval, caption sets, image variants, prompt ablation or AutoCLIP
    n_timm = sum(entry["arch"].startswith("timm:") for entry in params["models"].values())
    # an assistant: only its answers, one file per test set asked
    n_llava = sum(entry["arch"].startswith("llava") for entry in params["models"].values())
    assert n_timm == 1 and n_llava == 1
    n_classifier_files = n_files - (1 + n_sets + n_image + 2)
    assert (
        len(paths)
        == len(set(paths))
        == (n_models - n_timm - n_llava) * n_files + n_classifier_files + n_llava * n_asked
    )
    assert [p for p in paths if "llava-tiny-random" in p] == [
        "results/metrics/llava-tiny-random/assistant-objects.json"
    ]
    assert [p for p in paths if p.startswith("results/metrics/resnet18-random/")] == [
        p for p in paths if "resnet18-random" in p
    ]
    # the fine-tuned model is a model like any other
    tuned = "results/metrics/vit-s-32-alt-random+sc_vc"
    assert f"{tuned}/adversarial-pgd.json" in paths and f"{tuned}/ood-scenes.json" in paths
    assert f"{tuned}/corruption-fog-s5.json" in paths
    assert f"{tuned}/image-patch-lam0.9-seed100.json" in paths
    fewer = {
        **params,
        "models": {"vit-s-32-alt-random+sc_vc": params["models"]["vit-s-32-alt-random+sc_vc"]},
    }
    assert not any("/vit-s-32-alt-random/" in str(p) for p in record_paths(fewer))
    assert all("/original.json" in str(p) for p in record_paths(with_suites(params)))


def test_expand_renders_numbers_as_dvc_does():
    params = {
        **demo_params(),
        "image_variants": {**demo_params()["image_variants"], "lams": [0.5, 1.0], "seeds": [3]},
    }
    assert expand("x/{method}_lam{lam}_seed{seed}", params) == [
        "x/mix_lam0.5_seed3",
        "x/mix_lam1.0_seed3",
        "x/patch_lam0.5_seed3",
        "x/patch_lam1.0_seed3",
    ]


def test_an_output_written_once_per_value_of_its_each_axes_is_one_job():
    """Output.each: the corruption records of a model are one job's outputs (one per corruption
    and severity), listed as such in both front ends; a command cannot name them as one path."""
    from dataclasses import replace

    from vlstress.pipeline import record_params, single_output
    from vlstress.pipeline.snakemake import rule_spec, targets

    params = demo_params()
    names, severities = params["corruptions"]["names"], params["corruptions"]["severities"]
    (stage,) = [s for s in active_stages(params) if s.name == "evaluate_corruption"]
    assert stage.axes == ("model",)
    entry = dvc.entries(stage, params)["evaluate_corruption"]
    embedding = [m for m, e in params["models"].items() if not e["arch"].startswith("llava")]
    assert sorted(entry["foreach"]) == sorted(embedding)  # the models it takes, written out
    outs = [next(iter(out)) for out in entry["do"]["outs"]]
    assert outs[: len(names) * len(severities)] == [
        f"results/metrics/${{key}}/corruption-{c}-s{s}.json" for c in names for s in severities
    ]
    assert len(outs) == 3 * len(names) * len(severities)  # record, per-class, outcomes
    rule = rule_spec(stage, params, ["params.yaml"])
    assert rule.output["outcomes"] == [
        f"results/metrics/{{model}}/corruption-{c}-s{s}.outcomes.npz"
        for c in names
        for s in severities
    ]
    assert rule.output["record"] == [
        f"results/metrics/{{model}}/corruption-{c}-s{s}.json" for c in names for s in severities
    ]
    wanted = {
        f"results/metrics/{m}/corruption-{c}-s{s}.json"
        for m in embedding
        for c in names
        for s in severities
    }
    assert wanted <= set(targets(params)) and wanted <= {str(p) for p in record_paths(params)}
    # DVC addresses (what the lock pruning keeps): one per model that embeds images (the
    # assistant is left out of the `foreach` items)
    addresses = [a for a, _ in dvc.addresses(params) if a.startswith("evaluate_corruption@")]
    assert addresses == [f"evaluate_corruption@{m}" for m in sorted(embedding)]
    # the summary reruns when the conditions change
    assert {"corruptions.names", "corruptions.severities"} <= set(record_params(params))
    with pytest.raises(ValueError, match="one file per corruption, severity"):
        single_output(stage, "record")
    naming = replace(stage, command=stage.command + " --out {out.record}")
    with pytest.raises(ValueError, match="cannot name it"):
        dvc.stage_entry(naming, params)


def _model_stage_names(params: dict, models: list[str]) -> dict[str, dict]:
    """The DVC stage address of each step of the given models -> what dvc.yaml says of it: its
    plain entry, its `foreach` item and body, or its `matrix` body."""
    rendered = yaml.safe_load(dvc.render(params))["stages"]
    found = {}
    for address, _ in dvc.addresses(params):
        if not any(m in address or m.replace("+", "_") in address for m in models):
            continue
        name, at, key = address.partition("@")
        entry = rendered[name]
        if at and "foreach" in entry:
            items = entry["foreach"]  # `${models}`, or the items written out
            entry = {"item": items[key] if isinstance(items, dict) else items, "do": entry["do"]}
        elif at:
            entry = {k: v for k, v in entry.items() if k != "matrix"}
        found[address] = entry
    return found


def test_a_models_stages_keep_their_names_whatever_else_is_in_the_pool():
    """Removing the assistant or the timm classifier from `models:` renames no stage of another
    model and changes no entry of theirs: DVC would otherwise see them as new stages and rerun
    them all (a stage that takes only some kinds of model used to be written per model only when
    the pool held a model of another kind)."""
    import copy

    params = demo_params()
    kinds = {m: e["arch"].partition(":")[0] for m, e in params["models"].items()}
    assert {"llava", "timm"} <= set(kinds.values())
    others = [m for m, kind in kinds.items() if kind not in ("llava", "timm")]
    with_all = _model_stage_names(params, others)
    assert len(with_all) > 50
    for kind in ("llava", "timm"):
        fewer = copy.deepcopy(params)
        fewer["models"] = {m: e for m, e in params["models"].items() if kinds[m] != kind}
        if kind == "timm":  # the assistant's options come from an image-text model then
            assert params["assistant"]["options_from"] in fewer["models"]
        assert _model_stage_names(fewer, others) == with_all, kind


# ----------------------------------------------------------------------------- params validation


@pytest.mark.parametrize(
    ("edit", "needles"),
    [
        (
            lambda p: p.update(modles=p.pop("models")),
            ["unknown key 'modles'", "did you mean 'models'"],
        ),
        (
            lambda p: p["suites"].update(rococo_txt=True),
            ["unknown suite 'rococo_txt'", "rococo_text"],
        ),
        (lambda p: p.pop("image_variants"), ["suites.rococo_image is on", "image_variants"]),
        (lambda p: p.update(models={}), ["models"]),
        (lambda p: p["embed"].update(batch_size=0), ["embed.batch_size"]),
        (
            lambda p: p["adversarial"]["attacks"][0].update(kind="pgdd"),
            ["attack 'pgd': unknown kind 'pgdd'", "did you mean 'pgd'"],
        ),
        (
            lambda p: p["adversarial"]["attacks"][1].update(name="pgd"),
            ["attack name(s) used twice: pgd"],
        ),
        (
            lambda p: p["adversarial"]["attacks"][0].update(eps="1,a"),
            ["adversarial.attacks.0.eps: '1,a' is not of the expected form: budgets in 1/255"],
        ),
        (
            # what the schema accepts, the attack step's flag parser accepts (unquoted on the
            # command line): no space, no empty budget, no sign
            lambda p: p["adversarial"]["attacks"][0].update(eps="-1,4"),
            ["'-1,4' is not of the expected form: budgets in 1/255 units of the norm"],
        ),
        (
            lambda p: p["adversarial"]["attacks"][0].update(eps="1, 4"),
            ["'1, 4' is not of the expected form"],
        ),
        (
            lambda p: p["adversarial"]["attacks"][0].pop("restarts"),
            ["'restarts' is a required property"],
        ),
        (
            lambda p: p["ood"].update(scores="mcm,maxlogit"),
            ["unknown OOD score 'maxlogit'", "did you mean 'max_logit'"],
        ),
        (
            lambda p: p["calibration"].update(in_distribution="objcts"),
            ["calibration.in_distribution: unknown test set 'objcts'"],
        ),
        (
            lambda p: p["ood"]["sets"].update(objects=p["ood"]["sets"]["scenes"]),
            ["ood.sets.objects: also a zero-shot test set name"],
        ),
        (
            lambda p: p["suites"].update(zeroshot=False),
            ["suites.adversarial is on but needs suite(s) zeroshot on too"],
        ),
        (
            lambda p: p["suites"].update(rococo_text=False),
            ["suites.finetune is on but needs suite(s) rococo_text on too"],
        ),
        (
            lambda p: p["finetune"]["base"].update(pretrained="openai"),
            ["finetune.base must be a model of the run", "models.vit-s-32-alt-random"],
        ),
        (
            lambda p: p["models"].pop("vit-s-32-alt-random+sc_vc"),
            [
                "finetune.variants.sc_vc is evaluated by no model",
                "pretrained: results/finetune/sc_vc/model.safetensors",
            ],
        ),
        (
            lambda p: p["finetune"]["variants"].update(vc={"w_sc": 0, "w_vc": 1, "lora": 0}),
            ["finetune.variants.vc is evaluated by no model"],
        ),
        (
            lambda p: p["finetune"].update(
                variants={"vc": {"w_sc": 0, "w_vc": 1, "lora": 0}},
                wise={"of": "vc", "alphas": [0.5]},
            ),
            ["sc_vc/model.safetensors is the checkpoint of no variant"],
        ),
        (
            lambda p: p["finetune"]["variants"].update(vc={"w_sc": 0, "w_vc": 1}),
            ["'lora' is a required property"],
        ),
        (
            lambda p: p["finetune"]["wise"].update(alphas=[0.5, 1.5]),
            ["finetune.wise.alphas", "1.5 is greater than the maximum of 1"],
        ),
        (
            lambda p: p["finetune"]["wise"].update(of="sc"),
            ["finetune.wise.of: unknown variant 'sc'"],
        ),
        (
            lambda p: p["finetune"]["wise"].update(alphas=[0.5, 0.25]),
            [
                "finetune.wise alpha 0.25 is evaluated by no model",
                "pretrained: results/finetune/wise/0.25/model.safetensors",
            ],
        ),
        (
            lambda p: p["finetune"].update(freeze="text"),
            ["finetune.labelled.variants.flyp_lora.lora: LoRA trains only its adapters"],
        ),
        (
            lambda p: p["finetune"]["labelled"]["train"].update(kind="tiny-imagenet"),
            ["finetune.labelled.train.kind: unknown test-set kind 'tiny-imagenet'"],
        ),
        (
            lambda p: p["finetune"]["labelled"].update(templates="fancy"),
            ["finetune.labelled.templates: unknown template set 'fancy'"],
        ),
        (
            lambda p: p["finetune"]["labelled"]["variants"].update(
                probe={"loss": "standard", "lora": 0}
            ),
            [
                "finetune.labelled.variants.probe is evaluated by no model",
                "pretrained: results/finetune/labelled/probe/model.safetensors",
            ],
        ),
        (
            lambda p: p["finetune"]["labelled"]["variants"].update(
                probe={"loss": "linear-probe", "lora": 0}
            ),
            ["finetune.labelled.variants.probe.loss", "'linear-probe' is not one of"],
        ),
        (
            lambda p: p["finetune"]["lora"].update(tower="both"),
            ["finetune.lora.tower"],
        ),
        (
            lambda p: p["finetune"]["lora"].update(modules="mlp.c_fc, mlp.c_proj"),
            ["finetune.lora.modules", "is not of the expected form"],
        ),
        (
            lambda p: p["finetune"]["lora"].update(dropout=1),
            ["finetune.lora.dropout"],
        ),
        (
            lambda p: p["finetune"]["wise"].update(alphas=[float("nan")]),
            ["finetune.wise.alphas: nan is not a number in [0, 1]"],
        ),
        (
            lambda p: p["models"].update({"vit.5": p["models"]["vit-s-32-alt-random"]}),
            ["models: 'vit.5' is not of the expected form", "no dot"],
        ),
        (
            lambda p: p["finetune"].update(text_kind="same-concpt"),
            ["unknown caption-set kind 'same-concpt'"],
        ),
        (lambda p: p["finetune"].update(method="flip"), ["mixes in no partner image"]),
        (
            lambda p: p["finetune"].update(batch_size=6, accumulate=4),
            ["not a multiple of finetune.accumulate"],
        ),
        (lambda p: p["finetune"]["train"].update(name="demo"), ["the test dataset's name"]),
    ],
)
def test_invalid_params_name_the_problem(edit, needles):
    params = demo_params()
    edit(params)
    with pytest.raises(VlstressError) as error:
        params_check.validate(params)
    for needle in needles:
        assert needle in str(error.value)


def test_small_files_the_params_name_are_checked_before_any_model_work(tmp_path):
    """A template file or a class-name file is read by the params check: empty, without `{c}` or
    with repeated class names, every offending item is named."""
    params = demo_params()
    empty = tmp_path / "templates.txt"
    empty.write_text("\n")
    params["zeroshot"]["templates"] = str(empty)
    names = tmp_path / "names.txt"
    names.write_text("cat\nApple\ndog\napple\ncat\n")
    params["zeroshot"]["testsets"]["objects"]["classnames"] = str(names)
    with pytest.raises(VlstressError) as error:
        params_check.validate(params)
    message = str(error.value)
    assert f"zeroshot.templates: template file {empty} is empty" in message
    assert "class name 'cat' is in" in message and "(entries 1, 5)" in message
    assert "class name 'Apple' is in" in message and "(entries 2, 4)" in message
    empty.write_text("a photo of a {c}.\na photo\nart\n")
    params["zeroshot"]["testsets"]["objects"]["classnames"] = None
    with pytest.raises(
        VlstressError, match="2 template\\(s\\) without the \\{c\\} placeholder: 'a photo'; 'art'"
    ):
        params_check.validate(params)


def test_the_imagenet_example_passes_the_params_check(tmp_path):
    """The README's ImageNet blocks (params.imagenet.yaml), copied in place of the demo's, are
    valid params; their paths are stand-ins here (the datasets cannot be downloaded, and the check
    reads no dataset folder)."""
    text = (REPO / "params.imagenet.yaml").read_text().replace("/data/", f"{tmp_path}/")
    example = yaml.safe_load(text)
    params = {**demo_params(), **example}
    params_check.validate(params)
    testsets = params["zeroshot"]["testsets"]
    assert {entry["kind"] for entry in testsets.values()} == {
        "imagenet",
        "imagenet-v2",
        "imagenet-sketch",
        "imagenet-r",
        "imagenet-a",
        "objectnet",
        "imagenet-vid-robust",
        "imagenet-d",
    }
    assert all(entry["root"].startswith(str(tmp_path)) for entry in testsets.values())
    # LLaVA-1.5 asked on ImageNet-D among CLIP ViT-L/14's confusions, as the holistic paper does
    assert params["models"]["llava-1-5-7b"]["arch"] == "llava"
    assert params["assistant"]["testsets"] == ["imagenet_d_background"]
    assert all(model["pretrained"] for model in params["models"].values())  # real weights
    assert {
        "visual_factors",
        "shape_bias",
        "prompts",
        "stability",
        "video",
        "stylized",
        "overlap",
        "assistant",
    } <= (params_module.suites_on(params))
    assert params["ood"]["sets"]["ninco"]["kind"] == "ninco"
    # the README shows the same file
    assert "params.imagenet.yaml" in (REPO / "README.md").read_text()


def test_a_suite_that_is_off_needs_no_params_block():
    params = demo_params()
    for block in ("image_variants", "ei", "text_variants"):
        params.pop(block)
    params["suites"] = {"rococo_text": False}
    finetune_off(params)
    assert params_check.validate(params) is params


# ----------------------------------------------------------------------------- both front ends


@pytest.fixture(scope="module")
def project(module_tmp) -> Path:
    root = copy_repo(module_tmp.mktemp("pipeline") / "repo")
    sh("git", "init", "-q", cwd=root)  # DVC wants a git repository
    sh("git", "add", "-A", cwd=root)
    sh("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy", cwd=root)
    return root


def set_params(root: Path, **changes) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params.update(changes)
    if not params["suites"].get("finetune"):
        finetune_off(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def snakemake_commands(root: Path, *args: str) -> dict[str, list[str]]:
    """rule name -> shell commands of a forced dry run (log redirection removed)."""
    out = sh("snakemake", "-n", "-p", "--forceall", "--cores", "1", *args, cwd=root).stdout
    jobs: dict[str, list[str]] = {}
    rule = None
    for line in out.splitlines():
        match = re.match(r"^(?:local)?rule (\w+):$", line.strip())
        if match:
            rule = match.group(1)
        elif line.startswith("Shell command: vlstress ") and rule:
            jobs.setdefault(rule, []).append(
                re.sub(r"\s*>\s*\S+\s+2>&1 \|\| .*$", "", line[len("Shell command: ") :])
            )
    return jobs


def dvc_commands(root: Path) -> dict[str, list[str]]:
    code = (
        "import json, sys\nfrom dvc.repo import Repo\n"
        "with Repo(sys.argv[1]) as repo:\n"
        "    json.dump([[s.addressing.split('@')[0], ' '.join(s.cmd.split())] "
        "for s in repo.index.stages if s.cmd], sys.stdout)\n"
    )
    import json

    stages: dict[str, list[str]] = {}
    for name, cmd in json.loads(sh(sys.executable, "-c", code, str(root), cwd=root).stdout):
        # one plain stage per item (`model_card-<model>`: items with their own external inputs)
        stages.setdefault(name.partition("-")[0], []).append(cmd)
    return stages


@pytest.mark.slow  # a repo copy and two dry runs of the demo; fast tier: test_quick_workflow
def test_both_front_ends_run_the_same_commands(project):
    smk = snakemake_commands(project)
    dvc_cmds = dvc_commands(project)
    assert set(smk) == set(dvc_cmds) == {s.name for s in active_stages(demo_params())}
    for name in smk:
        assert sorted(smk[name]) == sorted(dvc_cmds[name]), name
    # retrieval: 26 steps of two models (one embedding job per model; one evaluation job per
    # model of the image variants, one of the caption sets) + their two model cards + the
    # scorer card + the gate; zero-shot: test set, 2 x (classifiers job, image-sets job, record,
    # published check), 4 corrupted sets, one evaluation of them all per model (2), typographic 1 +
    # 2 evaluations, robustness; 2 models x 2 attacks (a white-box, a black-box), 2 calibrations,
    # OOD: the set + 2 detections (its images are in the image-sets job); fine-tuning: training data
    # (download, prepare, split, captions), base card, one variant, FLYP's class set, the comparison
    # table; the report: one figure stage per suite with figures (7, the retrieval one replacing the
    # old single figures stage) and one table stage per suite with tables (5, the retrieval one
    # replacing the old tables stage); accuracy_vs_recall: one job; shape bias: the stimuli, 2
    # records, its figure and table (5); prompts: 2 ablations, 2 AutoCLIP, figures and table (6);
    # stability: 3 perturbations' sequences, one evaluation per model (2), its report (6); stylized:
    # the copy, 2 evaluations, its figures and table (5); overlap: the collection, the detection, 2
    # evaluations, its figures and table (6); the timm classifier: its card and every classification
    # step of one model (classifiers, image sets, record, corruptions, typographic, 2 attacks,
    # calibration, OOD, shape bias, stability, stylized, overlap, published check: 15), no
    # retrieval, caption or prompt step; the FLYP LoRA and standard variants and WiSE-FT's alpha:
    # two trainings and one interpolation step, and every step of an image-text model each (21:
    # card, 2 embeddings, 3 retrieval evaluations, 2 attacks and one step of every other per-model
    # stage); and one code stamp step per stage kind but the gate; the assistant suite: the
    # questions, the assistant's card and answers, the choice of each of the 6 other models, its
    # figures and table (11); findings: the fingerprints and the cards (2); the engine's headline
    # table (1)
    kinds = len([s for s in active_stages(demo_params()) if not s.name.startswith("code_")])
    assistant = 1 + 2 + 6 + 2
    timm = 1 + 3 + 1 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1
    retrieval, zeroshot = 30 + 1, 2 * 4 + 4 + 2 + 3 + 1 + 2 * 2 + 2 + 1 + 2
    finetune, report, rest = 4 + 1 + 1 + 1 + 1, 6 + 4, 1 + 5 + 6 + 6 + 5 + 6
    methods, findings, headlines = 2 + 1 + 3 * 21, 2, 1
    # 3D common corruptions: 3 corruptions x 2 severities, one evaluation per model that embeds
    # images (6), its figures and table
    corruptions_3d = 3 * 2 + 6 + 2
    # correspondence: the pair list of each of its 2 sets, one evaluation per (model that embeds
    # images, set): 6 x 2, its figures and table
    correspondence = 2 + 6 * 2 + 2
    assert kinds == 88
    assert (
        sum(map(len, smk.values()))
        == retrieval
        + zeroshot
        + finetune
        + report
        + rest
        + timm
        + methods
        + assistant
        + findings
        + headlines
        + corruptions_3d
        + correspondence
        + kinds
        - 1
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("suites", "present", "absent"),
    [
        (
            {"rococo_text": True},
            {"evaluate_text", "text_stats"},
            {"evaluate_image", "image_variants"},
        ),
        ({"rococo_image": True}, {"evaluate_image"}, {"evaluate_text", "ei_scores", "nlp_data"}),
        (
            {},
            {"evaluate", "summarize", "retrieval_figures"},
            {"evaluate_text", "evaluate_image", "text_stats", "zeroshot_figures"},
        ),
    ],
)
def test_a_suite_switched_off_has_no_job_in_either_front_end(project, suites, present, absent):
    original = (project / "params.yaml").read_text()
    # the render drops the lock entries of the stages switched off: put them back after
    lock = (project / "dvc.lock").read_text()
    try:
        set_params(project, suites=suites)
        sh("vlstress", "pipeline", "render", cwd=project)
        smk = set(snakemake_commands(project))
        dvc_stages = set(dvc_commands(project))
        assert present <= smk and present <= dvc_stages
        assert not absent & smk and not absent & dvc_stages
        assert smk == dvc_stages
    finally:
        (project / "params.yaml").write_text(original)
        sh("vlstress", "pipeline", "render", cwd=project)
        (project / "dvc.lock").write_text(lock)


@pytest.mark.slow
def test_the_default_profile_is_picked_up(project):
    # a DVC-cached output: never in a fresh copy
    target = "results/embeddings/vit-s-32-alt-random/retrieval"
    result = sh("snakemake", "-n", target, cwd=project)
    with_profile = result.stdout + result.stderr
    assert "workflow/profiles/default" in with_profile
    # printshellcmds comes from the profile
    assert "Shell command: vlstress embed-retrieval" in with_profile
    result = sh(
        "snakemake", "-n", "--workflow-profile", "none", "--cores", "1", target, cwd=project
    )
    assert "Shell command" not in result.stdout + result.stderr


@pytest.mark.slow  # the repo copy of `project` and a dry run of the demo
def test_an_alternative_params_file_reaches_the_steps_that_read_params(project):
    extra = project / "params.more.yaml"
    extra.write_text(
        yaml.safe_dump({"models": {"rn50-random": {"arch": "RN50", "pretrained": None}}})
    )
    jobs = snakemake_commands(project, "--configfile", str(extra.name))
    # models are merged, not replaced (Snakemake's rule); summarize sees both files in order
    assert any("--params params.yaml --params params.more.yaml" in cmd for cmd in jobs["summarize"])


@pytest.mark.slow  # the repo copy of `project` (its other users are slow)
def test_config_overrides_without_a_file_are_refused(project):
    result = sh("snakemake", "-n", "--cores", "1", "--config", "seed=3", cwd=project, check=False)
    assert result.returncode != 0
    assert "--configfile" in result.stdout + result.stderr


def test_the_slurm_profile_routes_gpu_stages_by_resources():
    profile = yaml.safe_load((REPO / "workflow/profiles/slurm/config.yaml").read_text())
    assert "set-resources" not in profile and "slurm_partition" not in profile.get(
        "default-resources", {}
    )
    partitions = yaml.safe_load((REPO / profile["slurm-partition-config"]).read_text())[
        "partitions"
    ]
    assert any(p.get("max_gpu", 0) > 0 for p in partitions.values())
    assert any(p.get("max_gpu", 0) == 0 for p in partitions.values())
    gpu = {s.name for s in STAGES if s.gpu}
    assert {"embed_retrieval", "ei_scores"} <= gpu


def test_pipeline_use_merges_a_params_file_like_snakemake_configfile(tmp_path):
    target = tmp_path / "params.yaml"
    target.write_text((REPO / "params.yaml").read_text())
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vlstress",
            "pipeline",
            "use",
            str(REPO / "params.coco-mini.yaml"),
            "--params",
            str(target),
            "--dvc-yaml",
            str(tmp_path / "dvc.yaml"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    merged = params_module.load([target])
    assert merged == params_module.load([REPO / "params.yaml", REPO / "params.coco-mini.yaml"])
    assert "# Model registry" in target.read_text()  # comments kept
    assert (tmp_path / "dvc.yaml").read_text() == dvc.render(merged)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda p: p["dataset"].update(kind="flickr"), "unknown dataset kind 'flickr'"),
        (
            lambda p: p["image_variants"].update(methods=["mixx"]),
            "unknown image perturbation 'mixx' (did you mean 'mix'?)",
        ),
        (
            lambda p: p["text_variants"]["sets"]["danger"].update(kind="dangerous"),
            "unknown caption-set kind 'dangerous'",
        ),
        (
            lambda p: p["text_variants"]["sets"]["danger"].update(words=None),
            "kind danger needs a word list",
        ),
    ],
)
def test_registry_names_are_checked_against_the_registries(edit, needle):
    params = demo_params()
    edit(params)
    with pytest.raises(VlstressError, match=re.escape(needle)):
        params_check.validate(params)


def test_a_new_perturbation_is_valid_in_params_without_touching_the_schema():
    params = demo_params()
    params["image_variants"]["methods"] = ["flip"]
    assert params_check.validate(params) is params


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda p: p.update(models={}), "failed validation"),
        (
            lambda p: p.update(modles=dict(p["models"])),
            "unknown key 'modles' at the top level (did you mean 'models'?)",
        ),
        # switched without `pipeline render`
        (
            lambda p: finetune_off(p.update(suites={"rococo_text": True}) or p),
            "dvc.yaml is stale",
        ),
        # an input outside the workflow that is not there
        (
            lambda p: p["overlap"]["train"].update(path="data/nowhere"),
            "`overlap.train.path` names data/nowhere, which does not exist",
        ),
    ],
)
def test_dvc_repro_checks_params_before_any_step_works(project, edit, needle):
    original = (project / "params.yaml").read_text()
    try:
        params = yaml.safe_load(original)
        edit(params)
        (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        result = sh("dvc", "repro", cwd=project, check=False)
        assert result.returncode != 0
        assert needle in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
        assert re.findall(r"Running stage '([^']+)'", result.stdout + result.stderr) == [
            "check_params"
        ]
        assert not (project / "data" / "raw" / "demo").exists() and not list(
            (project / "results").glob("models/*.json")
        )
        # the failed check deleted its stamp (DVC removes a stage's outputs first): no tracked file
        status = sh("git", "status", "--porcelain", "-uno", cwd=project).stdout.splitlines()
        assert status == [" M params.yaml"], status
    finally:
        (project / "params.yaml").write_text(original)


def test_a_missing_input_is_named_and_refused(tmp_path, monkeypatch):
    """A path the params name that does not exist and that no step makes (a training collection,
    a model's checkpoint, a test set's folder) is refused by both front ends before they plan:
    Snakemake planned nothing for it and kept the results of the old input."""
    from vlstress.pipeline import check_inputs, missing_inputs
    from vlstress.pipeline.snakemake import rules

    monkeypatch.chdir(REPO)  # the demo's inputs are relative to the project
    params = demo_params()
    assert missing_inputs(params) == []  # produced paths (fine-tuned checkpoints) are fine
    params["overlap"]["train"]["path"] = str(tmp_path / "gone")
    params["models"]["vit-s-32-alt-random"]["pretrained"] = str(tmp_path / "ckpt.safetensors")
    params["zeroshot"]["testsets"]["objects"].update(
        kind="imagefolder", root=f"file://{tmp_path}/x"
    )
    problems = missing_inputs(params)
    assert len(problems) == 3
    assert any("`overlap.train.path`" in p and f"{tmp_path}/gone" in p for p in problems)
    assert any("`models.vit-s-32-alt-random.pretrained`" in p for p in problems)
    assert any("`zeroshot.testsets.objects.root`" in p and f"{tmp_path}/x" in p for p in problems)
    with pytest.raises(VlstressError, match="overlap.train.path"):
        check_inputs(params)
    with pytest.raises(VlstressError, match="overlap.train.path"):
        rules(params, ["params.yaml"])
    # hub tags, registry names and URLs are no paths; once the path exists it is an input
    params = demo_params()
    params["models"]["vit-s-32-alt-random"]["pretrained"] = "hf-hub:org/model"
    params["overlap"]["train"]["path"] = str(tmp_path)
    params["zeroshot"]["templates"] = "openai"
    assert missing_inputs(params) == []


@pytest.mark.slow
def test_snakemake_refuses_a_missing_input_before_planning(project):
    """`snakemake -n` with the training collection pointing nowhere: an error naming the param and
    the path, not a plan that keeps the results of the old collection."""
    original = (project / "params.yaml").read_text()
    try:
        params = yaml.safe_load(original)
        params["overlap"]["train"]["path"] = "data/nowhere"
        (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        result = sh("snakemake", "-n", "--cores", "1", cwd=project, check=False)
        assert result.returncode != 0
        out = result.stdout + result.stderr
        assert "`overlap.train.path` names data/nowhere, which does not exist" in out, out[-3000:]
    finally:
        (project / "params.yaml").write_text(original)


def test_a_folder_rewritten_with_the_same_bytes_gets_its_time_back(tmp_path, monkeypatch):
    """pipeline.folder_times: after a forced rerun that wrote the same bytes (Snakemake's, or
    DVC's between two Snakemake runs) a folder output has the time it had, never older than an
    input of its step; new bytes keep their new time."""
    from vlstress.pipeline import folder_times

    monkeypatch.chdir(tmp_path)
    source, folder = Path("source.txt"), Path("out")
    source.write_text("in")
    os.utime(source, ns=(10**18, 10**18))

    def write(text: str, ns: int) -> None:  # what a step does, then Snakemake's marker
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "a.txt").write_text(text)
        (folder / "b.txt").write_text("b")
        stamp = folder / folder_times.TIMESTAMP
        stamp.touch()
        os.utime(stamp, ns=(ns, ns))

    first = 2 * 10**18
    write("a", first)
    folder_times.remember([("out", ["source.txt"])])
    write("a", first + 10**9)  # forced again: the same bytes, a newer time
    folder_times.remember([("out", ["source.txt"])])
    assert folder_times.time_of("out") == first
    # rewritten by DVC (no marker) with the same bytes: put back before planning
    (folder / folder_times.TIMESTAMP).unlink()
    (folder / "b.txt").write_text("b")
    os.utime(folder, ns=(first + 5 * 10**9, first + 5 * 10**9))
    folder_times.restore()
    assert folder_times.time_of("out") == first
    # an input newer than the remembered time: never older than it
    os.utime(source, ns=(first + 7 * 10**9, first + 7 * 10**9))
    write("a", first + 9 * 10**9)
    folder_times.remember([("out", ["source.txt"])])
    assert folder_times.time_of("out") == first + 7 * 10**9
    # new bytes: the new time stays, and is remembered
    write("changed", first + 20 * 10**9)
    folder_times.remember([("out", ["source.txt"])])
    assert folder_times.time_of("out") == first + 20 * 10**9
    write("changed", first + 30 * 10**9)
    folder_times.remember([("out", ["source.txt"])])
    assert folder_times.time_of("out") == first + 20 * 10**9
    # what a failed DVC stage's put-back asks: the time of this content, none for another
    assert folder_times.remembered_time("out") == first + 20 * 10**9
    write("other", first + 40 * 10**9)
    assert folder_times.remembered_time("out") is None
    assert folder_times.remembered_time("elsewhere") is None


def test_a_large_file_rewritten_with_the_same_bytes_gets_its_time_back(tmp_path, monkeypatch):
    """A file output over Snakemake's checksum limit (1 MB: embeddings, weights) after a forced
    rerun with the same bytes has the time it had; a small one is left to Snakemake's checksums;
    new bytes keep their new time."""
    from vlstress.pipeline import folder_times

    monkeypatch.chdir(tmp_path)
    source, large, small = Path("source.txt"), Path("emb.npy"), Path("rec.json")
    source.write_text("in")
    os.utime(source, ns=(10**18, 10**18))
    data = bytes(range(256)) * (folder_times.CHECKSUM_LIMIT // 256 + 1)

    def write(path: Path, content: bytes, ns: int) -> None:
        path.write_bytes(content)
        os.utime(path, ns=(ns, ns))

    first = 2 * 10**18
    write(large, data, first)
    write(small, b"{}", first)
    outputs = [("emb.npy", ["source.txt"]), ("rec.json", ["source.txt"])]
    folder_times.remember(outputs)
    write(large, data, first + 10**9)  # forced again: the same bytes, a newer time
    write(small, b"{}", first + 10**9)
    folder_times.remember(outputs)
    assert large.stat().st_mtime_ns == first
    assert small.stat().st_mtime_ns == first + 10**9  # Snakemake's own checksum covers it
    write(large, data, first + 5 * 10**9)  # rewritten by DVC: put back before planning
    folder_times.restore()
    assert large.stat().st_mtime_ns == first
    write(large, data[:-1] + b"x", first + 20 * 10**9)  # new bytes: the new time stays
    folder_times.remember(outputs)
    assert large.stat().st_mtime_ns == first + 20 * 10**9


def test_render_drops_the_lock_entries_of_stages_that_are_gone(tmp_path):
    """DVC keeps a removed model's or a renamed stage's entry in dvc.lock forever: render drops
    them and leaves every kept entry byte for byte as DVC wrote it."""
    from vlstress.pipeline import rendered
    from vlstress.pipeline.dvc import addresses

    params = params_module.load([REPO / "params.yaml"])
    names = [address for address, _ in addresses(params)]
    kept = {name: f"  {name}:\n    cmd: vlstress x\n    outs:\n    - path: a\n" for name in names}
    gone = "  model_card@removed-model:\n    cmd: vlstress model-card\n"
    renamed = "  plot:\n    cmd: vlstress plot --out 'a: b'\n    deps: []\n"
    lock = tmp_path / "dvc.lock"
    lock.write_text("schema: '2.0'\nstages:\n" + gone + "".join(kept.values()) + renamed)
    written = rendered.write(params, tmp_path / "dvc.yaml")

    assert lock in written
    assert lock.read_text() == "schema: '2.0'\nstages:\n" + "".join(kept.values())
    assert list(yaml.safe_load(lock.read_text())["stages"]) == names
    # nothing stale: the lock is left alone
    before = lock.stat().st_mtime_ns
    assert lock not in rendered.write(params, tmp_path / "dvc.yaml")
    assert lock.stat().st_mtime_ns == before


def test_every_command_builds_its_parser():
    """Each registered command's flags build: no two flags clash (a model step's own flags beside
    the model flags it shares, e.g. a second --seed), found here rather than when the step runs."""
    import argparse

    from vlstress.cli import build_parser, commands

    built = 0
    for name in commands():
        try:
            build_parser(name)  # add_arguments of its module: a clash raises here
        except argparse.ArgumentError as exc:
            raise AssertionError(f"vlstress {name}: {exc}") from None
        built += 1
    assert built == len(commands()) > 40


def test_the_cards_folder_is_a_report_item_opening_on_its_index():
    """`snakemake --report` shows the robustness cards: the folder is marked for the report with its
    caption, category and the page it opens on (Snakemake requires one for a directory)."""
    from vlstress.pipeline.snakemake import rule_spec

    params = demo_params()
    (stage,) = [s for s in active_stages(params) if s.name == "cards"]
    cards = rule_spec(stage, params, ["params.yaml"]).output["cards"]
    found = cards.flags["report"]
    assert cards.flags.get("directory") and str(cards) == "results/cards"
    assert found.htmlindex == "index.html" and found.category == "Robustness cards"
    assert found.caption.endswith("src/vlstress/suites/findings/report/cards.rst")
