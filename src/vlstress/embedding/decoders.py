"""Which library decodes the image files of image embedding: `pil` (default) or `nvjpeg`.

pil: Pillow (libjpeg-turbo for JPEGs) in the decoding workers, as always.

nvjpeg: the workers only read each file's bytes, and the JPEGs of a batch are decoded together on
the GPU by nvJPEG (`torchvision.io.decode_jpeg(list, mode=RGB, device="cuda")`), straight into
the GPU resize (vlstress.embedding.device_preprocess). nvJPEG's pixels are not libjpeg's (another
IDCT and chroma upsampling: a few levels here and there), so the embeddings differ slightly from
a `pil` run: the decoder is opt-in, recorded in provenance (`params.decoder`) and part of the reuse
key of every embedding set, like `precision`. It needs CUDA and is refused on every other device
before any model work, as amp is.

Files nvJPEG does not take are decoded by Pillow on the CPU, as a `pil` run decodes them, counted,
and said once in the log per set: anything that is not a JPEG (PNG, WebP...; told by the magic
bytes FF D8 FF, not the file name), and the JPEGs torchvision's GPU decoder refuses or would
decode in another colour space (CMYK or YCCK, 12-bit, lossless or arithmetic-coded, Adobe RGB
without the YCbCr transform; read from the frame header). A JPEG that the GPU decoder still
rejects is decoded by Pillow too, which names the file if it is corrupt. Grayscale JPEGs come out
as RGB (mode=RGB), as Pillow's `convert("RGB")` gives them. A run of mixed files is therefore
nvJPEG's bytes for the JPEGs and Pillow's for the rest; which way a file goes is decided by the
file alone, so the decoded pixels do not depend on the batches or the workers.

Items that are not image files (the clean image variants, whose preprocess decodes and perturbs
its source images itself) are untouched by the decoder: Pillow, and their sets record `pil`.
"""

from __future__ import annotations

import io
import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from vlstress.errors import VlstressError

log = logging.getLogger(__name__)

DECODERS = ("pil", "nvjpeg")
JPEG_MAGIC = b"\xff\xd8\xff"
# batched CUDA decoding with a mode (decode_jpeg(list, device=...)) came with torchvision 0.19
MIN_TORCHVISION = (0, 19)

# frame headers (SOF markers): Huffman-coded baseline, extended and progressive frames go to the
# GPU; lossless, hierarchical and arithmetic-coded ones stay with Pillow
GPU_FRAMES = frozenset({0xC0, 0xC1, 0xC2})
OTHER_FRAMES = frozenset({0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})  # TEM, RST0-7: markers without a length
ADOBE = 0xEE  # APP14, whose transform byte says whether 3 components are YCbCr (1) or RGB (0)


def check(decoder: str, device: str) -> None:
    """Error unless `decoder` can run on the resolved `device`."""
    if decoder not in DECODERS:
        raise VlstressError(f"unknown decoder {decoder!r}: use {' or '.join(DECODERS)}")
    if decoder == "nvjpeg" and not device.startswith("cuda"):
        raise VlstressError(
            f"decoder 'nvjpeg' decodes JPEGs on the GPU and needs a CUDA device, this step runs "
            f"on {device!r}: set embed.decoder: pil (or --decoder pil)"
        )
    if decoder == "nvjpeg":
        import torchvision

        version = tuple(int(part) for part in torchvision.__version__.split("+")[0].split(".")[:2])
        if version < MIN_TORCHVISION:
            raise VlstressError(
                f"decoder 'nvjpeg' needs torchvision >= {'.'.join(map(str, MIN_TORCHVISION))} "
                f"(batched GPU decoding), this is {torchvision.__version__}: set embed.decoder: pil"
            )


def describe(decoder: str, device: str) -> dict:
    """Provenance of the decoder (checked first)."""
    check(decoder, device)
    return {"decoder": decoder}


# --- what goes to the GPU: read off the file's bytes (CPU only, unit-tested without a GPU) ---


def is_jpeg(data: bytes | bytearray | memoryview) -> bool:
    """Whether the bytes start as a JPEG does (FF D8 FF), whatever the file is called."""
    return bytes(data[:3]) == JPEG_MAGIC


@dataclass(frozen=True)
class Frame:
    """What the frame header (SOF) of a JPEG says, and the Adobe transform byte when there is
    one."""

    marker: int
    precision: int
    components: int
    adobe_transform: int | None


def frame(data: bytes | bytearray | memoryview) -> Frame | None:
    """The frame header of a JPEG, None when the bytes are no JPEG or end before one (corrupt)."""
    if not is_jpeg(data):
        return None
    view = memoryview(data)
    n, i = len(view), 2
    adobe: int | None = None
    while i + 4 <= n:
        if view[i] != 0xFF:
            return None  # not at a marker: let Pillow say what is wrong
        marker = view[i + 1]
        if marker == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if marker in STANDALONE:
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image or scan data before any frame header
            return None
        length = int.from_bytes(view[i + 2 : i + 4], "big")
        if length < 2:
            return None
        if marker == ADOBE and length >= 14 and bytes(view[i + 4 : i + 9]) == b"Adobe":
            adobe = view[i + 15] if i + 15 < n else None
        if marker in GPU_FRAMES or marker in OTHER_FRAMES:
            if i + 10 > n:
                return None
            return Frame(marker, view[i + 4], view[i + 9], adobe)
        i += 2 + length
    return None


