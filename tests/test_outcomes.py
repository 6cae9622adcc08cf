"""The per-item outcomes file beside a record: round trip, same bytes for the same outcomes, and
clear errors for a missing, corrupt or foreign file."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from vlstress.errors import VlstressError
from vlstress.outcomes import Outcomes, outcomes_path, read_outcomes, write_outcomes


def _blocks() -> list[Outcomes]:
    return [
        Outcomes(
            "image",
            {
                "correct": np.array([True, False, True]),
                "truth_rank": np.array([1, 4, 1], dtype=np.int32),
            },
        ),
        Outcomes("image", {"score": np.array([0.5, -1.25]), "is_ood": np.array([False, True])}),
    ]


def test_the_path_sits_beside_the_record() -> None:
    assert outcomes_path("results/metrics/m/zeroshot-demo.json").as_posix() == (
        "results/metrics/m/zeroshot-demo.outcomes.npz"
    )


def test_a_round_trip_keeps_every_block_column_and_dtype(tmp_path) -> None:
    path = tmp_path / "r.outcomes.npz"
    write_outcomes(path, _blocks())
    found = read_outcomes(path)
    assert [block.unit for block in found] == ["image", "image"]
    assert found[0].n == 3 and found[1].n == 2
    assert found[0].column("correct").dtype == np.bool_
    assert found[0].column("truth_rank").tolist() == [1, 4, 1]
    assert found[1].column("score").tolist() == [0.5, -1.25]
    # np.load reads it with no pickle, as any numpy user would
    with np.load(path, allow_pickle=False) as archive:
        assert archive["1/is_ood"].tolist() == [False, True]


def test_the_same_outcomes_give_the_same_bytes(tmp_path) -> None:
    write_outcomes(tmp_path / "a.npz", _blocks())
    write_outcomes(tmp_path / "b.npz", _blocks())
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.npz") as archive:
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(VlstressError, match="different lengths"):
        Outcomes("image", {"correct": np.array([True]), "truth_rank": np.array([1, 2])})


def test_a_missing_corrupt_or_foreign_file_is_named(tmp_path) -> None:
    with pytest.raises(VlstressError, match="no such file"):
        read_outcomes(tmp_path / "none.outcomes.npz")
    broken = tmp_path / "broken.outcomes.npz"
    broken.write_bytes(b"not a zip")
    with pytest.raises(VlstressError, match="broken.outcomes.npz: not a readable"):
        read_outcomes(broken)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, header=np.array(['{"schema": "other/1", "blocks": []}']))
    with pytest.raises(VlstressError, match="schema 'other/1'"):
        read_outcomes(foreign)


def test_a_block_shorter_than_its_header_is_refused(tmp_path) -> None:
    path = tmp_path / "r.outcomes.npz"
    header = (
        '{"schema": "vlstress.outcomes/1", "blocks": [{"unit": "image", "n": 5, "columns": ["c"]}]}'
    )
    np.savez(path, header=np.array([header]), **{"0/c": np.array([1, 2])})
    with pytest.raises(VlstressError, match="block 0 has 2 items, its header says 5"):
        read_outcomes(path)


def test_nothing_is_written_for_no_blocks(tmp_path) -> None:
    with pytest.raises(VlstressError, match="nothing to write"):
        write_outcomes(tmp_path / "r.npz", [])
    assert not list(tmp_path.iterdir())
