"""The assistant suite end to end in both front ends (slow tier): a tiny CLIP whose confusions make
the options, two tiny LLaVAs (the seeded random init built from a config, and one saved to a folder
as `save_pretrained` writes it), Snakemake in one fresh copy and `dvc repro` in another. Checks
what must hold whatever the weights: the same questions for every model, every assistant's answers
counted (right, wrong, unparseable), the CLIP's choice among its own confusions equal to its
zero-shot top-1, the same records in both front ends, the table and figure, nothing left to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import committed_copy, finetune_off, run_ok, tool_env

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("dvc")
pytest.importorskip("transformers")

ASSISTANTS = ("llava-random", "llava-folder")


@pytest.fixture(scope="module")
def built(module_tmp) -> dict:
    from vlstress.embedding import llava_models

    folder = module_tmp.mktemp("llava") / "tiny-llava-seed1"
    model, processor = llava_models.tiny(seed=1)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    env = tool_env(module_tmp.mktemp("model-configs"))

    def small(params: dict) -> dict:
        finetune_off(params)
        params["suites"] = {name: False for name in params["suites"]} | {
            "zeroshot": True,
            "assistant": True,
        }
        params["dataset"]["max_images"] = 3
        params["models"] = {
            "tiny": {"arch": "vlstress-tiny", "pretrained": None},
            "llava-random": {"arch": "llava:tiny", "pretrained": None},
            "llava-folder": {"arch": "llava", "pretrained": str(folder)},
        }
        params["embed"].update(threads=1, workers=0)
        params["zeroshot"]["testsets"]["objects"]["max_per_class"] = 2
        params["zeroshot"].update(templates="single", imagenet_maps=None)
        params["zeroshot"]["robustness"]["mce_baseline"] = None
        params["assistant"].update(options_from="tiny", options=3, batch_size=4)
        return params

    roots = {}
    for tool, cmd in (("snakemake", ("snakemake", "--cores", "2")), ("dvc", ("dvc", "repro"))):
        roots[tool] = committed_copy(module_tmp.mktemp(tool) / "repo", small)
        run_ok(*cmd, cwd=roots[tool], env=env)
    return {"roots": roots, "env": env}


def _records(root: Path) -> dict[str, dict]:
    metrics = root / "results/metrics"
    found = {slug: metrics / slug / "assistant-objects.json" for slug in ASSISTANTS}
    found["tiny"] = metrics / "tiny/options-objects.json"
    return {slug: json.loads(path.read_text()) for slug, path in found.items()}


def test_every_model_answers_the_same_questions(built):
    root = built["roots"]["snakemake"]
    asked = json.loads((root / "data/assistant/objects.json").read_text())
    manifest = json.loads((root / "data/testsets/objects/manifest.json").read_text())
    assert [q["path"] for q in asked["questions"]] == [e["path"] for e in manifest["images"]]
    assert asked["options_from"]["slug"] == "tiny" and asked["n_options"] == 3
    for q in asked["questions"]:
        assert len(set(q["options"])) == 3 and q["label"] in q["options"]
    records = _records(root)
    for slug, record in records.items():
        assert record["task"] == "multiple_choice"
        assert record["condition"] == {"options": 3, "options_from": "tiny", "format": "letters"}
        m = record["metrics"]
        assert m["n_questions"] == len(asked["questions"])
        assert m["accuracy"] == pytest.approx(100 * m["n_correct"] / m["n_questions"])
        assert m["unparseable"] == pytest.approx(100 * m["n_unparseable"] / m["n_questions"])
        replies = json.loads((root / f"results/metrics/{slug}/").joinpath(
            "options-objects.json.json" if slug == "tiny" else "assistant-objects.json.json"
        ).read_text())["questions"]  # fmt: skip
        assert [r["answer"] for r in replies] == [q["answer"] for q in asked["questions"]]
        assert sum(r["correct"] for r in replies) == m["n_correct"]
        assert sum(r["chosen"] is None for r in replies) == m["n_unparseable"]
        if slug in ASSISTANTS:
            assert all("reply" in r for r in replies)
            assert record["provenance"]["model"]["kind"] == "llava"
            assert record["provenance"]["params"]["decoding"] == "greedy"
    assert records["tiny"]["metrics"]["n_unparseable"] == 0  # a classifier always picks one
    assert records["llava-folder"]["model"]["weights"].startswith("folder:")
    assert records["llava-random"]["model"]["weights"] == "random-init (seed 0)"


def test_a_classifier_among_its_own_confusions_scores_its_top1(built):
    """The wrong options are the CLIP's highest-scoring wrong classes, so its pick among them is
    its top class whenever that is wrong, and the truth otherwise."""
    root = built["roots"]["snakemake"]
    (zeroshot,) = [json.loads((root / "results/metrics/tiny/zeroshot-objects.json").read_text())]
    zeroshot = zeroshot[0] if isinstance(zeroshot, list) else zeroshot
    choice = _records(root)["tiny"]["metrics"]["accuracy"]
    assert choice == pytest.approx(zeroshot["metrics"]["top1"])


def test_both_front_ends_agree_and_have_nothing_to_do(built):
    roots, env = built["roots"], built["env"]
    questions = {
        tool: (r / "data/assistant/objects.json").read_bytes() for tool, r in roots.items()
    }
    assert questions["snakemake"] == questions["dvc"]
    metrics = {tool: {s: r["metrics"] for s, r in _records(root).items()}
               for tool, root in roots.items()}  # fmt: skip
    assert metrics["snakemake"] == metrics["dvc"]
    for root in roots.values():
        table = (root / "results/tables/assistant.md").read_text()
        assert "objects accuracy" in table and "objects unparseable" in table
        assert "| assistant" in table and "| CLIP" in table
        assert (root / "results/figures/multiple_choice.png").stat().st_size > 10_000
        assert "Nothing to be done" in run_ok("snakemake", "-n", cwd=root, env=env)
        assert "up to date" in run_ok("dvc", "status", cwd=root, env=env)
    # no embedding step ran for an assistant
    assert not (roots["snakemake"] / "results/embeddings/llava-random").exists()
