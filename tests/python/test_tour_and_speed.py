"""The notebook-style tour (examples/python_tour.py) runs end to end, and reading stays columnar-fast."""
from __future__ import annotations

import os
import sys
import time

import numpy as np
from conftest import REPO, run

import hubprof


def test_tour_runs_end_to_end(tmp_path, rocpd_store):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), TMPDIR=str(tmp_path))
    out = run(sys.executable, REPO / "examples" / "python_tour.py", rocpd_store, env=env, cwd=tmp_path,
              timeout=300).stdout
    assert "tour done" in out and "gemm_tile" in out
    assert list(tmp_path.iterdir()) == []  # the tour cleans up after itself


def test_read_rate(tmp_path):
    """table("dispatch") reads a log at well over a few hundred thousand rows/s (about 3-4 M/s on the
    development machine); a per-row Python path would fall far below this floor."""
    n = 300_000
    path = tmp_path / "rate.log"
    with hubprof.create(path, format="log") as w:
        w.write("dispatch", {"id": np.arange(1, n + 1), "kernel_id": 1, "start_ns": np.arange(n)})
    with hubprof.open(path) as s:
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            df = s.table("dispatch")
            best = min(best, time.perf_counter() - t)
    assert len(df) == n and df["start_ns"].iloc[-1] == n - 1
    rate = n / best
    print(f"table('dispatch'): {rate:,.0f} rows/s")
    assert rate > 300_000, rate
