"""The groupings of `hubprof analyze` (ha_run in the C analysis library) as pandas DataFrames."""
from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pandas as pd

from . import _lib
from .errors import LowerBoundWarning, make_error

#: Groupings ha_run knows, by the name `by=` takes (ha_group).
GROUPS = {"kernel": 0}
_TEXT, _INT, _REAL = 0, 1, 2


def analyze(store, by: str = "kernel", limit: int | None = None) -> pd.DataFrame:
    """Run an analysis on an open store.

    by="kernel": one row per (device, kernel), columns device, kernel (text), calls, timed_calls,
    total_ns, min_ns, max_ns (int64), avg_ns, percent (float64; NaN when no timed calls); rows by device,
    then total time, most expensive first. `limit` keeps the N most expensive kernels of each device.
    df.attrs["lost_records"] gives the records the collector lost; when it is not 0 or the store is
    damaged, a LowerBoundWarning says the figures are lower bounds."""
    if by not in GROUPS:
        raise ValueError(f"unknown grouping {by!r}; known: {', '.join(GROUPS)}")
    if limit is not None and (not isinstance(limit, (int, np.integer)) or limit < 0):
        raise ValueError("limit must be None or an integer >= 0")
    q = _lib.ha_query(ctypes.sizeof(_lib.ha_query), GROUPS[by], int(limit or 0))
    res = ctypes.c_void_p()
    st = _lib.lib.ha_run(store._handle(), ctypes.byref(q), ctypes.byref(res))
    try:
        if st != 0:
            raise make_error(st, store._h, store.path, f"analyzing by {by}")
        L = _lib.lib
        r = res.value
        nrows, ncols = L.ha_result_nrows(r), L.ha_result_ncols(r)
        data = {}
        for c in range(ncols):
            name = _lib.decode(L.ha_result_col_name(r, c))
            kind = L.ha_result_col_kind(r, c)
            if kind == _TEXT:
                data[name] = pd.Series([_lib.decode(L.ha_result_text(r, i, c)) for i in range(nrows)], dtype=str)
            elif kind == _INT:
                data[name] = np.array([L.ha_result_int(r, i, c) for i in range(nrows)], dtype=np.int64)
            else:
                data[name] = np.array([L.ha_result_num(r, i, c) for i in range(nrows)], dtype=np.float64)
        lost = L.ha_result_lost_records(r)
    finally:
        _lib.lib.ha_result_free(res)
    df = pd.DataFrame(data)
    df.attrs["lost_records"] = int(lost)
    damage = store.damage
    df.attrs["damage"] = damage
    if lost or damage:
        why = f"{lost} records were lost by the collector" if lost else damage.message
        warnings.warn(f"{store.path}: figures are lower bounds: {why}", LowerBoundWarning, stacklevel=3)
    return df
