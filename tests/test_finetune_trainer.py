"""The fine-tuning loop on a tiny CLIP: the loss falls, SC and VC widen the margins they target
(more than training without them), and a run stopped and resumed ends at the uninterrupted
weights."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.finetune.data import ClassPrompts, Sample, TrainingPairs
from vlstress.suites.finetune.trainer import TrainConfig, flyp_loss, lr_factor, train
from vlstress.suites.rococo_image.variants import make_plan

COLOURS = {
    "red": (220, 30, 30),
    "green": (30, 200, 40),
    "blue": (30, 40, 220),
    "yellow": (230, 220, 30),
}
SHAPES = ("square", "stripe", "dot")
# the altered captions name colours no image has: only SC ever sees them (as an in-batch caption
# they would be pushed away by the CLIP loss alone)
UNSEEN = {"red": "purple", "green": "orange", "blue": "pink", "yellow": "brown"}


def draw(path: Path, colour: tuple[int, int, int], shape: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 40, (32, 32, 3), dtype=np.uint8)
    if shape == "square":
        pixels[8:24, 8:24] = colour
    elif shape == "stripe":
        pixels[:, 12:20] = colour
    else:
        pixels[12:20, 12:20] = colour
    Image.fromarray(pixels).save(path)


@pytest.fixture(scope="module")
def setup(module_tmp, tiny_arch):
    import open_clip

    folder = module_tmp.mktemp("train")
    paths, samples = [], []
    for i, (colour, shape) in enumerate((c, s) for c in COLOURS for s in SHAPES):
        path = folder / f"{i}.png"
        draw(path, COLOURS[colour], shape, i)
        paths.append(str(path))
        # one word replaced
        samples.append(Sample(i, f"a {colour} {shape}", f"a {UNSEEN[colour]} {shape}"))
    _, _, preprocess = open_clip.create_model_and_transforms(tiny_arch)
    tokenizer = open_clip.get_tokenizer(tiny_arch)
    plan = make_plan(len(paths), "mix", 0.5, seed=1)
    return tiny_arch, TrainingPairs(paths, samples, plan, preprocess, tokenizer)


def fresh_model(arch: str):
    import open_clip

    torch.manual_seed(0)
    return open_clip.create_model(arch)


def run(setup, steps: int = 30, **overrides):
    arch, pairs = setup
    model = fresh_model(arch)
    config = TrainConfig(
        **{"steps": steps, "batch_size": 6, "lr": 1e-3, "warmup": 2, "seed": 0, **overrides}
    )
    return model, train(model, pairs, config, device="cpu", progress=False)


def mean(history, key, rows):
    return float(np.mean([h[key] for h in history[rows]]))


def test_the_loss_falls(setup):
    torch.set_num_threads(1)
    _, history = run(setup)
    assert len(history) == 30 and [h["step"] for h in history] == list(range(1, 31))
    assert mean(history, "total", slice(-5, None)) < 0.8 * mean(history, "total", slice(0, 5))


@pytest.mark.parametrize(("weight", "margin"), [("w_sc", "margin_sc"), ("w_vc", "margin_vc")])
def test_each_loss_widens_its_margin_more_than_training_without_it(setup, weight, margin):
    torch.set_num_threads(1)
    _, with_it = run(setup, **{"w_sc": 0.0, "w_vc": 0.0, weight: 2.0})
    _, without = run(setup, w_sc=0.0, w_vc=0.0)
    gain_with = mean(with_it, margin, slice(-5, None)) - mean(with_it, margin, slice(0, 3))
    gain_without = mean(without, margin, slice(-5, None)) - mean(without, margin, slice(0, 3))
    assert gain_with > 0 and gain_with > gain_without, (gain_with, gain_without)


def test_a_stopped_run_resumes_to_the_uninterrupted_weights(setup, tmp_path):
    torch.set_num_threads(1)
    arch, pairs = setup
    config = TrainConfig(
        steps=8, batch_size=6, lr=1e-3, warmup=2, accumulate=2, checkpoint_every=3, seed=0
    )
    reference = fresh_model(arch)
    reference_log = train(reference, pairs, config, device="cpu", progress=False)
    resume = tmp_path / "resume.pt"
    model = fresh_model(arch)
    # "killed" after step 5
    train(model, pairs, config, device="cpu", resume_path=resume, progress=False, stop_after=5)
    assert resume.is_file()  # the last checkpoint: step 3
    again = fresh_model(arch)  # a new process starts from the base weights and finds the checkpoint
    log = train(again, pairs, config, device="cpu", resume_path=resume, progress=False)
    assert log == reference_log
    for (name, a), b in zip(reference.state_dict().items(), again.state_dict().values()):
        assert torch.equal(a, b), name
    other = TrainConfig(**{**config.__dict__, "lr": 2e-3})
    assert (
        train(
            fresh_model(arch),
            pairs,
            other,
            device="cpu",
            resume_path=resume,
            progress=False,
            stop_after=1,
        )[0]["step"]
        == 1
    )


def test_schedule_and_settings():
    assert [round(lr_factor(s, 10, 2), 3) for s in (0, 1, 2, 10)] == [0.5, 1.0, 1.0, 0.0]
    assert lr_factor(6, 10, 2) == pytest.approx(0.5)
    with pytest.raises(VlstressError, match="not a multiple of accumulate"):
        TrainConfig(steps=1, batch_size=5, lr=1e-3, accumulate=2).check()
    with pytest.raises(VlstressError, match="unknown loss form"):
        TrainConfig(steps=1, batch_size=4, lr=1e-3, form="triplet").check()


def test_lora_training_changes_only_the_adapted_layers(setup):
    """LoRA as `vlstress finetune` runs it: adapters on the image tower's MLPs train, merge into
    those weights, and every other weight ends where it began, bit for bit."""
    from vlstress.suites.finetune import lora

    torch.set_num_threads(1)
    arch, pairs = setup
    model = fresh_model(arch)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    wrapper = lora.add_adapters(
        model, rank=2, alpha=8, dropout=0.0, tower="image", modules=["mlp.c_fc", "mlp.c_proj"]
    )
    config = TrainConfig(steps=8, batch_size=6, lr=1e-2, seed=0, lora_rank=2)
    history = train(model, pairs, config, device="cpu", progress=False)
    assert len(history) == 8
    after = lora.merge(wrapper).state_dict()
    assert after.keys() == before.keys()
    adapted = {k for k in before if ".mlp.c_" in k and k.startswith("visual.") and "weight" in k}
    assert len(adapted) == 2
    for key, value in before.items():
        if key in adapted:
            assert not torch.equal(after[key], value), key
        else:
            assert torch.equal(after[key], value), key


def test_lora_with_a_frozen_tower_is_refused():
    with pytest.raises(VlstressError, match="LoRA trains only its adapters"):
        TrainConfig(steps=1, batch_size=1, lr=1e-3, lora_rank=4, freeze="text").check()


def test_a_full_fine_tuning_depends_on_no_lora_setting():
    """Editing finetune.lora leaves a rank-0 variant's settings (sidecar, resume fingerprint)
    as they were; with LoRA they count, and so does peft's version."""
    import peft

    full = TrainConfig(steps=2, batch_size=2, lr=1e-3)
    edited = TrainConfig(steps=2, batch_size=2, lr=1e-3, lora_alpha=64, lora_tower="text")
    assert full.fingerprint() == edited.fingerprint() and full.settings() == edited.settings()
    assert "lora_alpha" not in full.settings()
    lora = TrainConfig(steps=2, batch_size=2, lr=1e-3, lora_rank=4)
    other = TrainConfig(steps=2, batch_size=2, lr=1e-3, lora_rank=4, lora_alpha=64)
    assert lora.fingerprint() != other.fingerprint()
    assert lora.settings()["peft"] == peft.__version__ and lora.settings()["lora_alpha"] == 16


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"lora_dropout": 1.0}, "LoRA dropout must be in [0, 1), not 1.0"),
        ({"lora_modules": ()}, "LoRA needs at least one module"),
        ({"lora_alpha": 0}, "LoRA alpha must be >= 1, not 0"),
    ],
)
def test_bad_lora_settings_are_named(overrides, needle):
    with pytest.raises(VlstressError, match=re.escape(needle)):
        TrainConfig(steps=1, batch_size=1, lr=1e-3, lora_rank=4, **overrides).check()


