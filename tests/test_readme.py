"""The front door cannot rot: README.md stays short, its links and the docs' resolve, every doc
page is linked from it, and every shell command it marks runnable (a ```sh block not tagged
no-run) passes, in order, in a scratch directory."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced block."""
    return re.findall(r"^```([^\n]*)\n(.*?)^```", text, flags=re.S | re.M)


def runnable_commands(text: str) -> list[str]:
    return [
        line.split("  #")[0].strip()
        for info, body in fenced_blocks(text)
        if info.split()[:1] == ["sh"] and "no-run" not in info.split()
        for line in body.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


@pytest.mark.check
def test_readme_is_short_and_links_every_doc_page():
    text = README.read_text()
    assert len(text.splitlines()) < 150
    linked = {(ROOT / target).resolve() for target in LINK.findall(text) if "://" not in target}
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert page.resolve() in linked, f"docs/{page.name} is not linked from README.md"


@pytest.mark.check
def test_every_relative_link_resolves():
    for page in [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text()):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"


@pytest.mark.check
def test_the_command_parser_finds_what_is_runnable():
    text = "```sh\nmake a  # note\n# comment\n```\n```sh no-run\nmake b\n```\n```python\nc()\n```\n"
    assert runnable_commands(text) == ["make a"]


def test_readme_commands_pass(tmp_path):
    commands = runnable_commands(README.read_text())
    assert any(c.startswith("buffersweep -m") for c in commands), commands
    bin_dir = Path(sys.executable).parent
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        PYTHONPATH=str(ROOT),
        MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path / 'mlflow.db'}",
        RAY_AUTH_MODE="disabled",
    )
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "python":
            argv[0] = sys.executable
        res = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, f"{command}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
