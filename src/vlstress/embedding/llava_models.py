"""LLaVA-style assistants (a language model on CLIP's vision encoder) as models of the registry,
through `transformers` (`LlavaForConditionalGeneration` + its processor).

An assistant answers questions about an image; it embeds nothing, so only the steps made for it
take it (`vlstress.embedding.kinds`). Registry entries:
- `arch: llava`, `pretrained: <hub id>`   -> e.g. `llava-hf/llava-1.5-7b-hf`, fetched into
                                              `<cache_dir>/hf` (its revision in provenance);
- `arch: llava`, `pretrained: <folder>`   -> a local folder as `save_pretrained` writes it:
                                              config, weights, processor and tokenizer files
                                              (a folder without them is refused by name);
- `arch: llava:tiny`, `pretrained: null`  -> a seeded random-init tiny LLaVA built from a config
                                              (CLIP vision tower 32 px, two-layer Llama, byte-level
                                              tokenizer), labelled "random-init": the demo's and the
                                              tests', whose answers mean nothing.
Generation is greedy; prompts are padded on the left, as batched generation needs.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from vlstress.errors import VlstressError

ARCH = "llava"
PREFIX = "llava:"
TINY = "tiny"  # the one built-in config (`arch: llava:tiny`)
HUB_SUBDIR = "hf"  # inside the weight cache
CONFIG_FILES = ("config.json",)
PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")
WEIGHT_SUFFIXES = (".safetensors", ".bin")

# LLaVA-1.5's conversation format ("USER: <image>\n... ASSISTANT:"), as llava-hf's processors carry
# it; the tiny model gets it too, so every assistant is asked through its processor's template
LLAVA15_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'].upper() + ': ' }}"
    "{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "{{ '<image>\n' }}{% endif %}{% endfor %}"
    "{% for content in message['content'] %}{% if content['type'] == 'text' %}"
    "{{ content['text'] + ' ' }}{% endif %}{% endfor %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)


def is_llava(arch: str) -> bool:
    return arch == ARCH or arch.startswith(PREFIX)


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


def tiny_tokenizer():
    """A byte-level tokenizer (every text encodes and decodes exactly) with LLaVA's specials."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {token: i for i, token in enumerate(specials + alphabet)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens={"image_token": "<image>"},
        additional_special_tokens=["<image>"],
    )


def tiny(seed: int):
    """(model, processor): the seeded random-init tiny LLaVA (the caller may move the model)."""
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = tiny_tokenizer()
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
        projection_dim=32,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=LLAVA15_CHAT_TEMPLATE,
    )
    return model, processor


def load(
    slug: str,
    arch: str,
    pretrained: str | None,
    *,
    seed: int,
    cache_dir: str | None,
    device: str,
    dtype: str = "float32",
):
    """(model in eval mode on `device`, processor padding on the left); every failure names the
    model."""
    import torch

    check(slug, arch, pretrained)
    kind = weights_kind(pretrained)
    try:
        if kind == "random-init":
            model, processor = tiny(seed)
            model = model.to(dtype=getattr(torch, dtype))
        else:
            from transformers import AutoProcessor, LlavaForConditionalGeneration

            source = str(Path(str(pretrained)).expanduser()) if kind == "folder" else pretrained
            hub_cache = os.path.join(cache_dir, HUB_SUBDIR) if cache_dir and kind == "hub" else None
            processor = AutoProcessor.from_pretrained(source, cache_dir=hub_cache)
            model = LlavaForConditionalGeneration.from_pretrained(
                source, dtype=getattr(torch, dtype), cache_dir=hub_cache
            )
    except VlstressError:
        raise
    except Exception as exc:  # network, missing or corrupt files, not a LLaVA
        where_from = {
            "hub": f"hub id {pretrained!r} (hub unreachable or not cached in {cache_dir})",
            "folder": f"folder {pretrained}",
            "random-init": "its random init",
        }[kind]
        raise VlstressError(
            f"model {slug!r}: could not load a LLaVA from {where_from}: {exc}"
        ) from exc
    if getattr(processor, "chat_template", None) is None:
        raise VlstressError(
            f"model {slug!r}: its processor has no chat template, so the question cannot be put "
            "in the model's conversation format; save one with the processor"
        )
    processor.tokenizer.padding_side = "left"
    if processor.tokenizer.pad_token is None:
        raise VlstressError(f"model {slug!r}: its tokenizer has no padding token (batched prompts)")
    return model.to(device).eval(), processor


