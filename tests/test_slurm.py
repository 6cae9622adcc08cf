"""The demo workflow on a real SLURM cluster (slow: a few minutes; root only).

A module fixture brings up a two-node SLURM cluster on this machine from Debian's
packages (slurm-wlm, munge; installed with apt-get when missing and running as root,
otherwise the module is skipped): a private munged, slurmctld and two slurmd on localhost
(slurm's multiple-slurmd mode: nodes `node1` and `node2`, each slurmd on its own port)
with the config in tests/slurm/, two partitions `cpu` (default) and `gpu` on both nodes,
no cgroups (proctrack/linuxproc, task/none) and no slurmdbd. Everything lives in a
temporary folder and is stopped and removed at the end. Jobs land on both nodes, and
their records must still be the bytes of a local run.

THE GPU IS FAKE. The machine has no GPU, but a job that asks for one must be accepted,
as on a real GPU node: each node declares one GRES `gpu` whose device file is /dev/null
(slurmd drops a GPU without a file). SLURM schedules it like a real one (the job's
TresPerJob is gres:gpu:1, CUDA_VISIBLE_DEVICES=0 inside it), and nothing can compute on
it: the GPU stages run on the CPU, as they do locally. The test therefore checks the
routing (partition and GPU request of every job, as submitted and as slurmctld recorded
it), not that a GPU was used.

Status: without slurmdbd `sacct` only answers "accounting storage is disabled", so the
run adds `--slurm-status-command squeue`; MinJobAge=3600 keeps finished jobs in
`squeue --states=all` (and `scontrol show job`) long enough for the plugin and for the
checks below.

The run is the command of the README's "Running on a cluster" section, read from the
README itself, plus only what this one-machine test needs: the status command, a short
first status check and latency wait, and keeping the per-job SLURM logs. The submitted
sbatch arguments are recorded by tests/slurm/sbatch, a wrapper first on PATH that
appends its arguments to a file and execs the real sbatch (the plugin runs `sbatch`
through the shell, so this sees exactly what SLURM gets, without parsing debug logs).
A second shim, tests/slurm/srun, only gives SLURM_CONF back to the `srun` that starts
each rule inside its job: the slurm-jobstep plugin drops it with the other SLURM_*
variables, and unlike a real cluster's this one's config is not in /etc/slurm.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

import pytest
import yaml

from conftest import REPO, apt_install, dvc_reruns_to_the_same_bytes, locked_stages
from test_workflow import fresh_project

pytestmark = pytest.mark.slow
pytest.importorskip("snakemake")
pytest.importorskip("snakemake_executor_plugin_slurm")

HERE = Path(__file__).resolve().parent / "slurm"
BIN = str(Path(sys.executable).parent)
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
TOOLS = (
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "srun",
    "squeue",
    "sinfo",
    "scontrol",
    "scancel",
)
PACKAGES = ("slurm-wlm", "munge")
ACCOUNT = "vlstress"  # stands in for <account>: without slurmdbd any name is accepted
NODES = ("node1", "node2")
PROFILE = "workflow/profiles/slurm"
EXTRA_FLAGS = [
    "--slurm-status-command",
    "squeue",  # no slurmdbd: sacct cannot answer
    "--slurm-init-seconds-before-status-checks",
    "1",  # jobs take seconds here, not hours
    "--latency-wait",
    "5",  # one machine, one file system
    "--slurm-keep-successful-logs",  # the checks below read them
]
RUN_TIMEOUT = 1800
# the params' `cluster` block for nodes of 2 CPUs: a GPU job gets one decoding worker (so it asks
# for 2 CPUs), and the other figures stay the defaults but for what fits a node
CLUSTER = {"gpu_workers": 1, "mem_mb": 4000, "worker_mem_mb": 1000, "unpriced_mem_mb": 8000}


def tool(name: str) -> str | None:
    return shutil.which(name, path=SEARCH_PATH)


def ensure_slurm() -> dict[str, str]:
    """Paths of the SLURM and munge programs; install them (root + apt-get) or skip."""
    if not sys.platform.startswith("linux"):
        pytest.skip("a SLURM cluster on localhost needs Linux")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to start jobs (run the SLURM test as root)")
    if not all(map(tool, TOOLS)):
        apt_install(list(PACKAGES))
    missing = [name for name in TOOLS if not tool(name)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found after installing {' '.join(PACKAGES)}")
    return {name: tool(name) for name in TOOLS}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tail(path: Path, lines: int = 40) -> str:
    if not path.is_file():
        return f"({path} missing)"
    return f"--- {path.name}:\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def slurm_env(extra: dict[str, str]) -> dict[str, str]:
    """This environment without any SLURM settings of a surrounding job, plus `extra`."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_", "SQUEUE_"))
    }
    return {**base, "PYTHONUNBUFFERED": "1", **extra}


