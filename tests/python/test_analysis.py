"""hubprof.analysis from Python: analyze() with counters, metrics, groupings and filters, and diff(), checked
against `hubprof analyze/diff --format json` on the same stores and against values computed here from the
stores' own tables; a store written here holds known counters (passes, imputed values, a division by zero)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import BUILD, HUBPROF, REPO, cli_json, need, run

import hubprof
from hubprof.analysis import DIV0, IMPUTED, INCOMPLETE, MIXED, MISSING, OVER_PEAK, diff

os.environ.setdefault("HUBPROF_METRICS", str(REPO / "share" / "hubprof" / "metrics"))


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-12


@pytest.fixture(scope="module")
def known(tmp_path_factory) -> Path:
    """Two kernels, counters in two passes; kernel k2's second dispatch unmeasured, its first 0 ns long."""
    path = tmp_path_factory.mktemp("known") / "known.db"
    with hubprof.create(path) as w:
        w.write("process", {"id": 1, "pid": 7, "start_ns": 1})
        w.write("agent", {"id": 1, "name": "cpu", "product_name": "cpu0", "compute_units": 2})
        w.write("kernel_symbol", {"id": [1, 2], "name": ["k1", "k2"]})
        w.write("counter_info", {"id": [1, 2, 3], "name": ["task-clock", "page-faults", "context-switches"],
                                 "unit": ["ns", "count", "count"]})
        w.write("dispatch", {"id": [1, 2, 3, 4], "dispatch_id": [1, 2, 3, 4], "process_id": 1, "agent_id": 1,
                             "kernel_id": [1, 1, 2, 2], "grid_x": [64, 128, 32, 32], "grid_y": 1, "grid_z": 1,
                             "start_ns": [100, 200, 300, 400], "end_ns": [1100, 3200, 300, 900], "passes": 2})
        w.write("counter_value", {"dispatch_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
                                  "counter_id": [1, 2, 3, 1, 2, 3, 1, 2, 3],
                                  "pass": [1, 1, 2, 1, 1, 2, 1, 1, 2],
                                  "value": [500, 2, 1, 2500, 4, 3, 100, 1, 0]})
    return path


def test_known_values(known):
    with hubprof.open(known) as s:
        df = s.analyze(by="dispatch")
        assert len(df) == 4 and df["dispatch"].tolist() == [1, 2, 3, 4]
        assert {"task-clock", "cpu_util", "faults_per_us", "imputed", "incomplete"} <= set(df.columns)
        assert df.attrs["units"]["cpu_util"] == "%" and df.attrs["roles"]["cpu_util"] == "metric"
        assert close(df["cpu_util"][0], 50) and close(df["cpu_util"][1], 100 * 2500 / 3000)
        assert close(df["cpu_util_pct_peak"][0], 25)
        assert close(df["faults_per_us"][1], 1000 * 4 / 3000)
        assert math.isnan(df["cpu_util"][2]) and df.attrs["flags"]["cpu_util"][2] & DIV0
        assert df.attrs["flags"]["cs_per_ms"][0] & MIXED  # context-switches from pass 2, the time from pass 1
        assert df.attrs["flags"]["cpu_util"][3] & INCOMPLETE and math.isnan(df["task-clock"][3])
        assert df["incomplete"][3] == "task-clock page-faults context-switches"
        assert any("divides by zero" in n for n in df.attrs["notes"])

        k = s.analyze(counters=["task-clock"], metrics="cpu_util,page_faults_total")
        assert list(k.columns)[:9] == ["device", "kernel", "calls", "timed_calls", "total_ns", "avg_ns", "min_ns",
                                       "max_ns", "percent"]
        assert list(k.columns)[9:] == ["task-clock", "cpu_util", "cpu_util_pct_peak", "page_faults_total",
                                       "imputed", "incomplete", "over_peak"]
        k1, k2 = k.iloc[0], k.iloc[1]
        assert k1["kernel"] == "k1" and close(k1["task-clock"], 1500) and close(k1["cpu_util"], 100 * 3000 / 4000)
        assert close(k1["page_faults_total"], 6)
        assert k2["kernel"] == "k2" and close(k2["task-clock"], 100) and k.attrs["flags"]["task-clock"][1] & IMPUTED
        assert close(k2["page_faults_total"], 2) and "page_faults_total" in k2["imputed"]


