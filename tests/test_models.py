"""Model registry entries: random init, local checkpoint, hub tags, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlstress.embedding import models
from vlstress.errors import VlstressError


def first_weights(model) -> np.ndarray:
    return next(model.parameters()).detach().numpy().copy()


def test_random_init_is_seeded_and_labelled(tiny_arch):
    spec = models.ModelSpec("tiny", tiny_arch, None, seed=3)
    a, _, _ = models.load(spec, "cpu")
    b, _, _ = models.load(spec, "cpu")
    c, _, _ = models.load(models.ModelSpec("tiny", tiny_arch, None, seed=4), "cpu")
    np.testing.assert_array_equal(first_weights(a), first_weights(b))
    assert not np.array_equal(first_weights(a), first_weights(c))
    info = models.describe(spec, a)
    assert info["weights"] == "random-init" and "random-init" in info["weights_label"]
    assert info["n_params"] == sum(p.numel() for p in a.parameters())


def _everything(model) -> dict[str, torch.Tensor]:
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def test_a_kept_random_init_is_the_drawn_one_to_the_bit(tiny_arch, tmp_path, monkeypatch):
    spec = models.ModelSpec("tiny", tiny_arch, None, seed=3, cache_dir=str(tmp_path))
    drawn, _, _ = models.load(models.ModelSpec("tiny", tiny_arch, None, seed=3), "cpu")
    after_drawing = torch.get_rng_state()
    first, _, _ = models.load(spec, "cpu")  # draws it and keeps it
    (kept,) = (tmp_path / models.RANDOM_INIT).glob(f"{tiny_arch}-seed3-*.pt")
    assert kept == models.random_init_file(spec)

    def no_drawing(method):
        def draw(tensor, *args, **kwargs):
            assert tensor.is_meta, "the kept init is copied, not drawn"
            return method(tensor, *args, **kwargs)

        return draw

    with monkeypatch.context() as patch:
        for name in ("normal_", "uniform_"):
            patch.setattr(torch.Tensor, name, no_drawing(getattr(torch.Tensor, name)))
        again, preprocess, _ = models.load(spec, "cpu")
    assert torch.equal(torch.get_rng_state(), after_drawing)  # later draws are the same too
    reference = _everything(drawn)
    for model in (first, again):
        ours = _everything(model)
        assert set(ours) == set(reference) and not model.training
        assert all(torch.equal(ours[name], reference[name]) for name in reference)
    assert models.describe(spec, again)["n_params"] == models.describe(spec, drawn)["n_params"]
    assert callable(preprocess)
    other = models.random_init_file(models.ModelSpec("tiny", tiny_arch, None, 4, str(tmp_path)))
    assert other != kept  # one file per seed
    assert models.random_init_file(models.ModelSpec("tiny", tiny_arch, None, 3)) is None


def test_a_damaged_kept_random_init_is_drawn_again(tiny_arch, tmp_path, caplog):
    spec = models.ModelSpec("tiny", tiny_arch, None, seed=5, cache_dir=str(tmp_path))
    drawn, _, _ = models.load(models.ModelSpec("tiny", tiny_arch, None, seed=5), "cpu")
    kept = models.random_init_file(spec)
    assert kept is not None
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"not a checkpoint")
    loaded, _, _ = models.load(spec, "cpu")
    assert "drawing it again" in caplog.text
    reference = _everything(drawn)
    assert all(torch.equal(value, reference[name]) for name, value in _everything(loaded).items())


def test_local_checkpoint_loads_exact_weights(tiny_arch, tmp_path):
    source, _, _ = models.load(models.ModelSpec("tiny", tiny_arch, None, seed=7), "cpu")
    ckpt = tmp_path / "tiny.pt"
    torch.save({"state_dict": source.state_dict()}, ckpt)
    spec = models.ModelSpec("tiny-ckpt", tiny_arch, str(ckpt), seed=0)
    loaded, _, _ = models.load(spec, "cpu")
    np.testing.assert_array_equal(first_weights(loaded), first_weights(source))
    info = models.describe(spec)
    assert info["weights"] == "checkpoint" and len(info["checkpoint_sha256"]) == 64


def test_unknown_arch_is_a_clear_error():
    with pytest.raises(VlstressError, match="unknown open_clip architecture 'ViT-Q-99'"):
        models.check_spec(models.ModelSpec("bad", "ViT-Q-99", None))


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.pt"
    with pytest.raises(VlstressError, match="checkpoint file not found"):
        models.check_spec(models.ModelSpec("bad", "ViT-B-32", str(missing)))


def test_unknown_hub_tag_is_a_clear_error():
    with pytest.raises(VlstressError, match="not a known pretrained tag for ViT-B-32"):
        models.check_spec(models.ModelSpec("bad", "ViT-B-32", "no-such-tag"))


def test_unreachable_hub_is_a_clear_error(tiny_arch, tmp_path, monkeypatch):
    # A real tag with no network: the load must fail loudly, never fall back to random weights.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)  # read at import time
    spec = models.ModelSpec("rn50-yfcc", "RN50", "yfcc15m", cache_dir=str(tmp_path))
    with pytest.raises(VlstressError, match="could not load RN50 from pretrained tag 'yfcc15m'"):
        models.load(spec, "cpu")


def test_device_resolution():
    assert models.resolve_device("cpu") == "cpu"
    assert models.resolve_device("auto") in {"cpu", "cuda"}
    with pytest.raises(VlstressError, match="unknown device"):
        models.resolve_device("tpu")


@pytest.mark.slow
def test_model_card_pins_the_model_and_its_checkpoint(tiny_arch, tmp_path):
    from conftest import run_cli

    source, _, _ = models.load(models.ModelSpec("tiny", tiny_arch, None, seed=7), "cpu")
    ckpt = tmp_path / "tiny.pt"
    torch.save({"state_dict": source.state_dict()}, ckpt)
    card = tmp_path / "card.json"
    # a fresh process does not know the tiny config: write the card in this process
    from vlstress.io import write_json

    spec = models.ModelSpec("tiny-ckpt", tiny_arch, str(ckpt), seed=0, cache_dir="cache")
    write_json(card, models.card(spec))
    assert models.spec_from_card(card) == spec
    ckpt.write_bytes(ckpt.read_bytes() + b"\0")  # edited behind the card's back
    with pytest.raises(VlstressError, match="changed since its card"):
        models.spec_from_card(card)
    bad = run_cli(
        "model-card",
        "--model",
        "x",
        "--arch",
        "ViT-Z-1",
        "--out",
        str(tmp_path / "bad.json"),
        check=False,
    )
    assert bad.returncode == 2 and "unknown open_clip architecture 'ViT-Z-1'" in bad.stderr
    assert not (tmp_path / "bad.json").exists()
    good = run_cli(
        "model-card",
        "--model",
        "r",
        "--arch",
        "RN50",
        "--pretrained",
        "None",
        "--seed",
        "4",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert good.returncode == 0
    assert models.spec_from_card(tmp_path / "r.json") == models.ModelSpec(
        "r", "RN50", None, seed=4, cache_dir=None
    )


@pytest.mark.slow
def test_fetch_weights_names_every_model_it_cannot_cache(tmp_path, monkeypatch):
    """`vlstress fetch-weights` skips random-init and checkpoint models, tries every hub model
    and lists each failure by name (here: offline with an empty cache, and an unknown tag)."""
    from pathlib import Path

    from conftest import run_cli

    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "params.yaml").write_text((repo / "params.yaml").read_text())
    (tmp_path / "more.yaml").write_text(
        "models:\n"
        "  hub-model: {arch: ViT-B-32, pretrained: openai}\n"
        "  typo: {arch: ViT-B-32, pretrained: opneai}\n"
        "  llava-hub: {arch: llava, pretrained: llava-hf/llava-1.5-7b-hf}\n"
        "embed: {cache_dir: empty-cache}\n"
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # what the nodes without network run with
    done = run_cli(
        "fetch-weights",
        "--params",
        "params.yaml",
        "--params",
        "more.yaml",
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "vit-s-32-alt-random: random-init (seed 0), nothing to fetch" in done.stderr
    assert "3 model(s) not fetched" in done.stderr
    assert "model 'llava-hub': could not fetch llava-hf/llava-1.5-7b-hf from the hub" in done.stderr
    assert "model 'hub-model': could not load ViT-B-32 from pretrained tag 'openai'" in done.stderr
    assert "not cached in empty-cache" in done.stderr
    assert "model 'typo': 'opneai' is not a known pretrained tag" in done.stderr
