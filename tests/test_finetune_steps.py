"""The fine-tuning steps as a user runs them: the test set kept out of training, the comparison
table, and `vlstress finetune` itself (a tiny CLIP registered through VLSTRESS_MODEL_CONFIGS): a
kill -9 resumed to the uninterrupted weights, and data-parallel processes under torchrun."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.finetune.split import check_disjoint, without_test
from vlstress.suites.finetune.table import Finetuned, comparison

from conftest import REPO, TINY_CLIP, run_cli

COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 200, 40),
    "blue": (30, 40, 220),
    "yellow": (230, 220, 30),
}


def photo(path: Path, colour, seed: int) -> Path:
    pixels = np.random.default_rng(seed).integers(0, 60, (40, 40, 3), dtype=np.uint8)
    pixels[10:30, 10:30] = colour
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)
    return path


def entry(path: Path, name: str, captions: list[str]) -> dict:
    return {"image": name, "path": str(path), "image_id": "1", "caption": captions}


# ------------------------------------------------------------------ the test set stays out


def test_train_split_removes_test_images_and_captions(tmp_path):
    test = [
        entry(
            photo(tmp_path / "test/a.png", (1, 2, 3), 0),
            "000000022192.jpg",
            ["A red square on grey."],
        )
    ]
    same_bytes = tmp_path / "train/copy.png"
    same_bytes.parent.mkdir()
    shutil.copyfile(test[0]["path"], same_bytes)
    train = [
        entry(same_bytes, "copy.png", ["Another caption."]),  # the test photo under another name
        # the same COCO id
        entry(
            photo(tmp_path / "train/b.png", (9, 9, 9), 1), "COCO_train2014_000000022192.jpg", ["x"]
        ),
        # a test caption
        entry(
            photo(tmp_path / "train/c.png", (7, 7, 7), 2),
            "c.png",
            ["a red  SQUARE on grey.", "A green dot."],
        ),
    ]
    kept, counts = without_test(train, test)
    assert [e["image"] for e in kept] == ["c.png"] and kept[0]["caption"] == ["A green dot."]
    assert counts == {
        "train_images": 3,
        "kept_images": 1,
        "test_images_removed": 2,
        "test_captions_removed": 1,
    }
    check_disjoint(kept, test)
    for leaking in train:
        with pytest.raises(VlstressError, match="leak the test set"):
            check_disjoint([leaking], test)
    with pytest.raises(VlstressError, match="no training image left"):
        without_test(train[:2], test)


def test_coco_mini_trains_on_its_photos_that_are_not_karpathy_test_photos(shared_data, tmp_path):
    """Offline training data: every coco-mini photo of a COCO captions file, less the Karpathy test
    photos of the coco-mini recipe (the workflow's train_download, train_prepare, train_split)."""
    import yaml

    recipe = yaml.safe_load((REPO / "params.coco-mini.yaml").read_text())["dataset"]
    test_ids = {int(i) for i in recipe["image_ids"].split(",")}
    images, rococo = shared_data / "coco-mini" / "images", shared_data / "rococo"
    run_cli(
        "download",
        "--dataset",
        "test",
        "--kind",
        "karpathy",
        "--images",
        str(images),
        "--image-ids",
        recipe["image_ids"],
        "--karpathy-url",
        str(rococo / "coco_karpathy_test.json"),
        "--rococo-url",
        str(rococo),
        "--out",
        "raw-test",
        cwd=tmp_path,
    )
    run_cli("prepare", "--dataset", "test", "--raw", "raw-test", "--out", "test.json", cwd=tmp_path)
    for split in ("train2017", "val2017"):
        captions = shared_data / "coco-mini" / "annotations" / f"captions_{split}.json"
        listed = {image["id"] for image in json.loads(captions.read_text())["images"]}
        run_cli(
            "download",
            "--dataset",
            split,
            "--kind",
            "coco-dir",
            "--images",
            str(images),
            "--captions",
            str(captions),
            "--out",
            f"raw-{split}",
            cwd=tmp_path,
        )
        run_cli(
            "prepare",
            "--dataset",
            split,
            "--raw",
            f"raw-{split}",
            "--out",
            f"all-{split}.json",
            cwd=tmp_path,
        )
        run_cli(
            "train-split",
            "--train",
            f"all-{split}.json",
            "--test",
            "test.json",
            "--out",
            f"train-{split}.json",
            cwd=tmp_path,
        )
        kept = {
            int(entry["image_id"])
            for entry in json.loads((tmp_path / f"train-{split}.json").read_text())["images"]
        }
        # the captions file holds test photos: the split has something to remove
        assert listed & test_ids
        assert kept == listed - test_ids


def test_the_comparison_table_is_base_and_variants_by_method_with_their_changes():
    rows = []
    for model, r1, false_r1, top1 in (
        ("base", 40.0, 30.0, 20.0),
        ("base+sc", 42.0, 10.0, 18.0),
        ("base+wise", 41.0, 20.0, 19.0),
        ("base+lora", 40.5, 25.0, 20.5),
        ("other", 1.0, 1.0, 1.0),
    ):
        rows += [
            {
                "model": model,
                "task": "retrieval",
                "dataset": "d",
                "condition_json": "{}",
                "metric": "i2t_R@1",
                "mean": r1,
            },
            {
                "model": model,
                "task": "text-stress",
                "dataset": "d",
                "condition_json": '{"set": "danger"}',
                "metric": "i2t_false_R@1",
                "mean": false_r1,
            },
            {
                "model": model,
                "task": "zeroshot",
                "dataset": "objects",
                "condition_json": "{}",
                "metric": "top1",
                "mean": top1,
            },
        ]
    agg = pd.DataFrame(rows)
    sc = ("SC/VC", "sc", "base+sc", "w_sc 1, w_vc 0")
    values, changes, notes = comparison(
        agg,
        "base",
        [
            Finetuned("wise 0.5", "base+wise", "WiSE-FT", "alpha 0.5 towards sc"),
            Finetuned(*sc[1:3], *(sc[0], sc[3])),
            Finetuned("vc", "base+vc", "SC/VC", "w_sc 0, w_vc 1"),
            Finetuned("lora", "base+lora", "SC/VC + LoRA", "w_sc 1, w_vc 0, rank 4"),
        ],
    )
    # other models are not part of it; the base first, then grouped by method
    assert list(values.index.get_level_values("model")) == [
        "base",
        "base+sc",
        "base+lora",
        "base+wise",
    ]
    assert list(values.index.get_level_values("method")) == [
        "base",
        "SC/VC",
        "SC/VC + LoRA",
        "WiSE-FT",
    ]
    assert values.loc[sc, "text danger false R@1"] == 10.0
    assert changes.loc[sc, "text danger false R@1"] == -20.0
    assert changes.xs("base+wise", level="model")["text danger false R@1"].item() == -10.0
    # what robustness costs elsewhere
    assert changes.loc[sc, "zero-shot objects top-1"] == -2.0
    assert changes.xs("base+lora", level="model")["zero-shot objects top-1"].item() == 0.5
    # a variant may be called `base`: the base row is the base method's
    named_base = comparison(agg, "base", [Finetuned("base", "base+sc", "SC/VC", "w_sc 1, w_vc 0")])[
        1
    ]
    assert list(named_base.index.get_level_values("variant")) == ["base"]
    assert "image mix R@1" not in values  # no image-stress records: no column
    assert notes == ["fine-tuned model 'base+vc' (vc) has no records yet"]


# ------------------------------------------------------------------ vlstress finetune


@pytest.fixture(scope="module")
def cli_env(module_tmp):
    folder = module_tmp.mktemp("configs")
    (folder / "vlstress-tiny.json").write_text(json.dumps(TINY_CLIP))
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "VLSTRESS_MODEL_CONFIGS": str(folder),
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "PYTHONUNBUFFERED": "1",
    }


