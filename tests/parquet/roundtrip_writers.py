#!/usr/bin/env python3
"""Round trip of a real hubprof Parquet store through the ecosystem's Parquet writers.

Traces and profiles examples/ocl programs into a Parquet store, rewrites EVERY table file with another writer
(pyarrow: default, data page v2, no dictionary, DELTA_*, BYTE_STREAM_SPLIT, each codec; DuckDB, polars and
pandas defaults; NULLs; INT96, TIMESTAMP, INT32 columns) and checks that hubprof reads it back equal: every
table through Python's Store, `hubprof info --json` rows and `hubprof analyze` output. An LZ4 file must be
one error naming file, column and codec, with `analyze` exiting 1.

Usage: roundtrip_writers.py BUILD_DIR [--reader-cli HUBPROF] [--keep]
(BUILD_DIR: hubprof, libhubprof.so, examples/ocl; --reader-cli: the hubprof for info/analyze, e.g. ASan's).
Ends with "roundtrip_writers: N passed, M failed" (exit 1 when M > 0).
"""
# SPDX-License-Identifier: MIT
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_readers as counts  # noqa: E402 (its check() and pass/fail counts)

check = counts.check


def table_files(store):
    with open(os.path.join(store, "_hubprof.json")) as f:
        m = json.load(f)
    return [(t["name"], os.path.join(store, fe["path"])) for t in m["tables"] for fe in t["files"]]


def forget_sizes(store):
    """A file rewritten by another tool has another size and footer: the manifest keeps only its rows."""
    p = os.path.join(store, "_hubprof.json")
    with open(p) as f:
        m = json.load(f)
    for t in m["tables"]:
        for fe in t["files"]:
            fe.pop("bytes", None)
            fe.pop("footer_crc32c", None)
    with open(p, "w") as f:
        json.dump(m, f, indent=1)


# ---- writers: each rewrites one file in place ----------------------------------------------------
def pyarrow_writer(**kw):
    def w(path, name):
        t = pq.read_table(path)
        pq.write_table(t, path + ".new", **kw)
        os.replace(path + ".new", path)
    return w


def encodings_writer(int_enc, str_enc, float_enc="BYTE_STREAM_SPLIT", **kw):
    def w(path, name):
        t = pq.read_table(path)
        enc = {}
        for f in t.schema:
            if pa.types.is_integer(f.type):
                enc[f.name] = int_enc
            elif pa.types.is_floating(f.type):
                enc[f.name] = float_enc
            elif pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
                enc[f.name] = str_enc
        pq.write_table(t, path + ".new", use_dictionary=False, column_encoding=enc, **kw)
        os.replace(path + ".new", path)
    return w


def duckdb_writer(path, name):
    import duckdb
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_parquet('{path}')) TO '{path}.new' (FORMAT parquet)")
    con.close()
    os.replace(path + ".new", path)


def polars_writer(path, name):
    import polars as pl
    pl.read_parquet(path).write_parquet(path + ".new")
    os.replace(path + ".new", path)


def pandas_writer(path, name):
    import pandas as pd
    pd.read_parquet(path).to_parquet(path + ".new")
    os.replace(path + ".new", path)


def nulls_writer(path, name):
    """Nullable columns: the data model's "unknown" (0, "", rank -1) written as NULL reads back the same."""
    t = pq.read_table(path)
    cols = []
    for f, col in zip(t.schema, t.columns):
        # the columns whose unknown is -1 (MINUS1 in src/hub/columns.h); 0 is a value there
        minus1 = {"rank", "world_size", "local_rank", "exit_code", "exit_signal"}
        unknown = -1 if f.name in minus1 else ("" if pa.types.is_string(f.type) else 0)
        if not (pa.types.is_integer(f.type) or pa.types.is_string(f.type)):
            unknown = None  # floats, booleans, timestamps: kept as they are
        if unknown is not None and len(col):
            col = pc.if_else(pc.equal(col, pa.scalar(unknown, f.type)), pa.nulls(len(col), f.type), col)
        cols.append(col)
    schema = pa.schema([pa.field(f.name, f.type, nullable=True) for f in t.schema])
    pq.write_table(pa.Table.from_arrays(cols, schema=schema), path + ".new", compression="snappy")
    os.replace(path + ".new", path)


