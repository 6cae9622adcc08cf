"""A real DVC remote over SSH: push, fresh clone, pull, byte-identical outputs (slow: ~1 minute).

A throwaway sshd (Debian openssh-server) listens on 127.0.0.1 at a free port with
its own host key and one client key (ed25519, no passphrase). A fresh copy of the
repository (the shrunk demo of test_workflow) builds the front of the pipeline with
`dvc repro embed_retrieval` (download, prepare, model card, the caption sets and image
variants, and the model's embeddings of them): directory outputs (data/raw/demo, the
embeddings folder), a json manifest and .npy arrays in the DVC cache.
The remote is configured as the README shows: URL in the committed .dvc/config, user
and key in each person's .dvc/config.local. `dvc push` over dvc-ssh, a `git clone`,
the same local settings there, `dvc pull`: every file of every DVC output is byte
identical, and the clone is up to date with its pipeline and with the remote.

dvc-ssh does not check host keys (sshfs connects with known_hosts=None), so nothing
is written to ~/.ssh; DVC commands that talk to the remote run with a temporary HOME
and no ssh agent, so only the key configured for the remote can log in.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import apt_install
from test_workflow import fresh_project

pytestmark = pytest.mark.slow
pytest.importorskip("dvc")
pytest.importorskip("dvc_ssh")

SSHD = Path("/usr/sbin/sshd")
BIN = str(Path(sys.executable).parent)
ENV = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "PYTHONUNBUFFERED": "1"}
ENV.pop("SSH_AUTH_SOCK", None)
MODEL = "vit-s-32-random"  # the model of test_workflow.shrink
UP_TO_DATE = "Data and pipelines are up to date"
# Only the front of the pipeline is built, so push/pull/status name it; after a whole run
# (the README's case) plain `dvc push` / `dvc pull` do the same for every stage.
BUILT = ("--with-deps", "embed_retrieval")


def sh(*cmd: str, cwd: Path, env: dict | None = None, timeout: float = 600) -> str:
    result = subprocess.run(
        cmd,
        cwd=cwd,
        env=env or ENV,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result.stdout + result.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_sshd() -> None:
    if SSHD.is_file():
        return
    apt_install(["openssh-server"], recommends=False, timeout=600)
    if not SSHD.is_file():
        pytest.skip(f"openssh-server installed but {SSHD} is missing")


def keygen(path: Path) -> Path:
    sh(
        "ssh-keygen",
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-C",
        "vlstress-test",
        "-f",
        str(path),
        cwd=path.parent,
    )
    return path


def wait_for_port(port: int, process: subprocess.Popen, log: Path, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"sshd exited ({process.returncode}):\n{log.read_text() if log.exists() else ''}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(
        f"sshd did not listen on 127.0.0.1:{port} in {seconds} s:\n"
        f"{log.read_text() if log.exists() else ''}"
    )


@pytest.fixture(scope="module")
def sshd(module_tmp):
    """A throwaway sshd on 127.0.0.1: yields (port, user, client key, log)."""
    ensure_sshd()
    if not shutil.which("ssh-keygen"):
        pytest.skip("ssh-keygen not found")
    folder = module_tmp.mktemp("sshd")
    host_key = keygen(folder / "host_ed25519")
    client_key = keygen(folder / "client_ed25519")
    authorized = folder / "authorized_keys"
    authorized.write_text(Path(f"{client_key}.pub").read_text())
    authorized.chmod(0o600)
    log = folder / "sshd.log"
    privsep = Path("/run/sshd")  # sshd's privilege separation directory
    if os.geteuid() == 0:
        privsep.mkdir(mode=0o755, exist_ok=True)
    elif not privsep.is_dir():
        pytest.skip(
            f"{privsep} missing (sshd's privilege separation directory; needs root to create)"
        )
    for _attempt in range(3):  # the free port may be taken between the probe and sshd's bind
        port = free_port()
        config = folder / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    "ListenAddress 127.0.0.1",
                    f"Port {port}",
                    f"HostKey {host_key}",
                    f"PidFile {folder / 'sshd.pid'}",
                    f"AuthorizedKeysFile {authorized}",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password",
                    "StrictModes no",
                    "UsePAM no",
                    "Subsystem sftp internal-sftp",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        # config test: fails loudly on a bad option
        sh(str(SSHD), "-t", "-f", str(config), cwd=folder)
        process = subprocess.Popen(
            [str(SSHD), "-D", "-f", str(config), "-E", str(log)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, process, log)
            break
        except RuntimeError as error:
            if process.poll() is None:
                process.kill()
            process.wait()
            failure = error
    else:
        raise failure
    try:
        yield port, getpass.getuser(), client_key, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def lock_outs(root: Path) -> list[str]:
    lock = yaml.safe_load((root / "dvc.lock").read_text())
    return sorted(
        {out["path"] for stage in lock["stages"].values() for out in stage.get("outs", [])}
    )


def output_digests(root: Path, outs: list[str]) -> dict[str, str]:
    """sha256 of every file of every DVC output (a directory output file by file)."""
    found = {}
    for out in outs:
        path = root / out
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            found[str(file.relative_to(root))] = hashlib.sha256(file.read_bytes()).hexdigest()
    return found


def store_files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def project(module_tmp) -> Path:
    """The shrunk demo in a fresh git repository, built up to the image embeddings by DVC."""
    root = fresh_project(module_tmp.mktemp("dvc_ssh") / "repo", zeroshot=False)
    sh("dvc", "repro", BUILT[-1], cwd=root)
    return root


def configure_local(root: Path, user: str, key: Path) -> None:
    """Per-person settings, kept out of git in .dvc/config.local."""
    sh("dvc", "remote", "modify", "--local", "storage", "user", user, cwd=root)
    sh("dvc", "remote", "modify", "--local", "storage", "keyfile", str(key), cwd=root)


def test_dvc_push_over_ssh_then_pull_in_a_fresh_clone(project, sshd, tmp_path):
    port, user, key, log = sshd
    outs = lock_outs(project)
    assert {
        "data/raw/demo",
        "data/prepared/manifest.json",
        f"results/embeddings/{MODEL}/retrieval",
    } <= set(outs), outs
    assert (project / "data/raw/demo").is_dir()
    before = output_digests(project, outs)
    assert any(name.startswith("data/raw/demo/") for name in before) and any(
        name.endswith(".npy") for name in before
    )

    remote = tmp_path / "remote"
    url = f"ssh://127.0.0.1:{port}{remote}"
    sh("dvc", "remote", "add", "-d", "-f", "storage", url, cwd=project)
    configure_local(project, user, key)
    assert str(key) not in (project / ".dvc/config").read_text()  # the key stays in config.local
    sh("git", "add", "-A", cwd=project)
    sh("git", "check-ignore", "-q", ".dvc/config.local", cwd=project)  # never committed
    sh(
        "git",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "ssh remote",
        cwd=project,
    )

    home = tmp_path / "home"  # no ~/.ssh: only the configured key can log in
    home.mkdir()
    remote_env = {**ENV, "HOME": str(home)}
    sh("dvc", "push", *BUILT, cwd=project, env=remote_env, timeout=300)
    assert sorted(p.name for p in remote.iterdir()) == ["files"]
    pushed = store_files(remote / "files")  # md5/xx/... objects, .dir listings included
    # every cached object, nothing else
    assert pushed and pushed == store_files(project / ".dvc/cache/files")
    assert f"Accepted publickey for {user}" in log.read_text()

    clone = tmp_path / "clone"
    sh("git", "clone", "-q", str(project), str(clone), cwd=tmp_path)
    assert url in (clone / ".dvc/config").read_text() and not (clone / ".dvc/config.local").exists()
    assert (
        not (clone / "data/raw/demo").exists()
        and not (clone / f"results/embeddings/{MODEL}/retrieval").exists()
    )
    configure_local(clone, user, key)
    sh("dvc", "pull", *BUILT, cwd=clone, env=remote_env, timeout=300)
    assert output_digests(clone, outs) == before
    assert UP_TO_DATE in sh("dvc", "status", *BUILT, cwd=clone)
    assert "in sync" in sh(
        "dvc", "status", "--cloud", *BUILT, cwd=clone, env=remote_env, timeout=300
    )
