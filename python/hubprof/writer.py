"""Writing a store from Python: hubprof.create() gives a Writer that turns DataFrames, lists of dicts or
dicts of columns into the hub's row structs and writes them with hp_write; the store appears at its path
only when committed."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import ctypes
import os
import warnings
from typing import Any

from . import _lib, _rows
from .errors import make_error
from .schema import describe
from .store import HP_CREATE, HP_CREATE_LIVE, open_handle


class Writer:
    """A store being created. As a context manager it commits on a normal exit and aborts (leaving
    nothing at the path) when the block raises."""

    def __init__(self, path: str | os.PathLike, format: str = "rocpd", live: bool = False, force: bool = False):
        self.path = os.fspath(path)
        if not force and os.path.lexists(self.path):
            raise FileExistsError(f"{self.path}: already exists (use force=True to replace it)")
        if live and force and os.path.lexists(self.path) and not os.path.isdir(self.path):
            os.unlink(self.path)  # a live log appears at once and never replaces a file by itself
        self._h: int | None = open_handle(self.path, format, HP_CREATE_LIVE if live else HP_CREATE).value
        self.format: str = _lib.decode(_lib.lib.hp_store_format(self._h))
        self.rows_written: dict[str, int] = {}

    def _handle(self) -> int:
        if not self._h:
            raise ValueError(f"hubprof: {self.path}: the writer is closed (committed or aborted)")
        return self._h

    @property
    def closed(self) -> bool:
        return not self._h

    def write(self, table: str, rows: Any) -> int:
        """Write rows to a table; returns how many.

        `rows`: a DataFrame, a list of dicts, a dict of columns (scalars are repeated to the length of
        the other columns) or one row as a dict of scalars. Columns not given are 0 or ""; a column the
        table does not have raises ValueError naming it. Values must fit the column's C type."""
        t = describe(table)
        h = self._handle()
        arr, keep = _rows.build_rows(t, rows)
        base, size, tid = arr.ctypes.data, t.row_size, t.id
        write = _lib.lib.hp_write
        for i in range(len(arr)):
            st = write(h, tid, base + i * size)
            if st != 0:
                raise make_error(st, h, self.path, f"writing row {i} of table {table}")
        del keep  # the strings were copied by the hub
        self.rows_written[table] = self.rows_written.get(table, 0) + len(arr)
        return len(arr)

    def write_metadata(self, key: str, value: str) -> None:
        """Set one metadata key (written again, the later value replaces the earlier)."""
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise ValueError("metadata key must be a non-empty str and value a str")
        st = _lib.lib.hp_write_metadata(self._handle(), _lib.encode(key), _lib.encode(value))
        if st != 0:
            raise make_error(st, self._h, self.path, f"writing metadata {key!r}")

    def write_code_bytes(self, data: bytes) -> str:
        """Store the bytes of a code object (a shared object, a cubin) in code_blob and return their
        SHA-256 (hex), the value of code_object.hash that names them. Write each distinct hash once."""
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("code bytes must be bytes")
        out = ctypes.create_string_buffer(65)
        st = _lib.lib.hp_write_code_bytes(self._handle(), bytes(data), len(data), out)
        if st != 0:
            raise make_error(st, self._h, self.path, "writing code bytes")
        return out.value.decode()

    def commit(self) -> None:
        """Finish the store: it appears at its path now. Raises the hub's error if that fails (then
        nothing is left at the path)."""
        h = self._handle()
        self._h = None
        st = _lib.lib.hp_store_commit(h)
        err = make_error(st, h, self.path, "committing") if st != 0 else None
        _lib.lib.hp_store_close(h)
        if err:
            raise err

    def abort(self) -> None:
        """Give up the store: nothing is left at its path. Safe to call after commit or twice."""
        if self._h:
            h, self._h = self._h, None
            _lib.lib.hp_store_abort(h)

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()
        elif self._h:
            self.commit()

    def __del__(self) -> None:
        if getattr(self, "_h", None):
            warnings.warn(f"hubprof: {self.path}: writer dropped without commit; aborted", ResourceWarning)
            self.abort()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<hubprof.Writer {self.path!r} format={self.format} {state}>"


def create(path: str | os.PathLike, format: str = "rocpd", live: bool = False, force: bool = False) -> Writer:
    """Create a store of `format` ("rocpd", "log", "parquet") at `path`.

    The store is written aside and appears at `path` on commit (live=True, log only: written in place,
    readable while written). An existing path raises FileExistsError unless force=True."""
    return Writer(path, format, live, force)


