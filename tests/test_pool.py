"""`vlstress pool` and the model attributes: rules with known answers, meta-device counts against
built models, the testbed -> timm name map, filters, the params check and `cost` on a pool, and
the attribute columns of summary.csv."""

from __future__ import annotations

import csv
import json
from importlib import resources

import pytest

from vlstress.pool import attributes, build, counts, entries, render
from vlstress.pool.filters import Filters, apply

from conftest import REPO, run_cli


@pytest.mark.parametrize(
    ("arch", "tag", "expected"),
    [
        (
            "ViT-B-32",
            "laion2b_s34b_b79k",
            {"family": "ViT", "tower": "transformer", "pretrain_data": "LAION-2B",
             "samples_seen_b": 34.0, "loss": "clip", "resolution": 224},
        ),
        (
            "ViT-B-16-SigLIP",
            "webli",
            {"family": "SigLIP", "tower": "transformer", "pretrain_data": "WebLI",
             "samples_seen_b": None, "loss": "siglip"},
        ),
        (
            "RN50",
            "openai",
            {"family": "ResNet", "tower": "cnn", "pretrain_data": "WIT-400M", "loss": "clip"},
        ),
        ("coca_ViT-B-32", "laion2b_s13b_b90k", {"family": "CoCa", "loss": "coca"}),
        ("convnext_base_w", "laion2b_s13b_b82k", {"family": "ConvNeXt", "tower": "cnn"}),
        (
            "ViT-B-16",
            "commonpool_m_clip_s128m_b4k",
            {"pretrain_data": "CommonPool-M (clip filter)", "samples_seen_b": 0.128},
        ),
        ("EVA02-B-16", "merged2b_s8b_b131k", {"family": "EVA", "pretrain_data": "Merged-2B"}),
        ("MobileCLIP-S1", "datacompdr", {"family": "MobileCLIP", "tower": "hybrid", "loss": None}),
        ("ViT-B-32", "no_such_tag", {"pretrain_data": None, "samples_seen_b": None}),
    ],
)  # fmt: skip
def test_open_clip_attribute_rules_give_known_answers(arch, tag, expected):
    found = attributes.derive(arch, tag, "hub")
    assert set(found) == set(attributes.FIELDS)
    assert {key: found[key] for key in expected} == expected
    assert found["params_image_m"] is None  # counted only where asked


@pytest.mark.parametrize(
    ("arch", "tag", "expected"),
    [
        ("timm:resnet50", "tv_in1k",
         {"family": "ResNet", "tower": "cnn", "pretrain_data": "ImageNet-1k",
          "loss": "supervised"}),
        ("timm:vit_base_patch16_224", "augreg_in21k_ft_in1k",
         {"family": "ViT", "tower": "transformer", "pretrain_data": "ImageNet-21k",
          "loss": "supervised"}),
        ("timm:resnext101_32x4d", "fb_swsl_ig1b_ft_in1k",
         {"family": "ResNeXt", "pretrain_data": "IG-1B", "loss": None}),
        ("timm:legacy_seresnet50", "in1k", {"family": "SE-ResNet"}),
    ],
)  # fmt: skip
def test_timm_attribute_rules_give_known_answers(arch, tag, expected):
    found = attributes.derive(arch, tag, "hub")
    assert {key: found[key] for key in expected} == expected


def test_hub_repositories_assistants_and_random_init_do_not_break_the_rules():
    hub = attributes.derive("hf-hub:timm/ViT-B-16-SigLIP", None, "hub")
    assert hub["family"] == "SigLIP" and hub["pretrain_data"] is None
    llava = attributes.derive("llava", "llava-hf/llava-v1.6-34b-hf", "hub")
    assert llava["family"] == "LLaVA-NeXT" and llava["resolution"] == 336
    assert attributes.derive("llava:tiny", None, "random-init")["family"] is None
    random = attributes.derive("RN50", None, "random-init")
    assert random["family"] == "ResNet" and random["pretrain_data"] is None


def test_a_fine_tuned_checkpoint_says_its_method_and_base(tmp_path):
    checkpoint = tmp_path / "model.safetensors"
    checkpoint.write_bytes(b"")
    base = {"slug": "vit-b-32-openai", "weights": "hub", "pretrained": "openai"}
    (tmp_path / "model.safetensors.json").write_text(
        json.dumps({"kind": "finetuned-checkpoint", "base": base,
                    "training": {"loss": "flyp", "lora_rank": 4}})
    )  # fmt: skip
    found = attributes.of("ViT-B-32", str(checkpoint), "checkpoint")
    assert found["finetune_method"] == "flyp+lora" and found["finetune_base"] == "vit-b-32-openai"
    assert found["pretrain_data"] == "WIT-400M" and found["family"] == "ViT"


def test_meta_device_counts_equal_those_of_a_built_model(tiny_arch):
    import open_clip
    import timm

    model = open_clip.create_model(tiny_arch, pretrained=None)
    image = sum(p.numel() for p in model.visual.parameters())
    total = sum(p.numel() for p in model.parameters())
    assert counts.open_clip_towers(tiny_arch) == (image, total - image - 1)  # logit_scale
    assert counts.loaded_towers(model) == (image, total - image - 1)
    net = timm.create_model("test_resnet.r160_in1k", pretrained=False)
    assert counts.timm_model("test_resnet", "r160_in1k") == (
        sum(p.numel() for p in net.parameters()),
        timm.data.resolve_model_data_config(net)["input_size"][-1],
    )


