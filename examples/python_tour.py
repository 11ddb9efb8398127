# A tour of hubprof's Python bindings, notebook style (cells marked `# %%`, run them one by one in
# Jupyter/VS Code, or the whole file): write, merge, open, tables as DataFrames, analysis, Parquet.
#
#   make && PYTHONPATH=python python3 examples/python_tour.py          # after `pip install ./python`: no PYTHONPATH
#   PYTHONPATH=python python3 examples/python_tour.py run.db           # also look at a store of yours
# SPDX-License-Identifier: MIT

# %% [markdown]
# # hubprof from Python
# Every profile hubprof records (a rocpd SQLite file, the collector's per-process logs, a Parquet
# directory) opens with `hubprof.open()`; each table of the data model comes back as a pandas DataFrame.
# The bindings call the hub's C library; they never read a format's files themselves.

# %%
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import hubprof

pd.set_option("display.width", 140)
pd.set_option("display.max_columns", 20)
print("hubprof", hubprof.version(), "formats:", hubprof.formats())
print("tables:", ", ".join(hubprof.TABLES))
print(hubprof.describe("dispatch"))
work = Path(tempfile.mkdtemp(prefix="hubprof-tour-"))

# %% [markdown]
# ## Write a profile from Python
# Two processes, each with its own log, as the collector leaves them after a multi-process run:
# three kernels, 20 000 dispatches each, two counters measured in two replay passes.
# `write()` takes a DataFrame, a list of dicts or a dict of columns (scalars are repeated); columns
# left out are 0 or "". The store appears at its path only when the `with` block ends without error.

# %%
rng = np.random.default_rng(7)
kernels = ["gemm_tile", "softmax", "layernorm"]
cost_ns = np.array([9000, 3000, 1500])
n = 20_000


def write_process_log(path: Path, pid: int) -> None:
    with hubprof.create(path, format="log") as w:
        w.write("node", {"id": 1, "hostname": "tour-host", "system_name": "Linux", "machine": "x86_64"})
        w.write("process", {"id": 1, "node_id": 1, "pid": pid, "ppid": 1, "rank": pid - 100,
                            "start_ns": 1_000, "end_ns": 10**9, "command": "python train.py"})
        w.write("thread", {"id": 1, "process_id": 1, "tid": pid, "name": "main"})
        w.write("agent", {"id": 1, "node_id": 1, "type": 2, "vendor": "Example", "name": "gpu0",
                          "product_name": "Example GPU", "compute_units": 120})
        w.write("queue", {"id": 1, "process_id": 1, "agent_id": 1, "name": "queue 0"})
        w.write("kernel_symbol", [{"id": i + 1, "name": k, "display_name": k} for i, k in enumerate(kernels)])
        k = rng.integers(0, len(kernels), n)
        start = 1_000_000 + np.arange(n, dtype=np.int64) * 20_000
        dur = (cost_ns[k] * rng.uniform(0.9, 1.1, n)).astype(np.int64)
        w.write("dispatch", pd.DataFrame({
            "id": np.arange(1, n + 1), "dispatch_id": np.arange(1, n + 1), "process_id": 1, "thread_id": 1,
            "agent_id": 1, "queue_id": 1, "kernel_id": k + 1, "grid_x": 1 << 20, "workgroup_x": 256,
            "start_ns": start, "end_ns": start + dur, "enqueue_ns": start - 500, "passes": 2}))
        w.write("counter_info", [{"id": 1, "name": "SQ_WAVES", "block": "SQ", "unit": "waves"},
                                 {"id": 2, "name": "TCC_HIT", "block": "TCC", "unit": "hits"}])
        ids = np.arange(1, n + 1)
        w.write("counter_value", {"dispatch_id": np.concatenate([ids, ids]),
                                  "counter_id": np.repeat([1, 2], n), "pass": np.repeat([1, 2], n),
                                  "value": np.concatenate([4096.0 * (k + 1), rng.uniform(1e5, 1e6, n)])})
        w.write_metadata("mode", "profile")


logs = [work / f"rank{r}.log" for r in range(2)]
for r, path in enumerate(logs):
    write_process_log(path, 100 + r)
print([(p.name, p.stat().st_size) for p in logs])

# %% [markdown]
# ## Merge the logs into one store
# Ids are remapped, nodes/agents/kernels de-duplicated, processes and passes kept apart. The output
# appears only if the merge succeeds; the result says how many rows went in and out.

