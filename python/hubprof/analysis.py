"""The groupings of `hubprof analyze` and the comparison of `hubprof diff` (ha_run and ha_diff in the C
analysis library) as pandas DataFrames: device time, counters and derived metrics per kernel, kernel launch
or dispatch, with the same filters, imputation marks and notes as the CLI."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import ctypes
import os
import warnings
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from . import _lib
from .errors import LowerBoundWarning, make_error

#: Groupings ha_run knows, by the name `by=` takes (ha_group).
GROUPS = {"kernel": 0, "dispatch": 1, "kernel-grid": 2, "region": 3, "region-tree": 4,
          # the sample views (stores made by `hubprof sample`): they need kernel=; "timeline" needs dispatch=N
          "instruction": 5, "line": 6, "function": 7, "basic-block": 8, "source": 9, "timeline": 10,
          # cluster runs
          "rank": 11, "rank-imbalance": 12,
          # stores traced with --api
          "api": 13, "copy": 14}
#: Sort orders (ha_sort): None = time for kernels, order for dispatches.
SORTS = {None: 0, "time": 1, "order": 2, "name": 3, "start": 4}
#: Flags of a cell (HA_CELL_*), in df.attrs["flags"].
IMPUTED, MISSING, DIV0, MIXED, INCOMPLETE, OVER_PEAK = 1, 2, 4, 8, 16, 32
_TEXT, _INT, _REAL = 0, 1, 2
_ROLES = {0: "key", 1: "stat", 2: "counter", 3: "metric", 4: "peak", 5: "flags", 6: "diff"}

P = ctypes.POINTER
_cstrs = P(ctypes.c_char_p)


class _Query(ctypes.Structure):
    """struct ha_query (analysis.h), every field."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("group", ctypes.c_int32),
        ("limit", ctypes.c_int64),
        ("counters", ctypes.c_char_p),
        ("metrics", ctypes.c_char_p),
        ("metric_files", _cstrs),
        ("nmetric_files", ctypes.c_size_t),
        ("kernels", _cstrs),
        ("nkernels", ctypes.c_size_t),
        ("devices", _cstrs),
        ("ndevices", ctypes.c_size_t),
        ("dispatch_first", ctypes.c_uint64),
        ("dispatch_last", ctypes.c_uint64),
        ("sort", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
    ]