def test_the_testbed_name_map_names_timm_weights_that_exist():
    import timm

    path = resources.files("vlstress").joinpath("data/published/testbed_timm_names.csv")
    rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    assert list(rows[0]) == ["testbed", "timm", "note"]
    testbed = resources.files("vlstress").joinpath("data/published/testbed_standard.csv")
    models = [row["model"] for row in csv.DictReader(testbed.read_text().splitlines())]
    assert [row["testbed"] for row in rows] == models
    known = set(timm.list_pretrained())
    assert [row["timm"] for row in rows if row["timm"] and row["timm"] not in known] == []
    assert all(row["note"] for row in rows)
    assert dict((r["testbed"], r["timm"]) for r in rows)["resnet50"] == "resnet50.tv_in1k"


def test_every_open_clip_tag_gets_a_unique_valid_slug():
    import re

    import open_clip

    pairs = [*open_clip.list_pretrained(), ("hf-hub:org/name", "main")]
    found = entries.unique(entries.open_clip_candidates(pairs, lambda a, *_: a))
    assert len(found) == len(open_clip.list_pretrained())  # the hub repository left out
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9_+-]*", c.slug) for c in found)
    assert "vit-b-32-laion2b_s34b_b79k" in {c.slug for c in found}


def _candidate(slug, kind, **found):
    return entries.Candidate(slug, kind, "x", None, {**attributes.empty(), **found})


def test_filters_keep_what_they_say():
    pool = [
        _candidate("a", "open_clip", family="ViT", params_image_m=80.0, params_text_m=60.0,
                   resolution=224, pretrain_data="LAION-2B"),
        _candidate("b", "open_clip", family="ResNet", params_image_m=400.0, params_text_m=60.0,
                   resolution=288, pretrain_data="WIT-400M"),
        _candidate("c", "timm", family="ViT", resolution=224, pretrain_data="ImageNet-1k"),
    ]  # fmt: skip

    def slugs(**kwargs):
        return [c.slug for c in apply(Filters(**kwargs), pool)]

    assert slugs() == ["a", "b", "c"]
    assert slugs(kinds=("timm",)) == ["c"]
    assert slugs(families=("vit",)) == ["a", "c"]
    assert slugs(max_params_m=200) == ["a"]  # c is not counted: dropped
    assert slugs(resolutions=(288,)) == ["b"]
    assert slugs(data=("laion",)) == ["a"]


@pytest.mark.slow  # `vlstress cost` in a subprocess counts the timm classifiers (~30 s)
def test_a_pool_passes_the_params_check_and_cost_prices_it(tmp_path):
    from vlstress import params, params_check

    filters = Filters(("open_clip", "timm", "llava"), ("CoCa", "Wide ResNet", "LLaVA-1.5"))
    found = build.pool(filters, count=False)
    assert {c.kind for c in found} == {"open_clip", "timm", "llava"}
    out = tmp_path / "params.pool.yaml"
    out.write_text(render.text(found, "", str(out)))
    merged = params.load([REPO / "params.yaml", out])
    assert params_check.problems(merged) == []
    assert all(merged["models"][c.slug]["attributes"]["family"] for c in found)
    result = run_cli("cost", "--params", str(REPO / "params.yaml"), "--params", str(out), "--json")
    priced = {row["model"] for row in json.loads(result.stdout)["per_model"]}
    assert {c.slug for c in found if c.kind != "llava"} <= priced


def test_the_params_check_refuses_an_unknown_attribute():
    from vlstress import params, params_check

    merged = params.load([REPO / "params.yaml"])
    merged["models"]["resnet18-random"]["attributes"] = {"family": "ResNet", "size": 3}
    assert any("size" in line for line in params_check.problems(merged))


def test_summary_has_the_attribute_columns(tmp_path):
    from vlstress.record import Record, write_record
    from vlstress.report import records

    model = {"arch": "RN50", "pretrained": "openai", "weights": "hub", "slug": "rn50-openai",
             "attributes": {**attributes.empty(), "family": "ResNet", "tower": "cnn",
                            "params_image_m": 38.3, "resolution": 224, "loss": "clip"}}  # fmt: skip
    paths = []
    for slug, block in (("rn50-openai", model), ("old", {**model, "slug": "old"})):
        if slug == "old":
            block = {k: v for k, v in block.items() if k != "attributes"}
        rec = Record(
            task="retrieval",
            model={"slug": slug, "arch": "RN50", "weights": "hub:openai"},
            dataset={"name": "demo", "n_images": 2, "n_captions": 2},
            condition={},
            metrics={"t2i_R@1": 50.0},
            provenance={"step": "evaluate", "model": block, "params": {}, "seed": 0},
        )
        paths.append(tmp_path / f"{slug}.json")
        write_record(paths[-1], rec)
    table = records.collect(paths)
    assert records.ATTRIBUTE_COLUMNS == [c for c in table.columns if c in attributes.FIELDS]
    row = table.set_index("model").loc["rn50-openai"]
    assert (row["family"], row["tower"], row["resolution"], row["loss"]) == (
        "ResNet",
        "cnn",
        224,
        "clip",
    )
    written = tmp_path / "summary.csv"
    table.to_csv(written, index=False)
    back = records.read_summary(written).set_index("model")
    assert back.loc["old", ["family", "params_image_m", "finetune_base"]].isna().all()
    assert back.loc["rn50-openai", "params_image_m"] == 38.3
