"""Tests of `hubprof trace --api`: examples/ocl/api_calls makes a known sequence of OpenCL calls and transfer
commands; every call and every copy is counted exactly, with the right bytes and direction, nested right on
its thread, in every store format, through ROCm's views, analyze (CLI and Python), convert and merge; without
--api the store has none of these rows and the application's output is the same."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import hubprof
from conftest import BUILD, HUBPROF, need, run

APP = BUILD / "examples" / "ocl" / "api_calls"
N, K = 1024, 5  # floats per buffer, kernel launches
B = N * 4
CALLS = Counter({
    "clGetPlatformIDs": 1, "clGetDeviceIDs": 1, "clCreateContext": 1, "clCreateCommandQueue": 1,
    "clCreateProgramWithSource": 1, "clBuildProgram": 1, "clCreateKernel": 1, "clCreateBuffer": 2,
    "clEnqueueWriteBuffer": 2, "clWaitForEvents": 1, "clReleaseEvent": 1, "clEnqueueFillBuffer": 1,
    "clSetKernelArg": 1, "clEnqueueNDRangeKernel": K, "clEnqueueCopyBuffer": 1, "clFinish": 2,
    "clEnqueueReadBufferRect": 1, "clEnqueueMapBuffer": 1, "clEnqueueUnmapMemObject": 1,
    "clEnqueueReadBuffer": 1, "clEnqueueWriteImage": 1, "clEnqueueReadImage": 1, "clReleaseMemObject": 3,
    "clReleaseKernel": 1, "clReleaseProgram": 1, "clReleaseCommandQueue": 1, "clReleaseContext": 1,
})
H2D, D2H, D2D, FILL = 1, 2, 3, 4
COPIES = [  # in enqueue order: call, direction, bytes
    ("clEnqueueWriteBuffer", H2D, B), ("clEnqueueWriteBuffer", H2D, B // 2), ("clEnqueueFillBuffer", FILL, B // 2),
    ("clEnqueueCopyBuffer", D2D, B // 4), ("clEnqueueReadBufferRect", D2H, 256), ("clEnqueueMapBuffer", D2H, 1024),
    ("clEnqueueUnmapMemObject", H2D, 1024), ("clEnqueueReadBuffer", D2H, B), ("clEnqueueWriteImage", H2D, 256),
    ("clEnqueueReadImage", D2H, 256),
]
DIRS = {1: "H2D", 2: "D2H", 3: "D2D", 4: "FILL"}


def have_opencl() -> bool:
    p = subprocess.run(["clinfo", "-l"], capture_output=True, text=True) if shutil.which("clinfo") else None
    return bool(p and "Device" in p.stdout)


needs_cl = pytest.mark.skipif(not have_opencl(), reason="no OpenCL device (install pocl-opencl-icd)")


def trace(out: Path, *opts: str) -> str:
    p = run(need(HUBPROF), "trace", "-q", *opts, "-o", out, "--", need(APP), str(N), str(K))
    return p.stdout


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict:
    if not have_opencl():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    d = tmp_path_factory.mktemp("api")
    out = {}
    for ext in ("db", "parquet", "log"):
        out[ext] = d / f"api.{ext}"
        out[f"stdout_{ext}"] = trace(out[ext], "--api")
    out["plain"] = d / "plain.db"
    out["stdout_plain"] = trace(out["plain"])
    return out


def tables(store: Path):
    with hubprof.open(store) as s:
        return s.table("region"), s.table("memory_copy"), s.table("dispatch")


@pytest.mark.parametrize("ext", ["db", "parquet", "log"])
def test_every_call_and_copy_counted(stores, ext):
    reg, mc, disp = tables(stores[ext])
    api = reg[reg.category == "api"]
    assert Counter(api.name) == CALLS
    assert len(disp) == K
    mc = mc.sort_values("id")
    assert [(r.name, int(r.direction), int(r.bytes)) for r in mc.itertuples()] == COPIES
    assert (mc.start_ns > 0).all() and (mc.end_ns >= mc.start_ns).all()  # device times from the events
    assert set(mc.queue_id) == set(disp.queue_id) and set(mc.agent_id) == set(disp.agent_id)
    assert set(mc.thread_id) == set(disp.thread_id) == set(api.thread_id)


@pytest.mark.parametrize("ext", ["db", "parquet", "log"])
def test_nesting(stores, ext):
    reg, mc, disp = tables(stores[ext])
    api = reg[reg.category == "api"].sort_values("start_ns")
    spans = list(zip(api.start_ns, api.end_ns, api.name))
    # calls on one thread never overlap (none calls another)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))

    def inside(t, name):
        return sum(1 for s, e, n in spans if n == name and s <= t <= e) == 1

    # each copy and each dispatch was enqueued inside its own call's span
    assert all(inside(r.enqueue_ns, r.name) for r in mc.itertuples())
    assert all(inside(t, "clEnqueueNDRangeKernel") for t in disp.enqueue_ns)


def test_without_api_none_of_these_rows(stores):
    reg, mc, disp = tables(stores["plain"])
    assert len(mc) == 0 and (reg.category != "api").all() and len(disp) == K
    assert stores["stdout_plain"] == stores["stdout_db"] == stores["stdout_parquet"]  # the app's output


def test_rocm_views(stores):
    with sqlite3.connect(stores["db"]) as db:
        got = Counter(dict(db.execute("SELECT name, COUNT(*) FROM regions WHERE category = 'api' GROUP BY name")))
        assert got == CALLS
        rows = db.execute("SELECT name, direction, size FROM memory_copies ORDER BY id").fetchall()
        assert rows == [(n, DIRS[d], b) for n, d, b in COPIES]
        assert db.execute("SELECT COUNT(*) FROM memory_copies WHERE duration < 0 OR queue_name IS NULL").fetchone()[0] == 0


def analyze_csv(store: Path, by: str) -> list[dict]:
    p = run(need(HUBPROF), "analyze", store, "--by", by, "--format", "csv")
    return list(csv.DictReader(io.StringIO(p.stdout)))


@pytest.mark.parametrize("ext", ["db", "parquet", "log"])
def test_analyze(stores, ext):
    rows = analyze_csv(stores[ext], "api")
    assert Counter({r["function"]: int(r["calls"]) for r in rows}) == CALLS
    assert all(int(r["total_ns"]) >= int(r["max_ns"]) >= int(r["min_ns"]) >= 0 for r in rows)
    assert abs(sum(float(r["percent"]) for r in rows) - 100) < 1e-6
    rows = analyze_csv(stores[ext], "copy")
    want_b, want_n = Counter(), Counter()
    for _, d, b in COPIES:
        want_b[DIRS[d]] += b
        want_n[DIRS[d]] += 1
    assert {r["direction"]: int(r["bytes"]) for r in rows} == want_b
    assert {r["direction"]: int(r["copies"]) for r in rows} == {r["direction"]: int(r["timed_copies"]) for r in rows} == want_n
    assert all(float(r["bandwidth_gbs"]) > 0 for r in rows)
    with hubprof.open(stores[ext]) as s:
        assert dict(zip(s.analyze(by="copy").direction, s.analyze(by="copy").bytes)) == want_b
        assert Counter(dict(zip(s.analyze(by="api").function, s.analyze(by="api").calls))) == CALLS


def test_analyze_without_api_says_so(stores):
    p = run(need(HUBPROF), "analyze", stores["plain"], "--by", "copy")
    assert "no memory copies" in p.stdout and "--api" in p.stdout


def test_convert_and_merge_keep_them(stores, tmp_path):
    conv = tmp_path / "c.parquet"
    run(need(HUBPROF), "convert", stores["db"], "-o", conv)
    merged = tmp_path / "m.db"
    run(need(HUBPROF), "merge", stores["log"], stores["plain"], "-o", merged)
    for store, want_calls in ((conv, CALLS), (merged, CALLS)):
        reg, mc, _ = tables(store)
        assert Counter(reg[reg.category == "api"].name) == want_calls
        assert [(r.name, int(r.direction), int(r.bytes)) for r in mc.sort_values("id").itertuples()] == COPIES
        # references still point at rows of the store
        _, _, disp = tables(store)
        assert set(mc.queue_id) <= set(disp.queue_id)


@needs_cl
@pytest.mark.parametrize("cmd", [["profile", "--counters", "task-clock"], ["sample"]])
def test_profile_and_sample_take_api(tmp_path, cmd):
    """The same calls and copies under kernel replay (its own restore copies are not the application's) and
    under sampling."""
    out = tmp_path / "s.db"
    p = run(need(HUBPROF), *cmd, "-q", "--api", "-o", out, "--", need(APP), str(N), str(K))
    assert "bad=0" in p.stdout
    reg, mc, disp = tables(out)
    assert Counter(reg[reg.category == "api"].name) == CALLS
    assert [(r.name, int(r.direction), int(r.bytes)) for r in mc.sort_values("id").itertuples()] == COPIES


@pytest.mark.parametrize("ext", ["db", "log", "parquet"])
def test_older_stores_open_without_copies(ext):
    """Stores written before the memory_copy table read as having none."""
    old = Path(__file__).resolve().parents[1] / "fixtures" / f"schema1.{ext}"
    with hubprof.open(old) as s:
        assert len(s.table("memory_copy")) == 0 and len(s.table("dispatch")) > 0
    p = run(need(HUBPROF), "analyze", old, "--by", "copy")
    assert "no memory copies" in p.stdout
