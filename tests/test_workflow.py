"""The demo workflow end to end in a fresh copy of the repository (slow: a few minutes).

A small image-text model and a timm classifier. Snakemake builds everything and records it in
dvc.lock; DVC then has nothing to do, reruns only what an added corruption severity needs, and
shares the outputs through a remote byte for byte. DVC, forced to rerun a model step of every suite
and every step of the classifier, writes the bytes Snakemake wrote (on the same machine: float
results may differ in the last bits between CPUs). Parameter edits of the retrieval suites:
tests/test_workflow_edits.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vlstress.pipeline import STAGES, code_paths

from conftest import (
    NOT_DATA,
    committed_copy,
    dvc_reruns_to_the_same_bytes,
    finetune_off,
    output_digests,
    ran_stages,
    stale_stages,
    zeroshot_off,
)

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")

CLIP, TIMM = "vit-s-32-random", "resnet18-random"
BIN = str(Path(sys.executable).parent)
ENV = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}


def sh(*cmd: str, cwd: Path, check: bool = True) -> str:
    result = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result.stdout + result.stderr


def shrink(params: dict, zeroshot: bool = True) -> dict:
    """The demo, smaller: 4 photos, one small random-init image-text model (and a random-init timm
    ResNet-18 for the classification suites), two text sets, two image variants; zero-shot on 7
    images, one corruption at one severity, the typographic attack, one FGSM on 4
    images, calibration, OOD detection against 7 images."""
    params["dataset"]["max_images"] = 4
    params["models"] = {CLIP: {"arch": "ViT-S-32", "pretrained": None}}
    if zeroshot:  # a supervised classifier beside it: the classification suites only
        params["models"][TIMM] = {"arch": "timm:resnet18", "pretrained": None}
    finetune_off(params)  # tests/test_workflow_finetune.py runs it
    params["image_variants"].update(methods=["mix"], lams=[0.9, 0.5], seeds=[1])
    sets = params["text_variants"]["sets"]
    params["text_variants"]["sets"] = {name: sets[name] for name in ("same_concept", "danger")}
    # one view of each of the 14 photos
    params["zeroshot"]["testsets"]["objects"]["max_per_class"] = 1
    params["zeroshot"]["robustness"]["mce_baseline"] = CLIP
    params["corruptions"].update(names=["gaussian_noise"], severities=[3], size=64)
    params["typographic"]["size"] = 96
    params["adversarial"].update(
        n_images=4,
        attacks=[
            {
                "name": "fgsm",
                "kind": "fgsm",
                "norm": "linf",
                "eps": "2",
                "steps": None,
                "alpha": None,
                "restarts": 1,
                "extra": None,
            }
        ],
    )
    params["ood"]["sets"]["scenes"]["max_per_class"] = 1
    # the newer zero-shot suites, small: 2 sequences of 2 perturbations, a 64 px stylized copy, the
    # overlap detector and the stability baseline the one model
    params["stability"].update(
        n_images=2, perturbations=["gaussian_noise", "rotate"], baseline=CLIP
    )
    params["stylized"]["size"] = 64
    params["overlap"].update(detector=CLIP, planted=2, recall=0.5)
    # multiple choice among the one model's confusions: the classifiers answer (the assistant
    # itself: tests/test_assistant_workflow.py)
    params["assistant"]["options_from"] = CLIP
    # 3D awareness, small: two rendered view pairs at half Probe3D's size, SPair-style keypoint
    # pairs (one per class and sample) at 256 px, 3D fog at one severity on 64 px images
    sets = params["correspondence"]["sets"]
    sets["scenes"].update(pairs=2, image_size="240,320")
    sets["corners"].update(pairs=1, image_size="256")
    params["corruptions_3d"].update(names=["fog_3d"], severities=[3], size=64)
    if not zeroshot:  # the cluster and remote tests: the retrieval suites are enough, and faster
        zeroshot_off(params)
    return params


def fresh_project(dest: Path, zeroshot: bool = True) -> Path:
    """A copy of the repository with the small params, no results, committed as a fresh clone would
    be."""
    return committed_copy(dest, lambda params: shrink(params, zeroshot))


@pytest.fixture(scope="module")
def project(module_tmp) -> Path:
    root = fresh_project(module_tmp.mktemp("workflow") / "repo")
    sh("snakemake", "--cores", "2", cwd=root)
    return root


def test_snakemake_run_leaves_nothing_for_dvc(project):
    assert (project / "dvc.lock").is_file()
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=project)
    assert "Nothing to be done" in sh("snakemake", "-n", cwd=project)
    log = sh("dvc", "repro", cwd=project)
    assert ran_stages(log) == set(), log


def test_a_one_job_run_records_only_what_it_ran_for_dvc(project):
    """A Snakemake run of one job commits, at its end, that job's stage and any of the run's
    stages dvc.lock lacks, not every stage upstream (committing those checked every file of them:
    minutes on the demo). Seen through the lock: the job's own entry, removed by hand, is back as
    it was; an upstream entry made stale by hand stays so."""
    lock_path = project / "dvc.lock"
    original = lock_path.read_text()
    stages = yaml.safe_load(original)["stages"]
    own, upstream = f"ood_detect@{CLIP}", f"embed_zeroshot@{CLIP}"
    edited = {name: entry for name, entry in stages.items() if name != own}
    stale = json.loads(json.dumps(edited[upstream]))
    stale["outs"][0]["md5"] = "0" * 32 + ".dir"
    edited[upstream] = stale
    lock_path.write_text(yaml.safe_dump({"schema": "2.0", "stages": edited}, sort_keys=False))
    try:
        target = f"results/metrics/{CLIP}/ood-scenes.json"
        log = sh("snakemake", "--cores", "1", "--force", target, cwd=project)  # that job alone
        assert "1 of 1 steps (100%) done" in log, log[-3000:]
        after = yaml.safe_load(lock_path.read_text())["stages"]
        assert after[own] == stages[own]  # committed: the same outputs, byte for byte
        assert after[upstream] == stale  # not committed again
        assert {name: entry for name, entry in after.items() if name != own} == edited
    finally:
        lock_path.write_text(original)
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=project)
    assert "Nothing to be done" in sh("snakemake", "-n", cwd=project)


def test_dvc_metrics_show_reads_as_tables(project):
    """One row per case, one column per metric: a task's table is as wide as its metric names,
    however many models and conditions (it was one row of 33,000 characters)."""
    table = sh("dvc", "metrics", "show", "--md", "results/scores/retrieval", cwd=project)
    rows = [line for line in table.splitlines() if line.startswith("| results/")]
    header = table.splitlines()[0]
    assert len(rows) == len(list((project / "results/scores/retrieval").rglob("*.json"))) >= 1
    assert "i2t_R@1" in header and max(map(len, table.splitlines())) < 200, table
    everything = sh("dvc", "metrics", "show", cwd=project).splitlines()
    # one column per metric name of every task (about 1,100 characters with 18 suites), not one
    # per case
    assert len(everything) > 10 and max(map(len, everything)) < 2000


# the steps that compute nothing new: the gate, the summary and what is drawn or tabulated from it
REPORT_STEPS = {
    "pipeline",
    "summarize",
    "headlines",
    "figures",
    "tables",
    "robustness",
    "finetune-table",
    "accuracy-vs-recall",
    "stability-report",
    "fingerprints",
    "cards",
}


def test_an_edit_reruns_only_the_steps_of_its_code(project, tmp_path):
    """benchmarks/stale_stages.py on the built project: what each edit makes stale, both tools."""
    out = tmp_path / "stale.json"
    sh(sys.executable, "benchmarks/stale_stages.py", "--root", ".", "--json", str(out), cwd=project)
    edits = json.loads(out.read_text())["edits"]

    def stages(edit: str, tool: str) -> set[str]:
        return {name.split("@")[0] for name in edits[f"src/vlstress/suites/{edit}"][tool]}

    for tool in ("dvc", "snakemake"):
        # a suite's figure or table module: only that suite's report stage
        assert stages("calibration/figures.py", tool) == {"calibration_figures"}, tool
        assert stages("calibration/table.py", tool) == {"calibration_tables"}, tool
        # a suite's stage declarations: no step that computes anything
        compute = {stage.name for stage in STAGES if stage.subcommand not in REPORT_STEPS}
        assert (
            stages("calibration/suite.py", tool)
            and not stages("calibration/suite.py", tool) & compute
        )
        # calibration or OOD code: its own steps, and no embedding job
        embedding = {"embed_retrieval", "embed_zeroshot", "zeroshot_classifiers"}
        assert "calibrate" in stages("calibration/calibration.py", tool)
        assert "ood_detect" in stages("ood/scores.py", tool)
        for edit in ("calibration/calibration.py", "ood/scores.py"):
            assert not stages(edit, tool) & embedding, (edit, tool)
    # DVC lists the stages whose own code changed (through their code stamps: the calibration
    # step, and the prompt ablation, which uses its ECE); Snakemake plans those downstream too
    edited = "src/vlstress/suites/calibration/calibration.py"
    # (of the stages this project builds: the test's params switch some suites off)
    built = set(yaml.safe_load((project / "dvc.yaml").read_text())["stages"])
    users = {stage.name for stage in STAGES if edited in code_paths(stage)} & built
    assert "calibrate" in users and not users & {"embed_zeroshot", "zeroshot_classifiers"}
    assert stages("calibration/calibration.py", "dvc") == users
    assert "summarize" in stages("calibration/calibration.py", "snakemake")


def test_outputs_carry_provenance(project):
    record = json.loads((project / "results/metrics/vit-s-32-random/original.json").read_text())
    assert record["model"]["weights"] == "random-init (seed 0)"
    prov = record["provenance"]
    assert prov["model"]["arch"] == "ViT-S-32" and prov["device"] == "cpu"
    assert prov["packages"]["open_clip_torch"] and prov["packages"]["torch"]
    assert prov["params"]["ks"] == [1, 5, 10] and prov["params"]["ties"] == "optimistic"
    embedding = json.loads(
        (project / "results/embeddings/vit-s-32-random/retrieval/images.npy.json").read_text()
    )
    assert embedding["provenance"]["params"]["threads"] == 2  # fixed by params, recorded


def strict(name: str):
    raise ValueError(f"{name} is not JSON")


def test_every_record_is_strict_json_of_the_typed_format(project):
    from vlstress.record import FIELDS, SCHEMA, read_records

    files = sorted(
        p
        for p in (project / "results/metrics" / CLIP).rglob("*.json")
        if not p.name.endswith(".json.json")
    )
    # original, two text sets, two image variants, zero-shot, corruption, typographic; FGSM,
    # calibration, OOD, shape bias, prompt-count ablation, AutoCLIP, stability, stylized, overlap,
    # the published check (record lists), multiple choice; the 3D fog record and the two
    # correspondence sets (record lists)
    assert len(files) == 1 + 2 + 2 + 3 + 10 + 1 + 1 + 2
    tasks = set()
    for path in files:
        data = json.loads(path.read_text(), parse_constant=strict)
        for item in data if isinstance(data, list) else [data]:
            assert list(item) == sorted(FIELDS) and item["schema"] == SCHEMA, path
        tasks.update(rec.task for rec in read_records(path))
    assert tasks == {
        "retrieval",
        "text-stress",
        "image-stress",
        "zeroshot",
        "corruption",
        "typographic",
        "adversarial",
        "calibration",
        "ood",
        "shape_bias",
        "prompt_count",
        "prompt_count_ood",
        "autoclip",
        "stability",
        "stylized",
        "overlap",
        "multiple_choice",
        "published-check",
        "corruption_3d",
        "correspondence",
    }
    # the per-item outcomes beside a record give its metric back
    from vlstress.outcomes import outcomes_path, read_outcomes

    folder = project / "results/metrics" / CLIP
    for name, column, metric in (
        ("zeroshot-objects", "correct", "top1"),
        ("text-same_concept", "hit1", "i2t_R@1"),
    ):
        record = json.loads((folder / f"{name}.json").read_text())
        (block,) = read_outcomes(outcomes_path(folder / f"{name}.json"))
        assert 100 * block.column(column).mean() == pytest.approx(record["metrics"][metric])


def test_holistic_records_pass_their_sanity_checks(project):
    """Robust accuracy never above clean and every perturbation within eps; calibration and OOD
    values in range."""
    from vlstress.record import read_records

    metrics = project / "results/metrics/vit-s-32-random"
    (attack,) = read_records(metrics / "adversarial-fgsm.json")
    m = attack.metrics
    assert attack.condition == {"attack": "fgsm", "eps": 2.0} and attack.dataset["n_images"] == 4
    # its per-image outcomes give robust top-1 and attack success back
    from vlstress.outcomes import outcomes_path, read_outcomes

    (block,) = read_outcomes(outcomes_path(metrics / "adversarial-fgsm.json"))
    assert block.n == 4 and 100 * block.column("correct").mean() == m["robust_top1"]
    clean = block.column("clean_correct")
    assert 100 * clean.mean() == m["top1_clean"]
    if clean.any():
        assert 100 * block.column("fooled").sum() / clean.sum() == pytest.approx(
            m["attack_success"]
        )
    assert m["robust_top1"] <= m["top1_clean"] and m["max_linf"] <= 2.0 + 1e-3
    calibration = read_records(metrics / "calibration.json")
    # objects held out, the corruption, the typographic attack; one temperature for all of them
    assert [r.condition.get("split") for r in calibration] == ["held-out", None, None]
    assert (
        len({r.metrics["temperature"] for r in calibration}) == 1
        and calibration[0].metrics["temperature"] > 0
    )
    assert all(
        0 <= r.metrics["ece"] <= 100 and 0 <= r.metrics["ece_ts"] <= 100 and r.metrics["nll"] > 0
        for r in calibration
    )
    ood = read_records(metrics / "ood-scenes.json")
    assert [r.condition["score"] for r in ood] == ["mcm", "msp", "max_logit", "energy"]
    assert all(0 <= r.metrics["auroc"] <= 100 and 0 <= r.metrics["fpr95"] <= 100 for r in ood)
    shape = read_records(metrics / "shape_bias.json")
    # the demo's 17 stimuli: 16 cue conflicts, one per shape category, and chair1-chair1
    assert [r.condition["category"] for r in shape][:2] == ["all", "airplane"] and len(shape) == 17
    overall = shape[0].metrics
    assert (overall["n_conflict"], overall["n_no_conflict"]) == (16, 1)
    shares = ("shape_decisions", "texture_decisions", "other_decisions")
    assert sum(overall[k] for k in shares) == pytest.approx(100.0)
    assert overall["shape_bias"] is None or 0 <= overall["shape_bias"] <= 1
    assert (project / "results/figures/reliability_vit-s-32-random.png").is_file()
    assert (project / "results/figures/ood_roc_vit-s-32-random_scenes.png").is_file()
    tables = {
        name: (project / f"results/tables/{name}.md").read_text()
        for name in ("adversarial", "calibration", "ood", "shape_bias")
    }
    assert (
        "fgsm ε=2" in tables["adversarial"]
        and "held-out, ID" in tables["calibration"]
        and "| scenes AUROC" in tables["ood"]
        and "| mcm " in tables["ood"]
        and "| ViT-S-32 (random-init)" in tables["shape_bias"]
    )


def test_the_classifier_takes_part_in_the_classification_suites_only(project):
    """The timm classifier beside the image-text model: the classification suites for both,
    retrieval for the image-text model only."""
    import pandas as pd

    metrics = project / "results/metrics"
    for model in (CLIP, TIMM):
        for name in ("zeroshot-objects", "corruption-gaussian_noise-s3", "typographic"):
            record = json.loads((metrics / model / f"{name}.json").read_text())
            assert record["provenance"]["model"]["kind"] == (
                "timm" if model == TIMM else "open_clip"
            )
            assert 0 <= record["metrics"]["top1"] <= 100
        for name in ("adversarial-fgsm", "calibration", "ood-scenes", "shape_bias"):
            assert (metrics / model / f"{name}.json").is_file(), (model, name)
    assert (metrics / CLIP / "original.json").is_file()
    assert not (metrics / TIMM / "original.json").exists()
    assert not (project / "results/embeddings" / TIMM / "retrieval").exists()
    # its classifier is the demo's class map: 5 classes x 1000 ImageNet classes, rows of mean 1/k
    classifier = project / "results/embeddings" / TIMM / "classifiers/objects.npy"
    meta = json.loads(classifier.with_name("objects.npy.json").read_text())
    assert meta["scores"] == "imagenet-probabilities" and meta["shape"] == [5, 1000]
    assert meta["imagenet_map"]["file"] == "demo.json"
    summary = pd.read_csv(project / "results/summary.csv")
    tasks = {model: set(rows["task"]) for model, rows in summary.groupby("model")}
    assert "retrieval" in tasks[CLIP] and "retrieval" not in tasks[TIMM]
    assert {"zeroshot", "corruption", "typographic", "calibration"} <= tasks[TIMM]


def test_dvc_push_then_pull_in_a_fresh_clone(project, tmp_path):
    before = output_digests(project)
    assert len(before) > 10
    remote = tmp_path / "remote"
    sh("dvc", "remote", "add", "-f", "-d", "storage", str(remote), cwd=project)
    sh("git", "add", "-A", cwd=project)
    sh("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results", cwd=project)
    sh("dvc", "push", cwd=project)
    clone = tmp_path / "clone"
    sh("git", "clone", "-q", str(project), str(clone), cwd=tmp_path)
    assert not (clone / "data/prepared/manifest.json").exists()
    sh("dvc", "pull", cwd=clone)
    assert output_digests(clone) == before
    assert "Data and pipelines are up to date" in sh("dvc", "status", cwd=clone)


def model_stages_per_suite(root: Path) -> dict[str, str]:
    """For each suite with a stage over the model axis, its first such stage that ran for the
    model (a `name@vit-s-32-random...` entry of dvc.lock)."""
    from vlstress.pipeline import SUITES

    locked = list(yaml.safe_load((root / "dvc.lock").read_text())["stages"])
    chosen = {}
    for suite in SUITES.values():
        for stage in suite.stages:
            # `stage@<model>...` (foreach) or `stage-<model>` (one output per model)
            found = [
                n for n in locked if n.startswith((f"{stage.name}@{CLIP}", f"{stage.name}-{CLIP}"))
            ]
            if "model" in stage.axes and found:
                chosen[suite.name] = found[0]
                break
    return chosen


def test_dvc_reruns_every_suites_model_step_to_the_same_bytes(project):
    """Front ends are interchangeable on one machine: DVC, forced to rerun one model step of every
    suite and the timm classifier's own steps on its own (in the tree Snakemake built), writes
    the bytes Snakemake wrote, and has nothing left to do. (A whole build of this one by DVC alone
    took 17 minutes; only the small workflow of tests/test_video_workflow.py is built from nothing
    by each front end.)
    After it, Snakemake would see outputs newer than what it built from them: only the DVC test of
    an added severity follows."""
    chosen = model_stages_per_suite(project)
    # every suite with model steps that is on in the small demo (finetune is tested on its own)
    assert {"rococo_text", "zeroshot", "adversarial", "calibration", "ood", "prompts"} <= set(
        chosen
    ), chosen
    locked = list(yaml.safe_load((project / "dvc.lock").read_text())["stages"])
    # retrieval for the image-text model only (`embed_retrieval@<model>`: the models it takes)
    retrieval = [name for name in locked if name.startswith("embed_retrieval")]
    assert retrieval and all(CLIP in name and TIMM not in name for name in retrieval), retrieval
    # the timm classifier's steps (`stage@resnet18-random`, `stage@resnet18-random-<...>`) that run
    # it, and those that read its class-map probabilities instead of logits (its other steps run
    # the code the image-text model's steps above run; each forced DVC step costs seconds)
    classifier = [name for name in locked if name.partition("@")[2].startswith(TIMM)]
    own = {"model_card", "embed_zeroshot", "zeroshot_classifiers", "attack", "calibrate"}
    own |= {"ood_detect", "evaluate_zeroshot", "evaluate_correspondence"}
    assert own <= {name.split("@")[0] for name in classifier}, classifier
    runs_it = [name for name in classifier if name.split("@")[0] in own]
    dvc_reruns_to_the_same_bytes(project, list(dict.fromkeys([*chosen.values(), *runs_it])), ENV)


def test_an_added_corruption_severity_embeds_one_set_and_reruns_no_classifier_or_attack(project):
    """One job per model embeds every zero-shot image set: the new severity is the only set it
    embeds. The classifiers are another job's folder, so neither they nor the attacks that read them
    rerun. DVC runs the corruption and calibration steps (and what they need); what is drawn or
    tabulated after them is left to `dvc status`, which must not list the attacks or the
    classifiers. Last in the module: it leaves the summary out of date."""
    model = "vit-s-32-random"
    kept = {
        name: (project / name).read_bytes()
        for name in (
            f"results/metrics/{model}/corruption-gaussian_noise-s3.json",
            f"results/metrics/{model}/adversarial-fgsm.json",
            f"results/embeddings/{model}/zeroshot/corrupted/gaussian_noise_s3.npy",
            f"results/embeddings/{model}/classifiers/objects.npy",
        )
    }
    params_path = project / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["corruptions"]["severities"] = [3, 1]
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    # a model's corruption records are one job's outputs, listed by name in dvc.yaml: the gate
    # asks for a render first
    refused = sh("dvc", "repro", cwd=project, check=False)
    assert "vlstress pipeline render" in refused, refused[-3000:]
    sh("vlstress", "pipeline", "render", cwd=project)
    log = sh("dvc", "repro", "evaluate_corruption", "calibrate", cwd=project)
    ran = {stage.split("@")[0] for stage in ran_stages(log)}
    assert {"corrupt", "embed_zeroshot", "evaluate_corruption", "calibrate"} <= ran, ran
    stale = {stage.split("@")[0] for stage in stale_stages(sh("dvc", "status", cwd=project))}
    assert "summarize" in stale
    assert not (ran | stale) & {
        "zeroshot_classifiers",
        "attack",
        "embed_retrieval",
        "testset",
        "typographic",
        "ood_testset",
    }, ran
    # the test set, the old severity, the typographic copy, the OOD set, the cue-conflict
    # stimuli, the two perturbations' frames, the stylized copy and the 3D fog copy are reused
    assert f"{model}: 1 set(s) embedded, 9 reused" in log, log[-3000:]
    assert {name: (project / name).read_bytes() for name in kept} == kept
    new = json.loads(
        (project / f"results/metrics/{model}/corruption-gaussian_noise-s1.json").read_text()
    )
    assert new["condition"] == {
        "corruption": "gaussian_noise",
        "severity": 1,
        # what was corrupted: the clean set's kind, at the small demo's corruption size (ImageNet-C
        # corrupts 224 px crops; another size is said)
        "images": "demo-objects at 64 px",
    }, new["condition"]


def test_a_sharded_embedding_joins_to_the_folder_one_job_wrote(project):
    """cluster.embed_shards: 2 turns a model's zero-shot embedding into two shard jobs and a join;
    DVC runs them (after the added severity above), the reuse folder emptied so the shards embed,
    and the joined folder is the one job's, byte for byte, so no step that reads it is stale.
    After the test above: last in the module."""
    model = "vit-s-32-random"
    folder = project / f"results/embeddings/{model}/zeroshot"

    def files() -> dict[Path, bytes]:  # Snakemake's folder marker aside (DVC ignores it)
        return {
            p.relative_to(folder): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file() and p.name not in NOT_DATA
        }

    before = files()
    # what earlier tests left stale (the added severity's readers, the summary) stays so
    stale_before = stale_stages(sh("dvc", "status", cwd=project))
    params_path = project / "params.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["cluster"]["embed_shards"] = 2
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    sh("vlstress", "pipeline", "render", cwd=project)
    shutil.rmtree(project / "data/weights/embeddings")  # the shards embed, none is reused
    log = sh("dvc", "repro", f"embed_zeroshot_join@{model}", cwd=project)
    ran = ran_stages(log)
    assert {f"embed_zeroshot_shard@{model}-0", f"embed_zeroshot_shard@{model}-1"} <= ran, ran
    assert f"embed_zeroshot_join@{model}" in ran
    assert len(before) > 10 and files() == before
    parts = project / f"results/embeddings/{model}/zeroshot-shards"
    assert sorted(p.name for p in parts.iterdir() if p.name not in NOT_DATA) == ["0", "1"]
    # newly stale: only the other model's shards and join, which have not run (nothing that
    # reads this model's folder)
    stale = stale_stages(sh("dvc", "status", cwd=project)) - stale_before
    assert stale <= {
        f"embed_zeroshot_shard@{TIMM}-0",
        f"embed_zeroshot_shard@{TIMM}-1",
        f"embed_zeroshot_join@{TIMM}",
    }, stale
