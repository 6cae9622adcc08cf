"""Training pairs for robust fine-tuning: (image, caption, altered caption, mixed image).

Every caption of the training manifest is one sample. Its altered caption comes from a caption
set in the official RoCOCO layout made from the *training* captions (the same generators as
the text stress-test, `vlstress text-variants` on the training manifest); its mixed image is
the image mixed or patched with its partner under a seeded plan over the training images
(`images.variants`, clean mode: after the model's preprocessing, lossless). The order of the
samples is a seeded permutation per epoch, a function of (seed, step) alone, so a resumed run
sees exactly the batches an uninterrupted run sees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlstress.errors import VlstressError


@dataclass(frozen=True)
class Sample:
    image: int  # index into TrainingPairs.paths
    caption: str
    altered: str


def step_rows(
    n: int, step: int, batch_size: int, seed: int, part: int = 0, parts: int = 1
) -> np.ndarray:
    """The sample rows of optimizer step `step` (0-based) among `n` samples: consecutive slices
    of seeded per-epoch permutations; `part` of `parts` splits the batch between data-parallel
    processes."""
    start = step * batch_size
    rows: list[np.int64] = []
    while len(rows) < batch_size:
        epoch, offset = divmod(start + len(rows), n)
        order = np.random.default_rng([seed, epoch]).permutation(n)
        rows.extend(order[offset : offset + batch_size - len(rows)])
    return np.array(rows[part::parts], dtype=np.int64)


class TrainingPairs:
    def __init__(
        self,
        paths: list[str],
        samples: list[Sample],
        plan,
        preprocess: Callable,
        tokenizer: Callable,
    ):
        if not samples:
            raise VlstressError("no training captions")
        self.paths, self.samples, self.plan = paths, samples, plan
        self.preprocess, self.tokenizer = preprocess, tokenizer

    def __len__(self) -> int:
        return len(self.samples)

    def rows(
        self, step: int, batch_size: int, seed: int, part: int = 0, parts: int = 1
    ) -> np.ndarray:
        return step_rows(len(self.samples), step, batch_size, seed, part, parts)

    def batch(self, rows: np.ndarray):
        """(pixels, mixed pixels, caption tokens, altered-caption tokens) of the sample rows."""
        import torch

        from vlstress.embedding.encoders import load_rgb
        from vlstress.suites.rococo_image.variants import apply

        cache: dict[int, Any] = {}

        def pixels(index: int):
            if index not in cache:
                cache[index] = self.preprocess(load_rgb(self.paths[index]))
            return cache[index]

        images, mixed = [], []
        for row in rows:
            index = self.samples[row].image
            partner = self.plan.partner(index)
            images.append(pixels(index))
            mixed.append(
                apply(self.plan, index, pixels(index), None if partner is None else pixels(partner))
            )
        texts = [self.samples[row].caption for row in rows]
        altered = [self.samples[row].altered for row in rows]
        return (
            torch.stack(images),
            torch.stack(mixed),
            self.tokenizer(texts),
            self.tokenizer(altered),
        )


def load_pairs(
    manifest_path: Path, variants_path: Path
) -> tuple[list[str], list[Sample], dict[str, Any]]:
    """(image paths, samples, counts) from a training manifest and a caption set of its captions.

    The set is checked against the manifest as the text stress-test checks it (originals in
    manifest order, then altered k for original k). A caption without an altered twin, or
    whose "alteration" left it unchanged, is skipped and counted: it would teach nothing.
    """
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.io import read_json
    from vlstress.suites.rococo_text.caption_sets import split_variant_entries

    entries = load_manifest(manifest_path)["images"]
    originals = {
        entry["image"]: list(entry["caption"])
        if isinstance(entry["caption"], list)
        else [entry["caption"]]
        for entry in entries
    }
    variant_entries = read_json(variants_path, "training caption set")
    split_variant_entries(variant_entries, originals, str(variants_path))
    index = {entry["image"]: i for i, entry in enumerate(entries)}
    samples, skipped = [], 0
    for entry in variant_entries:
        captions = entry["caption"]
        n = len(originals[entry["image"]])
        altered = captions[n:]
        for k, original in enumerate(originals[entry["image"]]):
            if k >= len(altered) or altered[k].strip() == original.strip():
                skipped += 1
                continue
            samples.append(Sample(index[entry["image"]], original, altered[k]))
    paths = [entry["path"] for entry in entries]
    return (
        paths,
        samples,
        {"images": len(paths), "samples": len(samples), "skipped_captions": skipped},
    )


class ClassPrompts:
    """FLYP's training pairs: a labelled image and one prompt of its class (a template with the
    class name). Every (image, template) pair is one sample, so an epoch shows each image once
    with each template; the order is `step_rows`'s, a function of (seed, step) alone."""

    def __init__(
        self,
        paths: list[str],
        labels: list[int],
        classes: list[str],
        templates: list[str],
        preprocess: Callable,
        tokenizer: Callable,
    ):
        if not paths:
            raise VlstressError("no training images in the class set")
        if not templates:
            raise VlstressError("no prompt templates")
        self.paths, self.labels, self.classes = paths, labels, classes
        self.templates = templates
        self.preprocess, self.tokenizer = preprocess, tokenizer

    def __len__(self) -> int:
        return len(self.paths) * len(self.templates)

    def rows(
        self, step: int, batch_size: int, seed: int, part: int = 0, parts: int = 1
    ) -> np.ndarray:
        return step_rows(len(self), step, batch_size, seed, part, parts)

    def prompt(self, row: int) -> str:
        image, template = divmod(int(row), len(self.templates))
        return self.templates[template].replace("{c}", self.classes[self.labels[image]])

    def batch(self, rows: np.ndarray):
        """(pixels, prompt tokens) of the sample rows."""
        import torch

        from vlstress.embedding.encoders import load_rgb

        pixels = [
            self.preprocess(load_rgb(self.paths[int(row) // len(self.templates)])) for row in rows
        ]
        return torch.stack(pixels), self.tokenizer([self.prompt(row) for row in rows])


class LabelledImages:
    """Standard fine-tuning's samples: each labelled image once an epoch, in `step_rows`'s order."""

    def __init__(self, paths: list[str], labels: list[int], preprocess: Callable):
        if not paths:
            raise VlstressError("no training images in the class set")
        self.paths, self.labels, self.preprocess = paths, labels, preprocess

    def __len__(self) -> int:
        return len(self.paths)

    def rows(
        self, step: int, batch_size: int, seed: int, part: int = 0, parts: int = 1
    ) -> np.ndarray:
        return step_rows(len(self), step, batch_size, seed, part, parts)

    def batch(self, rows: np.ndarray):
        """(pixels, labels) of the sample rows."""
        import torch

        from vlstress.embedding.encoders import load_rgb

        pixels = [self.preprocess(load_rgb(self.paths[int(row)])) for row in rows]
        labels = torch.as_tensor([self.labels[int(row)] for row in rows], dtype=torch.long)
        return torch.stack(pixels), labels


def load_classes(folder: Path, test_manifest: Path) -> tuple[list[str], list[int], list[str]]:
    """(image paths, labels, class names) of a class set (`vlstress testset`), after checking that
    none of its images is a test image of the retrieval manifest."""
    from vlstress.caption_data.manifest import load_manifest
    from vlstress.suites.finetune.split import check_disjoint
    from vlstress.testsets import manifest

    data = manifest.load(folder)
    paths = [str(path) for path in data.image_paths()]
    as_entries = [{"image": Path(path).name, "path": path, "caption": []} for path in paths]
    check_disjoint(as_entries, load_manifest(test_manifest)["images"])
    return paths, data.labels, list(data.classes)
