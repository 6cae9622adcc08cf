"""The same float bytes on another x86-64 CPU: the steps cap the math libraries at AVX2.

The other CPU is qemu's user-mode emulator (`qemu-x86_64 -cpu max`: an x86-64 with AVX2 and no
AVX-512), running the kernels of a ViT image tower (patch convolution, attention, GELU MLP, layer
norm, projection) on the same pixels, capped as every `vlstress` step caps them. It reports this
machine's CPU vendor: the caps hold the instruction set, but MKL also picks its code path by vendor,
and on an Intel Xeon host qemu's default (AuthenticAMD) CPU wrote other bytes than the capped host.
Installed with apt-get when missing and running as root (Debian's `qemu-user`), otherwise skipped
with the reason. The emulated process imports torch only, and the tower sees small images: a
whole `vlstress embed-retrieval` step (open_clip, transformers, 224 px images) took 10 to 20
minutes under emulation. That the CLI caps before torch loads:
test_the_cli_caps_before_torch_loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vlstress import cpu_kernels, provenance

from conftest import REPO, apt_install

QEMU = "qemu-x86_64"
# A ViT image tower at ViT-S-32's widths (wide enough that the vectorised kernels differ between
# instruction sets), two layers, on two 96 px images (9 patches each: emulated AVX2 arithmetic
# is slow, about 3 M multiply-adds a second): seeded weights and pixels, the embeddings' bytes to
# argv[1]
TOWER = """
import sys
from vlstress import cpu_kernels

cpu_kernels.cap()  # as vlstress.cli does, before torch loads
import torch

torch.set_num_threads(1)
torch.manual_seed(0)
width = 384
patch = torch.nn.Conv2d(3, width, kernel_size=32, stride=32, bias=False)
layer = dict(dim_feedforward=4 * width, dropout=0.0, activation="gelu", batch_first=True)
blocks = torch.nn.Sequential(
    *(torch.nn.TransformerEncoderLayer(width, 6, norm_first=True, **layer) for _ in range(2))
).eval()
norm, proj = torch.nn.LayerNorm(width), torch.randn(width, 512) / width**0.5
pixels = torch.rand(2, 3, 96, 96, generator=torch.Generator().manual_seed(1))
with torch.no_grad():
    tokens = patch(pixels).flatten(2).transpose(1, 2)
    features = norm(blocks(tokens)).mean(dim=1) @ proj
    features = features / features.norm(dim=-1, keepdim=True)
with open(sys.argv[1], "wb") as out:
    out.write(features.numpy().tobytes())