def fetch(slug: str, hub_id: str, cache_dir: str | None) -> Path:
    """Download a hub LLaVA (weights, config, processor and tokenizer files) into the weight
    cache, where `load` finds it offline (`vlstress fetch-weights`)."""
    from huggingface_hub import snapshot_download

    check(slug, ARCH, hub_id)
    where = os.path.join(cache_dir, HUB_SUBDIR) if cache_dir else None
    try:
        return Path(snapshot_download(hub_id, cache_dir=where))
    except Exception as exc:  # network, unknown id, gated repository
        raise VlstressError(
            f"model {slug!r}: could not fetch {hub_id} from the hub: {exc}"
        ) from exc


def revision(model) -> str | None:
    """The hub commit the weights were loaded from (None for a folder or a random init)."""
    return getattr(model.config, "_commit_hash", None)


def n_params(model) -> dict[str, int]:
    """Parameters of the whole model and of its vision tower (CLIP's encoder)."""
    vision = model.model.vision_tower if hasattr(model, "model") else model.vision_tower
    return {
        "n_params": int(sum(p.numel() for p in model.parameters())),
        "n_params_vision": int(sum(p.numel() for p in vision.parameters())),
    }


def describe_weights(pretrained: str | None) -> dict[str, Any]:
    """What the card pins of a folder (its digest); nothing for a hub id or a random init."""
    if weights_kind(pretrained) == "folder":
        return {"folder_sha256": folder_sha256(str(pretrained))}
    return {}


def chat_prompt(processor, text: str) -> str:
    """One user turn of an image and `text`, in the model's conversation format, ending where the
    assistant's answer starts."""
    conversation = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}
    ]
    return processor.apply_chat_template(conversation, add_generation_prompt=True)


def generate(
    model,
    processor,
    paths: list[Path],
    texts: list[str],
    *,
    batch_size: int,
    max_new_tokens: int,
    device: str,
    desc: str = "answers",
) -> list[str]:
    """Each image's answer to its text: greedy decoding, `batch_size` questions a call (prompts
    padded on the left), the answer's tokens decoded without special tokens."""
    import torch
    from tqdm.auto import tqdm

    from vlstress.embedding.encoders import load_rgb

    if len(paths) != len(texts):
        raise VlstressError(f"{len(paths)} images for {len(texts)} questions")
    answers: list[str] = []
    with tqdm(total=len(paths), desc=desc, unit="question") as progress:
        for start in range(0, len(paths), batch_size):
            images = [load_rgb(path) for path in paths[start : start + batch_size]]
            prompts = [chat_prompt(processor, text) for text in texts[start : start + batch_size]]
            batch = processor(images=images, text=prompts, return_tensors="pt", padding=True)
            batch = batch.to(device)
            if "pixel_values" in batch:
                batch["pixel_values"] = batch["pixel_values"].to(model.dtype)
            with torch.inference_mode():
                out = model.generate(
                    **batch,
                    do_sample=False,
                    num_beams=1,
                    max_new_tokens=max_new_tokens,
                    pad_token_id=processor.tokenizer.pad_token_id,
                )
            new = out[:, batch["input_ids"].shape[1] :]
            answers += processor.tokenizer.batch_decode(new, skip_special_tokens=True)
            progress.update(len(images))
    return answers
