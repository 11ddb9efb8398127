"""Tests of `hubprof export`: each format read back by an independent reader (the compiled Perfetto protos of
the `perfetto` package, Python's json, `otf2-print`), on real traces of the OpenCL examples and on a made store
with awkward names, overlapping dispatches, nested regions, markers and counters; damage and output errors."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import hubprof
from conftest import BUILD, HUBPROF, need, run, write_one_queue

pf = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2", reason="pip install perfetto")

EX = BUILD / "examples" / "ocl"
# quotes, HTML, a newline, a byte that is never UTF-8, an overlong '/', an encoded surrogate and a cut sequence
WEIRD = ['say "hi"', "<script>alert(1)</script>", "two\nlines", "bad\udcffbyte",
         "ov\udcc0\udcafer\udced\udca0\udc80x\udce2\udc82"]
# the hub stores each byte that is not UTF-8 as the text \xNN (docs/formats), so that is what is exported
WEIRD_OUT = ['say "hi"', "<script>alert(1)</script>", "two\nlines", "bad\\xFFbyte",
             "ov\\xC0\\xAFer\\xED\\xA0\\x80x\\xE2\\x82"]


def have_opencl() -> bool:
    p = subprocess.run(["clinfo", "-l"], capture_output=True, text=True) if shutil.which("clinfo") else None
    return bool(p and "Device" in p.stdout)


def export(store: Path, out: Path, fmt: str, check: bool = True) -> subprocess.CompletedProcess:
    return run(need(HUBPROF), "export", store, "-o", out, "--format", fmt, check=check)


def dispatch_ids(store: Path) -> list[int]:
    """Collector dispatch ids of the dispatches with device times (the ones a timeline can place; the
    export warns about the others)."""
    with hubprof.open(store) as s:
        d = s.table("dispatch", columns=["dispatch_id", "start_ns", "end_ns"])
    d = d[(d.start_ns != 0) & (d.end_ns >= d.start_ns)]
    return [int(x) for x in d["dispatch_id"]]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A store with awkward kernel names, two dispatches that overlap on one queue, nested regions, a marker, a
    counter per dispatch."""
    path = tmp_path_factory.mktemp("made") / "made.db"
    with hubprof.create(path) as w:
        write_one_queue(w, pid=42, command="app <x>", start_ns=10)
        w.write("kernel_symbol", {"id": list(range(1, 6)), "name": WEIRD})
        n = 5
        w.write("dispatch", {"id": list(range(1, n + 1)), "dispatch_id": list(range(1, n + 1)), "process_id": 1,
                             "thread_id": 1, "agent_id": 1, "queue_id": 1, "kernel_id": list(range(1, n + 1)),
                             "grid_x": 256, "grid_y": 1, "grid_z": 1, "workgroup_x": 64, "workgroup_y": 1,
                             "workgroup_z": 1,
                             # dispatch 2 overlaps dispatch 1 without nesting: it needs a second lane
                             "start_ns": [1000, 1500, 3000, 4000, 5000], "end_ns": [2000, 2500, 3500, 4500, 5500],
                             "enqueue_ns": [900, 1400, 2900, 3900, 4900]})
        w.write("counter_info", {"id": 1, "name": "SQ_WAVES", "unit": "waves"})
        w.write("counter_value", {"dispatch_id": list(range(1, n + 1)), "counter_id": 1, "pass": 1,
                                  "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
        w.write("region", {"id": [1, 2, 3], "process_id": 1, "thread_id": 1, "name": ["outer", "inner", "mark"],
                           "category": "user", "start_ns": [800, 850, 870], "end_ns": [5000, 1450, 870]})
    return path


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> list[Path]:
    """Real traces: vector_add (one thread) and multithread (several threads and queues)."""
    if not have_opencl():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    d = tmp_path_factory.mktemp("real")
    out = []
    for name, args in (("vector_add", ["4096", "20"]), ("multithread", [])):
        need(EX / name)
        store = d / f"{name}.db"
        run(need(HUBPROF), "trace", "-q", "-o", store, "--", EX / name, *args)
        out.append(store)
    return out


# ---- readers ------------------------------------------------------------------------------------------------


def read_perfetto(path: Path) -> dict:
    """Slices per track from the protobuf trace: begin/end pairs, instants, counters, flows."""
    t = pf.Trace()
    t.ParseFromString(path.read_bytes())
    tracks, open_, slices, instants, counters = {}, defaultdict(list), defaultdict(list), [], []
    flows_out, flows_in = Counter(), Counter()
    events = []
    for p in t.packet:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            assert td.uuid not in tracks
            tracks[td.uuid] = td
        if p.HasField("track_event"):
            events.append((p.timestamp, p.track_event))
    for ts, e in sorted(events, key=lambda x: (x[0], x[1].type != pf.TrackEvent.TYPE_SLICE_END)):
        assert e.track_uuid in tracks, "event on an undescribed track"
        for f in e.flow_ids:
            flows_out[f] += 1
        for f in e.terminating_flow_ids:
            flows_in[f] += 1
        if e.type == pf.TrackEvent.TYPE_SLICE_BEGIN:
            open_[e.track_uuid].append((ts, e))
        elif e.type == pf.TrackEvent.TYPE_SLICE_END:
            b_ts, b = open_[e.track_uuid].pop()
            slices[e.track_uuid].append((b_ts, ts, b))
        elif e.type == pf.TrackEvent.TYPE_INSTANT:
            instants.append((ts, e))
        elif e.type == pf.TrackEvent.TYPE_COUNTER:
            counters.append((ts, e))
    assert not any(open_.values()), "slices left open"
    return dict(tracks=tracks, slices=slices, instants=instants, counters=counters, flows_out=flows_out,
                flows_in=flows_in)


def nested(spans: list[tuple[float, float]]) -> bool:
    """Are the spans of one track properly nested (none overlaps another without containing it)?"""
    stack: list[float] = []
    for b, e in sorted(spans, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1] <= b:
            stack.pop()
        if stack and e > stack[-1]:
            return False
        stack.append(e)
    return True


def annotations(e) -> dict:
    return {a.name: (a.string_value or a.uint_value or a.int_value) for a in e.debug_annotations}


def check_perfetto(path: Path, want_ids: list[int]) -> dict:
    t = read_perfetto(path)
    disp = [s for v in t["slices"].values() for s in v if "dispatch" in s[2].categories]
    assert sorted(int(annotations(s[2])["dispatch_id"]) for s in disp) == sorted(want_ids)
    for uuid, v in t["slices"].items():
        assert nested([(b, e) for b, e, _ in v]), f"slices of track {uuid} overlap"
    # every flow leaves one enqueue and ends at one device slice
    assert t["flows_out"] == t["flows_in"]
    assert all(n == 1 for n in t["flows_out"].values())
    assert len(t["flows_out"]) == len(want_ids)
    return t


def check_chrome(path: Path, want_ids: list[int]) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))  # strict: invalid UTF-8 or JSON raises
    ev = doc["traceEvents"]
    disp = [e for e in ev if e["ph"] == "X" and e.get("cat") == "dispatch"]
    assert sorted(e["args"]["dispatch_id"] for e in disp) == sorted(want_ids)
    per = defaultdict(list)
    for e in ev:
        if e["ph"] == "X":
            per[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
    for k, v in per.items():
        assert nested(v), f"slices of {k} overlap"
    s = Counter(e["id"] for e in ev if e["ph"] == "s")
    f = Counter(e["id"] for e in ev if e["ph"] == "f")
    assert s == f and all(n == 1 for n in s.values()) and len(s) == len(want_ids)
    # each flow ends where its dispatch starts, on the dispatch's track
    starts = {(e["pid"], e["tid"], e["ts"]) for e in disp}
    assert all((e["pid"], e["tid"], e["ts"]) in starts for e in ev if e["ph"] == "f")
    return doc


def otf2_counts(archive: Path) -> Counter:
    if not shutil.which("otf2-print"):
        pytest.skip("otf2-print missing (apt-get install otf2-tools)")
    p = run("otf2-print", archive / "traces.otf2")
    return Counter(line.split()[0] for line in p.stdout.splitlines() if line[:5] in ("ENTER", "LEAVE"))


# ---- tests ----------------------------------------------------------------------------------------------------


def test_real_traces_every_format(real, tmp_path):
    for store in real:
        ids = dispatch_ids(store)
        assert ids
        export(store, tmp_path / f"{store.stem}.pftrace", "perfetto")
        check_perfetto(tmp_path / f"{store.stem}.pftrace", ids)
        export(store, tmp_path / f"{store.stem}.json", "chrome")
        check_chrome(tmp_path / f"{store.stem}.json", ids)
        export(store, tmp_path / f"{store.stem}-otf2", "otf2")
        c = otf2_counts(tmp_path / f"{store.stem}-otf2")
        assert c["ENTER"] == c["LEAVE"] == len(ids)


def test_multithread_has_thread_and_queue_tracks(real, tmp_path):
    store = real[1]
    export(store, tmp_path / "mt.pftrace", "perfetto")
    t = read_perfetto(tmp_path / "mt.pftrace")
    threads = [d for d in t["tracks"].values() if d.HasField("thread")]
    with hubprof.open(store) as s:
        assert len(threads) == s.count("thread")
    assert len(threads) > 1


def test_made_store_perfetto(made, tmp_path):
    out = tmp_path / "m.pftrace"
    export(made, out, "perfetto")
    t = check_perfetto(out, [1, 2, 3, 4, 5])
    names = {s[2].name for v in t["slices"].values() for s in v}
    # awkward names come out as valid UTF-8, the invalid byte replaced
    assert set(WEIRD_OUT) | {"outer", "inner"} <= names
    lanes = [d.name for d in t["tracks"].values() if d.name.startswith("q")]
    assert any("lane 2" in n for n in lanes), "overlapping dispatches need a second lane"
    assert [i[1].name for i in t["instants"] if i[1].name == "mark"] == ["mark"]
    assert sorted(e.double_counter_value for _, e in t["counters"]) == [1.0, 2.0, 3.0, 4.0, 5.0]
    grid = [annotations(s[2])["grid"] for v in t["slices"].values() for s in v if "dispatch" in s[2].categories]
    assert set(grid) == {"256,1,1"}


def test_made_store_chrome(made, tmp_path):
    out = tmp_path / "m.json"
    export(made, out, "chrome")
    raw = out.read_bytes()
    assert b"<script>" not in raw and b"\xff" not in raw
    doc = check_chrome(out, [1, 2, 3, 4, 5])
    names = {e["name"] for e in doc["traceEvents"]}
    assert set(WEIRD_OUT) | {"mark"} <= names
    assert sorted(e["args"]["value"] for e in doc["traceEvents"] if e["ph"] == "C") == [1, 2, 3, 4, 5]
    assert [e["name"] for e in doc["traceEvents"] if e["ph"] == "i"] == ["mark"]


def test_made_store_otf2(made, tmp_path):
    export(made, tmp_path / "m-otf2", "otf2")
    c = otf2_counts(tmp_path / "m-otf2")
    # 5 dispatches + 3 regions (the marker is an Enter and Leave at one time)
    assert c["ENTER"] == c["LEAVE"] == 8
    defs = run("otf2-print", "-G", tmp_path / "m-otf2" / "traces.otf2").stdout
    assert "bad\\xFFbyte" in defs


def test_damaged_store_exports_what_is_complete(logs, tmp_path):
    log = logs[0]
    with hubprof.open(log) as s:
        total = s.count("dispatch")
    cut = tmp_path / "cut.log"
    data = log.read_bytes()
    for frac in (0.6, 0.4, 0.2, 0.1):  # a cut inside the dispatches
        cut.write_bytes(data[: int(len(data) * frac)])
        with hubprof.open(cut) as s:
            readable = s.count("dispatch")
        if 0 < readable < total:
            break
    assert 0 < readable < total
    p = export(cut, tmp_path / "cut.json", "chrome")
    assert "damaged store" in p.stderr and "skipped" in p.stderr
    doc = json.loads((tmp_path / "cut.json").read_text())
    assert len([e for e in doc["traceEvents"] if e.get("cat") == "dispatch"]) == readable


def test_output_errors(made, tmp_path):
    # a folder that does not exist: one error line, nothing left
    p = export(made, tmp_path / "no" / "x.json", "chrome", check=False)
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "x.json" in p.stderr
    # an existing output is refused without -f, replaced with it
    out = tmp_path / "x.pftrace"
    out.write_text("old")
    p = export(made, out, "perfetto", check=False)
    assert p.returncode == 1 and "exists" in p.stderr and out.read_text() == "old"
    run(need(HUBPROF), "export", made, "-o", out, "-f")
    check_perfetto(out, [1, 2, 3, 4, 5])
    # a read-only folder: an error, no temporary file left behind
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        p = export(made, ro / "x.json", "chrome", check=False)
        if p.returncode == 0:
            pytest.skip("running as a user who can write anywhere")
        assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)
    # a store that is not one
    junk = tmp_path / "junk.db"
    junk.write_text("not a store")
    p = export(junk, tmp_path / "j.json", "chrome", check=False)
    assert p.returncode == 1 and not (tmp_path / "j.json").exists()
    # usage errors
    assert run(need(HUBPROF), "export", made, check=False).returncode == 2
    assert run(need(HUBPROF), "export", made, "-o", tmp_path / "y", "--format", "svg", check=False).returncode == 2


