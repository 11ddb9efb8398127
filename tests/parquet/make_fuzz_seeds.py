#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_parquet.c: small table files as hubprof writes them (ZSTD,
dictionary and plain pages, several row groups) and as pyarrow writes them uncompressed (dictionary with
fallback; nullable plain), and in the forms other tools write (SNAPPY, GZIP, data page v2 with NULLs,
DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, INT32, TIMESTAMP and
INT96 for 64-bit columns), so the fuzzer starts from valid files and reaches every page decoder.
Each seed is one byte (the table's number, | 0x80: the manifest states the size) and the file.

Usage: make_fuzz_seeds.py build/tests/test_parquet tests/fuzz/seeds/parquet
"""
# SPDX-License-Identifier: MIT
import os
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TABLES = ["node", "process", "thread", "agent", "queue", "code_object", "kernel_symbol", "dispatch",
          "counter_info", "counter_value", "region", "metadata"]


def seed(out, name, variant, data):
    with open(os.path.join(out, f"{name}-{variant}"), "wb") as f:
        f.write(bytes([TABLES.index(name) | 0x80]) + data)


def main():
    writer, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s")
        subprocess.run([writer, "--sample", store, os.path.join(tmp, "e.json"), "40"], check=True)
        for name in TABLES:
            path = os.path.join(store, f"{name}.parquet")
            if not os.path.exists(path):
                path = os.path.join(store, f"{name}-00001.parquet")
            with open(path, "rb") as f:
                seed(out, name, "hub", f.read())
            if name not in ("dispatch", "counter_value", "kernel_symbol", "metadata", "region"):
                continue
            t = pq.read_table(path)
            p2 = os.path.join(tmp, "x.parquet")
            pq.write_table(t, p2, compression="none", use_dictionary=True, dictionary_pagesize_limit=64,
                           data_page_size=256, row_group_size=25, data_page_version="1.0")
            with open(p2, "rb") as f:
                seed(out, name, "arrow-dict", f.read())
            t = t.cast(pa.schema([f.with_nullable(True) for f in t.schema]))
            pq.write_table(t, p2, compression="none", use_dictionary=False, data_page_version="1.0",
                           write_statistics=False, store_schema=False)
            with open(p2, "rb") as f:
                seed(out, name, "arrow-plain", f.read())
            if name not in ("dispatch", "kernel_symbol", "counter_value"):
                continue
            # the decoders of what other tools write: codecs, data page v2, DELTA_*, BYTE_STREAM_SPLIT,
            # NULLs, INT32 / TIMESTAMP / INT96 for 64-bit columns
            with_nulls = pa.Table.from_arrays(
                [pc.if_else(pc.equal(pc.modulo(pa.array(range(len(c))), 3), 0), pa.nulls(len(c), c.type), c)
                 for c in t.columns], schema=t.schema)
            ints = {f.name: "DELTA_BINARY_PACKED" for f in t.schema if pa.types.is_integer(f.type)}
            strs = [f.name for f in t.schema if pa.types.is_string(f.type)]
            nums = {f.name: "BYTE_STREAM_SPLIT" for f in t.schema
                    if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)}
            variants = [
                ("arrow-v2-snappy", with_nulls, dict(compression="snappy", data_page_version="2.0",
                                                     data_page_size=300)),
                ("arrow-gzip", t, dict(compression="gzip", row_group_size=20)),
                ("arrow-delta", with_nulls, dict(compression="none", use_dictionary=False, data_page_version="2.0",
                                                 column_encoding={**ints, **{n: "DELTA_BYTE_ARRAY" for n in strs}},
                                                 data_page_size=300)),
                ("arrow-dlba", t, dict(compression="none", use_dictionary=False,
                                       column_encoding={**ints, **{n: "DELTA_LENGTH_BYTE_ARRAY" for n in strs}})),
                ("arrow-bss", t, dict(compression="none", use_dictionary=False, column_encoding=nums)),
            ]
            narrow = []
            for f, c in zip(t.schema, t.columns):
                if f.name.endswith("_ns") and pa.types.is_integer(f.type):
                    c = c.cast(pa.int64()).cast(pa.timestamp("us" if len(narrow) % 2 else "ns"))
                elif pa.types.is_integer(f.type) and (pc.max(c).as_py() or 0) < 2**31 and \
                        (pc.min(c).as_py() or 0) >= -2**31:
                    c = c.cast(pa.int32())
                narrow.append(c)
            narrow = pa.Table.from_arrays(narrow, names=t.column_names)
            variants.append(("arrow-types", narrow, dict(compression="none")))
            variants.append(("arrow-int96", narrow, dict(compression="none", use_deprecated_int96_timestamps=True)))
            for variant, tab, kw in variants:
                pq.write_table(tab, p2, **kw)
                with open(p2, "rb") as f:
                    seed(out, name, variant, f.read())


if __name__ == "__main__":
    main()
