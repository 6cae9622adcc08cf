"""Benchmark: this project's zero-shot cold path against CLIP_benchmark's zero-shot evaluation on
the same work (issue 26 #6, "Ahead of the peer, cold").

The work: the COCO object crops of `params.coco-mini.yaml`'s `objects` test set (built by
`vlstress testset` from ../shared/data/coco-mini, as the real-photos run builds it) classified
zero-shot with the templates of `zeroshot.templates` (simple: 7) by one random-init ViT-B-32
(open_clip, `pretrained=None`, seed 0: both sides create the very same weights, checked below
through their classifiers), fp32, 2 torch threads, batch 32, on the CPU. By default the crops are
labelled by COCO category with no class kept out (339 crops, 67 classes = 469 prompts: the
workload the issue measured); `--as-params` takes the entry as it is (supercategory, 8 classes).
Workload `x4` is the same list four times (1,356 images: every crop hard-linked 4 times).

For each workload, in one run (`--repeats` rounds, the order of the two sides alternating):

- (a) the peer cold: CLIP_benchmark 1.6.2 (`pip install --no-deps clip_benchmark==1.6.2`, in the
  venv only) in a fresh Python process, its own CLI (`clip_benchmark.cli.main`, `eval
  --task zeroshot_classification --no_amp`): imports, model creation, `zero_shot_classifier`,
  `run_classification` over a DataLoader of an ImageFolder, metrics, JSON. The dataset is its
  plain-ImageFolder branch (`imagenet_sketch`: `ImageFolder(root)`) with --custom_classname_file
  and --custom_template_file keyed by that name. Around the CLI, none of it changing the work: its
  cli imports the captioning metrics, which need pycocoevalcap (not installed; zero-shot
  classification never uses them), so an empty module stands in; its `accuracy` converts a
  1-element array with float(), which numpy 2 refuses, so the same function with `[0]` stands
  in; the classifier and logits are saved (.npy, milliseconds) for the agreement check;
- (b) this project's cold path: the three commands of the workflow's stages `zeroshot_classifiers`,
  `embed_zeroshot` and `evaluate_zeroshot`, rendered from dvc.yaml with the params (every flag as
  the workflow passes it: threads 2, batch 32, fp32, workers as `embed.workers` says), each in its
  own process, in a project folder whose params switch every suite but zero-shot off and whose
  reuse folder (`embed.cache_dir`/embeddings) is new and empty. The weight cache is kept between
  rounds, as a user's is: the random init is drawn in the first round and kept there
  (`vlstress.embedding.models.RANDOM_INIT`), as hub weights are downloaded once;
  `--empty-weight-cache` empties it before every cold run;
- (c) the warm path: the same commands again with other output paths and the same reuse folder:
  both embedding jobs must reuse their set;
- with `--before SRC`: (b) once more with the package of another source tree (PYTHONPATH=SRC),
  e.g. the last commit's, so that a change is measured against the peer and the code before it in
  the same rounds.

Phases: the peer's from marks its process prints (start-up = until the model is loaded, text =
`zero_shot_classifier`, images = `run_classification`, evaluation = metrics, JSON and exit); ours
from the job logs (start-up = until `loaded <model>`, text / images = the set's own "rows embedded
in" time, evaluation = the `evaluate-zeroshot` process, other = hashing, provenance, writing and
exit). Wall seconds and the children's CPU seconds (wait4) are both recorded: on shared cores the
wall time of either side moves with the other processes.

Math kernels (`--kernels`): this project's steps cap torch's kernels at AVX2 so that an AVX-512
machine writes the same bits as an AVX2 one (vlstress.cpu_kernels); the peer does not. `same`
(default) gives the peer the same caps, so both sides run the same kernels on the same work;
`defaults` runs each side as it ships; `uncapped` lifts ours too. On an AVX2-only CPU the three
are the same run.

Top-1 agreement: each side's prediction for every image (the peer's logits; ours from the image
embeddings and classifier the jobs wrote), matched by file, with the classifiers' largest
difference.

Writes benchmarks/results/bench_peer[-TAG].json and .md and prints the tables.

    python benchmarks/bench_peer.py                      # x1 and x4, one round
    python benchmarks/bench_peer.py --workloads x1 --repeats 3 --tag x1
    git archive HEAD src | tar -x -C /tmp/head           # the code before a change
    python benchmarks/bench_peer.py --before /tmp/head/src --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DATA = ROOT.parent / "shared" / "data" / "coco-mini"
PEER = "clip_benchmark"
PEER_VERSION = "1.6.2"
PEER_DATASET = "imagenet_sketch"  # CLIP_benchmark's branch that is `ImageFolder(root)` and no more
MODEL = "vit-b-32-random"
# the benchmark's own model entry (the workload), not one of params.yaml's: the demo's
# models change; the peer's side below names the same architecture
ARCH = "ViT-B-32"
MODEL_ENTRY = {"arch": ARCH, "pretrained": None}
TESTSET = "objects"
STAGES = ("zeroshot_classifiers", "embed_zeroshot", "evaluate_zeroshot")
WARM = {
    "results/embeddings/": "results/warm/embeddings/",
    "results/metrics/": "results/warm/metrics/",
}

# The peer's process: its own CLI, with marks on stderr (read by the parent as they arrive).
RUNNER = r"""
import importlib.util, json, os, sys, time, types
T0 = time.perf_counter()
OUT = os.environ["BENCH_PEER_OUT"]

