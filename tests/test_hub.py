"""Hub models offline: `vlstress fetch-weights` fills a fresh weight cache from a hub on
127.0.0.1 (tests/hub_server.py), then with HF_HUB_OFFLINE=1 and no hub the models load from the
cache, their provenance pins the commit and every file's sha256, and a truncated or altered
cached file is refused by name."""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from vlstress.embedding import hub, llava_models, models
from vlstress.errors import VlstressError

from conftest import REPO, TINY_CLIP
from hub_server import (
    LLAVA_NEXT_REPO,
    LLAVA_REPO,
    OPEN_CLIP_REPO,
    TIMM_REPO,
    HubServer,
    Repo,
    tiny_repos,
)

DEAD_ENDPOINT = "http://127.0.0.1:9"  # nothing answers: any request to the hub fails

HUB_MODELS = {
    "hub-clip": (f"hf-hub:{OPEN_CLIP_REPO}", None),
    "hub-timm": ("timm:test_vit", "r160_in1k"),
    "hub-llava": ("llava", LLAVA_REPO),
    "hub-llava-next": ("llava", LLAVA_NEXT_REPO),
}


def hub_params(cache: Path) -> str:
    """A params file adding the hub models and the weight cache."""
    lines = ["models:"]
    for slug, (arch, pretrained) in HUB_MODELS.items():
        lines.append(f"  {slug}: {{arch: '{arch}', pretrained: {pretrained or 'null'}}}")
    return "\n".join([*lines, f"embed: {{cache_dir: {cache}}}", ""])


@pytest.fixture(scope="module")
def served(module_tmp):
    """(the hub's repositories, a weight cache `vlstress fetch-weights` filled from it: run in
    this process, as its command line costs seconds of start-up; the workflow test runs it as a
    command)."""
    from vlstress.commands import fetch_weights

    folder = module_tmp.mktemp("hub")
    repos = tiny_repos(folder / "repos", TINY_CLIP)
    cache = folder / "cache"
    (folder / "hub.yaml").write_text(hub_params(cache))
    with HubServer(repos) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("HF_ENDPOINT", server.url)
        env.delenv("HF_HUB_OFFLINE", raising=False)
        fetch_weights.run(argparse.Namespace(params=[REPO / "params.yaml", folder / "hub.yaml"]))
        asked = list(server.requests)
    assert f"GET /api/models/{TIMM_REPO}/revision/main" in asked
    commit = repos[OPEN_CLIP_REPO].commit
    assert f"GET /{OPEN_CLIP_REPO}/resolve/{commit}/open_clip_model.safetensors" in asked
    return repos, cache


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", DEAD_ENDPOINT)


def spec(slug: str, cache: Path) -> models.ModelSpec:
    arch, pretrained = HUB_MODELS[slug]
    return models.ModelSpec(slug, arch, pretrained, seed=0, cache_dir=str(cache))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_fetched_models_load_offline_and_carry_commit_and_sha256(served, offline):
    import torch

    repos, cache = served
    clip, preprocess, tokenizer = models.load(spec("hub-clip", cache), "cpu")
    assert clip.visual.image_size == (32, 32)
    with torch.no_grad():
        text = clip.encode_text(tokenizer(["a photo of a dog"]))
    assert text.shape == (1, TINY_CLIP["embed_dim"])
    served_state = hub_tensors(repos[OPEN_CLIP_REPO].files["open_clip_model.safetensors"])
    assert torch.equal(clip.state_dict()["text_projection"], served_state["text_projection"])

    timm_model, _, none = models.load(spec("hub-timm", cache), "cpu")
    assert none is None
    weights = hub_tensors(repos[TIMM_REPO].files["model.safetensors"])
    assert torch.equal(timm_model.net.state_dict()["head.weight"], weights["head.weight"])

    for slug, repo in (("hub-clip", OPEN_CLIP_REPO), ("hub-timm", TIMM_REPO)):
        pinned = models.describe(spec(slug, cache))["hub"]
        assert pinned["repo"] == repo and pinned["revision"] == "main"
        assert pinned["commit"] == repos[repo].commit
        served_files = repos[repo].files
        assert pinned["files"] == {
            name: sha256(data) for name, data in served_files.items() if name in pinned["files"]
        }
        assert any(name.endswith(".safetensors") for name in pinned["files"])
    card = models.card(spec("hub-clip", cache))["model"]
    assert card["hub"]["commit"] == repos[OPEN_CLIP_REPO].commit
    assert card["weights_label"] == f"hub:{OPEN_CLIP_REPO}@main"


def hub_tensors(data: bytes) -> dict:
    from safetensors.torch import load

    return load(data)


