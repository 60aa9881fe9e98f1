"""Backends (sweeps/backends/): the same config on our engine, on ns-2 and on ns-3. The mapping
and the records' translation are tested everywhere; the simulators themselves where installed
(`.ci/run` installs ns-2; ns-3 is an optional extra: `pip install -e '.[ns3]'`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from statistics import fmean

import pytest

import sim
from sweeps import schema
from sweeps.backends import BACKENDS, get, ns2, ns3
from sweeps.backends.base import CONTRACT_VERSION, DETAIL_SCHEMAS, code_digest, with_resolved_buffer
from sweeps.backends.records import drawn_flows, parse_records, to_result
from sweeps.store import RUNS_SCHEMA
from tests.conftest import ROOT
from tests.sweeps.helpers import sweep

NO_NS2 = pytest.mark.skipif(ns2.missing() is not None, reason="ns-2 not installed (Debian: apt-get install ns2)")
NO_NS3 = pytest.mark.skipif(ns3.missing() is not None, reason="ns-3 not installed (pip install -e '.[ns3]')")


def test_the_registry_names_every_backend_and_refuses_others():
    assert list(BACKENDS) == ["engine", "ns2", "ns3", "kernel"]
    assert all(b.name == name and b.install and b.resources.get("num_cpus") == 1 for name, b in BACKENDS.items())
    with pytest.raises(ValueError, match=r"^backend: unknown backend 'ns4'; allowed: engine, ns2, ns3, kernel$"):
        get("ns4")
    assert get("engine").version() == sim.ENGINE_VERSION and get("engine").missing() is None


SCENARIO_CODE = {
    # a894e181e7d1 until tcp.send_jitter_ms mapped to overhead_ (0: as before); 461f60d8873f until the
    # 2.6.22 CUBIC's preset was renamed cubic_2622 (issue 69: ns-2 runs it the same)
    ("ns2", "3d7e9234"): "4aa99aabc649",
    ("ns3", "cf88d8b8"): "8fe879d56427",  # 48dd87288ccd until a comment of ns3_dumbbell.cc changed
    # e4c67c86f43a until the tcp.compat keys were accepted (ns-3 runs the same); c7253776a677 until the
    # presets linux and cubic were renamed cubic and cubic_2622 (issue 69: each config runs the same);
    # 5ba969c5c03e until tcp.handshake was mapped (issue 72: ns-3 always ran a SYN exchange)
    ("ns3", "q1514"): "c2c559d943be",
}
"""Per backend and hand-kept scenario version, the digest of the scenario and mapping code it
stands for (`base.code_digest`)."""
SCENARIOS = {"ns2": (ns2, ns2.TCL, "SCRIPT_VERSION"), "ns3": (ns3, ns3.SCENARIO, "SCENARIO_VERSION")}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_backends_scenario_version_stands_for_the_code_that_runs(name, tmp_path):
    """ns-2's and ns-3's runs are cached under a hand-kept version: a change to the scenario or
    the mapping's code must bump it, or be recorded here as running the simulator the same;
    docstrings and comments are not code."""
    module, scenario, attr = SCENARIOS[name]
    version, source = getattr(module, attr), Path(module.__file__)
    now = code_digest(source, scenario)
    assert SCENARIO_CODE.get((name, version)) == now, (
        f"{source.name}'s code or its scenario changed: if {name} now runs some config it accepted "
        f"before differently, give {attr} a new value; else record {now!r} for it in SCENARIO_CODE"
    )
    reworded, edited = tmp_path / "reworded.py", tmp_path / "edited.py"
    text = source.read_text()
    reworded.write_text(text.replace('"""', '"""Reworded. ', 1) + "\n# a comment\n")
    edited.write_text(text + "\nEXTRA = 1\n")
    assert code_digest(reworded, scenario) == now != code_digest(edited, scenario)


CONTRACT_CONFIGS = {
    "sack, stanford rule": dict(
        tcp="sack", flows=20, rtt_ms=100, rtt_spread_ms=40, start_window_s=1, buffer_policy="stanford", seed=3
    ),
    "bbr / cubic mix, bdp rule": dict(
        tcp_mix="bbr:1,cubic:1",
        tcp="cubic",
        flows=2,
        rtt_ms=60,
        rtt_spread_ms=80,
        start_window_s=2,
        buffer_policy=dict(name="bdp", factor=0.5, rtt_ms=60),
        core_mbps=100,
        seed=2,
    ),
}
CONTRACT_INPUTS = {
    "0.16.0": "36015c230b8a78b5",
    "0.17.0": "d4e5ceb069d3f787",  # wmax_pkts defaults to 100,000 (was 64)
    # the preset linux is cubic (issue 69): the mix's group label. 9ae66abbbd7a8027 until the cubic preset
    # set tcp.alpha_one=false (issue 72): its hashed config gains the key, so a cubic run's id changes by
    # itself, and no other config's hashes differently (a law's neutral default is not hashed).
    # 129dfbb0d9016b3f until the Linux presets set tcp.handshake=true (issue 72, engine 0.27.0): the same
    # way, their configs' ids change by themselves (their kernel runs re-ran once), no other config's.
    # 0fba447d550367b3 until the cubic and reno_linux presets set tcp.tso_defer=true (issue 72, engine
    # 0.30.0): the same way again
    "0.21.0": "1c3234f807ec4b00",
}
"""Per backends.base.CONTRACT_VERSION, the digest of what other backends take from the engine."""


def contract_digest(seed_shift: int = 0) -> str:
    """The flows' RTTs, start times and groups the engine draws, and the bottleneck link's static
    columns (its resolved buffer included), for the reference configs."""
    h = hashlib.sha256()
    for kw in CONTRACT_CONFIGS.values():
        cfg = sim.SimConfig(**{**kw, "seed": kw["seed"] + seed_shift, "duration_s": 5, "warmup_s": 1})
        drawn = drawn_flows(cfg)
        flows = drawn.flows.select(["rtt_ms", "start_s", "tcp_group"]).to_pydict()
        static = ("link_id", "name", "rate_mbps", "delay_ms", "buffer_pkts", "buffer_policy", "queue")
        link = drawn.links.slice(0, 1).select(list(static)).to_pydict()
        config = schema.without_engine_model(schema.hashed_config(with_resolved_buffer(cfg, drawn).to_dict()))
        h.update(json.dumps([flows, link, config], sort_keys=True).encode())
    return h.hexdigest()[:16]


def test_the_engines_contract_with_other_backends_is_versioned():
    """ns-2's and ns-3's runs key on CONTRACT_VERSION, not ENGINE_VERSION: what they take from the
    engine must not change under it (else bump it, and record the new digest here)."""
    now = contract_digest()
    assert CONTRACT_INPUTS.get(CONTRACT_VERSION) == now, (
        f"what other backends take from the engine changed: give sweeps.backends.base.CONTRACT_VERSION "
        f"the engine's version and record {now!r} for it in CONTRACT_INPUTS"
    )
    assert contract_digest(seed_shift=1) != now


def test_an_engine_version_bump_keeps_other_backends_run_ids_and_every_config_id(monkeypatch):
    """A bump re-runs the engine's runs only: ns-3's stay cached and still pair with the new ones."""
    cfg = sim.SimConfig(flows=4)
    before = (schema.run_id_of(cfg), schema.run_id_of(cfg, "ns3", "3.44+x"), schema.config_id_of(cfg))
    same = sim.ENGINE_VERSION == CONTRACT_VERSION
    assert (before[0] == before[2]) == same, "an engine run_id is its config_id exactly while the versions agree"
    monkeypatch.setattr(sim, "ENGINE_VERSION", "99.0.0")
    after = (schema.run_id_of(cfg), schema.run_id_of(cfg, "ns3", "3.44+x"), schema.config_id_of(cfg))
    assert after[0] != before[0] and after[1:] == before[1:]


def test_a_parameter_added_at_its_neutral_default_keeps_every_id():
    """A parameter in NEUTRAL_AT_DEFAULT is hashed only away from its default, which is the
    engine's: a run stored before it existed keeps its run_id; setting it changes the id."""
    for (section, key), default in schema.NEUTRAL_AT_DEFAULT.items():
        full = sim.SimConfig(flows=4).to_dict()
        if key not in full[section]:  # a window law's own parameter: a config of the law that has it
            law = next(t["cc"] for n in sim.VARIANTS if key in (t := sim.SimConfig(tcp=n).to_dict()[section]))
            full = sim.SimConfig(flows=4, tcp={"cc": law}).to_dict()
        assert full[section][key] == default, f"{section}.{key}: its neutral default is not the engine's"
        before = {**full, section: {k: v for k, v in full[section].items() if k != key}}
        assert schema._ids(before, "ns3", "v") == schema._ids(full, "ns3", "v")
        other = (not default) if isinstance(default, bool) else "ns3" if isinstance(default, str) else default + 1
        assert schema._ids({**full, section: {**full[section], key: other}}, "ns3", "v") != schema._ids(
            full, "ns3", "v"
        )