@dataclass
class Cluster:
    root: Path
    tools: dict[str, str]
    env: dict[str, str]
    sbatch_log: Path
    daemons: list[subprocess.Popen] = field(default_factory=list)

    def run(self, *cmd: str, check: bool = True) -> str:
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr}\n{self.logs()}"
            )
        return done.stdout

    def logs(self) -> str:
        return "\n".join(tail(path) for path in sorted((self.root / "log").glob("*.log")))

    def start(self, *cmd: str, log: str) -> None:
        out = open(self.root / "log" / log, "ab")
        self.daemons.append(
            subprocess.Popen(cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        )
        out.close()

    def wait_for(self, what: str, ready, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [d.args[0] for d in self.daemons if d.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise AssertionError(
                    f"SLURM test cluster: {what} not ready ({', '.join(dead) or 'timeout'})\n"
                    f"{self.logs()}"
                )
            time.sleep(0.2)

    def node_states(self) -> dict[str, str]:
        """Node -> state (sinfo lists a node once per partition: the two say the same)."""
        done = subprocess.run(
            [self.tools["sinfo"], "-h", "-N", "-o", "%N %T"],
            env=self.env,
            capture_output=True,
            text=True,
        )
        return dict(line.split() for line in done.stdout.splitlines() if line.strip())

    def jobs(self) -> list[dict[str, str]]:
        """Every job slurmctld knows (finished ones too, for MinJobAge), as scontrol shows it."""
        out = self.run(self.tools["scontrol"], "show", "job", "-o")
        return [
            dict(re.findall(r"(?:^|\s)([A-Za-z][\w/:]*)=(\S*)", line))
            for line in out.splitlines()
            if line.startswith("JobId=")
        ]

    def stop(self) -> None:
        subprocess.run(
            [self.tools["scancel"], "--user", "root"], env=self.env, capture_output=True, timeout=30
        )
        for daemon in reversed(self.daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=15)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


def node_hardware(slurmd: str) -> str:
    """This machine as `slurmd -C` sees it: CPUs, sockets, cores, threads, RealMemory."""
    first = subprocess.run(
        [slurmd, "-C"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    return re.sub(r"^NodeName=\S+\s*", "", first)


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    tools = ensure_slurm()
    hardware = node_hardware(tools["slurmd"])
    memory = int(re.search(r"RealMemory=(\d+)", hardware).group(1))
    if memory < CLUSTER["mem_mb"] + CLUSTER["worker_mem_mb"] + 1000:
        pytest.skip(f"a GPU job of the run asks for about 5.5 GB; this machine has {memory} MB")
    # short: the munge socket path is limited
    root = Path(tempfile.mkdtemp(prefix="vlstress-slurm-"))
    for name in ("run", "state", "spool", "log", "munge", "bin"):
        (root / name).mkdir()
    (root / "munge").chmod(0o700)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = root / "slurm.conf"
    conf.write_text(
        Template((HERE / "slurm.conf.in").read_text()).substitute(
            root=root,
            ctld_port=free_port(),
            port1=free_port(),
            port2=free_port(),
            hardware=hardware,
        )
    )
    shutil.copy(HERE / "gres.conf", root / "gres.conf")  # slurmd reads it beside slurm.conf
    for shim in ("sbatch", "srun"):  # see tests/slurm/sbatch and tests/slurm/srun
        shutil.copy(HERE / shim, root / "bin" / shim)
        (root / "bin" / shim).chmod(0o755)
    env = slurm_env(
        {
            "SLURM_CONF": str(conf),
            "PATH": os.pathsep.join([str(root / "bin"), BIN, SEARCH_PATH]),
            "VLSTRESS_SBATCH_LOG": str(root / "sbatch.jsonl"),
            "VLSTRESS_REAL_SBATCH": tools["sbatch"],
            "VLSTRESS_SLURM_CONF": str(conf),
            "VLSTRESS_REAL_SRUN": tools["srun"],
            "VLSTRESS_PYTHON": sys.executable,
        }
    )
    found = Cluster(root, tools, env, root / "sbatch.jsonl")
    try:
        socket_path = root / "run" / "munge.socket"
        # --force: munged wants every folder above its socket world-executable; /tmp/... is not
        found.start(
            tools["munged"],
            "--foreground",
            "--force",
            f"--socket={socket_path}",
            f"--key-file={key}",
            f"--pid-file={root / 'run' / 'munged.pid'}",
            f"--seed-file={root / 'munge' / 'seed'}",
            f"--log-file={root / 'log' / 'munged.log'}",
            log="munged.out.log",
        )
        found.wait_for("munged", socket_path.exists)
        found.start(tools["slurmctld"], "-D", "-f", str(conf), log="slurmctld.out.log")
        for node in NODES:  # multiple-slurmd mode: one slurmd per node name, each its own port
            (root / "spool" / node).mkdir()
            found.start(tools["slurmd"], "-D", "-N", node, "-f", str(conf), log=f"{node}.out.log")
        idle = dict.fromkeys(NODES, "idle")
        found.wait_for("nodes " + ", ".join(NODES), lambda: found.node_states() == idle)
        yield found
    finally:
        found.stop()
        shutil.rmtree(root, ignore_errors=True)


def readme_cluster_command() -> list[str]:
    """The `snakemake` command of the README's cluster section, <account> filled in."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Running on a cluster", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```(?:bash|sh)\n(.*?)```", section, re.S).group(1).replace("\\\n", " ")
    commands = [
        shlex.split(line) for line in block.splitlines() if line.strip().startswith("snakemake")
    ]
    assert len(commands) == 1, (
        f"expected one snakemake command in the README's cluster section:\n{block}"
    )
    return [arg.replace("<account>", ACCOUNT) for arg in commands[0]]


def own_code(root: Path, env: dict[str, str]) -> dict[str, str]:
    """`env` running the copy's own package (not the checkout's editable install), jobs included."""
    return {
        **env,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "src"), env.get("PYTHONPATH")])),
    }


def job_stats(log: str) -> Counter:
    """Snakemake's own 'Job stats' table: rule -> number of jobs (without `all` and the total)."""
    table = log.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    rows = (line.split() for line in table.splitlines()[3:])
    return Counter(
        {row[0]: int(row[1]) for row in rows if len(row) == 2 and row[0] not in ("all", "total")}
    )


def rule_of(comment: str) -> str:
    """The rule of a job from the comment the plugin gives it: rule_<name>[_wildcards_<...>]."""
    return re.fullmatch(r"rule_(.+?)(?:_wildcards_.*)?", comment).group(1)


@dataclass
class SlurmRun:
    root: Path
    log: str
    seconds: float
    calls: list[dict]  # one per sbatch call: rule, argv, partition, gpu (the GPU arguments)
    jobs: list[dict[str, str]]  # slurmctld's record of this run's jobs


def option(argv: list[str], *names: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg in names and i + 1 < len(argv):
            return argv[i + 1]
        for name in names:
            if name.startswith("--") and arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


@pytest.fixture(scope="module")
def slurm_run(cluster, module_tmp) -> SlurmRun:
    root = fresh_project(module_tmp.mktemp("slurm-run") / "repo", zeroshot=False)
    profile = root / PROFILE / "config.yaml"  # should the account be set there instead
    profile.write_text(profile.read_text().replace("<account>", ACCOUNT))
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["cluster"].update(CLUSTER)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    cmd = readme_cluster_command() + EXTRA_FLAGS
    start = time.monotonic()
    try:
        done = subprocess.run(
            cmd,
            cwd=root,
            env=own_code(root, cluster.env),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired as error:
        raise AssertionError(
            f"{shlex.join(cmd)} timed out:\n{(error.stderr or b'')[-5000:]}\n{cluster.logs()}"
        ) from None
    seconds = time.monotonic() - start
    log = done.stdout + done.stderr
    print(f"SLURM run: {seconds:.0f} s: {shlex.join(cmd)}")
    assert done.returncode == 0, (
        f"{shlex.join(cmd)} failed ({done.returncode}):\n{log[-8000:]}\n{cluster.logs()}"
    )
    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    calls = []
    for line in cluster.sbatch_log.read_text().splitlines():
        argv = json.loads(line)
        if option(argv, "--job-name", "-J") == run_id:
            gpu = [a for a in argv if re.match(r"--(gpus|gres|gpus-per-\w+)(=|$)", a)]
            calls.append(
                {
                    "rule": rule_of(option(argv, "--comment")),
                    "argv": argv,
                    "partition": option(argv, "-p", "--partition"),
                    "gpu": gpu,
                }
            )
    jobs = [job for job in cluster.jobs() if job.get("JobName") == run_id]
    return SlurmRun(root, log, seconds, calls, jobs)


def gpu_rules() -> set[str]:
    from vlstress.pipeline import STAGES

    return {stage.name for stage in STAGES if stage.gpu}


def test_slurm_run_is_byte_identical_to_a_local_run(slurm_run):
    """DVC, forced to rerun every step that runs a model or scores here, outside SLURM, writes the
    bytes the SLURM jobs wrote (a whole second local build took minutes)."""
    steps = locked_stages(
        slurm_run.root,
        "embed_retrieval",
        "ei_scores",
        "text_stats",
        "evaluate",
        "evaluate_text",
        "evaluate_image",
    )
    assert len(steps) >= 6, steps
    env = own_code(
        slurm_run.root,
        {
            **os.environ,
            "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONUNBUFFERED": "1",
        },
    )
    dvc_reruns_to_the_same_bytes(slurm_run.root, steps, env)


def test_jobs_ran_on_both_nodes(slurm_run):
    """The scheduler spread the run over the two nodes: each ran jobs, and each job ran on one."""
    placed = Counter(job["NodeList"] for job in slurm_run.jobs)
    assert set(placed) == set(NODES), placed
    assert all(placed[node] >= 2 for node in NODES), placed


def test_every_job_ran_through_slurm(slurm_run):
    """Every job but the code stamps, which are local rules: they hash a few source files in the
    main process instead of waiting for a SLURM slot."""
    planned = job_stats(slurm_run.log)
    expected = Counter({rule: n for rule, n in planned.items() if not rule.startswith("code_")})
    assert sum(expected.values()) > 10 and len(planned) > len(expected)
    # one sbatch per rule instance
    assert Counter(call["rule"] for call in slurm_run.calls) == expected
    assert Counter(rule_of(job["Comment"]) for job in slurm_run.jobs) == expected
    assert {(job["JobState"], job["ExitCode"]) for job in slurm_run.jobs} == {("COMPLETED", "0:0")}
    logs = slurm_run.root / ".snakemake" / "slurm_logs"
    for (
        job
    ) in slurm_run.jobs:  # written by the job on the node (kept: --slurm-keep-successful-logs)
        found = list(logs.rglob(f"{job['JobId']}.log"))
        assert (
            len(found) == 1
            and found[0].parent.relative_to(logs).parts[0] == f"rule_{rule_of(job['Comment'])}"
        ), job["JobId"]


def test_jobs_are_routed_by_resources(slurm_run):
    gpu = gpu_rules()
    assert gpu == {
        "embed_retrieval",
        "ei_scores",
        "zeroshot_classifiers",
        "embed_zeroshot",  # the zero-shot suites (off in this run)
        "embed_zeroshot_shard",  # one shard of it (cluster.embed_shards > 1; off here)
        "attack",  # adversarial suite (off in this run)
        "finetune",  # robust fine-tuning (off in this run)
        "finetune_labelled",  # FLYP and standard fine-tuning (off in this run)
        "stylize",  # AdaIN stylization (off in this run)
        "overlap_detect",  # overlap suite: embeds the collection (off in this run)
        "ask",  # an assistant's answers (off in this run)
        "evaluate_correspondence",  # dense features of the image tower (off in this run)
    }
    ran = {call["rule"] for call in slurm_run.calls}
    assert ran & gpu and ran - gpu
    for call in slurm_run.calls:  # as submitted
        if call["rule"] in gpu:
            assert (call["partition"], call["gpu"]) == ("gpu", ["--gpus=1"]), call["argv"]
        else:
            assert (call["partition"], call["gpu"]) == ("cpu", []), call["argv"]
    for job in slurm_run.jobs:  # as slurmctld scheduled them
        if rule_of(job["Comment"]) in gpu:
            assert (job["Partition"], job.get("TresPerJob")) == ("gpu", "gres:gpu:1"), job
        else:
            assert (job["Partition"], job.get("TresPerJob")) == ("cpu", None), job


def priced_requests(root: Path, monkeypatch) -> Counter:
    """(rule, runtime, MB, CPUs) of every job of the project's params, as the rules hand them to
    Snakemake (vlstress.pipeline.snakemake.rule_spec), the code stamps aside (local rules)."""
    from vlstress import params as params_module
    from vlstress.pipeline import active_stages, is_stamp, resources, stage_axis_values
    from vlstress.pipeline.snakemake import rule_spec

    monkeypatch.chdir(root)  # the rates the run read: the copy's benchmarks/results
    values = params_module.load(["params.yaml"])
    pricer = resources.job_pricer(values)
    found: Counter = Counter()
    for stage in active_stages(values):
        if is_stamp(stage):
            continue
        asked = rule_spec(stage, values, ["params.yaml"], pricer).resources
        jobs: list[dict[str, str]] = [{}]
        for axis in stage.axes:
            jobs = [
                {**job, axis: value}
                for job in jobs
                for value in stage_axis_values(stage, values, axis)
            ]
        for job in jobs:
            request = tuple(asked[name](job) for name in ("runtime", "mem_mb", "cpus_per_task"))
            found[(stage.name, *request)] += 1
    return found


def minutes(limit: str) -> int:
    """slurmctld's TimeLimit ([D-]HH:MM:SS) in minutes."""
    days, _, clock = limit.rpartition("-")
    h, m, s = (int(part) for part in clock.split(":"))
    return int(days or 0) * 1440 + h * 60 + m + (s > 0)


def test_each_job_asks_for_what_the_cost_model_prices(slurm_run, monkeypatch):
    """Runtime, memory and CPUs per job come from the cost model (params `cluster`), not from the
    profile: every sbatch call asks for its job's priced request, and slurmctld recorded it."""
    want = priced_requests(slurm_run.root, monkeypatch)
    got: Counter = Counter()
    for call in slurm_run.calls:
        argv = call["argv"]
        request = (int(option(argv, "-t")), int(option(argv, "--mem")))
        got[(call["rule"], *request, int(option(argv, "--cpus-per-task")))] += 1
        assert option(argv, "-A") == ACCOUNT, argv
    assert got == want
    # a GPU job: the base, one decoding worker and 8 MB a parameter of ViT-S-32 (63.09 M in
    # open_clip's profile); it asks for a CPU for the worker
    assert ("embed_retrieval", 30, 4000 + 1000 + 505, 2) in got
    assert ("text_stats", 30, 4000, 2) in got  # its CPU threads (embed.threads)
    assert ("evaluate", 30, 4000, 1) in got
    for job in slurm_run.jobs:  # as slurmctld scheduled them
        rule = rule_of(job["Comment"])
        asked = {(runtime, f"{mem}M", str(cpus)) for r, runtime, mem, cpus in want if r == rule}
        recorded = (minutes(job["TimeLimit"]), job["MinMemoryNode"], job["NumCPUs"])
        assert recorded in asked, job