# ------------------------------------------------------------------ FLYP


@pytest.fixture(scope="module")
def flyp_setup(setup):
    """The same images, labelled by colour, with two templates."""
    import open_clip

    arch, pairs = setup
    labels = [list(COLOURS).index(c) for c in COLOURS for _ in SHAPES]
    _, _, preprocess = open_clip.create_model_and_transforms(arch)
    prompts = ClassPrompts(
        pairs.paths,
        labels,
        list(COLOURS),
        ["a photo of a {c} thing.", "something {c}."],
        preprocess,
        open_clip.get_tokenizer(arch),
    )
    return arch, prompts


def test_class_prompts_show_every_image_with_every_template_once_an_epoch(flyp_setup):
    _, prompts = flyp_setup
    n = len(prompts)
    assert n == 12 * 2
    epoch = np.concatenate([prompts.rows(step, 6, seed=3) for step in range(n // 6)])
    assert sorted(epoch.tolist()) == list(range(n))
    assert (prompts.rows(1, 6, seed=3) == prompts.rows(1, 6, seed=3)).all()
    assert not (prompts.rows(0, 6, seed=3) == prompts.rows(0, 6, seed=4)).all()
    # sample 2k + t: image k with template t, the class name of the image's label
    assert prompts.prompt(0) == "a photo of a red thing."
    assert prompts.prompt(2 * 4 + 1) == "something green."  # image 4: green, stripe
    pixels, tokens = prompts.batch(np.array([0, 9]))
    assert pixels.shape[0] == tokens.shape[0] == 2


def test_flyp_loss_is_open_clips_clip_loss_on_images_and_their_prompts(flyp_setup):
    from open_clip.loss import ClipLoss

    arch, prompts = flyp_setup
    model = fresh_model(arch).eval()
    batch = prompts.batch(np.array([0, 7, 13, 20]))
    loss, terms = flyp_loss(model, model, batch, ClipLoss(), TrainConfig(1, 4, 1e-3, loss="flyp"))
    with torch.no_grad():
        image = torch.nn.functional.normalize(model.encode_image(batch[0]), dim=-1)
        text = torch.nn.functional.normalize(model.encode_text(batch[1]), dim=-1)
        logits = model.logit_scale.exp() * image @ text.T
        target = torch.arange(4)
        expected = (
            torch.nn.functional.cross_entropy(logits, target)
            + torch.nn.functional.cross_entropy(logits.T, target)
        ) / 2
    assert float(loss.detach()) == pytest.approx(float(expected), rel=1e-5)
    assert terms == {"clip": pytest.approx(float(expected), rel=1e-5), "total": terms["clip"]}


def zero_shot_accuracy(model, prompts: ClassPrompts) -> float:
    """Top-1 of the images among their classes' first-template prompts."""
    with torch.no_grad():
        pixels, _ = prompts.batch(np.arange(0, len(prompts), len(prompts.templates)))
        names = [prompts.templates[0].replace("{c}", c) for c in prompts.classes]
        image = torch.nn.functional.normalize(model.encode_image(pixels), dim=-1)
        text = torch.nn.functional.normalize(model.encode_text(prompts.tokenizer(names)), dim=-1)
        predicted = (image @ text.T).argmax(1).numpy()
    return float((predicted == np.array(prompts.labels)).mean())


def test_flyp_training_teaches_the_classes_and_leaves_out_the_sc_vc_settings(flyp_setup):
    torch.set_num_threads(1)
    arch, prompts = flyp_setup
    model = fresh_model(arch)
    before = zero_shot_accuracy(model, prompts)
    config = TrainConfig(steps=40, batch_size=6, lr=1e-4, warmup=2, seed=0, loss="flyp")
    history = train(model, prompts, config, device="cpu", progress=False)
    assert set(history[0]) == {"step", "lr", "clip", "total"}
    assert mean(history, "total", slice(-5, None)) < 0.9 * mean(history, "total", slice(0, 5))
    # random init puts every image in one class (1 of 4); FLYP's prompts teach the colours
    assert zero_shot_accuracy(model, prompts) >= before + 0.25, before
    assert not {"w_sc", "w_vc", "form", "margin"} & set(config.settings())
    assert config.fingerprint() != TrainConfig(steps=40, batch_size=6, lr=1e-4).fingerprint()


def test_an_unknown_loss_is_named():
    with pytest.raises(VlstressError, match="unknown loss 'dino'"):
        TrainConfig(steps=1, batch_size=1, lr=1e-3, loss="dino").check()


# ------------------------------------------------------------------ standard fine-tuning


def with_zero_shot_head(arch: str, prompts: ClassPrompts):
    from vlstress.suites.finetune.run import zero_shot_head

    model = fresh_model(arch)
    zero_shot_head(model, prompts.tokenizer, prompts.classes, prompts.templates, "cpu", "fp32")
    return model


def test_the_standard_head_starts_as_the_zero_shot_classifier(flyp_setup):
    """WiSE-FT's initialisation: logits through the head = logit scale x cosine with the
    normalised mean of the class's prompt embeddings."""
    arch, prompts = flyp_setup
    model = with_zero_shot_head(arch, prompts).eval()
    pixels, _ = prompts.batch(np.array([0, 6, 12]))
    with torch.no_grad():
        image = torch.nn.functional.normalize(model.encode_image(pixels), dim=-1)
        head = model.vlstress_head(image)
        text = [
            torch.nn.functional.normalize(
                model.encode_text(
                    prompts.tokenizer([t.replace("{c}", c) for t in prompts.templates])
                ),
                dim=-1,
            ).mean(0)
            for c in prompts.classes
        ]
        mean = torch.nn.functional.normalize(torch.stack(text), dim=-1)
        expected = model.logit_scale.exp() * image @ mean.T
    torch.testing.assert_close(head, expected, rtol=1e-4, atol=1e-4)


def test_standard_loss_is_cross_entropy_of_the_head_logits(flyp_setup):
    from vlstress.suites.finetune.data import LabelledImages
    from vlstress.suites.finetune.trainer import standard_loss

    arch, prompts = flyp_setup
    model = with_zero_shot_head(arch, prompts).eval()
    images = LabelledImages(prompts.paths, prompts.labels, prompts.preprocess)
    pixels, labels = images.batch(np.array([0, 4, 8, 11]))
    assert labels.tolist() == [0, 1, 2, 3]
    loss, terms = standard_loss(model, model, (pixels, labels), None, TrainConfig(1, 4, 1e-3))
    with torch.no_grad():
        image = torch.nn.functional.normalize(model.encode_image(pixels), dim=-1)
        logits = model.vlstress_head(image)
    expected = torch.nn.functional.cross_entropy(logits, labels)
    assert terms["ce"] == terms["total"] == pytest.approx(float(expected), rel=1e-5)
    assert terms["accuracy"] == float((logits.argmax(1) == labels).float().mean())
    assert float(loss.detach()) == pytest.approx(float(expected), rel=1e-5)


def test_standard_training_learns_the_classes_and_leaves_the_text_tower(flyp_setup):
    from vlstress.suites.finetune.data import LabelledImages

    torch.set_num_threads(1)
    arch, prompts = flyp_setup
    model = with_zero_shot_head(arch, prompts)
    text_before = {
        k: v.clone() for k, v in model.state_dict().items() if k.startswith("transformer.")
    }
    images = LabelledImages(prompts.paths, prompts.labels, prompts.preprocess)
    config = TrainConfig(steps=30, batch_size=6, lr=1e-3, warmup=2, seed=0, loss="standard")
    history = train(model, images, config, device="cpu", progress=False)
    assert set(history[0]) == {"step", "lr", "ce", "accuracy", "total"}
    assert mean(history, "total", slice(-5, None)) < 0.5 * mean(history, "total", slice(0, 5))
    assert mean(history, "accuracy", slice(-5, None)) > mean(history, "accuracy", slice(0, 5))
    after = model.state_dict()
    assert all(torch.equal(after[k], v) for k, v in text_before.items())
    assert not {"w_sc", "w_vc", "form", "margin"} & set(config.settings())


def test_a_checkpoint_with_a_head_loads_with_it(flyp_setup, tmp_path):
    from safetensors.torch import save_file

    from vlstress.embedding import heads, models

    arch, prompts = flyp_setup
    model = with_zero_shot_head(arch, prompts)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    path = tmp_path / "model.safetensors"
    save_file(state, str(path), metadata=heads.metadata(model))
    spec = models.ModelSpec("tuned", arch, str(path), seed=0)
    loaded, _, _ = models.load(spec, "cpu", threads=1)
    weights, classes = heads.of(loaded)
    assert classes == list(COLOURS)
    np.testing.assert_array_equal(weights, model.vlstress_head.weight.detach().numpy())
    assert models.describe(spec, loaded)["head_classes"] == 4
    assert models.card(spec)["model"]["head_classes"] == 4  # the card reads the header only
    # the head's rows of a set's classes, in the set's order; a class it lacks: none
    np.testing.assert_array_equal(heads.rows_for(loaded, ["blue", "red"]), weights[[2, 0]])
    assert heads.rows_for(loaded, ["red", "purple"]) is None
    # a head without its class names is refused, naming the file
    save_file(state, str(path))
    with pytest.raises(VlstressError, match="model.safetensors: a head .* without its class"):
        heads.classes_in(path)
