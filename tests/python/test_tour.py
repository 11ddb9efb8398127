"""The notebook-style tour (examples/python_tour.py) runs end to end (read rates: bench/bench_python.py)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import os
import sys

from conftest import REPO, run


def test_tour_runs_end_to_end(tmp_path, rocpd_store):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), TMPDIR=str(tmp_path))
    out = run(sys.executable, REPO / "examples" / "python_tour.py", rocpd_store, env=env, cwd=tmp_path,
              timeout=300).stdout
    assert "tour done" in out and "gemm_tile" in out
    assert list(tmp_path.iterdir()) == []  # the tour cleans up after itself
