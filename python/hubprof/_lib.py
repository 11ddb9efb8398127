"""Finds and loads the hub's C library (libhubprof.so) and declares the ctypes prototypes of its API.

Search order: $HUBPROF_LIB, the copy bundled in this package (pip install), the source tree's build/.
"""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import codecs
import ctypes
import ctypes.util
import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_LIBNAME = "libhubprof.so"


def _candidates() -> list[str]:
    """Libraries to try, in order: paths (loaded when they exist) or a bare name for the system loader."""
    env = os.environ.get("HUBPROF_LIB")
    if env:
        return [env]  # an explicit choice is never silently replaced by another library
    out = [str(_HERE / "_native" / _LIBNAME), str(_HERE.parent.parent / "build" / _LIBNAME)]
    found = ctypes.util.find_library("hubprof")  # installed system-wide
    if found:
        out.append(found)
    return out


def _load() -> tuple[ctypes.CDLL, str]:
    tried = []
    for p in _candidates():
        if os.sep in p and not os.path.exists(p):
            tried.append(f"{p} (missing)")
            continue
        try:
            return ctypes.CDLL(p), str(Path(p).resolve()) if os.sep in p else p
        except OSError as e:
            tried.append(f"{p} ({e})")
    raise ImportError(
        "hubprof: cannot load the hub library libhubprof.so; tried: " + "; ".join(tried)
        + ". Build it with `make build/libhubprof.so` in the hubprof source tree, install the package with "
        "`pip install ./python`, or set HUBPROF_LIB to its path."
    )


lib, path = _load()

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_size_t = ctypes.c_size_t
c_uint64 = ctypes.c_uint64
P = ctypes.POINTER


class hp_column(ctypes.Structure):
    """struct hp_column: one column of a table description."""

    _fields_ = [("name", c_char_p), ("type", c_int), ("offset", c_size_t), ("ref", c_char_p)]


class hp_table_desc(ctypes.Structure):
    """struct hp_table_desc: a table's name, row size and columns."""

    _fields_ = [
        ("name", c_char_p),
        ("table", c_int),
        ("row_size", c_size_t),
        ("ncolumns", c_size_t),
        ("columns", P(hp_column)),
    ]