def test_arguments(known):
    with hubprof.open(known) as s:
        assert len(s.analyze(by="kernel-grid", counters=[], metrics=[])) == 3
        assert s.analyze(kernel="k2", metrics="")["kernel"].tolist() == ["k2"]
        assert s.analyze(kernel=["x*", "k1"], metrics="")["kernel"].tolist() == ["k1"]
        assert s.analyze(by="dispatch", dispatch=(2, 3), metrics="")["dispatch"].tolist() == [2, 3]
        assert s.analyze(by="dispatch", dispatch="3-", metrics="")["dispatch"].tolist() == [3, 4]
        assert s.analyze(by="dispatch", dispatch=2, metrics="")["dispatch"].tolist() == [2]
        assert s.analyze(device="gpu*", metrics="").empty
        assert s.analyze(by="dispatch", sort="time", limit=1, metrics="")["dispatch"].tolist() == [2]
        assert s.analyze(sort="name", metrics="")["kernel"].tolist() == ["k1", "k2"]
        with pytest.raises(ValueError, match="unknown metric 'cpu_utl' \\(did you mean 'cpu_util'\\?\\)"):
            s.analyze(metrics="cpu_utl")
        with pytest.raises(ValueError, match="counter 'cycles' is not in the store"):
            s.analyze(counters=["cycles"])
        with pytest.raises(ValueError, match="metric 'ipc' needs counters"):
            s.analyze(metrics=["ipc"])
        with pytest.raises(ValueError, match="unknown sort"):
            s.analyze(sort="size")
        with pytest.raises(ValueError, match="dispatch"):
            s.analyze(dispatch=(5, 2))
        with pytest.raises(ValueError):
            s.analyze(counters=["a,b"])


def test_metric_files(known, tmp_path):
    own = tmp_path / "own.metrics"
    own.write_text("metric tc_per_fault = task-clock / page-faults\n  unit ns\n")
    with hubprof.open(known) as s:
        df = s.analyze(metric_files=[own], builtin_metrics=False, counters=[])
        assert [c for c in df.columns if df.attrs["roles"][c] == "metric"] == ["tc_per_fault"]
        assert close(df["tc_per_fault"][0], 3000 / 6)
        bad = tmp_path / "bad.metrics"
        bad.write_text("metric a = b\nmetric b = a\n")
        with pytest.raises(ValueError, match="bad.metrics:1: metric 'a' depends on itself: a -> b -> a"):
            s.analyze(metric_files=str(bad))


@pytest.mark.parametrize("by", ["kernel", "kernel-grid", "dispatch"])
def test_matches_cli(c_store_gen, by):
    """The same rows and values as `hubprof analyze --format json` (NaN there is null)."""
    want = cli_json("analyze", "--by", by, "--format", "json", c_store_gen)
    with hubprof.open(c_store_gen) as s:
        df = s.analyze(by=by)
    assert len(df) == len(want) and list(df.columns) == list(want[0].keys())
    for got, exp in zip(df.to_dict("records"), want):
        for k, v in exp.items():
            g = got[k]
            if v is None:
                assert (isinstance(g, float) and math.isnan(g)) or g in ("", 0), (k, g)
            elif isinstance(v, str):
                assert g == v, (k, g, v)
            else:
                assert close(float(g), float(v), 1e-8), (k, g, v)


@pytest.fixture(scope="module")
def c_store_gen(tmp_path_factory) -> Path:
    """gen_logs' profile (4 counters, 2 passes) merged into rocpd."""
    d = tmp_path_factory.mktemp("gen")
    run(need(BUILD / "examples" / "gen_logs"), d, 1, 3000, 4, 2)
    out = d / "gen.db"
    run(need(HUBPROF), "merge", "-q", "-o", out, *sorted(d.glob("*.log")))
    return out


