"""The front door cannot rot: README.md stays short, its links and the docs' resolve, every doc
page is linked from it, and every shell command it marks runnable (a ```sh block not tagged
no-run) passes, in order, in a scratch directory."""

from __future__ import annotations

import os
import re
import shlex
import shutil
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


def python_blocks(text: str) -> list[str]:
    return [body for info, body in fenced_blocks(text) if info.split()[:1] == ["python"]]


def fresh_clone(dest: Path) -> Path:
    """What a user's clone holds once `make install` has run: the tracked files (and files not
    yet committed but not ignored), the engine built into sim/ (`maturin develop` puts it there),
    and `.venv`, here the project's own (a link: installing anew takes minutes)."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        src, dst = ROOT / name, dest / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    for ext in (ROOT / "sim").glob("_core*.so"):
        shutil.copy2(ext, dest / "sim" / ext.name)
    (dest / ".venv").symlink_to(Path(sys.prefix))
    return dest


def test_the_first_hour_works_as_printed_in_a_fresh_clone(tmp_path):
    """Issue 56: the README's first-hour block ran `buffersweep` and `python -m analysis` bare,
    which fail without an activated venv. Every command it marks runnable, and its Python
    block, run here exactly as printed, from a fresh clone's directory, with no PATH, PYTHONPATH
    or MLflow settings of ours: the research questions included."""
    text = README.read_text()
    commands = runnable_commands(text)
    assert any(c.startswith(".venv/bin/buffersweep -m") for c in commands), commands
    assert all(shlex.split(c)[0].startswith(".venv/bin/") for c in commands), commands
    clone = fresh_clone(tmp_path / "clone")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH="/usr/bin:/bin", RAY_AUTH_MODE="disabled")  # no venv on PATH: commands as printed
    blocks = [[".venv/bin/python", "-c", b] for b in python_blocks(text)]
    for argv in [*blocks, *(shlex.split(c) for c in commands)]:
        res = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, f"{argv}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    assert (clone / "results" / "runs").is_dir() and (clone / "mlflow.db").is_file(), "the clone's own stores"