def mark(name, **extra):
    print("BENCH_PEER " + json.dumps({"mark": name, **extra}), file=sys.stderr, flush=True)

if importlib.util.find_spec("pycocoevalcap") is None:
    # cli.py imports the captioning metrics (pycocoevalcap), which zero-shot never uses
    import clip_benchmark.metrics
    stub = types.ModuleType("clip_benchmark.metrics.captioning")
    sys.modules[stub.__name__] = stub
    clip_benchmark.metrics.captioning = stub
from clip_benchmark import cli
from clip_benchmark.metrics import zeroshot_classification as zc
import numpy as np
mark("imported")

load_clip, classifier_of, classify = cli.load_clip, zc.zero_shot_classifier, zc.run_classification

def accuracy(output, target, topk=(1,)):
    # 1.6.2's own, but for `[0]`: numpy 2 refuses float() of its 1-element array (TypeError)
    pred = output.topk(max(topk), 1, True, True)[1].t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    n = len(target)
    return [float(correct[:k].reshape(-1).float().sum(0, keepdim=True).cpu().numpy()[0]) / n
            for k in topk]

zc.accuracy = accuracy

def timed_load_clip(*args, **kwargs):
    out = load_clip(*args, **kwargs)
    mark("model")
    return out

def timed_classifier(*args, **kwargs):
    start = time.perf_counter()
    weights = classifier_of(*args, **kwargs)
    mark("text", seconds=time.perf_counter() - start, prompts=len(args[2]) * len(args[3]))
    np.save(os.path.join(OUT, "classifier.npy"), weights.float().cpu().numpy().T)
    return weights

def timed_classify(model, classifier, dataloader, device, amp=True):
    start = time.perf_counter()
    logits, target = classify(model, classifier, dataloader, device, amp=amp)
    mark("images", seconds=time.perf_counter() - start, n=len(target))
    np.save(os.path.join(OUT, "logits.npy"), logits.numpy())
    with open(os.path.join(OUT, "samples.json"), "w") as f:
        json.dump([path for path, _ in dataloader.dataset.samples], f)
    return logits, target