def test_diff_matches_cli(c_store_gen, known):
    want = cli_json("diff", "--format", "json", c_store_gen, c_store_gen)
    with hubprof.open(c_store_gen) as a, hubprof.open(c_store_gen) as b:
        df = diff(a, b)
    assert len(df) == len(want) == 8
    assert set(df["time"]) == {"same"} and set(df["status"]) == {"both"}
    assert (df["total_ns_delta"] == 0).all()
    with hubprof.open(c_store_gen) as a, hubprof.open(known) as b:
        df = diff(a, b, metrics=[])
        assert set(df["status"]) == {"missing", "new"}
        with pytest.raises(ValueError, match="diff groups by kernel"):
            diff(a, b, by="dispatch")


def test_multiplexed_store(tmp_path):
    """A real multiplexed profile: imputed values marked, the incomplete kernel out of metrics."""
    app = BUILD / "examples" / "ocl" / "iterations"
    need(app)
    need(BUILD / "libhubprof_collector.so")
    out = tmp_path / "mux.db"
    env = dict(os.environ, HUBPROF_COLLECTOR=str(BUILD / "libhubprof_collector.so"))
    p = run(need(HUBPROF), "profile", "--replay", "multiplex", "--counters",
            "task-clock,page-faults,context-switches", "--max-counters-per-pass", "1", "-o", out, "--", app,
            4096, 30, 2, check=False, env=env, timeout=300)
    if p.returncode != 0:
        pytest.skip(f"OpenCL (PoCL) does not run here: {p.stderr.strip()[:200]}")
    with hubprof.open(out) as s:
        df = s.analyze()
        rows = {r["kernel"]: r for r in df.to_dict("records")}
        assert "task-clock" in rows["relax"]["imputed"] and not math.isnan(rows["relax"]["cpu_util"])
        assert math.isnan(rows["finish"]["cpu_util"]) and rows["finish"]["incomplete"] == "context-switches"
        i = df.index[df["kernel"] == "finish"][0]
        assert df.attrs["flags"]["cpu_util"][i] & INCOMPLETE and df.attrs["flags"]["cpu_util"][i] & MISSING
        cv = s.table("counter_value")
        d = s.table("dispatch")
        relax = d.loc[d["kernel_id"] == d["kernel_id"].mode()[0], "id"]
        tc_id = s.table("counter_info").set_index("name").loc["task-clock", "id"]
        vals = cv[(cv["counter_id"] == tc_id) & cv["dispatch_id"].isin(relax)]["value"]
        assert len(vals) == 30 and close(rows["relax"]["task-clock"], float(np.mean(vals)))


