"""Counter samples joined to their dispatch by id in `hubprof export` (issue 28): samples stored in time order,
not in dispatch order (overlapping dispatches, a dispatch stored ahead of one that ran before it, as the
collector's harvester thread writes them), are all exported, in every format; only a sample of a dispatch the
store lacks is skipped and counted. A made store, one long enough to be sorted through a temporary file, and
a real `hubprof sample` run. And the queue lanes such stores get: a dispatch goes on the first lane where it
overlaps nothing, whatever its place in the store (Perfetto, Chrome; OTF2 keeps each lane in time order)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import hubprof
from conftest import BUILD, HUBPROF, need, run, write_one_queue

EX = BUILD / "examples" / "ocl"


def formats() -> list[str]:
    p = run(need(HUBPROF), "version", check=False)
    m = re.search(r"^export formats: (.*)$", p.stdout + p.stderr, re.M)
    have = m.group(1).split() if m else ["perfetto", "chrome"]
    return [f.strip(",") for f in have if f.strip(",") in ("perfetto", "chrome", "otf2")]


def export(store: Path, out: Path, fmt: str, env: dict | None = None) -> str:
    """stderr of a successful export."""
    return run(need(HUBPROF), "export", store, "-o", out, "--format", fmt, env=env).stderr


def exported_samples(err: str) -> int:
    m = re.search(r"(\d+) counter samples?\b", err)
    return int(m.group(1)) if m else 0


def write_dispatches(w, starts: list[int], ends: list[int]) -> None:
    """Through writer w: one queue (write_one_queue), kernel 1 and dispatches 1, 2, … of these device times,
    in this store order."""
    n = len(starts)
    write_one_queue(w)
    w.write("kernel_symbol", {"id": 1, "name": "k"})
    w.write("dispatch", {"id": list(range(1, n + 1)), "dispatch_id": list(range(1, n + 1)), "process_id": 1,
                         "thread_id": 1, "agent_id": 1, "queue_id": 1, "kernel_id": 1, "grid_x": 64, "grid_y": 1,
                         "grid_z": 1, "workgroup_x": 64, "workgroup_y": 1, "workgroup_z": 1, "start_ns": starts,
                         "end_ns": ends, "enqueue_ns": [s - 10 for s in starts]})


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """Four dispatches in id order; 1 and 2 overlap (their samples interleave), 3 ran after 4 (stored ahead of
    it, as a dispatch the harvester wrote); samples in time order, two of no dispatch (whole run) among them,
    and one of dispatch 9, which the store lacks."""
    path = tmp_path_factory.mktemp("order") / "o.db"
    starts, ends = [1000, 1500, 4100, 3000], [2000, 2600, 5000, 4000]
    with hubprof.create(path) as w:
        write_dispatches(w, starts, ends)
        w.write("counter_info", {"id": [1, 2], "name": ["task-clock", "page-faults"], "unit": "x"})
        rows = [(1, 1100), (2, 1600), (1, 1700), (2, 1800), (1, 1900), (2, 2500), (0, 2800), (4, 3100),
                (4, 3500), (4, 3900), (9, 3950), (3, 4200), (3, 4600), (3, 4900), (0, 5200)]
        w.write("counter_sample", {"id": list(range(1, len(rows) + 1)), "dispatch_id": [d for d, _ in rows],
                                   "counter_id": [2 if d == 0 else 1 for d, _ in rows],
                                   "timestamp_ns": [t for _, t in rows],
                                   "value": [float(i) for i in range(len(rows))], "process_id": 1,
                                   "sample_set": 1})
    return path


@pytest.mark.parametrize("fmt", ["perfetto", "chrome", "otf2"])
def test_samples_out_of_dispatch_order_all_exported(made, tmp_path, fmt):
    if fmt not in formats():
        pytest.skip(f"hubprof built without {fmt} export")
    err = export(made, tmp_path / f"o-{fmt}", fmt)
    assert exported_samples(err) == 14, err  # all 15 but dispatch 9's
    assert "1 event out of order skipped" in err, err


def test_otf2_samples_in_their_dispatch(made, tmp_path):
    """Each dispatch's samples between its Enter and Leave, in time order (otf2-print reads them back)."""
    if "otf2" not in formats() or not shutil.which("otf2-print"):
        pytest.skip("no OTF2 export or no otf2-print")
    out = tmp_path / "o-otf2"
    export(made, out, "otf2")
    text = run("otf2-print", out / "traces.otf2").stdout
    times = [int(t) for t in re.findall(r"^METRIC\s+\d+\s+(\d+)\s+Metric: 1,", text, re.M)]
    assert sorted(times) == [1100, 1600, 1700, 1800, 1900, 2500, 3100, 3500, 3900, 4200, 4600, 4900], text


