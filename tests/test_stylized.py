"""The stylized suite: AdaIN's networks laid out as pytorch-AdaIN's (so the released weights load),
the AdaIN statistics, weights fetched over HTTP from a local server and pinned at the first
download, the stylized copy of a test set, bad input named."""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlstress.errors import VlstressError
from vlstress.suites.stylized import adain, styles


def test_networks_have_pytorch_adain_layout():
    """Layer indices and shapes of net.py's `vgg` and `decoder` (naoto0804/pytorch-AdaIN), which
    the released state dicts are keyed by."""
    vgg, dec = adain.encoder(), adain.decoder()
    assert len(vgg) == 53 and len(dec) == 29
    shapes = {k: tuple(v.shape) for k, v in vgg.state_dict().items()}
    assert shapes["0.weight"] == (3, 3, 1, 1)  # the normalising 1x1 convolution
    assert shapes["2.weight"] == (64, 3, 3, 3) and shapes["29.weight"] == (512, 256, 3, 3)
    assert shapes["51.weight"] == (512, 512, 3, 3)
    assert isinstance(vgg[adain.ENCODER_LAYERS - 1], torch.nn.ReLU)  # relu4_1
    assert sum(isinstance(m, torch.nn.MaxPool2d) for m in vgg[: adain.ENCODER_LAYERS]) == 3
    dshapes = {k: tuple(v.shape) for k, v in dec.state_dict().items()}
    assert dshapes["1.weight"] == (256, 512, 3, 3) and dshapes["28.weight"] == (3, 64, 3, 3)
    assert sum(isinstance(m, torch.nn.Upsample) for m in dec) == 3
    x = torch.rand(1, 3, 64, 64)
    assert dec(vgg[: adain.ENCODER_LAYERS](x)).shape == x.shape


def test_adain_gives_the_content_the_style_statistics():
    gen = torch.Generator().manual_seed(0)
    content = torch.randn(2, 8, 5, 7, generator=gen) * 3 + 1
    style = torch.randn(2, 8, 6, 6, generator=gen) * 0.5 - 2
    out = adain.adain(content, style)
    mean, std = adain.mean_std(out)
    style_mean, style_std = adain.mean_std(style)
    assert torch.allclose(mean, style_mean, atol=1e-5)
    assert torch.allclose(std, style_std, atol=1e-3)  # up to the eps inside the std
    # the normalised content pattern survives: correlation with the content per channel
    c = (content - content.mean(dim=(2, 3), keepdim=True)).flatten(2)
    o = (out - out.mean(dim=(2, 3), keepdim=True)).flatten(2)
    assert torch.allclose(torch.nn.functional.cosine_similarity(c, o, dim=2), torch.ones(2, 8))


def test_alpha_zero_reconstructs_the_content_features():
    stylizer = adain.load(None, pins=Path("unused"), cache_dir=Path("unused"), seed=3, device="cpu")
    content, style = torch.rand(2, 3, 32, 32), torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        plain = stylizer.decode(stylizer.encode(content)).clamp(0, 1)
    assert torch.allclose(stylizer(content, style, 0.0), plain, atol=1e-6)
    assert not torch.allclose(stylizer(content, style, 1.0), plain, atol=1e-3)
    with pytest.raises(VlstressError, match=r"alpha must be in \[0, 1\], got 1.5"):
        stylizer(content, style, 1.5)
    assert stylizer.described["weights_label"] == "random-init (seed 3)"


@pytest.fixture
def release(tmp_path):
    """A local HTTP server serving state dicts laid out as the release (seeded networks)."""
    folder = tmp_path / "release"
    folder.mkdir()
    torch.manual_seed(7)
    nets = {"encoder": adain.encoder(), "decoder": adain.decoder()}
    for role, net in nets.items():
        torch.save(net.state_dict(), folder / adain.FILES[role])
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", folder, nets
    httpd.shutdown()


