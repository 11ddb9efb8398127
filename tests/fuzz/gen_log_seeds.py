#!/usr/bin/env python3
"""Writes the hostile-structure seeds of fuzz_log (tests/fuzz/seeds/log/): zeroed block headers and
zero-filled blocks before valid ones, huge declared block, record and string sizes. The first byte of a seed
is fuzz_log's mode: 1 = a valid 64 KiB-chunk header is put before the rest (block checksums as written
here). usage: gen_log_seeds.py [DIR]"""
# SPDX-License-Identifier: MIT
import os
import struct
import sys

POLY = 0x82F63B78  # CRC-32C, reflected
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(data: bytes, crc: int = 0) -> int:
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def record(rtype: int, fields: bytes, length: int | None = None) -> bytes:
    return varint(rtype) + varint(len(fields) if length is None else length) + fields


def block(payload: bytes, count: int, length: int | None = None, good_crc: bool = True) -> bytes:
    n = len(payload) if length is None else length
    head = struct.pack("<II", n, count)
    crc = crc32c(payload, crc32c(head)) if good_crc else 0
    b = struct.pack("<I", 0x4B4C4248) + head + struct.pack("<I", crc) + payload
    return b + bytes(-len(b) % 8)


DISPATCH = 8  # record type: 1 + the table's index
KERNEL = 7
PC_SAMPLE, COUNTER_SAMPLE, CODE_BLOB = 13, 14, 15  # h-sample's tables (big: no sequence number)
COUNTER_VALUE, REGION = 10, 11
MEMORY_COPY = 16  # --api's transfer commands (big)
DISPATCH_BATCH = 65  # dispatch rows, each against the previous one (docs/formats/log.md)


def text(s: bytes) -> bytes:
    return varint(len(s)) + s


def samples(i: int) -> bytes:
    """A pc_sample of dispatch i, a counter_sample (8-byte double) and a code_blob chunk."""
    ps = record(PC_SAMPLE, varint(i) + varint(i) + varint(1) + varint(0x1040 + i) + varint(2 * 1000 * i) + varint(2)
                + varint(1000000))
    cs = record(COUNTER_SAMPLE, varint(i) + varint(i) + varint(1) + varint(2 * 1000 * i) + struct.pack("<d", 1.5 * i))
    cb = record(CODE_BLOB, varint(i) + text(b"ab" * 32) + varint(0) + varint(3) + text(b"AAAA"))
    return ps + cs + cb


def host_part(i: int) -> bytes:
    """Region i and its host part: a counter_value of no dispatch naming the region (region_id, last)."""
    reg = record(REGION, varint(i) + varint(1) + varint(1) + text(b"op") + text(b"hubprof") + varint(10 * i)
                 + varint(10 * i + 5))
    cv = record(COUNTER_VALUE, varint(0) + varint(1) + varint(0) + varint(0) + struct.pack("<d", 2.5 * i) + varint(i))
    return reg + cv
def copy(i: int, name: bytes = b"clEnqueueReadBuffer", name_len: int | None = None) -> bytes:
    """A memory_copy row: id, process, thread, agent, queue, call name, direction, bytes, enqueue, start, end,
    region."""
    nm = (varint(len(name)) if name_len is None else varint(name_len)) + name
    return record(MEMORY_COPY, varint(i) + varint(1) + varint(1) + varint(1) + varint(1) + nm + varint(i % 5)
                  + varint(4096 * i) + varint(2000 * i) + varint(2000 * i + 10) + varint(2000 * i + 50) + varint(0))


def dispatch(i: int) -> bytes:
    return record(DISPATCH, varint(i) + varint(3 * i) + varint(1))


def batch(rows: list[bytes]) -> bytes:
    """A dispatch batch record of the given rows (each: mask bytes, then its zigzag deltas)."""
    return record(DISPATCH_BATCH, varint(len(rows)) + b"".join(rows))


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "seeds", "log")
    os.makedirs(out, exist_ok=True)
    good = block(b"".join(dispatch(i) for i in range(1, 6)), 5)
    good2 = block(b"".join(dispatch(i) for i in range(6, 9)), 3)
    seeds = {
        "valid-two-blocks": good + good2,
        "zeroed-header": bytes(16) + good[16:] + good2,  # a lost write-back: the second block must be read
        "zero-filled-block": bytes(len(good)) + good2,
        "zeroed-second-header": good + bytes(16) + good2[16:] + good,
        "huge-block-length": block(b"", 1, length=0xFFFFFFF0) + good2,
        "huge-record-length": block(record(DISPATCH, varint(1), length=(1 << 62)), 1) + good2,
        "huge-varint": block(varint(DISPATCH) + b"\xff" * 12, 1) + good2,
        "huge-string-length": block(record(KERNEL, varint(1) + varint(1) + varint(1 << 40) + b"abc"), 1) + good2,
        "huge-record-count": block(dispatch(1), 0xFFFFFFFF) + good2,
        "bad-crc-then-valid": block(dispatch(1), 1, good_crc=False) + good2,
        "magic-without-block": struct.pack("<I", 0x4B4C4248) * 64 + good2,
        "sample-records": good + block(b"".join(samples(i) for i in range(1, 4)), 9),
        "region-host-part": good + block(b"".join(host_part(i) for i in range(1, 4)), 6),
        "huge-region-id": good + block(record(COUNTER_VALUE, varint(0) + varint(1) + varint(0) + varint(0)
                                              + struct.pack("<d", 1.0) + b"\xff" * 11), 1),
        "copy-records": good + block(b"".join(copy(i) for i in range(1, 5)), 4),
        "huge-copy-name": block(copy(1, b"clEnqueue", 1 << 40), 1) + good2,
        "dispatch-batch": good + block(batch([b"\x83\x00\x0a\x1e", b"\x81\x00\x02", b"\x83\x80\x80\x80\x80\x02"
                                                   b"\x02\x02\x07", b"\x00"]), 1),
        "huge-batch-count": block(record(DISPATCH_BATCH, varint(1 << 40) + b"\x01\x02"), 1) + good2,
        "huge-batch-mask": block(batch([b"\xff" * 300 + b"\x7f" + b"\x02" * 40]), 1) + good2,
        "huge-blob-string": block(record(CODE_BLOB, varint(1) + text(b"ab") + varint(0) + varint(3)
                                         + varint(1 << 40) + b"AAAA"), 1) + good2,
    }
    for name, body in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"\x01" + body)


if __name__ == "__main__":
    main()
