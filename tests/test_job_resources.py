"""Each job's resources from the cost model (vlstress.cost.jobs, vlstress.pipeline.resources):
known answers on a hand-made estimate, the split of every suite's work over the stages and jobs
that do it (nothing lost, nothing invented, on the papers' grid), the requests Snakemake gets,
and `vlstress cost`'s table of the longest jobs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from vlstress import params as params_module
from vlstress import params_check
from vlstress.cost import jobs
from vlstress.cost.estimate import STARTUP, Estimate, ModelCost
from vlstress.cost.pricing import Shared, Work
from vlstress.errors import VlstressError
from vlstress.pipeline import MODEL_AXIS, STAGES, active_stages, resources, stage_axis_values

from conftest import REPO

PAPER_GRID = REPO / "params.paper-grid.yaml"


class Rates:
    startup_s = 10.0


def hand_made(values: dict) -> jobs.JobPricer:
    """One model at 100 images/s and 1,000 captions/s; an attack stage whose two attacks cost 1:3,
    a corruption stage over (corruption, severity), a stage that splits evenly."""
    work = [
        Work("a", "images", images=6_000, texts=2_000, stage="embed", text_stage="classifiers"),
        Work("b", "attacks", passes=4_000, stage="attack", weights={"fgsm": 1, "pgd": 3}),
        Work("c", "even", images=1_000, stage="even"),
    ]
    shared = [Shared("s", "corrupting", cpu_s=3_000, stage="corrupt", weights={"x": 2, "y": 1})]
    model = ModelCost("m", "ViT-B-32", 100.0, 1_000.0, {STARTUP: 0}, 0, 512, 8.8)
    found = Estimate([], None, work, shared, [model], Rates(), 1, 1)  # type: ignore[arg-type]
    return jobs.JobPricer(found, values, [])


def test_known_answers_of_a_hand_made_estimate():
    values = {"models": {"m": {"arch": "ViT-B-32", "pretrained": None}}, "embed": {"workers": 2}}
    pricer = hand_made(values)
    embed = jobs.JobShape("embed", gpu=True, model=True)
    classifiers = jobs.JobShape("classifiers", gpu=True, model=True)
    attack = jobs.JobShape("attack", gpu=True, model=True, axes=(("attack", 2),))
    even = jobs.JobShape("even", gpu=True, model=True, axes=(("set", 4), ("seed", 5)))
    corrupt = jobs.JobShape("corrupt", gpu=False, model=False, axes=(("c", 2), ("sev", 3)), cpus=2)
    assert pricer.seconds(embed, "m", None) == pytest.approx(6_000 / 100 + 10)
    assert pricer.seconds(classifiers, "m", None) == pytest.approx(2_000 / 1_000 + 10)
    assert pricer.seconds(attack, "m", "fgsm") == pytest.approx(1_000 / 100 + 10)
    assert pricer.seconds(attack, "m", "pgd") == pytest.approx(3_000 / 100 + 10)
    assert pricer.seconds(even, "m", "any") == pytest.approx(1_000 / 100 / 4 / 5 + 10)
    # 2/3 of the CPU work is corruption x, over its 3 severities, on the job's 2 threads
    assert pricer.seconds(corrupt, None, "x") == pytest.approx(3_000 * 2 / 3 / 3 / 2)
    # runtime: x2 the prediction, at least 30 min; memory: base + 2 workers + 8 MB a parameter
    # (ViT-B-32: 151.28 M, open_clip's profile); CPUs: one per worker and one for the job
    cluster = jobs.Cluster()
    asked = pricer.resources(embed, "m", None)
    assert asked.runtime == cluster.min_job_minutes
    assert asked.mem_mb == 4_000 + 2 * 1_000 + math.ceil(8 * 151.28)
    assert asked.cpus_per_task == 3
    long = jobs.JobPricer(pricer.found, {**values, "cluster": {"runtime_margin": 1.5}}, [])
    slow = jobs.JobShape("embed", gpu=True, model=True, axes=())
    long.found.work[0] = Work("a", "", images=600_000, stage="embed")  # 6,000 s + 10
    assert long.resources(slow, "m", None).runtime == math.ceil(6_010 * 1.5 / 60)
    # a CPU job asks for its threads and the base memory
    asked = pricer.resources(corrupt, None, "x")
    assert (asked.runtime, asked.mem_mb, asked.cpus_per_task) == (30, 4_000, 2)


def test_a_model_the_cost_model_cannot_price_asks_for_the_limits_on_a_gpu_only():
    values = {
        "models": {"m": {"arch": "ViT-B-32", "pretrained": None}},
        "embed": {"workers": None},
        "cluster": {"max_job_hours": 2.5, "unpriced_mem_mb": 50_000},
    }
    pricer = hand_made(values)
    gpu = pricer.resources(jobs.JobShape("embed", True, True), "llava", None)
    assert gpu == jobs.JobResources(150, 50_000, 1 + 8, None)
    cpu = pricer.resources(jobs.JobShape("evaluate", False, True), "llava", None)
    assert (cpu.runtime, cpu.mem_mb, cpu.cpus_per_task) == (30, 4_000, 1)


def test_the_cluster_block_is_checked():
    values = params_module.load([REPO / "params.yaml"])
    params_check.validate(values, "params.yaml")  # the shipped block
    for bad in ({"runtime_margin": 0.5}, {"max_job_hours": 0}, {"gpu_wokers": 2}):
        with pytest.raises(VlstressError, match="cluster"):
            params_check.validate({**values, "cluster": bad}, "params.yaml")
    with pytest.raises(VlstressError, match="gpu_wokers"):
        jobs.cluster_of({"cluster": {"gpu_wokers": 2}})


@pytest.fixture(scope="module")
def grid() -> tuple[dict, jobs.JobPricer]:
    values = params_module.load([PAPER_GRID])
    return values, resources.job_pricer(values)


def test_every_priced_piece_of_work_names_a_stage_that_does_it(grid):
    values, pricer = grid
    # a stage's jobs do the work priced under its name, or under the stage it is a form of (the
    # shards of embed_zeroshot)
    stages = {stage.priced_as or stage.name: stage for stage in active_stages(values)}
    pieces = [(w, True) for w in pricer.found.work] + [(s, False) for s in pricer.found.shared]
    for piece, per_model in pieces:
        costs = (piece.image_passes + piece.texts) if per_model else (piece.cpu_s + piece.gpu_s)
        if not costs:
            continue
        named = {piece.stage, getattr(piece, "text_stage", None) or piece.stage}
        assert named <= set(stages), (piece.what, named)
        for name in named:
            stage = stages[name]
            assert (MODEL_AXIS.name in stage.axes) == per_model, (piece.what, name)
            rest = [axis for axis in stage.axes if axis != MODEL_AXIS.name]
            if piece.weights:
                assert rest, (piece.what, name)
                assert set(piece.weights) <= set(stage_axis_values(stage, values, rest[0]))


def test_the_jobs_of_a_model_add_up_to_its_price(grid):
    """Split over the stages and jobs that do it, each model's GPU time is what `vlstress cost`
    charges it (each job's start-up aside), and the shared CPU work is all in some job."""
    values, pricer = grid
    found = pricer.found
    startup = found.rates.startup_s
    for cost in found.models[:: max(len(found.models) // 12, 1)]:
        total = 0.0
        for stage in active_stages(values):
            if MODEL_AXIS.name not in stage.axes or cost.slug not in stage_axis_values(
                stage, values, MODEL_AXIS.name
            ):
                continue
            shape = resources.shape(stage, values, 1)
            keys = stage_axis_values(stage, values, shape.axes[0][0]) if shape.axes else [None]
            others = math.prod(n for _, n in shape.axes[1:])
            for key in keys:
                seconds = pricer.seconds(shape, cost.slug, key)
                total += others * (seconds - (startup if stage.gpu else 0.0))
        assert total == pytest.approx(cost.total_s - cost.gpu_s[STARTUP], rel=1e-9), cost.slug
    cpu = 0.0
    for stage in active_stages(values):
        if MODEL_AXIS.name in stage.axes:
            continue
        shape = resources.shape(stage, values, 1)
        keys = stage_axis_values(stage, values, shape.axes[0][0]) if shape.axes else [None]
        others = math.prod(n for _, n in shape.axes[1:])
        cpu += sum(
            others * (pricer.seconds(shape, None, key) - (startup if stage.gpu else 0.0))
            for key in keys
        )
    assert cpu == pytest.approx(found.shared_cpu_s + found.shared_gpu_s, rel=1e-9)


def one_job(values: dict) -> dict:
    """The params with a model's zero-shot images embedded in one job."""
    return {**values, "cluster": {**values["cluster"], "embed_shards": 1}}


def test_in_one_job_the_grid_names_its_jobs_over_the_limit(grid, capsys):
    values, _ = grid
    values = one_job(values)
    pricer = resources.job_pricer(values)
    rows = {row["stage"]: row for row in resources.longest_jobs(values, pricer)}
    # one job embeds every zero-shot set of a model: ViT-L/14's takes longer than 4 h, and asks
    # for what it needs (x2), past the limit
    zeroshot = rows["embed_zeroshot"]
    assert zeroshot["over"] > 0 and zeroshot["hours"] > 4
    assert zeroshot["request"].runtime == math.ceil(zeroshot["hours"] * 60 * 2)
    assert all(row["over"] == 0 for name, row in rows.items() if name != "embed_zeroshot")
    assert rows["corrupt"]["jobs"] == 15 * 5  # ImageNet-C's corruptions x severities
    resources.warn_over_limit(values, pricer)
    assert "embed_zeroshot: 102 of 255" in capsys.readouterr().err
    # the fewest shards that bring each of them under 4 h: 37.6 h / 10 = 3.76 h
    assert resources.fewest_shards(values, pricer) == {"cluster.embed_shards": 10}


def test_on_the_papers_grid_no_job_is_predicted_over_the_limit(grid):
    """params.paper-grid.yaml embeds a model's zero-shot images in the fewest shards that keep
    every job under cluster.max_job_hours on the reference GPU; no job asks for more either."""
    values, pricer = grid
    limit = values["cluster"]["max_job_hours"]
    assert values["cluster"]["embed_shards"] == 10
    rows = {row["stage"]: row for row in resources.longest_jobs(values, pricer)}
    assert "embed_zeroshot" not in rows
    assert rows["embed_zeroshot_shard"]["jobs"] == 255 * 10
    for name, row in rows.items():
        assert row["over"] == 0 and row["hours"] <= limit, name
        assert row["request"].runtime <= limit * 60, name
    one = {r["stage"]: r for r in resources.longest_jobs(one_job(values), pricer)}
    startup = pricer.found.rates.startup_s / 3600
    assert rows["embed_zeroshot_shard"]["hours"] == pytest.approx(
        (one["embed_zeroshot"]["hours"] - startup) / 10 + startup
    )


def test_snakemake_rules_ask_what_the_pricer_says():
    values = params_module.load([REPO / "params.yaml"])
    pricer = resources.job_pricer(values)
    stages = {stage.name: stage for stage in STAGES}
    for name, wildcards in (
        ("embed_zeroshot", {"model": "vit-s-32-alt-random"}),
        ("attack", {"model": "resnet18-random", "attack": "pgd"}),
        ("corrupt", {"corruption": "fog", "severity": "5"}),
        ("ask", {"model": "llava-tiny-random", "asked": "objects"}),
        ("summarize", {}),
    ):
        stage = stages[name]
        asked = resources.stage_resources(stage, values, 1, pricer)
        shape = resources.shape(stage, values, 1)
        first = shape.axes[0][0] if shape.axes else None
        want = pricer.resources(shape, wildcards.get("model"), wildcards.get(first))
        assert {key: f(wildcards) for key, f in asked.items()} == {
            "runtime": want.runtime,
            "mem_mb": want.mem_mb,
            "cpus_per_task": want.cpus_per_task,
        }, name
    ask = resources.stage_resources(stages["ask"], values, 1, pricer)
    assert ask["runtime"]({"model": "llava-tiny-random", "asked": "objects"}) == 4 * 60


def test_cost_lists_the_longest_job_of_each_stage(tmp_path, capsys):
    import yaml

    from vlstress.cli import main

    one = tmp_path / "one-job.yaml"
    one.write_text(yaml.safe_dump(one_job(params_module.load([PAPER_GRID]))))
    main(["cost", "--params", str(one)])
    section = capsys.readouterr().out.split("## Jobs: what each asks the scheduler", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith("| embed_zeroshot |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1] == "255" and cells[-1] == "**102**"
    assert "102 jobs are predicted over cluster.max_job_hours (4 h)" in section
    assert "`cluster.embed_shards: 10` splits them into jobs under 4 h" in section
    main(["cost", "--params", str(PAPER_GRID)])
    section = capsys.readouterr().out.split("## Jobs: what each asks the scheduler", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith("| embed_zeroshot_shard"))
    assert row.split("|")[2].strip() == "2,550" and row.rstrip("| ").endswith("0")
    assert "over cluster.max_job_hours" not in section


def test_the_slurm_profile_keeps_only_cluster_wide_settings():
    import yaml

    profile = yaml.safe_load(Path(REPO / "workflow/profiles/slurm/config.yaml").read_text())
    assert set(profile["default-resources"]) == {"slurm_account"}


def test_the_workflow_names_what_it_cannot_price(monkeypatch, capsys):
    values = params_module.load([REPO / "params.yaml"])
    pricer = resources.job_pricer(values)
    assert pricer.unpriced == ("llava-tiny-random",)
    assert "prices no GPU job of llava-tiny-random" in capsys.readouterr().err
    from vlstress.cost import rates

    def no_rates(*_):
        raise VlstressError("benchmarks/results/bench_embedding-h100.json is not there")

    monkeypatch.setattr(rates, "load", no_rates)
    pricer = resources.job_pricer(values)
    err = capsys.readouterr().err
    assert "cannot price this grid (benchmarks/results/bench_embedding-h100.json" in err
    stage = next(stage for stage in STAGES if stage.name == "embed_zeroshot")
    asked = resources.stage_resources(stage, values, 1, pricer)
    assert asked["runtime"]({"model": "vit-s-32-alt-random"}) == 4 * 60
    assert asked["mem_mb"]({"model": "vit-s-32-alt-random"}) == 32_000


def test_the_cost_counts_a_start_up_per_shard(grid):
    """The zero-shot work of a model is 1 classifier job + one job per shard of its images."""
    values, pricer = grid
    (zeroshot,) = [w for w in pricer.found.work if w.suite == "zeroshot"]
    assert zeroshot.jobs == 1 + 10
    one = resources.job_pricer(one_job(values))
    (zeroshot,) = [w for w in one.found.work if w.suite == "zeroshot"]
    assert zeroshot.jobs == 2


def test_a_broken_input_file_leaves_the_jobs_unpriced_and_the_error_to_its_step(
    tmp_path, capsys, monkeypatch
):
    """Pricing reads the sets' sizes when the Snakefile is read: a broken caption file must not
    stop the workflow there (the step that reads it reports it), and the console says why."""
    images = tmp_path / "images"
    images.mkdir()
    captions = tmp_path / "broken-captions.json"
    captions.write_text("{not json")
    values = params_module.load([REPO / "params.yaml"])
    values["dataset"] = {
        **values["dataset"],
        "kind": "coco-dir",
        "images": str(images),
        "captions": str(captions),
    }
    from vlstress.cost.rates import DEFAULT_RATE_FILE

    monkeypatch.chdir(tmp_path)  # a fresh project: no built manifest stands in for the file
    pricer = resources.job_pricer(values, REPO / DEFAULT_RATE_FILE)
    assert pricer.found is None and "JSONDecodeError" in pricer.why
    assert "cannot price this grid (JSONDecodeError" in capsys.readouterr().err
