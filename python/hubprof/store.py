"""Reading a store: hubprof.open() gives a Store whose tables come back as pandas DataFrames, through the
hub's C API only (the bindings never read a format's files themselves)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

import pandas as pd

from . import _lib, _read
from .errors import make_error, status_text
from .dataset import to_dataset
from .schema import TABLES, Table, describe

HP_READ, HP_CREATE, HP_CREATE_LIVE = 0, 1, 2


class Damage(NamedTuple):
    """What a reader found wrong in a store that is still readable up to a point."""

    status: int  #: hp_status (HP_ERR_TRUNCATED = -8, HP_ERR_CORRUPT = -7, …)
    offset: int  #: byte where the damage starts
    message: str  #: the hub's one line naming the file

    @property
    def status_text(self) -> str:
        return status_text(self.status)


def open_handle(path: str | os.PathLike, format: str | None, mode: int) -> ctypes.c_void_p:
    """hp_store_open; on failure closes what the hub returned and raises the matching hubprof.Error."""
    h = ctypes.c_void_p()
    p = os.fspath(path)
    st = _lib.lib.hp_store_open(_lib.encode(p), _lib.encode(format) if format else None, mode, ctypes.byref(h))
    if st != 0:
        err = make_error(st, h.value, p)
        if h.value:
            if mode == HP_READ:
                _lib.lib.hp_store_close(h)
            else:
                _lib.lib.hp_store_abort(h)
        raise err
    return h


class Store:
    """An open store of any format (rocpd, log, parquet), read through the hub. Use as a context manager
    or call close(); a closed store raises ValueError on use."""

    def __init__(self, path: str | os.PathLike, format: str | None = None):
        self._h: int | None = None
        self._cursors: set = set()
        handle = open_handle(path, format, HP_READ)
        self._h = handle.value
        self.path: str = _lib.decode(_lib.lib.hp_store_path(self._h))
        self.format: str = _lib.decode(_lib.lib.hp_store_format(self._h))
        self.schema_version: str = _lib.decode(_lib.lib.hp_store_schema_version(self._h))
        self._damage_msg = ""
        dmg = self.damage  # keep the hub's explanation before a later call replaces it
        self._damage_msg = dmg.message if dmg else ""

    # ---- life ----
    def _handle(self) -> int:
        if not self._h:
            raise ValueError("hubprof: the store is closed")
        return self._h

    @property
    def closed(self) -> bool:
        return not self._h

    def close(self) -> None:
        """Close the store (and any cursor still open on it). Safe to call twice."""
        for c in list(self._cursors):
            c.close()
        if self._h:
            h, self._h = self._h, None
            _lib.lib.hp_store_close(h)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        if self.closed:
            return f"<hubprof.Store {self.path!r} (closed)>"
        return f"<hubprof.Store {self.path!r} format={self.format} schema={self.schema_version}>"

    # ---- what the store is ----
    @property
    def damage(self) -> Damage | None:
        """None when the store is intact, else Damage(status, offset, message): the store is readable up
        to `offset` (e.g. a log cut short by a crash)."""
        off = ctypes.c_uint64(0)
        st = _lib.lib.hp_store_damage(self._handle(), ctypes.byref(off))
        if st == 0:
            return None
        msg = self._damage_msg or _lib.decode(_lib.lib.hp_store_error(self._h)) or status_text(st)
        return Damage(st, off.value, msg)

    def tables(self) -> list[str]:
        """Names of the tables of the data model (every store has them all, possibly empty)."""
        return list(TABLES)

    def count(self, table: str) -> int:
        """Rows of a table (for a damaged store: the readable rows)."""
        t = describe(table)
        n = ctypes.c_uint64(0)
        st = _lib.lib.hp_store_count(self._handle(), t.id, ctypes.byref(n))
        if st != 0:
            raise make_error(st, self._h, self.path, f"counting table {table}")
        return n.value

    def counts(self) -> dict[str, int]:
        """Rows of every table, by name."""
        return {t: self.count(t) for t in TABLES}

    def metadata(self) -> dict[str, str]:
        """The metadata table as a dict (schema version, tool version, mode, pass plan, …)."""
        t = describe("metadata")
        cols = _read.select_columns(t, ["key", "value"])
        out: dict[str, str] = {}
        for df in _read.iter_batches(self, t, cols, 4096):
            out.update(zip(df["key"].tolist(), df["value"].tolist()))
        return out

    # ---- tables ----
    def table(self, name: str, columns: Iterable[str] | None = None, dataset: bool = False) -> pd.DataFrame:
        """Every row of a table as a DataFrame: the hub's column names, numpy dtypes uint32/int32/uint64/
        int64/float64 and pandas' text dtype for strings. `columns` reads only those (hub names).
        dataset=True gives the table as Parquet datasets hold it (docs/formats/parquet.md): dataset names
        (dispatch_seq), signed pandas nullable dtypes with <NA> for unknown values, booleans for flags."""
        t = describe(name)
        cols = _read.select_columns(t, columns)
        df = _read.read_table(self, t, cols, self.count(name))
        return to_dataset(df, cols) if dataset else df

    def arrow(self, name: str, columns: Iterable[str] | None = None, dataset: bool = False):
        """Every row of a table as a pyarrow.Table (needs pyarrow: `pip install hubprof[arrow]`): the columns
        and types of table(), numpy arrays handed to Arrow without a copy where the type allows. With
        dataset=True the Parquet datasets' layout, unknown values as Arrow nulls (the schema of
        docs/formats/parquet.md)."""
        try:
            import pyarrow as pa
        except ImportError as e:  # an optional dependency: say how to get it
            raise ImportError("hubprof: Store.arrow() needs pyarrow (pip install pyarrow, or hubprof[arrow])") from e
        df = self.table(name, columns, dataset=dataset)
        return pa.Table.from_pandas(df, preserve_index=False)

    def ceilings(self) -> pd.DataFrame:
        """The devices' ceilings (`hubprof roofline -o/--store`, docs/cli/roofline.md): one row per measured
        ceiling with its device's name (column `device`) beside the ceiling table's columns; a ceiling that
        could not be measured has a negative value."""
        c = self.table("ceiling")
        a = self.table("agent", ["id", "name"]).rename(columns={"id": "agent_id", "name": "device"})
        out = c.merge(a, on="agent_id", how="left")
        out["device"] = out["device"].fillna("")
        return out[["id", "agent_id", "device", "name", "value", "unit", "method", "note", "measured_ns"]]

    def batches(self, name: str, rows: int = 1_000_000, columns: Iterable[str] | None = None
                ) -> Iterator[pd.DataFrame]:
        """The rows of a table as DataFrames of at most `rows` rows each, for tables larger than memory."""
        if rows < 1:
            raise ValueError("rows must be at least 1")
        t = describe(name)
        cols = _read.select_columns(t, columns)
        self._handle()
        return _read.iter_batches(self, t, cols, rows)

    def describe(self, name: str) -> Table:
        """The description of a table (columns, types, references), as hubprof.describe()."""
        return describe(name)

    # ---- timelines ----
    def export(self, path: str | os.PathLike, format: str = "perfetto", force: bool = False) -> Path:
        """This store as a timeline at `path`: "perfetto" (protobuf, ui.perfetto.dev), "chrome" (trace-event
        JSON) or "otf2" (an archive folder), through the `hubprof export` command (docs/cli/export.md)."""
        from .export import export

        self._handle()
        return export(self.path, path, format, force)

    def report(self, path: str | os.PathLike, baseline: "Store | str | os.PathLike | None" = None,
               force: bool = False) -> Path:
        """This store as one self-contained HTML page at `path` (summary, top kernels, timeline, kernel and
        region tables; with `baseline`, a Store or a path, the per-kernel change as a chart), through the
        `hubprof report` command (docs/cli/report.md)."""
        from .export import report

        self._handle()
        base = baseline.path if isinstance(baseline, Store) else baseline
        return report(self.path, path, base, force)

    # ---- analysis ----
    def analyze(self, by: str = "kernel", limit: int | None = None, **kw) -> pd.DataFrame:
        """The groupings of `hubprof analyze` as a DataFrame: counters=, metrics=, kernel=, device=,
        dispatch=, sort=, metric_files= as hubprof.analysis.analyze takes them."""
        from .analysis import analyze

        return analyze(self, by=by, limit=limit, **kw)


def open(path: str | os.PathLike, format: str | None = None) -> Store:  # noqa: A001 (the module's verb)
    """Open a store for reading. `format` is "rocpd", "log", "parquet" or None to detect it.

    Raises NotFoundError (a FileNotFoundError) for a missing path, FormatError for a file that is not a
    store, CorruptError / TruncatedError / VersionError … with the hub's message naming the file."""
    return Store(path, format)
