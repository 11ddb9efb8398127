"""Cluster runs from Python (docs/cluster.md): a merged folder of rank stores analyzed per rank by the
analysis library (`Store.analyze(by="rank")`), by examples/cluster/ranks.py with DuckDB and with PySpark in
local mode, all equal to `hubprof analyze --by rank` and `--by rank-imbalance`. The ranks are faked through
the launcher's variables (the real 4-rank Open MPI run is tests/cluster/test_cluster.sh)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from conftest import BUILD, HUBPROF, REPO, cli_json, need, run

sys.path.insert(0, str(REPO / "python"))
import hubprof  # noqa: E402

EXAMPLE = REPO / "examples" / "cluster" / "ranks.py"
VECTOR_ADD = BUILD / "examples" / "ocl" / "vector_add"
ITERATIONS = {0: 3, 1: 5, 2: 4}  # vector_add dispatches per rank


def example():
    spec = importlib.util.spec_from_file_location("ranks_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ranks(tmp_path_factory) -> Path:
    """Three ranks of one job (two faked nodes) traced into a folder, merged into one Parquet dataset."""
    need(HUBPROF)
    need(VECTOR_ADD)
    d = tmp_path_factory.mktemp("cluster")
    for r, iters in ITERATIONS.items():
        env = dict(os.environ, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE=str(len(ITERATIONS)),
                   OMPI_COMM_WORLD_LOCAL_RANK=str(r // 2), SLURM_JOB_ID="4242", HUBPROF_HOSTNAME=f"node{r // 2}")
        run(HUBPROF, "trace", "-q", "-o", d / "ranks", "--", VECTOR_ADD, 4096, iters, env=env)
    run(HUBPROF, "merge", "-q", "-o", d / "run.parquet", d / "ranks")
    return d / "run.parquet"


def by_rank_cli(store):
    return sorted((r["rank"], r["host"], r["device"], r["kernel"], r["calls"], r["total_ns"])
                  for r in cli_json("analyze", "--by", "rank", "--format", "json", "-q", store))


def imbalance_cli(store):
    return sorted((r["kernel"], r["ranks"], r["min_ns"], float(r["median_ns"]), r["max_ns"], r["slowest_rank"])
                  for r in cli_json("analyze", "--by", "rank-imbalance", "--format", "json", "-q", store))


def test_rank_metadata_in_the_dataset(ranks):
    with hubprof.open(ranks) as s:
        p = s.table("process").sort_values("rank")
    assert p["rank"].tolist() == [0, 1, 2] and set(p["world_size"]) == {3}
    assert p["local_rank"].tolist() == [0, 0, 1] and set(p["job_id"]) == {"4242"}
    assert (p["clock_offset_ns"] > 0).all()
    with hubprof.open(ranks) as s:
        hosts = dict(zip(s.table("node")["id"], s.table("node")["hostname"]))
    assert [hosts[n] for n in p["node_id"]] == ["node0", "node0", "node1"]


def test_library_equals_cli(ranks):
    with hubprof.open(ranks) as s:
        df = s.analyze(by="rank")
        imb = s.analyze(by="rank-imbalance")
    got = sorted((int(r.rank), r.host, r.device, r.kernel, int(r.calls), int(r.total_ns)) for r in df.itertuples())
    assert got == by_rank_cli(ranks)
    assert [c for _, _, _, _, c, _ in sorted(got)] == [ITERATIONS[r] for r in sorted(ITERATIONS)]
    got = sorted((r.kernel, int(r.ranks), int(r.min_ns), float(r.median_ns), int(r.max_ns), int(r.slowest_rank))
                 for r in imb.itertuples())
    assert got == imbalance_cli(ranks)


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_example_equals_analyze_by_rank(ranks, engine, request):
    ex = example()
    if engine == "duckdb":
        pytest.importorskip("duckdb")
        rows = ex.with_duckdb(str(ranks), "ranks")
        imb = ex.with_duckdb(str(ranks), "imbalance")
    else:
        s = request.getfixturevalue("spark")
        rows = ex.with_spark(str(ranks), "ranks", spark=s)
        imb = ex.with_spark(str(ranks), "imbalance", spark=s)
    rows = [ex.plain(r) for r in rows]
    assert sorted((r["rank"], r["host"], r["device"], r["kernel"], r["calls"], r["total_ns"]) for r in rows) == \
        by_rank_cli(ranks)
    imb = [ex.plain(r) for r in imb]
    assert sorted((r["kernel"], r["ranks"], r["min_ns"], r["median_ns"], r["max_ns"], r["slowest_rank"])
                  for r in imb) == imbalance_cli(ranks)


def test_example_command_line(ranks):
    pytest.importorskip("duckdb")
    out = run(sys.executable, EXAMPLE, "--view", "imbalance", ranks).stdout
    assert [json.loads(line)["kernel"] for line in out.splitlines()] == ["vector_add"]
