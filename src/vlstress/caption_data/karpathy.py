"""The real benchmark: COCO val2014 images of the Karpathy 5k test split, the
Karpathy test list and the four official RoCOCO text stress-test sets.

    <out>/images/COCO_val2014_<12 digits>.jpg   the photos (each one decoded once)
    <out>/captions.json                         the Karpathy test list, official format:
                                                [{"image": "val2014/COCO_val2014_<id>.jpg",
                                                  "caption": [...]}, ...]
    <out>/rococo/<set>.json                     same_concept, diff_concept, rand_voca, danger
                                                (official format, restricted to the kept images)
    <out>/download.json                         sources, sha256 of every file, provenance

Sources and pinned checksums live in vlstress/data/karpathy_sources.json. Each
base URL can be replaced (a mirror, a file:// URL or a local path), and images
found in a local folder (`--images`) are used instead of being fetched.
`--image-ids` keeps a subset of the split (and of the RoCOCO sets): that is how
the workflow runs offline on the real photos of ../shared/data/coco-mini.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from importlib import resources
from pathlib import Path
from typing import Any

from vlstress import download
from vlstress.argtypes import optional_str, positive_int
from vlstress.caption_data import images as image_checks
from vlstress.caption_data.manifest import validate_entries
from vlstress.errors import VlstressError
from vlstress.io import sha256_file

KARPATHY_IMAGE = re.compile(r"^val2014/COCO_val2014_(\d{12})\.jpg$")


def sources() -> dict[str, Any]:
    """The default URLs and pinned checksums (vlstress/data/karpathy_sources.json)."""
    text = (
        resources.files("vlstress")
        .joinpath("data/karpathy_sources.json")
        .read_text(encoding="utf-8")
    )
    return json.loads(text)


def rococo_sets() -> list[str]:
    return sorted(sources()["rococo"]["sets"])


def image_file(image_id: int) -> str:
    return sources()["coco_images"]["file_pattern"].format(id=image_id)


def parse_image_ids(value: str | int | None) -> list[int] | None:
    """`"22192, 22892"` -> [22192, 22892]; None or empty -> None (the whole split). The flag turns
    DVC's `None` into None (`argtypes.optional_str`)."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    ids = []
    for part in re.split(r"[,\s]+", text):
        if not part:
            continue
        if not part.isdigit():
            raise VlstressError(
                f"--image-ids: expected comma-separated COCO image ids, got {part!r}"
            )
        ids.append(int(part))
    if not ids:
        return None
    return list(dict.fromkeys(ids))  # drop repeats, keep order


def add_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = sources()
    parser.add_argument(
        "--image-ids",
        type=optional_str,
        default=None,
        help="karpathy: comma-separated COCO image ids to keep (None = the whole 5k test split)",
    )
    parser.add_argument(
        "--coco-url",
        type=optional_str,
        default=None,
        help=(
            "karpathy: base URL, file:// URL or folder of the val2014 images (None = "
            f"{defaults['coco_images']['url']})"
        ),
    )
    parser.add_argument(
        "--karpathy-url",
        type=optional_str,
        default=None,
        help=(
            "karpathy: URL or path of coco_karpathy_test.json (None = "
            f"{defaults['karpathy_test']['url']})"
        ),
    )
    parser.add_argument(
        "--rococo-url",
        type=optional_str,
        default=None,
        help=(
            "karpathy: base URL or folder of the RoCOCO json files (None = "
            f"{defaults['rococo']['url']})"
        ),
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=download.DEFAULT_CACHE_DIR,
        help="karpathy: where transfers are cached and resumed (never a workflow output)",
    )
    parser.add_argument(
        "--retries", type=positive_int, default=3, help="karpathy: attempts per file"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="karpathy: seconds before a stalled connection fails",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=8, help="karpathy: parallel image downloads"
    )


def local_names(image_id: int) -> list[str]:
    """Names a local copy of a val2014 photo may have: COCO 2014's or the 12 digits of COCO 2017."""
    return [image_file(image_id), f"{image_id:012d}.jpg"]