def types_writer(int96):
    """Times as TIMESTAMP(ns) (or INT96, as Spark writes them), small integers as INT32, booleans."""
    def w(path, name):
        t = pq.read_table(path)
        cols, fields = [], []
        for f, col in zip(t.schema, t.columns):
            if f.name.endswith("_ns") and pa.types.is_integer(f.type):
                col = col.cast(pa.int64()).cast(pa.timestamp("ns"))
            elif pa.types.is_integer(f.type) and (pc.max(col).as_py() or 0) < 2**31 and \
                    (pc.min(col).as_py() or 0) >= -2**31:
                col = col.cast(pa.int32())
            cols.append(col)
            fields.append(pa.field(f.name, col.type))
        pq.write_table(pa.Table.from_arrays(cols, schema=pa.schema(fields)), path + ".new",
                       use_deprecated_int96_timestamps=int96, compression="gzip")
        os.replace(path + ".new", path)
    return w


# (label, writer, what the rewritten files must show: codecs, encodings, physical types, "nulls")
VARIANTS = [
    ("pyarrow default", pyarrow_writer(), {"SNAPPY", "RLE_DICTIONARY"}),
    ("pyarrow data page v2", pyarrow_writer(data_page_version="2.0"), {"SNAPPY"}),
    ("pyarrow no dictionary", pyarrow_writer(use_dictionary=False), {"PLAIN"}),
    ("pyarrow snappy", pyarrow_writer(compression="snappy"), {"SNAPPY"}),
    ("pyarrow zstd", pyarrow_writer(compression="zstd"), {"ZSTD"}),
    ("pyarrow gzip", pyarrow_writer(compression="gzip"), {"GZIP"}),
    ("pyarrow none", pyarrow_writer(compression="none"), {"UNCOMPRESSED"}),
    ("pyarrow v2 snappy small pages", pyarrow_writer(data_page_version="2.0", data_page_size=512), {"SNAPPY"}),
    ("DELTA_BINARY_PACKED + DELTA_LENGTH_BYTE_ARRAY",
     encodings_writer("DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY"),
     {"DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "BYTE_STREAM_SPLIT"}),
    ("DELTA_BINARY_PACKED + DELTA_BYTE_ARRAY v2",
     encodings_writer("DELTA_BINARY_PACKED", "DELTA_BYTE_ARRAY", data_page_version="2.0"),
     {"DELTA_BINARY_PACKED", "DELTA_BYTE_ARRAY"}),
    ("BYTE_STREAM_SPLIT", encodings_writer("BYTE_STREAM_SPLIT", "PLAIN", data_page_size=700),
     {"BYTE_STREAM_SPLIT"}),
    ("DuckDB COPY defaults", duckdb_writer, {"SNAPPY"}),
    ("polars write_parquet defaults", polars_writer, {"ZSTD"}),
    ("pandas to_parquet defaults", pandas_writer, {"SNAPPY"}),
    ("NULL for unknown", nulls_writer, {"nulls"}),
    ("TIMESTAMP(ns) and INT32", types_writer(False), {"INT32", "GZIP"}),
    ("INT96 timestamps", types_writer(True), {"INT96"}),
]


def file_traits(store):
    """Codecs, encodings and physical types of every column chunk, and "nulls" when one holds a NULL."""
    seen = set()
    for _, path in table_files(store):
        md = pq.ParquetFile(path).metadata
        for i in range(md.num_row_groups):
            for j in range(md.num_columns):
                c = md.row_group(i).column(j)
                seen.add(c.compression)
                seen.add(c.physical_type)
                seen.update(c.encodings)
                if c.statistics is not None and c.statistics.has_null_count and c.statistics.null_count:
                    seen.add("nulls")
    return seen


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    build = sys.argv[1]
    hp = os.path.abspath(os.path.join(build, "hubprof"))
    reader = os.path.abspath(sys.argv[sys.argv.index("--reader-cli") + 1]) if "--reader-cli" in sys.argv else hp
    os.environ["HUBPROF_LIB"] = os.path.abspath(os.path.join(build, "libhubprof.so"))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import hubprof

    if b"Device" not in subprocess.run(["clinfo", "-l"], capture_output=True).stdout:
        print("roundtrip_writers: skipped: no OpenCL device (install pocl-opencl-icd)")
        return
    tmp = tempfile.mkdtemp(prefix="hp-roundtrip-")
    try:
        ex = os.path.join(build, "examples", "ocl")
        a, b = os.path.join(tmp, "a.parquet"), os.path.join(tmp, "b.parquet")
        r1 = run([hp, "trace", "-q", "-F", "parquet", "-o", a, "--", os.path.join(ex, "vector_add")])
        r2 = run([hp, "profile", "-q", "-F", "parquet", "--counters", "task-clock,page-faults", "-o", b, "--",
                  os.path.join(ex, "regions")])
        if not check(r1.returncode == 0 and r2.returncode == 0, f"tracing the examples: {r1.stderr}{r2.stderr}"):
            return
        orig = os.path.join(tmp, "orig.parquet")
        r = run([hp, "merge", "-q", "-F", "parquet", "-o", orig, a, b])
        check(r.returncode == 0, f"merge: {r.stderr}")

        def snapshot(store):
            with hubprof.open(store) as s:
                dmg = s.damage
                tables = {t: s.table(t) for t in s.tables()}
            info = run([reader, "info", "--json", store])
            an = run([reader, "analyze", "--format", "csv", store])
            return dmg, tables, info, an

        dmg0, want, info0, an0 = snapshot(orig)
        check(dmg0 is None, "original store has no damage")
        rows0 = json.loads(info0.stdout)["rows"]
        check(all(rows0[t] > 0 for t in ("dispatch", "counter_value", "region", "kernel_symbol")),
              f"the original store fills the main tables: {rows0}")
        for label, writer, traits in VARIANTS:
            st = os.path.join(tmp, "v.parquet")
            shutil.rmtree(st, ignore_errors=True)
            shutil.copytree(orig, st)
            try:
                for name, path in table_files(st):
                    writer(path, name)
            except Exception as e:  # a writer that cannot run here is a failure, not a skip
                check(False, f"{label}: writing: {e!r}")
                continue
            forget_sizes(st)
            seen = file_traits(st)
            check(traits <= seen, f"{label}: the files lack {traits - seen} (they show {sorted(seen)})")
            dmg, got, info, an = snapshot(st)
            check(dmg is None, f"{label}: damage {dmg}")
            for t, df in want.items():
                g = got.get(t)
                same = g is not None and g.shape == df.shape and list(g.columns) == list(df.columns) and \
                    all(g[c].tolist() == df[c].tolist() for c in df.columns)
                check(same, f"{label}: table {t} differs:\n{df.head(3)}\n{None if g is None else g.head(3)}")
            check(info.returncode == 0 and json.loads(info.stdout)["rows"] == rows0,
                  f"{label}: info rows {info.stdout[:300]} {info.stderr}")
            check(an.returncode == 0 and an.stdout == an0.stdout, f"{label}: analyze differs: {an.stderr}\n"
                  f"{an.stdout[:400]}\n---\n{an0.stdout[:400]}")
            print(f"ok   {label}", flush=True)

        # a codec this build does not read: one error naming file, column and codec; analyze exits 1
        st = os.path.join(tmp, "lz4.parquet")
        shutil.copytree(orig, st)
        path = [p for n, p in table_files(st) if n == "dispatch"][0]
        pq.write_table(pq.read_table(path), path + ".new", compression="lz4")
        os.replace(path + ".new", path)
        forget_sizes(st)
        r = run([reader, "analyze", st])
        check(r.returncode == 1 and "dispatch" in r.stderr and "LZ4" in r.stderr and "column" in r.stderr,
              f"LZ4 store: analyze rc={r.returncode}: {r.stderr}")
        r = run([reader, "info", st])
        check(r.returncode == 1 and "LZ4" in r.stdout + r.stderr, f"LZ4 store: info rc={r.returncode}")
        print("ok   unsupported codec named", flush=True)
    finally:
        if "--keep" not in sys.argv:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"roundtrip_writers: {counts.PASSED} passed, {counts.FAILED} failed", flush=True)


if __name__ == "__main__":
    main()
    sys.exit(1 if counts.FAILED else 0)
