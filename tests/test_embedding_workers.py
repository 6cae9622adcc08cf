"""Image decoding in DataLoader workers (--workers) and the precision of model forwards
(--precision)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
import torch

from vlstress import cli, params_check
from vlstress import params as params_module
from vlstress.argtypes import optional_count
from vlstress.caption_data.demo import demo_captions, load_photo
from vlstress.embedding import models
from vlstress.embedding.encoders import encode_images, encode_texts, load_rgb
from vlstress.embedding.image_batches import default_workers, resolve_workers
from vlstress.errors import VlstressError
from vlstress.pipeline import STAGES
from vlstress.workflow.paths import RUN_FLAGS

from conftest import REPO

N_PHOTOS = 7  # batch size 3: two full batches and a partial one


@pytest.fixture(scope="module")
def photos(module_tmp) -> list[str]:
    """Real photos of the demo dataset (different sizes and modes), as JPEG files."""
    from PIL import Image

    folder = module_tmp.mktemp("photos")
    paths = []
    for name, spec in list(demo_captions().items())[:N_PHOTOS]:
        path = folder / f"{name}.jpg"
        Image.fromarray(load_photo(spec["loader"])).convert("RGB").save(path, quality=90)
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def tiny(tiny_arch):
    model, preprocess, tokenizer = models.load(
        models.ModelSpec("tiny", tiny_arch, None, seed=0), "cpu"
    )
    return model, preprocess, tokenizer


@torch.no_grad()
def serial_reference(model, preprocess, paths, batch_size):
    """The loop encode_images ran before workers existed."""
    chunks = []
    for start in range(0, len(paths), batch_size):
        batch = torch.stack([preprocess(load_rgb(p)) for p in paths[start : start + batch_size]])
        chunks.append(
            torch.nn.functional.normalize(model.encode_image(batch).float(), dim=-1).numpy()
        )
    return np.concatenate(chunks)


def test_workers_give_bit_identical_embeddings(tiny, photos):
    model, preprocess, _ = tiny
    reference = serial_reference(model, preprocess, photos, 3)
    serial = encode_images(model, preprocess, photos, batch_size=3, device="cpu", workers=0)
    parallel = encode_images(model, preprocess, photos, batch_size=3, device="cpu", workers=2)
    assert serial.dtype == parallel.dtype == np.float32 and serial.shape == (N_PHOTOS, 32)
    assert np.array_equal(serial, reference)
    assert np.array_equal(serial, parallel)


def test_in_process_decoding_runs_on_one_thread_and_gives_the_model_its_threads_back(tiny, photos):
    model, preprocess, _ = tiny
    seen = []

    def counting(image):
        seen.append(torch.get_num_threads())
        return preprocess(image)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        encode_images(model, counting, photos, batch_size=3, device="cpu", workers=0)
        assert seen == [1] * N_PHOTOS and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_corrupt_image_is_named_even_from_a_worker(tiny, photos, tmp_path, workers):
    model, preprocess, _ = tiny
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(open(photos[0], "rb").read()[:200])  # truncated JPEG
    paths = [*photos[:4], str(broken), *photos[4:]]
    with pytest.raises(VlstressError) as error:
        encode_images(model, preprocess, paths, batch_size=2, device="cpu", workers=workers)
    assert str(error.value).startswith(f"image is corrupt or unreadable: {broken}")
    assert "Traceback" not in str(error.value)


def test_a_missing_image_is_named_from_a_worker(tiny, photos, tmp_path):
    model, preprocess, _ = tiny
    missing = tmp_path / "gone.jpg"
    with pytest.raises(VlstressError, match=f"^image not found: {missing}$"):
        encode_images(
            model, preprocess, [*photos[:3], str(missing)], batch_size=2, device="cpu", workers=2
        )


def test_worker_counts(monkeypatch):
    from vlstress.embedding import image_batches

    monkeypatch.setattr(image_batches, "available_cores", lambda: 16)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    assert default_workers("cuda") == 8  # every core, capped
    assert default_workers("cpu") == 8  # the 12 cores beside the model's 4 threads, capped
    monkeypatch.setattr(image_batches, "available_cores", lambda: 2)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    assert default_workers("cuda") == 2 and default_workers("cpu") == 0
    assert resolve_workers(None, 100, "cuda") == 2
    assert resolve_workers(4, 2, "cpu") == 2  # never more workers than batches
    assert resolve_workers(0, 5, "cuda") == 0
    with pytest.raises(VlstressError, match="workers must be >= 0"):
        resolve_workers(-1, 5, "cpu")
    assert optional_count("None") is None and optional_count("0") == 0
    with pytest.raises(argparse.ArgumentTypeError):
        optional_count("-1")


def test_amp_is_refused_on_cpu_everywhere(tiny, photos):
    model, preprocess, tokenizer = tiny
    with pytest.raises(
        VlstressError, match="precision 'amp' needs a CUDA device.*embed.precision: fp32"
    ):
        encode_images(model, preprocess, photos, batch_size=3, device="cpu", precision="amp")
    for trim in (True, False):
        with pytest.raises(VlstressError, match="precision 'amp' needs a CUDA device"):
            encode_texts(
                model,
                tokenizer,
                ["a dog"],
                batch_size=2,
                device="cpu",
                trim=trim,
                precision="amp",
                progress=False,
            )


def test_fp32_text_embeddings_are_unchanged(tiny):
    model, _, tokenizer = tiny
    captions = ["a dog on a sofa", "two cats", "a dog on a sofa"]
    default = encode_texts(model, tokenizer, captions, batch_size=2, device="cpu", progress=False)
    explicit = encode_texts(
        model, tokenizer, captions, batch_size=2, device="cpu", precision="fp32", progress=False
    )
    assert np.array_equal(default, explicit)


def write_manifest(path, photos):
    entries = [
        {"image": f"{i}.jpg", "path": p, "image_id": str(i), "caption": ["a photo"]}
        for i, p in enumerate(photos)
    ]
    path.write_text(json.dumps({"dataset": "photos", "images": entries}))
    return path


def test_the_step_records_workers_and_precision(tiny_arch, photos, tmp_path):
    manifest = write_manifest(tmp_path / "manifest.json", photos)
    common = [
        "embed-retrieval",
        "--manifest",
        str(manifest),
        "--model",
        "tiny",
        "--arch",
        tiny_arch,
        "--device",
        "cpu",
        "--batch-size",
        "3",
    ]
    assert (
        cli.main(
            [*common, "--workers", "2", "--cuda-batch-size", "7", "--out", str(tmp_path / "w2")]
        )
        == 0
    )
    assert (
        cli.main(
            [*common, "--workers", "None", "--precision", "fp32", "--out", str(tmp_path / "auto")]
        )
        == 0
    )
    assert np.array_equal(
        np.load(tmp_path / "w2/images.npy"), np.load(tmp_path / "auto/images.npy")
    )
    params = json.loads((tmp_path / "w2/images.npy.json").read_text())["provenance"]["params"]
    # on the CPU
    assert params["workers"] == 2 and params["precision"] == "fp32" and params["batch_size"] == 3
    assert (
        json.loads((tmp_path / "auto/images.npy.json").read_text())["provenance"]["params"][
            "workers"
        ]
        is None
    )
    assert cli.main([*common, "--precision", "amp", "--out", str(tmp_path / "amp")]) == 2
    assert not (tmp_path / "amp").exists()


def test_the_batch_size_follows_the_device():
    """--cuda-batch-size on CUDA (when given), --batch-size elsewhere; the step records the one that
    ran."""
    from argparse import Namespace

    from vlstress.embedding.flags import batch_size

    assert batch_size(Namespace(batch_size=32, cuda_batch_size=256), "cuda") == 256
    assert batch_size(Namespace(batch_size=32, cuda_batch_size=256), "cuda:1") == 256
    assert batch_size(Namespace(batch_size=32, cuda_batch_size=256), "cpu") == 32
    assert batch_size(Namespace(batch_size=32, cuda_batch_size=None), "cuda") == 32
    with pytest.raises(VlstressError, match="cuda-batch-size"):
        batch_size(Namespace(batch_size=32, cuda_batch_size=0), "cuda")


# ----------------------------------------------------------------------------- params


def demo_params() -> dict:
    return params_module.load([REPO / "params.yaml"])


def test_the_demo_params_decode_on_the_jobs_cores_in_fp32():
    embed = demo_params()["embed"]
    assert embed["workers"] is None and embed["precision"] == "fp32"
    assert "--workers {p.embed.workers} --precision {p.embed.precision}" in RUN_FLAGS
    model_steps = [s for s in STAGES if "--model-card" in s.command]
    assert {s.name for s in model_steps} == {
        "embed_retrieval",
        "ei_scores",
        "text_stats",
        "zeroshot_classifiers",
        "embed_zeroshot",
        "embed_zeroshot_shard",  # one shard of it, with cluster.embed_shards > 1
        "attack",
        "finetune",
        "finetune_labelled",  # FLYP and standard fine-tuning
        "wise_ft",  # loads the base model from its card to interpolate towards the variant
        "overlap_detect",  # the detector model embeds the training collection
        "ask",  # an assistant answers the multiple-choice questions
        "evaluate_correspondence",  # dense features of the image tower on each pair
    }
    # WiSE-FT decodes nothing: it mixes two state dicts; an assistant's processor reads its images
    # (no decoding workers), on the device, threads and precision of every model step
    assert all(RUN_FLAGS in s.command for s in model_steps if s.name not in ("wise_ft", "ask"))
    (ask,) = [s for s in model_steps if s.name == "ask"]
    for flag in ("--device {p.embed.device}", "--threads {p.embed.threads}", "--precision"):
        assert flag in ask.command


@pytest.mark.parametrize(
    ("key", "value", "valid"),
    [
        ("workers", 0, True),
        ("workers", 3, True),
        ("workers", -1, False),
        ("workers", "all", False),
        ("precision", "amp", True),
        ("precision", "fp16", False),
        ("cuda_batch_size", None, True),
        ("cuda_batch_size", 512, True),
        ("cuda_batch_size", 0, False),
    ],
)
def test_embed_workers_and_precision_are_validated(key, value, valid):
    params = demo_params()
    params["embed"][key] = value
    if valid:
        params_check.validate(params)
        return
    with pytest.raises(VlstressError, match=f"embed.{key}"):
        params_check.validate(params)


@pytest.mark.parametrize("key", ["workers", "precision", "cuda_batch_size"])
def test_embed_workers_and_precision_are_required(key):
    params = demo_params()
    params["embed"].pop(key)
    with pytest.raises(VlstressError, match=key):
        params_check.validate(params)
