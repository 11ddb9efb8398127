"""Turning what a user passes to Writer.write (a DataFrame, a list of dicts, a dict of columns or one row
as a dict) into C row structs laid out by hp_table_describe: one numpy structured array, with the text
of string columns kept alive in one buffer per column."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .schema import Column, Table


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, bytes, int, float, bool, np.generic))


def columns_of(rows: Any) -> tuple[dict[str, Any], int]:
    """The given columns and the number of rows: {name: sequence or scalar}, n."""
    if isinstance(rows, pd.DataFrame):
        return {str(c): rows[c] for c in rows.columns}, len(rows)
    if isinstance(rows, Mapping):
        seqs = {k: v for k, v in rows.items() if not _is_scalar(v)}
        if not seqs:  # one row given as a dict of scalars
            return {k: [v] for k, v in rows.items()}, 1
        lengths = {k: len(v) for k, v in seqs.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"columns of different lengths: {lengths}")
        return dict(rows), next(iter(lengths.values()))
    if isinstance(rows, (str, bytes)):
        raise TypeError("rows must be a DataFrame, a list of dicts or a dict of columns")
    rows = list(rows)
    if not all(isinstance(r, Mapping) for r in rows):
        raise TypeError("rows must be a DataFrame, a list of dicts or a dict of columns")
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    return {k: [r.get(k, _MISSING) for r in rows] for k in keys}, len(rows)


class _Missing:
    """A key absent from some dicts of a list of rows: the column's default (0 or "")."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _ints(col: Column, values: Any, n: int) -> np.ndarray:
    dt = col.dtype
    info = np.iinfo(dt)
    if _is_scalar(values):
        values = np.full(n, values) if isinstance(values, np.generic) else [values] * n
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.to_numpy()
    # Python sequences go through the exact per-value path: numpy would infer float64 for [1, 2**64 - 1]
    a = values if isinstance(values, np.ndarray) else np.fromiter(values, dtype=object, count=len(values))
    if a.dtype.kind in "Mm":  # datetime64 / timedelta64 → integer nanoseconds
        a = a.astype(a.dtype.str[:3] + "[ns]").view(np.int64)
    kind = a.dtype.kind
    if kind == "b":
        return a.astype(dt)
    if kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.floor(a)):
            raise ValueError(f"column {col.name}: values must be whole numbers (no NaN) for {col.type_name}")
    elif kind == "O":
        vals = []
        for v in a.tolist():
            if v is _MISSING or v is None:
                if v is None:
                    raise ValueError(f"column {col.name}: None in an integer column")
                v = 0
            if isinstance(v, float):
                if not v.is_integer():
                    raise ValueError(f"column {col.name}: {v!r} is not a whole number")
                v = int(v)
            elif not isinstance(v, (int, np.integer)):
                raise ValueError(f"column {col.name}: {v!r} is not an integer")
            vals.append(int(v))
        lo, hi = (min(vals), max(vals)) if vals else (0, 0)
        if lo < info.min or hi > info.max:
            raise ValueError(f"column {col.name}: value out of range for {col.type_name} ({lo}..{hi})")
        return np.array(vals, dtype=dt)
    elif kind not in "iu":
        raise ValueError(f"column {col.name}: {a.dtype} values cannot be written to a {col.type_name} column")
    if len(a):
        lo, hi = int(a.min()), int(a.max())
        if lo < info.min or hi > info.max:
            raise ValueError(f"column {col.name}: value out of range for {col.type_name} ({lo}..{hi})")
    return a.astype(dt)


def _floats(col: Column, values: Any, n: int) -> np.ndarray:
    if _is_scalar(values):
        values = [values] * n
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.to_numpy()
    a = np.asarray(values)
    if a.dtype.kind == "O":
        a = np.array([0.0 if v is _MISSING else (math.nan if v is None else v) for v in a.tolist()], dtype=object)
    try:
        return a.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"column {col.name}: values are not numbers") from None


def _text(v: Any, col: Column) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8", "surrogateescape")
    if v is None or v is _MISSING or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return b""
    if isinstance(v, bytes):
        return v
    raise ValueError(f"column {col.name}: {v!r} is not text")


def _strings(col: Column, values: Any, n: int) -> tuple[np.ndarray, bytes]:
    """Pointers for a string column and the buffer they point into (to be kept alive)."""
    if _is_scalar(values):
        enc = [_text(values, col)] * n
    else:
        enc = [_text(v, col) for v in (values.tolist() if hasattr(values, "tolist") else values)]
    blob = b"\0".join(enc) + b"\0"
    if blob.count(b"\0") != len(enc) + (0 if enc else 1):
        raise ValueError(f"column {col.name}: text with a NUL character cannot be stored")
    if not enc:
        return np.zeros(0, dtype=np.uintp), blob
    lengths = np.fromiter((len(e) + 1 for e in enc), dtype=np.int64, count=len(enc))
    offsets = np.zeros(len(enc), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    base = np.frombuffer(blob, dtype=np.uint8).ctypes.data
    return (offsets + base).astype(np.uintp), blob


def build_rows(table: Table, rows: Any) -> tuple[np.ndarray, list]:
    """C row structs of `table` for `rows`, and the buffers their strings point into (keep them alive
    until the rows are written). Missing columns are 0 / ""; unknown ones raise ValueError naming them."""
    given, n = columns_of(rows)
    unknown = [k for k in given if k not in table.column_names]
    if unknown:
        raise ValueError(f"table {table.name} has no column {', '.join(map(repr, unknown))}; "
                         f"its columns are: {', '.join(table.column_names)}")
    arr = np.zeros(n, dtype=table.row_dtype)
    arr["__size__"] = table.row_size
    keep = []
    for c in table.columns:
        if c.name not in given:
            continue
        v = given[c.name]
        if c.is_str:
            ptrs, blob = _strings(c, v, n)
            arr[c.name] = ptrs
            keep.append(blob)
        elif c.dtype.kind == "f":
            arr[c.name] = _floats(c, v, n)
        else:
            arr[c.name] = _ints(c, v, n)
    return arr, keep
