"""The kernel backend (issue 71; docs/kernel.md): this host's Linux TCP in network namespaces.
Runs need root (CI runs as root); without it they skip, saying why, and the refusal itself is
tested by dropping the capabilities of a child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sim
from sweeps.backends import kernel
from sweeps.backends import kernel_testbed as tb
from tests.conftest import ROOT
from tests.sweeps.helpers import runs, sweep

NOT_HERE = kernel.missing()
NEEDS_ROOT = pytest.mark.skipif(NOT_HERE is not None, reason=NOT_HERE or "")
SHORT = ["tcp=cubic", "core_mbps=10", "rtt_ms=20", "duration_s=4", "warmup_s=1"]


def ours() -> set[str]:
    """The testbed namespaces on the host now."""
    from pyroute2 import netns

    return {n for n in netns.listnetns() if n.startswith(tb.PREFIX)}


def leaked(before: set[str]) -> set[str]:
    """Testbed namespaces made since `before` whose maker (the pid in their name) has exited:
    another test's run, live on the other worker, keeps its own until it ends."""

    def alive(name: str) -> bool:
        try:
            os.kill(int(name.split("-")[1]), 0)
        except ProcessLookupError:
            return False
        return True

    return {n for n in ours() - before if not alive(n)}


def test_the_kernel_backend_names_the_first_field_it_cannot_mirror():
    cases = [
        (dict(tcp="sack"), r"^tcp: the kernel backend runs cubic \(its cubic\), bbr \(its bbr\), reno_linux"),
        (dict(traffic="web"), r"^traffic: the kernel backend runs long-lived flows only"),
        (dict(access_mbps=100.0), r"^access_mbps: the kernel backend has no access links"),
        (dict(flows=1001), r"^flows: the kernel backend opens one socket a flow, at most 1000"),
        (dict(pkt_bytes=100), r"^pkt_bytes: the kernel backend's MTU must be in \[576, 9000\]"),
        (dict(tcp={"preset": "cubic", "min_rto_ms": 1000}), r"^tcp_min_rto_ms: the kernel backend supports only"),
        (dict(queue="foo_not_a_queue"), r"^queue"),
    ]
    for fields, pattern in cases:
        try:
            cfg = sim.SimConfig(**{"tcp": "cubic", **fields})
        except ValueError:
            continue  # refused by the config itself: nothing reaches the backend
        with pytest.raises(ValueError, match=pattern):
            kernel.check(cfg)


def test_without_root_the_backend_is_refused_in_one_line(tmp_path):
    """Root with CAP_NET_ADMIN and CAP_SYS_ADMIN dropped is what a user without them is to it."""
    drop = ["setpriv", "--inh-caps=-net_admin,-sys_admin", "--bounding-set=-net_admin,-sys_admin"]
    cmd = [*(drop if os.geteuid() == 0 else []), sys.executable, "-m", "sweeps", "backend=kernel", *SHORT]
    cmd.append(f"results_dir={tmp_path / 'results'}")
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=_env())
    assert res.returncode == 2, res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "root (CAP_NET_ADMIN and CAP_SYS_ADMIN)" in lines[0], res.stderr
    assert not (tmp_path / "results" / "runs").exists(), "nothing ran"