def vlstress(*args: str, cwd: Path, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "vlstress", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"vlstress {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}"
        )
    return result


@pytest.fixture(scope="module")
def inputs(module_tmp, cli_env) -> Path:
    """Training manifest (12 photos, 2 captions each), its caption set (one word replaced), a test
    manifest, a tiny model card."""
    root = module_tmp.mktemp("finetune")
    train, variants = [], []
    for i, (name, colour) in enumerate(list(COLOURS.items()) * 3):
        path = photo(root / "train" / f"{i}.png", colour, i)
        captions = [f"a {name} square", f"a {name} box on grey"]
        train.append({**entry(path, f"{i}.png", captions), "image_id": str(i)})
        variants.append(
            {
                "image": f"{i}.png",
                "caption": [*captions, "a purple square", f"a {name} cat on grey"],
            }
        )
    (root / "train.json").write_text(json.dumps({"dataset": "train", "images": train}))
    (root / "train_captions.json").write_text(json.dumps(variants))
    test = [entry(photo(root / "test/t.png", (5, 5, 5), 99), "t.png", ["a black square"])]
    (root / "test.json").write_text(json.dumps({"dataset": "test", "images": test}))
    vlstress(
        "model-card",
        "--model",
        "tiny",
        "--arch",
        "vlstress-tiny",
        "--pretrained",
        "None",
        "--out",
        "card.json",
        cwd=root,
        env=cli_env,
    )
    return root


