"""Model registry entries -> loaded open_clip models, with an honest weights label.

A registry entry in params.yaml is `{arch, pretrained}`:
- `pretrained: null`   -> seeded random init, labelled "random-init" everywhere (drawn once per
                          weight cache and kept there: `RANDOM_INIT`);
- a path to a file     -> local checkpoint (must exist);
- anything else        -> an open_clip hub tag, cached in `cache_dir`.
An open_clip repository of the Hugging Face hub is `arch: hf-hub:<org>/<name>`, `pretrained: null`
(the repository's branch main) or a revision (a branch, tag or commit): its snapshot is fetched
into `cache_dir`, checked and pinned by `vlstress.embedding.hub` (as are a timm tag's and a
LLaVA's).
Every failure is a VlstressError naming the model; nothing falls back silently.

Architectures are open_clip's, plus those of any folder of open_clip model configs (JSON)
named in the environment variable VLSTRESS_MODEL_CONFIGS (folders separated by the path
separator): an architecture of one's own, or a tiny one that tests run in subprocesses.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlstress.embedding import heads, hub
from vlstress.embedding.kinds import model_kind
from vlstress.errors import VlstressError
from vlstress.io import read_json, sha256_file
from vlstress.pool import attributes

log = logging.getLogger(__name__)

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors", ".ckpt")


@dataclass(frozen=True)
class ModelSpec:
    slug: str
    arch: str
    pretrained: str | None
    seed: int = 0
    cache_dir: str | None = None

    @property
    def kind(self) -> str:
        """The model's family: `open_clip` (image-text), `timm` (a supervised ImageNet
        classifier, `arch: timm:<name>`; vlstress.embedding.timm_models) or `llava` (an assistant,
        vlstress.embedding.llava_entries)."""
        return model_kind(self.arch)

    @property
    def weights_kind(self) -> str:
        if self.arch.startswith(hub.HF_HUB):  # an open_clip repository: its weights, at main
            return "hub"
        if self.kind == "llava":  # a hub id holds a slash: told from a folder by llava_entries
            from vlstress.embedding import llava_entries

            return llava_entries.weights_kind(self.pretrained)
        if self.pretrained is None:
            return "random-init"
        if _looks_like_path(self.pretrained):
            return "checkpoint"
        return "hub"

    def weights_label(self) -> str:
        kind = self.weights_kind
        if kind == "random-init":
            return f"random-init (seed {self.seed})"
        if self.arch.startswith(hub.HF_HUB):
            return f"hub:{self.arch.removeprefix(hub.HF_HUB)}@{self.pretrained or hub.MAIN}"
        return f"{kind}:{self.pretrained}"


def _looks_like_path(value: str) -> bool:
    return (
        os.sep in value
        or value.startswith(".")
        or value.endswith(CHECKPOINT_SUFFIXES)
        or Path(value).exists()
    )


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise VlstressError(
            f"device {device!r} requested but CUDA is not available on this machine"
        )
    if not (device == "cpu" or device.startswith("cuda") or device == "mps"):
        raise VlstressError(f"unknown device {device!r}: use auto, cpu, cuda or cuda:N")
    return device


MODEL_CONFIGS_ENV = "VLSTRESS_MODEL_CONFIGS"
_ADDED_CONFIGS: set[str] = set()


def add_model_configs() -> None:
    """Register the open_clip model configs of the folders in VLSTRESS_MODEL_CONFIGS (once per
    folder)."""
    import open_clip

    for folder in filter(None, os.environ.get(MODEL_CONFIGS_ENV, "").split(os.pathsep)):
        if folder in _ADDED_CONFIGS:
            continue
        if not Path(folder).is_dir():
            raise VlstressError(
                f"{MODEL_CONFIGS_ENV}: {folder} is not a folder of open_clip model configs"
            )
        open_clip.add_model_config(folder)
        _ADDED_CONFIGS.add(folder)


def known_architectures() -> list[str]:
    """open_clip's architectures, read as `open_clip.list_models` does (the JSON configs of its
    `model_configs` folder and of VLSTRESS_MODEL_CONFIGS) without importing open_clip: the
    model card of a random-init or local-checkpoint model starts without torch (1 s, not 8)."""
    import importlib.util

    found = importlib.util.find_spec("open_clip")
    if found is None or found.origin is None:
        raise VlstressError("open_clip is not installed: pip install open_clip_torch")
    folders = [Path(found.origin).parent / "model_configs"]
    folders += [Path(f) for f in os.environ.get(MODEL_CONFIGS_ENV, "").split(os.pathsep) if f]
    for folder in folders[1:]:
        if not folder.is_dir():
            raise VlstressError(
                f"{MODEL_CONFIGS_ENV}: {folder} is not a folder of open_clip model configs"
            )
    names = {path.stem for folder in folders for path in folder.glob("*.json")}
    if "open_clip" in sys.modules:  # already loaded: configs added in this process count too
        names.update(sys.modules["open_clip"].list_models())
    return sorted(names)


def check_spec(spec: ModelSpec) -> None:
    """Validate arch and weights before any expensive work (open_clip is imported only to look up
    a hub tag)."""
    if spec.kind == "llava":
        from vlstress.embedding import llava_entries

        llava_entries.check(spec.slug, spec.arch, spec.pretrained)
        return
    if spec.kind == "timm":
        from vlstress.embedding import timm_models

        _check_checkpoint(spec)
        timm_models.check(spec.slug, spec.arch, spec.pretrained, spec.weights_kind)
        return
    if spec.arch.startswith(hub.HF_HUB):
        if not hub.is_repo_id(spec.arch.removeprefix(hub.HF_HUB)):
            raise VlstressError(
                f"model {spec.slug!r}: {spec.arch!r} names no hub repository: use "
                f"{hub.HF_HUB}<org>/<name> (pretrained: null for its branch main, or a revision)"
            )
        return
    known = known_architectures()
    if spec.arch not in known:
        close = [name for name in known if name.lower().startswith(spec.arch.lower()[:5])][:8]
        hint = f" (similar: {', '.join(close)})" if close else ""
        raise VlstressError(
            f"model {spec.slug!r}: unknown open_clip architecture {spec.arch!r}{hint}; "
            "run `vlstress models` for the full list"
        )
    _check_checkpoint(spec)
    if spec.weights_kind == "hub":
        import open_clip

        tags = open_clip.list_pretrained_tags_by_model(spec.arch)
        if spec.pretrained not in tags:
            raise VlstressError(
                f"model {spec.slug!r}: {spec.pretrained!r} is not a known pretrained tag for "
                f"{spec.arch} (known: {', '.join(tags) or 'none'}); use a tag, a checkpoint path, "
                "or null for random init"
            )


def _check_checkpoint(spec: ModelSpec) -> None:
    if spec.weights_kind == "checkpoint" and not Path(str(spec.pretrained)).is_file():
        raise VlstressError(f"model {spec.slug!r}: checkpoint file not found: {spec.pretrained}")


def describe(spec: ModelSpec, model=None, count: bool = False) -> dict[str, Any]:
    """The provenance block of a model: what exactly produced the numbers (and its size, if
    loaded), with its attributes (`vlstress.pool.attributes`: family, tower, parameters per tower,
    resolution, pretraining data, loss, fine-tuning; `count`: the card's, counted on the meta
    device where the model library is loaded already)."""
    info: dict[str, Any] = {
        "slug": spec.slug,
        "kind": spec.kind,
        "arch": spec.arch,
        "pretrained": spec.pretrained,
        "weights": spec.weights_kind,
        "weights_label": spec.weights_label(),
        "seed": spec.seed,
    }
    if spec.weights_kind == "folder":
        from vlstress.embedding import llava_entries

        info["folder_sha256"] = llava_entries.folder_sha256(str(spec.pretrained))
    if spec.weights_kind == "checkpoint" and spec.pretrained is not None:
        info["checkpoint_sha256"] = sha256_file(spec.pretrained)
        head = heads.classes_in(spec.pretrained)  # the file's header: no weights read
        if head is not None:
            info["head_classes"] = len(head)
    ref = hub_ref(spec)
    if ref is not None:
        info["hub"] = hub.provenance(ref)
    if model is not None:
        info["n_params"] = int(sum(p.numel() for p in model.parameters()))
    info["attributes"] = attributes.of(
        spec.arch, spec.pretrained, spec.weights_kind, model=model, count=count
    )
    return info


def hub_ref(spec: ModelSpec) -> hub.HubRef | None:
    """The hub repository and revision a model's weights come from (None: not from the hub, or an
    open_clip tag whose weights come from an address of their own)."""
    if spec.weights_kind != "hub":
        return None
    if spec.arch.startswith(hub.HF_HUB):
        return hub.HubRef(
            spec.arch.removeprefix(hub.HF_HUB), spec.pretrained or hub.MAIN, spec.cache_dir
        )
    if spec.kind == "llava":
        from vlstress.embedding import llava_entries

        return llava_entries.hub_ref(str(spec.pretrained), spec.cache_dir)
    if spec.kind == "timm":
        from vlstress.embedding import timm_models

        repo = timm_models.hub_repo(spec.arch, str(spec.pretrained))
        return hub.HubRef(repo, hub.MAIN, spec.cache_dir) if repo else None
    import open_clip

    cfg = open_clip.get_pretrained_cfg(spec.arch, str(spec.pretrained)) or {}
    repo = os.path.split(str(cfg.get("hf_hub") or ""))[0]  # `org/name/` or `org/name/<file>`
    return hub.HubRef(repo, hub.MAIN, spec.cache_dir) if hub.is_repo_id(repo) else None


def _check_cached(spec: ModelSpec) -> None:
    """A hub model's snapshot in the weight cache checked (`hub.verify`), where there is one."""
    ref = hub_ref(spec)
    folder = hub.cached_snapshot(ref) if ref is not None else None
    if ref is not None and folder is not None:
        hub.verify(spec.slug, folder, ref.storage().parent)