def test_over_peak(tmp_path):
    """A metric above its physical peak is flagged with the reason in every output: cpu_util of dispatch 1 is
    100 * 5000 / 1000 = 500 % against a peak of 100 * 2 compute units; dispatch 2 (50 %) is not flagged."""
    path = tmp_path / "peak.db"
    with hubprof.create(path) as w:
        w.write("process", {"id": 1, "pid": 7, "start_ns": 1})
        w.write("agent", {"id": 1, "name": "cpu", "product_name": "cpu0", "compute_units": 2})
        w.write("kernel_symbol", {"id": [1], "name": ["k"]})
        w.write("counter_info", {"id": [1], "name": ["task-clock"], "unit": ["ns"]})
        w.write("dispatch", {"id": [1, 2], "dispatch_id": [1, 2], "process_id": 1, "agent_id": 1, "kernel_id": 1,
                             "grid_x": 64, "grid_y": 1, "grid_z": 1, "start_ns": [100, 2000],
                             "end_ns": [1100, 3000], "passes": 1})
        w.write("counter_value", {"dispatch_id": [1, 2], "counter_id": 1, "pass": 1, "value": [5000, 500]})
    with hubprof.open(path) as s:
        df = s.analyze(by="dispatch", metrics="cpu_util")
    assert close(df["cpu_util"][0], 500) and close(df["cpu_util_pct_peak"][0], 250)
    assert df["over_peak"].tolist() == ["cpu_util=250%", ""]
    assert df.attrs["flags"]["cpu_util"][0] & OVER_PEAK and df.attrs["flags"]["cpu_util_pct_peak"][0] & OVER_PEAK
    assert not df.attrs["flags"]["cpu_util"][1] & OVER_PEAK
    note = [n for n in df.attrs["notes"] if "above its peak" in n]
    assert len(note) == 1 and "'cpu_util'" in note[0] and "1 row," in note[0] and "up to 250%" in note[0], note
    assert "waking up" in note[0]  # the reason perf.metrics gives
    js = cli_json("analyze", "--by", "dispatch", "--metrics", "cpu_util", "--format", "json", path)
    rows = js["rows"] if isinstance(js, dict) else js
    assert [r["over_peak"] for r in rows] == ["cpu_util=250%", ""], rows
    csv = run(need(HUBPROF), "analyze", "--by", "dispatch", "--metrics", "cpu_util", "--format", "csv", path)
    head, first = csv.stdout.splitlines()[:2]
    assert head.split(",")[-1] == "over_peak" and first.endswith(",cpu_util=250%"), csv.stdout
    table = run(need(HUBPROF), "analyze", "--by", "dispatch", "--metrics", "cpu_util", path)
    assert "500^" in table.stdout and "250.0^" in table.stdout and "above its peak" in table.stdout + table.stderr, table.stdout


def _region_store(path, scale=1.0):
    """Regions op (100-1000) > inner (200-400) on thread 1 and a marker; dispatch 1 names inner, 2 names op,
    3 names none but lies in op's time (placed by time), 4 is outside every region. Counters in two passes;
    dispatch 2 has no page-faults value (estimated, imputed)."""
    with hubprof.create(path) as w:
        w.write("process", {"id": 1, "pid": 7, "start_ns": 1, "end_ns": 5000})
        w.write("thread", {"id": 1, "process_id": 1, "tid": 7})
        w.write("agent", {"id": 1, "name": "cpu", "product_name": "cpu0", "compute_units": 2})
        w.write("kernel_symbol", {"id": [1], "name": ["k"]})
        w.write("counter_info", {"id": [1, 2], "name": ["task-clock", "page-faults"], "unit": ["ns", "count"]})
        w.write("region", {"id": [5, 6, 7], "process_id": 1, "thread_id": 1, "name": ["inner", "op", "mark"],
                           "category": "hubprof", "start_ns": [200, 100, 2000], "end_ns": [400, 1000, 2000]})
        w.write("dispatch", {"id": [1, 2, 3, 4], "dispatch_id": [1, 2, 3, 4], "process_id": 1, "thread_id": 1,
                             "agent_id": 1, "kernel_id": 1, "grid_x": 64, "grid_y": 1, "grid_z": 1,
                             "enqueue_ns": [250, 500, 600, 1500], "start_ns": [300, 600, 700, 1600],
                             "end_ns": [400, 900, 800, 1700], "passes": 2, "region_id": [5, 6, 0, 0]})
        w.write("counter_value", {"dispatch_id": [1, 1, 2, 3, 3, 4, 4], "counter_id": [1, 2, 1, 1, 2, 1, 2],
                                  "pass": [1, 2, 1, 1, 2, 1, 2],
                                  "value": [v * scale for v in (50, 4, 200, 60, 2, 70, 9)]})


