"""pytest setup for the Python bindings' tests: imports hubprof from the source tree (python/) and finds
the C programs the tests compare with (build/hubprof, or $HUBPROF_CLI; build/examples/gen_logs), built by `make all`."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
sys.path.insert(0, str(REPO / "python"))  # the working tree's package, not an installed one

import hubprof  # noqa: E402

HUBPROF = Path(os.environ.get("HUBPROF_CLI", BUILD / "hubprof"))
GEN_LOGS = BUILD / "examples" / "gen_logs"


def need(path: Path) -> Path:
    """Skip the test when a program built by `make all` is missing."""
    if not path.exists():
        pytest.skip(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path} is not built (run make all)")
    return path


def run(*args, check: bool = True, **kw) -> subprocess.CompletedProcess:
    """Run a program, text output captured; fails the test with its stderr when check and it fails."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def cli_json(*args) -> object:
    """Output of `hubprof ARGS` parsed as JSON."""
    return json.loads(run(need(HUBPROF), *args).stdout)


@pytest.fixture(scope="session")
def logs(tmp_path_factory) -> list[Path]:
    """Three per-process logs as a multi-process, two-pass profile leaves them (gen_logs)."""
    d = tmp_path_factory.mktemp("logs")
    run(need(GEN_LOGS), d, 3, 1500, 4, 2)
    out = sorted(d.glob("*.log"))
    assert len(out) == 3
    return out


@pytest.fixture(scope="session")
def rocpd_store(logs, tmp_path_factory) -> Path:
    """The logs merged into one rocpd store by the CLI."""
    out = tmp_path_factory.mktemp("rocpd") / "merged.db"
    run(need(HUBPROF), "merge", "-q", "-o", out, *logs)
    return out


@pytest.fixture(scope="session")
def parquet_store(tmp_path_factory) -> Path:
    """One process's profile written as a parquet store by gen_logs."""
    d = tmp_path_factory.mktemp("pq")
    run(need(GEN_LOGS), d, 1, 2000, 3, 2, "parquet")
    (out,) = d.iterdir()
    return out


def cut_log(log: Path, cut: Path) -> tuple[int, int]:
    """Write a copy of log cut short inside its dispatches (as a crash leaves it) to cut: (readable, total)
    dispatches."""
    with hubprof.open(log) as s:
        total = s.count("dispatch")
    data = log.read_bytes()
    for frac in (0.6, 0.4, 0.2, 0.1):
        cut.write_bytes(data[: int(len(data) * frac)])
        with hubprof.open(cut) as s:
            readable = s.count("dispatch")
        if 0 < readable < total:
            break
    assert 0 < readable < total
    return readable, total


def write_one_queue(w, pid: int = 7, command: str = "app", start_ns: int = 1) -> None:
    """The rows a hand-made store's dispatches hang on (writer w of hubprof.create): node 1 "h", process 1
    (pid, command), its thread 1 "main", agent 1 "dev" and queue 1 "q"."""
    w.write("node", {"id": 1, "hostname": "h"})
    w.write("process", {"id": 1, "node_id": 1, "pid": pid, "start_ns": start_ns, "command": command})
    w.write("thread", {"id": 1, "process_id": 1, "tid": pid, "name": "main"})
    w.write("agent", {"id": 1, "node_id": 1, "type": 2, "name": "dev"})
    w.write("queue", {"id": 1, "process_id": 1, "agent_id": 1, "name": "q"})


@pytest.fixture
def lib():
    return hubprof


def pytest_terminal_summary(terminalreporter) -> None:
    """A closing "N passed, N failed" line, the form tests/run.sh adds up."""
    st = terminalreporter.stats
    passed = len(st.get("passed", []))
    failed = len(st.get("failed", [])) + len(st.get("error", []))
    skipped = len(st.get("skipped", []))
    terminalreporter.write_line(f"python bindings: {passed} passed, {failed} failed ({skipped} skipped)")


@pytest.fixture(scope="session")
def spark():
    """The one local SparkSession of the test run, shared by every module that needs it (a JVM starts once per
    suite; Java and pyspark come from scripts/deps.sh)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    s = (SparkSession.builder.master("local[2]").appName("hubprof-tests")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.memory", "1g").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole suite (selenium and chromium-driver; tests/python/browser.py)."""
    from browser import Browser, find
    found = find()
    if not found:
        pytest.skip("chromium or chromium-driver is not installed (scripts/deps.sh installs them)")
    pytest.importorskip("selenium", reason="selenium is not installed (scripts/deps.sh installs it)")
    b = Browser(*found)
    yield b
    b.close()