def _proto(name: str, restype, *argtypes) -> None:
    f = getattr(_lib.lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_proto("ha_run", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, P(ctypes.c_void_p))
_proto("ha_diff", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double,
       P(ctypes.c_void_p))
_proto("ha_result_error", ctypes.c_char_p, ctypes.c_void_p)
_proto("ha_result_col_role", ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
_proto("ha_result_col_unit", ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)
_proto("ha_result_flags", ctypes.c_uint, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_proto("ha_result_nnotes", ctypes.c_size_t, ctypes.c_void_p)
_proto("ha_result_note", ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)


def _names(v, what: str) -> bytes | None:
    """None (the default), a list or a comma-separated string as the C list ("" = none)."""
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, Iterable):
        items = list(v)
        for x in items:
            if not isinstance(x, str) or not x or "," in x:
                raise ValueError(f"{what}: names must be non-empty strings without ',', not {x!r}")
        return ",".join(items).encode()
    raise ValueError(f"{what} must be None, a string or a list of strings, not {v!r}")


def _array(v, what: str) -> tuple[ctypes.Array | None, int]:
    """A glob or path, or a list of them, as a C array of strings."""
    if v is None:
        return None, 0
    items = [v] if isinstance(v, (str, os.PathLike)) else list(v)
    for x in items:
        if not isinstance(x, (str, os.PathLike)) or not str(x):
            raise ValueError(f"{what}: expected non-empty strings, not {x!r}")
    arr = (ctypes.c_char_p * len(items))(*[os.fsencode(x) for x in items])
    return arr, len(items)


def _range(v) -> tuple[int, int]:
    """dispatch=: an id, (first, last) with None for open ends, or "A-B" / "A-" / "-B"."""
    if v is None:
        return 0, 0
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        if v < 1:
            raise ValueError("dispatch ids start at 1")
        return int(v), int(v)
    if isinstance(v, str):
        a, sep, b = v.partition("-")
        try:
            first = int(a) if a else 0
            last = int(b) if b else 0
        except ValueError:
            raise ValueError(f"dispatch range {v!r}: expected A-B, A, A- or -B") from None
        if not sep:
            last = first
        v = (first or None, last or None)
    if isinstance(v, Sequence) and len(v) == 2:
        first, last = (0 if x is None else int(x) for x in v)
        if first < 0 or last < 0 or (first and last and first > last) or (v[0] is not None and first < 1):
            raise ValueError(f"bad dispatch range {v!r}")
        return first, last
    raise ValueError(f"dispatch must be an id, (first, last) or 'A-B', not {v!r}")


def _query(by: str, limit, counters, metrics, kernel, device, dispatch, sort, metric_files,
           builtin_metrics: bool = True):
    if by not in GROUPS:
        raise ValueError(f"unknown grouping {by!r}; known: {', '.join(GROUPS)}")
    if limit is not None and (not isinstance(limit, (int, np.integer)) or limit < 0):
        raise ValueError("limit must be None or an integer >= 0")
    if sort not in SORTS:
        raise ValueError(f"unknown sort order {sort!r}; known: time, order, name")
    files, nfiles = _array(metric_files, "metric_files")
    kernels, nkernels = _array(kernel, "kernel")
    devices, ndevices = _array(device, "device")
    first, last = _range(dispatch)
    q = _Query(ctypes.sizeof(_Query), GROUPS[by], int(limit or 0), _names(counters, "counters"),
               _names(metrics, "metrics"), files, nfiles, kernels, nkernels, devices, ndevices, first, last,
               SORTS[sort], 0 if builtin_metrics else 1)
    return q, (files, kernels, devices)  # the arrays stay alive with the query


def _frame(res: int, store_paths: str) -> pd.DataFrame:
    """The result table as a DataFrame; units, roles, flags and notes in df.attrs."""
    L = _lib.lib
    nrows, ncols = L.ha_result_nrows(res), L.ha_result_ncols(res)
    data, units, roles, flags = {}, {}, {}, {}
    for c in range(ncols):
        name = _lib.decode(L.ha_result_col_name(res, c))
        kind = L.ha_result_col_kind(res, c)
        if kind == _TEXT:
            data[name] = pd.Series([_lib.decode(L.ha_result_text(res, i, c)) for i in range(nrows)], dtype=str)
        elif kind == _INT:
            data[name] = np.array([L.ha_result_int(res, i, c) for i in range(nrows)], dtype=np.int64)
        else:
            data[name] = np.array([L.ha_result_num(res, i, c) for i in range(nrows)], dtype=np.float64)
        units[name] = _lib.decode(L.ha_result_col_unit(res, c))
        roles[name] = _ROLES.get(L.ha_result_col_role(res, c), "?")
        if roles[name] in ("counter", "metric", "peak", "diff") or kind == _REAL:
            f = np.array([L.ha_result_flags(res, i, c) for i in range(nrows)], dtype=np.uint8)
            if f.any():
                flags[name] = f
    df = pd.DataFrame(data)
    df.attrs["units"] = units
    df.attrs["roles"] = roles
    df.attrs["flags"] = flags
    df.attrs["notes"] = [_lib.decode(L.ha_result_note(res, i)) for i in range(L.ha_result_nnotes(res))]
    df.attrs["lost_records"] = int(L.ha_result_lost_records(res))
    return df


def _fail(st: int, store, what: str, res):
    """The exception for a failed ha_run / ha_diff; res is the result that holds why."""
    why = _lib.decode(_lib.lib.ha_result_error(res)) if res else ""
    if st == -1 and why:  # HP_ERR_INVALID: a bad request (unknown counter or metric, bad definitions)
        return ValueError(why)
    return make_error(st, store._h, store.path, f"{what}: {why}" if why else what)


def analyze(store, by: str = "kernel", limit: int | None = None, *, counters=None, metrics=None,
            kernel=None, device=None, dispatch=None, sort: str | None = None, metric_files=None,
            builtin_metrics: bool = True) -> pd.DataFrame:
    """Run an analysis on an open store, as `hubprof analyze` does.

    by="kernel": one row per (device, kernel), columns device, kernel (text), calls, timed_calls,
    total_ns, min_ns, max_ns (int64), avg_ns, percent (float64; NaN when no timed calls); "kernel-grid"
    adds grid and workgroup ("4096x1x1") after kernel; "dispatch": device, pid, dispatch (the collector's
    id), row (the store's id), kernel, grid, workgroup, start_ns, duration_ns, percent. Then one float
    column per counter (a group's mean per dispatch) and per metric ("<metric>_pct_peak" for one with a
    peak), and the text columns "imputed" and "incomplete" naming the row's imputed and unmeasured values,
    and "over_peak" naming its metrics above their physical peak with their share ("cpu_util=310%").

    by="region" / "region-tree": per region (docs/cli/analyze.md): category, region, calls, total_ns,
    avg_ns, exclusive_ns, dispatches, kernel_ns, then counters and metrics as totals over the region's
    calls (the sum of the values of the dispatches inside it).

    The sample views of a store made by `hubprof sample` (docs/sampling.md), with kernel= (globs):
    by="instruction": samples, percent, offset ("0x10bf"), instruction (disassembly), line ("file:3"),
    function; "line": samples, percent, line, source (the line's text, or why it has none); "function":
    samples, percent, function; "basic-block": samples, percent, block, what; most samples first.
    When samples carry stall reasons (GPU PC sampling), those four views end with "stall" (the top reason)
    and "stall_reasons" (the top three with their share: "long_scoreboard 95%, selected 5%").
    by="source": line (int), samples, percent, source: the kernel's program source annotated line by line.
    by="timeline" with dispatch=N: time_ns (from the dispatch's start), counter, value. df.attrs["notes"] say
    why lines or instructions are missing (a note starting "warning: " when a code object's bytes are).
    by="rank" (cluster runs, docs/cluster.md): one row per (MPI rank, device, kernel): rank (-1 for a
    process without one), host, pid, device, kernel, calls, timed_calls, total_ns, avg_ns, min_ns, max_ns,
    percent (of the rank's device time). by="rank-imbalance": one row per kernel name over the ranks that
    ran it: kernel, ranks, calls, min_ns, median_ns, mean_ns, max_ns, imbalance_pct, fastest_rank,
    slowest_rank, slowest_host. limit: rows per rank / rows.
    by="api" (stores traced with --api): per OpenCL function: function, calls, total_ns, avg_ns, min_ns,
    max_ns, percent. by="copy": per direction (H2D, D2H, D2D, FILL): direction, copies, bytes, timed_copies,
    total_ns, avg_ns, bandwidth_gbs.

    counters / metrics: None = every counter measured in the store / every metric its counters give;
    a list or "a,b"; [] or "" for none. kernel, device: glob patterns (a string or a list: any matches).
    dispatch: a collector dispatch id, (first, last) or "A-B". sort: None, "time", "start", "order" or "name".
    limit keeps the first N rows of each device. metric_files: more definition files (docs/metrics.md).

    df.attrs: "units" and "roles" per column, "flags" (per measure column with any, an array of
    IMPUTED | MISSING | DIV0 | MIXED | INCOMPLETE bits), "notes" (how figures were obtained),
    "lost_records", "damage". Unknown counters or metrics and bad definition files raise ValueError; a
    LowerBoundWarning says when the collector lost records or the store is damaged."""
    q, keep = _query(by, limit, counters, metrics, kernel, device, dispatch, sort, metric_files, builtin_metrics)
    res = ctypes.c_void_p()
    st = _lib.lib.ha_run(store._handle(), ctypes.byref(q), ctypes.byref(res))
    try:
        if st != 0:
            raise _fail(st, store, f"analyzing by {by}", res.value)
        df = _frame(res.value, store.path)
    finally:
        _lib.lib.ha_result_free(res)
    del keep
    damage = store.damage
    df.attrs["damage"] = damage
    lost = df.attrs["lost_records"]
    if lost or damage:
        why = f"{lost} records were lost by the collector" if lost else damage.message
        warnings.warn(f"{store.path}: figures are lower bounds: {why}", LowerBoundWarning, stacklevel=3)
    return df


def diff(a, b, by: str = "kernel", limit: int | None = None, *, metrics=None, counters=(), kernel=None,
         device=None, metric_files=None, threshold: float = 1.0) -> pd.DataFrame:
    """Compare two open stores per kernel, as `hubprof diff A B` does.

    by="kernel" or "kernel-grid"; "region" / "region-tree" match regions by category and name / path
    (key columns category, region / category, path; times inclusive). Columns: device, kernel, [grid,
    workgroup], status ("both", "new": only
    in b, "missing": only in a), calls_a, calls_b, total_ns_a, total_ns_b, total_ns_delta,
    total_ns_delta_pct, avg_ns_a, avg_ns_b, avg_ns_delta, avg_ns_delta_pct, time ("faster", "slower",
    "same": b's average against a's), then per metric and counter X: X_a, X_b, X_delta, X_delta_pct, X_dir
    ("higher", "lower", "same"). Changes under `threshold` percent are "same". metrics=None: those both
    stores give; counters: none unless listed. Rows: most device time first."""
    if by not in ("kernel", "kernel-grid", "region", "region-tree"):
        raise ValueError(f"diff groups by kernel, kernel-grid, region or region-tree, not {by!r}")
    if not isinstance(threshold, (int, float)) or not threshold >= 0:
        raise ValueError("threshold must be a number >= 0")
    q, keep = _query(by, limit, counters, metrics, kernel, device, None, None, metric_files)
    res = ctypes.c_void_p()
    st = _lib.lib.ha_diff(a._handle(), b._handle(), ctypes.byref(q), float(threshold), ctypes.byref(res))
    try:
        if st != 0:
            raise _fail(st, a, "comparing stores", res.value)
        df = _frame(res.value, a.path)
    finally:
        _lib.lib.ha_result_free(res)
    del keep
    return df
