"""Tests of the explorable report (docs/cli/report.md): pages driven in headless Chromium through selenium and
Debian's chromium-driver, one browser for the module. The timeline zooms around the cursor, pans by drag, resets,
answers keys and URL fragments; hovering a dispatch shows its kernel and duration; clicking a kernel opens its
section, whose histogram counts its calls; the samples view equals `analyze --by line`; every kernel name is on
the page as text; no console error and no network request; screenshots of a real run, a multi-rank run and a
sample run (copied to $HUBPROF_REPORT_SHOTS when set, as docs/ keeps them)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import hubprof
from conftest import BUILD, HUBPROF, need, run
from test_report import make_store

pytest.importorskip("selenium", reason="selenium is not installed (scripts/deps.sh installs it)")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

EX = BUILD / "examples" / "ocl"


@pytest.fixture
def driver(browser):
    """The suite's one browser (conftest), its selenium driver; the page's own checks in open_page."""
    browser.driver.set_window_size(1400, 1000)
    return browser


def open_page(b, page: Path, fragment: str = "") -> None:
    """Load page, wait for the timeline, and check that nothing went wrong: no console error, no request
    other than the page itself."""
    url = b.open(page, fragment)
    state = b.wait("(t => t ? t.getAttribute('data-ready') : 'none')(document.getElementById('timeline'))")
    assert state in ("1", "none"), f"the timeline did not load: {state}"
    errors, requests = b.problems(url)
    assert errors == [] and requests == [], (errors, requests)


def report(store: Path, out: Path) -> Path:
    run(need(HUBPROF), "report", "-q", store, "-o", out, "-f")
    return out


def tl(d, js: str):
    return d.execute_script("var tl = window.hubprof.timeline; " + js)


def window(d) -> tuple[int, int]:
    e = d.find_element(By.ID, "timeline")
    return int(e.get_attribute("data-t0-ns")), int(e.get_attribute("data-t1-ns"))


def canvas_point(d, x: float, y: float) -> ScrollOrigin:
    """A point of the canvas (CSS px from its top left) as an offset from its centre (selenium's origin: the
    centre of its part in view, so the whole canvas is scrolled into view first)."""
    c = d.find_element(By.ID, "tl-canvas")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", c)
    size = c.size
    return c, x - size["width"] / 2, y - size["height"] / 2


def shot(d, tmp: Path, name: str) -> Path:
    d.find_element(By.ID, "timeline").location_once_scrolled_into_view
    p = tmp / name
    d.save_screenshot(str(p))
    data = p.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
    dest = os.environ.get("HUBPROF_REPORT_SHOTS")
    if dest:
        shutil.copy(p, Path(dest) / name)
    return p


def have_opencl() -> bool:
    return (EX / "vector_add").exists() and shutil.which("clinfo") is not None and \
        "Device" in run("clinfo", "-l", check=False).stdout


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """20 000 dispatches of 8 kernels on one queue, two counters each (gen_logs), as rocpd."""
    d = tmp_path_factory.mktemp("many")
    run(BUILD / "examples" / "gen_logs", d / "logs", 1, 20000, 2, 1)
    store = d / "many.db"
    run(need(HUBPROF), "merge", "-q", "-o", store, *sorted((d / "logs").iterdir()))
    return store


@pytest.fixture(scope="module")
def many_page(many, tmp_path_factory) -> Path:
    return report(many, tmp_path_factory.mktemp("manyp") / "many.html")


def test_zoom_pan_reset_keys(driver, many_page):
    b, d = driver, driver.driver
    open_page(b, many_page)
    t0, t1 = window(d)
    rows = tl(d, "return tl.rows()")
    assert len(rows) == 1 and rows[0]["n"] == 20000 and rows[0]["kind"] == "queue"
    y = rows[0]["y"] + rows[0]["h"] / 2
    # the wheel zooms in around the pointer: the time under it stays where it was
    tc = t0 + 0.6 * (t1 - t0)
    x = tl(d, f"return tl.x({tc})")
    c, ox, oy = canvas_point(d, x, y)
    ActionChains(d).scroll_from_origin(ScrollOrigin.from_element(c, int(ox), int(oy)), 0, -400).perform()
    a0, a1 = window(d)
    assert a1 - a0 < 0.8 * (t1 - t0), (t0, t1, a0, a1)
    assert abs(tl(d, f"return tl.t({int(x)})") - tc) < 0.01 * (t1 - t0)
    # a drag pans: the same width, moved by the pixels dragged
    px_ns = (a1 - a0) / tl(d, f"return tl.x({a1}) - tl.x({a0})")
    ActionChains(d).move_to_element_with_offset(c, int(ox), int(oy)).click_and_hold().move_by_offset(-200, 0) \
        .release().perform()
    b0, b1 = window(d)
    assert abs((b1 - b0) - (a1 - a0)) <= 2
    assert abs((b0 - a0) - 200 * px_ns) < 0.03 * (a1 - a0), (a0, b0, px_ns)
    # a double-click shows the whole run again (the event itself: selenium's two clicks can be further apart
    # than the browser's double-click interval on a loaded machine)
    d.execute_script("var c = arguments[0], r = c.getBoundingClientRect(); c.dispatchEvent(new MouseEvent("
                     "'dblclick', {bubbles: true, cancelable: true, clientX: r.left + arguments[1], "
                     "clientY: r.top + arguments[2]}))", c, x, y)
    assert window(d) == (t0, t1)
    # keys: + zooms in, - out, arrows pan, 0 resets
    c.click()
    c.send_keys("+")
    k0, k1 = window(d)
    assert k1 - k0 < 0.7 * (t1 - t0)
    c.send_keys("\ue014")  # right arrow
    r0, r1 = window(d)
    assert r0 > k0 and abs((r1 - r0) - (k1 - k0)) <= 2
    c.send_keys("0")
    assert window(d) == (t0, t1)


def test_hover_and_click(driver, many, many_page):
    b, d = driver, driver.driver
    open_page(b, many_page)
    disp = json.loads(run(need(HUBPROF), "analyze", "--by", "dispatch", "--counters", "none", "--metrics",
                          "none", "--format", "json", many).stdout)
    one = disp[len(disp) // 2]
    s, dur = one["start_ns"], int(one["duration_ns"])
    # full zoom: the dispatch and its neighbours
    tl(d, f"tl.setWindow({s - dur}, {s + 2 * dur})")
    row = tl(d, "return tl.rows()")[0]
    x = tl(d, f"return tl.x({s + dur / 2})")
    c, ox, oy = canvas_point(d, x, row["y"] + row["h"] / 2)
    ActionChains(d).move_to_element_with_offset(c, int(ox), int(oy)).perform()
    tip = d.find_element(By.ID, "tl-tip")
    assert tip.is_displayed()
    assert tip.get_attribute("data-label") == one["kernel"] and one["kernel"] in tip.text
    assert int(tip.get_attribute("data-dur-ns")) == dur
    assert "duration" in tip.text
    # a click selects it and opens its kernel's section
    ActionChains(d).click().perform()
    sel = tl(d, "return tl.selected()")
    assert sel["row"] == one["row"] and sel["label"] == one["kernel"]
    names = d.execute_script("return [...document.querySelectorAll('#legend a')].map(a => "
                             "[a.getAttribute('data-kernel'), a.textContent])")
    n = [k for k, t in names if t.startswith(one["kernel"] + " ")][0]
    assert d.execute_script(f"return document.getElementById('kernel-{n}').open") is True


def test_kernel_section_histogram(driver, many, many_page):
    b, d = driver, driver.driver
    open_page(b, many_page)
    rows = json.loads(run(need(HUBPROF), "analyze", "--counters", "none", "--metrics", "none", "--format",
                          "json", many).stdout)
    calls = {}
    for r in rows:
        calls[r["kernel"]] = calls.get(r["kernel"], 0) + r["timed_calls"]
    legend = d.find_elements(By.CSS_SELECTOR, "#legend a")
    assert len(legend) == len(calls) == 8
    for a in legend[:3]:
        n = a.get_attribute("data-kernel")
        name = d.execute_script(f"return document.querySelector('#kernel-{n} .kname').textContent")
        assert d.execute_script(f"return document.getElementById('kernel-{n}').open") is False
        a.click()
        assert b.wait(f"document.getElementById('kernel-{n}').open") is True
        counts = d.execute_script(f"return [...document.querySelectorAll('#kernel-{n} svg.hist rect')]"
                                  ".map(r => +r.getAttribute('data-count'))")
        assert len(counts) > 1 and sum(counts) == calls[name], (name, counts)
        # its dispatches, with their counters, and its first one marked
        assert d.execute_script(f"return document.querySelectorAll('#kernel-{n} table.dispatches tbody tr')"
                                ".length") == 200
        assert "first (JIT)" in d.find_element(By.ID, f"kernel-{n}").text
    # the kernels are coloured apart: one colour per legend entry
    fills = d.execute_script("return [...document.querySelectorAll('#legend rect')].map(r => r.getAttribute('fill'))")
    assert len(set(fills)) == len(fills)


def test_url_fragment(driver, many_page):
    b, d = driver, driver.driver
    open_page(b, many_page)
    t0, t1 = window(d)
    w0, w1 = t0 + (t1 - t0) // 4, t0 + (t1 - t0) // 2
    open_page(b, many_page, f"#t={w0}-{w1}")
    w = window(d)
    assert abs(w[0] - w0) <= 1 and abs(w[1] - w1) <= 1
    open_page(b, many_page, "#kernel-2")  # the same page: a hashchange
    assert b.wait("document.getElementById('kernel-2').open") is True
    open_page(b, many_page)
    open_page(b, many_page, "#kernel-3")  # from another page: a load
    assert b.wait("document.getElementById('kernel-3').open") is True


def test_hostile_names(driver, tmp_path):
    b, d = driver, driver.driver
    store = make_store(tmp_path / "h.db", 1.0)
    page = report(store, tmp_path / "h.html")
    open_page(b, page)
    assert d.execute_script("return document.scripts.length") == 1
    assert d.execute_script("return document.querySelectorAll('img, b, iframe, object').length") == 0
    names = [r["kernel"] for r in json.loads(run(need(HUBPROF), "analyze", "--format", "json", store).stdout)]
    legend = d.execute_script("return [...document.querySelectorAll('#legend a')].map(a => a.firstChild."
                              "nextSibling.textContent)")
    sections = d.execute_script("return [...document.querySelectorAll('details.kernel .kname')]"
                                ".map(s => s.textContent)")
    assert sorted(sections) == sorted(names) and len(legend) == len(names)
    # the timeline's labels and tooltips come from the data block, drawn as text
    rows = tl(d, "return tl.rows()")
    assert any(r["kind"] == "thread" for r in rows) and any(r["kind"] == "queue" for r in rows)
    raw = page.read_bytes()
    raw.decode("utf-8")
    assert b"<script>alert" not in raw and b"<img" not in raw


def test_ranks_and_flows(driver, tmp_path):
    """Two ranks on two nodes: rows grouped by node and rank, the ranks section as analyze gives it; the
    enqueuing thread's API call linked to its dispatch."""
    b, d = driver, driver.driver
    store = tmp_path / "ranks.db"
    with hubprof.create(store) as w:
        w.write("node", {"id": [1, 2], "hostname": ["alpha", "beta"], "machine_id": ["a", "b"]})
        w.write("process", {"id": [1, 2], "node_id": [1, 2], "pid": [100, 200], "ppid": 1, "rank": [0, 1],
                            "start_ns": 1, "command": ["app 0", "app 1"]})
        w.write("thread", {"id": [1, 2], "process_id": [1, 2], "tid": [100, 200]})
        w.write("agent", {"id": [1, 2], "node_id": [1, 2], "name": ["gpu0", "gpu0"], "type": 2})
        w.write("queue", {"id": [1, 2], "process_id": [1, 2], "agent_id": [1, 2], "name": ["q", "q"]})
        w.write("kernel_symbol", {"id": [1, 2], "name": ["step", "step"]})
        ids = list(range(1, 21))
        proc = [1 if i <= 10 else 2 for i in ids]
        starts = [10000 * ((i - 1) % 10) + 5000 for i in ids]
        durs = [3000 if p == 1 else 6000 for p in proc]
        w.write("dispatch", {"id": ids, "dispatch_id": [(i - 1) % 10 + 1 for i in ids], "process_id": proc,
                             "thread_id": proc, "agent_id": proc, "queue_id": proc, "kernel_id": proc,
                             "grid_x": 1024, "grid_y": 1, "grid_z": 1, "workgroup_x": 64, "workgroup_y": 1,
                             "workgroup_z": 1, "start_ns": starts,
                             "end_ns": [s + x for s, x in zip(starts, durs)],
                             "enqueue_ns": [s - 2000 for s in starts]})
        w.write("region", {"id": ids, "process_id": proc, "thread_id": proc,
                           "name": "clEnqueueNDRangeKernel", "category": "api",
                           "start_ns": [s - 2100 for s in starts], "end_ns": [s - 1900 for s in starts]})
    page = report(store, tmp_path / "ranks.html")
    open_page(b, page)
    groups = sorted({r["group"] for r in tl(d, "return tl.rows()")})
    assert [g.split(":")[0] for g in groups] == ["node alpha · rank 0 · pid 100", "node beta · rank 1 · pid 200"]
    text = d.find_element(By.ID, "ranks").find_element(By.XPATH, "following-sibling::div").text
    imb = json.loads(run(need(HUBPROF), "analyze", "--by", "rank-imbalance", "--format", "json", store).stdout)
    assert imb[0]["kernel"] == "step" and str(imb[0]["max_ns"]) in text
    # select a dispatch: its flow starts at its enqueue on the thread's row (drawn: a red line)
    tl(d, "tl.setWindow(%d, %d)" % (1, 110000))
    rows = tl(d, "return tl.rows()")
    q = [r for r in rows if r["kind"] == "queue"][0]
    x = tl(d, "return tl.x(%d)" % (5000 + 1500))
    c, ox, oy = canvas_point(d, x, q["y"] + q["h"] / 2)
    ActionChains(d).move_to_element_with_offset(c, int(ox), int(oy)).click().perform()
    sel = tl(d, "return tl.selected()")
    assert sel and sel["label"] == "step" and sel["start"] == 5000
    red = d.execute_script("""var c = document.getElementById('tl-canvas'), g = c.getContext('2d');
      var d = g.getImageData(0, 0, c.width, c.height).data, n = 0;
      for (var i = 0; i < d.length; i += 4) if (d[i] > 180 && d[i + 1] < 40 && d[i + 2] < 40) n++;
      return n;""")
    assert red > 10
    shot(d, tmp_path, "report-ranks.png")