@NEEDS_ROOT
def test_an_aqm_this_kernel_lacks_is_refused_naming_it(tmp_path):
    res = sweep(tmp_path, "backend=kernel", "queue=codel", *SHORT, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: queue:") and "codel" in lines[0], res.stderr
    if not tb.has_qdisc("codel"):
        assert "this kernel has no codel qdisc" in lines[0]


def test_the_pfifo_holds_the_packets_waiting_and_the_engine_counts_the_one_sent():
    cfg = sim.SimConfig(flows=1, buffer_pkts=8)
    flows = [{"rtt_ms": 50.0, "start_s": 0.0}]
    assert kernel.request(cfg, flows)["limit_pkts"] == 7
    assert kernel.request(cfg, flows)["burst_us"] == kernel.HTB_BURST_US
    assert kernel.request(sim.SimConfig(flows=1, buffer_pkts=1), flows)["limit_pkts"] == 1


@NEEDS_ROOT
def test_the_bottleneck_bursts_by_its_timer_slack_not_by_a_packet():
    """htb's burst, read back from the kernel: HTB_BURST_US at any rate, not a whole packet (a
    packet's time is 600 us at 20 Mb/s and 120 us at 100 Mb/s)."""
    from pyroute2 import NetNS

    tick_ns = 64  # htb reports `buffer` in psched ticks: PSCHED_SHIFT 6 (include/net/pkt_sched.h)
    for mbps in (20.0, 100.0):
        with tb.testbed(
            f"burst{int(mbps):03d}", tb.Spec(mbps, 7, 1500, 10, False, 4 << 20, kernel.HTB_BURST_US)
        ) as bed:
            r = NetNS(bed.names["r"])
            try:
                (cls,) = [c for c in r.get_classes(index=bed.bottleneck) if c.get_attr("TCA_OPTIONS")]
                parms = cls.get_attr("TCA_OPTIONS").get_attr("TCA_HTB_PARMS")
            finally:
                r.close()
        assert abs(parms["buffer"] * tick_ns / 1e3 - kernel.HTB_BURST_US) < 0.1 * kernel.HTB_BURST_US, parms
        assert parms["cbuffer"] == parms["buffer"]


@NEEDS_ROOT
def test_the_sink_reads_at_real_time_priority_below_the_delay_line():
    """A preempted sink makes stretch ACKs (docs/kernel.md): it runs SCHED_FIFO, and below the
    delay line, which must never wait for it."""
    from sweeps.backends import kernel_run, kernel_traffic

    with tb.testbed("sinkprio", tb.Spec(20.0, 7, 1500, 10, False, 4 << 20, kernel.HTB_BURST_US)) as bed:
        sink = kernel_run._start(bed.names["d"], kernel_run._traffic("sink", "--port", "5201"))
        try:
            assert sink.stdout.readline().strip() == b"ready", sink.stderr.read()
            pid = int(subprocess.run(["ip", "netns", "pids", bed.names["d"]], capture_output=True, text=True).stdout)
            assert os.sched_getscheduler(pid) == os.SCHED_FIFO
            assert os.sched_getparam(pid).sched_priority == kernel_traffic.SINK_PRIORITY < 10
        finally:
            sink.stdin.close()
            sink.wait(10)


def test_the_rate_is_judged_only_while_the_backlog_kept_the_link_busy():
    from sweeps.backends.kernel_records import emulation_metrics

    cfg = sim.SimConfig(core_mbps=20.0, pkt_bytes=1500)  # 0.6 ms a packet
    line = {"lateness_p50_ns": 0, "lateness_p99_ns": 0, "lateness_max_ns": 0}

    def reads(backlog: int, sent: int, every: int = 1) -> list[dict[str, float]]:
        return [
            {
                "time_s": i * 0.01,
                "packets": i * sent,
                "bytes": i * sent * 1514,
                "backlog_pkts": backlog * (i % every == 0),
            }
            for i in range(20)
        ]

    # 8 waiting last 4.8 ms, less than the 10 ms between reads: a half-idle link is not judged.
    shallow = emulation_metrics(cfg, reads(8, 8), line)
    assert shallow["emulation_rate_ratio"] is None and shallow["timing_suspect"] is None
    # 20 waiting last 12 ms: the link was busy throughout, and 8 packets in 10 ms is 0.48 x its rate.
    deep = emulation_metrics(cfg, reads(20, 8), line)
    assert abs(deep["emulation_rate_ratio"] - 0.48) < 1e-9 and "0.480 x its rate" in deep["timing_suspect"]
    # Busy every other read: 10 stretches of 17 packets' time, each counted to within a packet, are
    # too coarse for a 1% bound.
    assert emulation_metrics(cfg, reads(20, 8, every=2), line)["emulation_rate_ratio"] is None


@NEEDS_ROOT
def test_a_kernel_run_measures_the_link_its_flows_and_its_own_timing():
    before = ours()
    cfg = sim.SimConfig(tcp="bbr", flows=2, core_mbps=10.0, rtt_ms=20.0, duration_s=4.0, warmup_s=1.0)
    res = kernel.run(cfg)
    m = res.metrics
    assert 0.9 < m["utilization"] <= 1.005, m  # a saturated link, counted by its pfifo
    assert m["buffer_pkts"] == cfg.buffer_pkts and m["bottleneck_pkts"] > 0
    assert m["emulation_lateness_p99_us"] >= m["emulation_lateness_p50_us"] >= 0
    assert m["emulation_rate_ratio"] is None or abs(m["emulation_rate_ratio"] - 1) < 0.05, m
    flows = res.details["flows"].to_pylist()
    assert len(flows) == 2 and all(f["goodput_mbps"] > 0 for f in flows), flows
    assert not leaked(before), "the run removed its namespaces"


@NEEDS_ROOT
def test_a_kernel_run_counts_its_flows_timeouts():
    """`timeouts` from each socket's tcpi_total_rto (Linux 6.7 on; NULL before): 16 CUBIC flows in
    a 2-packet buffer time out, one flow in 2 BDP does not, and each RTO resends a packet."""
    has_rto = tuple(int(x) for x in os.uname().release.split(".")[:2]) >= (6, 7)
    crowded = sim.SimConfig(
        tcp="cubic", flows=16, core_mbps=10.0, rtt_ms=10.0, buffer_pkts=2, duration_s=5.0, warmup_s=1.0
    )
    alone = sim.SimConfig(
        tcp="cubic", flows=1, core_mbps=10.0, rtt_ms=10.0, buffer_pkts=17, duration_s=4.0, warmup_s=1.0
    )
    many, one = kernel.run(crowded), kernel.run(alone)
    if not has_rto:
        assert many.metrics["timeouts"] is None, many.metrics
        return
    per_flow = [f["timeouts"] for f in many.details["flows"].to_pylist()]
    assert many.metrics["timeouts"] == sum(per_flow) > 0, (many.metrics["timeouts"], per_flow)
    assert many.metrics["retransmits"] >= many.metrics["timeouts"], many.metrics
    assert one.metrics["timeouts"] == 0, one.metrics


@NEEDS_ROOT
def test_each_flow_runs_the_congestion_control_asked_for(tmp_path):
    """The sender reads TCP_CONGESTION back from every socket, and fails a run whose socket runs
    another module (this host's default is bbr: a silent fallback would pass for cubic)."""
    from sweeps.backends.kernel_traffic import _open

    flow = {"cc": "not_a_module", "port": 40999, "start_s": 0.0}
    with pytest.raises(OSError):
        _open(flow, {"src": "127.0.0.1", "dst": "127.0.0.1", "dst_port": 9})
    for name in ("cubic", "reno", "bbr"):
        if name in kernel.modules():
            s = _open({"cc": name, "port": 0}, {"src": "127.0.0.1", "dst": "127.0.0.1", "dst_port": 9})
            s.close()


@NEEDS_ROOT
def test_a_sweep_killed_with_minus_9_leaves_nothing_after_the_next_start(tmp_path):
    """Kill -9 of the sweep's process mid-run; the rerun reaps what is left of the first, stores
    each run once, and nothing of the first (namespace or process) remains."""
    args = ["-m", "backend=kernel", "tcp=cubic,reno_linux", "flows=2", "core_mbps=10", "rtt_ms=20"]
    args += ["duration_s=8", "warmup_s=2", "mlflow.enabled=false"]
    cmd = [sys.executable, "-m", "sweeps", *args, f"results_dir={tmp_path / 'results'}"]
    before = ours()
    first = subprocess.Popen(
        cmd, cwd=tmp_path, env=_env(), start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while not (ours() - before) and time.monotonic() < deadline:
            time.sleep(0.2)
        mid_run = ours() - before
        assert mid_run, "premise: a kernel run started within 120 s"
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
    finally:
        _stop_group(first.pid)
    res = sweep(tmp_path, *args, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert not (ours() & mid_run), "the first run's namespaces are gone"
    assert _group_members(first.pid) == [], "no process of the first sweep is left"
    stored = runs(tmp_path).to_pylist()
    ids = [r["run_id"] for r in stored]
    assert len(ids) == len(set(ids)) == 2 and all(r["status"] == "ok" for r in stored), stored


def _env() -> dict[str, str]:
    return dict(os.environ, RAY_AUTH_MODE="disabled", PYTHONPATH=str(ROOT))


def _group_members(pgid: int) -> list[int]:
    """The processes still in process group `pgid` (what the killed sweep started)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(d.name))
    return out


def _stop_group(pgid: int) -> None:
    """Ends what is left of the killed sweep's process group (by its PGID), if the test failed
    before the rerun looked; Ray's own processes outlive a driver killed with -9 for a moment."""
    deadline = time.monotonic() + 60
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.5)
    if _group_members(pgid):
        os.killpg(pgid, signal.SIGKILL)


@NEEDS_ROOT
def test_the_reaper_removes_a_dead_runs_namespaces_and_kills_what_runs_in_them():
    """A run killed with -9 leaves its namespaces, named after its dead pid, with processes in
    them: the next run's `reap` kills those and removes the namespaces; a live run's stay."""
    from pyroute2 import netns

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    left, live = f"{tb.PREFIX}{dead_pid}-deadbeef-r", f"{tb.PREFIX}{os.getpid()}-cafe0001-r"
    for name in (left, live):
        netns.create(name)
    sleeper = subprocess.Popen(["ip", "netns", "exec", left, "sleep", "600"])
    try:
        deadline = time.monotonic() + 10
        while not subprocess.run(["ip", "netns", "pids", left], capture_output=True, text=True).stdout.strip():
            assert time.monotonic() < deadline, "premise: the sleeper runs in the namespace"
            time.sleep(0.05)
        assert left in tb.reap()
        assert sleeper.wait(10) == -signal.SIGKILL
        assert left not in ours() and live in ours()
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        tb.remove(live)
        tb.remove(left)