def test_long_table_sorted_through_a_file(tmp_path):
    """More samples than one run in memory (32 768): written in runs to $TMPDIR, merged back, all exported
    with their dispatch in time order; the temporary file is gone afterwards."""
    n, per = 8, 6000
    starts = [10_000 + d * 100_000 for d in range(n)]
    path = tmp_path / "long.db"
    with hubprof.create(path) as w:
        write_dispatches(w, starts, [s + 50_000 for s in starts])
        w.write("counter_info", {"id": 1, "name": "task-clock", "unit": "ns"})
        # round robin over the dispatches, last first: no dispatch's samples together, none in id order
        sd = [n - (i % n) for i in range(n * per)]
        st = [starts[d - 1] + 1 + i // n for i, d in enumerate(sd)]
        w.write("counter_sample", {"id": list(range(1, n * per + 1)), "dispatch_id": sd, "counter_id": 1,
                                   "timestamp_ns": st, "value": [float(t) for t in st], "process_id": 1,
                                   "sample_set": 1})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    for fmt in formats():
        err = export(path, tmp_path / f"long-{fmt}", fmt, env)
        assert exported_samples(err) == n * per and "out of order" not in err, (fmt, err)
        assert not list(tmp.iterdir())
    if "otf2" in formats() and shutil.which("otf2-print"):
        text = run("otf2-print", tmp_path / "long-otf2" / "traces.otf2").stdout
        assert text.count("\nMETRIC ") == n * per


def have_opencl() -> bool:
    p = subprocess.run(["clinfo", "-l"], capture_output=True, text=True) if shutil.which("clinfo") else None
    return bool(p and "Device" in p.stdout)


def stored_ahead(store: Path) -> bool:
    """A dispatch of the one queue stored ahead of (a lower id than) a dispatch that started before it."""
    with hubprof.open(store) as s:
        d = s.table("dispatch", columns=["id", "queue_id", "start_ns"])
    d = d[d.start_ns != 0].sort_values("id")
    return any((g.start_ns.diff().dropna() < 0).any() for _, g in d.groupby("queue_id"))


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    """`hubprof sample --counters task-clock` of hot_spot: 12 dispatches of ~10 ms, several samples each. The
    harvester thread writes the dispatches that complete while the application waits in a blocking read; the
    application writes those its own harvest takes (the last ones, at clFinish) into its part of the log, which
    lies ahead of the harvester's: they get the lowest ids, their samples come last (4 runs of 4 here). Run
    again (at most 4 times) until that happened, the case the export used to skip the samples of."""
    if not have_opencl():
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    d = tmp_path_factory.mktemp("sampled")
    env = dict(os.environ, POCL_DEVICES="pthread", POCL_CACHE_DIR=str(d / "kcache"))
    for i in range(4):
        store = d / f"s{i}.db"
        run(need(HUBPROF), "sample", "-q", "--counters", "task-clock", "-o", store, "--", need(EX / "hot_spot"),
            "2000000", "6", env=env, cwd=d)
        if stored_ahead(store):
            break
    return store


def test_real_sample_run_every_sample_exported(sampled, tmp_path):
    with hubprof.open(sampled) as s:
        d = s.table("dispatch", columns=["id", "start_ns", "end_ns"])
        cs = s.table("counter_sample", columns=["dispatch_id"])
    timed = set(d[(d.start_ns != 0) & (d.end_ns >= d.start_ns)].id)
    want = int(cs.dispatch_id.isin(timed).sum())
    assert want > 0, cs
    for fmt in ("perfetto", "chrome"):
        err = export(sampled, tmp_path / f"s-{fmt}", fmt)
        assert "out of order" not in err and exported_samples(err) == want, (fmt, want, err)


# ---- queue lanes: a dispatch stored ahead of one that started before it -------------------------------------


def lanes_of(out: Path, fmt: str) -> dict[int, str]:
    """The queue track each dispatch is on, by dispatch id: its name (`q (dev)`, `q (dev) lane 2`, …); the
    slices of each track checked not to overlap (test_export's readers)."""
    from test_export import annotations, check_chrome, check_perfetto, read_perfetto
    if fmt == "chrome":
        doc = json.loads(out.read_text(encoding="utf-8"))
        disp = [e for e in doc["traceEvents"] if e["ph"] == "X" and e.get("cat") == "dispatch"]
        check_chrome(out, [e["args"]["dispatch_id"] for e in disp])
        names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name"}
        return {e["args"]["dispatch_id"]: names[(e["pid"], e["tid"])] for e in disp}
    t = read_perfetto(out)
    ids = [int(annotations(s[2])["dispatch_id"]) for v in t["slices"].values() for s in v
           if "dispatch" in s[2].categories]
    check_perfetto(out, ids)
    return {int(annotations(s[2])["dispatch_id"]): t["tracks"][uuid].name for uuid, v in t["slices"].items()
            for s in v if "dispatch" in s[2].categories}


@pytest.mark.parametrize("fmt", ["perfetto", "chrome"])
def test_dispatch_stored_ahead_on_first_lane(made, tmp_path, fmt):
    """Dispatch 4 (3000–4000) comes after dispatch 3 (4100–5000) in store order but overlaps nothing on the
    first lane: it goes there, not on the second lane that dispatch 2 (overlapping dispatch 1) needs."""
    pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2", reason="pip install perfetto")
    out = tmp_path / f"lanes.{fmt}"
    export(made, out, fmt)
    assert lanes_of(out, fmt) == {1: "q (dev)", 2: "q (dev) lane 2", 3: "q (dev)", 4: "q (dev)"}


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> Path:
    """One queue's dispatches, none overlapping, stored as the collector's two writers leave them: the last
    three (ids 1–3) ahead of the five that ran before them (ids 4–8)."""
    path = tmp_path_factory.mktemp("serial") / "s.db"
    starts = [6000, 7000, 8000, 1000, 2000, 3000, 4000, 5000]
    with hubprof.create(path) as w:
        write_dispatches(w, starts, [s + 900 for s in starts])
    return path


@pytest.mark.parametrize("fmt", ["perfetto", "chrome"])
def test_serial_queue_stored_out_of_order_one_lane(serial, tmp_path, fmt):
    pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2", reason="pip install perfetto")
    out = tmp_path / f"serial.{fmt}"
    export(serial, out, fmt)
    assert set(lanes_of(out, fmt).values()) == {"q (dev)"}


def test_otf2_lanes_in_time_order(serial, tmp_path):
    """OTF2 takes each location's events in time order: the dispatches that ran before the ones stored ahead
    of them go on a second lane (a location of their own), none skipped."""
    if "otf2" not in formats() or not shutil.which("otf2-print"):
        pytest.skip("no OTF2 export or no otf2-print")
    out = tmp_path / "serial-otf2"
    err = export(serial, out, "otf2")
    assert "out of order" not in err, err
    text = run("otf2-print", out / "traces.otf2").stdout
    locs = {}
    for loc, ts in re.findall(r"^ENTER\s+(\d+)\s+(\d+)\s", text, re.M):
        locs.setdefault(loc, []).append(int(ts))
    assert sorted(sorted(v) for v in locs.values()) == [[1000, 2000, 3000, 4000, 5000], [6000, 7000, 8000]]


@pytest.mark.parametrize("fmt", ["perfetto", "chrome"])
def test_long_serial_queue_stored_in_swapped_chunks_one_lane(tmp_path, fmt):
    """300 dispatches of a serial queue stored in chunks of 20, each pair of chunks swapped (the later chunk
    first): more commands than a lane remembers spans (64), all on one lane all the same."""
    pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2", reason="pip install perfetto")
    order = [c * 20 + i for p in range(0, 15, 2) for c in (p + 1, p) if c < 15 for i in range(20)]
    starts = [1000 + 1000 * k for k in order]
    path = tmp_path / "chunks.db"
    with hubprof.create(path) as w:
        write_dispatches(w, starts, [s + 900 for s in starts])
    out = tmp_path / f"chunks.{fmt}"
    export(path, out, fmt)
    lanes = lanes_of(out, fmt)
    assert len(lanes) == 300 and set(lanes.values()) == {"q (dev)"}


@pytest.mark.parametrize("fmt", ["perfetto", "chrome"])
def test_random_commands_first_free_lane(tmp_path, fmt):
    """Dispatches of random times, some overlapping, in random store order: no two on one lane overlap, and
    each one on lane k overlaps a dispatch on every lane before k (it went on the first lane it fits)."""
    pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2", reason="pip install perfetto")
    import random
    rnd = random.Random(7)
    starts = [rnd.randrange(0, 40_000, 10) + 1000 for _ in range(50)]
    ends = [s + rnd.randrange(100, 3000, 10) for s in starts]
    path = tmp_path / "random.db"
    with hubprof.create(path) as w:
        write_dispatches(w, starts, ends)
    out = tmp_path / f"random.{fmt}"
    export(path, out, fmt)
    names = lanes_of(out, fmt)
    lane = {d: int(n.rsplit(" ", 1)[1]) - 1 if " lane " in n else 0 for d, n in names.items()}
    assert len(lane) == 50 and max(lane.values()) > 0
    span = {d: (starts[d - 1], ends[d - 1]) for d in lane}

    def overlap(a: int, b: int) -> bool:
        return span[a][0] < span[b][1] and span[b][0] < span[a][1]

    for a in lane:
        assert not any(overlap(a, b) for b in lane if b != a and lane[b] == lane[a]), a
        for k in range(lane[a]):
            assert any(overlap(a, b) for b in lane if lane[b] == k), (a, lane[a], k)


def test_real_sample_run_one_lane(sampled, tmp_path):
    """hot_spot's in-order queue runs one dispatch at a time: one track for it, though (most runs) dispatches
    are stored ahead of ones that ran before them."""
    pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2", reason="pip install perfetto")
    for fmt in ("perfetto", "chrome"):
        out = tmp_path / f"one.{fmt}"
        export(sampled, out, fmt)
        names = set(lanes_of(out, fmt).values())
        assert len(names) == 1 and not any(" lane " in n for n in names), (fmt, names)
