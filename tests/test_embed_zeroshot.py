"""`vlstress embed-zeroshot`: the zero-shot classifiers of a model in one job, its zero-shot image
sets in another, unchanged sets reused.

The folders must hold what embedding each set alone writes, for exactly the sets the params
switch on (each suite adds its own through its `sets` module), and a rerun must embed only the
sets whose inputs changed.
"""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from vlstress.embedding.sets import from_providers
from vlstress.params import Params
from vlstress.pipeline import LISTS, providers
from vlstress.suites.zeroshot.sets import classifiers
from vlstress.testsets import manifest as testsets

from test_embed_retrieval import alone, counts, files_of, model_flags, run

REPO = Path(__file__).resolve().parents[1]
CLASSES = ["cat", "dog", "car"]
CLASSIFIER = "objects.npy"
FILES = ("testsets/objects.npy", "corrupted/fog_s1.npy", "typographic.npy", "ood/far.npy")
FOLDERS = [
    "data/testsets/objects",
    "data/corruptions/fog/s1",
    "data/typographic/objects",
    "data/ood/far",
]


def write_set(folder: Path, name: str, classes: list[str], seed: int, **extra) -> None:
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    images = []
    for i in range(5):
        Image.fromarray(rng.integers(0, 256, (30 + 4 * i, 40, 3), dtype=np.uint8)).save(
            folder / f"{i}.png"
        )
        images.append({"path": f"{i}.png", "label": i % len(classes), **extra})
    testsets.write(
        folder / "manifest.json",
        testsets.ClassificationSet(name, "imagefolder", classes, classes, str(folder), images),
    )


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A test set with a corrupted and a typographic copy and an OOD set, and the params that switch
    them on."""
    monkeypatch.chdir(tmp_path)
    write_set(tmp_path / "data/testsets/objects", "objects", CLASSES, 0)
    write_set(tmp_path / "data/corruptions/fog/s1", "objects-c-fog", CLASSES, 1, severity=1)
    write_set(tmp_path / "data/typographic/objects", "objects-typographic", CLASSES, 2, written=0)
    write_set(tmp_path / "data/ood/far", "far", ["tree", "sky"], 3)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["suites"] = {"zeroshot": True, "corruptions": True, "typographic": True, "ood": True}
    params["models"] = {
        "t": {"arch": "RN50", "pretrained": None}
    }  # the model flags name the model; the params only the sets
    params["zeroshot"]["robustness"]["mce_baseline"] = None
    entry = params["zeroshot"]["testsets"]["objects"]
    params["zeroshot"]["testsets"] = {"objects": entry}
    params["zeroshot"]["templates"] = "simple"
    params["corruptions"].update(testset="objects", names=["fog"], severities=[1])
    params["typographic"]["testset"] = "objects"
    params["ood"].update(in_distribution="objects", sets={"far": copy.deepcopy(entry)})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    return tmp_path


def sets_from(group: str) -> str:
    return ",".join(providers(group))


def embed(out: Path, arch: str, sets: str, reuse: Path | None = None) -> None:
    group = "classifiers" if sets == "classifiers" else "zeroshot"
    argv = [
        "embed-zeroshot",
        "--params",
        "params.yaml",
        "--sets",
        sets,
        "--sets-from",
        sets_from(group),
        *model_flags(arch),
        "--out",
        out,
    ]
    assert run(*argv, *(["--reuse-dir", reuse] if reuse else [])) == 0


def test_the_jobs_write_what_each_set_alone_writes(project, tiny_arch):
    embed(project / "classifiers", tiny_arch, "classifiers")
    embed(project / "zeroshot", tiny_arch, "images")
    assert sorted(files_of(project / "classifiers")) == [CLASSIFIER, f"{CLASSIFIER}.json"]
    assert sorted(files_of(project / "zeroshot")) == sorted(
        [*FILES, *(f"{name}.json" for name in FILES)]
    )
    params = yaml.safe_load((project / "params.yaml").read_text())
    single = project / "single"
    alone(classifiers(Params.of(params)), tiny_arch, single)
    alone(from_providers(providers("zeroshot"), "zeroshot", Params.of(params)), tiny_arch, single)
    for folder, name in [
        (project / "classifiers", CLASSIFIER),
        *((project / "zeroshot", name) for name in FILES),
    ]:
        assert (folder / name).read_bytes() == (single / name).read_bytes(), name
        ours, theirs = (
            json.loads(Path(f"{where / name}.json").read_text()) for where in (folder, single)
        )
        assert ours["provenance"].pop("step") == "embed-zeroshot"
        theirs["provenance"].pop("step")
        for meta in (ours, theirs):
            meta["provenance"].pop("command")
        assert ours == theirs, name
    # the sidecar fields the readers (zeroshot.classifier.load,
    # embeddings.load_embeddings) and the records' provenance rely on
    classifier = json.loads((project / "classifiers" / f"{CLASSIFIER}.json").read_text())
    assert set(classifier) == {
        "kind",
        "shape",
        "dataset",
        "classes",
        "templates",
        "templates_source",
        "logit_scale",
        "provenance",
    }
    images = json.loads((project / "zeroshot" / f"{FILES[1]}.json").read_text())
    assert (
        set(images) == {"kind", "shape", "dataset", "provenance"}
        and images["dataset"] == "objects-c-fog"
    )
    assert list(images["provenance"]["inputs"]) == [f"{FOLDERS[1]}/manifest.json"]
    assert (
        classifier["classes"] == CLASSES
        and len(classifier["templates"]) == 7
        and classifier["logit_scale"] > 0
    )
    assert np.load(project / "classifiers" / CLASSIFIER).shape == (3, 32) and np.load(
        project / "zeroshot" / FILES[3]
    ).shape == (5, 32)


def test_a_rerun_embeds_only_the_sets_whose_inputs_changed(project, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    out, reuse = project / "zeroshot", project / "reuse"
    embed(out, tiny_arch, "images", reuse)
    assert counts(caplog).endswith("4 set(s) embedded, 0 reused")
    first = files_of(out)
    embed(out, tiny_arch, "images", reuse)
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused") and files_of(out) == first

    Image.fromarray(np.zeros((32, 32, 3), dtype=np.uint8)).save(
        project / "data/corruptions/fog/s1/3.png"
    )
    embed(out, tiny_arch, "images", reuse)
    assert counts(caplog).endswith("1 set(s) embedded, 3 reused")
    after = files_of(out)
    # its sidecar records no image bytes
    assert [name for name in first if first[name] != after[name]] == [FILES[1]]

    embed(project / "classifiers", tiny_arch, "classifiers", reuse)
    before = files_of(project / "classifiers")
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["zeroshot"]["templates"] = "single"  # other prompts: the classifier is built again
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    embed(project / "classifiers", tiny_arch, "classifiers", reuse)
    assert counts(caplog).endswith("1 set(s) embedded, 0 reused")
    assert (
        len(json.loads((project / "classifiers" / f"{CLASSIFIER}.json").read_text())["templates"])
        == 1
    )
    assert files_of(project / "classifiers")[CLASSIFIER] != before[CLASSIFIER]
    embed(out, tiny_arch, "images", reuse)  # the image sets do not read the templates
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused") and files_of(out) == after


def test_a_missing_image_is_named_before_any_model_work(project, tiny_arch, capsys):
    (project / "data/ood/far/2.png").unlink()
    argv = [
        "embed-zeroshot",
        "--params",
        "params.yaml",
        "--sets",
        "images",
        "--sets-from",
        sets_from("zeroshot"),
    ]
    assert run(*argv, *model_flags(tiny_arch), "--out", project / "out") == 2
    error = capsys.readouterr().err
    assert "set ood/far" in error and "2.png" in error and not (project / "out").exists()


def test_the_suite_off_is_an_error_not_an_empty_folder(project, tiny_arch, capsys):
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["suites"] = {"zeroshot": False}
    (project / "off.yaml").write_text(yaml.safe_dump(params))
    argv = [
        "embed-zeroshot",
        "--params",
        "off.yaml",
        "--sets",
        "images",
        "--sets-from",
        sets_from("zeroshot"),
    ]
    assert run(*argv, *model_flags(tiny_arch), "--out", project / "out") == 2
    assert "zeroshot suite off" in capsys.readouterr().err and not (project / "out").exists()


def planned(params: dict, group: str) -> list[tuple[str, str]]:
    """(file inside the folder, the test-set folder it reads) of every set of a group."""
    found = (
        classifiers(Params.of(params))
        if group == "classifiers"
        else from_providers(providers("zeroshot"), "zeroshot", Params.of(params))
    )
    return [(name, str(item.source.parent)) for name, item in found]


def test_the_params_name_the_sets_and_the_job_inputs(project):
    params = yaml.safe_load((project / "params.yaml").read_text())
    assert planned(params, "classifiers") == [(CLASSIFIER, FOLDERS[0])]
    assert planned(params, "zeroshot") == list(zip(FILES, FOLDERS))
    # the image job's Snakemake inputs: every folder it reads, once
    assert LISTS["zeroshot_data"].paths(Params.of(params)) == FOLDERS
    assert LISTS["zeroshot_data"].folders(Params.of(params)) == [
        "data/testsets",
        "data/corruptions",
        "data/typographic",
        "data/ood",
    ]
    assert "ood.sets" in LISTS["zeroshot_data"].params(
        Params.of(params)
    ) and "corruptions.names" in LISTS["zeroshot_data"].params(Params.of(params))
    assert LISTS["zeroshot_testsets"].paths(Params.of(params)) == FOLDERS[:1]
    # calibration reads the folders the jobs write, never a file inside one (no Snakemake rule makes
    # one)
    emb = "results/embeddings/{model}"
    assert LISTS["zeroshot_sets"].paths(Params.of(params)) == [
        FOLDERS[0],
        f"{emb}/zeroshot",
        f"{emb}/classifiers",
        *FOLDERS[1:3],
    ]
    params["suites"].update(ood=False, typographic=False, corruptions=False)
    assert planned(params, "zeroshot") == [(FILES[0], FOLDERS[0])]
    params["suites"]["zeroshot"] = False
    assert (
        LISTS["zeroshot_testsets"].paths(Params.of(params)) == []
        and planned(params, "classifiers") == []
    )