def test_the_engines_own_model_parameters_key_only_the_engines_runs():
    """ENGINE_MODEL_ONLY's parameters change an engine run's run_id, and neither another backend's
    run_id nor any config_id: the kernel's runs of a Linux preset stay cached and paired."""
    for section, key in schema.ENGINE_MODEL_ONLY:
        full = sim.SimConfig(tcp="bbr", flows=4).to_dict()
        before = {**full, section: {k: v for k, v in full[section].items() if k != key}}
        flipped = {**full, section: {**full[section], key: not full[section][key]}}
        for cfg in (before, flipped):
            assert schema._ids(cfg, "kernel", "v") == schema._ids(full, "kernel", "v")
            assert schema._ids(cfg, "engine", "")[1] == schema._ids(full, "engine", "")[1]
        assert schema._ids(flipped, "engine", "")[0] != schema._ids(full, "engine", "")[0]
        law = {"cc": "bbr", "recovery": "sack", "release": "paced", "long_term": False}
        for value in (False, True):  # no backend refuses them, whatever the preset of the same name sets
            ns3.check(sim.SimConfig(tcp={**law, key: value}))


def test_ns2_names_the_first_field_it_cannot_mirror():
    cases = [
        (dict(poisson_mbps=10.0), "^poisson_mbps: the ns2 backend supports only the default"),
        (dict(tcp={"cc": "cubic_2622", "recovery": "linux", "c": 0.8, "tick_ms": 1}), "^tcp_c: "),
        (dict(tcp="cubic_2622"), "^tcp.tick_ms: ns-2's TCP-Linux times RTTs in 1 ms jiffies"),
        (dict(topology="parking_lot", rtt_ms=100), "^topology: the ns2 backend supports only the default"),
        (dict(tcp="paced"), "^tcp: the ns2 backend supports reno, newreno, sack, cubic_2622, .*, got 'paced'"),
        (dict(buffer_policy="abs"), "^buffer_policy: the ns2 backend supports only the default"),
        (dict(seed=0), "^seed: the ns2 backend needs seed >= 1"),
        (dict(short_mbps=1.0, short_flow_pkts=1), "^short_flow_pkts: the ns2 backend needs >= 2"),
        (dict(tcp={"cc": "cubic_2622", "recovery": "sack", "tick_ms": 1}), "^tcp_recovery: .*'linux'"),
        (dict(queue="codel"), "^queue: the ns2 backend supports droptail, red, got 'codel'"),
        (dict(tcp={"ecn": True}, queue={"name": "red", "ecn": True}), "^queue.ecn: the ns2 backend supports only"),
        (dict(tcp={"cc": "newreno", "compat": "ns3"}), "^tcp_compat: the ns2 backend supports only"),
    ]
    for fields, message in cases:
        with pytest.raises(ValueError, match=message):
            ns2.check(sim.SimConfig(**fields))


