"""The hub's data model as Python sees it: every table and column read from hp_table_describe at import,
with numpy dtypes and the row layout (offsets, row size) of this build of the C library. No table is
named in this code: a column or table added in C appears here by itself."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from . import _lib

# hp_col_type
COL_U32, COL_I32, COL_U64, COL_I64, COL_F64, COL_STR = 1, 2, 3, 4, 5, 6

_NUMPY = {
    COL_U32: np.dtype(np.uint32),
    COL_I32: np.dtype(np.int32),
    COL_U64: np.dtype(np.uint64),
    COL_I64: np.dtype(np.int64),
    COL_F64: np.dtype(np.float64),
    COL_STR: np.dtype(object),
}
_TYPE_NAMES = {COL_U32: "u32", COL_I32: "i32", COL_U64: "u64", COL_I64: "i64", COL_F64: "f64", COL_STR: "str"}
_PTR = np.dtype(np.uintp)  # a `const char *` inside a row struct or a batch array


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, hp_col_type, offset in the C row struct and referenced table."""

    name: str
    type: int
    offset: int
    ref: str | None
    #: as Parquet datasets and dataset DataFrames have it (hp_dataset_column_describe): its name there, its
    #: unit and description, whether unknown values are NULL and which hub value means unknown, a flag
    dataset_name: str = ""
    unit: str | None = None
    description: str = ""
    nullable: bool = False
    null_value: int = 0
    boolean: bool = False

    @property
    def dtype(self) -> np.dtype:
        """numpy dtype of the column in a DataFrame (object for strings)."""
        return _NUMPY[self.type]

    @property
    def type_name(self) -> str:
        """Short name of the C type: u32, i32, u64, i64, f64 or str."""
        return _TYPE_NAMES.get(self.type, f"type{self.type}")

    @property
    def is_str(self) -> bool:
        return self.type == COL_STR

    @property
    def c_dtype(self) -> np.dtype:
        """dtype of the column in a C array (hp_cursor_next_batch) or row struct: pointers for strings."""
        return _PTR if self.is_str else _NUMPY[self.type]


@dataclass(frozen=True)
class Table:
    """A table of the data model: name, hp_table value, row struct size and columns, as the C library says."""

    name: str
    id: int
    row_size: int
    columns: tuple[Column, ...]

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name} has no column {name!r}")

    @property
    def row_dtype(self) -> np.dtype:
        """numpy structured dtype laid out exactly as the C row struct (string fields hold pointers);
        the leading `size` field is named "__size__"."""
        names = ["__size__"] + self.column_names
        formats = [np.dtype(np.uint32)] + [c.c_dtype for c in self.columns]
        offsets = [0] + [c.offset for c in self.columns]
        return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": self.row_size})

    def __repr__(self) -> str:
        cols = ", ".join(f"{c.name}:{c.type_name}" + (f"->{c.ref}" if c.ref else "") for c in self.columns)
        return f"<hubprof table {self.name} ({cols})>"


def _load_tables() -> dict[str, Table]:
    out: dict[str, Table] = {}
    for t in range(_lib.TABLE_COUNT):
        d = _lib.lib.hp_table_describe(t).contents
        cols = []
        for i in range(d.ncolumns):
            c = d.columns[i]
            dc = _lib.hp_dataset_column(size=ctypes.sizeof(_lib.hp_dataset_column))
            if _lib.lib.hp_dataset_column_describe(t, i, ctypes.byref(dc)) != 0:
                raise ImportError(f"hubprof: no dataset description of column {_lib.decode(c.name)}")
            cols.append(Column(_lib.decode(c.name), int(c.type), int(c.offset), _lib.decode(c.ref) or None,
                               _lib.decode(dc.name), _lib.decode(dc.unit) or None, _lib.decode(dc.description),
                               bool(dc.nullable), int(dc.null_value), bool(dc.boolean)))
        # Every row struct begins with its uint32 size and holds each column inside row_size.
        for c in cols:
            if c.type not in _NUMPY or c.offset < 4 or c.offset + c.c_dtype.itemsize > d.row_size:
                raise ImportError(f"hubprof: column {c.name} of table {_lib.decode(d.name)} is not understood")
        out[_lib.decode(d.name)] = Table(_lib.decode(d.name), int(d.table), int(d.row_size), tuple(cols))
    return out


_TABLES = _load_tables()

#: Names of the tables of the data model, in the hub's order.
TABLES: tuple[str, ...] = tuple(_TABLES)


def describe(table: str) -> Table:
    """The description of a table by name ("dispatch"): columns with types, offsets and references.

    Raises hubprof.InvalidArgumentError (a ValueError) for an unknown table."""
    try:
        return _TABLES[table]
    except (KeyError, TypeError):
        from .errors import InvalidArgumentError

        raise InvalidArgumentError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}", -1) from None

