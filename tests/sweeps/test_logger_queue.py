"""MLflow logging keeps pace with the sweep instead of buffering it (issue 34: the driver under
1 GB at 100,000 points): the workers outran the logger, and an unbounded queue held the
difference, 1.2 GB in the driver of a 100,000-job sweep with MLflow on."""

from __future__ import annotations

import threading
import time

import pytest

import sim
from sim.result import config_row
from sweeps import tracking


def _row(i: int) -> dict:
    return {
        **config_row(sim.SimConfig()),
        "run_id": f"r{i}",
        "exec_id": f"e{i}",
        "sweep_id": "s1",
        "status": "ok",
        "name": None,
        "backend": "engine",
    }


def _submit_in_background(tracker: tracking.Tracker, n: int) -> tuple[threading.Thread, list[int]]:
    done: list[int] = []

    def submit_all() -> None:
        for i in range(n):
            tracker.submit([_row(i)], [None], [None])
            done.append(i)

    thread = threading.Thread(target=submit_all, daemon=True)
    thread.start()
    return thread, done


@pytest.fixture
def held_logger(monkeypatch):
    """The logger (a thread of this process: a sweep this small logs inline) waits for the gate
    before it logs a message."""
    gate = threading.Event()
    log_many = tracking._ChildLogger.log_many

    def held(self, items):
        gate.wait(60)
        return log_many(self, items)

    monkeypatch.setattr(tracking._ChildLogger, "log_many", held)
    return gate


def test_submit_waits_while_the_logger_queue_is_full(tmp_path, monkeypatch, held_logger):
    monkeypatch.setattr(tracking, "LOGGER_QUEUE_MESSAGES", 2)
    tracker = tracking.Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}", "queue", "s1", [], n_jobs=8)
    thread, done = _submit_in_background(tracker, 6)
    time.sleep(3)
    # One message in the logger's hands at most, two waiting: the fourth submit waits.
    assert thread.is_alive() and len(done) <= 3, done
    held_logger.set()
    thread.join(60)
    assert done == list(range(6))
    tracker.close(failed=False)
    children = tracking.child_runs(tracker.client, tracker.experiment_id, tracker.parent_id)
    assert sorted(r.data.tags["run_id"] for r in children) == [f"r{i}" for i in range(6)]
    assert tracker.errors == []


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_logger_is_not_waited_for(tmp_path, monkeypatch):
    monkeypatch.setattr(tracking, "LOGGER_QUEUE_MESSAGES", 1)

    def dies(self, items):
        raise SystemExit  # ends the logger's thread, as a killed logger process ends

    monkeypatch.setattr(tracking._ChildLogger, "log_many", dies)
    tracker = tracking.Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}", "dead", "s1", [], n_jobs=8)
    thread, done = _submit_in_background(tracker, 5)
    thread.join(30)
    assert done == list(range(5))
    tracker.close(failed=False)
    assert any("died" in e for e in tracker.errors), tracker.errors
