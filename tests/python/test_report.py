"""Tests of `hubprof report`: the HTML page opened in headless Chromium (Debian's package, through selenium and
chromium-driver: conftest's `browser`): it renders with no console error and no network request, a screenshot is taken, its text shows the
kernels with the numbers `hubprof analyze` gives, hostile names stay text, tables sort; the baseline comparison
against `hubprof diff`; damaged stores, output errors, and Python's Store.report."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

import hubprof
from conftest import BUILD, HUBPROF, cut_log, need, run, write_one_queue

# quotes, HTML, a newline, a byte that is never UTF-8, an overlong '/', an encoded surrogate and a cut sequence
WEIRD = ['say "hi"', "<script>alert(1)</script>", "two\nlines", "bad\udcffbyte",
         "ov\udcc0\udcafer\udced\udca0\udc80x\udce2\udc82", "<img src=http://192.0.2.1/x onerror=alert(2)>"]
EX = BUILD / "examples" / "ocl"


def make_store(path: Path, scale: float, regions: bool = True) -> Path:
    """Six kernels with hostile names, two dispatches each on one queue (durations times scale), a counter per
    dispatch, nested regions."""
    n = len(WEIRD)
    with hubprof.create(path) as w:
        write_one_queue(w, pid=42, command="app <b>x</b>", start_ns=10)
        w.write("kernel_symbol", {"id": list(range(1, n + 1)), "name": WEIRD})
        ids = list(range(1, 2 * n + 1))
        starts = [1000 * i * 10 for i in ids]
        durs = [int((1000 + 700 * ((i - 1) % n)) * scale) for i in ids]
        w.write("dispatch", {"id": ids, "dispatch_id": ids, "process_id": 1, "thread_id": 1, "agent_id": 1,
                             "queue_id": 1, "kernel_id": [(i - 1) % n + 1 for i in ids], "grid_x": 256,
                             "grid_y": 1, "grid_z": 1, "workgroup_x": 64, "workgroup_y": 1, "workgroup_z": 1,
                             "start_ns": starts, "end_ns": [s + d for s, d in zip(starts, durs)],
                             "enqueue_ns": [s - 100 for s in starts]})
        w.write("counter_info", {"id": 1, "name": "SQ_WAVES", "unit": "waves"})
        w.write("counter_value", {"dispatch_id": ids, "counter_id": 1, "pass": 1,
                                  "value": [float(i) for i in ids]})
        if regions:
            w.write("region", {"id": [1, 2], "process_id": 1, "thread_id": 1, "name": ["outer", "<b>inner</b>"],
                               "category": "user", "start_ns": [500, 900], "end_ns": [200000, 50000]})
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("report")
    return make_store(d / "new.db", 1.0), make_store(d / "old.db", 1.5, regions=False)


def report(store: Path, out: Path, *extra, check: bool = True) -> subprocess.CompletedProcess:
    return run(need(HUBPROF), "report", store, "-o", out, *extra, check=check)


def load(browser, page: Path) -> None:
    url = browser.open(page)
    errors, requests = browser.problems(url)
    assert errors == [], errors
    assert requests == [], requests


# the kernels table as [{column: (text, data-v)}] read from the rendered page
TABLE_JS = """(() => { const t = document.querySelector('#%s ~ div.wrap table');
  const h = [...t.tHead.rows[0].cells].map(c => c.textContent.replace(/ \\(.*\\)$/, '').replace(/ [▲▼]$/, ''));
  return [...t.tBodies[0].rows].map(r => Object.fromEntries([...r.cells].map((c, i) =>
    [h[i], [c.textContent, c.getAttribute('data-v')]]))); })()"""


def same(a: float, b) -> bool:
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return a is None or math.isnan(a)
    return math.isclose(a, float(b), rel_tol=1e-6, abs_tol=1e-9)


def test_harness_sees_errors_and_requests(browser, tmp_path):
    """The check can fail: a page with an error, an exception and a request is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("x"); throw new Error("boom")</script>'
                   '<img src="http://192.0.2.1/x.png"></body></html>')
    errors, requests = browser.problems(browser.open(bad))
    assert len(errors) >= 2 and requests == ["http://192.0.2.1/x.png"]