def test_real_run_regions_and_copies(driver, tmp_path):
    if not have_opencl():
        pytest.skip("no OpenCL device or examples (install pocl-opencl-icd, make all)")
    b, d = driver, driver.driver
    store = tmp_path / "rw.db"
    run(need(HUBPROF), "profile", "-q", "--metrics", "cpu_util,faults_per_us", "-o", store, "--",
        EX / "region_work")
    page = report(store, tmp_path / "rw.html")
    open_page(b, page)
    rows = tl(d, "return tl.rows()")
    assert [r["kind"] for r in rows] == ["thread", "queue"] and rows[1]["n"] == 9
    # the flame graph: one box per region-tree row with time, as wide as its share
    tree = json.loads(run(need(HUBPROF), "analyze", "--by", "region-tree", "--counters", "none", "--metrics",
                          "none", "--format", "json", store).stdout)
    boxes = d.execute_script("return [...document.querySelectorAll('svg.flame rect')].map(r => "
                             "+r.getAttribute('width'))")
    assert len(boxes) == len([t for t in tree if t["total_ns"] > 0])
    top = sum(t["total_ns"] for t in tree if t["depth"] == 0)
    assert abs(boxes[0] - tree[0]["total_ns"] / top * 1100) < 1
    shot(d, tmp_path, "report-run.png")
    # API calls and memory copies on their rows (trace --api)
    api = tmp_path / "api.db"
    run(need(HUBPROF), "trace", "-q", "--api", "-o", api, "--", EX / "api_calls")
    open_page(b, report(api, tmp_path / "api.html"))
    rows = tl(d, "return tl.rows()")
    info = run(need(HUBPROF), "info", api).stdout
    nreg = int([ln.split()[1] for ln in info.splitlines() if ln.strip().startswith("region ")][0])
    assert rows[0]["kind"] == "thread" and rows[0]["n"] == nreg


