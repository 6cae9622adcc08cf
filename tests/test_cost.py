"""`vlstress cost`: the cost model of a grid of params (plans only; fast, no model)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vlstress import params as params_module
from vlstress import params_check
from vlstress.cli import main
from vlstress.commands.cost import pricing_hooks
from vlstress.cost import estimate, pricing, profile, rates, report, sizes
from vlstress.errors import VlstressError
from vlstress.suites import registry
from vlstress.suites.adversarial import pricing as adversarial_pricing
from vlstress.suites.overlap import pricing as overlap_pricing
from vlstress.suites.stability import pricing as stability_pricing
from vlstress.suites.stylized import pricing as stylized_pricing

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import paper_grid  # noqa: E402

RATES = rates.Rates(
    device="test GPU",
    reference_arch="ViT-B-32",
    images_per_s=100.0,
    data_path_images_per_s=None,
    captions_per_s=1000.0,
    decode_core_s=0.004,
    startup_s=10.0,
    gradient_pass=2.5,
    corruption_core_s={"fog": 0.02},
    corruption_default_core_s=0.03,
    image_variant_core_s=0.01,
    text_variant_core_s=0.001,
    text_stats_core_s=0.002,
    ei_gpu_s=0.001,
)


HOOKS = pricing_hooks()  # every suite's, in registry order


def demo() -> dict:
    return params_module.load([REPO / "params.yaml"])


def imagenet_entry(root: str | None, **options) -> dict:
    return {
        "kind": "imagenet",
        "root": root,
        "annotations": None,
        "classnames": None,
        "max_per_class": None,
        "min_size": 32,
        "label": "category",
        "corruption": None,
        "keep": None,
        "drop": None,
        **options,
    }


def built_manifest(project: Path, name: str, entry: dict, images: int, classes: int) -> None:
    """A test set's manifest as `vlstress testset` writes it (provenance: its flags)."""
    folder = project / "data" / "testsets" / name
    folder.mkdir(parents=True)
    manifest = {
        "kind": entry["kind"],
        "dataset": name,
        "classes": [f"c{i}" for i in range(classes)],
        "images": [{"path": f"{i}.JPEG", "label": i % classes} for i in range(images)],
        "provenance": {"params": {**entry, "name": name}},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


def two_models_one_testset(tmp_path: Path, arch: str = "ViT-B-32") -> dict:
    """2 models x the demo's retrieval set (14 images, 70 captions) x one built test set of 3,586
    images and 1000 classes, one prompt per class."""
    values = demo()
    values["models"] = {
        "a": {"arch": arch, "pretrained": None},
        "b": {"arch": arch, "pretrained": None},
    }
    entry = imagenet_entry("/nowhere/val")
    values["zeroshot"] = {**values["zeroshot"], "testsets": {"val": entry}, "templates": "single"}
    built_manifest(tmp_path, "val", entry, 3586, 1000)
    return values


def test_two_models_one_testset_known_answer(tmp_path):
    values = two_models_one_testset(tmp_path)
    est = estimate.estimate(
        values, frozenset({"zeroshot"}), RATES, gpus=1, cpus=4, project=tmp_path, hooks=HOOKS
    )
    assert [(s.name, s.images, s.classes, s.published) for s in est.sets] == [
        ("val", 3586, 1000, False)
    ]
    assert est.sets[0].source == f"manifest {tmp_path}/data/testsets/val/manifest.json"
    assert (est.dataset.images, est.dataset.captions) == (14, 70)  # the shipped demo
    work = {w.suite: w for w in est.work}
    assert set(work) == {"retrieval", "zeroshot"}
    assert work["zeroshot"].images == 3586 and work["zeroshot"].texts == 1000  # 1000 x 1 prompt
    assert sum(w.images for w in est.work) == 3600  # images per model
    # by hand, per model: retrieval 14/100 + 70/1000 = 0.21 s; zero-shot 3586/100 + 1000/1000 =
    # 36.86 s; start-up: 3 GPU jobs (embed_retrieval, zeroshot_classifiers, embed_zeroshot) x 10 s
    for model in est.models:
        assert model.gpu_s["retrieval"] == pytest.approx(0.21)
        assert model.gpu_s["zeroshot"] == pytest.approx(36.86)
        assert model.gpu_s[estimate.STARTUP] == pytest.approx(30.0)
        assert model.total_s == pytest.approx(67.07)
        # 3,600 images + 70 captions + 1000 classifier rows, 512 floats of 4 bytes
        assert model.disk_bytes == (3600 + 70 + 1000) * 512 * 4
    assert est.model_gpu_s == pytest.approx(134.14)
    assert est.shared == [] and est.wall_s == pytest.approx(134.14)  # 1 GPU: one after the other
    two = estimate.estimate(
        values, frozenset({"zeroshot"}), RATES, gpus=2, cpus=4, project=tmp_path, hooks=HOOKS
    )
    assert two.wall_s == pytest.approx(67.07)  # ceil(2 / 2) rounds
    data = report.as_json(two, "t")
    assert data["totals"]["gpu_h_models"] == pytest.approx(134.14 / 3600)
    assert data["totals"]["rounds"] == 1


def test_architectures_scale_by_gflops_and_images_stop_at_the_data_path(tmp_path):
    values = two_models_one_testset(tmp_path, arch="ViT-L-14")
    est = estimate.estimate(
        values, frozenset({"zeroshot"}), RATES, gpus=1, cpus=1, project=tmp_path, hooks=HOOKS
    )
    large = est.models[0]
    assert large.images_per_s == pytest.approx(100 * 8.82 / 162.03)
    assert large.captions_per_s == pytest.approx(1000 * 5.96 / 13.3)
    assert large.gpu_s["zeroshot"] == pytest.approx(
        3586 / (100 * 8.82 / 162.03) + 1000 / (1000 * 5.96 / 13.3)
    )
    assert large.disk_bytes == (3600 + 70 + 1000) * 768 * 4
    capped = rates.Rates(**{**RATES.__dict__, "data_path_images_per_s": 150.0})
    small = profile.arch_cost("ViT-S-32")
    reference = profile.arch_cost("ViT-B-32")
    assert estimate.arch_rates(small, reference, RATES)[0] == pytest.approx(100 * 8.82 / 2.29)
    assert estimate.arch_rates(small, reference, capped)[0] == 150.0  # no faster than decoding
    assert estimate.arch_rates(reference, reference, capped)[0] == 100.0


def test_published_sizes_are_used_and_labelled_when_the_set_is_not_there(tmp_path):
    entry = imagenet_entry(str(tmp_path / "absent"))
    size = sizes.testset_size("val", entry, tmp_path)
    assert (size.images, size.classes, size.published) == (50_000, 1000, True)
    assert size.source.startswith("published size (ILSVRC-2012 val")
    capped = sizes.testset_size("val", {**entry, "max_per_class": 10}, tmp_path)
    assert capped.images == 10_000 and "at most 10 per class" in capped.note
    c = {**entry, "kind": "imagenet-c", "corruption": "fog"}
    assert sizes.testset_size("c", c, tmp_path).images == 250_000  # 5 severities x 50,000
    for kind, images in [
        ("imagenet-v2", 10_000),
        ("imagenet-sketch", 50_889),
        ("imagenet-r", 30_000),
        ("imagenet-a", 7_500),
        ("objectnet", 18_574),
        ("ninco", 4_293),
        ("ninco-unit-tests", 6_800),
    ]:
        assert sizes.testset_size("x", {**entry, "kind": kind}, tmp_path).images == images
    keep = sizes.testset_size("val", {**entry, "keep": "goldfish"}, tmp_path)
    assert "keep/drop not applied" in keep.note
    # the Markdown and JSON say which sizes are published
    values = demo()
    values["zeroshot"] = {
        **values["zeroshot"],
        "testsets": {"val": entry},
        "in_distribution": "val",
    }
    est = estimate.estimate(
        values, frozenset({"zeroshot"}), RATES, 1, 1, project=tmp_path, hooks=HOOKS
    )
    text = report.markdown(est, "t")
    assert "| val | imagenet | 50,000 | 1,000 | published size (ILSVRC-2012 val" in text
    assert "published sizes, not counted here: val" in text
    assert report.as_json(est, "t")["sets"][0]["published"] is True


def test_a_folder_is_counted_and_a_manifest_of_other_params_is_ignored(tmp_path):
    root = tmp_path / "val"
    for wnid, n in (("n01440764", 3), ("n01443537", 2)):
        (root / wnid).mkdir(parents=True)
        for i in range(n):
            (root / wnid / f"{i}.JPEG").write_bytes(b"")  # counted, not decoded
        (root / wnid / "notes.txt").write_text("not an image")
    entry = imagenet_entry(str(root))
    counted = sizes.testset_size("val", entry, tmp_path)
    assert (counted.images, counted.classes, counted.source) == (5, 1000, f"folder {root}")
    assert sizes.testset_size("val", {**entry, "max_per_class": 2}, tmp_path).images == 4
    built_manifest(tmp_path, "val", {**entry, "root": "/elsewhere"}, 7, 1000)
    assert sizes.testset_size("val", entry, tmp_path).images == 5  # built from another root
    assert sizes.testset_size("val", {**entry, "root": "/elsewhere"}, tmp_path).images == 7
    given = sizes.testset_size("val", entry, tmp_path, given={"val": 123})
    assert (given.images, given.source) == (123, "given (--size)")


def test_a_set_without_a_size_is_an_error_naming_it(tmp_path):
    entry = {**imagenet_entry(None), "kind": "coco-objects", "annotations": "/nowhere.json"}
    with pytest.raises(VlstressError, match=r"set 'crops' \(kind coco-objects\).*--size crops=N"):
        sizes.testset_size("crops", entry, tmp_path)


def test_an_unknown_architecture_is_named(tmp_path, capsys):
    values = two_models_one_testset(tmp_path)
    values["models"]["b"] = {"arch": "ViT-Q-99", "pretrained": None}
    with pytest.raises(VlstressError, match="unknown architecture 'ViT-Q-99'.*--gflops ViT-Q-99="):
        estimate.estimate(
            values, frozenset({"zeroshot"}), RATES, 1, 1, project=tmp_path, hooks=HOOKS
        )
    extra = {"ViT-Q-99": profile.parse_override("ViT-Q-99=17.64,5.96,1024")}
    est = estimate.estimate(
        values, frozenset(), RATES, 1, 1, tmp_path, extra_archs=extra, hooks=HOOKS
    )
    assert est.models[1].images_per_s == pytest.approx(50.0)
    params_file = tmp_path / "p.yaml"
    params_file.write_text(yaml.safe_dump(values))
    assert main(["cost", "--params", str(params_file), "--project", str(tmp_path)]) == 2
    assert "unknown architecture 'ViT-Q-99'" in capsys.readouterr().err
    with pytest.raises(VlstressError, match="expected ARCH=IMAGE_GFLOPS"):
        profile.parse_override("ViT-Q-99=1,2")


def test_the_library_imports_no_command_stage_params_loader_or_model_library():
    from vlstress.code_deps import dependencies

    found = {
        p.as_posix().split("src/vlstress/")[1]
        for module in ("vlstress.cost.estimate", "vlstress.cost.pricing", "vlstress.cost.report")
        for p in dependencies(module)
    }
    assert "cost/estimate.py" in found and "cost/sizes.py" in found
    banned = ("commands/", "suites/", "pipeline/", "workflow/", "params.py", "params_check.py")
    assert not [path for path in found if path.startswith(banned)], found
    imported = set()
    for path in (REPO / "src/vlstress/cost").glob("*.py"):
        imported |= set(re.findall(r"^\s*(?:from|import) (\w+)", path.read_text(), re.M))
    assert not imported & {"torch", "open_clip", "torchvision", "numpy"}, imported


def test_zero_gpus_are_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["cost", "--gpus", "0"])
    assert exc.value.code == 2
    assert "--gpus: expected a positive integer, got '0'" in capsys.readouterr().err
    with pytest.raises(VlstressError, match="at least 1"):
        estimate.makespan([1.0], 0)