def test_python_store_export(made, tmp_path, monkeypatch):
    monkeypatch.setenv("HUBPROF_CLI", str(need(HUBPROF)))
    with hubprof.open(made) as s:
        out = s.export(tmp_path / "p.pftrace")
        assert out == tmp_path / "p.pftrace"
        check_perfetto(out, [1, 2, 3, 4, 5])
        check_chrome(s.export(tmp_path / "p.json", format="chrome"), [1, 2, 3, 4, 5])
        with pytest.raises(hubprof.Error, match="exists"):
            s.export(tmp_path / "p.json", format="chrome")
        s.export(tmp_path / "p.json", format="chrome", force=True)
        with pytest.raises(ValueError, match="svg"):
            s.export(tmp_path / "p.svg", format="svg")


def test_otf2_force_replaces_only_an_archive(made, tmp_path):
    out = tmp_path / "a-otf2"
    export(made, out, "otf2")
    run(need(HUBPROF), "export", made, "-o", out, "--format", "otf2", "-f")
    assert otf2_counts(out)["ENTER"] == 8
    other = tmp_path / "precious"
    other.mkdir()
    (other / "keep.txt").write_text("keep")
    p = run(need(HUBPROF), "export", made, "-o", other, "--format", "otf2", "-f", check=False)
    assert p.returncode == 1 and "not an OTF2 archive" in p.stderr
    assert (other / "keep.txt").read_text() == "keep"