def test_weights_are_fetched_pinned_and_checked(tmp_path, release):
    url, folder, nets = release
    pins, cache = tmp_path / "pins.json", tmp_path / "cache"
    stylizer = adain.load(url, pins=pins, cache_dir=cache, seed=0, device="cpu")
    recorded = json.loads(pins.read_text())
    assert set(recorded) == set(adain.FILES.values())
    assert stylizer.described["sha256"] == recorded
    content, style = torch.rand(1, 3, 32, 32), torch.rand(1, 3, 32, 32)
    with torch.no_grad():
        expected = nets["decoder"](
            adain.adain(
                nets["encoder"][: adain.ENCODER_LAYERS](content),
                nets["encoder"][: adain.ENCODER_LAYERS](style),
            )
        ).clamp(0, 1)
    assert torch.allclose(stylizer(content, style, 1.0), expected, atol=1e-5)
    # from then on the pins hold: another file under the same name is refused, naming the URL
    torch.save(adain.decoder().state_dict(), folder / "decoder.pth")
    with pytest.raises(VlstressError, match=r"checksum mismatch for http://127.0.0.1:\d+/decoder"):
        adain.load(url, pins=pins, cache_dir=tmp_path / "other-cache", seed=0, device="cpu")
    assert json.loads(pins.read_text()) == recorded  # a refused file changes no pin


