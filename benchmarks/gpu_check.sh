#!/usr/bin/env bash
# The GPU check: what only a GPU can measure, in one run of at most 8 minutes on one H100.
#
#   bash benchmarks/gpu_check.sh [OUT_JSON]     (default: benchmarks/results/gpu_check.json)
#
# "embedding": on 5,000 synthetic 640x480 JPEGs (COCO's size) and a seeded random-init ViT-B-32
# (speed does not depend on the weights), benchmarks/bench_embedding.py measures, in one process:
# - images/s of the embedding step with 8 decoding workers, JPEGs decoded by Pillow (`pil`) and
#   on the GPU (`nvjpeg`), and of the data path alone with each decoder;
# - nvJPEG against Pillow: pixels (max and mean |diff|), embeddings (max |diff|), top-1
#   agreement of each image's nearest caption, largest Recall@K change;
# - amp against fp32: embeddings' max |diff| and the largest Recall@K change;
# - the GPU's mean utilisation during each image run (~3 minutes on an H200).
# "shards": on a labelled test set of 50,000 synthetic 320x240 JPEGs (256 distinct pictures,
# hard-linked), benchmarks/bench_shards.py runs `vlstress embed-zeroshot` as one job, then as 4
# shards one after the other and `vlstress embed-join`, each a process of its own (batch 256,
# 8 workers, `pil`): wall time and images/s of each, and whether the joined folder is
# byte-identical to the one job's (every file's sha256; reported, not asserted). 100,000 decodes
# of a quarter of COCO's pixels plus 5 model start-ups: about 2 minutes.
# Each part runs even if the other fails (a failed part is null, and the script exits non-zero);
# both go into the one JSON, each with its provenance (GPU, torch, CUDA; the shards' git commit
# and command). docs/throughput.md says how to read it. Never needed by tests or CI.
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
parts=$(mktemp -d)
trap 'rm -rf "$parts"' EXIT
status=0
python benchmarks/bench_embedding.py --images 5000 --workers 8 --batch-size 256 \
    --decoder nvjpeg --out "$parts/embedding.json" || status=$?
python benchmarks/bench_shards.py --images 50000 --shards 4 --device cuda --workers 8 \
    --batch-size 256 --out "$parts/shards.json" || status=$?
python - "$parts" "$out" <<'PY'
import json
import sys
from pathlib import Path

from vlstress.io import write_json

parts, out = Path(sys.argv[1]), sys.argv[2]
found = {name: parts / f"{name}.json" for name in ("embedding", "shards")}
merged = {name: json.loads(p.read_text()) if p.is_file() else None for name, p in found.items()}
write_json(out, merged)
print("wrote", out)
PY
exit "$status"
