"""OTF2 counters: per-dispatch counter values and counter samples of a made store exported as OTF2 metrics and
read back with `otf2-print` (counts and values equal to the store's; a sample outside its dispatch skipped and
counted; hostile counter names stay valid strings)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

import hubprof
from conftest import HUBPROF, need, run, write_one_queue

pytestmark = pytest.mark.skipif(not shutil.which("otf2-print"), reason="otf2-print missing (otf2-tools)")

NAMES = ["SQ_WAVES", 'say "hi" <b>', "bad\udcffbyte"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("otf2c") / "c.db"
    starts = [1000, 5000, 9000]
    with hubprof.create(path) as w:
        write_one_queue(w)
        w.write("kernel_symbol", {"id": 1, "name": "k"})
        w.write("dispatch", {"id": [1, 2, 3], "dispatch_id": [1, 2, 3], "process_id": 1, "thread_id": 1,
                             "agent_id": 1, "queue_id": 1, "kernel_id": 1, "grid_x": 64, "grid_y": 1, "grid_z": 1,
                             "workgroup_x": 64, "workgroup_y": 1, "workgroup_z": 1, "start_ns": starts,
                             "end_ns": [s + 2000 for s in starts], "enqueue_ns": [s - 10 for s in starts]})
        w.write("counter_info", {"id": [1, 2, 3], "name": NAMES, "unit": ["waves", "x", "y"]})
        # every counter on every dispatch: 9 values
        w.write("counter_value", {"dispatch_id": [d for d in (1, 2, 3) for _ in range(3)],
                                  "counter_id": [1, 2, 3] * 3, "pass": 1,
                                  "value": [10.0 * d + c for d in (1, 2, 3) for c in (1, 2, 3)]})
        # counter 1 sampled 4 times in each dispatch, plus one sample after dispatch 3 ended (skipped)
        sd, sc, st, sv = [], [], [], []
        for d, s in zip((1, 2, 3), starts):
            for i in range(4):
                sd.append(d), sc.append(1), st.append(s + 400 * (i + 1)), sv.append(float(100 * d + i))
        sd.append(3), sc.append(1), st.append(starts[2] + 5000), sv.append(-1.0)
        w.write("counter_sample", {"id": list(range(1, len(sd) + 1)), "dispatch_id": sd, "counter_id": sc,
                                   "timestamp_ns": st, "value": sv})
    return path


def metrics(out: Path) -> list[tuple[int, float]]:
    """(metric class, value) of every METRIC event otf2-print shows."""
    text = run("otf2-print", out / "traces.otf2").stdout
    found = re.findall(r"^METRIC\s+\d+\s+\d+\s+Metric: (\d+), 1 Value: \(.*; DOUBLE; ([-0-9.e+]+)\)$", text,
                       re.M)
    assert len(found) == text.count("\nMETRIC ")
    return [(int(m), float(v)) for m, v in found]


def test_counters_as_otf2_metrics(store, tmp_path):
    out = tmp_path / "c-otf2"
    p = run(need(HUBPROF), "export", store, "-o", out, "--format", "otf2")
    assert "9 counter values" in p.stderr and "12 counter samples" in p.stderr
    assert "1 event out of order skipped" in p.stderr  # the sample after its dispatch
    ev = metrics(out)
    with hubprof.open(store) as s:
        cv = s.table("counter_value")
        cs = s.table("counter_sample")
    kinds = Counter(m % 2 for m, _ in ev)
    assert kinds[0] == len(cv) == 9 and kinds[1] == len(cs) - 1 == 12
    # values: per counter (class 2 (id - 1)) the store's, samples (class 1) the in-range ones in order
    for cid in (1, 2, 3):
        assert sorted(v for m, v in ev if m == 2 * (cid - 1)) == sorted(cv[cv.counter_id == cid].value)
    assert [v for m, v in ev if m == 1] == [v for v in cs.value if v >= 0]
    defs = run("otf2-print", "-G", out / "traces.otf2").stdout
    assert defs.count("METRIC_CLASS") == 6
    assert 'Name: "say "hi" <b> (sample)"' in defs and 'Name: "bad\\xFFbyte" ' in defs
    # events per location stay in time order: otf2-print would reject them otherwise; the timeline is intact
    assert run("otf2-print", out / "traces.otf2").stdout.count("\nENTER ") == 3
