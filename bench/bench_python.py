#!/usr/bin/env python3
"""Read rate of the Python bindings: store.table("dispatch") from a log, a Parquet and a rocpd store made
by gen_logs, against pandas.read_parquet (pyarrow) on the same Parquet files, in one run; best of R.
usage: bench_python.py DIR [NDISP [ROUNDS]]"""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
import hubprof  # noqa: E402
import pandas as pd  # noqa: E402


def best_of(rounds: int, fn) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.makedirs(d, exist_ok=True)
    logs = os.path.join(d, "logs")
    subprocess.run([os.path.join(REPO, "build/examples/gen_logs"), logs, "1", str(n)], check=True)
    log = glob.glob(os.path.join(logs, "*.log"))[0]
    stores = {"log": log}
    for fmt, ext in (("parquet", "parquet"), ("rocpd", "db")):
        out = os.path.join(d, "store." + ext)
        subprocess.run([os.path.join(REPO, "build/hubprof"), "convert", "-q", "-f", log, "-o", out,
                        "--format", fmt], check=True)
        stores[fmt] = out
    files = sorted(glob.glob(os.path.join(stores["parquet"], "dispatch", "*.parquet")))
    base = best_of(rounds, lambda: pd.concat([pd.read_parquet(f) for f in files]))
    print(f"read {n} dispatch rows into a DataFrame, best of {rounds}:")
    print(f"  {'pandas.read_parquet (pyarrow), same files':44s} {n / base:12,.0f} rows/s  1.00x")
    for fmt, path in stores.items():
        with hubprof.open(path) as s:
            t = best_of(rounds, lambda: s.table("dispatch"))
        print(f"  {'hubprof: store.table(dispatch) from ' + fmt:44s} {n / t:12,.0f} rows/s  {base / t:.2f}x")


if __name__ == "__main__":
    main()
