"""`vlstress testset`: every test-set kind on tiny synthetic folders, CIFAR through a local HTTP
server (never the network), the real coco-mini crops, and clean failures on bad input."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import pickle
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlstress import cli
from vlstress.testsets import labelmaps, manifest

TENCH, GOLDFISH, STINGRAY = "n01440764", "n01443537", "n01498041"  # ImageNet classes 0, 1, 6


def image(path: Path, seed: int = 0, size: tuple[int, int] = (12, 10)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return path


def call_testset(capsys, monkeypatch, *flags: str) -> tuple[int, str]:
    """Run `vlstress testset FLAGS` in this process; (exit code, stderr)."""
    code = cli.main(["testset", "--name", "t", *flags])
    return code, capsys.readouterr().err


@pytest.fixture
def run(capsys, monkeypatch):
    def go(out: Path, kind: str, *flags: str) -> manifest.ClassificationSet:
        code, err = call_testset(capsys, monkeypatch, "--kind", kind, *flags, "--out", str(out))
        assert code == 0, err
        return manifest.load(out)

    return go


@pytest.fixture
def fails(capsys, monkeypatch):
    def go(out: Path, kind: str, *flags: str, names: str) -> str:
        code, err = call_testset(capsys, monkeypatch, "--kind", kind, *flags, "--out", str(out))
        assert code == 2, err
        assert names in err, err
        assert "Traceback" not in err
        assert not out.exists() and not list(out.parent.glob(f".{out.name}*")), (
            "partial output left behind"
        )
        return err

    return go


# ------------------------------------------------------------------ label maps


def test_label_maps_counts_and_subsets():
    wnids = labelmaps.imagenet_wnids()
    assert len(wnids) == 1000 and list(wnids) == sorted(wnids) and wnids[:2] == (TENCH, GOLDFISH)
    for kind in ("imagenet-r", "imagenet-a"):
        indices = labelmaps.subset_indices(kind)
        assert len(indices) == 200 and list(indices) == sorted(indices)
    assert (
        labelmaps.subset_indices("imagenet-r")[0] == 1
        and labelmaps.subset_indices("imagenet-a")[0] == 6
    )
    assert (
        len(labelmaps.objectnet_folders()) == 313 and len(labelmaps.objectnet_to_imagenet()) == 113
    )
    sources = labelmaps.sources()
    for name, entry in sources.items():
        assert entry["source"]["repo"] and len(entry["source"]["commit"]) == 40, name
        assert labelmaps.read(name)  # sha256 checked against SOURCES.json


# ------------------------------------------------------------------ folder kinds


def test_imagefolder_generic_and_classnames(tmp_path, run, fails):
    root = tmp_path / "folders"
    for i, folder in enumerate(["golden_retriever", "cat", "cat", "zebra"]):
        image(root / folder / f"{i}.png", seed=i)
    data = run(tmp_path / "a", "imagefolder", "--root", str(root))
    assert data.classes == ["cat", "golden retriever", "zebra"] and data.class_ids == [
        "cat",
        "golden_retriever",
        "zebra",
    ]
    assert [(e["path"], e["label"]) for e in data.images] == [
        ("cat/1.png", 0),
        ("cat/2.png", 0),
        ("golden_retriever/0.png", 1),
        ("zebra/3.png", 2),
    ]
    assert run(
        tmp_path / "b", "imagefolder", "--root", str(root), "--max-per-class", "1"
    ).labels == [0, 1, 2]
    names = tmp_path / "names.txt"
    names.write_text("kitty\ndog\nstriped horse\n")
    assert run(
        tmp_path / "c", "imagefolder", "--root", str(root), "--classnames", str(names)
    ).classes == ["kitty", "dog", "striped horse"]
    names.write_text("kitty\ndog\n")
    fails(
        tmp_path / "d",
        "imagefolder",
        "--root",
        str(root),
        "--classnames",
        str(names),
        names="2 names for 3 classes",
    )
    # two classes of one name: their classifier rows would tie and each score the other's images
    names.write_text("apple\nApple \ncherry\n")
    fails(
        tmp_path / "e",
        "imagefolder",
        "--root",
        str(root),
        "--classnames",
        str(names),
        names="'apple' names classes cat, golden_retriever",
    )


def test_imagefolder_of_wnids_reads_as_imagenet(tmp_path, run):
    root = tmp_path / "val"
    image(root / GOLDFISH / "a.JPEG")
    image(root / TENCH / "b.JPEG")
    data = run(tmp_path / "out", "imagefolder", "--root", str(root))
    assert len(data.classes) == 1000 and data.classes[:2] == ["tench", "goldfish"]
    assert [(e["path"], e["label"]) for e in data.images] == [
        (f"{TENCH}/b.JPEG", 0),
        (f"{GOLDFISH}/a.JPEG", 1),
    ]
    assert len(data.source["classes_without_images"]) == 998


def test_imagenet_and_sketch(tmp_path, run, fails):
    root = tmp_path / "val"
    image(root / STINGRAY / "x.JPEG")
    for kind in ("imagenet", "imagenet-sketch"):
        data = run(tmp_path / kind, kind, "--root", str(root))
        assert (
            data.kind == kind
            and len(data.classes) == 1000
            and data.images == [{"path": f"{STINGRAY}/x.JPEG", "label": 6}]
        )
        assert data.classes[6] == "stingray" and data.class_ids[6] == STINGRAY
    image(root / "n99999999" / "y.JPEG")
    fails(
        tmp_path / "bad",
        "imagenet",
        "--root",
        str(root),
        names="'n99999999' is not an ImageNet-1k wnid",
    )


def test_imagenet_v2_numeric_order(tmp_path, run):
    root = tmp_path / "v2"
    image(root / "10" / "a.jpeg", seed=1)
    image(root / "2" / "b.jpeg", seed=2)
    data = run(tmp_path / "out", "imagenet-v2", "--root", str(root))
    assert [(e["path"], e["label"]) for e in data.images] == [("2/b.jpeg", 2), ("10/a.jpeg", 10)]
    assert data.classes[10] == "brambling" and data.class_ids[10] == labelmaps.imagenet_wnids()[10]


@pytest.mark.parametrize("kind, first", [("imagenet-r", "goldfish"), ("imagenet-a", "stingray")])
def test_imagenet_r_a_use_their_200_classes(tmp_path, run, fails, kind, first):
    indices = labelmaps.subset_indices(kind)
    wnids = [labelmaps.imagenet_wnids()[i] for i in indices]
    root = tmp_path / kind
    image(root / wnids[0] / "a.jpg")
    image(root / wnids[-1] / "b.jpg")
    data = run(tmp_path / "out", kind, "--root", str(root))
    assert len(data.classes) == 200 and data.class_ids == wnids and data.classes[0] == first
    assert data.classes == [labelmaps.imagenet_classnames()[i] for i in indices]
    assert data.labels == [0, 199] and data.source["imagenet_indices"] == list(indices)
    full = tmp_path / "imagenet1k.json"
    full.write_text(json.dumps({"imagenet1k": [f"class {i}" for i in range(1000)]}))
    named = run(tmp_path / "named", kind, "--root", str(root), "--classnames", f"{full}#imagenet1k")
    assert named.classes[0] == f"class {indices[0]}"
    image(root / TENCH / "c.jpg")  # an ImageNet class outside both subsets
    fails(
        tmp_path / "bad",
        kind,
        "--root",
        str(root),
        names=f"'{TENCH}' is not one of the 200 {kind} classes",
    )


def test_imagenet_c_one_corruption_all_severities(tmp_path, run, fails):
    root = tmp_path / "imagenet-c"
    for severity in ("1", "3"):
        for i in range(2):
            image(root / "fog" / severity / TENCH / f"{i}.JPEG", seed=i)
    image(root / "snow" / "1" / TENCH / "0.JPEG")
    data = run(
        tmp_path / "out",
        "imagenet-c",
        "--root",
        str(root),
        "--corruption",
        "fog",
        "--max-per-class",
        "1",
    )
    assert [(e["path"], e["severity"]) for e in data.images] == [
        (f"fog/1/{TENCH}/0.JPEG", 1),
        (f"fog/3/{TENCH}/0.JPEG", 3),
    ]
    assert (
        data.source["corruption"] == "fog"
        and data.source["severities"] == [1, 3]
        and len(data.classes) == 1000
    )
    fails(
        tmp_path / "bad",
        "imagenet-c",
        "--root",
        str(root),
        "--corruption",
        "frost",
        names="'frost' not found; folders there: fog, snow",
    )


@pytest.mark.parametrize("nested", [True, False])
def test_objectnet_113_classes_and_mapping(tmp_path, run, fails, nested):
    root = tmp_path / "objectnet-1.0"
    base = root / "images" if nested else root
    image(base / "alarm_clock" / "1.png", seed=1)
    image(base / "banana" / "2.png", seed=2)
    image(base / "air_freshener" / "3.png", seed=3)  # ObjectNet class with no ImageNet counterpart
    data = run(tmp_path / "out", "objectnet", "--root", str(root))
    assert len(data.classes) == 113 and data.class_ids == sorted(data.class_ids)
    alarm = data.class_ids.index("alarm_clock")
    assert data.classes[alarm] == "alarm clock"
    assert data.source["imagenet_indices"][alarm] == [409, 530]  # analog clock, digital clock
    assert data.source["imagenet_indices"][data.class_ids.index("banana")] == [954]
    prefix = "images/" if nested else ""
    assert [e["path"] for e in data.images] == [
        f"{prefix}alarm_clock/1.png",
        f"{prefix}banana/2.png",
    ]
    assert data.source["skipped_folders"] == 1 and data.source["skipped_images"] == 1
    image(base / "not_a_class" / "4.png")
    fails(
        tmp_path / "bad",
        "objectnet",
        "--root",
        str(root),
        names="'not_a_class' is not an ObjectNet class folder",
    )


def test_imagenet_d_split_classes_names_and_imagenet_map(tmp_path, run, fails):
    """One ImageNet-D split: its 113 classes in ImageNet-D's order and names, each with the
    ImageNet classes of its repository's map; a timm model's class map follows them."""
    from vlstress.testsets.imagenet_map import imagenet_classes

    split = tmp_path / "ImageNet-D" / "background"
    image(split / "alarm_clock" / "1.png", seed=1)
    image(split / "coffee_or_french_press" / "2.png", seed=2)  # ObjectNet's coffee_french_press
    image(split / "t_shirt" / "3.png", seed=3)
    data = run(tmp_path / "out", "imagenet-d", "--root", str(split))
    assert len(data.classes) == 113 and data.class_ids[:2] == ["alarm_clock", "backpack"]
    assert data.class_ids[-1] == "wok" and data.source["split"] == "background"
    coffee = data.class_ids.index("coffee_or_french_press")
    assert data.classes[coffee] == "coffee/french press" and data.classes[89] == "t-shirt"
    assert [e["label"] for e in data.images] == [0, coffee, 89]
    mapped = imagenet_classes(data)
    assert mapped[0] == [409, 530] and mapped[coffee] == [550] and mapped[89] == [610]
    fails(
        tmp_path / "bad",
        "imagenet-d",
        "--root",
        str(split.parent),
        names="holds the split folders background: give one split as the root",
    )
    image(split / "teddy" / "4.png")
    fails(
        tmp_path / "bad2",
        "imagenet-d",
        "--root",
        str(split),
        names="'teddy' is not an ImageNet-D class folder",
    )


def ninco_root(tmp_path: Path) -> Path:
    """A stand-in NINCO_all folder: one image in each of NINCO's 64 class folders (46 of the
    benchmark, 18 more), 2 unit tests and 2 subsampled sets, named as in the archive."""
    from vlstress.testsets.ood_kinds import ninco_classes

    root = tmp_path / "NINCO"
    for i, (folder, (_, status)) in enumerate(sorted(ninco_classes().items())):
        part = "NINCO_OOD_unit_tests" if status == "unit test" else "NINCO_OOD_classes"
        image(root / part / folder / f"{folder}_000.jpg", seed=i)
    for i, name in enumerate(("Textures", "SSB_hard")):
        image(root / "NINCO_popular_datasets_subsamples" / name / f"{name}_{i}.png", seed=100 + i)
    return root


def test_ninco_reads_its_46_classes_by_their_print_names(tmp_path, run, fails):
    root = ninco_root(tmp_path)
    data = run(tmp_path / "out", "ninco", "--root", str(root))
    assert len(data.classes) == 46 and len(data.images) == 46
    assert data.class_ids == sorted(data.class_ids) and "bagpipe" not in data.class_ids  # status 2
    assert data.classes[data.class_ids.index("haemulon_sciurus")] == "bluestriped grunt"
    # the print name keeps its add-on, as NINCO's own dataset class writes it
    assert data.classes[data.class_ids.index("platycephalus_fuscus")] == "dusky flathead (fish)"
    assert len(data.source["skipped_folders"]) == 18
    assert data.source["label_maps"] == labelmaps.checksums("ninco_class_names.csv")
    tests = run(tmp_path / "unit", "ninco-unit-tests", "--root", str(root))
    assert len(tests.classes) == 17 and "Gaussian noise" in tests.classes
    subsamples = run(tmp_path / "sub", "ninco-subsamples", "--root", str(root))
    assert subsamples.classes == ["SSB hard", "Textures"] and len(subsamples.images) == 2
    # a missing class folder, a folder NINCO does not have, the wrong root: each named
    (root / "NINCO_OOD_classes" / "waffles" / "waffles_000.jpg").unlink()
    (root / "NINCO_OOD_classes" / "waffles").rmdir()
    fails(
        tmp_path / "bad", "ninco", "--root", str(root), names="1 of the 46 folders missing: waffles"
    )
    image(root / "NINCO_OOD_classes" / "waffles" / "w.jpg")
    image(root / "NINCO_OOD_classes" / "pancakes" / "p.jpg")
    fails(
        tmp_path / "bad",
        "ninco",
        "--root",
        str(root),
        names="'pancakes' is not a NINCO class folder",
    )
    fails(
        tmp_path / "bad",
        "ninco",
        "--root",
        str(root / "NINCO_OOD_classes"),
        names="no NINCO_OOD_classes/ folder",
    )


def test_unlabelled_folder_is_one_class(tmp_path, run, fails):
    image(tmp_path / "imgs" / "a.png", seed=1)
    image(tmp_path / "imgs" / "deep" / "b.jpg", seed=2)
    (tmp_path / "imgs" / ".hidden").mkdir()
    image(tmp_path / "imgs" / ".hidden" / "c.png", seed=3)
    data = run(tmp_path / "out", "unlabelled-folder", "--root", str(tmp_path / "imgs"))
    assert data.classes == ["unlabelled"]
    assert [(e["path"], e["label"]) for e in data.images] == [("a.png", 0), ("deep/b.jpg", 0)]
    (tmp_path / "empty").mkdir()
    fails(
        tmp_path / "bad", "unlabelled-folder", "--root", str(tmp_path / "empty"), names="no images"
    )


def test_typographic_folder(tmp_path, run, fails):
    root = tmp_path / "typo"
    image(root / "label=dog_text=cat.png", seed=1)
    image(root / "sub" / "label=tennis_ball_text=dog.jpg", seed=2)
    image(root / "label=cat_text=cat.png", seed=3)
    (root / "README.txt").write_text("not an image")
    data = run(tmp_path / "out", "typographic-folder", "--root", str(root))
    assert data.classes == ["cat", "dog", "tennis ball"]
    got = {e["path"]: (data.classes[e["label"]], data.classes[e["written"]]) for e in data.images}
    assert got == {
        "label=dog_text=cat.png": ("dog", "cat"),
        "sub/label=tennis_ball_text=dog.jpg": ("tennis ball", "dog"),
        "label=cat_text=cat.png": ("cat", "cat"),
    }
    image(root / "photo.png")
    fails(
        tmp_path / "bad",
        "typographic-folder",
        "--root",
        str(root),
        names="photo.png is not named label=<class>_text=<written>",
    )


# ------------------------------------------------------------------ CIFAR through a local server


@pytest.fixture
def http_folder(tmp_path, monkeypatch):
    """A 127.0.0.1 HTTP server over a temp folder (no proxy in between)."""
    folder = tmp_path / "www"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    yield folder, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest()


def serve_cifar(monkeypatch, http_folder, hundred: bool) -> np.ndarray:
    """A tiny archive in CIFAR's python format, served locally; the torchvision class pointed at
    it."""
    from torchvision.datasets import CIFAR10, CIFAR100

    cls = CIFAR100 if hundred else CIFAR10
    folder, url = http_folder
    pixels = np.random.default_rng(0).integers(0, 256, (6, 3072), dtype=np.uint8)
    labels = [2, 0, 1, 2, 0, 1]
    if hundred:
        batch = {"data": pixels, "fine_labels": labels, "coarse_labels": [1, 0, 1, 1, 0, 1]}
        meta = {
            "fine_label_names": ["apple", "aquarium_fish", "maple_tree"],
            "coarse_label_names": ["fruit", "trees_and_fish"],
        }
        files = {"train": batch, "test": batch, "meta": meta}
    else:
        batch = {"data": pixels, "labels": labels}
        files = {
            "data_batch_1": batch,
            "test_batch": batch,
            "batches.meta": {"label_names": ["airplane", "automobile", "bird"]},
        }
    staging = folder.parent / "staging" / cls.base_folder
    staging.mkdir(parents=True)
    for name, content in files.items():
        (staging / name).write_bytes(pickle.dumps(content))
    archive = folder / cls.filename
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(staging, arcname=cls.base_folder)
    train, test, meta_name = list(files)
    monkeypatch.setattr(cls, "url", f"{url}/{cls.filename}")
    monkeypatch.setattr(cls, "tgz_md5", md5(archive))
    monkeypatch.setattr(cls, "train_list", [[train, md5(staging / train)]])
    monkeypatch.setattr(cls, "test_list", [[test, md5(staging / test)]])
    monkeypatch.setattr(
        cls,
        "meta",
        {"filename": meta_name, "key": list(files[meta_name])[0], "md5": md5(staging / meta_name)},
    )
    return pixels.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)


@pytest.mark.parametrize("kind", ["cifar10", "cifar100"])
def test_cifar_downloads_once_and_writes_pngs(tmp_path, run, monkeypatch, http_folder, kind):
    pixels = serve_cifar(monkeypatch, http_folder, hundred=kind == "cifar100")
    out = tmp_path / "out"
    data = run(out, kind, "--root", str(tmp_path / "cache"))
    assert [(e["path"], e["label"]) for e in data.images][:3] == [
        ("00001.png", 0),
        ("00004.png", 0),
        ("00002.png", 1),
    ]
    for entry in data.images:
        assert np.array_equal(
            np.asarray(Image.open(out / "images" / entry["path"])), pixels[entry["index"]]
        )
    if kind == "cifar100":
        assert data.classes == ["apple", "aquarium fish", "maple tree"] and data.superclasses == [
            "fruit",
            "trees and fish",
            "trees and fish",
        ]
    else:
        assert data.classes == ["airplane", "automobile", "bird"] and data.superclasses is None
    assert data.root == str(out / "images")
    (http_folder[0] / Path(data.source["url"]).name).unlink()  # cached: no second download
    again = run(tmp_path / "again", kind, "--root", str(tmp_path / "cache"), "--max-per-class", "1")
    assert again.labels == [0, 1, 2]
    first = out / "images" / "00001.png"
    assert (
        tmp_path / "again" / "images" / "00001.png"
    ).read_bytes() == first.read_bytes()  # deterministic PNG bytes


def test_cifar_download_failure_is_clean(tmp_path, fails, monkeypatch, http_folder):
    from torchvision.datasets import CIFAR10

    monkeypatch.setattr(CIFAR10, "url", f"{http_folder[1]}/missing.tar.gz")
    fails(tmp_path / "out", "cifar10", "--root", str(tmp_path / "cache"), names="missing.tar.gz")


# ------------------------------------------------------------------ COCO objects, demo


def coco_json(tmp_path: Path) -> tuple[Path, Path]:
    images = tmp_path / "coco" / "images"
    image(images / "1.jpg", seed=1, size=(100, 80))
    image(images / "2.jpg", seed=2, size=(100, 80))
    cats = [
        {"id": 18, "name": "dog", "supercategory": "animal"},
        {"id": 3, "name": "car", "supercategory": "vehicle"},
        {"id": 17, "name": "cat", "supercategory": "animal"},
        {"id": 90, "name": "toothbrush", "supercategory": "indoor"},
    ]
    anns = [
        {"id": 7, "image_id": 1, "category_id": 18, "bbox": [10.5, 5.2, 40, 40], "iscrowd": 0},
        {"id": 3, "image_id": 2, "category_id": 18, "bbox": [0, 0, 50, 32], "iscrowd": 0},
        {"id": 4, "image_id": 1, "category_id": 3, "bbox": [60, 40, 39, 39], "iscrowd": 0},
        {
            "id": 5,
            "image_id": 1,
            "category_id": 17,
            "bbox": [0, 0, 90, 70],
            "iscrowd": 1,
        },  # crowd: skipped
        {
            "id": 6,
            "image_id": 2,
            "category_id": 17,
            "bbox": [0, 0, 31, 60],
            "iscrowd": 0,
        },  # too narrow
        {"id": 8, "image_id": 2, "category_id": 17, "bbox": [20, 20, 32, 40], "iscrowd": 0},
    ]
    path = tmp_path / "coco" / "instances.json"
    path.write_text(
        json.dumps(
            {
                "images": [{"id": 1, "file_name": "1.jpg"}, {"id": 2, "file_name": "2.jpg"}],
                "annotations": anns,
                "categories": cats,
            }
        )
    )
    return images, path


def test_coco_objects_crops(tmp_path, run):
    images, annotations = coco_json(tmp_path)
    out = tmp_path / "out"
    data = run(
        out,
        "coco-objects",
        "--root",
        str(images),
        "--annotations",
        str(annotations),
        "--min-size",
        "32",
    )
    assert (
        data.classes == ["car", "cat", "dog"]
        and data.class_ids == ["3", "17", "18"]
        and data.superclasses == ["vehicle", "animal", "animal"]
    )
    assert [(e["path"], e["label"]) for e in data.images] == [
        ("1_4.png", 0),
        ("2_8.png", 1),
        ("2_3.png", 2),
        ("1_7.png", 2),
    ]
    crop = np.asarray(Image.open(out / "images" / "1_7.png"))
    assert crop.shape == (41, 41, 3)  # [10.5, 5.2, 40, 40] -> pixels 10..51 x 5..46
    source = np.asarray(Image.open(images / "1.jpg").convert("RGB"))
    assert np.array_equal(crop, source[5:46, 10:51])
    first = run(
        tmp_path / "first",
        "coco-objects",
        "--root",
        str(images),
        "--annotations",
        str(annotations),
        "--max-per-class",
        "1",
    )
    assert [e["annotation_id"] for e in first.images] == [4, 8, 3]
    supers = run(
        tmp_path / "super",
        "coco-objects",
        "--root",
        str(images),
        "--annotations",
        str(annotations),
        "--label",
        "supercategory",
    )
    assert supers.classes == ["vehicle", "animal"] and supers.labels == [0, 1, 1, 1]


def test_keep_and_drop_select_classes_by_name_id_or_superclass(tmp_path, run, fails):
    images, annotations = coco_json(tmp_path)
    flags = ("--root", str(images), "--annotations", str(annotations))
    animals = run(tmp_path / "animals", "coco-objects", *flags, "--keep", "animal")
    assert animals.classes == ["cat", "dog"] and animals.labels == [0, 1, 1]
    assert sorted(p.name for p in (tmp_path / "animals" / "images").iterdir()) == [
        "1_7.png",
        "2_3.png",
        "2_8.png",
    ]
    others = run(tmp_path / "others", "coco-objects", *flags, "--drop", "animal")
    assert (
        others.classes == ["car"] and others.labels == [0] and others.source["selected"]["of"] == 3
    )
    by_id = run(tmp_path / "by_id", "coco-objects", *flags, "--keep", "17,car", "--drop", "None")
    assert by_id.classes == ["car", "cat"]
    fails(
        tmp_path / "typo",
        "coco-objects",
        *flags,
        "--keep",
        "animl",
        names="--keep 'animl' is no class, class id or superclass",
    )
    fails(
        tmp_path / "none",
        "coco-objects",
        *flags,
        "--keep",
        "cat",
        "--drop",
        "animal",
        names="leave no class",
    )


def test_demo_objects_split_into_objects_and_scenes(tmp_path, run):
    objects = "astronaut,camera,cat,coin,cup of coffee,motorcycle,rocket"
    kept = run(tmp_path / "objects", "demo-objects", "--keep", objects)
    dropped = run(tmp_path / "scenes", "demo-objects", "--drop", objects)
    assert kept.classes == objects.split(",") and len(kept.images) == 42
    assert len(dropped.classes) == 7 and not set(kept.classes) & set(dropped.classes)
    assert len(list((tmp_path / "scenes" / "images").iterdir())) == 42


def test_an_ood_set_sharing_classes_is_refused_before_any_model_work(tmp_path, run, fails):
    """`--disjoint-from` (the OOD sets' stage names the in-distribution set): every shared class
    is named and nothing is written."""
    run(tmp_path / "objects", "demo-objects", "--keep", "astronaut,camera,cat,coin")
    kept = "camera,cat,coin,cup of coffee,rocket"
    err = fails(
        tmp_path / "ood",
        "demo-objects",
        "--keep",
        kept,
        "--disjoint-from",
        str(tmp_path / "objects"),
        names="shares 3 class(es)",
    )
    assert "camera, cat, coin; leave them out" in err
    ood = run(
        tmp_path / "ood",
        "demo-objects",
        "--drop",
        "astronaut,camera,cat,coin",
        "--disjoint-from",
        str(tmp_path / "objects"),
    )
    assert not {"astronaut", "camera", "cat", "coin"} & set(ood.classes)


@pytest.mark.slow
def test_coco_mini_crops(shared_data, run, tmp_path):
    coco = shared_data / "coco-mini"
    counts = {}
    for split in ("val", "train"):
        data = run(
            tmp_path / split,
            "coco-objects",
            "--root",
            str(coco / "images"),
            "--annotations",
            str(coco / "annotations" / f"instances_{split}2017.json"),
        )
        counts[split] = (len(data.images), len(data.classes))
        assert data.classes[0] == "person"
    assert counts == {"val": (339, 67), "train": (420, 71)}
    annotations = str(coco / "annotations" / "instances_val2017.json")
    animals = run(
        tmp_path / "animals",
        "coco-objects",
        "--root",
        str(coco / "images"),
        "--annotations",
        annotations,
        "--keep",
        "animal",
    )
    rest = run(
        tmp_path / "rest",
        "coco-objects",
        "--root",
        str(coco / "images"),
        "--annotations",
        annotations,
        "--drop",
        "animal",
    )
    assert set(animals.superclasses) == {"animal"} and "animal" not in rest.superclasses
    assert (
        len(animals.images) + len(rest.images) == 339
        and len(animals.classes) + len(rest.classes) == 67
    )


def test_demo_objects(tmp_path, run, fails):
    data = run(tmp_path / "demo", "demo-objects")
    assert len(data.classes) == 14 and len(data.images) == 84 and "cat" in data.classes
    cat = data.classes.index("cat")
    assert [e["path"] for e in data.images if e["label"] == cat][:2] == [
        "cat_0_full.png",
        "cat_1_centre.png",
    ]
    fails(tmp_path / "bad", "demo-objects", "--root", str(tmp_path), names="does not use --root")


def test_demo_train_objects_share_no_class_or_image_with_the_demo_objects(tmp_path, run):
    """FLYP's demo classes: the 8 training photos' views, apart from the test photos'."""
    from vlstress.io import sha256_file

    train = run(tmp_path / "train", "demo-train-objects")
    test = run(tmp_path / "test", "demo-objects")
    assert len(train.classes) == 8 and len(train.images) == 48
    assert "colour wheel" in train.classes and "stained tissue" in train.classes
    assert [train.labels.count(label) for label in range(8)] == [6] * 8
    assert not set(train.classes) & set(test.classes)
    hashes = {sha256_file(path) for path in test.image_paths()}
    assert not {sha256_file(path) for path in train.image_paths()} & hashes


def test_paths_stay_as_given(tmp_path, run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    image(Path("data/folders/a/1.png"))
    assert run(Path("sets/folder"), "imagefolder", "--root", "data/folders").root == "data/folders"
    images, annotations = coco_json(tmp_path)
    data = run(
        Path("sets/coco"),
        "coco-objects",
        "--root",
        str(images),
        "--annotations",
        str(annotations),
        "--max-per-class",
        "1",
    )
    assert data.root == "sets/coco/images" and all(
        (Path(data.root) / e["path"]).is_file() for e in data.images
    )
    assert data.provenance["step"] == "testset" and str(annotations) in data.provenance["inputs"]


# ------------------------------------------------------------------ bad input


def test_errors_name_the_item(tmp_path, fails):
    fails(
        tmp_path / "o1",
        "imagenet",
        "--root",
        str(tmp_path / "nowhere"),
        names=f"imagenet folder not found: {tmp_path / 'nowhere'}",
    )
    empty = tmp_path / "empty"
    image(empty / "a" / "1.png")
    (empty / "b").mkdir()
    fails(
        tmp_path / "o2",
        "imagefolder",
        "--root",
        str(empty),
        names="no valid file for the classes b",
    )
    corrupt = tmp_path / "corrupt"
    image(corrupt / "a" / "1.png")
    bad = image(corrupt / "a" / "2.jpg")
    bad.write_bytes(bad.read_bytes()[:60])
    fails(
        tmp_path / "o3",
        "imagefolder",
        "--root",
        str(corrupt),
        names=f"image is corrupt or unreadable: {bad}",
    )
    images, annotations = coco_json(tmp_path)
    annotations.write_text('{"images": [')
    fails(
        tmp_path / "o4",
        "coco-objects",
        "--root",
        str(images),
        "--annotations",
        str(annotations),
        names=f"not valid JSON: {annotations}",
    )
    annotations.write_text(
        json.dumps({"images": [], "annotations": [{"id": 1, "bbox": [0, 0]}], "categories": []})
    )
    fails(
        tmp_path / "o5",
        "coco-objects",
        "--root",
        str(images),
        "--annotations",
        str(annotations),
        names="annotations[0] lacks an 'id' or a 4-number 'bbox'",
    )
    fails(
        tmp_path / "o6",
        "imagenet-c",
        "--root",
        str(empty),
        names="no --corruption given; folders there: a, b",
    )
