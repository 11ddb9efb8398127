#!/usr/bin/env python3
"""Checks a hubprof Parquet store with the reference readers: pyarrow, DuckDB, polars and Spark (local).

Every table file must read with the row count, column types and values that the writer says it wrote
(an EXPECT.json with per-column checksums and sample rows, as written by `test_parquet --sample`).
With --writer, also rewrites the store with pyarrow (nullable columns, dictionary fallback, no compression,
small pages) and checks that the hub reads those files back to the same figures (`test_parquet --checksums`).

Usage:
  check_readers.py --writer build/tests/test_parquet        generate a sample store and check everything
  check_readers.py STORE EXPECT.json [--writer PROG]        check an existing store
Options: --no-spark (skip Spark), --require-spark (fail instead of SKIP when Spark cannot start), --keep.
Ends with "check_readers: N passed, M failed" (exit 1 when M > 0).
"""
# SPDX-License-Identifier: MIT
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

PASSED = 0
FAILED = 0


def check(cond, what):
    global PASSED, FAILED
    if cond:
        PASSED += 1
    else:
        FAILED += 1
        print(f"FAIL {what}", flush=True)
    return cond


def say(line):
    print(line, flush=True)


# ---- expectations and checksums -------------------------------------------------------------------
M64 = (1 << 64) - 1


def fnv1a(b):
    h = 0xCBF29CE484222325
    for c in b:
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def colsum(values, typ):
    """The figures of test_parquet.c's colsum for a column given as a numpy array or a list of str."""
    n = len(values)
    w = np.arange(1, n + 1, dtype=np.uint64)
    out = {"nan": 0, "zero": 0}
    if typ == "str":
        enc = [s.encode() for s in values]
        bits = np.array([fnv1a(b) for b in enc], dtype=np.uint64) if n else np.zeros(0, np.uint64)
        out["sum"] = sum(len(b) for b in enc)
    elif typ == "f64":
        a = np.asarray(values, dtype=np.float64)
        bits = a.view(np.uint64)
        out["nan"] = int(np.isnan(a).sum())
        out["zero"] = int((a == 0).sum())
        out["sum"] = 0
    else:
        signed = typ in ("i32", "i64")
        a = np.asarray(values).astype(np.int64 if signed else np.uint64)
        bits = a.view(np.uint64)
        out["sum"] = int(a.astype(object).sum()) if n else 0
    with np.errstate(over="ignore"):
        out["wsum"] = int((bits * w).sum(dtype=np.uint64)) if n else 0
    return out


def arrow_column_values(col, typ):
    if typ == "str":
        return col.to_pylist()
    return col.to_numpy()


def compare_table(reader, name, exp, columns):
    """columns: {name: (values, typ)} in any order; exp: expectation of the table."""
    ok = True
    for cname, cexp in exp["columns"].items():
        if cname not in columns:
            ok &= check(False, f"{reader}: {name}.{cname} missing")
            continue
        values, typ = columns[cname]
        got = colsum(values, cexp["type"])
        for k in ("wsum", "sum", "nan", "zero"):
            ok &= check(got[k] == cexp[k], f"{reader}: {name}.{cname} {k} {got[k]} != {cexp[k]}")
        for s in exp["samples"]:
            want = s["values"][cname]
            v = values[s["row"]]
            if cexp["type"] == "f64":
                v = "0x%016x" % int(np.float64(v).view(np.uint64))
            elif cexp["type"] != "str":
                v = int(v)
            ok &= check(v == want, f"{reader}: {name} row {s['row']} {cname}: {v!r} != {want!r}")
    return ok


def manifest_files(store):
    with open(os.path.join(store, "_hubprof.json")) as f:
        m = json.load(f)
    check(m.get("format") == "hubprof-parquet", "manifest format")
    check(m.get("version") == 2, "manifest: store version 2 (a folder per table)")
    for t in m["tables"]:
        for fj in t["files"]:
            check(fj["path"].startswith(t["name"] + "/part-"), f"manifest: {fj['path']} lies in {t['name']}/")
    check(not [f for f in os.listdir(store) if f.endswith(".parquet")], "the store's root holds no .parquet file")
    return {t["name"]: [os.path.join(store, fj["path"]) for fj in t["files"]] for t in m["tables"]}, m


# ---- the dataset schema: names, NULLs, types -------------------------------------------------------
def dataset_columns(path):
    """{dataset name: {"hub_name", "null", "unit", "description"}} from a file's hubprof.columns metadata."""
    import pyarrow.parquet as pq

    md = pq.ParquetFile(path).metadata.metadata or {}
    return json.loads(md[b"hubprof.columns"])


# The type a reader shows for a hub column as the dataset stores it (signed ids, BOOLEAN flags).
def dataset_type(typ, boolean):
    return "bool" if boolean else {"u32": "i32", "u64": "i64"}.get(typ, typ)