def finetune_args(out: str, steps: int, *extra: str) -> list[str]:
    return [
        "finetune",
        "--train",
        "train.json",
        "--train-captions",
        "train_captions.json",
        "--test",
        "test.json",
        "--model-card",
        "card.json",
        "--device",
        "cpu",
        "--threads",
        "1",
        "--variant",
        "sc_vc",
        "--steps",
        str(steps),
        "--train-batch-size",
        "8",
        "--lr",
        "1e-3",
        "--warmup",
        "2",
        "--checkpoint-every",
        "5",
        "--out",
        f"{out}/model.safetensors",
        "--out-log",
        f"{out}/log.csv",
        *extra,
    ]


def test_finetune_refuses_a_training_set_holding_a_test_image(inputs, cli_env, tmp_path):
    leaky = json.loads((inputs / "train.json").read_text())
    leaky["images"].append(
        {**leaky["images"][0], "path": str(inputs / "test/t.png"), "image": "t2.png"}
    )
    (inputs / "leaky.json").write_text(json.dumps(leaky))
    args = finetune_args(str(tmp_path / "out"), 2)
    args[args.index("train.json")] = "leaky.json"
    result = vlstress(*args, cwd=inputs, env=cli_env, check=False)
    assert (
        result.returncode == 2
        and "is a test image" in result.stderr
        and "Traceback" not in result.stderr
    )
    assert not (tmp_path / "out").exists()


def test_flyp_and_standard_train_on_a_class_set_and_refuse_one_with_a_test_image(inputs, cli_env):
    """`--loss flyp`: a labelled folder (`vlstress testset`) and prompts of its classes; the
    sidecar says FLYP, without SC/VC settings; a class set holding a test photo is refused, and
    so is FLYP without a class set. `--loss standard` writes a head of the set's classes."""
    folder = class_set(inputs, cli_env)
    leaky = inputs / "leaky_classes"
    shutil.copytree(folder, leaky)
    shutil.copy(inputs / "test/t.png", leaky / next(iter(COLOURS)) / "t.png")
    vlstress(
        "testset", "--name", "leaky", "--kind", "imagefolder", "--root", str(leaky),
        "--out", "sets/leaky", cwd=inputs, env=cli_env,
    )  # fmt: skip
    flyp = ["--loss", "flyp", "--variant", "flyp", "--templates", "single"]
    args = labelled_args("flyp", 2)
    vlstress(*args, "--classes", "sets/classes", *flyp, cwd=inputs, env=cli_env)
    meta = json.loads((inputs / "flyp/model.safetensors.json").read_text())
    training = meta["training"]
    assert (training["loss"], training["templates"], training["images"]) == ("flyp", "single", 4)
    assert training["classes"] == 4 and not {"w_sc", "w_vc", "method", "lam"} & set(training)
    assert (inputs / "flyp/log.csv").read_text().splitlines()[0] == "step,lr,clip,total"
    refused = vlstress(
        *args, "--classes", "sets/leaky", *flyp, cwd=inputs, env=cli_env, check=False
    )
    assert refused.returncode == 2 and "t.png is a test image" in refused.stderr
    bare = vlstress(*args, *flyp, cwd=inputs, env=cli_env, check=False)
    assert bare.returncode == 2 and "--loss flyp needs --classes" in bare.stderr
    # standard: the same class set, a head of its classes written into the checkpoint
    standard = [a.replace("flyp", "standard") for a in args]  # the variant and the outputs
    vlstress(*standard, "--classes", "sets/classes", "--loss", "standard", cwd=inputs, env=cli_env)
    meta = json.loads((inputs / "standard/model.safetensors.json").read_text())["training"]
    assert (meta["loss"], meta["head_templates"], meta["classes"]) == ("standard", 7, 4)
    assert (inputs / "standard/log.csv").read_text().startswith("step,lr,ce,accuracy,total\n")
    from vlstress.embedding import heads

    assert heads.classes_in(inputs / "standard/model.safetensors") == sorted(COLOURS)


