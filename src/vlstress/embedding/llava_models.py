"""LLaVA-style assistants (a language model on CLIP's vision encoder) at work, through
`transformers` (`LlavaForConditionalGeneration` for LLaVA-1.5, `LlavaNextForConditionalGeneration`
for LLaVA-NeXT (v1.6), as the config's model_type says, + the processor): building the tiny
random-init ones, loading a hub or folder model, fetching a hub snapshot, and batched greedy
generation.

What a registry entry may say (and the checks of it that need no model library) is
`vlstress.embedding.llava_entries`. Generation is greedy; prompts are padded on the left, as
batched generation needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlstress.embedding import hub
from vlstress.embedding.llava_entries import (
    ARCH,
    PREFIX,
    check,
    hub_ref,
    missing_files,
    model_class,
    weights_kind,
)
from vlstress.errors import VlstressError

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


# the tiny LLaVA of `arch: llava:tiny`: a 32 px CLIP tower of 8 px patches, a two-layer Llama
TINY_VISION = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
               "num_attention_heads": 2, "projection_dim": 32}  # fmt: skip
TINY_TEXT = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 2, "num_key_value_heads": 2,
             "max_position_embeddings": 512}  # fmt: skip


def tiny(seed: int, config: str = "tiny"):
    """(model, processor): the seeded random-init tiny LLaVA (`config` tiny) or LLaVA-NeXT
    (tiny-next: its 32 px tiles on grids up to 64 px); the caller may move the model."""
    return random_llava(
        seed, image_size=32, patch_size=8, vision=TINY_VISION, text=TINY_TEXT,
        grid=((32, 32), (32, 64), (64, 32), (64, 64)) if config == "tiny-next" else None,
    )  # fmt: skip


def random_llava(
    seed: int,
    *,
    image_size: int,
    patch_size: int,
    vision: dict,
    text: dict,
    grid: tuple[tuple[int, int], ...] | None = None,
) -> tuple:
    """(model, processor): a seeded random-init LLaVA of a CLIP vision tower and a Llama of the
    given sizes (`CLIPVisionConfig` / `LlamaConfig` fields), the byte-level tokenizer, LLaVA-1.5's
    conversation format and feature choice (the second-last layer, CLS dropped); with `grid`
    (LLaVA-NeXT's `image_grid_pinpoints`), a LLaVA-NeXT that sees an image in tiles."""
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaNextConfig,
        LlavaNextForConditionalGeneration,
        LlavaNextImageProcessor,
        LlavaNextProcessor,
        LlavaProcessor,
    )

    tokenizer = tiny_tokenizer()
    pinpoints: dict[str, Any] = {}
    if grid:  # LLaVA-NeXT: the sizes an image may be tiled to
        pinpoints["image_grid_pinpoints"] = [list(size) for size in grid]
    common: dict[str, Any] = {
        "vision_config": CLIPVisionConfig(image_size=image_size, patch_size=patch_size, **vision),
        "text_config": LlamaConfig(
            vocab_size=len(tokenizer),
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
            **text,
        ),
        "image_token_index": tokenizer.convert_tokens_to_ids("<image>"),
        "vision_feature_select_strategy": "default",
        "vision_feature_layer": -2,
    }
    torch.manual_seed(seed)
    model: Any
    if grid:
        model = LlavaNextForConditionalGeneration(LlavaNextConfig(**common, **pinpoints))
    else:
        model = LlavaForConditionalGeneration(LlavaConfig(**common))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    sizes: dict[str, Any] = {
        "size": {"shortest_edge": image_size},
        "crop_size": {"height": image_size, "width": image_size},
    }
    processor = (LlavaNextProcessor if grid else LlavaProcessor)(
        image_processor=(
            LlavaNextImageProcessor(**sizes, **pinpoints) if grid else CLIPImageProcessor(**sizes)
        ),
        tokenizer=tokenizer,
        patch_size=patch_size,
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
            model, processor = tiny(seed, arch.removeprefix(PREFIX))
            model = model.to(dtype=getattr(torch, dtype))
        else:
            import transformers
            from transformers import AutoProcessor

            # a hub model: its checked snapshot (fetched unless HF_HUB_OFFLINE is set)
            folder = snapshot(slug, str(pretrained), cache_dir) if kind == "hub" else None
            source = folder or Path(str(pretrained)).expanduser()
            cls = getattr(transformers, model_class(slug, source))
            processor = AutoProcessor.from_pretrained(str(source))
            model = cls.from_pretrained(str(source), dtype=getattr(torch, dtype))
            if folder is not None:  # the commit the snapshot is of (`revision`)
                model.config._commit_hash = folder.name
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


def snapshot(slug: str, hub_id: str, cache_dir: str | None) -> Path:
    """The checked snapshot of a hub LLaVA (weights, config, processor and tokenizer files):
    fetched, or from the weight cache alone with HF_HUB_OFFLINE=1."""
    folder = hub.snapshot(slug, hub_ref(hub_id, cache_dir), hub.transformers_files, ["config.json"])
    missing = missing_files(folder)
    if missing:
        raise VlstressError(
            f"model {slug!r}: the hub repository {hub_id} lacks {', '.join(missing)} (its "
            f"snapshot: {folder}): not a LLaVA saved with its processor"
        )
    return folder


def fetch(slug: str, hub_id: str, cache_dir: str | None) -> Path:
    """Download a hub LLaVA into the weight cache, where `load` finds it offline (`vlstress
    fetch-weights`)."""
    check(slug, ARCH, hub_id)
    return snapshot(slug, hub_id, cache_dir)


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
