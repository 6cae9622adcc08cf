# Shared names and helpers. Paths and flags here must render exactly as the
# matching stage of dvc.yaml does (tests/test_twins.py checks it).

import os
import shutil
import subprocess

DATASET = config["dataset"]
MODELS = sorted(config["models"])
RAW = f"data/raw/{DATASET['name']}"
MANIFEST = "data/prepared/manifest.json"
EMB = "results/embeddings/{model}"
SRC = "src/vlstress"


def flag(value):
    """A params value as DVC's ${...} interpolation renders it (None, true/false, str)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def model_flag(key):
    return lambda wildcards: flag(config["models"][wildcards.model][key])


def all_outputs():
    return [
        "results/summary.csv",
        "results/summary.md",
        "results/metrics.json",
        "results/figures/recall.png",
        "results/figures/recall.pdf",
    ]


def record_in_dvc_lock():
    """Record what Snakemake built in dvc.lock so `dvc status` has nothing to do."""
    if not shutil.which("dvc"):
        print("warning: dvc not on PATH; dvc.lock not updated")
        return
    result = subprocess.run(
        ["dvc", "commit", "--force", "--quiet"], capture_output=True, text=True
    )
    if result.returncode != 0:
        print(f"warning: `dvc commit` failed; dvc.lock not updated:\n{result.stderr}")