cli.load_clip, zc.zero_shot_classifier, zc.run_classification = (
    timed_load_clip, timed_classifier, timed_classify
)
sys.argv = ["clip_benchmark", *sys.argv[1:]]
code = cli.main()
mark("done")
sys.exit(code)
"""

LOADED = re.compile(r"vlstress\.embedding\.models: loaded ")
EMBEDDED = re.compile(r"\((?P<kind>[\w-]+)\): (?P<rows>\d+) rows embedded in (?P<s>[0-9.]+) s")
SUMMARY = re.compile(r": (?P<embedded>\d+) set\(s\) embedded, (?P<reused>\d+) reused")


# ------------------------------------------------------------------------------------ the work


def vlstress() -> str:
    found = Path(sys.executable).with_name("vlstress")
    return str(found) if found.exists() else "vlstress"


def testset_entry(args: argparse.Namespace) -> dict[str, Any]:
    """The `objects` entry of params.coco-mini.yaml, its paths on this machine; unless
    --as-params, labelled by category with every class kept (the issue's 339 crops)."""
    merged = yaml.safe_load((ROOT / "params.coco-mini.yaml").read_text())
    entry = dict(merged["zeroshot"]["testsets"][TESTSET])
    for key in ("root", "annotations"):
        entry[key] = entry[key].replace("../shared/data/coco-mini", str(args.data))
    if not args.as_params:
        entry.update(label="category", keep=None, drop=None)
    return entry


def build_testset(entry: dict[str, Any], out: Path) -> dict[str, Any]:
    """`vlstress testset` on the entry, as the workflow's `testset` stage runs it."""
    flags = ["--name", TESTSET, "--kind", entry["kind"], "--out", str(out)]
    for key in (
        "root",
        "annotations",
        "classnames",
        "max_per_class",
        "min_size",
        "label",
        "corruption",
        "keep",
        "drop",
    ):
        flags += [f"--{key.replace('_', '-')}", str(entry[key])]
    subprocess.run([vlstress(), "testset", *flags], check=True, capture_output=True, text=True)
    return json.loads((out / "manifest.json").read_text())


def workload(base: dict[str, Any], folder: Path, copies: int) -> tuple[Path, dict[str, Any]]:
    """The list `copies` times: every crop hard-linked `copies` times into a class-per-folder tree
    (folders in label order: the peer's ImageFolder labels are ours), and our manifest of the same
    files, the list repeated."""
    root = folder / "images"
    images = []
    for copy in range(copies):
        for entry in base["images"]:
            source = Path(base["root"]) / entry["path"]
            path = f"c{entry['label']:03d}/r{copy}_{Path(entry['path']).name}"
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                try:
                    os.link(source, target)
                except OSError:
                    shutil.copyfile(source, target)
            images.append({**entry, "path": path})
    manifest = {**base, "root": str(root), "images": images}
    return root, manifest


def project(folder: Path, manifest: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """A project folder for the workflow's commands: params (zero-shot the only suite, one
    model), the test set, the model card. Returns the params."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["suites"] = {name: name == "zeroshot" for name in params["suites"]}
    params["models"] = {MODEL: dict(MODEL_ENTRY)}
    params["zeroshot"]["testsets"] = {TESTSET: entry}
    (folder / "data" / "testsets" / TESTSET).mkdir(parents=True, exist_ok=True)
    (folder / "data" / "testsets" / TESTSET / "manifest.json").write_text(json.dumps(manifest))
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    card = command("model_card", params)
    subprocess.run(card, cwd=folder, check=True, capture_output=True, text=True)
    return params


def lookup(params: dict[str, Any], dotted: str) -> Any:
    value: Any = params
    for part in dotted.split("."):
        value = value[part]
    return value


_RENDERED: dict[str, dict[str, Any]] = {}


def rendered_stages(params: dict[str, Any]) -> dict[str, Any]:
    """The stages of the dvc.yaml these params render to (cached per params)."""
    from vlstress.pipeline import dvc

    key = json.dumps(params, sort_keys=True, default=str)
    if key not in _RENDERED:
        _RENDERED[key] = yaml.safe_load(dvc.render(params))["stages"]
    return _RENDERED[key]


def command(stage: str, params: dict[str, Any]) -> list[str]:
    """A stage's command as dvc.yaml renders it for MODEL and TESTSET (null -> None, as DVC):
    the dvc.yaml of these params (`vlstress pipeline render`'s text; not the checkout's, which
    holds the demo's models), the stage's `foreach` item or its plain stage for the model."""
    stages = rendered_stages(params)
    declared = stages.get(f"{stage}-{re.sub(r'[^A-Za-z0-9_-]', '_', MODEL)}") or stages[stage]
    template = declared.get("do", declared)["cmd"]
    local = {"key": MODEL, "item.model": MODEL, "item.testset": TESTSET}
    items = declared.get("foreach")
    if isinstance(items, dict) and isinstance(items.get(MODEL), dict):
        local.update({f"item.{k}": v for k, v in items[MODEL].items()})

    def value(match: re.Match) -> str:
        name = match.group(1)
        found = local[name] if name in local else lookup(params, name)
        return "None" if found is None else str(found)

    argv = shlex.split(re.sub(r"\$\{([^}]+)\}", value, template))
    return [vlstress(), *argv[1:]] if argv[0] == "vlstress" else argv


def peer_inputs(folder: Path, classes: list[str], templates: list[str]) -> tuple[Path, Path]:
    classnames, prompts = folder / "classnames.json", folder / "templates.json"
    classnames.write_text(json.dumps({PEER_DATASET: classes}))
    prompts.write_text(json.dumps({PEER_DATASET: templates}))
    return classnames, prompts


# ------------------------------------------------------------------------------------ running


def environment(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
    return env


def avx512() -> bool:
    """Whether this CPU has AVX-512 (Linux: /proc/cpuinfo's flags)."""
    try:
        return " avx512f " in Path("/proc/cpuinfo").read_text().replace("\n", " ")
    except OSError:
        return False


def cpu_name() -> str:
    for line in (
        Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").is_file() else []
    ):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def kernel_env(kernels: str, side: str) -> dict[str, str]:
    """The math-kernel variables of one side (vlstress.cpu_kernels).

    `same`: both sides capped at AVX2 as this project's steps are (the peer gets the project's
    caps): the same kernels, the same work. `defaults`: each side as it ships (ours capped, the
    peer picking the CPU's best kernels: on an AVX-512 CPU the peer's GEMMs are faster).
    `uncapped`: both on the CPU's best kernels (ours with the caps lifted, as a user who trades
    cross-machine bits for speed sets them)."""
    from vlstress.cpu_kernels import CAPS

    torch_caps = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "DNNL_MAX_CPU_ISA")
    if kernels == "same" and side == "peer":
        return {name: CAPS[name] for name in torch_caps}
    if kernels == "uncapped" and side != "peer":
        best = "avx512" if avx512() else "avx2"
        return {"ATEN_CPU_CAPABILITY": best, "MKL_CBWR": "AUTO", "DNNL_MAX_CPU_ISA": "ALL"}
    return {}


def run(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> dict[str, Any]:
    """Run one process; its output lines with the seconds since its start, wall and CPU
    seconds."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:  # text mode: tqdm's \r updates are lines too
        lines.append((time.perf_counter() - start, line.rstrip("\n")))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"{t:8.2f} {text}\n" for t, text in lines))
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} ... failed ({proc.returncode}); log: {log}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "load_1min_before": load,
        "lines": lines,
    }


def peer_marks(lines: list[tuple[float, str]]) -> dict[str, dict[str, Any]]:
    marks = {}
    for t, text in lines:
        if text.startswith("BENCH_PEER "):
            mark = json.loads(text.removeprefix("BENCH_PEER "))
            marks[mark.pop("mark")] = {"t": t, **mark}
    return marks


def run_peer(
    folder: Path, root: Path, names: tuple[Path, Path], args: argparse.Namespace, tag: str
) -> dict[str, Any]:
    out = folder / "peer" / tag
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    argv = [
        sys.executable,
        "-c",
        RUNNER,
        "eval",
        "--dataset",
        PEER_DATASET,
        "--dataset_root",
        str(root),
        "--task",
        "zeroshot_classification",
        "--model",
        ARCH,
        "--pretrained",
        "",  # no weights: open_clip's random init after torch.manual_seed(--seed)
        "--seed",
        "0",
        "--batch_size",
        str(args.batch_size),
        "--num_workers",
        str(args.peer_workers),
        "--no_amp",
        "--custom_classname_file",
        str(names[0]),
        "--custom_template_file",
        str(names[1]),
        "--output",
        str(out / "metrics.json"),
    ]
    env = {
        **environment(args.threads),
        **kernel_env(args.kernels, "peer"),
        "BENCH_PEER_OUT": str(out),
    }
    done = run(argv, folder, env, out / "log.txt")
    marks = peer_marks(done.pop("lines"))
    wall = done["wall_s"]
    phases = {
        "start-up": marks["model"]["t"],
        "text": marks["text"]["seconds"],
        "images": marks["images"]["seconds"],
        "evaluation": wall - marks["images"]["t"],
    }
    phases["other"] = wall - sum(phases.values())
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    return {
        **done,
        "phases": phases,
        "imports_s": marks["imported"]["t"],
        "prompts": marks["text"]["prompts"],
        "images": marks["images"]["n"],
        "top1": 100.0 * metrics["acc1"],
        "out": str(out),
    }


def job_phases(lines: list[tuple[float, str]]) -> dict[str, Any]:
    loaded = next((t for t, text in lines if LOADED.search(text)), None)
    sets = [
        {"kind": m["kind"], "rows": int(m["rows"]), "s": float(m["s"])}
        for _, text in lines
        if (m := EMBEDDED.search(text))
    ]
    summary = next((m for _, text in lines if (m := SUMMARY.search(text))), None)
    return {
        "start-up": loaded,
        "sets": sets,
        "embedded": int(summary["embedded"]) if summary else None,
        "reused": int(summary["reused"]) if summary else None,
    }


def run_ours(
    folder: Path,
    params: dict[str, Any],
    args: argparse.Namespace,
    side: str,
    source: Path | None = None,
) -> dict:
    """The three commands (side `*_warm`: into results/warm, the reuse folder as it is); with
    `source`, the package of that source tree (another version of this project) runs them."""
    env = {**environment(args.threads), **kernel_env(args.kernels, side)}
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    warm = side.endswith("_warm")
    jobs = {}
    for stage in STAGES:
        argv = command(stage, params)
        if warm:
            argv = [_warm(arg) for arg in argv]
        done = run(argv, folder, env, folder / "logs" / side / stage)
        done.update(job_phases(done.pop("lines")))
        jobs[stage] = done
    digests = snapshot(folder, folder / "snapshots" / side) if not warm else None
    clf, img, ev = (jobs[stage] for stage in STAGES)
    text = sum(s["s"] for s in clf["sets"])
    images = sum(s["s"] for s in img["sets"])
    wall = sum(job["wall_s"] for job in jobs.values())
    phases = {
        "start-up": (clf["start-up"] or 0.0) + (img["start-up"] or 0.0),
        "text": text,
        "images": images,
        "evaluation": ev["wall_s"],
    }
    phases["other"] = wall - sum(phases.values())
    return {
        "wall_s": wall,
        "cpu_s": sum(job["cpu_s"] for job in jobs.values()),
        "phases": phases,
        "jobs": jobs,
        "sha256": digests,
    }


def _warm(arg: str) -> str:
    for cold, warm in WARM.items():
        arg = arg.replace(cold, warm)
    return arg


def snapshot(folder: Path, out: Path) -> dict[str, str]:
    """The classifier, image embeddings and record of a cold run, kept for the agreement check;
    the sha256 of the two arrays (every round must write the same bytes)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    base = folder / "results" / "embeddings" / MODEL
    shutil.copyfile(base / "classifiers" / f"{TESTSET}.npy", out / "classifier.npy")
    shutil.copyfile(base / "zeroshot" / "testsets" / f"{TESTSET}.npy", out / "images.npy")
    record = folder / "results" / "metrics" / MODEL / f"zeroshot-{TESTSET}.json"
    shutil.copyfile(record, out / "record.json")
    return {
        name: hashlib.sha256((out / f"{name}.npy").read_bytes()).hexdigest()
        for name in ("classifier", "images")
    }


def clean(folder: Path, params: dict[str, Any], weights: bool) -> None:
    """Nothing to reuse: no outputs, an empty reuse folder; `weights`: no kept random init
    either (the weight cache as before the first run)."""
    cache = folder / params["embed"]["cache_dir"]
    for name in ("embeddings", "metrics", "warm"):
        shutil.rmtree(folder / "results" / name, ignore_errors=True)
    shutil.rmtree(cache / "embeddings", ignore_errors=True)
    if weights:
        shutil.rmtree(cache / "random-init", ignore_errors=True)


# ------------------------------------------------------------------------------------ checks


def agreement(kept: Path, manifest: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any]:
    """Per-image top-1 of a cold run (its `snapshot`) and the peer, matched by file; the
    classifiers' largest difference."""
    images = np.load(kept / "images.npy")
    classifier = np.load(kept / "classifier.npy")
    ours = images @ classifier.T
    by_path = dict(zip((str(Path(manifest["root"]) / e["path"]) for e in manifest["images"]), ours))
    out = Path(peer["out"])
    theirs = np.load(out / "logits.npy")
    samples = json.loads((out / "samples.json").read_text())
    peer_classifier = np.load(out / "classifier.npy")
    agree, margins = 0, []
    for path, logits in zip(samples, theirs):
        mine = by_path[path]
        if int(np.argmax(mine)) == int(np.argmax(logits)):
            agree += 1
        else:
            top = np.sort(logits / 100.0)[-2:]
            margins.append(float(top[1] - top[0]))
    record = json.loads((kept / "record.json").read_text())
    cosines = np.sum(classifier * peer_classifier, axis=1)
    return {
        "images": len(samples),
        "agree": agree,
        "share": agree / len(samples),
        "disagreeing_peer_top2_margin_max": max(margins) if margins else None,
        "top1_peer": peer["top1"],
        "top1_ours": record["metrics"]["top1"],
        "classifier_max_abs_diff": float(np.abs(classifier - peer_classifier).max()),
        "classifier_min_cosine": float(cosines.min()),
    }


# ------------------------------------------------------------------------------------ report


def summary(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    walls = [r[key]["wall_s"] for r in runs]
    cpus = [r[key]["cpu_s"] for r in runs]
    phases = {
        name: round(statistics.median(r[key]["phases"][name] for r in runs), 2)
        for name in runs[0][key]["phases"]
    }
    return {
        "wall_s": round(statistics.median(walls), 2),
        "wall_s_all": [round(w, 2) for w in walls],
        "cpu_s": round(statistics.median(cpus), 2),
        "phases": phases,
    }


def ratio(peer: dict[str, Any], ours: dict[str, Any] | None) -> str:
    return f"{peer['wall_s'] / ours['wall_s']:.2f}x" if ours else "-"


SIDES = {
    "peer": "CLIP_benchmark",
    "before_cold": "ours before, cold",
    "ours_cold": "ours, cold",
    "ours_warm": "ours, warm",
}


def markdown(result: dict[str, Any]) -> str:
    before = any("before_cold" in w for w in result["workloads"])
    head = ["workload", "images", "prompts", "peer s"]
    head += ["ours before s", "ratio before"] if before else []
    head += ["ours cold s", "speed ratio (peer / ours)", "ours warm s", "warm ratio"]
    head += ["peer CPU s"] + (["before CPU s"] if before else []) + ["ours cold CPU s"]
    lines = [
        f"## {result['model']} on {result['testset']['images']} COCO object crops "
        f"({', '.join(w['name'] for w in result['workloads'])}): {result['peer']} against this "
        f"project (fp32, {result['threads']} threads, batch {result['batch_size']}, "
        f"{result['cores']} cores, {result['cpu']}, kernels {result.get('kernels', 'defaults')}; "
        f"medians of {result['repeats']} round(s))",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for w in result["workloads"]:
        peer, cold, warm = w["peer"], w["ours_cold"], w.get("ours_warm")
        row = [w["name"], w["images"], w["prompts"], peer["wall_s"]]
        if before:
            row += [w["before_cold"]["wall_s"], ratio(peer, w["before_cold"])]
        row += [cold["wall_s"], ratio(peer, cold), warm["wall_s"] if warm else "-"]
        row += [ratio(peer, warm), peer["cpu_s"]]
        row += [w["before_cold"]["cpu_s"]] if before else []
        row += [cold["cpu_s"]]
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    lines += ["", "Per phase (s, median of the rounds):", ""]
    names = list(result["workloads"][0]["peer"]["phases"])
    lines.append("| workload | side | " + " | ".join(names) + " | total |")
    lines.append("|---|---|" + "---:|" * (len(names) + 1))
    for w in result["workloads"]:
        for side, label in SIDES.items():
            if side not in w:
                continue
            p = w[side]["phases"]
            lines.append(
                f"| {w['name']} | {label} | "
                + " | ".join(f"{p[n]:.1f}" for n in names)
                + f" | {w[side]['wall_s']} |"
            )
    lines += ["", "Top-1 against the peer (same weights; per image, matched by file):", ""]
    for w in result["workloads"]:
        for side, a in w["agreement"].items():
            margin = a["disagreeing_peer_top2_margin_max"]
            lines.append(
                f"- {w['name']}, {SIDES[side]}: the same prediction for {a['agree']}/{a['images']} "
                f"images ({a['share']:.1%}); top-1 peer {a['top1_peer']:.2f}%, ours "
                f"{a['top1_ours']:.2f}%; classifiers differ by at most "
                f"{a['classifier_max_abs_diff']:.1e}"
                + (
                    f"; the disagreeing images' top-2 margins (peer) are at most {margin:.1e}"
                    if margin is not None
                    else ""
                )
            )
    lines += [
        "",
        "The same bytes in every round (classifier, image embeddings): "
        + "; ".join(
            f"{w['name']} {SIDES[side]}: {'yes' if same else 'NO'}"
            for w in result["workloads"]
            for side, same in w["same_bytes_every_round"].items()
        ),
    ]
    if any("warm_reused" in w for w in result["workloads"]):
        lines += [
            "",
            "Warm path: sets reused by the classifier and image jobs: "
            + "; ".join(
                f"{w['name']} {'/'.join(str(n) for n in w['warm_reused'].values())}"
                for w in result["workloads"]
                if "warm_reused" in w
            ),
        ]
    return "\n".join(lines)


def workload_result(
    name: str,
    manifest: dict[str, Any],
    folder: Path,
    rounds: list[dict[str, Any]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Medians over the rounds, the agreement of the last round, whether every round wrote the
    same bytes, what the warm path reused."""
    last = rounds[-1]
    cold_sides = ["ours_cold"] + (["before_cold"] if args.before else [])
    found = {
        "name": name,
        "images": len(manifest["images"]),
        "prompts": last["peer"]["prompts"],
        **{side: summary(rounds, side) for side in ["peer", *cold_sides]},
        "agreement": {
            side: agreement(folder / "snapshots" / side, manifest, last["peer"])
            for side in cold_sides
        },
        "same_bytes_every_round": {
            side: len({json.dumps(r[side]["sha256"]) for r in rounds}) == 1 for side in cold_sides
        },
        "rounds": rounds,
    }
    if not args.no_warm:
        found["ours_warm"] = summary(rounds, "ours_warm")
        found["warm_reused"] = {
            stage: last["ours_warm"]["jobs"][stage].get("reused") for stage in STAGES[:2]
        }
    return found


def write(result: dict[str, Any], out: Path, partial: bool) -> None:
    """The JSON and the Markdown; after every round too (`partial`), so that a run cut short
    keeps the rounds it finished."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        **result,
        "partial": partial,
        "rounds_done": [len(w["rounds"]) for w in result["workloads"]],
    }
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
    tmp.replace(out)
    out.with_suffix(".md").write_text(markdown(result) + "\n")


def skip(reason: str) -> int:
    print(f"bench_peer: skipped: {reason}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the coco-mini folder")
    parser.add_argument("--workloads", default="x1,x4", help="comma list of xN (the list N times)")
    parser.add_argument("--repeats", type=int, default=1, help="rounds (medians reported)")
    parser.add_argument(
        "--as-params",
        action="store_true",
        help="the objects entry as params.coco-mini.yaml has it (supercategories)",
    )
    parser.add_argument("--threads", type=int, default=2, help="must match embed.threads")
    parser.add_argument("--batch-size", type=int, default=32, help="must match embed.batch_size")
    parser.add_argument(
        "--peer-workers",
        type=int,
        default=None,
        help="the peer's --num_workers (default: what ours resolves embed.workers to)",
    )
    parser.add_argument("--no-warm", action="store_true", help="skip the warm path")
    parser.add_argument(
        "--empty-weight-cache",
        action="store_true",
        help="empty the weight cache too before each cold run (default: kept, as downloaded hub "
        "weights are: the random init is drawn in the first round and kept for the next)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a source folder of another version of this project (its src/): its cold path runs "
        "too, in the same rounds (e.g. `git archive HEAD src | tar -x -C /tmp/head`)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="kept (default: a temp folder)")
    parser.add_argument(
        "--kernels",
        choices=("same", "defaults", "uncapped"),
        default="same",
        help="math kernels: same = both capped at AVX2 as the project's steps are; defaults = "
        "each side as it ships (ours capped, the peer not); uncapped = both on the CPU's best",
    )
    parser.add_argument("--tag", default="", help="results file suffix")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the JSON (the .md beside it; default: benchmarks/results/bench_peer[-TAG].json)",
    )
    args = parser.parse_args(argv)

    if not (args.data / "annotations" / "instances_val2017.json").is_file():
        return skip(f"{args.data} (../shared/data/coco-mini) is not here")
    try:
        from importlib.metadata import version

        found = version(PEER)
    except Exception:  # noqa: BLE001
        found = None
    if found != PEER_VERSION:
        return skip(
            f"{PEER} {PEER_VERSION} is not installed ({found}): "
            f"pip install --no-deps {PEER}=={PEER_VERSION}"
        )
    params_yaml = yaml.safe_load((ROOT / "params.yaml").read_text())
    if (params_yaml["embed"]["threads"], params_yaml["embed"]["batch_size"]) != (
        args.threads,
        args.batch_size,
    ):
        raise SystemExit(
            "--threads / --batch-size must be params.yaml's embed.threads / batch_size"
        )
    cores = len(os.sched_getaffinity(0))
    if args.peer_workers is None:  # vlstress.embedding.image_batches.default_workers on the CPU
        workers = params_yaml["embed"]["workers"]
        args.peer_workers = min(max(cores - args.threads, 0), 8) if workers is None else workers

    from vlstress.suites.zeroshot.templates import resolve

    templates, _ = resolve(params_yaml["zeroshot"]["templates"])
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench_peer-"))
    workdir.mkdir(parents=True, exist_ok=True)
    entry = testset_entry(args)
    base = build_testset(entry, workdir / "testset")
    print(f"test set: {len(base['images'])} crops, {len(base['classes'])} classes", flush=True)
    names = peer_inputs(workdir, base["classes"], templates)
    result: dict[str, Any] = {
        "model": MODEL,
        "peer": f"{PEER} {PEER_VERSION}",
        "testset": {
            "entry": entry,
            "images": len(base["images"]),
            "classes": len(base["classes"]),
            "templates": params_yaml["zeroshot"]["templates"],
        },
        "threads": args.threads,
        "batch_size": args.batch_size,
        "workers": args.peer_workers,
        "cores": cores,
        "cpu": cpu_name(),
        "avx512": avx512(),
        "kernels": args.kernels,
        "kernel_env": {side: kernel_env(args.kernels, side) for side in ("peer", "ours")},
        "repeats": args.repeats,
        "empty_weight_cache": args.empty_weight_cache,
        "workloads": [],
    }
    out = args.out or RESULTS / f"bench_peer{'-' + args.tag if args.tag else ''}.json"
    try:
        for name in args.workloads.split(","):
            copies = int(name.removeprefix("x"))
            folder = workdir / name
            root, manifest = workload(base, folder, copies)
            params = project(folder, manifest, entry)
            rounds = []
            sides = ["peer", "ours"] + (["before"] if args.before else [])
            for repeat in range(args.repeats):
                one: dict[str, Any] = {}
                turn = repeat % len(sides)
                for side in sides[turn:] + sides[:turn]:
                    print(f"{name} round {repeat + 1}: {side}", flush=True)
                    if side == "peer":
                        one["peer"] = run_peer(folder, root, names, args, f"r{repeat}")
                    elif side == "before":
                        clean(folder, params, args.empty_weight_cache)
                        one["before_cold"] = run_ours(
                            folder, params, args, "before_cold", args.before
                        )
                    else:
                        clean(folder, params, args.empty_weight_cache)
                        one["ours_cold"] = run_ours(folder, params, args, "ours_cold")
                        if not args.no_warm:
                            one["ours_warm"] = run_ours(folder, params, args, "ours_warm")
                rounds.append(one)
                done = workload_result(name, manifest, folder, rounds, args)
                write({**result, "workloads": [*result["workloads"], done]}, out, partial=True)
            result["workloads"].append(done)
            print(markdown(result), flush=True)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    write(result, out, partial=False)
    print(f"\nwrote {out} and {out.with_suffix('.md').name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