def hub_snapshot(spec: ModelSpec) -> Path:
    """The checked snapshot folder of a hub model, fetched unless HF_HUB_OFFLINE is set
    (`vlstress.embedding.hub.snapshot`)."""
    ref = hub_ref(spec)
    if ref is not None and spec.arch.startswith(hub.HF_HUB):
        return hub.snapshot(
            spec.slug, ref, hub.open_clip_files, ["open_clip_config.json", "open_clip_*model*"]
        )
    if ref is not None and spec.kind == "timm":
        return hub.snapshot(spec.slug, ref, hub.timm_files, ["*model.*"])
    raise VlstressError(f"model {spec.slug!r}: its weights are fetched by its own library")


def hub_tokenizer(spec: ModelSpec, folder: Path):
    """The tokenizer of an open_clip repository's snapshot: open_clip's for its config, from the
    snapshot's tokenizer files; a transformers tokenizer its config names (`hf_tokenizer_name`)
    and the repository does not hold comes from its own repository, into the weight cache."""
    import open_clip

    config = read_json(folder / "open_clip_config.json", "open_clip config")
    text = dict(config.get("model_cfg", {}).get("text_cfg", {}))
    name = text.get("hf_tokenizer_name")
    if not name or any((folder / file).exists() for file in hub.TOKENIZER_FILES):
        return open_clip.get_tokenizer(f"local-dir:{folder}")
    from open_clip.tokenizer import HFTokenizer

    return HFTokenizer(
        name,
        context_length=text.get("context_length", 77),
        cache_dir=spec.cache_dir,
        tokenizer_mode=text.get("tokenizer_mode"),
        **text.get("tokenizer_kwargs", {}),
    )


