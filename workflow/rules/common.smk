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
METRICS = "results/metrics"
# Evaluations every model gets (results/metrics/<model>/<evaluation>.json). Stress
# rule files append theirs; summarize waits for all of them (metric_records()).
EVALUATIONS = ["original"]
# Summary, figures and tables (workflow/rules/evaluate.smk summarize, report.smk).
SUMMARY = {
    "csv": "results/summary.csv",
    "agg": "results/summary_agg.csv",
    "md": "results/summary.md",
    "json": "results/metrics.json",
    "plot": "results/plots/stress.csv",
}
FIGURES = ["recall_bars", "false_r1_heatmap", "lambda_sweep", "drop_vs_size"]
TABLES = {"md": "results/tables/stress.md", "tex": "results/tables/stress.tex"}
# Set statistics of the text stress-tests (workflow/rules/text.smk text_stats).
TEXT_STATS = {
    "json": "results/text/stats.json",
    "csv": "results/text/stats.csv",
    "md": "results/text/stats.md",
    "png": "results/figures/text_stats.png",
    "pdf": "results/figures/text_stats.pdf",
}


def flag(value):
    """A params value as DVC's ${...} interpolation renders it (None, true/false, str)."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def model_flag(key):
    def lookup(wildcards):
        if wildcards.model not in config["models"]:
            raise ValueError(
                f"unknown model slug {wildcards.model!r}: not in `models` of params.yaml "
                f"(known: {', '.join(MODELS)})"
            )
        return flag(config["models"][wildcards.model][key])

    return lookup


def all_outputs():
    return [
        *SUMMARY.values(),
        *expand("results/figures/{name}.{ext}", name=FIGURES, ext=["png", "pdf"]),
        *TABLES.values(),
        *TEXT_STATS.values(),
    ]


def metric_records():
    """Every metric record the workflow writes: summarize's input (DVC: the METRICS folder)."""
    records = expand(
        f"{METRICS}/{{model}}/{{evaluation}}.json", model=MODELS, evaluation=EVALUATIONS
    )
    records += [path for path in all_outputs() if path.startswith(f"{METRICS}/")]
    return sorted(set(records))


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
