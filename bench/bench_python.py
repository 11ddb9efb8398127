#!/usr/bin/env python3
"""Read rate of the Python bindings: store.table("dispatch") from a log, a Parquet and a rocpd store made
by gen_logs, against pandas.read_parquet (pyarrow) on the same Parquet files, R interleaved rounds (each reads every
source once): median and min-max of the rates.
usage: bench_python.py DIR [NDISP [ROUNDS]]"""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import glob
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
import hubprof  # noqa: E402
import pandas as pd  # noqa: E402


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


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
    opened = {fmt: hubprof.open(path) for fmt, path in stores.items()}
    times = {"pandas": []} | {fmt: [] for fmt in stores}
    for _ in range(rounds):
        times["pandas"].append(timed(lambda: pd.concat([pd.read_parquet(f) for f in files])))
        for fmt, s in opened.items():
            times[fmt].append(timed(lambda: s.table("dispatch")))
    for s in opened.values():
        s.close()
    base = statistics.median([n / t for t in times["pandas"]])
    print(f"read {n} dispatch rows into a DataFrame, {rounds} interleaved rounds, rows/s median (min-max):")
    for key, label in [("pandas", "pandas.read_parquet (pyarrow), same files")] + [
            (fmt, "hubprof: store.table(dispatch) from " + fmt) for fmt in stores]:
        rates = [n / t for t in times[key]]
        m = statistics.median(rates)
        print(f"  {label:44s} {m:12,.0f} ({min(rates):,.0f}-{max(rates):,.0f})  {m / base:.2f}x")

if __name__ == "__main__":
    main()