"""


def test_cap_sets_what_is_unset_and_keeps_what_the_user_set(monkeypatch):
    for name in cpu_kernels.CAPS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    effective = cpu_kernels.cap()
    assert effective["ATEN_CPU_CAPABILITY"] == "avx512"  # the user's choice wins
    assert effective["MKL_CBWR"] == "AVX2" and os.environ["OPENBLAS_CORETYPE"] == "Haswell"
    assert provenance.build("step", {})["cpu_kernels"] == effective


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the caps are for x86-64 CPUs")
def test_the_cli_caps_before_torch_loads():
    """A step's torch runs the AVX2 kernels even where the CPU has AVX-512 (the cap is read at
    load)."""
    env = {name: value for name, value in os.environ.items() if name not in cpu_kernels.CAPS}
    script = (
        "import contextlib, io\n"
        "from vlstress.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['models', '--help'])\n"
        "import torch\n"
        "print(torch.backends.cpu.get_cpu_capability())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [
        "AVX2" if "avx2" in Path("/proc/cpuinfo").read_text() else "DEFAULT"
    ], out.stdout


def host_vendor() -> str:
    """The CPU vendor of this machine (/proc/cpuinfo's vendor_id), e.g. GenuineIntel."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("vendor_id"):
            return line.split(":", 1)[1].strip()
    return "AuthenticAMD"


def qemu() -> str:
    found = shutil.which(QEMU)
    if found:
        return found
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        pytest.skip("qemu user-mode emulation of x86-64 needs an x86-64 Linux host")
    apt_install(["qemu-user"], recommends=False)
    return shutil.which(QEMU) or pytest.skip("qemu-user installed without qemu-x86_64")


def has_avx512() -> bool:
    return (
        "avx512f" in Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else False
    )


def tower(workdir: Path, prefix: list[str], env: dict[str, str], tag: str) -> str:
    """sha256 of the image tower's embeddings, computed by `prefix` python."""
    out = workdir / f"{tag}.bin"
    done = subprocess.run(
        [*prefix, "-c", TOWER, str(out)],
        cwd=workdir,
        env={**env, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return hashlib.sha256(out.read_bytes()).hexdigest()


@pytest.mark.slow
def test_an_avx2_cpu_writes_the_same_embeddings(tmp_path):
    emulator = qemu()
    env = {
        name: value for name, value in os.environ.items() if name not in cpu_kernels.CAPS
    }  # the caps of the script's own cpu_kernels.cap()
    here = tower(tmp_path, [sys.executable], env, "here")
    # the host's vendor: MKL picks its code path by vendor as well as by instruction set, and the
    # caps hold the instruction set only (qemu's `max` says AuthenticAMD unless told otherwise)
    cpu = f"max,vendor={host_vendor()}"
    emulated = tower(tmp_path, [emulator, "-cpu", cpu, sys.executable], env, "qemu")
    assert here == emulated
    if has_avx512():  # the test can fail: without the caps, this CPU writes other bytes
        uncapped = {
            **env,
            "ATEN_CPU_CAPABILITY": "avx512",
            "MKL_CBWR": "AUTO",
            "DNNL_MAX_CPU_ISA": "ALL",
        }
        assert tower(tmp_path, [sys.executable], uncapped, "uncapped") != emulated


# The overlap detector's decision on another CPU: faiss picks its kernels by the CPU (AVX-512 where
# there is one), so its scores may differ in the last bits; the similarities written are the exact
# cosines of its candidates, rounded, and must come out the same. Seeded float32 embeddings (their
# bits are the same everywhere), near-duplicates at cosines close to each other, an exact index.
OVERLAP = """
import json
import sys
from vlstress import cpu_kernels

cpu_kernels.cap()
import numpy as np
from vlstress.suites.overlap import neighbours

rng = np.random.default_rng(0)
train = rng.standard_normal((400, 512)).astype(np.float32)
train /= np.linalg.norm(train, axis=1, keepdims=True)
queries = train[:40] + 0.05 * rng.standard_normal((40, 512)).astype(np.float32)
queries = np.concatenate([queries, rng.standard_normal((20, 512)).astype(np.float32)])
queries /= np.linalg.norm(queries, axis=1, keepdims=True)
index, kind = neighbours.build_index(train, "flat", nlist=1, nprobe=1, seed=0)
sims, rows = neighbours.nearest(index, queries, train)
with open(sys.argv[1], "w") as out:
    json.dump({"similarity": sims.tolist(), "row": rows.tolist()}, out)
"""


@pytest.mark.slow
def test_the_overlap_detector_writes_the_same_similarities_on_an_avx2_cpu(tmp_path):
    emulator = qemu()
    env = {name: value for name, value in os.environ.items() if name not in cpu_kernels.CAPS}
    env["PYTHONPATH"] = str(REPO / "src")
    written = {}
    for tag, prefix in (
        ("here", [sys.executable]),
        ("qemu", [emulator, "-cpu", f"max,vendor={host_vendor()}", sys.executable]),
    ):
        out = tmp_path / f"{tag}.json"
        done = subprocess.run(
            [*prefix, "-c", OVERLAP, str(out)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        written[tag] = out.read_bytes()
    assert written["here"] == written["qemu"]
    found = json.loads(written["here"])
    assert found["row"][:40] == list(range(40))  # each near-duplicate finds its original
