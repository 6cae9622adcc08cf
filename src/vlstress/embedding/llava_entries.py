"""LLaVA-style assistants as entries of the model registry: what an entry may say, and its checks
(no model library imported: the model card and the params check ask).

- `arch: llava`, `pretrained: <hub id>`   -> e.g. `llava-hf/llava-1.5-7b-hf` (its branch main)
                                              or `<id>@<revision>`, fetched into
                                              `<cache_dir>/hf`, checked and pinned (its commit
                                              and every file's sha256 in provenance:
                                              `vlstress.embedding.hub`);
- `arch: llava`, `pretrained: <folder>`   -> a local folder as `save_pretrained` writes it:
                                              config, weights, processor and tokenizer files
                                              (a folder without them is refused by name);
- `arch: llava:tiny`, `pretrained: null`  -> a seeded random-init tiny LLaVA built from a config
                                              (`vlstress.embedding.llava_models.tiny`), labelled
                                              "random-init": the demo's and the tests', whose
                                              answers mean nothing (`llava:tiny-next`: the same
                                              as a LLaVA-NeXT, v1.6).
A snapshot or folder is LLaVA-1.5 (`LlavaForConditionalGeneration`) or LLaVA-NeXT
(`LlavaNextForConditionalGeneration`) as its config.json's `model_type` says (`MODEL_CLASSES`).
An assistant answers questions about an image; it embeds nothing, so only the steps made for it
take it (`vlstress.embedding.kinds`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from vlstress.embedding.hub import HubRef, is_repo_id, split_revision
from vlstress.errors import VlstressError

ARCH = "llava"
PREFIX = "llava:"
TINY = "tiny"  # the built-in configs: `arch: llava:tiny` (LLaVA-1.5), `llava:tiny-next` (NeXT)
TINY_CONFIGS = (TINY, "tiny-next")
# a config.json's model_type -> the transformers class that loads it
MODEL_CLASSES = {
    "llava": "LlavaForConditionalGeneration",
    "llava_next": "LlavaNextForConditionalGeneration",
}
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
        if config not in TINY_CONFIGS:
            raise VlstressError(
                f"model {slug!r}: unknown LLaVA config {config!r} (built in: "
                f"{', '.join(TINY_CONFIGS)}); a real LLaVA "
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
        model_class(slug, folder)
    elif not is_repo_id(str(pretrained).partition("@")[0]):
        raise VlstressError(
            f"model {slug!r}: {pretrained!r} is neither a local folder nor a hub id (owner/name, "
            "or owner/name@revision)"
        )


def hub_ref(hub_id: str, cache_dir: str | None) -> HubRef:
    """The repository and revision of a hub id (`org/name[@revision]`), in `<cache_dir>/hf`."""
    repo, revision = split_revision(hub_id)
    return HubRef(repo, revision, str(Path(cache_dir) / HUB_SUBDIR) if cache_dir else None)


def model_class(slug: str, folder: Path) -> str:
    """The transformers class of the LLaVA saved in `folder`, from its config.json's model_type."""
    import json

    try:
        model_type = json.loads((folder / "config.json").read_text()).get("model_type")
    except (OSError, ValueError) as exc:
        raise VlstressError(
            f"model {slug!r}: cannot read {folder / 'config.json'}: {exc}"
        ) from None
    if model_type not in MODEL_CLASSES:
        raise VlstressError(
            f"model {slug!r}: {folder / 'config.json'} says model_type {model_type!r}, not a LLaVA "
            f"this tool loads ({', '.join(MODEL_CLASSES)})"
        )
    return MODEL_CLASSES[model_type]


def folder_sha256(folder: str | Path) -> str:
    """One digest of every file of a folder (names and bytes), for the model card."""
    from vlstress.io import sha256_file

    root = Path(folder).expanduser()
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()
