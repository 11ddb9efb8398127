"""Partitioned Parquet datasets (docs/formats/parquet.md, "Partitions"): `--partition node,process` writes
Hive folders for the per-process tables; pandas, pyarrow, DuckDB, polars and Spark read each table's folder
with the partition columns and the right rows; hubprof and Python read the store back equal to the same
merge unpartitioned; `auto` partitions above its threshold; a partition of a non-Parquet output is refused."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import HUBPROF, need, run

import hubprof  # noqa: E402

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

PARTITIONED = ("dispatch", "counter_value", "region", "pc_sample", "counter_sample")


@pytest.fixture(scope="module")
def stores(logs, tmp_path_factory) -> tuple[Path, Path]:
    """The three processes' logs merged twice: partitioned by node and process, and not partitioned."""
    d = tmp_path_factory.mktemp("part")
    part, flat = d / "part.parquet", d / "flat.parquet"
    run(need(HUBPROF), "merge", "-q", "--partition", "node,process", "-o", part, *logs)
    run(need(HUBPROF), "merge", "-q", "-o", flat, *logs)
    return part, flat


def frames(store: Path) -> dict[str, object]:
    with hubprof.open(store) as s:
        return {t: s.table(t) for t in hubprof.TABLES}


def expected_partitions(flat: Path) -> dict[tuple[int, int], int]:
    """(node id, process id) -> dispatches, from the unpartitioned store."""
    with hubprof.open(flat) as s:
        d, p = s.table("dispatch"), s.table("process")
    node = dict(zip(p["id"], p["node_id"]))
    out: dict[tuple[int, int], int] = {}
    for proc in d["process_id"]:
        k = (int(node[proc]), int(proc))
        out[k] = out.get(k, 0) + 1
    return out


def test_layout_hive_folders(stores):
    part, flat = stores
    want = expected_partitions(flat)
    assert len(want) == 3
    got = {}
    for f in (part / "dispatch").glob("node=*/process=*/part-*.parquet"):
        m = re.fullmatch(r"node=(\d+)/process=(\d+)", str(f.parent.relative_to(part / "dispatch")))
        got[(int(m[1]), int(m[2]))] = got.get((int(m[1]), int(m[2])), 0) + pq.ParquetFile(f).metadata.num_rows
    assert got == want
    assert not list((part / "dispatch").glob("*.parquet")), "no file beside the partition folders"
    m = json.loads((part / "_hubprof.json").read_text())
    files = {t["name"]: [f["path"] for f in t["files"]] for t in m["tables"]}
    assert all(re.fullmatch(r"counter_value/node=\d+/process=\d+/part-\d{5}\.parquet", p) for p in files["counter_value"])
    assert files["process"] == ["process/part-00000.parquet"], "small tables stay whole"
    names = [p for ps in files.values() for p in ps]
    assert len({p.rsplit("/", 1)[1] + p.split("/", 1)[0] for p in names}) == len(names), "part names unique per table"


def test_hubprof_reads_it_back_equal(stores, tmp_path):
    part, flat = stores
    a, b = frames(part), frames(flat)
    for t in hubprof.TABLES:
        assert a[t].astype(str).equals(b[t].astype(str)), t
    analyze = [run(HUBPROF, "analyze", "--format", "json", "-q", s).stdout for s in (part, flat)]
    assert json.loads(analyze[0]) == json.loads(analyze[1])
    # without its manifest (as a dataset written by another tool), the folders are found and read
    bare = tmp_path / "bare.parquet"
    shutil.copytree(part, bare)
    (bare / "_hubprof.json").unlink()
    c = frames(bare)
    for t in hubprof.TABLES:  # rows may come in another file order: compare sorted
        key = list(c[t].columns)
        assert c[t].sort_values(key).reset_index(drop=True).astype(str).equals(
            b[t].sort_values(key).reset_index(drop=True).astype(str)), t
    # and converted back to rocpd, it equals the unpartitioned store's conversion
    out = tmp_path / "back.db"
    run(HUBPROF, "convert", "-q", part, "-o", out)
    d = frames(out)
    assert all(d[t].astype(str).equals(b[t].astype(str)) for t in ("dispatch", "counter_value", "process"))


