"""The same float bits on any x86-64 CPU with AVX2: the math libraries capped at AVX2 kernels.

torch (its ATen kernels, MKL's GEMM, oneDNN's convolutions), numpy, OpenBLAS and OpenCV each
pick their kernels by the CPU they run on. An AVX-512 machine sums floats in another order than
an AVX2-only one, so embeddings differ in the last bits, and with them every hash in dvc.lock
and every record downstream. Capped at AVX2, an AVX-512 machine runs the kernels an AVX2 machine
runs (tests/test_cpu_kernels.py: ViT embeddings on this AVX-512 EPYC, uncapped, differ from
those of qemu's emulated AVX2 CPU; capped, they are identical).

Each variable is read when its library loads, so `vlstress.cli` calls `cap()` before importing
anything else. A variable already set in the environment wins (e.g. `ATEN_CPU_CAPABILITY=avx512`
for speed, at the price of other bits); provenance records the values in effect. GPUs are not
affected: CUDA kernels do not read these. On an AVX2-only CPU, OpenCV logs that it cannot disable
AVX512-SKX there, which is true and harmless.
"""

from __future__ import annotations

import os
import platform

CAPS: dict[str, str] = {
    # torch's own vectorised kernels (softmax, layer norm, GELU, reductions)
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2",  # MKL's conditional numerical reproducibility: torch's float32 GEMM
    "DNNL_MAX_CPU_ISA": "AVX2",  # oneDNN: torch's convolutions (patch embedding, ResNets)
    # numpy >= 2.4's AVX-512 dispatch targets
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "OPENBLAS_CORETYPE": "Haswell",  # numpy's and scipy's OpenBLAS: the AVX2 kernels
    "OPENCV_CPU_DISABLE": "AVX512-SKX",  # OpenCV's AVX-512 dispatch (corruptions)
}


X86_64 = {"x86_64", "amd64"}  # elsewhere (ARM) these names mean nothing


def cap() -> dict[str, str]:
    """On x86-64, set every cap the environment does not set already; return the values in
    effect."""
    if platform.machine().lower() in X86_64:
        for name, value in CAPS.items():
            os.environ.setdefault(name, value)
    return in_effect()


def in_effect() -> dict[str, str]:
    """The values this process runs with ('' where unset), for provenance."""
    return {name: os.environ.get(name, "") for name in CAPS}