# %%
merged = work / "profile.db"
stats = hubprof.merge(logs, merged, format="rocpd")
print(pd.DataFrame({"in": stats["rows_in"], "out": stats["rows_out"]}))

# %% [markdown]
# ## Open a store and look at it

# %%
store = hubprof.open(merged)
print(store, "damage:", store.damage)
print(store.counts())
print(store.metadata())
print(store.table("process")[["pid", "rank", "command"]])

# %% [markdown]
# ## Tables as DataFrames
# Columns carry the hub's names and C types (uint64 ids, int64 nanoseconds, text). Join them like any
# pandas frames.

# %%
dispatch = store.table("dispatch")
print(dispatch.dtypes.value_counts())
ks = store.table("kernel_symbol")[["id", "name"]].rename(columns={"id": "kernel_id", "name": "kernel"})
d = dispatch.merge(ks, on="kernel_id")
d["duration_us"] = (d["end_ns"] - d["start_ns"]) / 1e3
print(d.groupby("kernel")["duration_us"].describe()[["count", "mean", "min", "max"]])

# %% [markdown]
# ## Counters, pass by pass
# Every counter value carries the pass that measured it; never sum across passes by accident.

# %%
cv = store.table("counter_value").merge(
    store.table("counter_info")[["id", "name"]].rename(columns={"id": "counter_id", "name": "counter"}),
    on="counter_id")
per_kernel = (cv.merge(d[["id", "kernel"]].rename(columns={"id": "dispatch_id"}), on="dispatch_id")
              .pivot_table(index="kernel", columns=["counter", "pass"], values="value", aggfunc="mean"))
print(per_kernel)

# %% [markdown]
# ## The analysis of `hubprof analyze`
# The same top-kernels table the CLI prints, computed by the C analysis library.

# %%
top = store.analyze(by="kernel")
print(top)
check = d.groupby("kernel")["duration_us"].sum().sort_values(ascending=False)
assert list(top["kernel"]) == list(check.index)  # pandas agrees with the hub
store.close()

# %% [markdown]
# ## Parquet: the same profile for pandas, DuckDB, polars, Spark
# Converting is a merge of one store into another format. A Parquet store is a dataset: a folder per
# table, which any Parquet reader takes directly by its folder (docs/formats/parquet.md).

# %%
pq_store = work / "profile.parquet"
hubprof.merge([merged], pq_store, format="parquet")
with hubprof.open(pq_store) as s:
    print(s.format, s.count("dispatch"), "dispatches")
print(sorted(os.listdir(pq_store)))
try:
    via_pandas = pd.read_parquet(pq_store / "dispatch")
    print("pandas.read_parquet:", len(via_pandas), "rows,", list(via_pandas.columns)[:6], "…")
except ImportError as e:  # pandas needs pyarrow or fastparquet for Parquet
    print("pandas cannot read Parquet here:", e)
try:
    import duckdb

    print(duckdb.sql(f"""
        select k.name as kernel, count(*) as calls, sum(d.end_ns - d.start_ns) as total_ns
        from '{pq_store}/dispatch/**/*.parquet' d
        join '{pq_store}/kernel_symbol/**/*.parquet' k on k.id = d.kernel_id
        group by 1 order by total_ns desc"""))
except ImportError:
    print("DuckDB is not installed (pip install duckdb)")

# %% [markdown]
# ## A real trace (when the hubprof CLI and an OpenCL platform such as PoCL are there)

# %%
repo = Path(__file__).resolve().parent.parent if "__file__" in globals() else Path.cwd()
cli, app = repo / "build" / "hubprof", repo / "build" / "examples" / "ocl" / "vector_add"
if cli.exists() and app.exists():
    trace = work / "trace.db"
    r = subprocess.run([cli, "trace", "-o", trace, "--", app, "4096", "10"], capture_output=True, text=True)
    if r.returncode == 0:
        with hubprof.open(trace) as s:
            t = s.table("dispatch")
            print(len(t), "dispatches of vector_add, mean", ((t.end_ns - t.start_ns).mean() / 1e3).round(1), "us")
    else:
        print("trace did not run here:", r.stderr.strip().splitlines()[-1:] or r.returncode)
else:
    print("no build/hubprof or OpenCL example here: skipping the real trace")

# %% [markdown]
# ## Your own store (a path given on the command line)

# %%
if len(sys.argv) > 1 and Path(sys.argv[1]).exists():
    with hubprof.open(sys.argv[1]) as s:
        print(s, s.counts())
        print(s.analyze(limit=10))

# %%
shutil.rmtree(work)
print("tour done")