def test_samples_view(driver, tmp_path):
    if not have_opencl():
        pytest.skip("no OpenCL device or examples (install pocl-opencl-icd, make all)")
    b, d = driver, driver.driver
    store = tmp_path / "s.db"
    run(need(HUBPROF), "sample", "-q", "-o", store, "--", EX / "hot_spot", "-g", 2000000, 1)
    open_page(b, report(store, tmp_path / "s.html"))
    for kernel in ("hot", "ratio"):
        lines = json.loads(run(need(HUBPROF), "analyze", "--by", "line", "--kernel", kernel, "--format", "json",
                               store).stdout)
        if not lines:
            continue
        first = d.execute_script(f"""var s = document.querySelector('div.samples[data-kernel="{kernel}"]');
          if (!s) return null;
          var h = [...s.querySelectorAll('h4')].find(e => e.textContent === 'lines');
          var t = h.nextElementSibling.querySelector('table');
          var cols = [...t.tHead.rows[0].cells].map(c => c.textContent.split(' ')[0]);
          var r = t.tBodies[0].rows[0];
          return [r.cells[cols.indexOf('line')].textContent, +r.cells[cols.indexOf('samples')].textContent];""")
        assert first == [lines[0]["line"], lines[0]["samples"]], (kernel, first, lines[0])
    shot(d, tmp_path, "report-samples.png")


