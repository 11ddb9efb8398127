#!/usr/bin/env python3
"""One question of bench/bench_scale.sh asked of a Parquet dataset by DuckDB or Spark, in a process of its own
(the whole process is what the script times). The answer goes to stdout as sorted JSON rows, the same rows
bench_scale.sh makes of `hubprof analyze --format json`; `query_ms=N` goes to stderr: the query alone (from the
first view made to the last row fetched), after the engine started (Spark: after its JVM and session).

usage: scale_query.py duckdb|spark top|ranks|imbalance STORE [MASTER]   (MASTER: Spark's, default local[2])

top is bench_analyze.sh's top kernels per device; ranks and imbalance are examples/cluster/ranks.py's SQL (the
same text tests/python/test_cluster.py checks against `hubprof analyze --by rank` and `--by rank-imbalance`).
Spark runs with 2 shuffle partitions (local[2]: one per core, instead of 200) and its UI off; its JVM is waited
for before this process exits, so that the JVM's CPU time and memory count in this process's (/usr/bin/time).
"""
# SPDX-License-Identifier: MIT
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "cluster"))
import ranks  # noqa: E402  (examples/cluster/ranks.py: the rank views' SQL)

TOP = """
SELECT coalesce(a.product_name, a.name) AS device, coalesce(k.display_name, k.name) AS kernel, count(*) AS calls,
       coalesce(sum(CASE WHEN d.start_ns <> 0 AND d.end_ns >= d.start_ns THEN d.end_ns - d.start_ns END), 0)
         AS total_ns
FROM dispatch d JOIN agent a ON a.id = d.agent_id JOIN kernel_symbol k ON k.id = d.kernel_id
GROUP BY 1, 2
"""
TABLES = ("dispatch", "process", "node", "agent", "kernel_symbol")


def rows_of(view, rows):
    """The rows a view compares on, sorted; the median as text with one decimal (engines print floats apart)."""
    if view == "top":
        out = [[r["device"], r["kernel"], int(r["calls"]), int(r["total_ns"])] for r in rows]
    elif view == "ranks":
        out = [[int(r["rank"]), r["host"], r["device"], r["kernel"], int(r["calls"]), int(r["total_ns"])]
               for r in rows]
    else:
        out = [[r["kernel"], int(r["ranks"]), int(r["min_ns"]), "%.1f" % float(r["median_ns"]), int(r["max_ns"]),
                int(r["slowest_rank"])] for r in rows]
    return sorted(out)


def sql(engine, view):
    return TOP if view == "top" else ranks.sql(view, engine)


def with_duckdb(view, store):
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    t0 = time.perf_counter()
    for t in TABLES:
        path = os.path.join(store, t, "**", "*.parquet").replace("'", "''")
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{path}', hive_partitioning = false)")
    cur = con.execute(sql("duckdb", view))
    names = [c[0] for c in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    return rows, time.perf_counter() - t0


def with_spark(view, store, master):
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("hubprof-bench-scale")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        t0 = time.perf_counter()
        for t in TABLES:
            spark.read.parquet(os.path.join(store, t)).createOrReplaceTempView(t)
        rows = [r.asDict() for r in spark.sql(sql("spark", view)).collect()]
        q = time.perf_counter() - t0
    finally:
        gw = SparkContext._gateway
        spark.stop()
        proc = getattr(gw, "proc", None) if gw else None
        if proc:  # the JVM ends when its stdin closes; waited for, its rusage joins ours
            proc.stdin.close()
            proc.wait()
    return rows, q


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("duckdb", "spark") or sys.argv[2] not in ("top", "ranks",
                                                                                          "imbalance"):
        print("usage: scale_query.py duckdb|spark top|ranks|imbalance STORE [MASTER]", file=sys.stderr)
        return 2
    engine, view, store = sys.argv[1:4]
    if not os.path.isdir(os.path.join(store, "dispatch")):
        print(f"scale_query.py: {store}: not a hubprof Parquet dataset (no dispatch/ folder)", file=sys.stderr)
        return 1
    if engine == "duckdb":
        rows, q = with_duckdb(view, store)
    else:
        rows, q = with_spark(view, store, sys.argv[4] if len(sys.argv) > 4 else "local[2]")
    print(json.dumps(rows_of(view, rows)))
    print(f"query_ms={q * 1000:.0f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
