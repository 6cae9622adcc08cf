"""`vlstress embed-retrieval`: every retrieval set of a model in one job, unchanged sets reused.

The one-job folder must hold what the single-set commands write, and reuse must return
exactly the bytes a fresh run writes, for the sets whose inputs, model and settings are
unchanged, and only for those.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from vlstress import cli
from vlstress.pipeline import LISTS

VARIANT = "mix_lam0.5_seed1"


def run(*args) -> int:
    """The command as the workflow runs it: provenance records sys.argv, so it is part of the reuse key."""
    argv = [str(a) for a in args]
    saved = sys.argv
    sys.argv = ["vlstress", *argv]
    try:
        return cli.main(argv)
    finally:
        sys.argv = saved


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


def model_flags(arch: str, batch_size: int = 2, seed: int = 3) -> list[str]:
    return ["--model", "t", "--arch", arch, "--pretrained", "None", "--seed", str(seed), "--device", "cpu", "--batch-size", str(batch_size),
            "--threads", "1", "--workers", "0"]  # fmt: skip


def embed_all(inputs, out: Path, arch: str, reuse: Path | None, batch_size: int = 2, seed: int = 3) -> None:
    argv = ["embed-retrieval", "--manifest", inputs["manifest"], "--image-variant", inputs["variant"], "--caption-set", inputs["captions"]]
    argv += [*model_flags(arch, batch_size, seed), "--out", out]
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
    reuse, out = tmp_path / "reuse", tmp_path / "retrieval"  # the workflow reruns the same command line
    embed_all(inputs, out, tiny_arch, reuse)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")
    first = files_of(out)
    embed_all(inputs, out, tiny_arch, reuse)
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused")
    assert files_of(out) == first  # what a fresh run writes, sidecars included

    # one image of the variant changes: that set alone is embedded again, and only that image's row changes
    before = np.load(out / FILES[2])
    Image.fromarray(np.zeros((384, 384, 3), dtype=np.uint8)).save(inputs["variant"] / "images" / "img2.jpg")
    embed_all(inputs, out, tiny_arch, reuse)
    assert counts(caplog).endswith("1 set(s) embedded, 3 reused")
    after = files_of(out)
    assert [name for name in first if first[name] != after[name]] == [FILES[2]]
    assert np.flatnonzero(np.any(before != np.load(out / FILES[2]), axis=1)).tolist() == [2]


@pytest.mark.parametrize("change", ["batch size", "model seed", "embedding code", "command line"])
def test_what_the_bytes_depend_on_is_in_the_key(inputs, tmp_path, tiny_arch, caplog, monkeypatch, change):
    caplog.set_level(logging.INFO)
    reuse, out = tmp_path / "reuse", tmp_path / "retrieval"
    embed_all(inputs, out, tiny_arch, reuse)
    options = {"batch_size": 2, "seed": 3}
    if change == "batch size":
        options["batch_size"] = 3
    elif change == "model seed":
        options["seed"] = 4
    elif change == "embedding code":
        from vlstress.pipeline import code_deps

        real = code_deps.digest
        monkeypatch.setattr(code_deps, "digest", lambda module: real(module)[::-1])
    else:
        out = tmp_path / "elsewhere"  # the sidecar records the command line
    embed_all(inputs, out, tiny_arch, reuse, **options)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")


def test_rewriting_an_output_leaves_the_reuse_entry_intact(inputs, tmp_path, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    reuse, out = tmp_path / "reuse", tmp_path / "out"
    embed_all(inputs, out, tiny_arch, reuse)
    expected = files_of(out)
    embed_all(inputs, out, tiny_arch, reuse)  # replaces the folder that shares files with the entries
    (out / FILES[0]).unlink()
    for entry in reuse.rglob("*.npy*"):
        entry.chmod(0o444)  # read-only, as DVC protects its cache; a hard link shares the mode
    embed_all(inputs, out, tiny_arch, reuse)
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused")
    assert files_of(out) == expected
    assert {oct(entry.stat().st_mode & 0o777) for entry in reuse.rglob("*.npy*")} == {"0o444"}  # placing never chmods


@pytest.mark.parametrize("damage", ["cut short", "one bit flipped", "sidecar edited"])
def test_a_damaged_reuse_entry_is_reported_and_embedded_again(inputs, tmp_path, tiny_arch, caplog, damage):
    caplog.set_level(logging.INFO)
    reuse, out = tmp_path / "reuse", tmp_path / "out"
    embed_all(inputs, out, tiny_arch, reuse)
    expected = files_of(out)
    entries = sorted(reuse.rglob("*.npy"))
    assert len(entries) == 4
    for entry in entries:  # damaged in place: the outputs that were hard links to them must not be used either
        target = entry if damage != "sidecar edited" else Path(f"{entry}.json")
        data = bytearray(target.read_bytes())
        target.unlink()
        if damage == "cut short":
            data = data[: len(data) // 2]
        elif damage == "one bit flipped":
            data[-3] ^= 1  # inside the last float: the shape still reads right
        else:
            data = data.replace(b'"kind"', b'"kind "')
        target.write_bytes(bytes(data))
    embed_all(inputs, out, tiny_arch, reuse)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")
    assert sum("cannot be used" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING) == 4
    assert files_of(out) == expected
    embed_all(inputs, out, tiny_arch, reuse)  # the entries were written again, intact
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused")


def test_a_reuse_folder_that_cannot_be_written_costs_reuse_not_the_run(inputs, tmp_path, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    reuse = tmp_path / "reuse"
    reuse.write_text("a file where the folder should be")
    embed_all(inputs, tmp_path / "out", tiny_arch, reuse)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")
    assert sum("could not keep" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING) == 4
    embed_all(inputs, tmp_path / "plain", tiny_arch, None)
    arrays = [{name: data for name, data in files_of(tmp_path / folder).items() if name.endswith(".npy")} for folder in ("out", "plain")]
    assert arrays[0] == arrays[1] and len(arrays[0]) == 4


def test_two_sets_with_one_name_are_refused(inputs, tmp_path, tiny_arch, capsys):
    other = tmp_path / "other" / "swapped.json"
    other.parent.mkdir()
    other.write_bytes(inputs["captions"].read_bytes())
    argv = ["embed-retrieval", "--manifest", inputs["manifest"], "--caption-set", inputs["captions"], "--caption-set", other]
    assert run(*argv, *model_flags(tiny_arch), "--out", tmp_path / "out") == 2
    assert "text_variants/swapped.npy" in capsys.readouterr().err and not (tmp_path / "out").exists()


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
