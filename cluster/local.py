"""A local multi-node Ray cluster on this machine: one head and K worker nodes, each its own
raylet (`ray start --block`, 1 CPU by default, its own --temp-dir and ports, explicit memory so
co-located nodes do not each claim the whole machine). Every process started is recorded in a
state file, and `down` stops exactly those process groups: never a blanket `ray stop`, which
would also stop other users' Ray. Every node runs with Ray's token authentication, the token a
fresh one per `up` in the state folder (cluster/auth.py; docs/cluster.md, "Security")."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cluster import auth
from sweeps.raycfg import LOCAL_CLUSTER_DIR, TESTBED_RESOURCE, cluster_env

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATE_DIR = LOCAL_CLUSTER_DIR
# Ports outside Ray's worker range (10002-19999) and far from common services.
HEAD_PORT = 26379
DASHBOARD_PORT = 28265
CLIENT_PORT_BASE = 23001
AGENT_PORT_BASE = 24001
METRICS_PORT_BASE = 25001
RUNTIME_ENV_PORT_BASE = 27001


@dataclass
class Node:
    name: str
    pid: int  # also its process-group id (started in a new session)
    temp_dir: str
    log: str


@dataclass
class ClusterState:
    address: str
    dashboard: str
    nodes: list[Node] = field(default_factory=list)
    mlflow_pid: int | None = None
    mlflow_uri: str | None = None

    @staticmethod
    def load(state_dir: Path) -> ClusterState | None:
        path = state_dir / "state.json"
        if not path.exists():
            return None
        d = json.loads(path.read_text())
        d["nodes"] = [Node(**n) for n in d["nodes"]]
        return ClusterState(**d)

    def save(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = state_dir / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=1))
        tmp.replace(state_dir / "state.json")


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _env(state_dir: Path) -> dict[str, str]:
    # Nodes run this interpreter's environment: `python` in a job entrypoint is this venv's.
    venv_bin = str(Path(sys.executable).parent)
    # No metrics collection or usage stats: on a small machine every node's agents would
    # otherwise take CPU from the simulations.
    # Without the embedded Ray's single-node switch (sweeps.raycfg.loopback_only), if a caller left it set.
    # Without a RAY_AUTH_TOKEN of the caller's: Ray would prefer it to the cluster's token file.
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_TOKEN")}
    return {
        **env,
        **cluster_env(auth.token_path(state_dir)),
        "PATH": f"{venv_bin}:{os.environ.get('PATH', '')}",
        "RAY_enable_metrics_collection": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
    }


def wait_port(port: int, timeout: float = 60.0, alive: Callable[[], bool] = lambda: True) -> None:
    """Until something listens on 127.0.0.1:`port`; TimeoutError after `timeout`, or at once
    when the process that should listen is gone (`alive`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port}" + (f" after {timeout:.0f} s" if alive() else ""))