def test_models_are_packed_longest_first_on_the_gpus():
    assert estimate.makespan([3.0] * 5, 2) == 9.0  # ceil(5 / 2) x 3
    # longest first: 5 | 4, then 3 on the 4 (7), 3 on the 5 (8), 3 on the 7: 10 (the best is 9)
    assert estimate.makespan([3.0, 5.0, 3.0, 4.0, 3.0], 2) == 10.0
    assert estimate.makespan([2.0], 8) == 2.0
    assert estimate.rounds(255, 8) == 32


def test_attacks_count_their_passes():
    pgd = {"name": "pgd", "kind": "pgd", "eps": "1,2,4", "steps": 10, "restarts": 2}
    assert adversarial_pricing.attack_passes(pgd, 1000, 2.5) == (3 * 2 * 10 * 2.5, False)
    fgsm = {"name": "fgsm", "kind": "fgsm", "eps": "1,4", "steps": None, "restarts": 1}
    assert adversarial_pricing.attack_passes(fgsm, 1000, 2.5) == (2 * 2.5, False)
    square = {"name": "sq", "kind": "square", "eps": "4", "steps": None, "restarts": 1}
    assert adversarial_pricing.attack_passes(square, 1000, 2.5) == (
        1000,
        True,
    )  # queries, stops early
    nes = {"name": "n", "kind": "nes", "eps": "2,4", "steps": 500, "extra": "samples=10"}
    assert adversarial_pricing.attack_passes(nes, 1000, 2.5) == (
        2 * 500,
        True,
    )  # the budget, per eps
    spsa = {"name": "s", "kind": "spsa", "eps": "4", "steps": 5, "extra": "nb_sample=32"}
    assert adversarial_pricing.attack_passes(spsa, 10, 2.5) == (5 * 2 * 32, False)
    deepfool = {"name": "d", "kind": "deepfool", "eps": "1,2", "steps": 4}
    assert adversarial_pricing.attack_passes(deepfool, 10, 2.5) == (
        4 * (1 + 10 * 1.5),
        True,
    )  # one run
    # every attack kind of the suite is priced
    from vlstress.suites.adversarial.attacks import KINDS

    for kind in KINDS:
        attack = {"name": kind, "kind": kind, "eps": "4", "steps": 10}
        assert adversarial_pricing.attack_passes(attack, 10, 2.5)[0] > 0, kind
    # the stability suite's frame counts (a copy: perturbations.py imports PIL) are its
    # perturbations'
    from vlstress.suites.stability.perturbations import PERTURBATIONS

    assert {
        name: stability_pricing.FRAMES.get(name, stability_pricing.DEFAULT_FRAMES)
        for name in PERTURBATIONS
    } == {name: p.frames for name, p in PERTURBATIONS.items()}
    with pytest.raises(VlstressError, match="unknown kind 'cw'"):
        adversarial_pricing.attack_passes({"name": "c", "kind": "cw", "eps": "1"}, 10, 2.5)


