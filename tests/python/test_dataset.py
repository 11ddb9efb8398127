"""The Parquet store as a dataset (docs/formats/parquet.md): every table read by pointing pandas, pyarrow,
DuckDB, polars and Spark at its folder; the documented joins (run from the doc itself) and the examples/dataset
program give the numbers of `hubprof analyze` on a multi-process store; NULLs, signed ids, booleans and
units; a store of the old flat layout still reads; Spark writes tables back that hubprof reads equal.
The session-wide SparkSession of conftest.py serves the whole module."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import HUBPROF, REPO, cli_json, need, run

import hubprof  # noqa: E402

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

DOC = REPO / "docs" / "formats" / "parquet.md"
EXAMPLE = REPO / "examples" / "dataset" / "top_kernels.py"
TABLES = hubprof.TABLES


# ---- fixtures ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dataset(logs, tmp_path_factory) -> Path:
    """Three processes' logs (counters, two passes) merged into one Parquet dataset by the CLI."""
    out = tmp_path_factory.mktemp("ds") / "run.parquet"
    run(need(HUBPROF), "merge", "-q", "-F", "parquet", "-o", out, *logs)
    return out


def hub_counts(store: Path) -> dict[str, int]:
    with hubprof.open(store) as s:
        return s.counts()


def dataset_names(table: str) -> list[str]:
    """Column names of a table in datasets, as the C library describes them."""
    return [c.dataset_name for c in hubprof.describe(table).columns]


def top_of_analyze(store: Path) -> list[tuple]:
    return sorted((r["device"], r["kernel"], r["calls"], r["total_ns"]) for r in cli_json("analyze", "--format", "json", "-q", store))


def as_rows(df) -> list[tuple]:
    """(device, kernel, calls, total_ns) rows of a pandas DataFrame, sorted."""
    return sorted((str(r.device), str(r.kernel), int(r.calls), int(r.total_ns)) for r in df.itertuples())


# ---- layout -----------------------------------------------------------------------------------------
def test_layout_folder_per_table(dataset):
    assert sorted(p.name for p in dataset.iterdir() if p.is_dir()) == sorted(TABLES)
    assert not list(dataset.glob("*.parquet")), "the root holds no Parquet file of its own"
    readme = (dataset / "README.txt").read_text()
    assert "read_parquet" in readme
    # it names every table folder, and nothing else as one (issue 28: it listed 12 of 16)
    listed = re.search(r"one folder per table \(([^)]*)\)", readme).group(1).replace("\n", " ").split(", ")
    assert sorted(t.strip() for t in listed) == sorted(TABLES)
    m = json.loads((dataset / "_hubprof.json").read_text())
    assert m["version"] == 2
    for t in m["tables"]:
        assert t["files"] and all(re.fullmatch(rf"{t['name']}/part-\d{{5}}\.parquet", f["path"]) for f in t["files"])


def test_folder_idiom_reads_every_table(dataset, spark):
    import duckdb
    import pandas as pd
    import polars as pl

    want = hub_counts(dataset)
    con = duckdb.connect()
    for t in TABLES:
        folder = dataset / t
        names = dataset_names(t)
        got = {
            "pandas": pd.read_parquet(folder),
            "pyarrow": pq.read_table(folder).to_pandas(),
            "duckdb": con.sql(f"SELECT * FROM '{folder}/**/*.parquet'").df(),
            "polars": pl.read_parquet(f"{folder}/**/*.parquet").to_pandas(),
        }
        for tool, df in got.items():
            assert len(df) == want[t], f"{tool}: {t} has {len(df)} rows, the hub {want[t]}"
            assert list(df.columns) == names, f"{tool}: {t} columns {list(df.columns)}"
        sdf = spark.read.parquet(str(folder))
        assert sdf.count() == want[t] and sdf.columns == names, f"spark: {t}"
        if want[t]:  # the same values in every tool (keys sorted, NULLs equal)
            key = names[0]
            ref = got["pyarrow"].sort_values(key).reset_index(drop=True)
            for tool in ("pandas", "duckdb", "polars"):
                other = got[tool].sort_values(key).reset_index(drop=True)
                for c in names:
                    a, b = ref[c].tolist(), other[c].tolist()
                    assert [None if pd.isna(x) else x for x in a] == [None if pd.isna(x) else x for x in b], (
                        f"{tool}: {t}.{c} differs")


