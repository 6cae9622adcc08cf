"""`vlstress evaluate-testsets`: every clean test set of one model in one job writes what
`vlstress evaluate-zeroshot` writes for each set, and nothing when one set is bad. Hand-made
embeddings (the `project` of the command tests: test sets objects and noisy); no model runs."""

from __future__ import annotations

import numpy as np
import pytest
from test_holistic_commands import call, project  # noqa: F401  (project: objects and noisy)

from vlstress.outcomes import read_outcomes
from vlstress.record import read_record

SETS = ("noisy", "objects")


def _evaluate_testsets(capsys):
    return call(
        capsys, "evaluate-testsets", "--params", "params.yaml", "--model", "m", "--out-dir", "out"
    )


def test_evaluate_testsets_writes_what_evaluate_zeroshot_writes_for_each_set(project, capsys):  # noqa: F811
    code, err = _evaluate_testsets(capsys)
    assert code == 0, err
    assert sorted(p.name for p in (project / "out").iterdir()) == [
        f"zeroshot-{name}.{ext}" for name in SETS for ext in ("json", "json.json", "outcomes.npz")
    ]
    top1 = {}
    for name in SETS:
        code, err = call(
            capsys,
            "evaluate-zeroshot",
            *("--testset", f"data/testsets/{name}"),
            *("--image-emb", f"results/embeddings/m/zeroshot/testsets/{name}.npy"),
            *("--classifier", f"results/embeddings/m/classifiers/{name}.npy"),
            *("--out", f"one-{name}.json"),
        )
        assert code == 0, err
        got, want = (
            read_record(project / f"out/zeroshot-{name}.json"),
            read_record(project / f"one-{name}.json"),
        )
        assert (got.task, got.condition, got.dataset) == (want.task, want.condition, want.dataset)
        assert got.metrics == want.metrics
        assert (project / f"out/zeroshot-{name}.json.json").read_bytes() == (
            project / f"one-{name}.json.json"
        ).read_bytes()
        [a], [b] = (
            read_outcomes(project / f"out/zeroshot-{name}.outcomes.npz"),
            read_outcomes(project / f"one-{name}.outcomes.npz"),
        )
        np.testing.assert_array_equal(a.column("correct"), b.column("correct"))
        top1[name] = got.metrics["top1"]
    # objects: 3 of 4 images near their class (every 4th on a wrong one); noisy: far more noise
    assert top1["objects"] == pytest.approx(75.0)
    assert top1["noisy"] < top1["objects"]


def test_evaluate_testsets_writes_nothing_when_one_set_is_bad(project, capsys):  # noqa: F811
    (project / "results/embeddings/m/zeroshot/testsets/objects.npy").unlink()
    code, err = _evaluate_testsets(capsys)
    assert code == 2 and "objects.npy" in err
    assert not (project / "out").exists()
