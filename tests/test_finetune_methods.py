"""WiSE-FT and LoRA, the fine-tuning methods beside SC/VC: WiSE-FT's end points are the two
models bit for bit, LoRA's zero-initialised adapters change nothing before training, and bad
settings are named."""

from __future__ import annotations

import argparse

import pytest
import torch
from safetensors.torch import load_file, save_file

from vlstress.errors import VlstressError
from vlstress.suites.finetune import lora, wise


def tiny(arch: str, seed: int):
    import open_clip

    torch.manual_seed(seed)
    return open_clip.create_model(arch).eval()


def state(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# ------------------------------------------------------------------ WiSE-FT


@pytest.fixture(scope="module")
def ends(tiny_arch):
    return state(tiny(tiny_arch, 0)), state(tiny(tiny_arch, 1))


def test_wise_end_points_are_the_two_models_exactly(ends):
    base, tuned = ends
    assert any(not torch.equal(base[k], tuned[k]) for k in base)  # two different models
    zero, one = wise.interpolate(base, tuned, 0.0), wise.interpolate(base, tuned, 1.0)
    assert all(torch.equal(zero[k], base[k]) for k in base)
    assert all(torch.equal(one[k], tuned[k]) for k in base)


def test_wise_halfway_is_the_mean_of_the_weights(ends):
    base, tuned = ends
    half = wise.interpolate(base, tuned, 0.5)
    quarter = wise.interpolate(base, tuned, 0.25)
    for key, value in base.items():
        if value.is_floating_point():
            torch.testing.assert_close(half[key], (value + tuned[key]) / 2)
            torch.testing.assert_close(quarter[key], 0.75 * value + 0.25 * tuned[key])
            assert half[key].dtype == value.dtype
        else:  # integer buffers are the models' own, never mixed
            assert torch.equal(half[key], value)


@pytest.mark.parametrize("alpha", [-0.1, 1.5])
def test_an_alpha_outside_0_1_is_refused(ends, alpha):
    with pytest.raises(VlstressError, match=r"alpha must be in \[0, 1\]"):
        wise.interpolate(*ends, alpha)


def test_wise_refuses_models_of_two_architectures(ends):
    base, tuned = ends
    other = dict(tuned)
    other.pop(next(iter(other)))
    with pytest.raises(VlstressError, match="differ in 1 tensor"):
        wise.interpolate(base, other, 0.5)
    key = next(k for k, v in base.items() if v.ndim == 2)
    with pytest.raises(VlstressError, match=key.replace(".", r"\.")):
        wise.interpolate(base, {**tuned, key: tuned[key][:1]}, 0.5)


def test_the_wise_ft_command_writes_a_loadable_checkpoint(tiny_arch, ends, tmp_path):
    from vlstress.embedding import models
    from vlstress.io import read_json
    from vlstress.suites.finetune.commands import wise_ft

    base, tuned = ends
    save_file(tuned, str(tmp_path / "tuned.safetensors"))

    def run(alpha: str, out: str) -> dict[str, torch.Tensor]:
        parser = argparse.ArgumentParser()
        wise_ft.add_arguments(parser)
        args = parser.parse_args(
            ["--model", "base", "--arch", tiny_arch, "--seed", "0", "--threads", "1"]
            + ["--finetuned", str(tmp_path / "tuned.safetensors"), "--alpha", alpha]
            + ["--out", str(tmp_path / out)]
        )
        wise_ft.run(args)
        return load_file(str(tmp_path / out))

    # the base is the registry's seeded random init, rebuilt by the step
    seeded, _, _ = models.load(models.ModelSpec("base", tiny_arch, None, seed=0), "cpu")
    zero = run("0", "zero.safetensors")
    assert all(torch.equal(zero[k], v) for k, v in seeded.state_dict().items())
    one = run("1", "one.safetensors")
    assert all(torch.equal(one[k], tuned[k]) for k in tuned)
    run("0.5", "half.safetensors")
    card = read_json(tmp_path / "half.safetensors.json")
    assert card["alpha"] == 0.5 and card["provenance"]["params"]["alpha"] == 0.5
    # a model entry naming the checkpoint evaluates it like any other
    spec = models.ModelSpec("half", tiny_arch, str(tmp_path / "half.safetensors"))
    loaded, _, _ = models.load(spec, "cpu")
    torch.testing.assert_close(
        loaded.state_dict()["logit_scale"], (base["logit_scale"] + tuned["logit_scale"]) / 2
    )
    with pytest.raises(VlstressError, match=r"alpha must be in \[0, 1\]"):
        run("1.5", "bad.safetensors")
    assert not (tmp_path / "bad.safetensors").exists()


# ------------------------------------------------------------------ LoRA


def batch(arch: str):
    import open_clip

    torch.manual_seed(5)
    images = torch.randn(3, 3, 32, 32)
    texts = open_clip.get_tokenizer(arch)(["a red square", "a dot", "stripes"])
    return images, texts


def adapted(arch: str, **overrides):
    model = tiny(arch, 0)
    settings = {
        "rank": 2,
        "alpha": 4,
        "dropout": 0.0,
        "tower": "image",
        "modules": ["mlp.c_fc", "mlp.c_proj"],
    }
    return model, lora.add_adapters(model, **{**settings, **overrides})


def test_zero_initialised_adapters_leave_the_outputs_unchanged(tiny_arch):
    images, texts = batch(tiny_arch)
    plain = tiny(tiny_arch, 0)
    with torch.no_grad():
        before = plain.encode_image(images), plain.encode_text(texts)
    model, wrapper = adapted(tiny_arch)
    with torch.no_grad():
        after = model.encode_image(images), model.encode_text(texts)
    # the same weights through another code path (peft's wrapper; frozen weights can take torch's
    # fused attention): equal to float rounding, not bit for bit (it differed in the last bits
    # under pytest-xdist)
    for plain_out, adapted_out in zip(before, after):
        torch.testing.assert_close(adapted_out, plain_out, rtol=1e-6, atol=1e-6)
    # only the adapters train: rank * (in + out) per adapted layer
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    assert all(n.startswith("visual.") for n in trainable)
    assert lora.trainable(model) == sum(2 * (64 + 256) for _ in range(2))  # 1 block, c_fc + c_proj
    # merged untrained adapters give back the model's own state dict, bit for bit
    merged = lora.merge(wrapper)
    assert state(merged).keys() == state(plain).keys()
    assert all(torch.equal(v, state(plain)[k]) for k, v in state(merged).items())


def test_merged_adapters_compute_what_the_adapted_model_does(tiny_arch):
    images, texts = batch(tiny_arch)
    model, wrapper = adapted(tiny_arch, tower="image")
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(0, 0.5)
        adapted_out = model.encode_image(images)
        text_before = model.encode_text(texts)
    merged = lora.merge(wrapper)
    with torch.no_grad():
        assert not torch.allclose(adapted_out, tiny(tiny_arch, 0).encode_image(images))
        torch.testing.assert_close(merged.encode_image(images), adapted_out, rtol=1e-4, atol=1e-5)
        # the text tower untouched (to float rounding: see above)
        torch.testing.assert_close(merged.encode_text(texts), text_before, rtol=1e-6, atol=1e-6)


def test_a_lora_module_that_does_not_exist_is_named(tiny_arch):
    with pytest.raises(VlstressError, match=r"'mlp\.c_fx' is no Linear layer of the image tower"):
        adapted(tiny_arch, modules=["mlp.c_fc", "mlp.c_fx"])
    with pytest.raises(VlstressError, match="close: .*c_fc"):
        adapted(tiny_arch, modules=["c_fx"])


def test_lora_on_attention_out_proj_is_refused(tiny_arch):
    # nn.MultiheadAttention reads out_proj.weight in its fused kernel: an adapter would train
    # nothing and still change the merged weights
    with pytest.raises(VlstressError, match="MultiheadAttention"):
        adapted(tiny_arch, modules=["attn.out_proj"])


def test_lora_on_the_text_tower_adapts_only_it(tiny_arch):
    model, _ = adapted(tiny_arch, tower="text")
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and not any(n.startswith("visual.") for n in trainable)
