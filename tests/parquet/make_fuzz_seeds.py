#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_parquet.c: small table files as hubprof writes them (ZSTD,
dictionary and plain pages, several row groups) and as pyarrow writes them uncompressed (dictionary with
fallback; nullable plain), so the fuzzer starts from valid files and reaches the page decoders.
Each seed is one byte (the table's number, | 0x80: the manifest states the size) and the file.

Usage: make_fuzz_seeds.py build/tests/test_parquet tests/fuzz/seeds/parquet
"""
# SPDX-License-Identifier: MIT
import os
import subprocess
import sys
import tempfile

import pyarrow as pa
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


if __name__ == "__main__":
    main()