@pytest.mark.parametrize(
    ("slug", "cls"),
    [
        ("hub-llava", "LlavaForConditionalGeneration"),
        ("hub-llava-next", "LlavaNextForConditionalGeneration"),
    ],
)
def test_a_hub_llava_loads_offline_with_the_class_its_config_names(served, offline, slug, cls):
    repos, cache = served
    hub_id = HUB_MODELS[slug][1]
    model, processor = llava_models.load(
        slug, "llava", hub_id, seed=0, cache_dir=str(cache), device="cpu"
    )
    assert type(model).__name__ == cls
    assert llava_models.revision(model) == repos[hub_id].commit
    assert processor.tokenizer.padding_side == "left"
    pinned = models.describe(spec(slug, cache))["hub"]
    assert pinned["commit"] == repos[hub_id].commit
    assert pinned["files"]["model.safetensors"] == sha256(repos[hub_id].files["model.safetensors"])
    assert set(pinned["files"]) == set(repos[hub_id].files)


def test_a_tiny_llava_next_answers(tmp_path):
    from PIL import Image

    image = tmp_path / "a.png"
    Image.new("RGB", (48, 30), (200, 10, 10)).save(image)
    model, processor = llava_models.load(
        "tiny-next", "llava:tiny-next", None, seed=0, cache_dir=None, device="cpu"
    )
    assert type(model).__name__ == "LlavaNextForConditionalGeneration"
    answers = llava_models.generate(
        model, processor, [image, image], ["what is it?", "colour?"],
        batch_size=2, max_new_tokens=3, device="cpu",
    )  # fmt: skip
    assert len(answers) == 2 and all(isinstance(answer, str) for answer in answers)