def test_every_tool_sees_rows_and_partition_columns(stores, spark):
    import duckdb
    import pandas as pd
    import polars as pl

    part, flat = stores
    with hubprof.open(flat) as s:
        counts = s.counts()
    want = expected_partitions(flat)
    con = duckdb.connect()
    for t in hubprof.TABLES:
        folder = part / t
        got = {
            "pandas": pd.read_parquet(folder),
            "pyarrow": pq.read_table(folder).to_pandas(),
            "duckdb": con.sql(f"SELECT * FROM read_parquet('{folder}/**/*.parquet', hive_partitioning=true)").df(),
            "polars": pl.read_parquet(f"{folder}/**/*.parquet", hive_partitioning=True).to_pandas(),
            "spark": spark.read.parquet(str(folder)).toPandas(),
        }
        for tool, df in got.items():
            assert len(df) == counts[t], f"{tool}: {t} has {len(df)} rows, the hub {counts[t]}"
            if t in PARTITIONED and counts[t]:
                assert {"node", "process"} <= set(df.columns), f"{tool}: {t} lacks the partition columns"
        if t == "dispatch":
            for tool, df in got.items():
                n = df.groupby([df["node"].astype(int), df["process"].astype(int)]).size().to_dict()
                assert n == want, f"{tool}: dispatches per partition {n}"
                assert (df["process"].astype(int) == df["process_id"].astype(int)).all(), tool
        if t == "counter_value":  # each value sits in the partition of its dispatch
            d = got["pyarrow"]
            disp = pq.read_table(part / "dispatch").to_pandas()
            j = d.merge(disp[["id", "process_id"]], left_on="dispatch_id", right_on="id")
            assert len(j) == counts[t] and (j["process"].astype(int) == j["process_id"]).all()


def test_auto_partitions_above_the_threshold(logs, tmp_path):
    total = sum(p.stat().st_size for p in logs)
    env = dict(os.environ, HUBPROF_PARTITION_AUTO_BYTES=str(total))
    run(HUBPROF, "merge", "-q", "-o", tmp_path / "a.parquet", *logs, env=env)
    assert list((tmp_path / "a.parquet" / "dispatch").glob("node=*/process=*/part-*.parquet"))
    env["HUBPROF_PARTITION_AUTO_BYTES"] = str(total + 1)
    run(HUBPROF, "merge", "-q", "-o", tmp_path / "b.parquet", *logs, env=env)
    assert not list((tmp_path / "b.parquet" / "dispatch").glob("node=*"))
    assert list((tmp_path / "b.parquet" / "dispatch").glob("part-*.parquet"))
    env["HUBPROF_PARTITION_AUTO_BYTES"] = "0"  # --partition none wins over auto
    run(HUBPROF, "merge", "-q", "--partition", "none", "-o", tmp_path / "c.parquet", *logs, env=env)
    assert not list((tmp_path / "c.parquet" / "dispatch").glob("node=*"))
    run(HUBPROF, "convert", "-q", "--partition", "process", tmp_path / "c.parquet", "-o", tmp_path / "d.parquet")
    assert len(list((tmp_path / "d.parquet" / "dispatch").glob("process=*/part-*.parquet"))) == 3


def test_partition_of_a_non_parquet_output_is_refused(logs, tmp_path):
    p = run(HUBPROF, "merge", "-q", "--partition", "node,process", "-o", tmp_path / "x.db", *logs, check=False)
    assert p.returncode == 2 and "needs a Parquet output" in p.stderr and not (tmp_path / "x.db").exists()
    p = run(HUBPROF, "merge", "-q", "--partition", "rank", "-o", tmp_path / "x.parquet", *logs, check=False)
    assert p.returncode == 2 and not (tmp_path / "x.parquet").exists()


# ---- the manifest and files rewritten in place ------------------------------------------------------
def test_file_rewritten_in_place_is_a_warning_not_damage(stores, tmp_path):
    """A part rewritten by pyarrow with its defaults (another size and footer than the manifest's) is read
    by its own footer with one warning naming it; a part cut short stays damage."""
    _, flat = stores
    st = tmp_path / "rw.parquet"
    shutil.copytree(flat, st)
    part = st / "dispatch" / "part-00000.parquet"
    pq.write_table(pq.read_table(part), part)  # pyarrow's defaults: Snappy, its own footer
    want = run(HUBPROF, "analyze", "--format", "json", "-q", flat).stdout
    p = run(HUBPROF, "analyze", "--format", "json", st)
    assert json.loads(p.stdout) == json.loads(want)
    assert re.search(r"dispatch/part-00000\.parquet: changed since the manifest was written .*read by its own "
                     r"footer", p.stderr), p.stderr
    p = run(HUBPROF, "merge", "-o", tmp_path / "m.db", st)
    assert "changed since the manifest" in p.stderr
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    p = run(HUBPROF, "analyze", "-q", st, check=False)
    assert p.returncode == 1 and "dispatch/part-00000.parquet" in p.stderr