def test_root_is_not_a_table(dataset, spark):
    """The folder idiom on the root would mix tables: the root's README.txt makes pyarrow, pandas, polars and
    Spark stop with an error naming it (DuckDB reads only *.parquet files: documented in parquet.md)."""
    import pandas as pd
    import polars as pl

    for read in (pq.read_table, pd.read_parquet, pl.read_parquet, lambda p: spark.read.parquet(str(p)).count()):
        with pytest.raises(Exception, match="README.txt"):
            read(dataset)


# ---- schema -----------------------------------------------------------------------------------------
def test_schema_nulls_signed_booleans_units(dataset):
    proc = pq.read_table(dataset / "process")
    assert proc.schema.field("rank").type == pa.int64() and proc.column("rank").null_count == proc.num_rows
    assert proc.column("end_ns").null_count == 0  # every process ended
    d = pq.read_table(dataset / "dispatch")
    assert "dispatch_id" not in d.column_names and "dispatch_seq" in d.column_names
    for c in ("id", "process_id", "kernel_id", "dispatch_seq"):
        assert d.schema.field(c).type == pa.int64()
    cv = pq.ParquetFile(next((dataset / "counter_value").glob("*.parquet")))
    assert cv.schema_arrow.field("imputed").type == pa.bool_()
    meta = json.loads(cv.metadata.metadata[b"hubprof.columns"])
    assert meta["dispatch_id"]["description"].startswith("dispatch.id")
    dm = json.loads(pq.ParquetFile(next((dataset / "dispatch").glob("*.parquet"))).metadata.metadata[b"hubprof.columns"])
    assert dm["start_ns"]["unit"] == "ns" and dm["dispatch_seq"]["hub_name"] == "dispatch_id"
    # the join everyone writes first is now the right one: every value joins its dispatch row
    import duckdb

    n = duckdb.sql(f"SELECT count(*) FROM '{dataset}/counter_value/*.parquet' v "
                   f"JOIN '{dataset}/dispatch/*.parquet' d ON v.dispatch_id = d.id").fetchall()[0][0]
    assert n == hub_counts(dataset)["counter_value"]


def test_python_dataframes_follow_the_dataset(dataset):
    import pandas as pd

    with hubprof.open(dataset) as s:
        p = s.table("process", dataset=True)
        d = s.table("dispatch", dataset=True)
        v = s.table("counter_value", dataset=True)
    assert str(p["rank"].dtype) == "Int64" and p["rank"].isna().all()
    assert "dispatch_seq" in d.columns and str(d["id"].dtype) == "Int64"
    assert str(v["imputed"].dtype) == "boolean"
    ref = pd.read_parquet(dataset / "dispatch", dtype_backend="numpy_nullable")
    assert list(d.columns) == list(ref.columns)
    assert d.sort_values("id").reset_index(drop=True).astype(str).equals(
        ref.sort_values("id").reset_index(drop=True).astype(str))


# ---- the documented joins, run from the doc --------------------------------------------------------
def doc_examples() -> dict[str, str]:
    """Code blocks of parquet.md that follow a line <!-- example: NAME -->."""
    text = DOC.read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r"<!-- example: (\w+) -->\s*```\w*\n(.*?)```", text, re.S)}


@pytest.mark.parametrize("tool", ["duckdb", "pandas", "polars", "spark"])
def test_documented_top_kernels_equal_analyze(dataset, spark, tool):
    code = doc_examples()[tool]
    env = {"STORE": str(dataset), "spark": spark}
    exec(compile(code, f"{DOC.name}:{tool}", "exec"), env)  # noqa: S102 (the doc's own example)
    top = env["top"]
    if tool == "polars":
        top = top.to_pandas()
    elif tool == "spark":
        top = top.toPandas()
    assert as_rows(top) == top_of_analyze(dataset)


# ---- examples/dataset/top_kernels.py: per process, DuckDB and Spark ---------------------------------
@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_example_top_kernels_per_process(dataset, logs, engine):
    out = run(sys.executable, EXAMPLE, "--engine", engine, dataset).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    for log in logs:  # each process's rows equal `hubprof analyze` of its own log
        with hubprof.open(log) as s:
            pid = int(s.table("process")["pid"].iloc[0])
        got = sorted((r["device"], r["kernel"], r["calls"], r["total_ns"]) for r in rows if r["pid"] == pid)
        assert got and got == top_of_analyze(log), f"process {pid}"


