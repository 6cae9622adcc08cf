"""`vlstress embed-retrieval`: every retrieval set of a model in one job, unchanged sets reused.

The one-job folder must hold what the single-set commands write, and reuse must return
exactly the bytes a fresh run writes, for the sets whose inputs, model and settings are
unchanged, and only for those.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from vlstress import cli
from vlstress.pipeline import LISTS

VARIANT = "mix_lam0.5_seed1"


def run(*args) -> int:
    return cli.main([str(a) for a in args])


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, Path]:
    """Four small photos with two captions each, one image variant folder and one caption set."""
    rng = np.random.default_rng(0)
    entries = []
    for i, (h, w) in enumerate([(40, 60), (50, 50), (64, 48), (30, 70)]):
        path = tmp_path / "images" / f"img{i}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(path)
        entries.append({"image": f"img{i}.png", "path": str(path), "image_id": str(i), "caption": [f"a photo {i}", f"a picture of {i}"]})
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"dataset": "synthetic", "images": entries, "provenance": {}}))
    variant = tmp_path / "image_variants" / VARIANT
    assert run("image-variants", "--manifest", manifest, "--method", "mix", "--lam", "0.5", "--seed", "1", "--out", variant) == 0
    caption_set = tmp_path / "text_variants" / "swapped.json"
    caption_set.parent.mkdir()
    caption_set.write_text(json.dumps([{"image": e["image"], "caption": [f"a drawing {i}", f"a sketch of {i}"]} for i, e in enumerate(entries)]))
    return {"manifest": manifest, "variant": variant, "captions": caption_set}


def model_flags(arch: str, batch_size: int = 2) -> list[str]:
    return ["--model", "t", "--arch", arch, "--pretrained", "None", "--seed", "3", "--device", "cpu", "--batch-size", str(batch_size), "--threads", "1", "--workers", "0"]


def embed_all(inputs, out: Path, arch: str, reuse: Path | None, batch_size: int = 2) -> None:
    argv = ["embed-retrieval", "--manifest", inputs["manifest"], "--image-variant", inputs["variant"], "--caption-set", inputs["captions"]]
    argv += [*model_flags(arch, batch_size), "--out", out]
    if reuse is not None:
        argv += ["--reuse-dir", reuse]
    assert run(*argv) == 0


FILES = ("images.npy", "texts.npy", f"image_variants/{VARIANT}.npy", "text_variants/swapped.npy")


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def counts(caplog) -> str:
    return [r.getMessage() for r in caplog.records if "set(s) embedded" in r.getMessage()][-1]


def test_one_job_writes_what_the_single_set_commands_write(inputs, tmp_path, tiny_arch):
    out = tmp_path / "retrieval"
    embed_all(inputs, out, tiny_arch, reuse=None)
    assert sorted(files_of(out)) == sorted([*FILES, *(f"{name}.json" for name in FILES)])
    single = tmp_path / "single"
    flags = model_flags(tiny_arch)
    assert run("embed-images", "--manifest", inputs["manifest"], *flags, "--out", single / FILES[0]) == 0
    assert run("embed-texts", "--captions", inputs["manifest"], *flags, "--out", single / FILES[1]) == 0
    assert run("embed-image-variant", "--variant", inputs["variant"], *flags, "--out", single / FILES[2]) == 0
    assert run("embed-texts", "--captions", inputs["captions"], *flags, "--out", single / FILES[3]) == 0
    for name in FILES:
        # same code, batching, threads and machine: the same bytes
        assert (out / name).read_bytes() == (single / name).read_bytes(), name
        ours, theirs = (json.loads(Path(f"{folder / name}.json").read_text()) for folder in (out, single))
        assert ours["provenance"].pop("step") == "embed-retrieval"
        for meta in (ours, theirs):
            meta["provenance"].pop("command")
        theirs["provenance"].pop("step")
        assert ours == theirs, name
    assert np.load(out / FILES[2]).shape == (4, 32) and np.load(out / FILES[3]).shape == (8, 32)


def test_unchanged_sets_are_reused_byte_for_byte_and_only_they(inputs, tmp_path, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    reuse = tmp_path / "reuse"
    first, second, third = tmp_path / "first", tmp_path / "second", tmp_path / "third"
    embed_all(inputs, first, tiny_arch, reuse)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")
    embed_all(inputs, second, tiny_arch, reuse)
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused")
    assert files_of(second) == files_of(first)  # what a fresh run writes, sidecars included

    # one image of the variant changes: that set alone is embedded again, and its rows change
    image = inputs["variant"] / "images" / "img2.jpg"
    Image.fromarray(np.zeros((384, 384, 3), dtype=np.uint8)).save(image)
    embed_all(inputs, third, tiny_arch, reuse)
    assert counts(caplog).endswith("1 set(s) embedded, 3 reused")
    before, after = files_of(first), files_of(third)
    assert [name for name in before if before[name] != after[name]] == [FILES[2]]
    changed_rows = np.flatnonzero(np.any(np.load(first / FILES[2]) != np.load(third / FILES[2]), axis=1))
    assert changed_rows.tolist() == [2]

    # a setting recorded in provenance (the batch size) is part of the key: nothing is reused
    embed_all(inputs, tmp_path / "fourth", tiny_arch, reuse, batch_size=3)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")


def test_rewriting_an_output_leaves_the_reuse_entry_intact(inputs, tmp_path, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    reuse, out = tmp_path / "reuse", tmp_path / "out"
    embed_all(inputs, out, tiny_arch, reuse)
    expected = files_of(out)
    embed_all(inputs, out, tiny_arch, reuse)  # replaces the folder that shares files with the entries
    (out / FILES[0]).unlink()
    embed_all(inputs, tmp_path / "again", tiny_arch, reuse)
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused")
    assert files_of(tmp_path / "again") == expected


def test_a_damaged_reuse_entry_is_reported_and_embedded_again(inputs, tmp_path, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    reuse = tmp_path / "reuse"
    embed_all(inputs, tmp_path / "first", tiny_arch, reuse)
    entries = sorted(reuse.rglob("*.npy"))
    assert len(entries) == 4
    for entry in entries:  # cut every entry short, in place (a crash or a full disk)
        data = entry.read_bytes()
        entry.unlink()
        entry.write_bytes(data[: len(data) // 2])
    embed_all(inputs, tmp_path / "second", tiny_arch, reuse)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")
    assert sum("is damaged" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING) == 4
    assert files_of(tmp_path / "second") == files_of(tmp_path / "first")


def test_a_missing_image_is_named_before_any_model_work_and_leaves_no_output(inputs, tmp_path, tiny_arch, capsys):
    (inputs["variant"] / "images" / "img1.jpg").unlink()
    out = tmp_path / "out"
    argv = ["embed-retrieval", "--manifest", inputs["manifest"], "--image-variant", inputs["variant"], *model_flags(tiny_arch), "--out", out]
    assert run(*argv) == 2
    error = capsys.readouterr().err
    assert f"set {VARIANT}" in error and "img1.jpg" in error and "t images" not in error  # nothing embedded first
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_the_params_name_the_sets_of_the_suites_that_are_on(repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["image_variants"].update(methods=["mix", "patch"], lams=[0.9], seeds=[1, 10])
    variants = LISTS["image_variant_sets"].paths(params)
    assert variants == [f"data/image_variants/{m}_lam0.9_seed{s}" for m in ("mix", "patch") for s in (1, 10)]
    assert LISTS["text_sets"].paths(params) == [f"data/text_variants/{name}.json" for name in sorted(params["text_variants"]["sets"])]
    params["suites"].update(rococo_image=False, rococo_text=False)
    del params["image_variants"], params["text_variants"]  # a suite that is off needs no params block
    assert LISTS["image_variant_sets"].paths(params) == [] and LISTS["text_sets"].paths(params) == []
    assert LISTS["image_variant_sets"].folders(params) == [] and LISTS["image_variant_sets"].params(params) == []
