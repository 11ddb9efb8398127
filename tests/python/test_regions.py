"""Python regions: `with hubprof.region(...)`, marks and start/stop from a script run under `hubprof trace`
(the rows land in the store), and the same script without hubprof (no-ops, no collector loaded)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import os
import sys
import textwrap

from conftest import BUILD, HUBPROF, REPO, need, run

import hubprof

SCRIPT = textwrap.dedent(
    """
    import sys, threading
    sys.path.insert(0, {py!r})
    import hubprof

    def work(i):
        with hubprof.region("py worker"):
            for _ in range(3):
                with hubprof.region("py step"):
                    pass

    with hubprof.region("py main"):
        ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in ts: t.start()
        for t in ts: t.join()
    hubprof.mark("py mark")
    hubprof.stop()
    hubprof.start()
    try:
        with hubprof.region(b"bytes \\xff name"):
            raise ValueError("inside")
    except ValueError:
        pass
    maps = open("/proc/self/maps").read()
    print("profiled", hubprof.profiled(), "collector loaded", "libhubprof_collector" in maps)
    """
)


def test_python_regions_traced_and_plain(tmp_path):
    need(HUBPROF)
    script = tmp_path / "regions_script.py"
    script.write_text(SCRIPT.format(py=str(REPO / "python")))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HUBPROF_", "NVTX_"))}
    plain = run(sys.executable, script, env=env, timeout=120)
    assert plain.stdout.strip() == "profiled False collector loaded False"
    out = tmp_path / "py.db"
    traced = run(HUBPROF, "trace", "-q", "-o", out, "--", sys.executable, script, env=env, timeout=300)
    assert traced.stdout.strip() == "profiled True collector loaded True"
    with hubprof.open(out) as s:
        r = s.table("region")
        names = r["name"].value_counts().to_dict()
        assert names["py main"] == 1 and names["py worker"] == 2 and names["py step"] == 6
        assert names["py mark"] == 1 and names["hubprof_stop"] == 1 and names["hubprof_start"] == 1
        assert names["bytes \\xff name"] == 1
        assert (r["end_ns"] >= r["start_ns"]).all()
        workers = r[r["name"] == "py worker"]
        assert workers["thread_id"].nunique() == 2
        main = r[r["name"] == "py main"].iloc[0]
        assert ((workers["start_ns"] >= main["start_ns"]) & (workers["end_ns"] <= main["end_ns"])).all()
        assert set(r["category"]) == {"hubprof"}


def test_python_regions_noop_without_collector(monkeypatch):
    monkeypatch.delenv("HUBPROF_INJECTION_PATH", raising=False)
    # in this (unprofiled) test process: every call returns, nothing is loaded
    with hubprof.region("nothing"):
        hubprof.mark("nothing")
    hubprof.stop()
    hubprof.start()
    assert "libhubprof_collector" not in open("/proc/self/maps").read()