def _load_hub_open_clip(spec: ModelSpec, device: str):
    """An open_clip repository of the hub, from its checked snapshot (open_clip's `local-dir:`)."""
    import open_clip

    folder = hub_snapshot(spec)
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(
            f"local-dir:{folder}", device=device
        )
        tokenizer = hub_tokenizer(spec, folder)
    except Exception as exc:  # a config or state dict open_clip cannot read
        raise VlstressError(
            f"model {spec.slug!r}: could not load {spec.arch} from its snapshot {folder}: {exc}"
        ) from exc
    log.info(
        "loaded %s (%s, commit %s) on %s", spec.slug, spec.weights_label(), folder.name, device
    )
    return model.eval(), preprocess, tokenizer


def load(spec: ModelSpec, device: str, threads: int | None = None):
    """Return (model, image_preprocess, tokenizer) in eval mode on `device` (a timm classifier:
    tokenizer None).

    `threads` fixes torch's CPU threads: float32 sums depend on how work is split between
    threads, so the same count makes both front ends write the same bytes on one machine.
    """
    import open_clip
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    check_spec(spec)
    if spec.kind == "llava":
        raise VlstressError(
            f"model {spec.slug!r} is an assistant (LLaVA): it answers questions about images and "
            "embeds none; only the assistant suite's steps take it"
        )
    add_model_configs()
    torch.manual_seed(spec.seed)  # decides the random init; harmless for loaded weights
    if spec.kind == "timm":
        return _load_timm(spec, device)
    if spec.arch.startswith(hub.HF_HUB):
        return _load_hub_open_clip(spec, device)
    if spec.weights_kind == "hub":  # an open_clip tag fetched before: checked before it loads
        _check_cached(spec)
    try:
        kept = random_init_file(spec)
        made = load_random_init(spec, kept, device) if kept is not None else None
        checkpoint = spec.pretrained if spec.weights_kind == "checkpoint" else None
        head = heads.classes_in(checkpoint) if checkpoint is not None else None
        if (
            head is not None
        ):  # a checkpoint carrying a classification head (vlstress.embedding.heads)
            model, preprocess = heads.load(spec.arch, str(spec.pretrained), head, device)
        elif made is None:
            model, _, preprocess = open_clip.create_model_and_transforms(
                spec.arch, pretrained=spec.pretrained, device=device, cache_dir=spec.cache_dir
            )
            if kept is not None:
                keep_random_init(model, kept)
        else:
            model, preprocess = made
    except VlstressError:
        raise
    except Exception as exc:  # network, corrupt checkpoint, incompatible state dict
        where = {
            "hub": (
                f"pretrained tag {spec.pretrained!r} (hub unreachable or weights not cached in "
                f"{spec.cache_dir})"
            ),
            "checkpoint": f"checkpoint {spec.pretrained}",
            "random-init": "random init",
        }[spec.weights_kind]
        raise VlstressError(
            f"model {spec.slug!r}: could not load {spec.arch} from {where}: {exc}"
        ) from exc
    model.eval()
    if spec.weights_kind == "hub":  # and after, where open_clip has just fetched it
        _check_cached(spec)
    tokenizer = open_clip.get_tokenizer(spec.arch)
    log.info("loaded %s (%s) on %s", spec.slug, spec.weights_label(), device)
    return model, preprocess, tokenizer