ARROW_TYPES = {"i32": "int32", "i64": "int64", "f64": "double", "str": "string", "bool": "bool"}
DUCK_TYPES = {"i32": "INTEGER", "i64": "BIGINT", "f64": "DOUBLE", "str": "VARCHAR", "bool": "BOOLEAN"}
POLARS_TYPES = {"i32": "Int32", "i64": "Int64", "f64": "Float64", "str": "String", "bool": "Boolean"}
SPARK_TYPES = {"i32": "int", "i64": "bigint", "f64": "double", "str": "string", "bool": "boolean"}


def hub_values(col, typ, null):
    """An Arrow column of the dataset as the hub holds it: NULL back to its hub value, bits as the hub type."""
    if typ == "str":
        return ["" if v is None else v for v in col.to_pylist()]
    if null is not None:
        import pyarrow.compute as pc
        import pyarrow as pa

        col = pc.fill_null(col, pa.scalar(null, col.type))
    a = col.to_numpy(zero_copy_only=False)
    if a.dtype == np.bool_:
        a = a.astype(np.uint32)
    if typ == "u32":
        a = a.astype(np.int32).view(np.uint32)
    elif typ == "u64":
        a = a.astype(np.int64).view(np.uint64)
    return a


def hub_columns(t, exp, meta):
    """{hub column: (values, typ)} of an Arrow table read from the dataset."""
    out = {}
    for dname in t.column_names:
        m = meta.get(dname)
        if not m:
            continue
        typ = exp["columns"][m["hub_name"]]["type"]
        out[m["hub_name"]] = (hub_values(t.column(dname), typ, m["null"]), typ)
    return out


def expected_types(exp, meta):
    """[(dataset name, dataset type, nullable)] of a table."""
    by_hub = {m["hub_name"]: (d, m) for d, m in meta.items()}
    out = []
    for cname, cexp in exp["columns"].items():
        d, m = by_hub[cname]
        out.append((d, dataset_type(cexp["type"], m["flag"]), m["null"] is not None))
    return out


# ---- readers --------------------------------------------------------------------------------------
def check_pyarrow(files, expect):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t0 = time.time()
    for name, exp in expect["tables"].items():
        tables = []
        meta = dataset_columns(files[name][0])
        for path in files[name]:
            pf = pq.ParquetFile(path)
            md = pf.metadata
            sch = pf.schema_arrow
            for d, typ, nullable in expected_types(exp, meta):
                f = sch.field(d)
                check(str(f.type) == ARROW_TYPES[typ], f"pyarrow: {name}.{d} type {f.type}, want {ARROW_TYPES[typ]}")
                check(f.nullable == nullable, f"pyarrow: {name}.{d} nullable {f.nullable}")
            for rg in range(md.num_row_groups):
                rgm = md.row_group(rg)
                data = pf.read_row_group(rg)
                for j in range(rgm.num_columns):
                    cm = rgm.column(j)
                    cname = cm.path_in_schema
                    check(cm.compression == "ZSTD", f"pyarrow: {path} {cname} compression {cm.compression}")
                    check(set(cm.encodings) <= {"PLAIN", "RLE", "RLE_DICTIONARY"}, f"pyarrow: {cname} encodings {cm.encodings}")
                    st = cm.statistics
                    col = data.column(cname)
                    check(st is not None and st.null_count == col.null_count, f"pyarrow: {path} {cname} null_count")
                    col = col.drop_null()
                    if pa.types.is_floating(col.type):
                        a = col.to_numpy()
                        a = a[~np.isnan(a)]
                        if len(a) and st.has_min_max:
                            check(st.min == a.min() and st.max == a.max(), f"pyarrow: {path} {cname} min/max")
                    elif pa.types.is_string(col.type):
                        if st.has_min_max:
                            vals = [s.encode() for s in col.to_pylist()]
                            check(st.min.encode() == min(vals) and st.max.encode() == max(vals),
                                  f"pyarrow: {path} {cname} string min/max")
                    elif len(col):
                        mm = pc.min_max(col)
                        check(st.has_min_max and st.min == mm["min"].as_py() and st.max == mm["max"].as_py(),
                              f"pyarrow: {path} rg {rg} {cname} min/max {st.min}..{st.max} vs {mm}")
            tables.append(pf.read())
        t = pa.concat_tables(tables) if tables else None
        n = t.num_rows if t is not None else 0
        check(n == exp["rows"], f"pyarrow: {name} rows {n} != {exp['rows']}")
        if t is not None:
            compare_table("pyarrow", name, exp, hub_columns(t, exp, meta))
    say(f"ok   pyarrow read every table ({time.time() - t0:.1f}s)")