def test_the_stylized_and_overlap_constants_are_their_suites():
    """AdaIN's GFLOPs are the convolutions of the suite's own encoder and decoder; the planted
    transforms and the exact-index limit are the overlap suite's."""
    import torch

    from vlstress.suites.overlap import collection
    from vlstress.suites.stylized import adain

    encode, decode = adain.encoder()[: adain.ENCODER_LAYERS], adain.decoder()
    macs = [0]

    def count(module, _inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            kernel = module.kernel_size[0] * module.kernel_size[1]
            macs[0] += output.numel() * module.in_channels * kernel // module.groups

    for net in (encode, decode):
        for module in net.modules():
            module.register_forward_hook(count)
    with torch.no_grad():
        features = encode(torch.zeros(1, 3, 224, 224))
        encoded = macs[0]
        decode(features)
    # the content and the style image encoded, then one decoding; GFLOPs = 2 x GMACs
    gflops = 2 * (2 * encoded + (macs[0] - encoded)) / 1e9
    assert stylized_pricing.ADAIN_GFLOPS_224 == pytest.approx(gflops, abs=0.01)
    assert overlap_pricing.PLANTED_TRANSFORMS == len(collection.TRANSFORMS)


def test_search_multiply_adds_known_answers():
    flat = {"index": "flat", "nlist": 8, "nprobe": 2}
    assert overlap_pricing.search_macs(10, 1000, 4, flat) == 10 * 1000 * 4
    # auto: exact up to 100,000 rows, IVF above
    assert overlap_pricing.search_macs(10, 1000, 4, {**flat, "index": "auto"}) == 10 * 1000 * 4
    ivf = {"index": "ivf", "nlist": 8, "nprobe": 2}
    trained = min(1000, 256 * 8) * 8 * 4 * 10  # k-means: 10 iterations over the rows, 8 lists
    assigned = (1000 + 10) * 8 * 4  # every row and query to its list
    searched = 10 * 1000 * 4 * 2 / 8  # nprobe of nlist lists
    assert overlap_pricing.search_macs(10, 1000, 4, ivf) == trained + assigned + searched
    # many queries: IVF searches a quarter of the lists, its training aside
    big = overlap_pricing.search_macs(100_000, 200_000, 4, {**ivf, "index": "auto"})
    assert big == overlap_pricing.search_macs(100_000, 200_000, 4, ivf) < 100_000 * 200_000 * 4 / 3


def test_the_overlap_collection_is_counted_given_or_named_as_unknown(tmp_path):
    dataset = sizes.DatasetSize("demo", "demo", 14, 70, "shipped")
    folder = tmp_path / "train"
    folder.mkdir()
    for i in range(5):
        (folder / f"{i}.jpg").write_bytes(b"x")
    (folder / "notes.txt").write_text("not an image")

    def size(train, given=None):
        return sizes.collection_size(train, dataset, tmp_path, given)

    assert size({"kind": "folder", "path": "train", "max_images": None}).images == 5
    assert size({"kind": "folder", "path": str(folder), "max_images": 3}).images == 3
    # the demo's collection is the retrieval dataset's download, before it is downloaded
    demo_raw = size({"kind": "folder", "path": "data/raw/demo", "max_images": None})
    assert (demo_raw.images, demo_raw.source) == (14, "the demo dataset's photos")
    import numpy as np

    np.save(tmp_path / "emb.npy", np.zeros((7, 4), np.float32))
    assert size({"kind": "embeddings", "path": "emb.npy", "max_images": None}).images == 7
    with open(tmp_path / "v2.npy", "wb") as handle:  # a 4-byte header length
        np.lib.format.write_array(handle, np.zeros((9, 4), np.float32), version=(2, 0))
    assert size({"kind": "embeddings", "path": "v2.npy", "max_images": None}).images == 9
    (tmp_path / "broken.npy").write_bytes(b"not an array")
    with pytest.raises(VlstressError, match="broken.npy is not a .npy file"):
        size({"kind": "embeddings", "path": "broken.npy", "max_images": None})
    shards = {"kind": "shards", "path": "shards.txt", "max_images": None}
    assert size(shards).images is None
    assert size({**shards, "max_images": 1000}).images == 1000
    assert size(shards, {sizes.COLLECTION: 123}).images == 123
    # unknown: the estimate says so and how to give it, and prices the rest
    values = demo()
    values["overlap"] = {**values["overlap"], "train": shards}
    found = estimate.estimate(
        values, params_module.suites_on(values), RATES, 1, 1, tmp_path, hooks=HOOKS
    )
    assert any("--size overlap-train=N" in note for note in found.notes)
    assert "overlap detection" not in {s.name for s in found.shared}
    given = estimate.estimate(
        values,
        params_module.suites_on(values),
        RATES,
        1,
        1,
        tmp_path,
        {"overlap-train": 1000},
        hooks=HOOKS,
    )
    (detection,) = [s for s in given.shared if s.name == "overlap detection"]
    detector = profile.arch_cost(values["models"][values["overlap"]["detector"]]["arch"])
    reference = profile.arch_cost(RATES.reference_arch)
    copies = 4 * 3  # the demo's 4 planted images, three copies each
    queries = 30 + copies  # the demo's object views (5 classes x 6) and the planted copies
    search = queries * (1000 + copies) * detector.embed_dim  # exact: 1,012 rows under 100,000
    assert detection.cpu_s == pytest.approx(
        copies * RATES.image_variant_core_s + search / RATES.search_macs_per_core_s
    )
    # the detector's GPU job: the collection and the copies at its speed (100 images/s at
    # ViT-B-32's GFLOPs, scaled by the detector's), plus a start-up
    per_s = 100.0 * reference.image_gflops / detector.image_gflops
    assert detection.gpu_s == pytest.approx((1000 + copies) / per_s + 10.0)


def test_the_stylized_copy_is_embedded_by_every_model_and_made_once(tmp_path):
    values = demo()
    found = estimate.estimate(
        values, params_module.suites_on(values), RATES, 1, 1, tmp_path, hooks=HOOKS
    )
    (work,) = [w for w in found.work if w.suite == "stylized"]
    assert work.images == 30  # the demo's 5 classes x 6 views
    (made,) = [s for s in found.shared if s.name == "stylized copy"]
    # 30 images x 72.66 GFLOPs, at ViT-B-32's 8.82 GFLOPs and 100 images/s, plus a start-up
    assert made.gpu_s == pytest.approx(30 * 72.66 / 8.82 / 100.0 + 10.0)
    assert made.cpu_s == pytest.approx(30 * RATES.image_variant_core_s)


def test_each_fine_tuning_is_priced_by_what_its_steps_encode(tmp_path):
    """SC/VC encodes the mixed images and altered captions too; FLYP one image and one prompt."""
    values = demo()
    found = estimate.estimate(
        values, params_module.suites_on(values), RATES, 1, 1, tmp_path, hooks=HOOKS
    )
    jobs = {s.name: s for s in found.shared if s.name.startswith("fine-tuning")}
    assert set(jobs) == {
        "fine-tuning sc_vc",
        "fine-tuning flyp_lora (flyp)",
        "fine-tuning standard (standard)",
    }
    sc_vc, flyp = jobs["fine-tuning sc_vc"], jobs["fine-tuning flyp_lora (flyp)"]
    # the demo's 4 steps of 4 pairs: SC/VC also encodes a mixed image and an altered caption each
    assert "32 images and 32 captions" in sc_vc.what
    assert "16 images and 16 class prompts" in flyp.what
    assert sc_vc.gpu_s - 10.0 == pytest.approx(2 * (flyp.gpu_s - 10.0))
    standard = jobs["fine-tuning standard (standard)"]  # the images only: no text pass
    assert standard.what.startswith("16 images, forward") and standard.texts == 0


def test_retrieval_dataset_sizes(tmp_path):
    karpathy = {"name": "k", "kind": "karpathy", "max_images": None, "image_ids": None}
    size = sizes.dataset_size(karpathy, tmp_path)
    assert (size.images, size.captions, size.published) == (5000, 25_010, True)
    assert sizes.dataset_size({**karpathy, "image_ids": "1,2"}, tmp_path).images == 2
    assert sizes.dataset_size({**karpathy, "max_images": 500}, tmp_path).captions == 2501


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command in a fresh process that fails if torch or open_clip got imported."""
    code = (
        "import sys; from vlstress.cli import main; rc = main(sys.argv[1:]); "
        "assert not {'torch', 'open_clip'} & set(sys.modules), 'a model library was imported'; "
        "sys.exit(rc)"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "cost", *args], cwd=cwd, capture_output=True, text=True
    )


def test_it_runs_on_the_demo_params_without_a_model_library(tmp_path):
    done = run_cli(
        "--params",
        str(REPO / "params.yaml"),
        "--rate-file",
        str(REPO / rates.DEFAULT_RATE_FILE),
        "--project",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("# Cost of ")
    for suite in (
        "retrieval",
        "rococo_image",
        "rococo_text",
        "zeroshot",
        "corruptions",
        "typographic",
        "adversarial",
        "ood",
        "shape_bias",
        "prompts",
        "stability",
        "stylized",
    ):
        assert f"\n| {suite} |" in out, suite
    assert "\n| stylized copy |" in out and "\n| overlap detection |" in out
    # nothing built in the empty project: the shipped demo is counted
    assert "| objects | demo-objects | 30 | 5 | shipped demo: 30 views of its photos |" in out
    assert "| cue-conflict | cue-conflict | 17 | 16 | shipped demo stimuli |" in out


def test_it_runs_on_the_imagenet_layout_and_the_paper_grid(tmp_path):
    layout = tmp_path / "imagenet-layout.yaml"
    layout.write_text(yaml.safe_dump(paper_grid.paper_base(demo())))
    rate_file = str(REPO / rates.DEFAULT_RATE_FILE)
    done = run_cli(
        "--params",
        str(layout),
        "--rate-file",
        rate_file,
        "--project",
        str(tmp_path),
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    found = {s["name"]: s for s in data["sets"]}
    assert found["imagenet"]["images"] == 50_000 and found["imagenet"]["published"]
    assert found["ninco"]["images"] == 4_293 and found["cue-conflict"]["images"] == 1_280
    work = {w["suite"]: w for w in data["work"]}
    assert work["corruptions"]["images"] == 50_000 * 15 * 5
    # ImageNet-P's 10 test perturbations of a 5,000-image sample: 9 x 31 frames + translate's 41
    assert work["stability"]["images"] == 5_000 * (9 * 31 + 41)
    assert work["adversarial"]["image_passes"] == pytest.approx(1000 * (1 + 3 * 10 * 2.56))
    # the papers' pool: 255 models
    done = run_cli(
        "--params",
        str(REPO / "params.paper-grid.yaml"),
        "--rate-file",
        rate_file,
        "--project",
        str(tmp_path),
        "--gpus",
        "8",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "# Cost of " in done.stdout and ": 255 models, 8 GPUs" in done.stdout
    # the 6 assistants are not priced by GFLOPs, and the output says so with their questions
    assert "not priced: the assistant(s) a000-llava-1-5-7b-hf" in done.stdout
    assert "7,500 questions each" in done.stdout  # ImageNet-A's published size
    assert "(32 rounds of 8)" in done.stdout


COST_KEYS = (
    "suites",
    "dataset",
    "models",
    "image_variants",
    "text_variants",
    "ei",
    "zeroshot",
    "corruptions",
    "typographic",
    "adversarial",
    "ood",
    "shape_bias",
    "prompts",
    "finetune",
)


def test_the_paper_grid_file_is_current_and_valid():
    """params.paper-grid.yaml is what benchmarks/paper_grid.py writes (on what the cost model
    reads), and what it writes passes the params check."""
    pool = paper_grid.pool_params(demo())
    assert len(pool["models"]) == 255 + 6  # and the 6 LLaVA assistants, priced apart
    params_check.validate(pool)
    shipped = yaml.safe_load((REPO / "params.paper-grid.yaml").read_text())
    stale = [key for key in COST_KEYS if shipped.get(key) != pool.get(key)]
    assert not stale, f"{stale}: run `python benchmarks/paper_grid.py`"
    grid = paper_grid.grid_params(demo(), 10)  # the planning benchmark's: all 19 corruptions
    embedding = [e for e in grid["models"].values() if not e["arch"].startswith("llava")]
    assert len(embedding) == 10 and len(grid["corruptions"]["names"]) == 19


def string_literals(path: Path) -> set[str]:
    """Every whole string constant of a module (a docstring, a key, a part of an f-string)."""
    import ast

    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_the_cost_engine_names_no_suite():
    """No module under cost/ holds a suite's name as a string: each suite prices its own work in
    the hook its declaration names, and the command hands the hooks over."""
    names = {suite.name for suite in registry.suites()}
    modules = sorted((REPO / "src/vlstress/cost").glob("*.py"))
    assert {path.name for path in modules} >= {"estimate.py", "pricing.py", "rates.py"}
    named = {path.name: string_literals(path) & names for path in modules}
    assert not {name: found for name, found in named.items() if found}, named
    # the check sees a suite's name where one is written
    assert string_literals(REPO / "src/vlstress/suites/stability/pricing.py") & names == {
        "stability"
    }


def test_every_priced_suite_has_a_hook_after_the_suites_it_requires():
    """The registry order is the pricing order: a suite's hook runs after the hooks of the suites
    it requires (the zero-shot test sets are priced before the suites that read them)."""
    order = [suite.name for suite in registry.suites()]
    assert [hook.suite for hook in HOOKS] == [s.name for s in registry.suites() if s.pricing]
    assert {hook.suite for hook in HOOKS} >= {
        "retrieval",
        "zeroshot",
        "corruptions",
        "adversarial",
        "finetune",
        "overlap",
        "assistant",
        "calibration",
    }
    for suite in registry.suites():
        for required in suite.requires:
            assert order.index(required) < order.index(suite.name), (suite.name, required)
    for hook in HOOKS:
        assert callable(pricing.load(hook)), hook
    # the always-on suite is priced whatever `suites:` says
    assert [hook.suite for hook in HOOKS if hook.always] == ["retrieval"]


def test_a_suite_that_is_off_is_not_priced_and_an_unknown_hook_is_named(tmp_path, monkeypatch):
    for name in ("priced_on", "priced_off"):
        (tmp_path / f"{name}.py").write_text(
            "from vlstress.cost.pricing import Work\n"
            "def price(pricing):\n"
            f"    pricing.plan.work.append(Work({name!r}, 'called'))\n"
        )
    (tmp_path / "priced_none.py").write_text("PRICE = 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    hooks = [
        pricing.Hook("alpha", "priced_on"),
        pricing.Hook("beta", "priced_off"),
        pricing.Hook("gamma", "priced_on", always=True),
    ]
    found = estimate.plan(demo(), frozenset({"alpha"}), RATES, tmp_path, hooks=hooks)
    assert [w.suite for w in found.work] == ["priced_on", "priced_on"]  # beta's is not called
    unknown = [*hooks, pricing.Hook("delta", "vlstress.suites.delta.pricing")]
    with pytest.raises(
        VlstressError,
        match=r"suite 'delta': its pricing module 'vlstress.suites.delta.pricing' is not found",
    ):  # refused even when the suite is off: its declaration is wrong
        estimate.plan(demo(), frozenset({"alpha"}), RATES, tmp_path, hooks=unknown)
    with pytest.raises(VlstressError, match=r"suite 'eta'.*'priced_none' has no price\(pricing\)"):
        estimate.plan(
            demo(), frozenset(), RATES, tmp_path, hooks=[pricing.Hook("eta", "priced_none")]
        )


def test_a_suite_reading_the_zero_shot_sets_before_they_are_priced_is_an_error(tmp_path):
    values = demo()
    hooks = [h for h in HOOKS if h.suite != "zeroshot"]
    with pytest.raises(VlstressError, match="zero-shot test sets are not priced yet"):
        estimate.plan(values, frozenset({"corruptions"}), RATES, tmp_path, hooks=hooks)
    found = estimate.plan(
        values, frozenset({"zeroshot", "corruptions"}), RATES, tmp_path, hooks=HOOKS
    )
    (work,) = [w for w in found.work if w.suite == "corruptions"]
    assert work.images == 30 * 2 * 2  # the demo's objects x 2 corruptions x 2 severities
