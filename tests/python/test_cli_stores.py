"""Stores written by the C side (gen_logs, `hubprof merge`) read from Python and checked against
`hubprof info --json`; analyze() against `hubprof analyze --format json` on the same stores."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import BUILD, cli_json, run

import hubprof


@pytest.fixture(params=["log", "rocpd", "parquet"])
def c_store(request, logs, rocpd_store, parquet_store):
    return {"log": logs[0], "rocpd": rocpd_store, "parquet": parquet_store}[request.param]


def test_counts_and_values_match_info(c_store):
    info = cli_json("info", "--json", c_store)
    with hubprof.open(c_store) as s:
        assert s.format == info["format"]
        assert s.schema_version == info["schema_version"]
        assert s.path == info["path"]
        assert (s.damage is None) == (info["damage"] is None)
        assert s.counts() == info["rows"]
        for name in hubprof.TABLES:
            assert len(s.table(name)) == info["rows"][name], name
        procs = s.table("process").sort_values("pid")
        want = sorted(info["processes"], key=lambda p: p["pid"])
        for col in ("pid", "ppid", "rank", "start_ns", "end_ns", "lost_records", "command"):
            assert procs[col].tolist() == [p[col] for p in want], col
        d = s.table("dispatch")
        timed = d[(d.start_ns > 0) & (d.end_ns > 0)]
        assert int(timed.start_ns.min()) == info["time_span"]["first_ns"]
        assert int(timed.end_ns.max()) == info["time_span"]["last_ns"]
        assert d["id"].is_unique
        cv = s.table("counter_value")
        assert set(cv["pass"].unique()) == {1, 2}  # passes kept apart
        assert set(cv["dispatch_id"]) <= set(d["id"])
        assert set(d["kernel_id"]) <= set(s.table("kernel_symbol")["id"])


@pytest.mark.parametrize("limit", [None, 3])
def test_analyze_matches_cli(c_store, limit):
    args = ["analyze", "--format", "json"] + (["-n", str(limit)] if limit else []) + [c_store]
    want = cli_json(*args)
    with hubprof.open(c_store) as s:
        df = s.analyze(by="kernel", limit=limit)
    assert list(df.columns)[:9] == ["device", "kernel", "calls", "timed_calls", "total_ns", "avg_ns", "min_ns",
                                    "max_ns", "percent"]  # then the store's counters and metrics
    assert df["calls"].dtype == np.int64 and df["percent"].dtype == np.float64
    assert len(df) == len(want)
    for got, exp in zip(df.to_dict("records"), want):
        for k in ("device", "kernel", "calls", "total_ns", "min_ns", "max_ns"):
            assert got[k] == exp[k], (k, got, exp)
        assert math.isclose(got["avg_ns"], exp["avg_ns"], abs_tol=0.05 + 1e-9 * exp["avg_ns"])
        assert math.isclose(got["percent"], exp["percent"], abs_tol=5e-4)
    assert df.attrs["lost_records"] == 0


def test_analyze_arguments(rocpd_store):
    with hubprof.open(rocpd_store) as s:
        with pytest.raises(ValueError, match="unknown grouping"):
            s.analyze(by="colour")
        with pytest.raises(ValueError):
            s.analyze(limit=-1)
        assert len(s.analyze(limit=0)) == len(s.analyze())


def test_lost_records_warn(tmp_path):
    path = tmp_path / "lost.db"
    with hubprof.create(path) as w:
        w.write("agent", {"id": 1, "name": "cpu"})
        w.write("kernel_symbol", {"id": 1, "name": "k"})
        w.write("process", {"id": 1, "pid": 42, "lost_records": 17})
        w.write("dispatch", {"id": [1, 2], "process_id": 1, "agent_id": 1, "kernel_id": 1,
                             "start_ns": [10, 100], "end_ns": [20, 150]})
    with hubprof.open(path) as s, pytest.warns(hubprof.LowerBoundWarning, match="17 records"):
        df = s.analyze()
    assert df.attrs["lost_records"] == 17
    assert df[["calls", "total_ns", "min_ns", "max_ns"]].iloc[0].tolist() == [2, 60, 10, 50]


def test_rocpd_dispatch_extdata_parsed(rocpd_store, tmp_path):
    """hubprof's own rocpd dispatch rows: their extdata keys are parsed in C from the raw text (one pass
    per row, rocpd_read.c ext_keys): every JSON shape SQLite's json_extract took reads the same, and a text
    that is not a JSON object is named as damage."""
    import shutil
    import sqlite3

    p = tmp_path / "x.db"
    shutil.copy(rocpd_store, p)
    db = sqlite3.connect(p)
    (tab,) = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE "
                        "'rocpd_kernel_dispatch_%'").fetchone()  # the view's table (rocpd's guid suffix)
    ids = [r[0] for r in db.execute(f"SELECT id FROM {tab} ORDER BY id LIMIT 3")]
    shapes = {
        ids[0]: ' { "enqueue_ns" : -5 , "passes": 2.0, "region_id": null, "x": {"a": [1, "}"]}, "cold": true } ',
        ids[1]: '{"note":"a \\"quoted\\" text","bytes_restored":18446744073709551000}',
        ids[2]: "{}",
    }
    for i, text in shapes.items():
        db.execute(f"UPDATE {tab} SET extdata = ? WHERE id = ?", (text, i))
    db.commit()
    want = {}
    for i in ids:  # what SQLite's JSON functions make of each key, as the reader's SQL did before
        row = db.execute(
            "SELECT json_extract(extdata,'$.enqueue_ns'), json_extract(extdata,'$.passes'), "
            "json_extract(extdata,'$.region_id'), json_extract(extdata,'$.cold'), "
            f"json_extract(extdata,'$.bytes_restored') FROM {tab} WHERE id = ?", (i,)).fetchone()
        want[i] = [0 if v is None else int(v) for v in row]
    db.close()
    with hubprof.open(p) as s:
        d = s.table("dispatch").set_index("id")
        for i in ids:
            got = [int(d.loc[i, c]) for c in ("enqueue_ns", "passes", "region_id", "cold")]
            assert got == want[i][:4], (i, got, want[i])
        assert int(d.loc[ids[1], "bytes_restored"]) == 18446744073709551000
    db = sqlite3.connect(p)
    db.execute(f"UPDATE {tab} SET extdata = '{{\"passes\": 1' WHERE id = ?", (ids[0],))
    db.commit()
    db.close()
    r = run(str(BUILD / "hubprof"), "analyze", str(p), check=False)
    assert r.returncode == 1 and "extdata is not a JSON object" in r.stderr, r.stderr