class hp_dataset_column(ctypes.Structure):
    """struct hp_dataset_column (dataset.h): a column as Parquet datasets and dataset DataFrames have it."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("name", c_char_p),
        ("unit", c_char_p),
        ("description", c_char_p),
        ("nullable", ctypes.c_int32),
        ("null_value", ctypes.c_int64),
        ("boolean", ctypes.c_int32),
    ]


class ha_query(ctypes.Structure):
    """struct ha_query (analysis.h)."""

    _fields_ = [("size", ctypes.c_uint32), ("group", ctypes.c_int32), ("limit", ctypes.c_int64)]


def _proto(name: str, restype, *argtypes) -> None:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


# Status and library facts.
_proto("hp_status_str", c_char_p, c_int)
_proto("hp_formats", P(c_char_p))
_proto("hp_version", c_char_p)
# Tables.
_proto("hp_table_describe", P(hp_table_desc), c_int)
_proto("hp_table_from_name", c_int, c_char_p)
_proto("hp_dataset_column_describe", c_int, c_int, c_size_t, P(hp_dataset_column))
# Stores.
_proto("hp_store_open", c_int, c_char_p, c_char_p, c_int, P(c_void_p))
_proto("hp_store_close", c_int, c_void_p)
_proto("hp_store_commit", c_int, c_void_p)
_proto("hp_store_abort", None, c_void_p)
_proto("hp_store_error", c_char_p, c_void_p)
_proto("hp_store_format", c_char_p, c_void_p)
_proto("hp_store_path", c_char_p, c_void_p)
_proto("hp_store_schema_version", c_char_p, c_void_p)
_proto("hp_store_count", c_int, c_void_p, c_int, P(c_uint64))
_proto("hp_store_metadata", c_char_p, c_void_p, c_char_p)
_proto("hp_store_damage", c_int, c_void_p, P(c_uint64))
_proto("hp_write", c_int, c_void_p, c_int, c_void_p)
_proto("hp_write_metadata", c_int, c_void_p, c_char_p, c_char_p)
_proto("hp_write_code_bytes", c_int, c_void_p, c_char_p, c_size_t, c_char_p)
# Cursors.
_proto("hp_cursor_open", c_int, c_void_p, c_int, P(c_void_p))
_proto("hp_cursor_next_batch", c_int, c_void_p, P(c_void_p), c_size_t, P(c_size_t))
_proto("hp_cursor_close", None, c_void_p)
# Merge.
_proto("hp_merge", c_int, c_void_p, P(c_void_p), c_size_t, c_void_p)
# Assembly (hubprof/assemble.h): the one pipeline of merge, convert, trace and profile.
_proto("hp_assembly_new", c_int, c_void_p, P(c_void_p))
_proto("hp_assembly_add", c_int, c_void_p, c_char_p, ctypes.c_uint32)
_proto("hp_assembly_add_store", c_int, c_void_p, c_void_p, ctypes.c_uint32)
_proto("hp_assembly_write", c_int, c_void_p, c_void_p, c_void_p)
_proto("hp_assembly_error", c_char_p, c_void_p)
_proto("hp_assembly_free", None, c_void_p)
# Analysis.
_proto("ha_run", c_int, c_void_p, P(ha_query), P(c_void_p))
_proto("ha_result_free", None, c_void_p)
_proto("ha_result_ncols", c_size_t, c_void_p)
_proto("ha_result_nrows", c_size_t, c_void_p)
_proto("ha_result_col_name", c_char_p, c_void_p, c_size_t)
_proto("ha_result_col_kind", c_int, c_void_p, c_size_t)
_proto("ha_result_text", c_char_p, c_void_p, c_size_t, c_size_t)
_proto("ha_result_num", ctypes.c_double, c_void_p, c_size_t, c_size_t)
_proto("ha_result_int", ctypes.c_int64, c_void_p, c_size_t, c_size_t)
_proto("ha_result_lost_records", c_uint64, c_void_p)



def _table_count() -> int:
    """HP_TABLE_COUNT of the loaded library: hp_table_describe answers NULL past the last table."""
    n = 0
    while lib.hp_table_describe(n):
        n += 1
    return n


TABLE_COUNT = _table_count()
TABLE_SLOTS = 32  # HP_TABLE_SLOTS (hub.h): the per-table arrays of the stats structs


class hp_merge_stats(ctypes.Structure):
    """struct hp_merge_stats (hub.h); its arrays have HP_TABLE_SLOTS slots, the first TABLE_COUNT used."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("inputs", c_uint64),
        ("rows_in", c_uint64 * TABLE_SLOTS),
        ("rows_out", c_uint64 * TABLE_SLOTS),
        ("damaged_inputs", c_uint64),
        ("duplicate_processes", c_uint64),
        ("duplicate_rows", c_uint64),
        ("metadata_conflicts", c_uint64),
    ]


PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_uint64, c_uint64)
WARN_FN = ctypes.CFUNCTYPE(None, c_void_p, c_char_p)


class hp_assemble_opts(ctypes.Structure):
    """struct hp_assemble_opts (assemble.h)."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("strict", ctypes.c_int),
        ("impute", ctypes.c_int),
        ("plan", c_char_p),
        ("min_per_pass", ctypes.c_uint32),
        ("match", ctypes.c_int),
        ("progress", PROGRESS_FN),
        ("progress_ctx", c_void_p),
        ("warn", WARN_FN),
        ("warn_ctx", c_void_p),
    ]


class hp_assemble_stats(ctypes.Structure):
    """struct hp_assemble_stats (assemble.h)."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("merge", hp_merge_stats),
        ("skipped_inputs", c_uint64),
        ("lost_records", c_uint64),
        ("measured_values", c_uint64),
        ("imputed_values", c_uint64),
        ("keys", c_uint64),
        ("incomplete_keys", c_uint64),
        ("runs", c_uint64),
        ("unmatched_dispatches", c_uint64),
        ("unmatched_processes", c_uint64),
        ("unfinished_processes", c_uint64),
        ("unfinished_dispatches", c_uint64),
        ("not_selected_dispatches", c_uint64),
        ("incomplete_dispatches", c_uint64),
    ]


def _escape_bytes(e: UnicodeDecodeError) -> tuple[str, int]:
    """Bytes that are not UTF-8 become the text \\xNN, as the hub stores them (stores written before it
    escaped them still hold raw bytes)."""
    return "".join("\\x%02X" % c for c in e.object[e.start:e.end]), e.end


codecs.register_error("hubprof-escape", _escape_bytes)


def decode(b: bytes | None) -> str:
    """A C string from the hub as str ("" for NULL); bytes that are not UTF-8 read as \\xNN."""
    return b.decode("utf-8", "hubprof-escape") if b else ""


def encode(s: str | os.PathLike | None) -> bytes:
    """A str (or path) as a C string for the hub."""
    if s is None:
        return b""
    if isinstance(s, os.PathLike):
        return os.fsencode(s)
    return s.encode("utf-8", "surrogateescape")