def test_report_renders_and_matches_analyze(browser, stores, tmp_path):
    new, _ = stores
    out = tmp_path / "r.html"
    p = report(new, out)
    assert "wrote" in p.stderr and not list(tmp_path.glob("*.tmp.*"))
    load(browser, out)
    shot = browser.screenshot(tmp_path / "r.png")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
    text = browser.evaluate("document.body.innerText")
    rows = json.loads(run(need(HUBPROF), "analyze", new, "--format", "json").stdout)
    assert len(rows) == len(WEIRD)
    # the top kernels' names are on the page (the hub keeps bytes that are not UTF-8 as the text \xNN)
    for r in rows:
        assert r["kernel"].split("\n")[0] in text
    table = browser.evaluate(TABLE_JS % "kernels")
    assert [t["kernel"][0] for t in table] == [r["kernel"] for r in rows]
    for t, r in zip(table, rows):
        assert int(t["calls"][0]) == r["calls"] and int(t["total_ns"][0]) == r["total_ns"]
        for col in ("avg_ns", "percent", "SQ_WAVES"):
            assert same(float(t[col][1]), r[col]), (col, t[col], r[col])
    # the bar chart: one bar per kernel, the top one first
    bars = browser.evaluate("[...document.querySelectorAll('svg[aria-label=\"top kernels by device time\"] "
                            "g title')].map(t => t.textContent)")
    assert len(bars) == len(rows) and bars[0].startswith(rows[0]["kernel"])
    # the regions section
    assert "<b>inner</b>" in text and "outer" in text


def test_hostile_names_stay_text(browser, stores, tmp_path):
    out = tmp_path / "h.html"
    report(stores[0], out)
    load(browser, out)
    # the page's one script is its own; no element came from a name; every name is text
    assert browser.evaluate("document.scripts.length") == 1
    assert browser.evaluate("document.querySelectorAll('img, b, iframe, object').length") == 0
    text = browser.evaluate("document.body.innerText")
    for name in ("<script>alert(1)</script>", 'say "hi"', "<img src=http://192.0.2.1/x onerror=alert(2)>",
                 "bad\\xFFbyte", "app <b>x</b>"):
        assert name in text
    raw = out.read_bytes()
    raw.decode("utf-8")  # valid UTF-8 throughout
    assert b"<script>alert" not in raw and b"<img" not in raw


def test_tables_sort_on_click(browser, stores, tmp_path):
    out = tmp_path / "s.html"
    report(stores[0], out)
    load(browser, out)
    col = "[...document.querySelector('#kernels ~ div.wrap table').tBodies[0].rows].map(r => +r.cells[2]" \
          ".getAttribute('data-v'))"
    click = "document.querySelector('#kernels ~ div.wrap table').tHead.rows[0].cells[2].click()"
    browser.evaluate(click)
    up = browser.evaluate(col)
    browser.evaluate(click)
    down = browser.evaluate(col)
    assert up == sorted(up) and down == sorted(down, reverse=True) and len(up) == len(WEIRD)
    errors, _ = browser.problems(out.resolve().as_uri())
    assert errors == []


def test_baseline_comparison(browser, stores, tmp_path):
    new, old = stores
    out = tmp_path / "d.html"
    p = report(new, out, "--baseline", old)
    assert "baseline" in p.stderr
    load(browser, out)
    diff = json.loads(run(need(HUBPROF), "diff", old, new, "--format", "json").stdout)
    table = browser.evaluate(TABLE_JS % "diff")
    assert [t["kernel"][0] for t in table] == [r["kernel"] for r in diff]
    for t, r in zip(table, diff):
        assert same(float(t["avg_ns_delta_pct"][1]), r["avg_ns_delta_pct"])
    # the new run is a third faster than the baseline: every bar says so
    labels = browser.evaluate("[...document.querySelectorAll('svg[aria-label=\"change against the baseline\"] "
                              "g text:last-child')].map(t => t.textContent)")
    assert len(labels) == len(WEIRD) and all(lb.startswith("-33.3%") for lb in labels), labels
    shot = browser.screenshot(tmp_path / "d.png")
    assert shot.stat().st_size > 20000