def read_list(path: Path, what: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VlstressError(f"{what} is not valid JSON: {path} ({exc})") from None
    return validate_entries(data, what)


def coco_id(image: str) -> int:
    """The COCO id of a Karpathy image name that `select` has checked already."""
    match = KARPATHY_IMAGE.match(image)
    assert match is not None, image
    return int(match.group(1))


def select(
    entries: list[dict[str, Any]], ids: list[int] | None, max_images: int | None, source: str
) -> list[dict[str, Any]]:
    """The Karpathy entries to keep, in the split's order."""
    by_id: dict[int, dict[str, Any]] = {}
    for pos, entry in enumerate(entries):
        match = KARPATHY_IMAGE.match(entry["image"])
        if not match:
            raise VlstressError(
                f"{source}: entry {pos} image {entry['image']!r} is not "
                "val2014/COCO_val2014_<12 digits>.jpg"
            )
        by_id[int(match.group(1))] = entry
    if ids is not None:
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise VlstressError(
                f"--image-ids: not in the Karpathy test split ({source}): "
                f"{', '.join(map(str, unknown))}"
            )
        wanted = set(ids)
        entries = [e for e in entries if coco_id(e["image"]) in wanted]
    if max_images:
        entries = entries[:max_images]
    return entries


def gather_images(
    wanted: list[tuple[str, str, list[str]]],
    local_dir: Path | None,
    image_dir: Path,
    opts: dict[str, Any],
    workers: int,
    desc: str,
) -> int:
    """Put each wanted image into `image_dir`: (file name, URL, names to look for in `local_dir`).

    A copy from the local folder when it holds the image (checked to decode), else a download
    (parallel, resumable, checked); the first failure stops the rest. Returns how many were fetched.
    """
    from tqdm import tqdm

    if local_dir is not None and not local_dir.is_dir():
        raise VlstressError(f"local images folder not found: {local_dir} (--images)")
    image_dir.mkdir(parents=True, exist_ok=True)
    remote: list[tuple[str, str]] = []
    bar = tqdm(total=len(wanted), unit="img", desc=desc)
    lock = threading.Lock()
    try:
        for name, url, local_names in wanted:
            local = (
                next((local_dir / n for n in local_names if (local_dir / n).is_file()), None)
                if local_dir is not None
                else None
            )
            if local is None:
                remote.append((name, url))
                continue
            image_checks.check_image(local)
            shutil.copyfile(local, image_dir / name)
            bar.update(1)

        def fetch_one(name: str, url: str) -> None:
            download.fetch(
                url, image_dir / name, check=image_checks.check_image, progress=False, **opts
            )
            with lock:
                bar.update(1)

        if remote:
            with ThreadPoolExecutor(max_workers=min(workers, len(remote))) as pool:
                futures = [pool.submit(fetch_one, name, url) for name, url in remote]
                _, pending = wait(futures, return_when=FIRST_EXCEPTION)
                for future in pending:
                    future.cancel()
                errors = [
                    exc
                    for f in futures
                    if f.done() and not f.cancelled() and (exc := f.exception())
                ]
                if errors:
                    raise errors[0]
    finally:
        bar.close()
    return len(remote)


def fetch_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"cache_dir": args.cache_dir, "retries": args.retries, "timeout": args.timeout}


def materialize(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    src = sources()
    opts = fetch_options(args)
    files: dict[str, str] = {}

    # 1. the Karpathy test list (pinned sha256)
    spec = src["karpathy_test"]
    karpathy_url = args.karpathy_url or spec["url"]
    karpathy_path = download.fetch(
        karpathy_url, sha256=spec["sha256"], size=spec["size"], desc=spec["file"], **opts
    )
    entries = read_list(karpathy_path, f"Karpathy test json {karpathy_url}")
    kept = select(entries, parse_image_ids(args.image_ids), args.max_images, karpathy_url)
    kept_images = [e["image"] for e in kept]
    whole_split = len(kept) == len(entries)

    # 2. the official RoCOCO sets (pinned sha256), restricted to the kept images
    rococo_base = args.rococo_url or src["rococo"]["url"]
    rococo_record = {}
    for name, rspec in sorted(src["rococo"]["sets"].items()):
        url = download.join_url(rococo_base, rspec["file"])
        path = download.fetch(
            url, sha256=rspec["sha256"], size=rspec["size"], desc=rspec["file"], **opts
        )
        target = out / "rococo" / rspec["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        if whole_split:
            shutil.copyfile(path, target)  # the released bytes, untouched
        else:
            by_image = {e["image"]: e for e in read_list(path, f"RoCOCO {name} json {url}")}
            missing = [img for img in kept_images if img not in by_image]
            if missing:
                raise VlstressError(
                    f"RoCOCO {name} json {url} lacks {len(missing)} kept image(s), e.g. "
                    f"{missing[0]}"
                )
            # official style
            target.write_text(json.dumps([by_image[img] for img in kept_images]), encoding="utf-8")
        files[f"rococo/{rspec['file']}"] = sha256_file(target)
        rococo_record[name] = {"url": url, "sha256": rspec["sha256"], "n_images": len(kept_images)}

    # 3. the images: local folder first, then the image server
    coco_base = args.coco_url or src["coco_images"]["url"]
    local_dir = Path(args.images) if getattr(args, "images", None) else None
    image_dir = out / "images"
    ids = [coco_id(img) for img in kept_images]
    wanted = [
        (image_file(i), download.join_url(coco_base, image_file(i)), local_names(i)) for i in ids
    ]
    remote = gather_images(wanted, local_dir, image_dir, opts, args.workers, "COCO val2014 images")
    for image_id in ids:
        name = image_file(image_id)
        files[f"images/{name}"] = sha256_file(image_dir / name)

    return {
        "captions": kept,
        "files": files,
        "source": {
            "karpathy_test": {
                "url": karpathy_url,
                "sha256": spec["sha256"],
                "n_images_split": len(entries),
            },
            "rococo": rococo_record,
            "coco_images": {
                "url": coco_base,
                "local_folder": str(local_dir) if local_dir else None,
                "n_fetched": remote,
            },
            "image_ids": ids if not whole_split else "all",
            "n_images": len(ids),
        },
    }