def test_binned_past_the_limit(driver, many, tmp_path):
    """Past HUBPROF_REPORT_TIMELINE_ITEMS timed dispatches (2 000 000 by default) the queues' rows are binned,
    which the page says; the kernel sections still count every dispatch."""
    b, d = driver, driver.driver
    page = tmp_path / "binned.html"
    run(need(HUBPROF), "report", "-q", many, "-o", page, env={**os.environ, "HUBPROF_REPORT_TIMELINE_ITEMS": "5000"})
    open_page(b, page)
    assert "20000 timed dispatches" in d.find_element(By.ID, "tl-binned").text
    row = tl(d, "return tl.rows()")[0]
    assert row["n"] == 0 and row["total"] == 20000 and row["bins"] == 8192
    # hover the middle of the run: a bin's figures
    t0, t1 = window(d)
    c, ox, oy = canvas_point(d, tl(d, f"return tl.x({(t0 + t1) // 2})"), row["y"] + row["h"] / 2)
    ActionChains(d).move_to_element_with_offset(c, int(ox), int(oy)).perform()
    tip = d.find_element(By.ID, "tl-tip")
    assert tip.is_displayed() and tip.text.startswith("binned: ") and "busy" in tip.text
    # zoomed in far, still the bins (no error, a redraw)
    tl(d, f"tl.setWindow({(t0 + t1) // 2}, {(t0 + t1) // 2 + 1000})")
    assert tl(d, "return tl.redraw()") >= 0
    counts = d.execute_script("return [...document.querySelectorAll('svg.hist')].map(h => [...h.querySelectorAll("
                              "'rect')].reduce((a, r) => a + +r.getAttribute('data-count'), 0))")
    assert sum(counts) == 20000
    errors, _ = b.problems(page.resolve().as_uri())
    assert errors == []