def check_duckdb(files, expect):
    import duckdb

    t0 = time.time()
    con = duckdb.connect()
    for name, exp in expect["tables"].items():
        meta = dataset_columns(files[name][0])
        lst = "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in files[name]) + "]"
        n = con.execute(f"SELECT count(*) FROM read_parquet({lst})").fetchall()[0][0]
        check(n == exp["rows"], f"duckdb: {name} rows {n} != {exp['rows']}")
        types = dict((r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet({lst})").fetchall())
        for d, typ, _ in expected_types(exp, meta):
            check(types.get(d) == DUCK_TYPES[typ], f"duckdb: {name}.{d} type {types.get(d)}")
        rel = con.sql(f"SELECT * FROM read_parquet({lst})")
        for meth in ("to_arrow_table", "fetch_arrow_table", "arrow"):  # the name changed across DuckDB versions
            if hasattr(rel, meth):
                t = getattr(rel, meth)()
                break
        if hasattr(t, "read_all"):
            t = t.read_all()
        compare_table("duckdb", name, exp, hub_columns(t, exp, meta))
        # integer sums in SQL, exactly (NULL as its hub value, signed bits as the hub's unsigned type)
        for d, m in meta.items():
            cexp = exp["columns"][m["hub_name"]]
            if cexp["type"] in ("u32", "i32", "u64", "i64") and exp["rows"]:
                v = f'coalesce("{d}"::HUGEINT, {m["null"] if m["null"] is not None else 0})'
                if cexp["type"] in ("u32", "u64"):
                    bits = 32 if cexp["type"] == "u32" else 64
                    v = f"(CASE WHEN {v} < 0 THEN {v} + {1 << bits}::HUGEINT ELSE {v} END)"
                s = con.execute(f"SELECT sum({v}) FROM read_parquet({lst})").fetchall()[0][0]
                check(int(s) == cexp["sum"], f"duckdb: {name}.{d} SQL sum {s} != {cexp['sum']}")
    say(f"ok   duckdb read every table ({time.time() - t0:.1f}s)")


def check_polars(files, expect):
    import polars as pl

    t0 = time.time()
    for name, exp in expect["tables"].items():
        meta = dataset_columns(files[name][0])
        df = pl.read_parquet(files[name])
        check(df.height == exp["rows"], f"polars: {name} rows {df.height} != {exp['rows']}")
        for d, typ, _ in expected_types(exp, meta):
            check(str(df.schema[d]) == POLARS_TYPES[typ], f"polars: {name}.{d} type {df.schema[d]}")
        compare_table("polars", name, exp, hub_columns(df.to_arrow(), exp, meta))
    say(f"ok   polars read every table ({time.time() - t0:.1f}s)")


def check_spark(files, expect, require):
    t0 = time.time()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    try:
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        spark = (SparkSession.builder.master("local[2]").appName("hubprof-check")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.memory", "1g")
                 .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
    except Exception as e:  # no Java, no pyspark, …
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        if require:
            check(False, f"spark: cannot start: {msg}")
        else:
            say(f"SKIP spark: cannot start: {msg}")
        return
    try:
        for name, exp in expect["tables"].items():
            meta = dataset_columns(files[name][0])
            df = spark.read.parquet(*files[name])
            n = df.count()
            check(n == exp["rows"], f"spark: {name} rows {n} != {exp['rows']}")
            types = dict(df.dtypes)
            for d, typ, _ in expected_types(exp, meta):
                check(types.get(d) == SPARK_TYPES[typ], f"spark: {name}.{d} type {types.get(d)}")
            aggs = []
            for d, m in meta.items():
                cexp = exp["columns"][m["hub_name"]]
                c = F.col(d)
                if m["null"] is not None and cexp["type"] != "str":
                    c = F.coalesce(c, F.lit(m["null"]))
                if cexp["type"] == "str":
                    aggs.append(F.sum(F.coalesce(F.octet_length(c), F.lit(0))).alias(d))
                elif cexp["type"] == "f64":
                    aggs.append(F.sum(F.isnan(c).cast("long")).alias(d + "__nan"))
                    aggs.append(F.sum((c == 0).cast("long")).alias(d + "__zero"))
                else:
                    v = c.cast("decimal(38,0)")
                    if cexp["type"] in ("u32", "u64"):
                        wrap = F.lit(str(1 << (32 if cexp["type"] == "u32" else 64))).cast("decimal(38,0)")
                        v = F.when(v < 0, v + wrap).otherwise(v)
                    aggs.append(F.sum(v).alias(d))
            if not exp["rows"]:
                continue
            row = df.agg(*aggs).collect()[0].asDict()
            for d, m in meta.items():
                cexp = exp["columns"][m["hub_name"]]
                if cexp["type"] == "f64":
                    check(int(row[d + "__nan"]) == cexp["nan"], f"spark: {name}.{d} NaNs")
                    check(int(row[d + "__zero"]) == cexp["zero"], f"spark: {name}.{d} zeros")
                else:
                    check(int(row[d]) == cexp["sum"], f"spark: {name}.{d} sum {row[d]} != {cexp['sum']}")
        # a query across tables, as an analysis would run it
        d = spark.read.parquet(*files["dispatch"])
        top = d.groupBy("kernel_id").agg(F.count("*").alias("n")).orderBy("kernel_id").collect()
        check(sum(r["n"] for r in top) == expect["tables"]["dispatch"]["rows"], "spark: group by kernel_id")
        say(f"ok   spark read every table ({time.time() - t0:.1f}s)")
    finally:
        spark.stop()


# ---- pyarrow-written stores read back by the hub ----------------------------------------------------
def rewrite_with_pyarrow(store, out, files, variant):
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(out)
    tables = []
    for name, paths in files.items():
        t = pa.concat_tables([pq.read_table(p) for p in paths]) if paths else None
        os.makedirs(os.path.join(out, name))
        fname = f"{name}/part-00000.parquet"
        path = os.path.join(out, fname)
        if variant == "nullable-zstd-dict":
            # every column nullable (OPTIONAL, definition levels), dictionary with fallback, two files per table
            t = t.cast(pa.schema([f.with_nullable(True) for f in t.schema]))
            half = t.num_rows // 2
            parts = [(f"{name}/part-00000.parquet", t.slice(0, half)), (f"{name}/part-00001.parquet", t.slice(half))]
            entry = []
            for fn, part in parts:
                pq.write_table(part, os.path.join(out, fn), compression="zstd", use_dictionary=True,
                               dictionary_pagesize_limit=4096, data_page_version="1.0", row_group_size=40000)
                entry.append({"path": fn, "rows": part.num_rows, "bytes": os.path.getsize(os.path.join(out, fn))})
            tables.append({"name": name, "files": entry})
            continue
        pq.write_table(t, path, compression="none", use_dictionary=False, data_page_size=16384,
                       data_page_version="1.0", row_group_size=100000, write_statistics=False)
        tables.append({"name": name, "files": [{"path": fname, "rows": t.num_rows, "bytes": os.path.getsize(path)}]})
    if variant == "no-manifest":
        return  # a bare dataset: the hub finds each table's files in its folder
    with open(os.path.join(out, "_hubprof.json"), "w") as f:
        json.dump({"format": "hubprof-parquet", "version": 2, "tables": tables}, f)


def check_hub_reads(writer, store, expect, label):
    r = subprocess.run([writer, "--checksums", store], capture_output=True, text=True)
    if not check(r.returncode == 0, f"hub reading {label}: exit {r.returncode}: {r.stderr.strip()}"):
        return
    got = json.loads(r.stdout)
    for name, exp in expect["tables"].items():
        g = got["tables"][name]
        check(g["rows"] == exp["rows"], f"hub reading {label}: {name} rows {g['rows']} != {exp['rows']}")
        check(g["columns"] == exp["columns"], f"hub reading {label}: {name} checksums differ")
        check(g["samples"] == exp["samples"], f"hub reading {label}: {name} samples differ")
    say(f"ok   hub read the {label} store")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("store", nargs="?")
    ap.add_argument("expect", nargs="?")
    ap.add_argument("--writer", help="test_parquet binary (writes the sample, reads rewritten stores)")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--require-spark", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="hubprof-check-readers-")
    try:
        store, expect_path = a.store, a.expect
        if not store:
            if not a.writer:
                ap.error("give STORE EXPECT.json, or --writer to make a sample")
            store, expect_path = os.path.join(tmp, "sample"), os.path.join(tmp, "expect.json")
            t0 = time.time()
            r = subprocess.run([a.writer, "--sample", store, expect_path])
            if not check(r.returncode == 0, f"writing the sample store (exit {r.returncode})"):
                return 1
            say(f"ok   wrote the sample store ({time.time() - t0:.1f}s)")
        with open(expect_path) as f:
            expect = json.load(f)
        files, _ = manifest_files(store)
        for name in expect["tables"]:
            check(name in files, f"manifest lists {name}")
        check(len(files["dispatch"]) > 1 or expect["tables"]["dispatch"]["rows"] < 200000,
              "the sample's dispatch table spans several files")
        check_pyarrow(files, expect)
        check_duckdb(files, expect)
        check_polars(files, expect)
        if not a.no_spark:
            check_spark(files, expect, a.require_spark)
        if a.writer:
            check_hub_reads(a.writer, store, expect, "hubprof-written")
            for variant in ("nullable-zstd-dict", "plain-uncompressed", "no-manifest"):
                out = os.path.join(tmp, variant)
                rewrite_with_pyarrow(store, out, files, variant)
                check_hub_reads(a.writer, out, expect, f"pyarrow-written ({variant})")
    finally:
        if a.keep:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"check_readers: {PASSED} passed, {FAILED} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