def test_ns3_names_the_first_field_it_cannot_mirror():
    for fields, message in [
        (dict(tcp="reno"), "^tcp: the ns3 backend supports .*ns-3 has no Reno"),
        (dict(tcp="paced"), "^tcp: the ns3 backend supports"),
        (dict(tcp="sack", short_mbps=5.0), "^short_mbps: the ns3 backend supports only the"),
        (dict(tcp={"cc": "newreno", "recovery": "sack", "max_burst_pkts": 4}), "^tcp_max_burst_pkts: "),
        (dict(tcp="sack", pkt_bytes=50), "^pkt_bytes: the ns3 backend needs > 52"),
    ]:
        with pytest.raises(ValueError, match=message):
            ns3.check(sim.SimConfig(**fields))
    ns3.check(
        sim.SimConfig(tcp={"cc": "newreno", "recovery": "sack", "delayed_ack": True}, flows=30, access_mbps=1000.0)
    )  # mapped: no error


def test_a_static_rule_reaches_ns2_and_ns3_as_the_buffer_the_engine_resolved():
    # Dick's table (issue 31): stanford x 0.5 at 100 ms nominal RTT, 30 flows, 45 Mb/s -> 51 packets.
    policy = {"name": "stanford", "factor": 0.5, "rtt_ms": 100}
    cfg = sim.SimConfig(flows=30, core_mbps=45, rtt_ms=100, rtt_spread_ms=40, buffer_policy=policy)
    ns2.check(cfg)
    ns3.check(dataclasses.replace(cfg, tcp="newreno"))
    mirrored = with_resolved_buffer(cfg, ns2.drawn_flows(cfg))
    assert (mirrored.buffer_policy.name, mirrored.buffer_pkts) == ("fixed", 51)
    pairs = dict(zip(*[iter(ns2.script_args(mirrored, ns2.drawn_flows(cfg)))] * 2))
    assert pairs["buffer_pkts"] == "51"
    with pytest.raises(ValueError, match="^buffer_policy: the ns3 backend supports only the default"):
        ns3.check(sim.SimConfig(tcp="newreno", buffer_policy="adt"))


