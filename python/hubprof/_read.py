"""Columnar reads: one hub cursor drained with hp_cursor_next_batch straight into numpy arrays (numeric
columns) and Python strings (text columns), then handed to pandas without copying."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import ctypes
from typing import Iterable

import numpy as np
import pandas as pd

from . import _lib
from .errors import make_error
from .schema import Column, Table

BATCH_ROWS = 65536  # rows per hp_cursor_next_batch call
_HP_OK, _HP_END = 0, 1


def select_columns(table: Table, columns: Iterable[str] | None) -> list[Column]:
    """The columns to read, in the table's order; unknown names raise a ValueError naming them."""
    if columns is None:
        return list(table.columns)
    if isinstance(columns, str):
        columns = [columns]
    wanted = list(columns)
    unknown = [c for c in wanted if c not in table.column_names]
    if unknown:
        raise ValueError(f"table {table.name} has no column {', '.join(map(repr, unknown))}; "
                         f"its columns are: {', '.join(table.column_names)}")
    return [c for c in table.columns if c.name in wanted]


def strings(ptrs: list[np.ndarray], n: int) -> list[list[str]]:
    """Text of n rows of each string column, from arrays of `const char *` filled by the hub.

    Fast path: the hub copies a batch's strings, row after row, into one buffer; when the pointers show
    exactly that layout the buffer is decoded at once and split. Otherwise each string is read alone."""
    if n == 0 or not ptrs:
        return [[] for _ in ptrs]
    k = len(ptrs)
    # row-major: row 0 col 0, row 0 col 1, …; user-space addresses fit in int64
    flat = np.stack([p[:n] for p in ptrs], axis=1).ravel().astype(np.int64)
    base = int(flat[0])
    last = int(flat[-1])
    if len(flat) == 1 or bool(np.all(np.diff(flat) > 0)):  # increasing: may be the one-buffer layout
        total = last - base + len(ctypes.string_at(last)) + 1
        blob = ctypes.string_at(base, total)
        nul = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
        if len(nul) == len(flat):
            starts = np.empty(len(flat), dtype=np.int64)
            starts[0] = 0
            starts[1:] = nul[:-1] + 1
            if np.array_equal(starts, flat - base):
                parts = blob[:-1].decode("utf-8", "hubprof-escape").split("\0")
                return [parts[j::k] for j in range(k)]
    dec = _lib.decode
    return [[dec(ctypes.string_at(int(a))) for a in p[:n]] for p in ptrs]


class Cursor:
    """One hub read cursor over one table, reading the chosen columns in batches."""

    def __init__(self, store, table: Table, columns: list[Column]):
        self.store = store
        self.table = table
        self.columns = columns
        self.handle = ctypes.c_void_p()
        st = _lib.lib.hp_cursor_open(store._handle(), table.id, ctypes.byref(self.handle))
        if st != _HP_OK:
            raise make_error(st, store._h, store.path, f"opening a cursor on {table.name}")
        store._cursors.add(self)
        wanted = {c.name for c in columns}
        self._slots = [c if c.name in wanted else None for c in table.columns]
        self._cols = (ctypes.c_void_p * len(table.columns))()
        self._ptrs: dict[str, np.ndarray] = {}

    def close(self) -> None:
        """Release the cursor (also done by the store's close)."""
        if self.handle:
            _lib.lib.hp_cursor_close(self.handle)
            self.handle = ctypes.c_void_p()
            self.store._cursors.discard(self)

    def read(self, out: dict, start: int, max_rows: int) -> int:
        """Read up to max_rows rows: numeric columns into out[name][start:], string columns appended to the
        list out[name]. Returns the rows read, 0 at the end of the table."""
        if not self.handle:
            return 0
        strcols = []
        for i, c in enumerate(self._slots):
            if c is None:
                self._cols[i] = None
            elif c.is_str:
                p = self._ptrs.get(c.name)
                if p is None or len(p) < max_rows:
                    p = self._ptrs[c.name] = np.empty(max_rows, dtype=np.uintp)
                self._cols[i] = p.ctypes.data
                strcols.append(c.name)
            else:
                arr = out[c.name]
                assert len(arr) >= start + max_rows
                self._cols[i] = arr.ctypes.data + start * arr.itemsize
        n = ctypes.c_size_t(0)
        st = _lib.lib.hp_cursor_next_batch(self.handle, self._cols, max_rows, ctypes.byref(n))
        got = n.value
        if st not in (_HP_OK, _HP_END):
            raise make_error(st, self.store._h, self.store.path, f"reading table {self.table.name}")
        if strcols and got:
            for name, vals in zip(strcols, strings([self._ptrs[s] for s in strcols], got)):
                out[name].extend(vals)
        if st == _HP_END:
            self.close()
        return got


def empty_columns(columns: list[Column], rows: int) -> dict:
    """Output holders for Cursor.read: numpy arrays of `rows` for numbers, lists for strings."""
    return {c.name: ([] if c.is_str else np.empty(rows, dtype=c.dtype)) for c in columns}


def frame(columns: list[Column], data: dict, n: int) -> pd.DataFrame:
    """A DataFrame of the first n rows of the holders, numeric arrays shared, not copied."""
    cols = {}
    for c in columns:
        v = data[c.name]
        cols[c.name] = pd.Series(v, dtype=str) if c.is_str else v[:n]
    df = pd.DataFrame(cols, copy=False)
    if not columns:
        df = pd.DataFrame(index=pd.RangeIndex(n))
    return df


def read_table(store, table: Table, columns: list[Column], expected: int) -> pd.DataFrame:
    """Every row of a table (expected: the hub's count, the first size of the arrays)."""
    cap = max(expected, 1)
    data = empty_columns(columns, cap)
    cur = Cursor(store, table, columns)
    filled = 0
    try:
        while True:
            if filled == cap:  # more rows than counted: grow
                cap *= 2
                for c in columns:
                    if not c.is_str:
                        grown = np.empty(cap, dtype=c.dtype)
                        grown[:filled] = data[c.name][:filled]
                        data[c.name] = grown
            got = cur.read(data, filled, min(BATCH_ROWS, cap - filled))
            if got == 0:
                break
            filled += got
    finally:
        cur.close()
    return frame(columns, data, filled)


def iter_batches(store, table: Table, columns: list[Column], rows: int):
    """DataFrames of at most `rows` rows each, until the table ends."""
    cur = Cursor(store, table, columns)
    try:
        while True:
            data = empty_columns(columns, rows)
            got = cur.read(data, 0, rows)
            if got == 0:
                return
            yield frame(columns, data, got)
    finally:
        cur.close()
