"""Hydra's own flags and overrides work as a Hydra user expects (issue 13): every flag of
`--help`, `hydra/...` groups, glob(), presets without `+` or without `-m`, tab completion.
Each case is a subprocess of the console script's code path, run without any simulation."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.sweeps.test_bad_input import TCP_OPTIONS

pytestmark = pytest.mark.check  # part of `make check`


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from sweeps.__main__ import cli; cli()", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})),
    )


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--cfg", "job", "flows=3"], "flows: 3"),
        (["--cfg", "job", "flows=3", "core_mbps=10"], "# cost (sim.estimate): about 2.6e+04 packets"),  # issue 36
        (["-c", "job", "tcp=paced"], "release: paced"),
        (["--info", "defaults"], "Defaults List"),
        (["-cn", "config", "--cfg", "job", "buffer_pkts=7"], "buffer_pkts: 7"),
        (["-cp", str(ROOT / "conf"), "-cn", "config", "--cfg", "job"], "flows:"),
        (["--config-dir", str(ROOT / "conf"), "--cfg", "job", "rtt_ms=42"], "rtt_ms: 42"),
        (["hydra/job_logging=disabled", "--cfg", "hydra"], "job_logging"),
        (["experiment=smoke", "--cfg", "job"], "name: smoke"),  # no '+' needed
        (["buffer_policy=abs2010/fig2_stable", "--cfg", "job"], "target_loss: 0.005"),  # a nested group option
        (["--help"], f"tcp: {TCP_OPTIONS}"),
    ],
)
def test_hydra_flags_work(args, expect):
    res = run(*args)
    assert res.returncode == 0, res.stderr
    assert expect in " ".join(res.stdout.split()), res.stdout[-2000:]  # the help wraps its lines


@pytest.mark.parametrize(
    "args, words",
    [
        (["hydra/launcher=basic"], ["hydra/launcher", "Ray launcher"]),
        (["tcp=glob(*)"], ["tcp", "add -m"]),
        (["+experiment=smoke"], ["smoke is a grid", "add -m"]),
        (["-m", "+experiment=smoke,enachescu_fig2b"], ["experiment", "one preset per command"]),
        (["-m", "tcp=glob(*)", "--cfg", "job"], ["--multirun and --cfg"]),
        (["-m", "tpc=reno"], ["tpc", "did you mean tcp"]),
        (["-m", "flws=1,2"], ["flws", "did you mean flows"]),
        (["-m", "tcp=renoo,paced"], ["tcp", "did you mean reno"]),
    ],
)
def test_refusals_are_one_line_exit_2(args, words):
    res = run(*args)
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), res.stderr


def test_glob_expands_against_the_group():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from sweeps.precheck import _group_values, group_options

    exclude = ",".join(o for o in TCP_OPTIONS.split(", ") if o not in ("newreno", "paced", "reno"))
    o = OverridesParser.create().parse_overrides([f"tcp=glob(*,exclude=[{exclude}])"])[0]
    assert _group_values(o, "tcp", group_options()["tcp"]) == ["newreno", "paced", "reno"]


def test_tab_completion():
    res = run("-sc", "query=bash", env={"COMP_LINE": "buffersweep tcp=", "COMP_POINT": "16"})
    assert res.returncode == 0, res.stderr
    assert set(res.stdout.split()) >= {"tcp=reno", "tcp=newreno", "tcp=paced", "tcp=poisson"}
    res = run("-sc", "query=bash", env={"COMP_LINE": "buffersweep buffer_p", "COMP_POINT": "20"})
    assert "buffer_pkts=" in res.stdout.split()
    res = run("--shell-completion", "install=bash")
    assert res.returncode == 0 and "hydra_bash_completion" in res.stdout


def test_console_script_is_installed():
    script = os.path.join(os.path.dirname(sys.executable), "buffersweep")
    res = subprocess.run([script, "--cfg", "job", "flows=5"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0 and "flows: 5" in res.stdout, res.stderr


def test_help_gives_every_key_its_meaning():
    """Issue 56: `--help` listed the keys and their defaults with no meaning. Every key a job may
    set has an entry with its meaning (a union met again refers to its first listing)."""
    import re

    from sweeps.schema import KNOWN_KEYS

    res = run("--help")
    assert res.returncode == 0, res.stderr
    keys = res.stdout.split("== Keys ==")[1]
    entries = dict(re.findall(r"^([a-z_][\w.=]*?)(?: \[[^\]]*\])?: (.+(?:\n    .+)*)", keys, re.M))
    refers = {k: m[1] for k, v in entries.items() if (m := re.search(r"Its keys are those of (\S+)\s+\(above\)", v))}
    for key in KNOWN_KEYS:
        parent = next((p for p in refers if key.startswith(p + ".")), None)
        listed = f"{refers[parent]}{key[len(parent) :]}" if parent else key
        assert len(entries.get(listed, "").split()) >= 2, f"{key}: no meaning in --help"
    assert "wmax_pkts [pkts]: Receiver window cap" in keys
