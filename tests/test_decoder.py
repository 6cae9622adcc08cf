"""The decoder of image embedding, `embed.decoder`: pil or nvjpeg (vlstress.embedding.decoders).

On the CPU: which files go to nvJPEG (magic bytes, frame header), the worker and batch halves (with
torchvision's CPU JPEG decoder standing in for nvJPEG: it gives Pillow's bytes, so the machinery
is checked bit for bit), the refusal on CPU, provenance, the params check and the reuse key. On
CUDA only: nvJPEG's pixels against Pillow's and the embedding path end to end.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlstress import cli, params_check
from vlstress import params as params_module
from vlstress.caption_data.demo import demo_captions, load_photo
from vlstress.embedding import decoders, models, sets
from vlstress.embedding.device_preprocess import split, to_uint8
from vlstress.embedding.encoders import encode_images, load_rgb
from vlstress.embedding.flags import add_model_arguments, model_params, model_spec
from vlstress.embedding.image_batches import image_batches
from vlstress.errors import VlstressError
from vlstress.workflow.paths import RUN_FLAGS

from conftest import REPO

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def jpeg_bytes(image: Image.Image, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90, **options)
    return buffer.getvalue()


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def colour(height: int = 48, width: int = 64, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


@pytest.fixture(scope="module")
def photos(module_tmp) -> list[str]:
    """Real photos of the demo dataset (different sizes; colour and grayscale), as JPEG files, and
    one PNG among them."""
    folder = module_tmp.mktemp("photos")
    paths = []
    for i, (name, spec) in enumerate(list(demo_captions().items())[:7]):
        image = Image.fromarray(load_photo(spec["loader"]))
        if i == 3:
            path = folder / f"{name}.png"  # not a JPEG: Pillow decodes it in an nvjpeg run too
            image.convert("RGB").save(path)
        else:
            path = folder / f"{name}.jpg"
            image.save(path, quality=90)  # grayscale photos stay grayscale JPEGs
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def tiny(tiny_arch):
    return models.load(models.ModelSpec("tiny", tiny_arch, None, seed=0), "cpu")


# ----------------------------------------------------------------------------- which files go where


def test_jpegs_are_told_by_their_bytes_not_their_name():
    image = colour()
    rgb, gray = jpeg_bytes(image), jpeg_bytes(image.convert("L"))
    progressive = jpeg_bytes(image, progressive=True)
    cmyk = jpeg_bytes(image.convert("CMYK"))
    png = png_bytes(image)
    assert decoders.is_jpeg(rgb) and not decoders.is_jpeg(png)
    assert decoders.frame(rgb) == decoders.Frame(0xC0, 8, 3, None)
    assert decoders.frame(gray).components == 1
    assert decoders.frame(progressive).marker == 0xC2
    assert decoders.frame(cmyk).components == 4
    for data in (rgb, gray, progressive):
        assert decoders.gpu_decodable(data)
    for data in (cmyk, png, rgb[:40], b"", b"\xff\xd8\xff", b"GIF89a" + rgb):
        assert not decoders.gpu_decodable(data)
    gpu, other = decoders.split([rgb, png, gray, cmyk, rgb[:40], progressive])
    assert (gpu, other) == ([0, 2, 5], [1, 3, 4])


def test_jpegs_nvjpeg_would_read_otherwise_stay_with_pillow():
    """12-bit, arithmetic-coded and Adobe RGB (no YCbCr transform) frames: edited headers."""
    rgb = jpeg_bytes(colour())
    sof = rgb.index(b"\xff\xc0")
    twelve_bit = rgb[: sof + 4] + bytes([12]) + rgb[sof + 5 :]
    arithmetic = rgb[:sof] + b"\xff\xc9" + rgb[sof + 2 :]
    adobe = b"Adobe" + bytes([0, 100, 0, 0, 0, 0])
    segment = b"\xff\xee" + (2 + len(adobe) + 1).to_bytes(2, "big") + adobe
    adobe_rgb = rgb[:2] + segment + bytes([0]) + rgb[2:]
    adobe_ycc = rgb[:2] + segment + bytes([1]) + rgb[2:]
    assert decoders.frame(twelve_bit).precision == 12
    assert decoders.frame(adobe_rgb).adobe_transform == 0
    for data in (twelve_bit, arithmetic, adobe_rgb):
        assert not decoders.gpu_decodable(data)
    assert decoders.gpu_decodable(adobe_ycc)
    fill = rgb[:2] + b"\xff\xff" + rgb[2:]  # fill bytes before a marker are allowed
    assert decoders.gpu_decodable(fill)


def test_the_worker_sends_jpeg_bytes_and_decodes_the_rest(tmp_path):
    image = colour()
    jpg, renamed, png = tmp_path / "a.jpg", tmp_path / "b.png", tmp_path / "c.png"
    jpg.write_bytes(jpeg_bytes(image))
    renamed.write_bytes(jpeg_bytes(image))  # a JPEG called .png is a JPEG
    image.save(png)
    read = decoders.ForGpu(load_rgb)
    for path in (jpg, renamed):
        sent = read(path)
        assert sent.dim() == 1 and sent.numpy().tobytes() == path.read_bytes()
    pixels = read(png)
    assert pixels.shape == (48, 64, 3) and torch.equal(pixels, to_uint8(load_rgb(png)))
    with pytest.raises(VlstressError, match="image not found: .*missing.jpg"):
        read(tmp_path / "missing.jpg")


def cpu_stand_in(monkeypatch):
    """Let nvjpeg run on the CPU: torchvision then decodes with libjpeg, which gives Pillow's
    bytes, so the batch machinery can be checked exactly without a GPU."""

    def check(decoder: str, device: str) -> None:
        assert decoder in decoders.DECODERS

    monkeypatch.setattr(decoders, "check", check)


def test_a_batch_is_decoded_in_order_and_counted(monkeypatch, tiny, photos, caplog):
    cpu_stand_in(monkeypatch)
    parts = [decoders.ForGpu(load_rgb)(p) for p in photos]
    assert [part.dim() for part in parts] == [1, 1, 1, 3, 1, 1, 1]
    tally = decoders.Tally()
    images = decoders.decode_batch(parts, photos, "cpu", tally)
    assert all(torch.equal(got, to_uint8(load_rgb(p))) for got, p in zip(images, photos))
    # what the GPU resize gets on CUDA: the decoded images (views in (H, W, 3) order) as they are
    preprocess = tiny[1]
    on_device, _ = split(preprocess)
    assert torch.equal(on_device(images), torch.stack([preprocess(load_rgb(p)) for p in photos]))
    assert (tally.gpu, tally.pillow) == (6, 1)
    with caplog.at_level(logging.INFO, logger="vlstress.embedding.decoders"):
        tally.report("set")
    assert (
        "1 of 7 image(s) are not JPEGs nvJPEG decodes" in caplog.text and photos[3] in caplog.text
    )


def test_a_jpeg_the_gpu_refuses_is_decoded_by_pillow(monkeypatch, photos, tmp_path):
    """nvJPEG returns nothing when one image of the batch fails: each is tried alone, and the one
    it refuses goes to Pillow, which names the file if it is corrupt."""
    cpu_stand_in(monkeypatch)
    refused = Path(photos[1]).read_bytes()
    real = decoders.decode_jpegs

    def picky(blobs, device):
        if any(blob.numpy().tobytes() == refused for blob in blobs):
            raise RuntimeError("unsupported")
        return real(blobs, device)

    monkeypatch.setattr(decoders, "decode_jpegs", picky)
    jpegs = [p for p in photos if p.endswith(".jpg")]
    parts = [decoders.ForGpu(load_rgb)(p) for p in jpegs]
    tally = decoders.Tally()
    images = decoders.decode_batch(parts, jpegs, "cpu", tally)
    assert all(torch.equal(got, to_uint8(load_rgb(p))) for got, p in zip(images, jpegs))
    assert (tally.gpu, tally.pillow) == (len(jpegs) - 1, 1)

    broken = tmp_path / "broken.jpg"
    broken.write_bytes(Path(jpegs[0]).read_bytes()[:300])
    monkeypatch.setattr(decoders, "decode_jpegs", real)
    with pytest.raises(VlstressError, match="image is corrupt or unreadable: .*broken.jpg"):
        decoders.decode_batch(
            [decoders.ForGpu(load_rgb)(broken)], [str(broken)], "cpu", decoders.Tally()
        )


@pytest.mark.parametrize("workers", [0, 2])
def test_nvjpeg_batches_through_the_workers(monkeypatch, tiny, photos, workers):
    """The whole nvjpeg data path (workers read bytes, one buffer per batch, batch decode, the
    preprocess) with the CPU stand-in: the batches of the pil path, bit for bit."""
    cpu_stand_in(monkeypatch)
    _, preprocess, _ = tiny
    expected = torch.stack([preprocess(load_rgb(p)) for p in photos])
    got = torch.cat(
        list(
            image_batches(
                photos,
                preprocess,
                batch_size=3,
                workers=workers,
                device="cpu",
                load=load_rgb,
                decoder="nvjpeg",
            )
        )
    )
    assert torch.equal(got, expected)


# ----------------------------------------------------------------------------- refused on CPU


def test_nvjpeg_is_refused_on_the_cpu_naming_the_option(tiny, photos):
    model, preprocess, _ = tiny
    with pytest.raises(VlstressError, match="decoder 'nvjpeg'.*needs a CUDA device.*decoder: pil"):
        decoders.check("nvjpeg", "cpu")
    with pytest.raises(VlstressError, match="decoder 'nvjpeg'.*CUDA"):
        encode_images(model, preprocess, photos, batch_size=3, device="cpu", decoder="nvjpeg")
    with pytest.raises(VlstressError, match="unknown decoder 'turbo'"):
        decoders.check("turbo", "cuda")
    decoders.check("pil", "cpu")


def write_manifest(path: Path, photos: list[str]) -> Path:
    entries = [
        {"image": Path(p).name, "path": p, "image_id": str(i), "caption": ["a photo"]}
        for i, p in enumerate(photos)
    ]
    path.write_text(json.dumps({"dataset": "photos", "images": entries}))
    return path


def test_the_step_refuses_nvjpeg_on_cpu_before_any_model_work(
    tiny_arch, photos, tmp_path, monkeypatch, capsys
):
    manifest = write_manifest(tmp_path / "manifest.json", photos)
    common = ["embed-retrieval", "--manifest", str(manifest), "--model", "tiny"]
    common += ["--arch", tiny_arch, "--device", "cpu", "--batch-size", "3"]
    assert cli.main([*common, "--out", str(tmp_path / "pil")]) == 0
    params = json.loads((tmp_path / "pil/images.npy.json").read_text())["provenance"]["params"]
    assert params["decoder"] == "pil"  # the default, recorded

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the decoder was checked")

    monkeypatch.setattr(models, "load", no_model)
    capsys.readouterr()
    assert cli.main([*common, "--decoder", "nvjpeg", "--out", str(tmp_path / "gpu")]) == 2
    error = capsys.readouterr().err
    assert "decoder 'nvjpeg'" in error and "CUDA" in error and "--decoder pil" in error
    assert not (tmp_path / "gpu").exists()

    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    args = parser.parse_args(["--model", "m", "--arch", "a", "--device", "cpu"])
    args.decoder = "nvjpeg"
    with pytest.raises(VlstressError, match="decoder 'nvjpeg'"):
        model_spec(args)  # every model step names its model before loading it


# ------------------------------------------------------------------- provenance, params, reuse


def test_the_decoder_reaches_provenance(monkeypatch):
    """--decoder is recorded by every model step; a step that decodes with Pillow itself records
    pil."""
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    args = parser.parse_args(["--model", "m", "--arch", "a", "--device", "cuda:0"])
    spec = models.ModelSpec("m", "a", None)
    monkeypatch.setattr(models, "resolve_device", lambda device: device)  # as on a GPU node
    assert model_params(args, spec)["decoder"] == "pil"
    args.decoder = "nvjpeg"
    assert model_params(args, spec)["decoder"] == "nvjpeg"
    assert model_params(args, spec, decoder="pil")["decoder"] == "pil"
    assert "--decoder {p.embed.decoder}" in RUN_FLAGS


def demo_params() -> dict:
    return params_module.load([REPO / "params.yaml"])


def test_the_params_check_knows_the_decoder():
    params = demo_params()
    assert params["embed"]["decoder"] == "pil"
    for device in ("auto", "cuda", "cuda:1"):
        params["embed"].update(decoder="nvjpeg", device=device)
        params_check.validate(params)
    params["embed"]["decoder"] = "turbojpeg"
    with pytest.raises(VlstressError, match="embed.decoder"):
        params_check.validate(params)
    params["embed"].update(decoder="nvjpeg", device="cpu")
    with pytest.raises(VlstressError, match="embed.decoder: 'nvjpeg'.*GPU.*cuda, not 'cpu'"):
        params_check.validate(params)
    params["embed"].pop("decoder")
    with pytest.raises(VlstressError, match="decoder"):
        params_check.validate(params)


def test_the_reuse_key_changes_with_the_decoder(photos, tmp_path):
    item = sets.original_images(write_manifest(tmp_path / "manifest.json", photos))

    def key(**params) -> str:
        block = {
            "step": "embed-retrieval",
            "params": {"batch_size": 3, "precision": "fp32", "decoder": "pil", "workers": None}
            | params,
            "command": "anything",
        }
        return sets.reuse_key(item, block, "code", {})

    assert "decoder" not in sets.PLACE_PARAMS
    assert key(decoder="nvjpeg") != key(decoder="pil")
    assert key(workers=2) == key()  # a place param, for contrast


# ----------------------------------------------------------------------------- on CUDA only


def pixels_against_pillow(paths) -> tuple[float, float, int]:
    """(mean |diff|, 99.9th percentile |diff|, max |diff|) of nvJPEG's pixels against Pillow's."""
    diffs = []
    for path in paths:
        data = Path(path).read_bytes()
        assert decoders.gpu_decodable(data)
        blob = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        ours = decoders.decode_jpegs([blob], "cuda")[0].cpu()
        diffs.append((ours.int() - to_uint8(load_rgb(path)).int()).abs().flatten())
    every = torch.cat(diffs).float()
    return float(every.mean()), float(torch.quantile(every[:10_000_000], 0.999)), int(every.max())


@CUDA
def test_nvjpeg_pixels_are_close_to_pillows(photos):
    jpegs = [p for p in photos if p.endswith(".jpg")]
    mean, p999, worst = pixels_against_pillow(jpegs)
    print(f"nvJPEG vs Pillow on {len(jpegs)} photos: mean {mean:.3f}, p99.9 {p999}, max {worst}")
    # another IDCT and chroma upsampling: a level or two, more at a few sharp colour edges
    # (torchvision's own test allows a mean of 2)
    assert mean < 2 and p999 <= 16, (mean, p999, worst)


@CUDA
def test_nvjpeg_embeddings_end_to_end(tiny_arch, photos, caplog):
    model, preprocess, _ = models.load(models.ModelSpec("tiny", tiny_arch, None, seed=0), "cuda")
    run = {"batch_size": 3, "device": "cuda"}
    pil = encode_images(model, preprocess, photos, workers=0, **run)
    with caplog.at_level(logging.INFO):
        gpu = encode_images(model, preprocess, photos, workers=0, decoder="nvjpeg", **run)
    again = encode_images(model, preprocess, photos, workers=2, decoder="nvjpeg", **run)
    assert gpu.shape == pil.shape and np.array_equal(gpu, again)  # workers change no byte
    cosine = (gpu * pil).sum(axis=1)
    print(f"nvjpeg vs pil: max |diff| {np.abs(gpu - pil).max():.2e}, min cosine {cosine.min()}")
    assert cosine.min() > 0.99
    png = photos.index(next(p for p in photos if p.endswith(".png")))
    np.testing.assert_allclose(gpu[png], pil[png], atol=1e-5)  # decoded by Pillow in both runs
    assert "1 of 7 image(s) are not JPEGs nvJPEG decodes" in caplog.text
    assert "6 image(s) decoded on the GPU by nvJPEG" in caplog.text


# ----------------------------------------------------------------------------- a set's border crop


def test_a_border_crop_takes_the_pixels_off_each_side_before_the_preprocess(tmp_path, tiny):
    """ObjectNet's protocol (imagenet-testbed, wise-ft / CLIP_benchmark): img.crop((2, 2, w-2,
    h-2)) before preprocessing; the embedding equals that of the cropped file, and an nvjpeg run's
    worker hands the file to the crop (Pillow), never the uncropped bytes to the GPU."""
    from vlstress.embedding.encoders import BorderCropped

    model, preprocess, _ = tiny
    image = colour(40, 52, seed=3)
    framed = image.copy()
    framed.paste((255, 0, 0), (0, 0, 52, 2))  # a red frame, as ObjectNet's images have
    framed.paste((255, 0, 0), (0, 38, 52, 40))
    src, cropped = tmp_path / "framed.png", tmp_path / "cropped.png"
    framed.save(src)
    framed.crop((2, 2, 50, 38)).save(cropped)
    loaded = BorderCropped(2)(src)
    assert loaded.size == (48, 36)
    assert np.array_equal(np.asarray(loaded), np.asarray(Image.open(cropped).convert("RGB")))
    options = {"batch_size": 2, "device": "cpu"}
    with_crop = encode_images(model, preprocess, [str(src)], load=BorderCropped(2), **options)
    pre_cropped = encode_images(model, preprocess, [str(cropped)], **options)
    uncropped = encode_images(model, preprocess, [str(src)], **options)
    assert np.array_equal(with_crop, pre_cropped)
    assert not np.array_equal(with_crop, uncropped)
    jpg = tmp_path / "framed.jpg"
    jpg.write_bytes(jpeg_bytes(framed))
    sent = decoders.ForGpu(BorderCropped(2))(jpg)
    assert sent.shape == (36, 48, 3)  # decoded and cropped, not JPEG bytes
    with pytest.raises(VlstressError, match="too small for the set's 30-pixel border crop"):
        BorderCropped(30)(src)


def test_a_testset_with_a_border_crop_embeds_the_cropped_images(tmp_path, tiny_arch):
    from vlstress.testsets.manifest import ClassificationSet, manifest_path, write

    folder = tmp_path / "set"
    (folder / "images").mkdir(parents=True)
    for i in range(2):
        colour(40, 52, seed=i).save(folder / "images" / f"{i}.png")

    def embed_with(source: dict) -> tuple[np.ndarray, dict]:
        images = [{"path": f"images/{i}.png", "label": i} for i in range(2)]
        testset = ClassificationSet(
            "frames", "imagefolder", ["a", "b"], ["a", "b"], str(folder), images, source=source
        )
        write(manifest_path(folder), testset)
        item = sets.testset_images(folder)
        spec = models.ModelSpec("tiny", tiny_arch, None, seed=0)
        model, preprocess, tokenizer = models.load(spec, "cpu")
        run = argparse.Namespace(
            model=model,
            preprocess=preprocess,
            batch_size=2,
            device="cpu",
            workers=0,
            precision="fp32",
            decoder="pil",
            spec=spec,
        )
        return item.embed(run), item.fields  # type: ignore[arg-type]

    cropped, fields = embed_with({"border_crop_px": 2})
    plain, plain_fields = embed_with({})
    assert fields["border_crop_px"] == 2 and "border_crop_px" not in plain_fields
    assert not np.array_equal(cropped, plain)
