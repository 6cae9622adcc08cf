"""The same embedding bytes on another x86-64 CPU: the steps cap the math libraries at AVX2.

The other CPU is qemu's user-mode emulator (`qemu-x86_64 -cpu max`: an x86-64 with AVX2 and no
AVX-512), running the same `vlstress` steps on the same files. It reports this machine's CPU
vendor: the caps hold the instruction set, but MKL also picks its code path by vendor, and on an
Intel Xeon host qemu's default (AuthenticAMD) CPU wrote other bytes than the capped host (the same
with the host's vendor). Installed with apt-get when missing
and running as root (Debian's `qemu-user`), otherwise skipped with the reason.
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

from conftest import apt_install, run_cli

QEMU = "qemu-x86_64"
# ViT-S-32's widths (wide enough that the vectorised kernels differ between instruction sets) with
# two layers per tower: under emulation, building and running the twelve-layer model takes minutes
MODEL = "vlstress-s32-thin"
THIN_S32 = {
    "embed_dim": 384,
    "vision_cfg": {"image_size": 224, "layers": 2, "width": 384, "patch_size": 32},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 384, "heads": 6, "layers": 2},
}


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


def steps(workdir: Path, prefix: list[str], env: dict[str, str], tag: str) -> dict[str, str]:
    """Image and caption embeddings of the prepared photos (the retrieval job); sha256 of each
    .npy."""
    out = workdir / tag
    # workers 0: qemu-user cannot run DataLoader worker processes (the serial path gives the same
    # bytes)
    args = [
        "embed-retrieval",
        "--manifest",
        "manifest.json",
        "--model-card",
        "card.json",
        "--device",
        "cpu",
        "--threads",
        "1",
    ]
    args += ["--workers", "0", "--out", str(out)]
    done = subprocess.run(
        [*prefix, "-m", "vlstress", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {
        name: hashlib.sha256((out / name).read_bytes()).hexdigest()
        for name in ("images.npy", "texts.npy")
    }


@pytest.mark.slow
def test_an_avx2_cpu_writes_the_same_embeddings(tmp_path, monkeypatch):
    emulator = qemu()
    configs = tmp_path / "model-configs"
    configs.mkdir()
    (configs / f"{MODEL}.json").write_text(json.dumps(THIN_S32))
    monkeypatch.setenv("VLSTRESS_MODEL_CONFIGS", str(configs))  # every step below reads it
    run_cli(
        "download",
        "--dataset",
        "demo",
        "--kind",
        "demo",
        "--max-images",
        "2",
        "--out",
        "raw",
        cwd=tmp_path,
    )
    run_cli("prepare", "--dataset", "demo", "--raw", "raw", "--out", "manifest.json", cwd=tmp_path)
    run_cli(
        "model-card",
        "--model",
        "s32",
        "--arch",
        MODEL,
        "--pretrained",
        "None",
        "--seed",
        "0",
        "--out",
        "card.json",
        cwd=tmp_path,
    )
    env = {
        name: value for name, value in os.environ.items() if name not in cpu_kernels.CAPS
    }  # the steps' own caps
    here = steps(tmp_path, [sys.executable], env, "here")
    # the host's vendor: MKL picks its code path by vendor as well as by instruction set, and the
    # caps hold the instruction set only (qemu's `max` says AuthenticAMD unless told otherwise)
    cpu = f"max,vendor={host_vendor()}"
    emulated = steps(tmp_path, [emulator, "-cpu", cpu, sys.executable], env, "qemu")
    assert here == emulated
    if has_avx512():  # the test can fail: without the caps, this CPU writes other bytes
        uncapped = {
            **env,
            "ATEN_CPU_CAPABILITY": "avx512",
            "MKL_CBWR": "AUTO",
            "DNNL_MAX_CPU_ISA": "ALL",
        }
        assert steps(tmp_path, [sys.executable], uncapped, "uncapped") != emulated
