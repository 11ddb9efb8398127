"""The roofline's data (issue 26 part 3): ceilings (the cache levels' too) written through the hub API in every
format, read back by Python (table("ceiling"), Store.ceilings()), kept through convert and merge; and `hubprof analyze --roofline`
placing kernels of NVIDIA- and gfx942-named counter values exactly (intensity, GFLOP/s), naming the counters
missing where a kernel cannot be placed."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import HUBPROF, need, run

import hubprof

NV = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
CEILINGS = [  # agent, name, value, unit
    (1, "fp64", 33500.0, "GFLOP/s"),
    (1, "fp32", 67000.0, "GFLOP/s"),
    (1, "dram", 3350.0, "GB/s"),
    (1, "l1", 33000.0, "GB/s"),  # the cache levels: bandwidth ceilings as dram is
    (1, "l2", 11000.0, "GB/s"),
    (1, "fp16", -1.0, "GFLOP/s"),  # not measured: left out of the roofline
    (2, "fp32", 163400.0, "GFLOP/s"),
    (2, "dram", 5300.0, "GB/s"),
    (2, "l2", -1.0, "GB/s"),  # not told apart from dram: left out too
]


def write_store(path, fmt="rocpd"):
    """Two devices (an H100 and a gfx942), their ceilings, and kernels with known counter values."""
    with hubprof.create(path, format=fmt) as w:
        w.write("node", {"id": 1, "hostname": "gpu1", "machine_id": "m1"})
        w.write("process", {"id": 1, "node_id": 1, "pid": 42, "start_ns": 1, "end_ns": 10**9})
        w.write("thread", {"id": 1, "process_id": 1, "tid": 42})
        w.write("agent", [{"id": 1, "node_id": 1, "type": 2, "vendor": "NVIDIA Corporation", "name": "NVIDIA H100"},
                          {"id": 2, "node_id": 1, "type": 2, "vendor": "AMD", "name": "gfx942"}])
        w.write("queue", [{"id": 1, "process_id": 1, "agent_id": 1}, {"id": 2, "process_id": 1, "agent_id": 2}])
        w.write("kernel_symbol", [{"id": i, "name": n, "display_name": n}
                                  for i, n in enumerate(["saxpy", "dgemm", "partial", "amd_fma", "nothing"], 1)])
        names = [NV.format(op) for op in ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma")] + ["dram__bytes.sum"]
        amd = ["SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32", "SQ_INSTS_VALU_TRANS_F32", "SQ_INSTS_VALU_FMA_F32",
               "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_BUBBLE_sum", "TCC_EA0_WRREQ_sum",
               "TCC_EA0_WRREQ_64B_sum"]
        cid = {n: i for i, n in enumerate(names + amd, 1)}
        w.write("counter_info", [{"id": i, "agent_id": 1 if n in names else 2, "name": n} for n, i in cid.items()])
        # dispatch id, kernel, agent, duration (ns), counter values
        disp = [
            (1, 1, 1, 1000, {"fadd": 100, "fmul": 200, "ffma": 300, "dram__bytes.sum": 400}),
            (2, 1, 1, 1000, {"fadd": 100, "fmul": 200, "ffma": 300, "dram__bytes.sum": 400}),
            (3, 2, 1, 4000, {"dadd": 0, "dmul": 0, "dfma": 5000, "fadd": 0, "fmul": 0, "ffma": 0,
                             "dram__bytes.sum": 1000}),
            (4, 3, 1, 100, {"ffma": 7, "dram__bytes.sum": 8}),  # fadd and fmul missing
            (5, 4, 2, 512, {"SQ_INSTS_VALU_ADD_F32": 1, "SQ_INSTS_VALU_MUL_F32": 1, "SQ_INSTS_VALU_TRANS_F32": 0,
                            "SQ_INSTS_VALU_FMA_F32": 1, "TCC_EA0_RDREQ_sum": 10, "TCC_EA0_RDREQ_32B_sum": 2,
                            "TCC_BUBBLE_sum": 1, "TCC_EA0_WRREQ_sum": 4, "TCC_EA0_WRREQ_64B_sum": 3}),
            (6, 5, 1, 50, {}),  # no counters at all
        ]
        rows, vals = [], []
        for d, k, a, dur, cv in disp:
            rows.append({"id": d, "dispatch_id": d, "process_id": 1, "thread_id": 1, "agent_id": a, "queue_id": a,
                         "kernel_id": k, "start_ns": 1000 * d, "end_ns": 1000 * d + dur, "passes": 1})
            for n, v in cv.items():
                vals.append({"dispatch_id": d, "counter_id": cid[NV.format(n) if n in
                             ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma") else n], "pass": 1, "value": v})
        w.write("dispatch", rows)
        w.write("counter_value", vals)
        w.write("ceiling", [{"id": i, "agent_id": a, "name": n, "value": v, "unit": u, "method": "test",
                             "note": "known", "measured_ns": 1_700_000_000_000_000_000}
                            for i, (a, n, v, u) in enumerate(CEILINGS, 1)])
    return path


def sections(text):
    """The two CSV tables of analyze --roofline --format csv: ceilings, kernels."""
    a, b = text.split("\n\n")
    return list(csv.DictReader(io.StringIO(a))), list(csv.DictReader(io.StringIO(b)))


@pytest.mark.parametrize("fmt", ["rocpd", "parquet", "log"])
def test_ceilings_read_back(tmp_path, fmt):
    path = write_store(tmp_path / f"s.{ {'rocpd': 'db', 'parquet': 'parquet', 'log': 'log'}[fmt] }", fmt)
    with hubprof.open(path) as s:
        c = s.ceilings()
        assert [(int(r.agent_id), r.name, r.value, r.unit) for r in c.itertuples()] == CEILINGS
        assert c["device"].tolist()[:6] == ["NVIDIA H100"] * 6 and c["device"].tolist()[-3:] == ["gfx942"] * 3
        assert set(c["method"]) == {"test"} and set(c["measured_ns"]) == {1_700_000_000_000_000_000}
        assert len(s.table("ceiling")) == len(CEILINGS)


def test_ceilings_convert_and_merge(tmp_path):
    a = write_store(tmp_path / "a.db")
    for out in ("b.parquet", "c.log", "d.db"):
        run(need(HUBPROF), "convert", "-q", "-o", tmp_path / out, a)
        with hubprof.open(tmp_path / out) as s:
            assert [(int(r.agent_id), r.name, r.value) for r in s.ceilings().itertuples()] == \
                   [c[:3] for c in CEILINGS], out
    # merging the same profile twice keeps each ceiling once, on its de-duplicated agent
    run(need(HUBPROF), "merge", "-q", "-o", tmp_path / "m.db", a, tmp_path / "b.parquet")
    with hubprof.open(tmp_path / "m.db") as s:
        c = s.ceilings()
        assert len(c) == len(CEILINGS)
        assert sorted(zip(c.device, c.name)) == sorted(
            ("NVIDIA H100" if x[0] == 1 else "gfx942", x[1]) for x in CEILINGS)


def test_analyze_places_kernels_exactly(tmp_path):
    path = write_store(tmp_path / "p.db")
    ceil, kern = sections(run(need(HUBPROF), "analyze", "--roofline", "--format", "csv", path).stdout)
    assert [(r["device"], r["ceiling"], r["value"], r["unit"]) for r in ceil] == [
        ("NVIDIA H100", "fp64", "33500.00", "GFLOP/s"), ("NVIDIA H100", "fp32", "67000.00", "GFLOP/s"),
        ("NVIDIA H100", "dram", "3350.00", "GB/s"), ("NVIDIA H100", "l1", "33000.00", "GB/s"),
        ("NVIDIA H100", "l2", "11000.00", "GB/s"), ("gfx942", "fp32", "163400.00", "GFLOP/s"),
        ("gfx942", "dram", "5300.00", "GB/s")]
    by = {(r["kernel"], r["precision"]): r for r in kern}
    # saxpy: 2 x (100 + 200 + 2 x 300) FLOP over 2 x 400 bytes in 2000 ns
    s = by[("saxpy", "fp32")]
    assert (s["flop"], s["bytes"], s["time_ns"], s["intensity"], s["gflops"]) == ("1800", "800", "2000", "2.25", "0.9")
    assert s["bound"] == "memory" and s["missing"] == ""  # 3350 x 2.25 < 67000 (dram's slope, not a cache's)
    # dgemm: only fp64 has FLOPs (2 x 5000 over 1000 bytes in 4000 ns)
    d = by[("dgemm", "fp64")]
    assert (d["flop"], d["bytes"], d["intensity"], d["gflops"]) == ("10000", "1000", "10", "2.5")
    assert ("dgemm", "fp32") not in by
    # gfx942: 64 x (1 + 1 + 0 + 2 x 1) FLOP; HBM bytes 128 x 1 + 64 x (10 - 1 - 2) + 32 x 2 + 64 x 3 + 32 x (4 - 3)
    g = by[("amd_fma", "fp32")]
    assert (g["flop"], g["bytes"], g["gflops"], g["intensity"]) == ("256", "864", "0.5", "0.296296")
    # partial: what is missing, by name
    p = by[("partial", "")]
    assert p["flop"] == "" and p["intensity"] == ""
    assert p["missing"] == "missing counters: " + NV.format("fadd") + ", " + NV.format("fmul")
    n = by[("nothing", "")]
    assert NV.format("fadd") in n["missing"] and "dram__bytes.sum" in n["missing"]
    # JSON: one object with both lists
    j = json.loads(run(need(HUBPROF), "analyze", "--roofline", "--format", "json", path).stdout)
    assert len(j["ceilings"]) == 7 and {k["kernel"] for k in j["kernels"]} == {"saxpy", "dgemm", "partial",
                                                                             "amd_fma", "nothing"}