# ---- merge --append ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def four_logs(tmp_path_factory) -> list[Path]:
    from conftest import GEN_LOGS

    d = tmp_path_factory.mktemp("four")
    run(need(GEN_LOGS), d, 4, 400, 4, 2)
    return sorted(d.glob("*.log"))


def streamed_files(store: Path) -> dict[str, bytes]:
    return {str(f.relative_to(store)): f.read_bytes() for t in PARTITIONED for f in (store / t).rglob("*.parquet")}


@pytest.mark.parametrize("partition", ["node,process", "none"])
def test_append_adds_part_files_equal_to_a_full_merge(four_logs, tmp_path, partition):
    store, full = tmp_path / "run.parquet", tmp_path / "full.parquet"
    run(HUBPROF, "merge", "-q", "--partition", partition, "-o", store, *four_logs[:2])
    before = streamed_files(store)
    p = run(HUBPROF, "merge", "--append", "-o", store, *four_logs[2:])
    assert "appended 2 stores" in p.stderr and "now 4 processes" in p.stderr
    after = streamed_files(store)
    assert all(after[k] == v for k, v in before.items()), "a part file of the store was rewritten"
    assert len(after) > len(before), "no new part files"
    run(HUBPROF, "merge", "-q", "--partition", partition, "-o", full, *four_logs)
    a, b = frames(store), frames(full)
    for t in hubprof.TABLES:
        assert a[t].astype(str).equals(b[t].astype(str)), t
    m = json.loads((store / "_hubprof.json").read_text())
    listed = {f["path"] for t in m["tables"] for f in t["files"]}
    on_disk = {str(f.relative_to(store)) for f in store.rglob("*.parquet")}
    assert listed == on_disk, "the manifest lists exactly the files in the store"
    assert not list(tmp_path.glob(".*tmp*")), "no temporary left"
    # the same processes again: taken once, nothing changes
    run(HUBPROF, "merge", "-q", "--append", "-o", store, four_logs[3])
    assert frames(store)["dispatch"].astype(str).equals(b["dispatch"].astype(str))


def test_append_refusals(four_logs, tmp_path):
    db = tmp_path / "x.db"
    run(HUBPROF, "merge", "-q", "-o", db, four_logs[0])
    p = run(HUBPROF, "merge", "-q", "--append", "-o", db, four_logs[1], check=False)
    assert p.returncode == 2 and "--append" in p.stderr
    p = run(HUBPROF, "merge", "-q", "--append", "-F", "parquet", "-o", tmp_path / "none.parquet", four_logs[1],
            check=False)
    assert p.returncode == 1 and "none.parquet" in p.stderr and not (tmp_path / "none.parquet").exists()


def test_trace_partitions_its_processes(tmp_path):
    """trace of a program whose child runs kernels too: one partition per process; a rocpd output refused
    before the application starts."""
    from conftest import BUILD

    app = need(BUILD / "examples" / "ocl" / "forking")
    env = dict(os.environ, HUBPROF_COLLECTOR=str(need(BUILD / "libhubprof_collector.so")))
    out = tmp_path / "f.parquet"
    run(HUBPROF, "trace", "-q", "--partition", "node,process", "-o", out, "--", app, 2, env=env)
    with hubprof.open(out) as s:
        d = s.table("dispatch")
    folders = {str(f.parent.relative_to(out / "dispatch")) for f in (out / "dispatch").rglob("*.parquet")}
    assert folders == {f"node=1/process={p}" for p in d["process_id"].unique()} and len(folders) == 2
    p = run(HUBPROF, "trace", "-q", "--partition", "node,process", "-o", tmp_path / "f.db", "--", app, 2,
            env=env, check=False)
    assert p.returncode == 2 and "needs a Parquet output" in p.stderr and not (tmp_path / "f.db").exists()