def test_regions_counters(tmp_path):
    """analyze by region: dispatches by region_id (and time), counters summed over the region's dispatches,
    nested ones included; a counter some lack is estimated and imputed; metrics on the totals."""
    path = tmp_path / "rg.db"
    _region_store(path)
    with hubprof.open(path) as s:
        df = s.analyze(by="region", metrics="cpu_util").set_index("region")
    assert df.loc["op", "dispatches"] == 3 and df.loc["inner", "dispatches"] == 1 and df.loc["mark", "dispatches"] == 0
    assert df.loc["op", "kernel_ns"] == 100 + 300 + 100
    assert close(df.loc["op", "task-clock"], 50 + 200 + 60) and close(df.loc["inner", "task-clock"], 50)
    assert close(df.loc["op", "page-faults"], (4 + 2) / 2 * 3)  # dispatch 2 lacks it: mean x 3, imputed
    assert df.loc["op", "imputed"] == "page-faults" and df.loc["inner", "imputed"] == ""
    assert close(df.loc["op", "cpu_util"], 100 * 310 / 500)  # totals: task-clock / device time
    assert df.loc["mark", "task-clock"] == 0 and math.isnan(df.loc["mark", "cpu_util"])
    assert any("enqueued no dispatch" in n for n in df.attrs["notes"]), df.attrs["notes"]
    js = cli_json("analyze", "--by", "region", "--format", "json", path)
    rows = {r["region"]: r for r in (js["rows"] if isinstance(js, dict) else js)}
    assert close(rows["op"]["task-clock"], 310) and rows["op"]["dispatches"] == 3, rows


def test_regions_diff(tmp_path):
    """diff by region: matched by category and name, counters compared; a region of one side is new."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _region_store(a)
    _region_store(b, scale=2.0)
    with hubprof.open(a) as sa, hubprof.open(b) as sb:
        d = diff(sa, sb, by="region", counters="task-clock", metrics=[]).set_index("region")
    assert list(d.columns[:2]) == ["category", "status"] and set(d.status) == {"both"}
    assert close(d.loc["op", "task-clock_a"], 310) and close(d.loc["op", "task-clock_b"], 620)
    assert d.loc["op", "task-clock_dir"] == "higher" and close(d.loc["op", "task-clock_delta_pct"], 100)
    js = cli_json("diff", "--by", "region", "--counters", "task-clock", "--format", "json", a, b)
    rows = {r["region"]: r for r in (js["rows"] if isinstance(js, dict) else js)}
    assert close(rows["op"]["task-clock_b"], 620), rows


@pytest.mark.parametrize("fmt", ["rocpd", "log", "parquet"])
def test_regions_merged(tmp_path, fmt):
    """A merge renumbers regions per input and each dispatch's region_id with them: every dispatch still
    names its own input's region, in every output format."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _region_store(a)
    with hubprof.create(b) as w:  # a second process whose region ids collide with a's
        w.write("process", {"id": 1, "pid": 8, "start_ns": 1, "end_ns": 50})
        w.write("thread", {"id": 1, "process_id": 1, "tid": 8})
        w.write("agent", {"id": 1, "name": "cpu", "product_name": "cpu0", "compute_units": 2})
        w.write("kernel_symbol", {"id": [1], "name": ["k"]})
        w.write("region", {"id": [5], "process_id": 1, "thread_id": 1, "name": ["other"], "category": "hubprof",
                           "start_ns": [10], "end_ns": [20]})
        w.write("dispatch", {"id": [1], "dispatch_id": [1], "process_id": 1, "thread_id": 1, "agent_id": 1,
                             "kernel_id": 1, "enqueue_ns": [15], "start_ns": [16], "end_ns": [17], "region_id": [5]})
    out = tmp_path / f"m.{fmt}"
    hubprof.merge([a, b], out, format=fmt)
    with hubprof.open(out) as s:
        d, r = s.table("dispatch"), s.table("region")
        names = dict(zip(r.id, r["name"]))
        got = sorted((names.get(x, "") if x else "") for x in d.region_id)
        assert got == ["", "", "inner", "op", "other"], got
        df = s.analyze(by="region", counters=[], metrics=[]).set_index("region")
        assert df.loc["other", "dispatches"] == 1 and df.loc["op", "dispatches"] == 3
