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


def embed(
    out: Path, arch: str, sets: str, reuse: Path | None = None, shard: tuple[int, int] | None = None
) -> None:
    """The job as the workflow runs it; `shard`: (K, S), one shard of S."""
    group = "classifiers" if sets == "classifiers" else "zeroshot"
    argv = [
        "embed-zeroshot",
        "--params",
        "params.yaml",
        "--sets",
        sets,
        "--sets-from",
        sets_from(group),
        *(["--shard", str(shard[0]), "--shards", str(shard[1])] if shard else []),
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


@pytest.mark.parametrize(
    ("rows", "batch", "shards", "spans"),
    [
        (5, 2, 2, [(0, 2), (2, 5)]),  # 3 batches: 1 and 2
        (5, 2, 4, [(0, 0), (0, 2), (2, 4), (4, 5)]),  # more shards than batches: one gets none
        (7, 3, 1, [(0, 7)]),
        (10, 2, 3, [(0, 2), (2, 6), (6, 10)]),  # 5 batches: 1, 2, 2
    ],
)
def test_a_shard_is_a_run_of_whole_batches(rows, batch, shards, spans):
    from vlstress.embedding.sets import shard_rows

    assert [shard_rows(rows, batch, k, shards) for k in range(shards)] == spans


def test_a_shard_outside_the_count_is_refused():
    from vlstress.embedding.sets import shard_rows
    from vlstress.errors import VlstressError

    with pytest.raises(VlstressError, match="shard 3 of 3"):
        shard_rows(5, 2, 3, 3)


def embed_shards(project: Path, arch: str, shards: int, reuse: Path | None = None) -> Path:
    """Every shard of the image sets, then the join: the folder the workflow's sharded layout
    writes (cluster.embed_shards)."""
    parts = project / f"shards-{shards}"
    for k in range(shards):
        embed(parts / str(k), arch, "images", reuse, shard=(k, shards))
    out = project / f"joined-{shards}"
    join = ["embed-join", "--parts-dir", parts, "--shards", str(shards), "--out", out]
    assert run(*join, *(["--reuse-dir", reuse] if reuse else [])) == 0
    return out


def without_command(path: Path) -> dict:
    """A sidecar, its command's --out left out (the folders of one test differ)."""
    meta = json.loads(path.read_text())
    words = meta["provenance"]["command"].split(" ")
    meta["provenance"]["command"] = " ".join(words[: words.index("--out")])
    return meta


@pytest.mark.parametrize("shards", [2, 4])
def test_sharded_embeddings_join_to_the_bytes_of_one_job(project, tiny_arch, shards):
    """Batches of 2 over sets of 5 images: each shard embeds whole batches, so the joined rows are
    the bytes one job writes, and the sidecars name the one job's command (the shards' are in
    their manifests)."""
    embed(project / "one", tiny_arch, "images")
    joined = embed_shards(project, tiny_arch, shards)
    assert sorted(files_of(joined)) == sorted(files_of(project / "one"))
    for name in FILES:
        assert (joined / name).read_bytes() == (project / "one" / name).read_bytes(), name
        assert without_command(Path(f"{joined / name}.json")) == without_command(
            Path(f"{project / 'one' / name}.json")
        )
    manifest = json.loads((project / f"shards-{shards}/0/shard.json").read_text())
    assert manifest["sets"][FILES[0]]["start"] == 0 and manifest["sets"][FILES[0]]["rows"] == 5
    assert "--shard 0 --shards" in manifest["sets"][FILES[0]]["provenance"]["command"]
    joined_command = json.loads(Path(f"{joined / FILES[0]}.json").read_text())["provenance"]
    assert joined_command["command"].endswith(f"--out {joined}")
    assert "--shard" not in joined_command["command"]


def test_the_joined_sidecar_names_the_one_job_command():
    from vlstress.embedding.sets import one_job_command

    shard = (
        "vlstress embed-zeroshot --params params.yaml --sets images --threads 2 --reuse-dir "
        "data/weights/embeddings --shard 3 --shards 10 --out results/embeddings/m/zeroshot-shards/3"
    )
    assert one_job_command(shard, Path("results/embeddings/m/zeroshot")) == (
        "vlstress embed-zeroshot --params params.yaml --sets images --threads 2 --reuse-dir "
        "data/weights/embeddings --out results/embeddings/m/zeroshot"
    )


def test_sharded_jobs_share_the_reuse_folder_with_one_job(project, tiny_arch, caplog):
    caplog.set_level(logging.INFO)
    reuse = project / "reuse"
    joined = embed_shards(project, tiny_arch, 2, reuse)  # the join keeps each set for reuse
    embed(project / "one", tiny_arch, "images", reuse)
    assert counts(caplog).endswith("0 set(s) embedded, 4 reused")
    caplog.clear()
    again = embed_shards(project, tiny_arch, 2, reuse)  # every set left to the reuse entry
    assert "shard 0 of 2, 0 rows embedded" in caplog.text
    assert "shard 1 of 2, 0 rows embedded" in caplog.text
    for name in FILES:  # the bytes, and the sidecar but for the command that wrote it
        for folder in (project / "one", again):
            assert (folder / name).read_bytes() == (joined / name).read_bytes(), name
            assert without_command(Path(f"{folder / name}.json")) == without_command(
                Path(f"{joined / name}.json")
            )


def test_the_join_refuses_shards_that_do_not_make_the_sets(project, tiny_arch, capsys):
    embed_shards(project, tiny_arch, 2)
    parts = project / "shards-2"
    # a shard folder missing, and a count that does not match the folders
    join = ["embed-join", "--parts-dir", parts, "--shards", "3", "--out", project / "bad"]
    assert run(*join) == 2
    assert "shards-2/2" in capsys.readouterr().err and not (project / "bad").exists()
    # a part cut short: named, nothing written
    part = parts / "1" / FILES[0]
    np.save(part, np.load(part)[:0])
    join = ["embed-join", "--parts-dir", parts, "--shards", "2", "--out", project / "bad"]
    assert run(*join) == 2
    error = capsys.readouterr().err
    assert str(parts / "1" / FILES[0]) in error and not (project / "bad").exists()
