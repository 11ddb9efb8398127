#!/usr/bin/env python3
"""Top kernels per process of a hubprof Parquet dataset, with DuckDB (one node) or PySpark (a cluster):
calls and total device time per (process, device, kernel), the numbers `hubprof analyze` gives for each
process's own store. A process is named by its MPI rank when it has one, else by its pid.

Usage: top_kernels.py [--engine duckdb|spark] [--master URL] STORE
Prints one JSON object per line: {"rank", "pid", "device", "kernel", "calls", "total_ns"}, processes in
order, the most expensive kernel first.
"""
# SPDX-License-Identifier: MIT
import argparse
import json
import os
import sys

# One query, written once for both engines: every table is read by pointing at its folder.
SQL = """
SELECT p.rank AS rank, p.pid AS pid, coalesce(a.product_name, a.name) AS device,
       coalesce(k.display_name, k.name) AS kernel,
       count(*) AS calls,
       coalesce(sum(CASE WHEN d.start_ns IS NOT NULL AND d.end_ns >= d.start_ns
                         THEN d.end_ns - d.start_ns END), 0) AS total_ns
FROM dispatch d
JOIN process p ON d.process_id = p.id
JOIN agent a ON d.agent_id = a.id
JOIN kernel_symbol k ON d.kernel_id = k.id
GROUP BY p.id, p.rank, p.pid, a.id, coalesce(a.product_name, a.name), coalesce(k.display_name, k.name)
ORDER BY p.id, total_ns DESC, kernel
"""
TABLES = ("dispatch", "process", "agent", "kernel_symbol")


def with_duckdb(store):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:  # a view per table over its folder (part files, and key=value partitions if any)
        path = os.path.join(store, t, "**", "*.parquet").replace("'", "''")
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{path}', hive_partitioning = false)")
    cur = con.execute(SQL)
    names = [c[0] for c in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def with_spark(store, master):
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("hubprof-top-kernels")
             .config("spark.ui.enabled", "false").getOrCreate())
    try:
        for t in TABLES:
            spark.read.parquet(os.path.join(store, t)).createOrReplaceTempView(t)
        return [r.asDict() for r in spark.sql(SQL).collect()]
    finally:
        spark.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store")
    ap.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.store, "dispatch")):
        print(f"top_kernels.py: {a.store}: not a hubprof Parquet dataset (no dispatch/ folder)", file=sys.stderr)
        return 1
    rows = with_duckdb(a.store) if a.engine == "duckdb" else with_spark(a.store, a.master)
    for r in rows:
        print(json.dumps({k: (int(v) if k in ("calls", "total_ns") else v)
                          for k, v in r.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
