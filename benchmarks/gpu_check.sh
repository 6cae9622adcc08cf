#!/usr/bin/env bash
# The GPU check: what only a GPU can measure, in one run of at most 8 minutes on one H100.
#
#   bash benchmarks/gpu_check.sh [OUT_JSON]     (default: benchmarks/results/gpu_check.json)
#
# On 5,000 synthetic 640x480 JPEGs (COCO's size) and a seeded random-init ViT-B-32 (speed does
# not depend on the weights), benchmarks/bench_embedding.py measures, in one process:
# - images/s of the embedding step with 8 decoding workers, JPEGs decoded by Pillow (`pil`) and
#   on the GPU (`nvjpeg`), and of the data path alone with each decoder;
# - nvJPEG against Pillow: pixels (max and mean |diff|), embeddings (max |diff|), top-1
#   agreement of each image's nearest caption, largest Recall@K change;
# - amp against fp32: embeddings' max |diff| and the largest Recall@K change;
# - the GPU's mean utilisation during each image run.
# It writes one JSON with provenance (GPU, driver, torch, CUDA); docs/throughput.md says how to
# read it. Never needed by tests or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-benchmarks/results/gpu_check.json}
python - <<'PY'
import torch
if not torch.cuda.is_available():
    raise SystemExit("gpu_check: no CUDA device here (torch.cuda.is_available() is False)")
print("gpu_check on", torch.cuda.get_device_name(0), "torch", torch.__version__)
PY
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
exec python benchmarks/bench_embedding.py --images 5000 --workers 8 --batch-size 256 \
    --decoder nvjpeg --out "$out"