def damaged_copy(cache: Path, tmp_path: Path, repo: str, name: str, how: str) -> Path:
    """A copy of the weight cache with `name` of `repo`'s snapshot truncated or altered."""
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy, symlinks=True)
    storage = next(copy.rglob("models--" + repo.replace("/", "--")))
    blob = Path(os.path.realpath(next(storage.glob(f"snapshots/*/{name}"))))
    data = blob.read_bytes()
    blob.write_bytes(data[: len(data) // 2] if how == "truncated" else data[:-1] + b"\x01")
    assert blob.stat().st_size == (len(data) // 2 if how == "truncated" else len(data))
    return copy


@pytest.mark.parametrize("how", ["truncated", "altered"])
def test_a_damaged_cached_file_is_refused_by_name(served, offline, tmp_path, how):
    _, cache = served
    copy = damaged_copy(cache, tmp_path, OPEN_CLIP_REPO, "open_clip_model.safetensors", how)
    with pytest.raises(VlstressError, match="open_clip_model.safetensors.*truncated or altered"):
        models.load(spec("hub-clip", copy), "cpu")
    with pytest.raises(VlstressError, match="'hub-clip'.*open_clip_model.safetensors"):
        models.card(spec("hub-clip", copy))


def test_a_damaged_llava_config_is_refused_by_name(served, offline, tmp_path):
    _, cache = served
    copy = damaged_copy(cache, tmp_path, LLAVA_NEXT_REPO, "config.json", "altered")
    with pytest.raises(VlstressError, match="'hub-llava-next'.*config.json.*truncated or altered"):
        llava_models.load(
            "hub-llava-next", "llava", LLAVA_NEXT_REPO, seed=0, cache_dir=str(copy), device="cpu"
        )


def test_an_unknown_repository_is_an_error_naming_the_model(served, monkeypatch, tmp_path):
    repos, _ = served
    unknown = models.ModelSpec("lost", "hf-hub:vlstress-test/none", None, 0, str(tmp_path))
    with HubServer(repos) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        with pytest.raises(
            VlstressError,
            match="model 'lost': could not fetch vlstress-test/none.*RepositoryNotFound",
        ):
            models.load(unknown, "cpu")
        bad_revision = models.ModelSpec("old", f"hf-hub:{OPEN_CLIP_REPO}", "v9", 0, str(tmp_path))
        with pytest.raises(VlstressError, match="'old'.*revision v9.*RevisionNotFound"):
            models.load(bad_revision, "cpu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(VlstressError, match="'lost'.*HF_HUB_OFFLINE is set.*fetch-weights"):
        models.load(unknown, "cpu")


def test_a_hub_repository_that_is_no_llava_is_refused_by_name(monkeypatch, tmp_path):
    weights = b"\0" * 64
    bare = Repo({"config.json": b'{"model_type": "llava"}', "model.safetensors": weights})
    other = Repo({"config.json": b'{"model_type": "bert"}', "model.safetensors": weights,
                  "tokenizer.json": b"{}", "processor_config.json": b"{}"})  # fmt: skip
    with HubServer({"t/bare": bare, "t/bert": other}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        with pytest.raises(VlstressError, match="'bare'.*t/bare lacks processor files"):
            llava_models.fetch("bare", "t/bare", str(tmp_path))
        with pytest.raises(VlstressError, match="'bert'.*model_type 'bert', not a LLaVA"):
            llava_models.load(
                "bert", "llava", "t/bert", seed=0, cache_dir=str(tmp_path), device="cpu"
            )


def test_hub_entries_are_checked_and_labelled():
    for arch in ("hf-hub:", "hf-hub:no-slash", "hf-hub:a/b/c"):
        with pytest.raises(VlstressError, match="names no hub repository"):
            models.check_spec(models.ModelSpec("m", arch, None))
    good = models.ModelSpec("m", "hf-hub:org/name", "v1.0")
    models.check_spec(good)
    assert (good.kind, good.weights_kind) == ("open_clip", "hub")
    assert good.weights_label() == "hub:org/name@v1.0"
    assert models.hub_ref(good) == hub.HubRef("org/name", "v1.0", None)
    llava = models.ModelSpec("l", "llava", "llava-hf/llava-v1.6-34b-hf@abc", cache_dir="w")
    assert models.hub_ref(llava) == hub.HubRef("llava-hf/llava-v1.6-34b-hf", "abc", "w/hf")
    with pytest.raises(VlstressError, match="neither a local folder nor a hub id"):
        models.check_spec(models.ModelSpec("l", "llava", "a/b/c"))


@pytest.mark.slow
def test_the_workflow_runs_hub_models_offline_in_both_front_ends(served, module_tmp):
    """`vlstress fetch-weights` from the hub, then the zero-shot and assistant suites with
    HF_HUB_OFFLINE=1 and no hub (Snakemake builds; DVC, forced to rerun the model steps, writes
    the same bytes): an open_clip repository, a timm tag and a LLaVA-NeXT, each record pinned to
    the commit it was served at."""
    import json

    from conftest import (
        committed_copy,
        dvc_reruns_to_the_same_bytes,
        finetune_off,
        locked_stages,
        run_ok,
        tool_env,
    )

    pytest.importorskip("snakemake")
    pytest.importorskip("dvc")
    repos, _ = served
    chosen = {slug: HUB_MODELS[slug] for slug in ("hub-clip", "hub-timm", "hub-llava-next")}

    def small(params: dict) -> dict:
        finetune_off(params)
        params["suites"] = {name: False for name in params["suites"]} | {
            "zeroshot": True,
            "assistant": True,
        }
        params["dataset"]["max_images"] = 3
        params["models"] = {
            slug: {"arch": arch, "pretrained": pretrained}
            for slug, (arch, pretrained) in chosen.items()
        }
        params["embed"].update(threads=1, workers=0)
        params["zeroshot"]["testsets"]["objects"]["max_per_class"] = 2
        params["zeroshot"]["templates"] = "single"
        params["zeroshot"]["robustness"]["mce_baseline"] = None
        params["assistant"].update(options_from="hub-clip", options=3, batch_size=4)
        return params

    root = committed_copy(module_tmp.mktemp("hub-workflow") / "repo", small)
    env = tool_env(module_tmp.mktemp("model-configs"))
    env["HF_HUB_DISABLE_TELEMETRY"] = "1"
    with HubServer(repos) as server:
        fetched = run_ok(
            "vlstress", "fetch-weights", cwd=root, env={**env, "HF_ENDPOINT": server.url}
        )
    assert "hub-llava-next" in fetched
    env.update(HF_HUB_OFFLINE="1", HF_ENDPOINT=DEAD_ENDPOINT)
    run_ok("snakemake", "--cores", "2", cwd=root, env=env)

    metrics = root / "results/metrics"
    found = {
        "hub-clip": metrics / "hub-clip/zeroshot-objects.json",
        "hub-timm": metrics / "hub-timm/zeroshot-objects.json",
        "hub-llava-next": metrics / "hub-llava-next/assistant-objects.json",
    }
    for slug, path in found.items():
        record = json.loads(path.read_text())
        record = record[0] if isinstance(record, list) else record
        pinned = record["provenance"]["model"]["hub"]
        repo = chosen[slug][1] if chosen[slug][0] == "llava" else pinned["repo"]
        assert pinned["commit"] == repos[repo].commit, slug
        weights = [name for name in pinned["files"] if name.endswith(".safetensors")]
        assert weights and all(
            pinned["files"][name] == sha256(repos[repo].files[name]) for name in weights
        )
    assert pinned["repo"] == LLAVA_NEXT_REPO  # the last: the assistant
    assert record["provenance"]["model"]["revision"] == repos[LLAVA_NEXT_REPO].commit
    assert "Nothing to be done" in run_ok("snakemake", "-n", cwd=root, env=env)
    steps = locked_stages(root, "model_card", "embed_zeroshot", "ask")
    assert len(steps) == 3 + 2 + 1, steps
    dvc_reruns_to_the_same_bytes(root, steps, env)


def test_a_llava_hub_id_is_no_missing_input_of_the_workflow():
    """A LLaVA's `pretrained: org/name` names a hub repository; a checkpoint or LLaVA folder that
    does not exist is still refused before anything runs."""
    from vlstress.pipeline import external

    config = {
        "models": {
            "hub": {"arch": "llava", "pretrained": LLAVA_NEXT_REPO},
            "pinned": {"arch": "llava", "pretrained": f"{LLAVA_REPO}@main"},
            "folder": {"arch": "llava", "pretrained": "./no-such-llava"},
            "checkpoint": {"arch": "ViT-B-32", "pretrained": "no/such.pt"},
            "clip": {"arch": f"hf-hub:{OPEN_CLIP_REPO}", "pretrained": None},
        }
    }
    found = external.missing(config, ("item.pretrained",), "models")
    assert found == [
        ("models.checkpoint.pretrained", "no/such.pt"),
        ("models.folder.pretrained", "./no-such-llava"),
    ]


def test_a_tokenizer_named_by_the_config_comes_from_its_own_repository(tmp_path, monkeypatch):
    """An open_clip config naming a transformers tokenizer its repository lacks: that tokenizer,
    into the weight cache (with the repository's tokenizer files, open_clip's `local-dir:`)."""
    import json

    import open_clip.tokenizer

    made = []
    monkeypatch.setattr(
        open_clip.tokenizer, "HFTokenizer", lambda name, **kw: made.append((name, kw)) or "hf"
    )
    text_cfg = {**TINY_CLIP["text_cfg"], "hf_tokenizer_name": "org/tok", "context_length": 64}
    config = {"model_cfg": {**TINY_CLIP, "text_cfg": text_cfg}}
    (tmp_path / "open_clip_config.json").write_text(json.dumps(config))
    spec = models.ModelSpec("m", f"hf-hub:{OPEN_CLIP_REPO}", None, cache_dir="weights")
    assert models.hub_tokenizer(spec, tmp_path) == "hf"
    assert made == [
        ("org/tok", {"context_length": 64, "cache_dir": "weights", "tokenizer_mode": None})
    ]


def test_an_open_clip_tag_from_the_hub_is_pinned_and_checked(
    served, tiny_arch, tmp_path, monkeypatch
):
    """An open_clip tag whose weights open_clip fetches from a hub repository: its records pin the
    commit and sha256 too, and an altered cached file is refused before the model loads."""
    import huggingface_hub.constants as constants
    import open_clip.pretrained as pretrained

    repos, _ = served
    weights = "open_clip_model.safetensors"
    tags = {"hubtag": pretrained._pcfg(hf_hub=f"{OPEN_CLIP_REPO}/{weights}")}
    monkeypatch.setitem(pretrained._PRETRAINED, tiny_arch, tags)
    tagged = models.ModelSpec("tagged", tiny_arch, "hubtag", 0, str(tmp_path / "cache"))
    with HubServer(repos) as server:  # open_clip's downloads read huggingface_hub's endpoint
        monkeypatch.setattr(constants, "ENDPOINT", server.url)
        template = server.url + "/{repo_id}/resolve/{revision}/{filename}"
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
        models.load(tagged, "cpu")
        pinned = models.describe(tagged)["hub"]
        assert pinned["repo"] == OPEN_CLIP_REPO
        assert pinned["commit"] == repos[OPEN_CLIP_REPO].commit
        assert pinned["files"] == {weights: sha256(repos[OPEN_CLIP_REPO].files[weights])}
        damaged_copy(tmp_path / "cache", tmp_path / "damaged", OPEN_CLIP_REPO, weights, "altered")
        with pytest.raises(VlstressError, match=f"'tagged'.*{weights}.*truncated or altered"):
            models.load(
                models.ModelSpec("tagged", tiny_arch, "hubtag", 0, str(tmp_path / "damaged/cache")),
                "cpu",
            )


def test_the_tables_name_a_hub_repository_by_its_revision():
    from vlstress.record import weights_short

    for pretrained, shown in ((None, "main"), ("v1.0", "v1.0")):
        spec = models.ModelSpec("m", f"hf-hub:{OPEN_CLIP_REPO}", pretrained)
        assert weights_short(models.describe(spec)) == shown
