"""Caption sets of the text stress-test, read against the manifest they were made from.

A caption set is in the official RoCOCO list format: per image {"image", "caption":
[originals..., altered...]}: first the image's original captions (as in the manifest), then
its altered captions (altered k replaces one word of original k). Usually 5 + 5; official
RoCOCO images with 6 originals carry 6 + 5 (the official evaluation splits 10 -> 5/5 and
11 -> 6/5); any 0..n altered captions after the n originals are accepted.

`layout` says which rows of which embedding file the evaluation uses: the set's images
(in manifest order), their original captions (rows of the manifest's caption list) and
the altered captions (rows of the set's flattened caption list, as the retrieval
embedding job embeds them). A set may cover only some manifest images; the metrics then use those
images only, and `subset_info` says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vlstress.caption_data.manifest import caption_table
from vlstress.errors import VlstressError

SET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_set_name(name: str) -> str:
    if not SET_NAME.match(name):
        raise VlstressError(f"--set {name!r}: use letters, digits, '_', '-' or '.'")
    return name


def split_variant_entries(
    entries: list[dict[str, Any]], manifest_images: dict[str, list[str]], source: str
) -> tuple[list[str], list[int]]:
    """Validate a caption set against the manifest; return (images in set order, altered-caption row
    numbers).

    Row numbers index the flattened caption list of the set (as the retrieval embedding job
    embeds them).
    """
    images: list[str] = []
    seen: set[str] = set()
    altered_rows: list[int] = []
    row = 0
    for pos, entry in enumerate(entries):
        name = entry["image"]
        captions = [entry["caption"]] if isinstance(entry["caption"], str) else entry["caption"]
        if name not in manifest_images:
            raise VlstressError(f"{source}: image {name!r} (entry {pos}) is not in the manifest")
        if name in seen:
            raise VlstressError(f"{source}: image {name!r} is listed twice")
        seen.add(name)
        originals = manifest_images[name]
        n = len(originals)
        n_altered = len(captions) - n
        if not 0 <= n_altered <= n:
            raise VlstressError(
                f"{source}: image {name!r} has {len(captions)} captions, expected {n} originals "
                f"as in the manifest followed by at most {n} altered captions ({n + 1}..{2 * n} "
                "in all)"
            )
        for k in range(n):
            if captions[k].strip() != originals[k].strip():
                raise VlstressError(
                    f"{source}: image {name!r} caption {k} is {captions[k]!r} but the manifest "
                    f"has {originals[k]!r}; the first half of each entry must be the original "
                    "captions in manifest order"
                )
        images.append(name)
        altered_rows.extend(range(row + n, row + len(captions)))
        row += len(captions)
    if not altered_rows:
        raise VlstressError(f"{source}: no altered captions (every entry holds only its originals)")
    return images, altered_rows


@dataclass(frozen=True)
class CaptionSetLayout:
    """The rows one text stress evaluation uses (see the module docstring)."""

    image_rows: list[int]  # manifest image rows of the set's images, in manifest order
    caption_rows: list[int]  # manifest caption rows of those images (their original captions)
    ground_truth: list[list[int]]  # per chosen image: its captions, as positions in caption_rows
    altered_rows: list[int]  # rows of the set's flattened caption list that are altered captions
    n_set_captions: int  # rows of the set's flattened caption list (its embedding file)
    n_manifest_images: int

    @property
    def is_subset(self) -> bool:
        return len(self.image_rows) < self.n_manifest_images

    def subset_info(self) -> dict[str, Any]:
        n, total = len(self.image_rows), self.n_manifest_images
        return {
            "evaluated_on_subset": self.is_subset,
            "n_manifest_images": total,
            "note": (
                f"caption set covers {n} of {total} manifest images; all metrics (including "
                "R@1_original) use those images only"
                if self.is_subset
                else "caption set covers every manifest image"
            ),
        }


def layout(
    entries: list[dict[str, Any]], manifest_entries: list[dict[str, Any]], source: str
) -> CaptionSetLayout:
    """Check a caption set against its manifest (errors name `source`) and say which rows the
    evaluation uses."""
    table = caption_table(manifest_entries)
    groups = table.captions_per_image
    manifest_images = {
        name: [table.captions[j] for j in groups[i]] for i, name in enumerate(table.images)
    }
    set_images, altered_rows = split_variant_entries(entries, manifest_images, source)
    index = {name: i for i, name in enumerate(table.images)}
    chosen = sorted(index[name] for name in set_images)
    caption_rows: list[int] = []
    ground_truth: list[list[int]] = []
    for i in chosen:
        ground_truth.append(list(range(len(caption_rows), len(caption_rows) + len(groups[i]))))
        caption_rows.extend(groups[i])
    return CaptionSetLayout(
        image_rows=chosen,
        caption_rows=caption_rows,
        ground_truth=ground_truth,
        altered_rows=altered_rows,
        n_set_captions=len(caption_table(entries).captions),
        n_manifest_images=len(table.images),
    )
