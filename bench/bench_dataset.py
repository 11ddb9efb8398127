#!/usr/bin/env python3
"""Top kernels (calls and total device time per device and kernel) over one Parquet dataset, three ways side
by side: `hubprof analyze` (a process per run), DuckDB (a Python process per run, the query timed inside it)
and Spark (local mode, one warm session: the JVM's start is not counted). Runs are interleaved (hubprof,
DuckDB, Spark, hubprof, ...) and each tool's answer is checked against hubprof's; prints median and min-max
of the time of each, and the peak resident memory of the hubprof and DuckDB processes (VmHWM polled from /proc;
Spark's JVM is shared by the runs and bounded by spark.driver.memory, not measured).

Usage: bench_dataset.py STORE [ROUNDS]      (make bench: bench/run.sh gives it a 10 M-dispatch dataset made by
bench/gen_dataset through the hub API)
"""
# SPDX-License-Identifier: MIT
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HUBPROF = os.path.join(HERE, "..", "build", "hubprof")

SQL = """
SELECT coalesce(a.product_name, a.name) AS device, coalesce(k.display_name, k.name) AS kernel,
       count(*) AS calls,
       coalesce(sum(CASE WHEN d.end_ns >= d.start_ns THEN d.end_ns - d.start_ns END), 0) AS total_ns
FROM dispatch d JOIN agent a ON d.agent_id = a.id JOIN kernel_symbol k ON d.kernel_id = k.id
GROUP BY 1, 2
"""


# DuckDB in its own process per run (its peak memory is then its own): views over the table folders, the
# query timed inside, rows and seconds printed as JSON.
DUCK = """
import json, sys, time, duckdb
store, sql = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # it would print on stdout
t0 = time.perf_counter()
for t in ("dispatch", "agent", "kernel_symbol"):
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{store}/{t}/**/*.parquet', hive_partitioning=false)")
rows = con.execute(sql).fetchall()
print(json.dumps({"rows": [list(r) for r in rows], "secs": time.perf_counter() - t0}))
"""


def rows(it):
    return sorted((str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in it)


def main():
    store = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master("local[2]").appName("hubprof-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for t in ("dispatch", "agent", "kernel_symbol"):
        spark.read.parquet(os.path.join(store, t)).createOrReplaceTempView(t)
    peaks = {"hubprof analyze": [], "DuckDB": []}

    def child(name, argv):
        """Run argv; its stdout, and its peak resident memory (KiB, VmHWM polled from /proc every 20 ms: the
        rusage of this machine's sandbox is not trustworthy) appended to peaks[name]."""
        import tempfile

        with tempfile.TemporaryFile("w+") as out:
            p = subprocess.Popen(argv, stdout=out, text=True)
            hwm = 0
            while p.poll() is None:
                try:
                    with open(f"/proc/{p.pid}/status") as f:
                        hwm = max([hwm] + [int(l.split()[1]) for l in f if l.startswith("VmHWM:")])
                except (OSError, ValueError):
                    pass
                time.sleep(0.02)
            if p.returncode != 0:
                raise SystemExit(f"bench_dataset: {argv[0]} exited {p.returncode}")
            peaks[name].append(hwm)
            out.seek(0)
            return out.read()

    def hub():
        out = child("hubprof analyze", [HUBPROF, "analyze", "-q", "--format", "json", store])
        return rows((r["device"], r["kernel"], r["calls"], r["total_ns"]) for r in json.loads(out)), None

    def duck():
        out = json.loads(child("DuckDB", [sys.executable, "-c", DUCK, store, SQL]))
        return rows(out["rows"]), out["secs"]

    def spark_top():
        return rows(tuple(r) for r in spark.sql(SQL).collect()), None

    tools = {"hubprof analyze": hub, "DuckDB (query only)": duck, "Spark (local[2], warm)": spark_top}
    want = hub()[0]
    peaks["hubprof analyze"].clear()
    times = {k: [] for k in tools}
    for _ in range(rounds):
        for name, f in tools.items():
            t0 = time.perf_counter()
            got, inner = f()
            times[name].append(inner if inner is not None else time.perf_counter() - t0)
            if got != want:
                print(f"bench_dataset: {name} gives other numbers than hubprof analyze", file=sys.stderr)
                return 1
    spark.stop()
    n = sum(r[2] for r in want)
    print(f"top kernels of a {n}-dispatch dataset ({len(want)} rows), {rounds} interleaved runs, "
          f"median (min-max), machine load {os.getloadavg()[0]:.1f}:")
    for name, ts in times.items():
        pk = peaks.get(name.split(" (")[0]) or []
        mem = f"   peak RSS {statistics.median(pk) / 1024:.0f} MiB ({min(pk) / 1024:.0f}-{max(pk) / 1024:.0f})" if pk else ""
        print(f"  {name:<24} {statistics.median(ts):7.3f} s ({min(ts):.3f}-{max(ts):.3f}){mem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
