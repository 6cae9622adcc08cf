"""The GPU half of open_clip's preprocess gives the bytes of the CPU path (Pillow + torchvision)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import open_clip
import pytest
import torch
from PIL import Image
from torchvision import transforms as T

from vlstress.embedding import device_preprocess as dp
from vlstress.embedding.encoders import load_rgb

COCO_MINI = Path(__file__).resolve().parents[2] / "shared" / "data" / "coco-mini"
BICUBIC, BILINEAR = Image.Resampling.BICUBIC, Image.Resampling.BILINEAR


@pytest.fixture(scope="module")
def preprocess():
    return open_clip.create_model_and_transforms("ViT-B-32", pretrained=None)[2]


def photo(height: int, width: int, seed: int) -> Image.Image:
    """Noise plus smooth ramps: both the clipped extremes and mid-range rounding get exercised."""
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0, 255, width)[None, :, None] * np.linspace(0, 1, height)[:, None, None]
    pixels = 0.5 * ramp + 0.5 * rng.integers(0, 256, (height, width, 3))
    return Image.fromarray(pixels.clip(0, 255).astype(np.uint8))


# (in height, in width) -> (out height, out width): down and up, each pass order, one pass skipped
RESIZES = [
    ((480, 640), (224, 298)),
    ((640, 480), (298, 224)),
    ((1000, 333), (672, 224)),
    ((300, 300), (200, 250)),
    ((200, 250), (300, 300)),
    ((384, 384), (224, 224)),
    ((100, 333), (100, 224)),
    ((1000, 10), (672, 10)),
    ((7, 5), (3, 2)),
    ((3000, 2), (336, 1)),
]


@pytest.mark.parametrize("resample", [BICUBIC, BILINEAR])
@pytest.mark.parametrize(("size_in", "size_out"), RESIZES)
def test_resize_is_pillows_bit_for_bit(size_in, size_out, resample):
    image = photo(*size_in, seed=sum(size_in))
    expected = np.asarray(image.resize(size_out[::-1], resample))
    batch = dp.to_uint8(image).permute(2, 0, 1)[None]
    order = dp.pass_order(size_in, size_out, resample)
    assert order is not None
    ours = dp.pil_resize(batch, size_out, resample, order)[0].permute(1, 2, 0).numpy()
    assert ours.min() >= 0 and ours.max() <= 255 and np.array_equal(ours, np.floor(ours))
    assert np.array_equal(ours.astype(np.uint8), expected)


def test_the_pass_order_matters_and_is_read_off_pillow():
    """The passes round in between: the two orders give other bytes, and the probe picks
    Pillow's."""
    image = photo(1000, 333, seed=1)
    batch = dp.to_uint8(image).permute(2, 0, 1)[None]
    both = [
        dp.pil_resize(batch, (672, 224), BICUBIC, vertical_first)
        for vertical_first in (False, True)
    ]
    assert not torch.equal(*both)
    order = dp.pass_order((1000, 333), (672, 224), BICUBIC)
    assert np.array_equal(
        both[order][0].permute(1, 2, 0).numpy().astype(np.uint8),
        np.asarray(image.resize((224, 672), BICUBIC)),
    )


def test_an_order_pillow_does_not_use_is_resized_on_the_cpu(preprocess, monkeypatch, caplog):
    on_device, _ = dp.split(preprocess)
    monkeypatch.setattr(dp, "pass_order", lambda *args: None)
    images = [photo(480, 640, seed=3), photo(480, 640, seed=4)]
    with caplog.at_level("WARNING"):
        ours = on_device([dp.to_uint8(image) for image in images])
    assert "on the CPU" in caplog.text and torch.equal(
        ours, torch.stack([preprocess(image) for image in images])
    )


def test_split_preprocess_equals_the_whole_one(preprocess):
    on_device, why = dp.split(preprocess)
    assert on_device is not None, why
    images = [photo(h, w, seed=i) for i, ((h, w), _) in enumerate(RESIZES[:7])] + [
        photo(480, 640, seed=99).convert("L")
    ]
    expected = torch.stack([preprocess(image) for image in images])
    # mixed sizes: grouped, returned in order
    ours = on_device([dp.to_uint8(image) for image in images])
    assert ours.dtype == torch.float32 and torch.equal(ours, expected)


@pytest.mark.slow
@pytest.mark.skipif(not COCO_MINI.is_dir(), reason="needs ../shared/data/coco-mini")
def test_split_preprocess_on_real_coco_photos(preprocess):
    paths = sorted(COCO_MINI.rglob("*.jpg"))
    assert len(paths) > 100
    on_device, _ = dp.split(preprocess)
    images = [load_rgb(p) for p in paths]
    assert torch.equal(
        on_device([dp.to_uint8(i) for i in images]), torch.stack([preprocess(i) for i in images])
    )


def test_split_refuses_what_it_cannot_reproduce(preprocess):
    steps = preprocess.transforms
    cases = {
        "not open_clip's": lambda image: preprocess(image),  # e.g. the clean image-variant mixer
        "interpolation": T.Compose(
            [T.Resize(224, interpolation=T.InterpolationMode.NEAREST), *steps[1:]]
        ),
        "may exceed": T.Compose([T.Resize(200), *steps[1:]]),
        "max_size": T.Compose(
            [T.Resize(224, interpolation=T.InterpolationMode.BICUBIC, max_size=300), *steps[1:]]
        ),
    }
    for expected, candidate in cases.items():
        on_device, why = dp.split(candidate)
        assert on_device is None and expected in why, (expected, why)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_batches_equal_the_cpu_preprocess(preprocess, tmp_path):
    """On the GPU: image_batches (workers decode, resize on the GPU) == the CPU preprocess, bit for
    bit."""
    from vlstress.embedding.image_batches import image_batches

    paths = []
    for i, ((h, w), _) in enumerate(RESIZES[:7]):
        paths.append(tmp_path / f"{i}.jpg")
        photo(h, w, seed=i).save(paths[-1], quality=90)
    expected = torch.stack([preprocess(load_rgb(p)) for p in paths])
    for workers in (0, 2):
        got = torch.cat(
            list(
                image_batches(
                    paths, preprocess, batch_size=3, workers=workers, device="cuda", load=load_rgb
                )
            )
        )
        assert got.is_cuda and torch.equal(got.cpu(), expected)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_batch_of_decoded_images_crosses_as_one_buffer(workers):
    """collate_flat + unflatten give back every image of the batch, in order; a failure stays a
    failure."""
    from torch.utils.data import DataLoader

    from vlstress.embedding.image_batches import LoadFailure, collate_flat, unflatten

    images = [dp.to_uint8(photo(h, w, seed=i)) for i, ((h, w), _) in enumerate(RESIZES[:5])]
    loader = DataLoader(images, batch_size=3, num_workers=workers, collate_fn=collate_flat)
    got = [image for flat, shapes in loader for image in unflatten(flat, shapes)]
    assert len(got) == len(images) and all(torch.equal(a, b) for a, b in zip(got, images))
    failure = LoadFailure("image not found: x.jpg")
    assert collate_flat([images[0], failure]) is failure