def test_ns2_script_args_carry_every_mapped_field_and_the_engines_flows():
    tcp = {"cc": "newreno", "recovery": "newreno", "limited_transmit": False, "init_cwnd_pkts": 2.0}
    cfg = sim.SimConfig(tcp=tcp, flows=7)
    drawn = ns2.drawn_flows(cfg)
    args = ns2.script_args(cfg, drawn)
    pairs = dict(zip(args[::2], args[1::2]))
    assert pairs["agent"] == "Newreno" and pairs["flows"] == "7"
    assert pairs["limited_transmit"] == "0" and pairs["init_cwnd_pkts"] == "2"  # integers for ns-2's int vars
    assert set(pairs) == set(ns2.MAPPED.values()) | {"ca", "sink", "timestamps", "flow_rtts_ms", "flow_starts_s"}
    assert (pairs["ca"], pairs["sink"], pairs["access_mbps"]) == ("none", "TCPSink", "0")
    # Paired: ns-2 runs the RTTs and start times our engine draws for the seed, over a full run too.
    flows = sim.run(dataclasses.replace(cfg, duration_s=2, warmup_s=1)).flows
    assert [float(x) for x in pairs["flow_rtts_ms"].split()] == flows["rtt_ms"].to_pylist()
    assert [float(x) for x in pairs["flow_starts_s"].split()] == flows["start_s"].to_pylist()
    for name in ns2.LINUX_MODULES:
        c = sim.SimConfig(tcp={"cc": ns2.PRESET_OF_MODULE[name], "recovery": "linux", "tick_ms": 1}, access_mbps=1000.0)
        args = ns2.script_args(c, ns2.drawn_flows(c))
        pairs = dict(zip(args[::2], args[1::2]))
        assert (pairs["agent"], pairs["ca"], pairs["sink"]) == ("Linux", name, "TCPSink/Sack1"), name
        assert pairs["timestamps"] == ("1" if name == "lp" else "0") and pairs["access_mbps"] == "1000"


RECORDS = """sample time_s 1 departures 100 arrivals 110 drops 5 qsum 2.5 acked 90 cwnd_sum 20 started 2 ca 1
warm departures 100 arrivals 110 drops 5 qsum 2.5 short_started 0 short_done 0
flow id 0 at warm acked 40 rexmit_pkts 1 timeouts 0 cwnd_cuts 1 sent_pkts 45
flow id 1 at warm acked 50 rexmit_pkts 2 timeouts 1 cwnd_cuts 2 sent_pkts 55
sample time_s 2 departures 1350 arrivals 1400 drops 30 qsum 9.5 acked 1300 cwnd_sum 30 started 2 ca 2
end departures 1350 arrivals 1400 drops 30 qsum 9.5 short_started 0 short_done 0
flow id 0 at end acked 640 rexmit_pkts 11 timeouts 1 cwnd_cuts 4 sent_pkts 660
flow id 1 at end acked 650 rexmit_pkts 12 timeouts 2 cwnd_cuts 6
held pkts 20
"""


def test_records_become_the_engines_tables_with_null_for_what_is_not_measured():
    cfg = sim.SimConfig(
        tcp="newreno",
        flows=2,
        core_mbps=10.0,
        pkt_bytes=1000,
        duration_s=2.0,
        warmup_s=1.0,
        sample_interval_s=1.0,
        buffer_pkts=30,
    )
    res = to_result(cfg, ns2.drawn_flows(cfg), parse_records(RECORDS), wall_s=0.5)
    m = res.metrics
    assert m["utilization"] == pytest.approx(1250 * 8000 / 10e6)  # 1250 departures in the 1-s window
    assert m["loss_rate"] == pytest.approx(25 / 1290) and m["mean_queue_pkts"] == pytest.approx(7.0)
    assert m["goodput_mbps"] == pytest.approx(1200 * 8000 / 1e6)
    assert (m["timeouts"], m["fast_retransmits"], m["retransmits"]) == (2, 5, 20)
    assert m["p99_queue_pkts"] is None and m["events"] is None  # not measured: NULL, not 0
    assert {t: res.details[t].schema for t in DETAIL_SCHEMAS} == DETAIL_SCHEMAS
    flows = res.details["flows"].to_pylist()
    assert [f["sent_pkts"] for f in flows] == [660, None]  # flow 1's end record has no sent_pkts
    assert res.details["classes"].to_pylist()[0]["offered_mbps"] is None  # so the class's offered load is NULL
    ts = res.details["timeseries"].to_pylist()
    assert [r["utilization"] for r in ts] == pytest.approx([0.08, 1.0]) and ts[1]["arrivals"] == 1290
    assert res.details["links"].to_pylist()[0]["held_at_end"] == 20
    with pytest.raises(RuntimeError, match="no 'held' record"):
        parse_records(RECORDS.replace("held pkts 20\n", ""))
    with pytest.raises(ValueError, match="metrics the summary schema lacks"):
        type(res)({"utilisation": 1.0}, res.details)


