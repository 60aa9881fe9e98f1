"""Bad input ends the command with one line naming the key and what is allowed, exit code 2,
before any job starts and before anything is written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn


def python_cmd() -> str:
    """This interpreter as a command to copy: `.venv/bin/python` from the project's directory, its
    full path elsewhere (a bare `python` may lack the packages, as outside the venv it does)."""
    exe = Path(sys.executable)
    plain = Path(sys.prefix) / "bin" / "python"  # a venv's `python`, as the README writes it, not `python3.11`
    if plain.exists() and plain.resolve() == exe.resolve():
        exe = plain
    try:
        return str(exe.relative_to(Path.cwd()))
    except ValueError:
        return str(exe)


class UsageError(ValueError):
    pass


def exit_usage(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def exit_failure(message: str) -> NoReturn:
    """A failure after jobs started (the disk filled up, say): one line, exit code 1."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(1)


EXIT_INFRASTRUCTURE = 3
"""Exit code when Ray was lost under a sweep: its jobs were not run, not failed; rerun to resume."""


class RayLost(RuntimeError):
    """Ray's local node died and could not be (or may not be) restarted."""