def _load_timm(spec: ModelSpec, device: str):
    from vlstress.embedding import timm_models

    weights = None
    if spec.weights_kind == "hub" and hub_ref(spec) is not None:  # else timm fetches them
        folder = hub_snapshot(spec)
        weights = next(str(folder / n) for n in hub.TIMM_WEIGHTS if (folder / n).exists())
    try:
        model, preprocess = timm_models.load(
            spec.arch, spec.pretrained, spec.weights_kind, spec.cache_dir, weights
        )
    except VlstressError:
        raise
    except Exception as exc:  # network, corrupt checkpoint, incompatible state dict
        raise VlstressError(
            f"model {spec.slug!r}: could not load {spec.arch} ({spec.weights_label()}): {exc}"
        ) from exc
    log.info("loaded %s (%s) on %s", spec.slug, spec.weights_label(), device)
    return model.to(device).eval(), preprocess, None


# A seeded random init costs a model step ~1.2 s of random number generation (the default init of
# every layer, then CLIP's own): the tensors it draws, and the generator's state after them, are
# kept in the weight cache the first time and copied into a model built without drawing
# (torch's meta device) after that, as hub weights are downloaded once. The bytes are the same
# (tests/test_models.py); the file's name holds a digest of everything that decides them (the
# architecture's config, the seed, the torch and open_clip versions, the CPU kernel caps).
RANDOM_INIT = "random-init"