def gpu_decodable(data: bytes | bytearray | memoryview) -> bool:
    """Whether nvJPEG decodes these bytes to the RGB that Pillow's decode means: an 8-bit
    Huffman-coded JPEG, grayscale or YCbCr (not CMYK/YCCK, not Adobe RGB without the transform)."""
    found = frame(data)
    return (
        found is not None
        and found.marker in GPU_FRAMES
        and found.precision == 8
        and (found.components == 1 or (found.components == 3 and found.adobe_transform != 0))
    )


def split(blobs: Sequence[bytes | bytearray | memoryview]) -> tuple[list[int], list[int]]:
    """(indices of the files nvJPEG decodes, indices of the others), each in order."""
    gpu: list[int] = []
    other: list[int] = []
    for index, data in enumerate(blobs):
        (gpu if gpu_decodable(data) else other).append(index)
    return gpu, other


# --- the worker's half: bytes for the GPU, else the CPU decode ---


def read_bytes(path: str | Path) -> bytes:
    """A file's bytes, with the errors load_rgb gives."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise VlstressError(f"image not found: {path}") from None
    except OSError as exc:
        raise VlstressError(f"image is corrupt or unreadable: {path} ({exc})") from None


@dataclass(frozen=True)
class ForGpu:
    """`load` of an nvjpeg run's decoding workers: a file nvJPEG takes as its bytes (a 1-D uint8
    tensor), any other file decoded here by `load` (Pillow) as a uint8 (H, W, 3) tensor. The
    number of dimensions tells the two apart after the batch crossed as one buffer."""

    load: Callable

    def __call__(self, path: str | Path) -> torch.Tensor:
        from vlstress.embedding.device_preprocess import to_uint8

        if getattr(self.load, "pixels", 0):  # a border crop (encoders.BorderCropped): Pillow's
            return to_uint8(self.load(path))  # pixels, cropped; counted as Pillow decoded
        data = read_bytes(path)
        if gpu_decodable(data):
            return torch.frombuffer(bytearray(data), dtype=torch.uint8)
        return to_uint8(self.load(path))


def as_is(item):
    """The preprocess of an nvjpeg run's workers: nothing (the GPU preprocesses)."""
    return item


# --- the main process's half: decode a batch on the GPU ---


@dataclass
class Tally:
    """How the images of one embedding pass were decoded (logged once at its end)."""

    gpu: int = 0
    pillow: int = 0
    examples: list[str] = field(default_factory=list)  # the first few Pillow decoded

    def cpu_decoded(self, path: str) -> None:
        self.pillow += 1
        if len(self.examples) < 3:
            self.examples.append(str(path))

    def report(self, desc: str) -> None:
        log.info("%s: %d image(s) decoded on the GPU by nvJPEG", desc, self.gpu)
        if self.pillow:
            log.warning(
                "%s: decoder nvjpeg: %d of %d image(s) are not JPEGs nvJPEG decodes (PNG or "
                "other formats, CMYK, 12-bit, lossless or arithmetic-coded JPEGs): decoded by "
                "Pillow on the CPU as with decoder pil, e.g. %s",
                desc,
                self.pillow,
                self.gpu + self.pillow,
                ", ".join(self.examples),
            )


def decode_jpegs(blobs: list[torch.Tensor], device: str) -> list[torch.Tensor]:
    """JPEG bytes (1-D uint8 CPU tensors) -> uint8 (H, W, 3) images on `device`, in one nvJPEG
    batch."""
    from torchvision.io import ImageReadMode, decode_jpeg

    with warnings.catch_warnings():
        # torchvision 0.29 deprecates its decoders in favour of TorchCodec: still the call asked for
        warnings.simplefilter("ignore", DeprecationWarning)
        decoded = decode_jpeg(blobs, mode=ImageReadMode.RGB, device=device)
    return [image.permute(1, 2, 0) for image in decoded]


def pillow_from_bytes(data: torch.Tensor, path: str) -> torch.Tensor:
    """What load_rgb + to_uint8 give for a file's bytes (a JPEG the GPU decoder refused)."""
    from PIL import Image, UnidentifiedImageError

    from vlstress.embedding.device_preprocess import to_uint8

    try:
        with Image.open(io.BytesIO(data.numpy().tobytes())) as image:
            return to_uint8(image.convert("RGB"))
    except (UnidentifiedImageError, OSError) as exc:
        raise VlstressError(f"image is corrupt or unreadable: {path} ({exc})") from None


def decode_batch(
    parts: list[torch.Tensor], paths: Sequence, device: str, tally: Tally
) -> list[torch.Tensor]:
    """The images of one batch from the workers (`ForGpu`: JPEG bytes or decoded pixels, on the
    CPU), as uint8 (H, W, 3) tensors on `device`, in order."""
    out: list[torch.Tensor | None] = [None] * len(parts)
    jpegs = [i for i, part in enumerate(parts) if part.dim() == 1]
    for i, part in enumerate(parts):
        if part.dim() != 1:  # decoded by Pillow in the worker
            out[i] = part.to(device, non_blocking=True)
            tally.cpu_decoded(str(paths[i]))

    def alone(i: int) -> torch.Tensor:
        try:
            image = decode_jpegs([parts[i]], device)[0]
        except RuntimeError as exc:
            log.info("nvJPEG refused %s (%s): decoding it with Pillow", paths[i], exc)
            tally.cpu_decoded(str(paths[i]))
            return pillow_from_bytes(parts[i], str(paths[i])).to(device)
        tally.gpu += 1
        return image

    if jpegs:
        try:
            decoded = decode_jpegs([parts[i] for i in jpegs], device)
            tally.gpu += len(jpegs)
        except RuntimeError:  # no partial results: find the file(s) the GPU decoder refuses
            decoded = [alone(i) for i in jpegs]
        for i, image in zip(jpegs, decoded):
            out[i] = image
    return [image for image in out if image is not None]