def _group_members(pgid: int) -> list[tuple[int, str, str]]:
    """(pid, comm, state) of the processes in process group `pgid`, from /proc."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:
            out.append((int(d.name), stat[stat.index("(") + 1 : stat.rindex(")")], fields[0]))
    return out


def alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    try:
        os.waitpid(pgid, os.WNOHANG)  # reap it if it is our child (when `up` ran in-process)
    except ChildProcessError:
        pass
    return any(state != "Z" for _, _, state in _group_members(pgid))


def _spawn(args: list[str], log: Path, state_dir: Path) -> int:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            args,
            env=_env(state_dir),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return proc.pid


def _node_args(i: int, temp_dir: Path, cpus: int, memory_gb: float, store_mb: int, offset: int) -> list[str]:
    i += offset
    return [
        "--block",
        f"--num-cpus={cpus}",
        f"--temp-dir={temp_dir}",
        "--node-ip-address=127.0.0.1",
        f"--memory={int(memory_gb * 2**30)}",
        f"--object-store-memory={store_mb * 2**20}",
        f"--dashboard-agent-listen-port={AGENT_PORT_BASE + i}",
        f"--metrics-export-port={METRICS_PORT_BASE + i}",
        f"--runtime-env-agent-port={RUNTIME_ENV_PORT_BASE + i}",
        f'--resources={{"{TESTBED_RESOURCE}": 1}}',  # one kernel run at a time a node (sweeps/backends/kernel.py)
    ]


def _ray_temp_root(state_dir: Path) -> Path:
    """A short directory for Ray's session files: Ray puts AF_UNIX sockets there, and their
    paths may not exceed 107 bytes (a long state_dir would break the dashboard)."""
    import hashlib
    import tempfile

    digest = hashlib.sha256(str(state_dir.resolve()).encode()).hexdigest()[:8]
    return Path(tempfile.gettempdir()) / f"bsw-{digest}"


def up(
    workers: int,
    state_dir: Path = DEFAULT_STATE_DIR,
    head_cpus: int = 0,
    worker_cpus: int = 1,
    memory_gb: float = 2.0,
    store_mb: int = 200,
    dashboard: bool = True,
    port_offset: int = 0,
) -> ClusterState:
    """Starts the head (no CPUs by default: it runs the sweep driver, GCS and dashboard) and
    `workers` worker nodes; returns once every node has joined. Without the dashboard (ten
    Python processes) sweeps can still attach, but jobs cannot be submitted."""
    existing = ClusterState.load(state_dir)
    if existing and any(alive(n.pid) for n in existing.nodes):
        raise RuntimeError(
            f"a cluster from {state_dir} is already running at {existing.address}; `python -m cluster down` first"
        )
    head_port, dashboard_port = HEAD_PORT + port_offset, DASHBOARD_PORT + port_offset
    address = f"127.0.0.1:{head_port}"
    state = ClusterState(address=address, dashboard=f"http://127.0.0.1:{dashboard_port}")
    head_tmp = _ray_temp_root(state_dir) / "head"
    auth.new_token(state_dir)
    pid = _spawn(
        [
            _bin("ray"),
            "start",
            "--head",
            f"--port={head_port}",
            "--dashboard-host=127.0.0.1",
            f"--dashboard-port={dashboard_port}",
            f"--include-dashboard={str(dashboard).lower()}",
            f"--ray-client-server-port={CLIENT_PORT_BASE + port_offset}",
            *_node_args(0, head_tmp, head_cpus, memory_gb, store_mb, port_offset),
        ],
        state_dir / "head.log",
        state_dir,
    )
    state.nodes.append(Node("head", pid, str(head_tmp), str(state_dir / "head.log")))
    state.save(state_dir)  # recorded at once, so `down` can stop a half-started cluster
    try:
        wait_port(head_port, 90)
        if dashboard:
            wait_port(dashboard_port, 90)
        for i in range(1, workers + 1):
            tmp = _ray_temp_root(state_dir) / f"worker{i}"
            log = state_dir / f"worker{i}.log"
            pid = _spawn(
                [
                    _bin("ray"),
                    "start",
                    f"--address={address}",
                    *_node_args(i, tmp, worker_cpus, memory_gb, store_mb, port_offset),
                ],
                log,
                state_dir,
            )
            state.nodes.append(Node(f"worker{i}", pid, str(tmp), str(log)))
            state.save(state_dir)
        _wait_nodes(address, 1 + workers, 90, state_dir)
    except Exception:
        down(state_dir)
        raise
    return state


def _wait_nodes(address: str, n: int, timeout: float, state_dir: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(alive_nodes(address, state_dir)) >= n:
            return
        time.sleep(0.5)
    raise TimeoutError(f"fewer than {n} nodes joined {address} within {timeout:.0f} s")


def alive_nodes(address: str, state_dir: Path = DEFAULT_STATE_DIR) -> list[dict]:
    """The cluster's live nodes, from the GCS (a short-lived `ray.nodes()` in a subprocess, so
    this process does not stay connected)."""
    code = (
        f"import json, ray; ray.init(address={address!r}, log_to_driver=False, logging_level='ERROR'); "
        "print(json.dumps([{'id': n['NodeID'], 'cpus': n['Resources'].get('CPU', 0), "
        "'raylet_pid': n.get('RayletPid')} for n in ray.nodes() if n['Alive']]))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=_env(state_dir), capture_output=True, text=True, timeout=60)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return []


def down(state_dir: Path = DEFAULT_STATE_DIR, grace_s: float = 5.0) -> list[int]:
    """Stops exactly the process groups this state file records (workers first, then the head,
    then the MLflow server); returns the PIDs that were still running."""
    state = ClusterState.load(state_dir)
    if state is None:
        return []
    pgids = [n.pid for n in reversed(state.nodes)] + ([state.mlflow_pid] if state.mlflow_pid else [])
    stopped = [p for p in pgids if alive(p)]
    for p in stopped:
        try:
            os.killpg(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(alive(p) for p in stopped):
        time.sleep(0.1)
    for p in stopped:  # `ray start --block` does not always exit on SIGTERM
        if alive(p):
            try:
                os.killpg(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in stopped):
        time.sleep(0.1)
    (state_dir / "state.json").unlink(missing_ok=True)
    auth.forget(state_dir)
    import shutil

    shutil.rmtree(_ray_temp_root(state_dir), ignore_errors=True)  # Ray's session files (logs stay in state_dir)
    return stopped


def status(state_dir: Path = DEFAULT_STATE_DIR) -> str:
    state = ClusterState.load(state_dir)
    if state is None:
        return f"no cluster recorded in {state_dir}"
    lines = [f"address {state.address}  dashboard {state.dashboard}"]
    for n in state.nodes:
        lines.append(f"  {n.name:8s} pid {n.pid:7d}  {'running' if alive(n.pid) else 'stopped'}  log {n.log}")
    if state.mlflow_pid:
        lines.append(
            f"  mlflow   pid {state.mlflow_pid:7d}  "
            f"{'running' if alive(state.mlflow_pid) else 'stopped'}  {state.mlflow_uri}"
        )
    live = alive_nodes(state.address, state_dir) if any(alive(n.pid) for n in state.nodes) else []
    lines.append(f"{len(live)} live nodes, {sum(n['cpus'] for n in live):g} CPUs")
    return "\n".join(lines)


def raylet_pid(node: Node) -> int | None:
    """PID of the raylet a node started (it runs in the node's process group)."""
    return next((pid for pid, comm, state in _group_members(node.pid) if comm == "raylet" and state != "Z"), None)
