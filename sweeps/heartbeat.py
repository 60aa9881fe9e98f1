"""Progress of a long command on stderr, TTY or not (issue 69): on a terminal a live line (rich's
status spinner), and off one (a Ray job's log, a notebook, CI, `2> file`) a plain line every
PLAIN_EVERY_S seconds, whether or not anything changed, so that a log never goes silent for
long. What the line says comes from the command (`describe`): what is done, what is running,
and an ETA. docs/sweeps.md, "How it runs"."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console

PLAIN_EVERY_S = float(os.environ.get("BUFFERSWEEP_PROGRESS_S", "20"))
"""Seconds between two plain progress lines off a terminal (issue 69 asks for one at least every
30 s); $BUFFERSWEEP_PROGRESS_S sets another (the tests' 1 s)."""


def clock(seconds: float) -> str:
    """A duration as h:mm:ss or m:ss."""
    s = max(0, round(seconds))
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


def eta_text(elapsed_s: float, done: float, total: float) -> str:
    """`eta 1:05` from the rate so far, or `eta ?` before anything is done."""
    if done <= 0 or total <= done:
        return "eta ?" if total > done else "eta 0:00"
    return f"eta {clock(elapsed_s * (total - done) / done)}"


class Heartbeat:
    """`with Heartbeat(console, describe):` shows `describe()` while the block runs: refreshed
    every second on a terminal, printed every `every_s` off one (and once more at the end, if it
    ran at least that long). `describe` is called from another thread: it should only read."""

    def __init__(
        self, console: Console, describe: Callable[[], str], every_s: float = PLAIN_EVERY_S, live: bool = True
    ) -> None:
        self.console, self.describe, self.every_s = console, describe, every_s
        self.live = live and console.is_terminal  # off a terminal, or under a live display: plain lines
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._status = None
        self.t0 = time.monotonic()

    def __enter__(self) -> Heartbeat:
        if self.console.quiet:
            return self
        if self.live:
            self._status = self.console.status(self.describe())
            self._status.__enter__()
        elif self.console.is_terminal:
            return self  # a live display of the caller's own shows it
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        every = 1.0 if self.live else self.every_s
        while not self._stop.wait(every):
            self._show()

    def _show(self) -> None:
        try:
            text = self.describe()
        except Exception as e:  # noqa: BLE001 - a progress line must never end the command
            text = f"(no progress: {type(e).__name__}: {e})"
        if self._status is not None:
            self._status.update(text)
        else:
            line = f"[{clock(time.monotonic() - self.t0)}] {text}"
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if self._status is None and time.monotonic() - self.t0 >= self.every_s:
                self._show()
        if self._status is not None:
            self._status.__exit__(kind, exc, tb)