# ---- the old flat layout (store version 1) still reads ----------------------------------------------
def write_flat_store(src: Path, out: Path) -> None:
    """A store as hubprof wrote it before the dataset layout: <table>.parquet files beside a version 1
    manifest, hub column names (dispatch.dispatch_id), no NULLs, unsigned ids and flags."""
    out.mkdir()
    tables = []
    for t in TABLES:
        desc = hubprof.describe(t)
        tab = pq.read_table(src / t)
        cols, fields = [], []
        for c in desc.columns:
            a = tab.column(c.dataset_name)
            null = c.null_value if c.type_name != "str" else ""
            if c.type_name == "str":
                a = a.fill_null("")
            else:
                a = a.cast(pa.int64()).fill_null(null)
                a = a.cast({"u32": pa.uint32(), "i32": pa.int32(), "u64": pa.uint64(), "i64": pa.int64(),
                            "f64": pa.float64()}[c.type_name], safe=False)
            cols.append(a)
            fields.append(pa.field(c.name, a.type, nullable=False))
        flat = pa.Table.from_arrays(cols, schema=pa.schema(fields))
        pq.write_table(flat, out / f"{t}.parquet", compression="zstd")
        tables.append({"name": t, "files": [{"path": f"{t}.parquet", "rows": flat.num_rows}]})
    (out / "_hubprof.json").write_text(json.dumps({"format": "hubprof-parquet", "version": 1,
                                                   "schema_version": "1", "tables": tables}))


def test_flat_store_of_version_1_reads(dataset, tmp_path):
    old = tmp_path / "old.parquet"
    write_flat_store(dataset, old)
    assert hub_counts(old) == hub_counts(dataset)
    assert top_of_analyze(old) == top_of_analyze(dataset)
    with hubprof.open(old) as a, hubprof.open(dataset) as b:
        for t in TABLES:
            assert a.table(t).equals(b.table(t)), t


# ---- bad input ---------------------------------------------------------------------------------------
def test_foreign_parquet_file_is_named(dataset, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(dataset, bare)
    (bare / "_hubprof.json").unlink()
    assert hub_counts(bare) == hub_counts(dataset)  # a dataset without its manifest reads by its folders
    shutil.copy(next((bare / "node").glob("*.parquet")), bare / "stray.parquet")
    p = run(need(HUBPROF), "info", bare, check=False)
    assert p.returncode != 0 and "stray.parquet" in p.stderr, p.stderr


# ---- Spark writes tables back; hubprof reads them equal ---------------------------------------------
def spark_round_trip(spark, dataset: Path, out: Path, **options) -> None:
    for t in TABLES:
        w = spark.read.parquet(str(dataset / t)).coalesce(1).write.mode("overwrite")
        for k, v in options.items():
            w = w.option(k, v)
        w.parquet(str(out / t))


def test_spark_round_trip_zstd(dataset, spark, tmp_path):
    out = tmp_path / "spark-zstd"
    spark_round_trip(spark, dataset, out, compression="zstd")
    assert hub_counts(out) == hub_counts(dataset)
    assert top_of_analyze(out) == top_of_analyze(dataset)


def test_spark_round_trip_defaults(dataset, spark, tmp_path):
    out = tmp_path / "spark-default"
    spark_round_trip(spark, dataset, out)
    assert hub_counts(out) == hub_counts(dataset)
    assert top_of_analyze(out) == top_of_analyze(dataset)


def test_doc_columns_match_the_files(dataset):
    """docs/formats/parquet.md's table of columns (`?` = nullable) is what the files hold (issue 28: it lacked
    dispatch.cold and region_id)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats" / "parquet.md").read_text()
    rows = [r for r in re.findall(r"^\| `(\w+)` \| ([^|]*) \|", doc, re.M) if r[0] in TABLES]
    assert len(rows) >= 13
    checked = 0
    for table, cols in rows:
        files = sorted((dataset / table).rglob("*.parquet"))
        if not files:
            continue
        want = [c.strip() for c in cols.split(",")]
        got = [f.name + ("?" if f.nullable else "") for f in pq.read_schema(files[0])]
        assert got == want, (table, got, want)
        checked += 1
    assert checked >= 10
