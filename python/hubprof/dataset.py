"""Tables as Parquet datasets hold them (docs/formats/parquet.md): the hub's DataFrame turned into the
dataset's column names, signed pandas nullable dtypes with <NA> where the hub's value means unknown, and
booleans for flags, following hp_dataset_column_describe so that pandas and the files agree."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import numpy as np
import pandas as pd

from .schema import COL_F64, COL_I32, COL_STR, COL_U32, Column

# signed nullable dtype of each hub type (INT32 and INT64 in the files)
_NULLABLE = {COL_U32: "Int32", COL_I32: "Int32", COL_F64: "Float64"}


def dataset_series(s: pd.Series, c: Column) -> pd.Series:
    """One column of a hub DataFrame as the dataset has it."""
    if c.type == COL_STR:
        out = s.astype(pd.StringDtype())
        return out.mask(out == "") if c.nullable else out
    v = s.to_numpy()
    if c.boolean:
        return pd.Series(v != 0, index=s.index, dtype="boolean")
    if v.dtype == np.uint32:
        v = v.view(np.int32)
    elif v.dtype == np.uint64:
        v = v.view(np.int64)
    out = pd.Series(v, index=s.index).astype(_NULLABLE.get(c.type, "Int64"))
    if c.nullable:
        null = np.int32(c.null_value) if c.type in (COL_U32, COL_I32) else np.int64(c.null_value)
        out = out.mask(out == null)
    return out


def to_dataset(df: pd.DataFrame, columns: list[Column]) -> pd.DataFrame:
    """A hub DataFrame of these columns with the dataset's names, dtypes and NULLs."""
    return pd.DataFrame({c.dataset_name: dataset_series(df[c.name], c) for c in columns if c.name in df.columns},
                        index=df.index)
