#!/usr/bin/env python3
"""Per-rank top kernels and the rank imbalance of a cluster run's dataset (`hubprof merge DIR -o
run.parquet`, docs/cluster.md) with DuckDB (one node) or PySpark (a cluster): the numbers of `hubprof analyze
--by rank` and `--by rank-imbalance`, from the Parquet folders alone.

Usage: ranks.py [--engine duckdb|spark] [--master URL] [--view ranks|imbalance] STORE
Prints one JSON object per line. ranks: {"rank", "host", "device", "kernel", "calls", "total_ns"}, by rank,
the most expensive kernel first. imbalance: {"kernel", "ranks", "min_ns", "median_ns", "max_ns",
"slowest_rank"} per kernel name, its device time summed per rank first; most max_ns first.
"""
# SPDX-License-Identifier: MIT
import argparse
import json
import os
import sys

TABLES = ("dispatch", "process", "node", "agent", "kernel_symbol")

# Device time per (rank, device, kernel): written once for both engines. A rank's processes (its forked
# children inherit the rank) count as the rank; the job id keeps ranks of different jobs apart.
PER_RANK = """
SELECT p.rank AS rank, p.job_id AS job_id, min(n.hostname) AS host, coalesce(a.product_name, a.name) AS device,
       coalesce(k.display_name, k.name) AS kernel, count(*) AS calls,
       coalesce(sum(CASE WHEN d.start_ns IS NOT NULL AND d.end_ns >= d.start_ns
                         THEN d.end_ns - d.start_ns END), 0) AS total_ns
FROM dispatch d
JOIN process p ON d.process_id = p.id
JOIN node n ON p.node_id = n.id
JOIN agent a ON d.agent_id = a.id
JOIN kernel_symbol k ON d.kernel_id = k.id
WHERE p.rank IS NOT NULL
GROUP BY p.rank, p.job_id, coalesce(a.product_name, a.name), coalesce(k.display_name, k.name)
"""
RANKS = f"SELECT rank, host, device, kernel, calls, total_ns FROM ({PER_RANK}) ORDER BY rank, total_ns DESC, kernel"
# Per kernel over the ranks; MEDIAN is the engine's exact median (DuckDB median, Spark percentile).
IMBALANCE = f"""
WITH r AS (SELECT rank, job_id, kernel, sum(total_ns) AS t FROM ({PER_RANK}) GROUP BY rank, job_id, kernel)
SELECT kernel, count(*) AS ranks, min(t) AS min_ns, MEDIAN AS median_ns, max(t) AS max_ns,
       min(CASE WHEN t = mx THEN rank END) AS slowest_rank
FROM (SELECT r.*, max(t) OVER (PARTITION BY kernel) AS mx FROM r)
GROUP BY kernel ORDER BY max_ns DESC, kernel
"""


def sql(view, engine):
    if view == "ranks":
        return RANKS
    return IMBALANCE.replace("MEDIAN", "median(t)" if engine == "duckdb" else "percentile(t, 0.5)")


def with_duckdb(store, view):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:  # a view per table over its folder
        path = os.path.join(store, t, "**", "*.parquet").replace("'", "''")
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{path}', hive_partitioning = false)")
    cur = con.execute(sql(view, "duckdb"))
    names = [c[0] for c in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def with_spark(store, view, master=None, spark=None):
    """With `spark` (a running SparkSession) it is used and left running; else one is started on master."""
    from pyspark.sql import SparkSession

    own = spark is None
    if own:
        spark = (SparkSession.builder.master(master).appName("hubprof-ranks")
                 .config("spark.ui.enabled", "false").getOrCreate())
    try:
        for t in TABLES:
            spark.read.parquet(os.path.join(store, t)).createOrReplaceTempView(t)
        return [r.asDict() for r in spark.sql(sql(view, "spark")).collect()]
    finally:
        if own:
            spark.stop()


def plain(row):
    """JSON-ready values: integers as int, the median as float."""
    return {k: (float(v) if k == "median_ns" else int(v) if k in ("rank", "calls", "total_ns", "ranks", "min_ns",
                                                                  "max_ns", "slowest_rank") else v)
            for k, v in row.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument("--view", choices=("ranks", "imbalance"), default="ranks")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.store, "dispatch")):
        print(f"ranks.py: {a.store}: not a hubprof Parquet dataset (no dispatch/ folder)", file=sys.stderr)
        return 1
    rows = with_duckdb(a.store, a.view) if a.engine == "duckdb" else with_spark(a.store, a.view, a.master)
    for r in rows:
        print(json.dumps(plain(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