def _made(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def class_set(inputs: Path, env: dict) -> Path:
    """A labelled folder of one photo per colour, and its class set `sets/classes` (made once)."""
    folder = inputs / "classes"
    if not (inputs / "sets/classes/manifest.json").is_file():
        for i, (name, colour) in enumerate(COLOURS.items()):
            shutil.copy(
                photo(inputs / "c" / f"{i}.png", colour, 50 + i), _made(folder / name / "a.png")
            )
        vlstress(
            "testset", "--name", "classes", "--kind", "imagefolder", "--root", str(folder),
            "--out", "sets/classes", cwd=inputs, env=env,
        )  # fmt: skip
    return folder


def labelled_args(out: str, steps: int, *extra: str) -> list[str]:
    """`finetune_args` without captioned training data, the variant named as `out`."""
    args = finetune_args(out, steps, *extra)
    del args[args.index("--train") : args.index("--test")]
    return [a if a != "sc_vc" else out for a in args]


@pytest.mark.slow
def test_a_killed_finetune_resumes_to_the_uninterrupted_weights(inputs, cli_env):
    steps = 200
    vlstress(*finetune_args("straight", steps), cwd=inputs, env=cli_env)
    sidecar = json.loads((inputs / "straight/model.safetensors.json").read_text())
    assert (
        sidecar["training"]["samples"] == 24
        and sidecar["final"]["step"] == steps
        and sidecar["base"]["slug"] == "tiny"
    )
    assert not (
        inputs / "straight/model.safetensors.resume"
    ).exists()  # removed once the weights are written
    resume = inputs / "killed/model.safetensors.resume"
    run = subprocess.Popen(
        [sys.executable, "-m", "vlstress", *finetune_args("killed", steps)],
        cwd=inputs,
        env=cli_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    end = time.monotonic() + 120
    while not resume.exists() and run.poll() is None and time.monotonic() < end:
        time.sleep(0.01)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert resume.exists() and not (inputs / "killed/model.safetensors").exists(), (
        "killed before its first checkpoint or after the end"
    )
    again = vlstress(*finetune_args("killed", steps), cwd=inputs, env=cli_env)
    assert "resumed from" in again.stderr
    assert (inputs / "killed/model.safetensors").read_bytes() == (
        inputs / "straight/model.safetensors"
    ).read_bytes()
    assert (inputs / "killed/log.csv").read_text() == (inputs / "straight/log.csv").read_text()


@pytest.mark.slow
def test_data_parallel_processes_under_torchrun(inputs, cli_env):
    vlstress(
        *finetune_args("ddp", 4, "--processes", "2", "--accumulate", "2"), cwd=inputs, env=cli_env
    )
    log = pd.read_csv(inputs / "ddp/log.csv")
    assert list(log["step"]) == [1, 2, 3, 4] and np.isfinite(log["total"]).all()
    sidecar = json.loads((inputs / "ddp/model.safetensors.json").read_text())
    assert sidecar["training"]["nproc"] == 2
    from safetensors.torch import load_file

    assert all(
        np.isfinite(t.numpy()).all() for t in load_file(inputs / "ddp/model.safetensors").values()
    )


@pytest.mark.slow
def test_standard_fine_tuning_under_torchrun(inputs, cli_env):
    """The head is used beside the DDP forward (the text tower not at all): two gloo processes
    train it without DDP's unused-parameter errors, and the head's weights are written."""
    class_set(inputs, cli_env)
    args = labelled_args("ddp_standard", 4, "--processes", "2", "--accumulate", "2")
    vlstress(*args, "--classes", "sets/classes", "--loss", "standard", cwd=inputs, env=cli_env)
    log = pd.read_csv(inputs / "ddp_standard/log.csv")
    assert list(log["step"]) == [1, 2, 3, 4] and np.isfinite(log["total"]).all()
    from safetensors.torch import load_file

    head = load_file(inputs / "ddp_standard/model.safetensors")["vlstress_head.weight"]
    assert head.shape[0] == len(COLOURS) and np.isfinite(head.numpy()).all()


# ------------------------------------------------------------------ Karpathy train split, fetched


def test_karpathy_train_is_fetched_grouped_and_split_from_the_test_photos(tmp_path, monkeypatch):
    """BLIP's train list (one entry per caption) and the photos from a 127.0.0.1 server; a test
    photo is then split off."""
    import functools
    import http.server
    import threading

    from vlstress import cli

    www = tmp_path / "www"
    photos = {
        "train2014/COCO_train2014_000000000009.jpg": 9,
        "val2014/COCO_val2014_000000022192.jpg": 22192,
        "train2014/COCO_train2014_000000000025.jpg": 25,
    }
    listing = []
    for image, seed in photos.items():
        photo(www / image, (seed % 255, 10, 10), seed).rename(www / image)
        listing += [
            {"image": image, "caption": f"photo {seed} caption {k}", "image_id": f"coco_{seed}"}
            for k in range(2)
        ]
    (www / "coco_karpathy_train.json").write_text(json.dumps(listing))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(www))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        raw = tmp_path / "raw"
        argv = [
            "download",
            "--dataset",
            "coco-train",
            "--kind",
            "karpathy-train",
            "--out",
            str(raw),
            "--karpathy-url",
            f"{url}/coco_karpathy_train.json",
            "--coco-url",
            url,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--retries",
            "1",
        ]
        assert cli.main(argv) == 0
    finally:
        server.shutdown()
        server.server_close()
    grouped = json.loads((raw / "captions.json").read_text())
    assert [e["image"] for e in grouped] == list(photos) and all(
        len(e["caption"]) == 2 for e in grouped
    )
    assert sorted(p.name for p in (raw / "images").iterdir()) == sorted(
        Path(i).name for i in photos
    )
    source = json.loads((raw / "download.json").read_text())["source"]["karpathy_train"]
    assert source["pinned"] is False and source["sha256"] == hashlib_sha256(
        www / "coco_karpathy_train.json"
    )
    assert (
        cli.main(
            [
                "prepare",
                "--dataset",
                "coco-train",
                "--raw",
                str(raw),
                "--out",
                str(tmp_path / "train.json"),
            ]
        )
        == 0
    )
    test_photo = tmp_path / "test" / "000000022192.jpg"  # the same COCO photo in the 2017 naming
    test_photo.parent.mkdir()
    shutil.copyfile(www / "val2014/COCO_val2014_000000022192.jpg", test_photo)
    (tmp_path / "test.json").write_text(
        json.dumps({"images": [entry(test_photo, test_photo.name, ["a test caption"])]})
    )
    assert (
        cli.main(
            [
                "train-split",
                "--train",
                str(tmp_path / "train.json"),
                "--test",
                str(tmp_path / "test.json"),
                "--out",
                str(tmp_path / "split.json"),
            ]
        )
        == 0
    )
    split = json.loads((tmp_path / "split.json").read_text())
    assert [e["image"] for e in split["images"]] == [
        i for i in photos if "22192" not in i
    ] and split["split"]["test_images_removed"] == 1


def hashlib_sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
