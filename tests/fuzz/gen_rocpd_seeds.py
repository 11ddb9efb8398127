#!/usr/bin/env python3
"""Writes the hostile-structure seeds of fuzz_rocpd (tests/fuzz/seeds/rocpd/): a small valid rocpd file and
copies of it with views that build huge strings, sort them, make rows out of nothing or never end, a zeroed
page, a header declaring a huge size, a cut file. The first byte of a seed is fuzz_rocpd's mode (0: the rest
is the file). Needs the hubprof Python package (PYTHONPATH=python, after make all).
usage: gen_rocpd_seeds.py [DIR]"""
# SPDX-License-Identifier: MIT
import os
import sqlite3
import struct
import sys
import tempfile

import hubprof

N = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT %d) "
VIEWS = {
    "view-huge-strings": N % 200000 + "SELECT i AS id, printf('%.*c', 100000, 'k') AS kernel_name FROM n",
    "view-sorts-huge-strings": N % 200000
    + "SELECT i AS id, printf('%.*c', 100000, 'k') AS kernel_name FROM n ORDER BY -i",
    "view-rows-from-nothing": N % 5000000 + "SELECT i AS id, 'k' AS kernel_name FROM n",
    "view-never-ends": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT i AS id, length(printf('%.*c', 10000, 'k')) AS kernel_name FROM n",
    "view-desc-order": "SELECT * FROM \"{table}\" ORDER BY id DESC",
}


def base(path: str) -> None:
    with hubprof.create(path, format="rocpd") as w:
        w.write("agent", {"id": 1, "name": "cpu"})
        w.write("process", {"id": 1, "pid": 42, "start_ns": 1, "end_ns": 900, "command": "./app"})
        w.write("kernel_symbol", {"id": [1, 2], "name": ["k1", "k2"]})
        w.write("counter_info", {"id": 1, "agent_id": 1, "name": "task-clock"})
        w.write("dispatch", {"id": list(range(1, 21)), "process_id": 1, "agent_id": 1,
                             "kernel_id": [1 + i % 2 for i in range(20)],
                             "start_ns": [10 * i + 10 for i in range(20)], "end_ns": [10 * i + 15 for i in range(20)]})
        w.write("counter_value", {"dispatch_id": list(range(1, 21)), "counter_id": 1, "pass": 1,
                                  "value": [1.5 * i for i in range(20)]})
    c = sqlite3.connect(path)  # small pages: small seeds
    c.execute("PRAGMA page_size = 512")
    c.execute("VACUUM")
    c.close()


def with_copies(path: str) -> bytes:
    """The base file with memory copies (--api): the reader's join of their names through rocpd_string,
    and one copy whose name string is missing."""
    import shutil
    tmp = path + ".copies.db"
    with hubprof.create(tmp, format="rocpd") as w:
        w.write("agent", {"id": 1, "name": "cpu"})
        w.write("process", {"id": 1, "pid": 42, "start_ns": 1, "end_ns": 900, "command": "./app"})
        w.write("queue", {"id": 1, "process_id": 1, "agent_id": 1, "name": "q"})
        w.write("memory_copy", {"id": list(range(1, 9)), "process_id": 1, "agent_id": 1, "queue_id": 1,
                                "name": ["clEnqueueReadBuffer", "clEnqueueWriteBuffer"] * 4,
                                "direction": [1 + i % 4 for i in range(8)], "bytes": [4096 * i for i in range(8)],
                                "start_ns": [10 * i + 10 for i in range(8)], "end_ns": [10 * i + 15 for i in range(8)]})
    c = sqlite3.connect(tmp)
    (table,) = c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE "
                         "'rocpd_memory_copy_%'").fetchone()
    c.execute(f'UPDATE "{table}" SET name_id = 999999 WHERE id = 3')  # a name that is not in rocpd_string
    c.commit()
    c.execute("PRAGMA page_size = 512")
    c.execute("VACUUM")
    c.close()
    shutil.move(tmp, path)
    return open(path, "rb").read()


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "seeds", "rocpd")
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "base.db")
    base(path)
    seeds = {"valid": open(path, "rb").read()}
    c = sqlite3.connect(path)
    (table,) = c.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE "
                         "'rocpd_info_kernel_symbol_%'").fetchone()
    c.close()
    for name, view in VIEWS.items():
        p = os.path.join(tmp, name + ".db")
        open(p, "wb").write(seeds["valid"])
        c = sqlite3.connect(p)
        c.execute("DROP VIEW rocpd_info_kernel_symbol")
        c.execute("CREATE VIEW rocpd_info_kernel_symbol AS " + view.replace("{table}", table))
        c.commit()
        c.close()
        seeds[name] = open(p, "rb").read()
    v = bytearray(seeds["valid"])
    psz = struct.unpack_from(">H", v, 16)[0]
    z = bytearray(v)  # a zeroed page in the middle (a lost write-back)
    mid = (len(z) // psz // 2) * psz
    z[mid:mid + psz] = bytes(psz)
    seeds["zeroed-page"] = bytes(z)
    h = bytearray(v)  # the header's page count says 2^31 pages
    struct.pack_into(">I", h, 28, 0x7FFFFFFF)
    seeds["huge-page-count"] = bytes(h)
    seeds["cut-in-half"] = bytes(v[: len(v) // 2])
    seeds["memory-copies"] = with_copies(os.path.join(tmp, "copies.db"))
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"\0" + data)


if __name__ == "__main__":
    main()
