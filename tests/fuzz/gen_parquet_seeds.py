#!/usr/bin/env python3
"""Writes the hostile-structure seeds of fuzz_parquet (tests/fuzz/seeds/parquet/hostile-*), made from the
valid dispatch seed beside them: a zero-filled file, zero-filled pages, a footer length of 2 GiB, a page
header declaring huge sizes, a cut footer; and manifests declaring huge row counts and sizes. The first byte
is fuzz_parquet's (0x87: the dispatch table, its size in the manifest; 0xff: a manifest).
usage: gen_parquet_seeds.py [DIR]"""
# SPDX-License-Identifier: MIT
import os
import struct
import sys


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "seeds", "parquet")
    src = open(os.path.join(out, "dispatch-hub"), "rb").read()
    mode, f = src[:1], src[1:]
    assert f[:4] == b"PAR1" and f[-4:] == b"PAR1"
    flen = struct.unpack_from("<I", f, len(f) - 8)[0]
    body_end = len(f) - 8 - flen
    seeds = {}
    seeds["zero-filled"] = bytes(len(f))
    z = bytearray(f)  # every page zeroed, the footer intact (lost write-backs)
    z[4:body_end] = bytes(body_end - 4)
    seeds["zeroed-pages"] = bytes(z)
    h = bytearray(f)  # the footer says it is 2 GiB long
    struct.pack_into("<I", h, len(h) - 8, 0x7FFFFFFF)
    seeds["huge-footer-length"] = bytes(h)
    # the first page header (thrift compact: i32 fields 1-3 = type, uncompressed and compressed size) with
    # sizes of 2 GiB - 1 (zigzag varints)
    huge = b"\xfe\xff\xff\xff\x0f"
    assert f[4] == 0x15
    seeds["huge-page-sizes"] = f[:4] + b"\x15\x00\x15" + huge + b"\x15" + huge + f[4 + 7:]
    seeds["cut-footer"] = f[: len(f) - 8 - flen // 2] + f[-8:]
    for name, data in seeds.items():
        with open(os.path.join(out, "hostile-" + name), "wb") as fp:
            fp.write(mode + data)
    manifests = {
        "huge-rows": '{"format": "hubprof-parquet", "version": 1, "schema_version": "1", "tables": [{"name": '
        '"dispatch", "rows": 18446744073709551615, "files": [{"path": "dispatch.parquet", "rows": '
        "9223372036854775807}]}]}",
        "huge-bytes": '{"format": "hubprof-parquet", "version": 1, "schema_version": "1", "tables": [{"name": '
        '"dispatch", "files": [{"path": "dispatch.parquet", "bytes": 1099511627776}]}]}',
        "many-files": '{"format": "hubprof-parquet", "version": 1, "schema_version": "1", "tables": [{"name": '
        '"dispatch", "files": [' + ", ".join(['{"path": "dispatch.parquet"}'] * 2000) + "]}]}",
    }
    for name, text in manifests.items():
        with open(os.path.join(out, "hostile-manifest-" + name), "wb") as fp:
            fp.write(b"\xff" + text.encode())


if __name__ == "__main__":
    main()
