#!/usr/bin/env python3
"""Top kernels (calls and total device time per device and kernel) over one Parquet dataset, three ways side
by side: `hubprof analyze` (a process per run), DuckDB and Spark (local mode, one warm session: the JVM's
start is not counted). Runs are interleaved (hubprof, DuckDB, Spark, hubprof, ...) and each tool's answer is
checked against hubprof's; prints median and min-max of each.

Usage: bench_dataset.py STORE [ROUNDS]      (make bench: bench/run.sh gives it a gen_logs store)
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


def rows(it):
    return sorted((str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in it)


def main():
    store = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    import duckdb
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master("local[2]").appName("hubprof-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for t in ("dispatch", "agent", "kernel_symbol"):
        spark.read.parquet(os.path.join(store, t)).createOrReplaceTempView(t)
    con = duckdb.connect()
    for t in ("dispatch", "agent", "kernel_symbol"):
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{store}/{t}/**/*.parquet')")

    def hub():
        out = subprocess.run([HUBPROF, "analyze", "-q", "--format", "json", store], capture_output=True,
                             text=True, check=True).stdout
        return rows((r["device"], r["kernel"], r["calls"], r["total_ns"]) for r in json.loads(out))

    tools = {"hubprof analyze": hub, "DuckDB": lambda: rows(con.execute(SQL).fetchall()),
             "Spark (local[2], warm)": lambda: rows(tuple(r) for r in spark.sql(SQL).collect())}
    want = hub()
    times = {k: [] for k in tools}
    for _ in range(rounds):
        for name, f in tools.items():
            t0 = time.perf_counter()
            got = f()
            times[name].append(time.perf_counter() - t0)
            if got != want:
                print(f"bench_dataset: {name} gives other numbers than hubprof analyze", file=sys.stderr)
                return 1
    spark.stop()
    n = sum(r[2] for r in want)
    print(f"top kernels of a {n}-dispatch dataset ({len(want)} rows), {rounds} interleaved runs, "
          f"median (min-max), machine load {os.getloadavg()[0]:.1f}:")
    for name, ts in times.items():
        print(f"  {name:<24} {statistics.median(ts):7.3f} s ({min(ts):.3f}-{max(ts):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