# ---- --api: API calls on their threads, memory copies on their queues (task api11) ------------------------------


@pytest.fixture(scope="module")
def api_store(tmp_path_factory) -> Path:
    if not have_opencl():
        pytest.skip("no OpenCL device")
    out = tmp_path_factory.mktemp("api") / "api.db"
    run(need(HUBPROF), "trace", "-q", "--api", "-o", out, "--", need(EX / "api_calls"), "1024", "5")
    return out


def test_api_calls_and_copies_every_format(api_store, tmp_path):
    with hubprof.open(api_store) as s:
        mc = s.table("memory_copy").sort_values("id")
        reg = s.table("region")
    api = reg[reg.category == "api"]
    ndisp = len(dispatch_ids(api_store))
    copies = sorted(zip(mc.name, mc.bytes))
    assert len(mc) == 10 and len(api) > 10
    # Perfetto: copies as slices with their bytes on queue tracks, API calls nested on the thread's track, one
    # flow per dispatch and per copy, each from one enqueue to one device slice
    export(api_store, tmp_path / "a.pftrace", "perfetto")
    t = read_perfetto(tmp_path / "a.pftrace")
    cps = [s for v in t["slices"].values() for s in v if "copy" in s[2].categories]
    assert sorted((s[2].name, int(annotations(s[2])["bytes"])) for s in cps) == copies
    calls = [s for v in t["slices"].values() for s in v if "api" in s[2].categories]
    assert Counter(s[2].name for s in calls) == Counter(api.name)
    for uuid, v in t["slices"].items():
        assert nested([(b, e) for b, e, _ in v]), f"slices of track {uuid} overlap"
    assert t["flows_out"] == t["flows_in"] and len(t["flows_out"]) == ndisp + len(mc)
    assert all(n == 1 for n in t["flows_out"].values())
    # Chrome JSON: the same, and each copy flow ends where its copy starts
    export(api_store, tmp_path / "a.json", "chrome")
    ev = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))["traceEvents"]
    cx = [e for e in ev if e["ph"] == "X" and e.get("cat") == "copy"]
    assert sorted((e["name"], e["args"]["bytes"]) for e in cx) == copies
    assert Counter(e["name"] for e in ev if e["ph"] == "X" and e.get("cat") == "api") == Counter(api.name)
    s = Counter(e["id"] for e in ev if e["ph"] == "s")
    f = Counter(e["id"] for e in ev if e["ph"] == "f")
    assert s == f and len(s) == ndisp + len(mc) and all(n == 1 for n in s.values())
    starts = {(e["pid"], e["tid"], e["ts"]) for e in cx}
    assert all((e["pid"], e["tid"], e["ts"]) in starts for e in ev if e["ph"] == "f" and e["name"] == "copy")
    per = defaultdict(list)
    for e in ev:
        if e["ph"] == "X":
            per[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
    assert all(nested(v) for v in per.values())
    # OTF2: one Enter/Leave per dispatch, region and copy
    export(api_store, tmp_path / "a-otf2", "otf2")
    c = otf2_counts(tmp_path / "a-otf2")
    assert c["ENTER"] == c["LEAVE"] == ndisp + len(reg) + len(mc)


def two_node_store(path: Path, offsets: tuple[int, int], same_node: bool = False) -> Path:
    """Two processes, on two nodes (or one), each with a dispatch, a region, a copy at the same local times; the
    nodes' clock offsets (CLOCK_REALTIME - CLOCK_MONOTONIC_RAW) as given."""
    with hubprof.create(path) as w:
        w.write("node", {"id": [1, 2], "hostname": ["a", "b"]})
        w.write("process", {"id": [1, 2], "node_id": [1, 1 if same_node else 2], "pid": [10, 20],
                            "start_ns": 10, "command": ["app-a", "app-b"], "clock_offset_ns": list(offsets)})
        w.write("thread", {"id": [1, 2], "process_id": [1, 2], "tid": [10, 20], "name": "main"})
        w.write("agent", {"id": [1, 2], "node_id": [1, 2], "type": 2, "name": "dev"})
        w.write("queue", {"id": [1, 2], "process_id": [1, 2], "agent_id": [1, 2], "name": "q"})
        w.write("kernel_symbol", {"id": 1, "name": "k"})
        w.write("dispatch", {"id": [1, 2], "dispatch_id": [1, 2], "process_id": [1, 2], "thread_id": [1, 2],
                             "agent_id": [1, 2], "queue_id": [1, 2], "kernel_id": 1, "grid_x": 64, "grid_y": 1,
                             "grid_z": 1, "workgroup_x": 64, "workgroup_y": 1, "workgroup_z": 1,
                             "start_ns": 100_000, "end_ns": 200_000, "enqueue_ns": 90_000})
        w.write("region", {"id": [1, 2], "process_id": [1, 2], "thread_id": [1, 2], "name": "r",
                           "category": "user", "start_ns": 50_000, "end_ns": 250_000})
    return path


def test_clock_alignment_across_nodes(tmp_path):
    """Node b's clock offset is 7 ms more than node a's: b's times move 7 ms later in every format; one node
    or an unknown offset leaves them as stored."""
    cases = {"two": ((1_000_000_000, 1_007_000_000), False, 7_000_000),
             "unknown": ((1_000_000_000, 0), False, 0),
             "one": ((1_000_000_000, 1_007_000_000), True, 0)}
    for name, (offsets, same, shift) in cases.items():
        store = two_node_store(tmp_path / f"{name}.db", offsets, same)
        export(store, tmp_path / f"{name}.pftrace", "perfetto")
        p = read_perfetto(tmp_path / f"{name}.pftrace")
        starts = sorted(b for sl in p["slices"].values() for b, _, _ in sl)
        # per process: the region (50 us) and the dispatch (100 us)
        assert starts == sorted([50_000, 100_000, 50_000 + shift, 100_000 + shift]), name
        export(store, tmp_path / f"{name}.json", "chrome")
        ev = json.loads((tmp_path / f"{name}.json").read_text())
        ev = ev["traceEvents"] if isinstance(ev, dict) else ev
        xs = sorted(round(e["ts"] * 1000) for e in ev
                    if e.get("ph") == "X" and e.get("cat") in ("dispatch", "user"))
        assert xs == sorted([50_000, 100_000, 50_000 + shift, 100_000 + shift]), (name, xs)
        if shutil.which("otf2-print") and "otf2" in run(need(HUBPROF), "export", "--help").stdout:
            export(store, tmp_path / f"{name}.otf2", "otf2")
            out = run("otf2-print", tmp_path / f"{name}.otf2" / "traces.otf2").stdout
            ts = sorted(int(line.split()[2]) for line in out.splitlines() if line.startswith("ENTER"))
            # otf2-print shows times from the clock properties' start (the earliest event)
            want = sorted([50_000, 100_000, 50_000 + shift, 100_000 + shift])
            assert [t - ts[0] for t in ts] == [t - want[0] for t in want], (name, ts)


def test_counter_samples_as_counter_tracks(tmp_path):
    """Counter samples (`hubprof sample --counters`) become a counter track per queue and counter, `… (sample)`,
    next to the per-dispatch values' track: Perfetto counter events and Chrome `C` events at the samples'
    times with their values."""
    store = tmp_path / "s.db"
    starts = [1000, 5000]
    with hubprof.create(store) as w:
        write_one_queue(w)
        w.write("kernel_symbol", {"id": 1, "name": "k"})
        w.write("dispatch", {"id": [1, 2], "dispatch_id": [1, 2], "process_id": 1, "thread_id": 1,
                             "agent_id": 1, "queue_id": 1, "kernel_id": 1, "grid_x": 64, "grid_y": 1, "grid_z": 1,
                             "workgroup_x": 64, "workgroup_y": 1, "workgroup_z": 1, "start_ns": starts,
                             "end_ns": [s + 2000 for s in starts]})
        w.write("counter_info", {"id": 1, "name": "SQ_WAVES", "unit": "waves"})
        w.write("counter_value", {"dispatch_id": [1, 2], "counter_id": 1, "pass": 1, "value": [7.0, 8.0]})
        st = [s + 400 * (i + 1) for s in starts for i in range(3)]
        sv = [float(10 * d + i) for d in (1, 2) for i in range(3)]
        w.write("counter_sample", {"id": list(range(1, 7)), "dispatch_id": [1, 1, 1, 2, 2, 2], "counter_id": 1,
                                   "timestamp_ns": st, "value": sv})
    p = export(store, tmp_path / "s.pftrace", "perfetto")
    assert "6 counter samples" in p.stderr, p.stderr
    t = read_perfetto(tmp_path / "s.pftrace")
    by_track = defaultdict(list)
    for ts, e in t["counters"]:
        by_track[t["tracks"][e.track_uuid].name].append((ts, e.double_counter_value))
    assert by_track["q (dev) SQ_WAVES (sample)"] == list(zip(st, sv))
    assert by_track["q (dev) SQ_WAVES"] == [(1000, 7.0), (5000, 8.0)]
    p = export(store, tmp_path / "s.json", "chrome")
    assert "6 counter samples" in p.stderr, p.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    c = [(round(e["ts"] * 1000), e["args"]["value"]) for e in ev
         if e["ph"] == "C" and e["name"] == "q (dev) SQ_WAVES (sample)"]
    assert c == list(zip(st, sv))