def test_runs_record_the_backend_its_version_and_a_config_id():
    for column in ("backend", "backend_version", "config_id"):
        assert column in RUNS_SCHEMA.names and RUNS_SCHEMA.field(column).metadata[b"doc"]


@NO_NS2
def test_a_sweep_on_engine_and_ns2_stores_both_and_compare_pairs_them(tmp_path):
    # Acceptance 4: this runs the engine's NewReno and ns-2's on the same flows, so a change to
    # the engine's NewReno that shifts its results fails here; nothing is read from a stored reference.
    res = sweep(
        tmp_path,
        "-m",
        "backend=engine,ns2",
        "tcp=newreno",
        "flows=20",
        "core_mbps=10",
        "buffer_pkts=15,40",
        "rtt_ms=100",
        "rtt_spread_ms=40",
        "wmax_pkts=10000",
        "duration_s=60",
        "warmup_s=20",
        "seed=1,2",
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    from analysis.compare import compare
    from analysis.db import connect

    con = connect(tmp_path / "results")
    rows = con.execute("""SELECT backend, count(*), count(DISTINCT config_id), count(DISTINCT run_id),
                          any_value(backend_version) FROM runs WHERE status = 'ok'
                          GROUP BY ALL ORDER BY 1""").fetchall()
    assert [r[:4] for r in rows] == [("engine", 4, 4, 4), ("ns2", 4, 4, 4)]
    assert rows[0][4] == sim.ENGINE_VERSION and rows[1][4].startswith("2.35")
    cmp = compare(con, "utilization", ["buffer_pkts"], threshold=0.03)
    assert [r["buffer_pkts"] for r in cmp.rows] == [15, 40]
    assert all(0.5 < r["ns2"] <= 1 and abs(r["ns2 - engine"]) < 0.03 for r in cmp.rows), cmp.rows
    assert cmp.disagreeing() == []
    # The detail tables hold ns-2's runs too, in the engine's schema.
    per = dict(
        con.execute("""SELECT r.backend, count(*) FROM timeseries t JOIN runs r USING (run_id, exec_id)
                              GROUP BY 1""").fetchall()
    )
    assert per["engine"] == per["ns2"] == 4 * 600
    flows = con.execute("""SELECT avg(f.goodput_mbps) FILTER (WHERE r.backend = 'ns2'),
                                  avg(f.goodput_mbps) FILTER (WHERE r.backend = 'engine')
                           FROM flows f JOIN runs r USING (run_id, exec_id)""").fetchone()
    assert flows[0] == pytest.approx(flows[1], rel=0.05)
    out = tmp_path / "cmp.png"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "compare",
            "--results",
            str(tmp_path / "results"),
            "--by",
            "buffer_pkts",
            "--plot",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert cli.returncode == 0, cli.stderr
    assert "ns2 vs engine: 2 configs" in cli.stdout and "0 of 2 configs differ by more than 0.015" in cli.stdout
    assert out.read_bytes()[:4] == b"\x89PNG"


@NO_NS2
def test_a_field_ns2_cannot_mirror_and_a_missing_ns2_are_refused_before_anything_runs(tmp_path):
    res = sweep(tmp_path, "-m", "backend=engine,ns2", "tcp=paced", "buffer_pkts=5,10", timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("error: tcp: the ns2 backend supports reno, newreno, sack") and "paced" in res.stderr
    assert not (tmp_path / "results").exists()
    # Without `ns` on PATH: the install command, by name.
    bin_dir = os.path.dirname(sys.executable)
    env_path = os.environ["PATH"]
    try:
        os.environ["PATH"] = bin_dir
        res = sweep(tmp_path, "backend=ns2", timeout=120)
    finally:
        os.environ["PATH"] = env_path
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "backend: ns2: ns-2 is not installed" in res.stderr and "apt-get install ns2" in res.stderr


@pytest.mark.skipif(ns3.missing() is None, reason="ns-3 is installed here: its refusal is tested where it is not")
def test_a_missing_ns3_is_refused_with_its_install_command(tmp_path):
    res = sweep(tmp_path, "backend=ns3", "tcp=sack", timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "backend: ns3: ns-3 is not installed" in res.stderr and "pip install -e '.[ns3]'" in res.stderr


@NO_NS2
@pytest.mark.parametrize("flows, core_mbps", [(10, 10.0), (40, 20.0)])
def test_ns2_red_and_ours_agree(flows, core_mbps):
    # Our `red` follows ns-2's queue/red.cc: on one seed, utilization, loss and mean queue agree
    # (measured: 0.981 / 0.980, 0.0074 / 0.0078, 24.1 / 23.9 packets at 10 flows). A mean queue
    # this far below the 400-packet limit shows that ns-2 ran RED, not its drop-tail.
    red = {"name": "red", "min_th": 20, "max_th": 60, "max_p": 0.1}
    cfg = sim.SimConfig(
        tcp="sack",
        flows=flows,
        core_mbps=core_mbps,
        rtt_ms=100,
        rtt_spread_ms=40,
        pkt_bytes=1000,
        buffer_pkts=400,
        duration_s=60,
        warmup_s=20,
        queue=red,
    )
    theirs, ours = ns2.run(cfg).metrics, sim.run(cfg).metrics()
    assert theirs["utilization"] == pytest.approx(ours["utilization"], abs=0.03)
    assert theirs["loss_rate"] == pytest.approx(ours["loss_rate"], rel=0.25)
    assert theirs["mean_queue_pkts"] == pytest.approx(ours["mean_queue_pkts"], rel=0.2)
    assert theirs["mean_queue_pkts"] < 60


@NO_NS2
def test_ns2s_overhead_and_our_send_jitter_both_break_drop_tails_phase_effects():
    """8 SACK flows behind a 2 x BDP drop-tail at 20 Mb/s: without jitter some seed's flows share
    the link unevenly on both simulators (measured Jain: ns-2 0.33 / 0.87 / 0.83, ours 0.46 / 0.47 /
    0.73); with sends waiting up to a packet time (0.4 ms; ns-2's overhead_) every seed is fair."""

    def jain(goodputs):
        return sum(goodputs) ** 2 / (len(goodputs) * sum(g * g for g in goodputs))

    def jains(jitter_ms):
        out = []
        for seed in (1, 2, 3):
            tcp = {"cc": "newreno", "recovery": "sack", "send_jitter_ms": jitter_ms}
            cfg = sim.SimConfig(**PHASE, seed=seed, tcp=tcp)
            theirs = ns2.run(cfg).details["flows"].column("goodput_mbps").to_pylist()
            out.append((jain(theirs), jain(sim.run(cfg).flows.column("goodput_mbps").to_pylist())))
        return out

    assert min(min(pair) for pair in jains(0.4)) >= 0.85
    still = jains(0.0)
    assert min(p[0] for p in still) < 0.6 and min(p[1] for p in still) < 0.6, still


PHASE = dict(
    core_mbps=20,
    flows=8,
    rtt_ms=60,
    rtt_spread_ms=40,
    access_mbps=200,
    pkt_bytes=1000,
    buffer_pkts=300,
    wmax_pkts=100000,
    duration_s=60,
    warmup_s=20,
)


@NO_NS2
def test_ns2_short_flows_offer_their_load():
    # Short flows alone on an uncongested link: ns-2's pooled agents carry the configured 20%.
    cfg = sim.SimConfig(
        tcp="reno",
        flows=0,
        short_mbps=20.0,
        short_flow_pkts=14,
        core_mbps=100.0,
        buffer_pkts=10_000,
        rtt_ms=80.0,
        rtt_spread_ms=80.0,
        duration_s=30.0,
        warmup_s=5.0,
    )
    theirs = ns2.run(cfg).metrics
    ours = sim.run(cfg).metrics()
    assert theirs["utilization"] == pytest.approx(0.20, rel=0.05)
    assert ours["utilization"] == pytest.approx(0.20, rel=0.05)
    assert theirs["short_flows"] == pytest.approx(ours["short_flows"], rel=0.1)


@NO_NS2
@pytest.mark.parametrize(
    "tcp, buffer_pkts",
    [("westwood", 8), ("bic", 16), ("lp", 16), ("htcp", 32), ("cubic_2622", 64), ("highspeed", 256), ("sack", 128)],
)
def test_tcp_linux_and_engine_agree_on_abs_fig1(tcp, buffer_pkts):
    # ABS Fig. 1's set-up, from small buffers (where the recovery decides utilization) to large
    # ones (where the window law decides the loss rate); the mean of seeds 1-3 on each side, since
    # at 16 packets one run's utilization varies by 0.04 with the RTTs drawn. Westwood+ at 8 and
    # TCP-LP at 16 packets need ns-2's byte counting (ABC) and tick-counted RTTs (engine 0.14.0).
    law = {"cc": "newreno", "recovery": "sack"} if tcp == "sack" else {"cc": tcp, "recovery": "linux"}
    cfg = sim.SimConfig(
        tcp={**law, "tick_ms": 1},
        flows=10,
        core_mbps=100.0,
        rtt_ms=40.0,
        rtt_spread_ms=20.0,
        pkt_bytes=1500,
        wmax_pkts=100_000,
        access_mbps=1000.0,
        access_buffer_pkts=2500,
        buffer_pkts=buffer_pkts,
        duration_s=100.0,
        warmup_s=20.0,
    )
    cfgs = [dataclasses.replace(cfg, seed=s) for s in (1, 2, 3)]
    theirs = [ns2.run(c).metrics for c in cfgs]
    ours = [sim.run(c).metrics() for c in cfgs]
    util, loss, cuts = (
        [fmean(r[key] for r in rows) for rows in (ours, theirs)]
        for key in ("utilization", "loss_rate", "fast_retransmits")
    )
    assert abs(util[0] - util[1]) < 0.03, (theirs, ours)
    assert loss[0] == pytest.approx(loss[1], rel=0.25), (theirs, ours)
    # Loss events: TCP-Linux counts its window cuts in ncwndcuts_, ns-2's own agents in ncwndcuts1_.
    assert cuts[1] > 0 and cuts[0] == pytest.approx(cuts[1], rel=0.25), (theirs, ours)
    assert all(r["access_loss_rate"] == 0 for r in ours)


@NO_NS3
def test_ns3_runs_sack_newreno_beside_the_engine_in_one_process():
    cfg = sim.SimConfig(
        tcp="sack",
        flows=10,
        core_mbps=10.0,
        buffer_pkts=20,
        rtt_ms=100.0,
        rtt_spread_ms=40.0,
        duration_s=30.0,
        warmup_s=10.0,
    )
    first = ns3.run(cfg)
    second = ns3.run(dataclasses.replace(cfg, buffer_pkts=60))
    assert ns3._scenario.cache_info().misses == 1  # compiled once, reused (Simulator::Destroy between runs)
    ours = [sim.run(c).metrics() for c in (cfg, dataclasses.replace(cfg, buffer_pkts=60))]
    for theirs, mine in zip((first.metrics, second.metrics), ours):
        assert abs(theirs["utilization"] - mine["utilization"]) < 0.04, (theirs, mine)
        assert theirs["loss_rate"] == pytest.approx(mine["loss_rate"], rel=0.35)
    assert second.metrics["utilization"] > first.metrics["utilization"]
    assert len(first.details["timeseries"]) == 300 and len(first.details["flows"]) == 10


@NO_NS3
def test_ns3_cubic_takes_our_beta():
    """ns-3's TcpCubic defaults to beta 0.7, ours (Linux 2.6) to 819/1024: the backend passes ours.
    One CUBIC flow over 10 Mb/s, a 20-packet buffer: a deeper cut (0.5) costs utilization on both."""
    runs = {}
    for beta in (sim.SimConfig(tcp="cubic_2622").tcp.beta, 0.5):
        cfg = sim.SimConfig(
            tcp={"cc": "cubic_2622", "recovery": "sack", "beta": beta},
            flows=1,
            core_mbps=10.0,
            rtt_ms=100.0,
            buffer_pkts=20,
            wmax_pkts=10000,
            duration_s=30.0,
            warmup_s=10.0,
        )
        runs[beta] = (ns3.run(cfg).metrics["utilization"], sim.run(cfg).metrics()["utilization"])
    (theirs_08, ours_08), (theirs_05, ours_05) = runs.values()
    assert theirs_08 - theirs_05 > 0.04, runs
    assert abs(theirs_08 - ours_08) < 0.02 and abs(theirs_05 - ours_05) < 0.02, runs


@NO_NS3
def test_ns3_dctcp_agrees_with_ours_through_step_marking():
    """DCTCP as ns-3's TcpDctcp and as ours, 10 flows over 100 Mb/s at a 2-ms RTT (a BDP of 17
    packets), marked at K = 10 packets: the same utilization, queue and marked fraction."""
    cfg = sim.SimConfig(
        tcp={"cc": "dctcp", "recovery": "sack", "ecn": True, "min_rto_ms": 10, "tick_ms": 1},
        queue={"name": "step", "k_pkts": 10},
        flows=10,
        core_mbps=100.0,
        rtt_ms=2.0,
        buffer_pkts=200,
        wmax_pkts=10000,
        duration_s=5.0,
        warmup_s=1.0,
    )
    theirs, ours = ns3.run(cfg).metrics, sim.run(cfg).metrics()
    got = {k: (theirs.get(k), ours.get(k)) for k in (*AQM_METRICS, "timeouts")}
    assert abs(theirs["utilization"] - ours["utilization"]) < 0.03, got
    assert theirs["mean_queue_delay_ms"] == pytest.approx(ours["mean_queue_delay_ms"], rel=0.25, abs=0.2), got
    assert theirs["bottleneck_marks"] > 0 and theirs["mark_rate"] == pytest.approx(ours["mark_rate"], rel=0.35), got


def test_ns3_refuses_the_queue_settings_its_queue_discs_cannot_mirror():
    for queue, key in (
        ({"name": "red", "bytes": True}, "queue.bytes"),
        ({"name": "step", "k_pkts": 1}, "queue.k_pkts"),
        ({"name": "fq_codel"}, "queue.backlog_test"),
    ):
        cfg = dataclasses.replace(with_ecn(sim.SimConfig(tcp="sack"), True), queue=queue)
        with pytest.raises(ValueError, match=rf"^{key}: the ns3 backend"):
            ns3.check(cfg)
    _, attrs = ns3.qdisc_attributes(sim.SimConfig(tcp="sack", queue={"name": "red", "max_p": 0.1}, buffer_pkts=50))
    # 1 / max_p; the device queue holds one packet and the device transmits another
    assert attrs["LInterm"] == "10" and attrs["MaxSize"] == "48p"


def with_ecn(cfg: sim.SimConfig, ecn: bool) -> sim.SimConfig:
    return dataclasses.replace(cfg, tcp=dataclasses.replace(cfg.tcp, ecn=ecn))


AQM_CASES = [("red", False), ("codel", False), ("pie", False), ("fq_codel", False), ("red", True), ("codel", True)]


@NO_NS3
@pytest.mark.parametrize("queue,ecn", AQM_CASES + [("step", True)])
def test_ns3_queue_discs_agree_with_the_engine(queue, ecn):
    """Each discipline on ns-3 3.44 and on the engine, 10 SACK flows over 10 Mb/s with a buffer
    far above what the discipline keeps, one seed: the same regime within loose bounds. Measured
    (ns-3 / ours, engine 0.15.0): utilization 0.92-0.98 / 0.95-0.98 and step 0.83 / 0.85;
    early-drop or mark counts within 3-21%; mean sojourns within 0.2-2.4 ms. Issue 32's tighter
    bounds (0.03, 20%, 25% on means of 3 seeds) are for the grid of reports/aqm_backends.md."""
    q = {"name": queue, **({"ecn": True} if ecn and queue != "step" else {})}
    if queue == "step":
        q["k_pkts"] = 20
    if queue == "fq_codel":
        q["backlog_test"] = "flow"
    cfg = sim.SimConfig(
        tcp="sack",
        flows=10,
        core_mbps=10.0,
        buffer_pkts=400,
        rtt_ms=100.0,
        rtt_spread_ms=40.0,
        duration_s=60.0,
        warmup_s=20.0,
    )
    cfg = dataclasses.replace(with_ecn(cfg, ecn), queue=q)
    theirs, ours = ns3.run(cfg).metrics, sim.run(cfg).metrics()
    got = {k: (theirs.get(k), ours.get(k)) for k in AQM_METRICS}
    assert abs(theirs["utilization"] - ours["utilization"]) < 0.05, got
    assert theirs["mean_queue_delay_ms"] == pytest.approx(ours["mean_queue_delay_ms"], rel=0.3, abs=1.0), got
    if ecn:
        assert theirs["bottleneck_early_drops"] == ours["bottleneck_early_drops"] == 0, got
        assert theirs["bottleneck_marks"] > 0 and theirs["mark_rate"] == pytest.approx(ours["mark_rate"], rel=0.35), got
    else:
        assert theirs["bottleneck_marks"] == ours["bottleneck_marks"] == 0, got
        assert theirs["bottleneck_early_drops"] > 0 and theirs["loss_rate"] == pytest.approx(
            ours["loss_rate"], rel=0.25
        )


AQM_METRICS = (
    "utilization",
    "loss_rate",
    "mean_queue_delay_ms",
    "bottleneck_early_drops",
    "bottleneck_marks",
    "mark_rate",
)
