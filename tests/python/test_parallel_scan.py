"""`hubprof analyze --threads N` (the dispatch scan shared out to threads, docs/cli/analyze.md "Threads"): on a
generated store with ties, untimed and incomplete dispatches, kernel ids the store lacks and a process without
dispatches, every thread count gives the one-thread answer byte for byte (top kernels and the rank views),
over rocpd and over a Parquet dataset partitioned by process (made by convert, which writes the absent kernel's id as 0); the figures equal DuckDB's over the Parquet folders and the sqlite3 CLI's over the rocpd
file."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import HUBPROF, need, run

import hubprof  # noqa: E402

THREADS = (1, 2, 3, 8)
NPROC = 5  # process 4 has no dispatch: an empty partition
KERNELS = ["k_a", "k_b", "k_c", "k_d", "k_e"]


def make_rows() -> list[dict]:
    """Dispatches of 4 processes on 2 agents. k_a and k_b tie (same calls, same total); k_c has untimed rows
    (start 0), rows ending before they start and incomplete ones (no times, passes 0); ids 99 (absent) and
    0 (none) name no stored kernel."""
    rows, did, x = [], 0, 12345
    for p in (1, 2, 3, 5):
        for i in range(3000):
            x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            did += 1
            k = [1, 2, 3, 4, 5, 99, 0][(x >> 33) % 7]
            agent = 1 + (x >> 40) % 2
            t0 = 10_000 + 1000 * i
            dur = 100 + (x >> 45) % 700
            if k in (1, 2):
                dur = 250  # a tie of the two kernels' totals on each agent (equal calls come from the mix)
            row = dict(id=did, dispatch_id=i + 1, process_id=p, thread_id=p, agent_id=agent, queue_id=p,
                       kernel_id=k, start_ns=t0, end_ns=t0 + dur, passes=1)
            if k == 3 and i % 5 == 0:
                row["start_ns"] = 0  # untimed
            if k == 3 and i % 7 == 0:
                row["end_ns"] = t0 - 5  # ends before it starts: untimed
            if k == 4 and i % 11 == 0:
                row.update(start_ns=0, end_ns=0, passes=0)  # running when its process died
            rows.append(row)
    return rows


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path, list[dict]]:
    d = tmp_path_factory.mktemp("par")
    db, pq = d / "s.db", d / "s.parquet"
    rows = make_rows()
    # the tie: as many k_a as k_b calls per agent, so that the order between them is the store order alone
    for agent in (1, 2):
        a = [r for r in rows if r["agent_id"] == agent and r["kernel_id"] == 1]
        b = [r for r in rows if r["agent_id"] == agent and r["kernel_id"] == 2]
        for r in (a[len(b):] if len(a) > len(b) else b[len(a):]):
            r["kernel_id"] = 5
    with hubprof.create(db) as w:
        w.write("node", dict(id=1, hostname="h", machine_id="m", system_name="Linux"))
        w.write("agent", [dict(id=a, node_id=1, type=1, name=f"gfx{a}", product_name=f"GPU {a}") for a in (1, 2)])
        # ranks 1, 2, 0, 1 (process 4: a second process of rank 1, without dispatches), and one without a rank
        w.write("process", [dict(id=p, node_id=1, pid=100 + p, ppid=1, rank=-1 if p == 5 else p % 3, start_ns=1,
                                 end_ns=10**9, command="x") for p in range(1, NPROC + 1)])
        w.write("thread", [dict(id=p, process_id=p, tid=100 + p, name="t") for p in range(1, NPROC + 1)])
        w.write("queue", [dict(id=p, process_id=p, agent_id=1, name="q") for p in range(1, NPROC + 1)])
        w.write("code_object", dict(id=1, process_id=1, agent_id=1, uri="memory://x"))
        w.write("kernel_symbol", [dict(id=i + 1, code_object_id=1, name=n, display_name=n)
                                  for i, n in enumerate(KERNELS)])
        w.write("dispatch", rows)
    run(need(HUBPROF), "convert", "-q", "--partition", "process", db, "-o", pq)
    assert len(list((pq / "dispatch").glob("process=*/part-*.parquet"))) == 4
    return db, pq, rows


def analyze(store: Path, threads: int, *extra: str) -> str:
    return run(HUBPROF, "analyze", "-q", "--format", "json", "--threads", str(threads), *extra, store).stdout


@pytest.mark.parametrize("extra", [(), ("--sort", "order"), ("--sort", "name", "-n", "2"),
                                   ("--kernel", "k_[ab]",), ("--dispatch", "100-2500"), ("--device", "GPU 2")])
def test_every_thread_count_gives_the_one_thread_answer(stores, extra):
    db, pq, _ = stores
    for store in (db, pq):
        want = analyze(store, 1, *extra)
        assert json.loads(want), f"{store.name} {extra}: no rows"
        for n in THREADS[1:]:
            assert analyze(store, n, *extra) == want, f"{store.name} --threads {n} {extra}"
    # the variable sets it when --threads is not given; both formats give the same figures
    env_run = run(HUBPROF, "analyze", "-q", "--format", "json", *extra, pq, env={**__import__("os").environ,
                                                                                   "HUBPROF_THREADS": "3"})
    assert env_run.stdout == analyze(pq, 1, *extra)


@pytest.mark.parametrize("by", ["rank", "rank-imbalance"])
@pytest.mark.parametrize("extra", [(), ("--sort", "name", "-n", "2"), ("--kernel", "k_[ab]",),
                                   ("--dispatch", "100-2500"), ("--device", "GPU 2")])
def test_rank_views_on_every_thread_count(stores, by, extra):
    """The rank views sum per (process, device, kernel) on each thread, then per rank: the same answer."""
    db, pq, _ = stores
    for store in (db, pq):
        want = analyze(store, 1, "--by", by, *extra)
        got = json.loads(want)
        assert got, f"{store.name} {by} {extra}: no rows"
        if by == "rank":
            assert {r["rank"] for r in got} == {-1, 0, 1, 2}
        for n in THREADS[1:]:
            assert analyze(store, n, "--by", by, *extra) == want, f"{store.name} --by {by} --threads {n} {extra}"


def hub_rows(store: Path, threads: int) -> list[tuple]:
    return sorted((r["device"], r["kernel"], r["calls"], r["timed_calls"], r["total_ns"], r["min_ns"], r["max_ns"])
                  for r in json.loads(analyze(store, threads)))


def norm(rows) -> list[tuple]:
    return sorted((str(a), str(b), int(c), int(d), int(e or 0), None if f is None else int(f),
                   None if g is None else int(g)) for a, b, c, d, e, f, g in rows)


def test_figures_equal_duckdb_and_sqlite(stores):
    duckdb = pytest.importorskip("duckdb")
    db, pq, rows = stores
    hub = hub_rows(pq, 3)
    # (convert writes a reference to a kernel the input lacks as NULL, which reads as 0: no "?" in Parquet)
    assert {r[1] for r in hub} >= {"k_a", "k_b", "k_c", "(none)"}
    assert "?" in {r[1] for r in hub_rows(db, 2)}
    ab = [r for r in hub if r[1] in ("k_a", "k_b")]
    assert ab[0][2:5] == ab[1][2:5], "the generated store has its tie"
    timed = "d.start_ns <> 0 AND d.end_ns >= d.start_ns"
    sql = f"""
      SELECT coalesce(a.product_name, a.name), CASE WHEN coalesce(d.kernel_id, 0) = 0 THEN '(none)'
               ELSE coalesce(k.display_name, '?') END AS kernel,
             count(*), count(*) FILTER (WHERE {timed}),
             coalesce(sum(d.end_ns - d.start_ns) FILTER (WHERE {timed}), 0),
             min(d.end_ns - d.start_ns) FILTER (WHERE {timed}), max(d.end_ns - d.start_ns) FILTER (WHERE {timed})
      FROM dispatch d JOIN agent a ON a.id = d.agent_id LEFT JOIN kernel_symbol k ON k.id = d.kernel_id
      GROUP BY 1, 2"""
    con = duckdb.connect()
    for t in ("dispatch", "agent", "kernel_symbol"):
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{pq}/{t}/**/*.parquet', hive_partitioning=false)")
    assert norm(con.execute(sql).fetchall()) == hub
    # the sqlite3 CLI over the rocpd file (its own column names), against the hub on 2 threads
    sqlite3 = shutil.which("sqlite3")
    if not sqlite3:
        pytest.skip("no sqlite3 CLI")
    t = 'K.start <> 0 AND K."end" >= K.start'
    q = f"""SELECT coalesce(nullif(A.product_name, ''), A.name),
                   CASE WHEN K.kernel_id = 0 THEN '(none)' ELSE coalesce(S.display_name, '?') END,
                   count(*), count(CASE WHEN {t} THEN 1 END),
                   coalesce(sum(CASE WHEN {t} THEN K."end" - K.start END), 0),
                   min(CASE WHEN {t} THEN K."end" - K.start END), max(CASE WHEN {t} THEN K."end" - K.start END)
            FROM rocpd_kernel_dispatch K JOIN rocpd_info_agent A ON A.id = K.agent_id
            LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND K.kernel_id <> 0
            WHERE K.id <> 0 GROUP BY 1, 2"""
    out = subprocess.run([sqlite3, "-json", str(db), q], capture_output=True, text=True, check=True).stdout
    got = [tuple(r.values()) for r in json.loads(out)]
    assert norm(got) == hub_rows(db, 2)
    assert sum(r[2] for r in hub) == len(rows)


def test_large_halves_keep_their_digits(tmp_path):
    """JSON and CSV reals keep every digit of their integer part and a decimal: the median of two ranks' device
    times over 0.1 s is x.5 (DuckDB's and Spark's answer), not rounded to 9 significant digits."""
    db = tmp_path / "halves.db"
    with hubprof.create(db) as w:
        w.write("node", dict(id=1, hostname="h", machine_id="m", system_name="Linux"))
        w.write("agent", dict(id=1, node_id=1, type=1, name="gfx1", product_name="GPU 1"))
        w.write("process", [dict(id=p, node_id=1, pid=100 + p, ppid=1, rank=p - 1, start_ns=1, end_ns=10**12,
                                 command="x") for p in (1, 2)])
        w.write("thread", [dict(id=p, process_id=p, tid=100 + p, name="t") for p in (1, 2)])
        w.write("queue", [dict(id=p, process_id=p, agent_id=1, name="q") for p in (1, 2)])
        w.write("code_object", dict(id=1, process_id=1, agent_id=1, uri="memory://x"))
        w.write("kernel_symbol", dict(id=1, code_object_id=1, name="k", display_name="k"))
        w.write("dispatch", [dict(id=p, dispatch_id=1, process_id=p, thread_id=p, agent_id=1, queue_id=p,
                                  kernel_id=1, start_ns=1000, end_ns=1000 + 2_123_456_789 + p, passes=1)
                             for p in (1, 2)])
    out = run(HUBPROF, "analyze", "-q", "--by", "rank-imbalance", "--format", "json", db).stdout
    assert '"median_ns": 2123456790.5' in out and '"mean_ns": 2123456790.5' in out, out
    csv = run(HUBPROF, "analyze", "-q", "--by", "rank-imbalance", "--format", "csv", db).stdout
    assert ",2123456790.5,2123456790.5," in csv, csv
