"""LLaVA-style assistants as entries of the model registry: what an entry may say, and its checks
(no model library imported: the model card and the params check ask).

- `arch: llava`, `pretrained: <hub id>`   -> e.g. `llava-hf/llava-1.5-7b-hf`, fetched into
                                              `<cache_dir>/hf` (its revision in provenance);
- `arch: llava`, `pretrained: <folder>`   -> a local folder as `save_pretrained` writes it:
                                              config, weights, processor and tokenizer files
                                              (a folder without them is refused by name);
- `arch: llava:tiny`, `pretrained: null`  -> a seeded random-init tiny LLaVA built from a config
                                              (`vlstress.embedding.llava_models.tiny`), labelled
                                              "random-init": the demo's and the tests', whose
                                              answers mean nothing.
An assistant answers questions about an image; it embeds nothing, so only the steps made for it
take it (`vlstress.embedding.kinds`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from vlstress.errors import VlstressError

ARCH = "llava"
PREFIX = "llava:"
TINY = "tiny"  # the one built-in config (`arch: llava:tiny`)
HUB_SUBDIR = "hf"  # inside the weight cache
CONFIG_FILES = ("config.json",)
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")
WEIGHT_SUFFIXES = (".safetensors", ".bin")


def weights_kind(pretrained: str | None) -> str:
    """`random-init`, `folder` (an existing folder, or a path: /, ., ~) or `hub` (an id)."""
    if pretrained is None:
        return "random-init"
    if Path(pretrained).expanduser().is_dir() or pretrained.startswith(("/", ".", "~")):
        return "folder"
    return "hub"


def missing_files(folder: Path) -> list[str]:
    """What a LLaVA folder lacks of the files `from_pretrained` needs (empty: complete)."""
    names = {path.name for path in folder.iterdir()} if folder.is_dir() else set()
    missing = []
    if not names & set(CONFIG_FILES):
        missing.append("config.json")
    if not names & set(PROCESSOR_FILES):
        missing.append(f"processor files ({' or '.join(PROCESSOR_FILES)})")
    if not names & set(TOKENIZER_FILES):
        missing.append(f"tokenizer files ({' or '.join(TOKENIZER_FILES)})")
    if not any(name.endswith(WEIGHT_SUFFIXES) for name in names):
        missing.append("weights (*.safetensors or *.bin)")
    return missing


def check(slug: str, arch: str, pretrained: str | None) -> None:
    """An entry that cannot name a LLaVA is an error naming the model (no import of
    transformers)."""
    kind = weights_kind(pretrained)
    if arch.startswith(PREFIX):
        config = arch.removeprefix(PREFIX)
        if config != TINY:
            raise VlstressError(
                f"model {slug!r}: unknown LLaVA config {config!r} (built in: {TINY}); a real LLaVA "
                f"is `arch: {ARCH}` with a hub id or a local folder as `pretrained`"
            )
        if kind != "random-init":
            raise VlstressError(
                f"model {slug!r}: `arch: {arch}` is a seeded random init (pretrained: null); "
                f"weights from a hub id or a folder are `arch: {ARCH}`"
            )
        return
    if arch != ARCH:
        raise VlstressError(
            f"model {slug!r}: unknown LLaVA arch {arch!r}: use {ARCH} or {PREFIX}{TINY}"
        )
    if kind == "random-init":
        raise VlstressError(
            f"model {slug!r}: a LLaVA needs a hub id (e.g. llava-hf/llava-1.5-7b-hf) or a local "
            f"folder as `pretrained` (its tokenizer and processor come with it); a seeded random "
            f"init is `arch: {PREFIX}{TINY}`"
        )
    if kind == "folder":
        folder = Path(str(pretrained)).expanduser()
        if not folder.is_dir():
            raise VlstressError(f"model {slug!r}: LLaVA folder not found: {pretrained}")
        missing = missing_files(folder)
        if missing:
            raise VlstressError(
                f"model {slug!r}: LLaVA folder {pretrained} lacks {', '.join(missing)}: save the "
                "model and its processor there (`model.save_pretrained(folder)`, "
                "`processor.save_pretrained(folder)`)"
            )
    elif str(pretrained).count("/") != 1:
        raise VlstressError(
            f"model {slug!r}: {pretrained!r} is neither a local folder nor a hub id (owner/name)"
        )


def folder_sha256(folder: str | Path) -> str:
    """One digest of every file of a folder (names and bytes), for the model card."""
    from vlstress.io import sha256_file

    root = Path(folder).expanduser()
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()