def roofline_charts(d) -> list[dict]:
    """Each roofline chart of the page: its device, roofs (ceiling -> value) and points, and its box."""
    return d.execute_script("""
      return [...document.querySelectorAll('svg.roofline')].map(s => ({
        device: s.getAttribute('data-device'),
        roofs: Object.fromEntries([...s.querySelectorAll('g.roof')].map(g =>
          [g.getAttribute('data-ceiling'), +g.getAttribute('data-value')])),
        points: [...s.querySelectorAll('circle.kpoint')].map(c => ({kernel: c.getAttribute('data-kernel'),
          precision: c.getAttribute('data-precision'), intensity: +c.getAttribute('data-intensity'),
          gflops: +c.getAttribute('data-gflops'), inside: (b => { const r = s.getBoundingClientRect();
            return b.left >= r.left && b.right <= r.right && b.top >= r.top && b.bottom <= r.bottom; })(
            c.getBoundingClientRect())})),
        shown: s.getBoundingClientRect().width > 0}))""")


def test_roofline_chart(driver, tmp_path):
    from test_roofline import write_store

    b, d = driver, driver.driver
    # known ceilings and counter values (an H100 and a gfx942): one chart per device, its roofs and points
    page = report(write_store(tmp_path / "roof.db"), tmp_path / "roof.html")
    open_page(b, page)
    charts = roofline_charts(d)
    assert [c["device"] for c in charts] == ["NVIDIA H100", "gfx942"] and all(c["shown"] for c in charts)
    # fp16 unmeasured: no roof; the cache levels' slopes beside dram's, from the left edge up to the top roof
    assert charts[0]["roofs"] == {"fp64": 33500.0, "fp32": 67000.0, "dram": 3350.0, "l1": 33000.0, "l2": 11000.0}
    assert charts[1]["roofs"] == {"fp32": 163400.0, "dram": 5300.0}
    slopes = d.execute_script("""return Object.fromEntries([...document.querySelectorAll('svg.roofline')[0]
      .querySelectorAll('g.roof')].filter(g => /^(dram|l1|l2)$/.test(g.getAttribute('data-ceiling')))
      .map(g => { const l = g.querySelector('line'); return [g.getAttribute('data-ceiling'),
        [+l.getAttribute('x1'), +l.getAttribute('y1'), +l.getAttribute('x2'), +l.getAttribute('y2')]]; }))""")
    x1 = {k: v[0] for k, v in slopes.items()}
    assert x1["l1"] == x1["l2"] == x1["dram"]  # all from the left edge
    assert slopes["l1"][1] < slopes["l2"][1] < slopes["dram"][1]  # l1 highest (SVG y grows downwards)
    # each slope parallel (log-log: equal rise over run) and ending on the fp32 roof, the top one
    top = slopes["l1"][3]
    assert abs(slopes["l2"][3] - top) < 0.2 and abs(slopes["dram"][3] - top) < 0.2, slopes
    assert slopes["l1"][2] < slopes["l2"][2] < slopes["dram"][2], slopes
    pts = {(p["kernel"], p["precision"]): p for c in charts for p in c["points"]}
    assert set(pts) == {("saxpy", "fp32"), ("dgemm", "fp64"), ("amd_fma", "fp32")}
    assert (pts["saxpy", "fp32"]["intensity"], pts["saxpy", "fp32"]["gflops"]) == (2.25, 0.9)
    assert all(p["inside"] for p in pts.values())
    missing = d.execute_script("return [...document.querySelectorAll('ul.roof-missing li')].map(l => l.textContent)")
    assert [m.split(" ")[0] for m in missing] == ["partial", "nothing"]
    assert "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum" in missing[0]
    assert d.find_element(By.CSS_SELECTOR, "a[href='#roofline']")
    # a store without ceilings: no chart, no link
    plain = tmp_path / "plain.db"
    make_store(plain, 1.0)
    open_page(b, report(plain, tmp_path / "plain.html"))
    assert d.execute_script("return document.querySelectorAll('svg.roofline, #roofline, a[href=\"#roofline\"]')"
                            ".length") == 0
    # a real PoCL run with the ceilings of this machine: the roofs, no point, and the counters it lacks
    if not have_opencl():
        return
    store = tmp_path / "va.db"
    run(need(HUBPROF), "trace", "-q", "-o", store, "--", EX / "vector_add")
    run(need(HUBPROF), "roofline", "-q", "--quick", "--store", store)
    open_page(b, report(store, tmp_path / "va.html"))
    (chart,) = roofline_charts(d)
    assert {"fp32", "dram", "l1"} <= set(chart["roofs"]) and chart["points"] == []
    missing = d.execute_script("return [...document.querySelectorAll('ul.roof-missing li')].map(l => l.textContent)")
    assert len(missing) == 1 and missing[0].startswith("vector_add") and "dram__bytes.sum" in missing[0]
