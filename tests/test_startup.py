"""A step that runs no model imports no model library (issue 26 #3, "fixed cost per job").

torch alone costs a step ~3 s and ~500 MB before it does any work; torchmetrics adds ~8 s more.
Every step of the demo's stages that runs no model (not declared on a GPU, no `models.load(` in
the code it runs) must start without torch, torchvision, open_clip, torchmetrics: its command
module and what its parser imports (one fresh interpreter), and the real command on small
fixtures for the metric steps (`evaluate`, `calibrate`, `image-variants`) and the metric
functions the other evaluations run (ECE of the prompt ablation, the stress recalls of
`evaluate-text` / `evaluate-image`), each checked on `sys.modules` at exit.
`benchmarks/bench_startup.py` measures what this saves per step.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
from test_holistic_commands import EVALUATIONS, project  # noqa: F401  (the calibrate fixture)

from vlstress.record import read_records

REPO = Path(__file__).resolve().parents[1]
MODEL_LIBRARIES = (
    "torch",
    "torchvision",
    "open_clip",
    "torchmetrics",
    "torchattacks",
    "timm",
    "transformers",
)
# No-model steps that import a model library all the same, and why (the model card imports
# open_clip, and with it torch, only to look up a hub tag: test below).
EXCEPTIONS: dict[str, str] = {}
# Prints the model libraries in sys.modules at exit (after the command, whatever its outcome).
REPORT = textwrap.dedent(
    f"""
    import atexit, json, sys
    atexit.register(
        lambda: print("LOADED " + json.dumps([m for m in {MODEL_LIBRARIES!r} if m in sys.modules]))
    )
    """
)


def loaded(stdout: str) -> list[str]:
    line = next(line for line in reversed(stdout.splitlines()) if line.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED "))


def python(code: str, *argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", REPORT + textwrap.dedent(code), *map(str, argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def vlstress(*argv: str, cwd: Path) -> list[str]:
    """Run `vlstress ARGV` in a fresh interpreter (as a step runs); the model libraries it
    loaded."""
    done = python("from vlstress.cli import main\nsys.exit(main(sys.argv[1:]))\n", *argv, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return loaded(done.stdout)


def runs_a_model(stage) -> bool:
    """Declared on a GPU, or the code its command runs creates a model."""
    from vlstress.code_deps import dependencies
    from vlstress.pipeline import stage_modules

    if stage.gpu:
        return True
    files = {path for module in stage_modules(stage) for path in dependencies(module)}
    return any(path.suffix == ".py" and "models.load(" in path.read_text() for path in files)


def no_model_subcommands() -> list[str]:
    from vlstress.pipeline import active_stages

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    stages = active_stages(params)
    model = {stage.subcommand for stage in stages if runs_a_model(stage)}
    return sorted({stage.subcommand for stage in stages} - model - set(EXCEPTIONS))


def test_the_demo_has_no_model_steps_and_model_steps():
    found = no_model_subcommands()
    assert {"evaluate", "evaluate-texts", "evaluate-images", "image-variants", "calibrate"} <= set(
        found
    )
    assert {
        "prompt-ablation",
        "autoclip",
        "evaluate-testsets",
        "evaluate-zeroshot",
        "ood-detect-sets",
        "summarize",
    } <= set(found)
    assert not {"embed-retrieval", "embed-zeroshot", "attack", "ei-scores", "text-stats"} & set(
        found
    )


def test_no_model_command_modules_import_no_model_library():
    """Each command module as a step loads it (`cli.build_parser(sub)`), one after the other in
    one interpreter: the first that brings a model library in is named."""
    done = python(
        """
        from vlstress.cli import build_parser
        for name in sys.argv[1:]:
            build_parser(name)
            found = [m for m in MODEL_LIBRARIES if m in sys.modules]
            if found:
                sys.exit(f"{name}: {found}")
        """.replace("MODEL_LIBRARIES", repr(MODEL_LIBRARIES)),
        *no_model_subcommands(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert loaded(done.stdout) == []


def write_embeddings(path: Path, rows: np.ndarray) -> None:
    model = {"slug": "toy", "arch": "toy-arch", "weights_label": "random-init (seed 0)", "seed": 0}
    np.save(path, rows.astype(np.float32))
    Path(f"{path}.json").write_text(
        json.dumps({"provenance": {"model": model, "seed": 0, "device": "cpu"}})
    )


def test_evaluate_runs_without_torch(tmp_path):
    rng = np.random.default_rng(0)
    images = [
        {"image": f"i{i}", "path": f"i{i}", "caption": [f"c{i}a", f"c{i}b"]} for i in range(6)
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"dataset": "toy", "images": images}))
    write_embeddings(tmp_path / "images.npy", rng.normal(size=(6, 8)))
    write_embeddings(tmp_path / "texts.npy", rng.normal(size=(12, 8)))
    argv = ["evaluate", "--manifest", "manifest.json", "--image-emb", "images.npy"]
    assert vlstress(*argv, "--text-emb", "texts.npy", "--out", "m.json", cwd=tmp_path) == []
    record = json.loads((tmp_path / "m.json").read_text())
    assert set(record["metrics"]) == {f"{d}_R@{k}" for d in ("i2t", "t2i") for k in (1, 5, 10)}


def test_calibrate_runs_without_torch(project):  # noqa: F811  (the fixture imported above)
    argv = ["calibrate", "--params", "params.yaml", "--model", "m", *EVALUATIONS]
    argv += ["--in-distribution", "objects", "--out", "cal.json", "--out-fig", "rel.png"]
    assert vlstress(*argv, cwd=project) == []
    records = read_records(project / "cal.json")
    assert len(records) == 2 and all(0.0 <= r.metrics["ece"] <= 100.0 for r in records)


@pytest.mark.parametrize("method", ["mix", "patch"])
def test_image_variants_run_without_torch(tmp_path, method):
    rng = np.random.default_rng(0)
    entries = []
    for i in range(3):
        path = tmp_path / f"img{i}.png"
        Image.fromarray(rng.integers(0, 256, (20 + i, 30, 3), dtype=np.uint8)).save(path)
        entries.append(
            {"image": path.name, "path": str(path), "image_id": str(i), "caption": [f"photo {i}"]}
        )
    (tmp_path / "manifest.json").write_text(json.dumps({"dataset": "toy", "images": entries}))
    argv = ["image-variants", "--manifest", "manifest.json", "--method", method, "--lam", "0.9"]
    assert vlstress(*argv, "--seed", "1", "--out", "variant", cwd=tmp_path) == []
    assert len(list((tmp_path / "variant" / "images").glob("*.jpg"))) == 3


def test_the_metrics_of_the_other_evaluations_run_without_torch():
    """The stress recalls of `evaluate-text` / `evaluate-image`, the prompt ablation's top-1, ECE,
    NLL and MCM detection, calibration's ECE and temperature."""
    done = python(
        """
        import numpy as np
        from vlstress.retrieval_metrics import stress_recalls
        from vlstress.suites.calibration import calibration
        from vlstress.suites.prompts.ablation import classification, detection

        rng = np.random.default_rng(0)
        q, g, d = (rng.normal(size=(n, 8)).astype(np.float32) for n in (5, 5, 5))
        for ties in ("optimistic", "pessimistic"):
            stress_recalls(q, g, [[i] for i in range(5)], d, prefix="i2t", ties=ties)
        cosines, labels = rng.normal(size=(20, 4)), rng.integers(0, 4, size=20)
        classification(cosines, labels, 10.0, 15)
        detection(cosines, rng.normal(size=(7, 4)))
        calibration.calibration_metrics(
            10 * cosines, labels, calibration.fit_temperature(10 * cosines, labels)
        )
        """
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert loaded(done.stdout) == []


def test_the_model_card_of_a_random_init_or_checkpoint_model_imports_no_torch(tmp_path):
    """The card checks the architecture against open_clip's config files without importing it;
    only a hub tag needs open_clip's registry (and the weights download needs torch anyway)."""
    checkpoint = tmp_path / "weights.safetensors"
    checkpoint.write_bytes(b"not read by the card")
    for weights in ("None", str(checkpoint)):
        card = tmp_path / "card.json"
        argv = ("--model", "m", "--arch", "ViT-B-32", "--pretrained", weights, "--out", card)
        assert vlstress("model-card", *argv, cwd=REPO) == []
        assert json.loads(card.read_text())["model"]["arch"] == "ViT-B-32"
    done = python(
        "from vlstress.cli import main\nsys.exit(main(sys.argv[1:]))\n",
        *("model-card", "--model", "m", "--arch", "ViT-Q-99", "--out", tmp_path / "bad.json"),
    )
    assert done.returncode == 2 and "unknown open_clip architecture 'ViT-Q-99'" in done.stderr
    assert loaded(done.stdout) == [] and not (tmp_path / "bad.json").exists()