def test_real_trace(browser, tmp_path):
    prog = EX / "vector_add"
    if not prog.exists() or not shutil.which("clinfo") or "Device" not in run("clinfo", "-l", check=False).stdout:
        pytest.skip("no OpenCL device or examples (install pocl-opencl-icd, make all)")
    store = tmp_path / "va.db"
    run(need(HUBPROF), "trace", "-q", "-o", store, "--", prog, 4096, 20)
    out = tmp_path / "va.html"
    report(store, out)
    load(browser, out)
    rows = json.loads(run(need(HUBPROF), "analyze", store, "--format", "json").stdout)
    table = browser.evaluate(TABLE_JS % "kernels")
    assert [(t["kernel"][0], int(t["calls"][0]), int(t["total_ns"][0])) for t in table] == \
        [(r["kernel"], r["calls"], r["total_ns"]) for r in rows]
    assert sum(r["calls"] for r in rows) == 20


def test_damaged_store(browser, logs, tmp_path):
    cut = tmp_path / "cut.log"
    readable, _ = cut_log(logs[0], cut)
    out = tmp_path / "cut.html"
    p = report(cut, out)
    assert "damaged store" in p.stderr and "skipped" in p.stderr
    assert f"{readable} dispatches" in p.stderr
    load(browser, out)
    text = browser.evaluate("document.body.innerText")
    assert "Damaged store" in text and f"{readable} (" in text
    with hubprof.open(cut) as s, pytest.warns(RuntimeWarning, match="damaged store"):
        s.report(tmp_path / "cut2.html")


def test_output_errors(stores, tmp_path):
    new, old = stores
    p = report(new, tmp_path / "no" / "x.html", check=False)
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "x.html" in p.stderr
    out = tmp_path / "x.html"
    out.write_text("old")
    p = report(new, out, check=False)
    assert p.returncode == 1 and "exists" in p.stderr and out.read_text() == "old"
    report(new, out, "-f")
    assert out.read_text().startswith("<!DOCTYPE html>")
    p = report(new, tmp_path, "-f", check=False)
    assert p.returncode == 1 and "folder" in p.stderr
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        p = report(new, ro / "x.html", check=False)
        if p.returncode != 0:
            assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1
            assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)
    junk = tmp_path / "junk.db"
    junk.write_text("not a store")
    p = report(junk, tmp_path / "j.html", check=False)
    assert p.returncode == 1 and not (tmp_path / "j.html").exists()
    p = report(new, tmp_path / "k.html", "--baseline", junk, check=False)
    assert p.returncode == 1 and "junk.db" in p.stderr and not (tmp_path / "k.html").exists()
    assert run(need(HUBPROF), "report", new, check=False).returncode == 2


def test_python_store_report(stores, tmp_path, monkeypatch):
    new, old = stores
    with hubprof.open(new) as s, hubprof.open(old) as b:
        out = s.report(tmp_path / "p.html")
        assert out == tmp_path / "p.html" and "Top kernels" in out.read_text()
        d = s.report(tmp_path / "pd.html", baseline=b)
        assert "Against the baseline" in d.read_text()
        d2 = s.report(tmp_path / "pd2.html", baseline=old)
        assert "Against the baseline" in d2.read_text()
        with pytest.raises(hubprof.Error, match="exists"):
            s.report(tmp_path / "p.html")
        s.report(tmp_path / "p.html", force=True)
        with pytest.raises(hubprof.Error, match="x.html"):
            s.report(tmp_path / "no" / "x.html")