def test_weights_that_do_not_fit_are_named(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    torch.save(adain.encoder().state_dict(), folder / "vgg_normalised.pth")
    torch.save({"0.weight": torch.zeros(1)}, folder / "decoder.pth")
    with pytest.raises(VlstressError, match="AdaIN decoder weights .* do not fit"):
        adain.load(str(folder), pins=tmp_path / "p.json", cache_dir=tmp_path, seed=0, device="cpu")
    with pytest.raises(VlstressError, match="file not found"):
        adain.load(
            str(tmp_path / "none"),
            pins=tmp_path / "q.json",
            cache_dir=tmp_path,
            seed=0,
            device="cpu",
        )


def test_styles_are_listed_and_chosen_by_seed(tmp_path):
    demo = styles.style_paths("demo")
    assert len(demo) == len(styles.DEMO) and all(p.is_file() for p in demo)
    picks = [styles.choose(demo, 0, f"img{i}.png") for i in range(60)]
    assert len(set(picks)) == len(demo)  # every style gets used
    assert picks == [styles.choose(demo, 0, f"img{i}.png") for i in range(60)]
    assert picks != [styles.choose(demo, 1, f"img{i}.png") for i in range(60)]
    with pytest.raises(VlstressError, match="style folder not found"):
        styles.style_paths(str(tmp_path / "none"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(VlstressError, match="holds no image"):
        styles.style_paths(str(tmp_path / "empty"))


def test_generate_writes_a_stylized_copy(tmp_path):
    from vlstress.suites.stylized.stylize import generate
    from vlstress.testsets import manifest as testsets

    root = tmp_path / "clean"
    root.mkdir()
    images = []
    for i in range(5):
        Image.fromarray(np.full((40, 50, 3), (40 * i, 100, 200 - 30 * i), dtype=np.uint8)).save(
            root / f"{i}.png"
        )
        images.append({"path": f"{i}.png", "label": i % 2})
    clean = testsets.ClassificationSet("toy", "folder", ["a", "b"], ["a", "b"], str(root), images)
    stylizer = adain.load(None, pins=tmp_path / "p", cache_dir=tmp_path, seed=0, device="cpu")
    demo = styles.style_paths("demo")
    data = generate(
        clean, stylizer, demo, alpha=1.0, seed=0, size=32, out_dir=tmp_path / "out",
        batch_size=2, progress=False,
    )  # fmt: skip
    assert [e["label"] for e in data.images] == [0, 1, 0, 1, 0]
    assert [e["style"] for e in data.images] == [
        demo[styles.choose(demo, 0, f"{i}.png")].name for i in range(5)
    ]
    written = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert written["kind"] == "stylized" and written["source"]["alpha"] == 1.0
    first = np.asarray(Image.open(tmp_path / "out" / data.images[0]["path"]))
    assert first.shape == (32, 32, 3)
    # all or nothing: a broken image is named and leaves no output
    (root / "3.png").write_bytes(b"broken")
    with pytest.raises(VlstressError, match=r"clean/3\.png"):
        generate(
            clean, stylizer, demo, alpha=1.0, seed=0, size=32, out_dir=tmp_path / "out2",
            batch_size=2, progress=False,
        )  # fmt: skip
    assert not (tmp_path / "out2").exists()


def test_params_problems_name_the_entry(tmp_path):
    import yaml

    from vlstress.suites.stylized.params import problems

    from conftest import REPO

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    on = frozenset({"zeroshot", "stylized"})
    assert problems(params, on) == []
    params["stylized"].update(testset="nope")
    found = problems(params, on)
    assert found == [
        "stylized.testset: unknown test set 'nope'; known: "
        + ", ".join(params["zeroshot"]["testsets"])
    ]


def test_the_zeroshot_evaluation_of_a_stylized_copy(tmp_path):
    """Task `stylized`: its condition names alpha and the networks (random-init ones say so); a
    set that is no stylized copy is refused."""
    from vlstress.io import sidecar, write_json, write_npy
    from vlstress.suites.zeroshot import evaluation
    from vlstress.testsets import manifest as testsets

    images = [{"path": f"{i}.png", "label": i % 3} for i in range(6)]
    source = {"alpha": 0.5, "weights": {"weights_label": "random-init (seed 0)"}}
    styled = testsets.ClassificationSet(
        "toy-stylized", "stylized", list("abc"), list("abc"), str(tmp_path), images, source=source
    )
    testsets.write(tmp_path / "s" / "manifest.json", styled)
    plain = testsets.ClassificationSet(
        "toy", "folder", list("abc"), list("abc"), str(tmp_path), images
    )
    testsets.write(tmp_path / "p" / "manifest.json", plain)
    model = {"slug": "m", "arch": "X", "weights_label": "random-init (seed 0)"}
    meta = {"provenance": {"model": model, "seed": 0, "device": "cpu"}}
    emb, clf = tmp_path / "e.npy", tmp_path / "c.npy"
    write_npy(emb, np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 0, 0]])
    write_json(sidecar(emb), meta)
    write_npy(clf, np.eye(3, dtype=np.float32))
    write_json(sidecar(clf), {**meta, "classes": list("abc"), "templates_source": "single"})
    found = evaluation.evaluate(
        tmp_path / "s", emb, clf, task="stylized", corruption=None, severity=None,
        clean_record=None, ks=[1],
    )  # fmt: skip
    record = found.record
    assert found.outcomes.column("correct").mean() == pytest.approx(4 / 6)
    assert record.task == "stylized"
    assert record.condition == {
        "shift": "stylized",
        "alpha": 0.5,
        "networks": "random-init (seed 0)",
    }
    assert record.metrics["top1"] == pytest.approx(400 / 6)
    with pytest.raises(VlstressError, match="is of kind folder, not stylized"):
        evaluation.evaluate(
            tmp_path / "p", emb, clf, task="stylized", corruption=None, severity=None,
            clean_record=None, ks=[1],
        )  # fmt: skip


def test_the_table_gives_clean_stylized_and_drop(tmp_path):
    from statsmodels.stats.proportion import proportion_confint

    from vlstress.record import write_records
    from vlstress.report import records
    from vlstress.suites.stylized import table

    from report_fixtures import record

    cond = {"shift": "stylized", "alpha": 1.0, "networks": "pytorch-AdaIN"}
    paths = []
    for model, (clean, styled) in {
        "vit-b-32-random": (60.0, 20.0),
        "rn50-openai": (70.0, 35.0),
    }.items():
        paths.append(tmp_path / model / "stylized.json")
        metrics = {"top1_clean": clean, "top1": styled, "drop": clean - styled}
        write_records(paths[-1], [record(model, "stylized", cond, metrics)])
    summary = records.collect(paths)
    frame, notes = table.stylized_table(records.aggregate(summary))
    assert frame is not None and list(frame.columns) == ["n", "clean", "stylized", "drop"]
    assert frame.loc["RN50 (openai)"].tolist() == ["–", "70.0", "35.0", "35.0"]  # n unknown
    assert notes == ["stylized: AdaIN, alpha 1.0, networks pytorch-AdaIN"]
    # with the summary's n (the fixture's 14 images): statsmodels' Wilson interval of each top-1
    frame, _ = table.stylized_table(records.aggregate(summary), table.images(summary))
    clean, styled = (proportion_confint(p * 14, 14, method="wilson") for p in (0.7, 0.35))
    assert frame.loc["RN50 (openai)"].tolist() == [
        "14",
        f"70.0 [{100 * clean[0]:.1f}, {100 * clean[1]:.1f}]",
        f"35.0 [{100 * styled[0]:.1f}, {100 * styled[1]:.1f}]",
        "35.0",
    ]
    markdown, latex, _ = table.render(summary, {})
    assert "_Note: stylized: AdaIN, alpha 1.0, networks pytorch-AdaIN._" in markdown
    assert f"[{100 * clean[0]:.1f}, {100 * clean[1]:.1f}]" in latex
