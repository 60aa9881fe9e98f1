"""Every reproduction in this directory runs on the session's one Ray node (tests/conftest.py
`ray_head`, one per pytest worker): in-process sweeps and `python -m sweeps` subprocesses attach to
it through RAY_ADDRESS instead of each starting and stopping an embedded Ray (5-8 s a time). Each
test logs to its own MLflow store, a SQLite file in its tmp_path."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def attach_to_the_session_ray(ray_head, monkeypatch, tmp_path):
    monkeypatch.setenv("RAY_ADDRESS", ray_head)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
