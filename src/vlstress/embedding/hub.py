"""Models from the Hugging Face hub: a repository's snapshot in the weight cache, fetched, checked
and pinned (docs/models.md, "Hub models").

Every hub model (an open_clip `hf-hub:` repository, a timm pretrained tag, a LLaVA hub id) is
loaded from a snapshot folder of huggingface_hub's cache (`models--<org>--<name>/snapshots/
<commit>/`): with network, the revision asked for is resolved on the hub and the files the model
needs are downloaded (`snapshot`); with `HF_HUB_OFFLINE=1` the cache alone answers (its
`refs/<revision>`), and a snapshot not there is an error naming the model. Before a model loads,
each file is checked against the hub's checksum that names its blob in the cache (the sha256 of a
weight file, git's blob id of a small one): a truncated or altered file is refused by name. A
file checked once is not read again while its size and time stay the same (`VERIFIED`). Its
provenance (`provenance`) is the repository, the revision asked for, the commit it resolved to
and the sha256 of every file, read from the cache without reading the weights.

No model library is imported here; huggingface_hub only where the network is asked.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from vlstress.errors import VlstressError

HF_HUB = "hf-hub:"  # an arch naming an open_clip repository of the hub (`hf-hub:<org>/<name>`)
MAIN = "main"  # the revision when none is named
VERIFIED = ".vlstress-verified"  # in the hub cache: (size, time) of each blob found intact
OFFLINE_ENV = "HF_HUB_OFFLINE"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHA1 = re.compile(r"[0-9a-f]{40}")
OPEN_CLIP_WEIGHTS = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")
TIMM_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
    "spiece.model", "vocab.txt", "vocab.json", "merges.txt", "added_tokens.json",
)  # fmt: skip
NOT_SAFETENSORS = (".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".gguf")


@dataclass(frozen=True)
class HubRef:
    """A repository of the hub at a revision, kept in the hub cache `cache` (None: the user's)."""

    repo: str
    revision: str
    cache: str | None

    @property
    def name(self) -> str:
        return f"{self.repo}@{self.revision}"

    def storage(self) -> Path:
        """The repository's folder in the hub cache (huggingface_hub's layout)."""
        from huggingface_hub import constants

        root = Path(self.cache) if self.cache else Path(constants.HF_HUB_CACHE)
        return root / ("models--" + self.repo.replace("/", "--"))


def split_revision(hub_id: str) -> tuple[str, str]:
    """(`org/name`, revision) of `org/name` or `org/name@<revision>` (main by default)."""
    repo, _, revision = hub_id.partition("@")
    return repo, revision or MAIN


def is_repo_id(repo: str) -> bool:
    """Whether `repo` has the form of a hub repository id (`org/name`)."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", repo))


def offline() -> bool:
    """Whether `HF_HUB_OFFLINE` asks for the cache alone (huggingface_hub's reading of it)."""
    return os.environ.get(OFFLINE_ENV, "").strip().upper() in ("1", "ON", "YES", "TRUE")


# --- which files of a repository a model needs -------------------------------------------------


def open_clip_files(names: Iterable[str]) -> list[str]:
    """An open_clip repository's config, its weights (safetensors before a pickle) and tokenizer
    files (open_clip loads the snapshot as a `local-dir:`)."""
    names = set(names)
    weights = [name for name in OPEN_CLIP_WEIGHTS if name in names][:1]
    return ["open_clip_config.json", *weights, *sorted(names & set(TOKENIZER_FILES))]


def timm_files(names: Iterable[str]) -> list[str]:
    """A timm repository's weights (safetensors before a pickle) and config."""
    names = set(names)
    return [*[name for name in TIMM_WEIGHTS if name in names][:1], "config.json"]


def transformers_files(names: Iterable[str]) -> list[str]:
    """A transformers repository (a LLaVA): every file, but pickled or other-framework weights
    where safetensors are there."""
    names = sorted(names)
    if any(name.endswith(".safetensors") for name in names):
        return [name for name in names if not name.endswith(NOT_SAFETENSORS)]
    return names


# --- the snapshot: fetched, or found in the cache ----------------------------------------------


def cached_snapshot(ref: HubRef) -> Path | None:
    """The snapshot folder of `ref` in the cache (no network), None if not there."""
    storage = ref.storage()
    commit = ref.revision if _SHA1.fullmatch(ref.revision) else None
    ref_file = storage / "refs" / ref.revision
    if commit is None and ref_file.is_file():
        commit = ref_file.read_text().strip()
    if commit is None:
        return None
    folder = storage / "snapshots" / commit
    return folder if folder.is_dir() else None


def snapshot(
    slug: str, ref: HubRef, choose: Callable[[Iterable[str]], list[str]], required: Iterable[str]
) -> Path:
    """The snapshot folder of `ref` holding the files `choose` picks of the repository, checked
    (`verify`); fetched when the network is allowed, from the cache alone with HF_HUB_OFFLINE=1.
    `required`: patterns of which each must match a file of the snapshot."""
    folder = cached_snapshot(ref) if offline() else _download(slug, ref, choose)
    if folder is None:
        raise VlstressError(
            f"model {slug!r}: could not fetch {ref.repo} from the hub (revision {ref.revision}): "
            f"{OFFLINE_ENV} is set and it is not in the weight cache ({ref.storage()}); run "
            "`vlstress fetch-weights` where the hub is reachable"
        )
    names = [path.relative_to(folder).as_posix() for path in _files(folder)]
    lacking = [want for want in required if not fnmatch.filter(names, want)]
    if lacking:
        raise VlstressError(
            f"model {slug!r}: the snapshot of {ref.name} in {folder} lacks {', '.join(lacking)}"
            " (not in the repository, or not fetched: run `vlstress fetch-weights`)"
        )
    verify(slug, folder, Path(ref.storage()).parent)
    return folder


def _download(slug: str, ref: HubRef, choose: Callable[[Iterable[str]], list[str]]) -> Path:
    from huggingface_hub import HfApi, snapshot_download

    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now, not when huggingface_hub loaded
    try:
        info = HfApi(endpoint=endpoint).model_info(ref.repo, revision=ref.revision)
        names = [sibling.rfilename for sibling in info.siblings or []]
        folder = snapshot_download(
            ref.repo,
            revision=ref.revision,
            cache_dir=ref.cache,
            allow_patterns=choose(names),
            endpoint=endpoint,
        )
    except Exception as exc:  # unknown repository or revision, network, gated repository
        raise VlstressError(
            f"model {slug!r}: could not fetch {ref.repo} from the hub (revision {ref.revision}, "
            f"{os.environ.get('HF_ENDPOINT', 'https://huggingface.co')}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return Path(folder)


def _files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file() or path.is_symlink())


# --- the checksums ----------------------------------------------------------------------------


def git_blob_sha1(path: Path) -> str:
    """git's id of a file's bytes (a small file's ETag on the hub)."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _expected(path: Path) -> tuple[str, str] | None:
    """("sha256" | "sha1", the hub's checksum) of a cached file: its blob's name."""
    blob = Path(os.path.realpath(path)).name
    if _SHA256.fullmatch(blob):
        return "sha256", blob
    if _SHA1.fullmatch(blob):
        return "sha1", blob
    return None


def verify(slug: str, folder: Path, cache_root: Path) -> None:
    """Every file of a snapshot against the hub's checksum that names its blob; a file that does
    not match (truncated, altered) is an error naming it."""
    from vlstress.io import sha256_file, write_json

    stamps = cache_root / VERIFIED
    for path in _files(folder):
        name = path.relative_to(folder).as_posix()
        if not path.exists():
            raise VlstressError(
                f"model {slug!r}: {name} of the snapshot {folder} points to a missing blob: "
                "delete the snapshot and run `vlstress fetch-weights`"
            )
        expected = _expected(path)
        if expected is None:  # a cache without symlinks: no checksum to compare with
            continue
        algo, checksum = expected
        stat = path.stat()
        state = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}
        stamp = stamps / checksum
        if stamp.is_file():
            try:
                if json.loads(stamp.read_text()) == state:
                    continue
            except ValueError:
                pass
        actual = sha256_file(path) if algo == "sha256" else git_blob_sha1(path)
        if actual != checksum:
            raise VlstressError(
                f"model {slug!r}: {name} in the weight cache ({os.path.realpath(path)}, "
                f"{stat.st_size} bytes) does not match the hub's checksum ({algo} {checksum}, "
                f"found {actual}): it is truncated or altered; delete it and run "
                "`vlstress fetch-weights`"
            )
        try:
            write_json(stamp, state)
        except OSError:  # a read-only cache: checked again next time
            pass


def provenance(ref: HubRef) -> dict[str, object]:
    """What pins a hub model: the repository, the revision asked for, the commit it resolved to in
    the cache and the sha256 of every file of the snapshot (None while it is not cached)."""
    folder = cached_snapshot(ref)
    found: dict[str, object] = {"repo": ref.repo, "revision": ref.revision, "commit": None}
    if folder is None:
        return found
    files = {}
    for path in _files(folder):
        if not path.exists():
            continue
        expected = _expected(path)
        if expected is not None and expected[0] == "sha256":
            files[path.relative_to(folder).as_posix()] = expected[1]
        else:
            from vlstress.io import sha256_file

            files[path.relative_to(folder).as_posix()] = sha256_file(path)
    return {**found, "commit": folder.name, "files": files}