def random_init_file(spec: ModelSpec) -> Path | None:
    """Where the random init of `spec` is kept (None: not random-init, or no weight cache)."""
    if spec.weights_kind != "random-init" or not spec.cache_dir:
        return None
    import hashlib
    import json
    import platform

    import open_clip
    import torch

    from vlstress import cpu_kernels

    config = open_clip.get_model_config(spec.arch)
    if config is None:
        return None
    key = {
        "config": config,
        "seed": spec.seed,
        "torch": torch.__version__,
        "open_clip": open_clip.__version__,
        "caps": cpu_kernels.in_effect(),
        "machine": platform.machine(),
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return Path(spec.cache_dir) / RANDOM_INIT / f"{spec.arch}-seed{spec.seed}-{digest}.pt"


def _tensors(model) -> dict[str, Any]:
    """Every parameter and buffer (non-persistent ones too), by name."""
    return {
        **{f"p:{name}": value for name, value in model.named_parameters()},
        **{f"b:{name}": value for name, value in model.named_buffers()},
    }


def keep_random_init(model, path: Path) -> None:
    """Keep a freshly drawn random init (and the generator's state after it) at `path`; a cache
    that cannot be written costs the next step the drawing, not this one its run."""
    import torch

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tensors = {name: value.detach().cpu() for name, value in _tensors(model).items()}
        torch.save({**tensors, "rng": torch.get_rng_state()}, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not keep the random init in %s (%s)", path, exc)
    finally:
        tmp.unlink(missing_ok=True)


def load_random_init(spec: ModelSpec, path: Path, device: str):
    """(model, preprocess) with the random init kept at `path`, and the generator as drawing it
    leaves it; None when there is none, or it does not fit the model (then it is drawn again)."""
    import open_clip
    import torch

    if not path.is_file():
        return None
    try:
        kept = torch.load(path, map_location="cpu", mmap=True, weights_only=True)
        with torch.device("meta"):
            model, _, preprocess = open_clip.create_model_and_transforms(
                spec.arch, pretrained=None, device="meta"
            )
        model.to_empty(device="cpu")
        tensors = _tensors(model)
        if set(tensors) != set(kept) - {"rng"}:
            raise ValueError("other parameters and buffers than the model's")
        with torch.no_grad():
            for name, value in tensors.items():
                value.copy_(kept[name])
        left = [
            name
            for module in model.modules()
            for name, value in vars(module).items()
            if isinstance(value, torch.Tensor) and value.is_meta
        ]
        if left:
            raise ValueError(f"tensors outside its parameters and buffers: {left[:3]}")
        torch.set_rng_state(kept["rng"])
    except Exception as exc:  # noqa: BLE001 - whatever is wrong with it, the init is drawn again
        log.warning("random init %s not used (%s): drawing it again", path, exc)
        torch.manual_seed(spec.seed)
        return None
    return model.to(device), preprocess


def card(spec: ModelSpec) -> dict[str, Any]:
    """A model card: the registry entry checked (architecture, tag or checkpoint) and pinned
    (checkpoint sha256)."""
    check_spec(spec)
    _check_cached(spec)  # a hub model fetched already: its files checked, its commit pinned
    described = describe(spec, count=True)
    return {"kind": "model-card", "model": {**described, "cache_dir": spec.cache_dir}}


def spec_from_card(path: Path) -> ModelSpec:
    """The model of a card written by `vlstress model-card`; a checkpoint edited since is an
    error."""
    data = read_json(path, "model card")
    try:
        model = data["model"]
        spec = ModelSpec(
            slug=model["slug"],
            arch=model["arch"],
            pretrained=model["pretrained"],
            seed=int(model["seed"]),
            cache_dir=model.get("cache_dir"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise VlstressError(
            f"model card {path} lacks {exc}; re-run `vlstress model-card`"
        ) from None
    folder = model.get("folder_sha256")
    if folder and spec.pretrained is not None and Path(spec.pretrained).expanduser().is_dir():
        from vlstress.embedding import llava_entries

        if llava_entries.folder_sha256(spec.pretrained) != folder:
            raise VlstressError(
                f"model {spec.slug!r}: folder {spec.pretrained} changed since its card {path} was "
                "written; re-run `vlstress model-card`"
            )
    pinned = model.get("checkpoint_sha256")
    if (
        pinned
        and spec.pretrained is not None
        and Path(spec.pretrained).is_file()
        and sha256_file(spec.pretrained) != pinned
    ):
        raise VlstressError(
            f"model {spec.slug!r}: checkpoint {spec.pretrained} changed since its card {path} was "
            "written; re-run `vlstress model-card` (the workflow does so when the checkpoint is "
            "tracked)"
        )
    return spec
