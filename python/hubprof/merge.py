"""hubprof.merge(): several stores of any formats into one, through hp_merge (ids remapped, nodes,
agents, kernels … de-duplicated, passes kept apart); the output appears only when the merge succeeds."""
from __future__ import annotations

import ctypes
import os
import warnings
from typing import Iterable, Union

from . import _lib
from .errors import DamagedInputWarning, error_class, make_error
from .schema import TABLES
from .store import HP_CREATE, Store, open_handle

PathOrStore = Union[str, "os.PathLike[str]", Store]


def merge(inputs: Iterable[PathOrStore], output: str | os.PathLike, format: str = "rocpd",
          force: bool = False, strict: bool = False) -> dict:
    """Merge stores (paths or open Stores) into a new store at `output` of `format`.

    Returns {"inputs": n, "damaged_inputs": n, "rows_in": {table: rows}, "rows_out": {table: rows}}.
    An existing output raises FileExistsError unless force=True. A damaged input (a log cut by a crash)
    is merged up to its damage with a DamagedInputWarning; strict=True raises its error instead."""
    items = list(inputs)
    if not items:
        raise ValueError("merge: no input stores given")
    out_path = os.fspath(output)
    if not force and os.path.lexists(out_path):
        raise FileExistsError(f"{out_path}: already exists (use force=True to replace it)")
    opened: list[Store] = []
    stores: list[Store] = []
    out = None
    try:
        for it in items:
            if isinstance(it, Store):
                s = it
            else:
                if os.path.abspath(os.fspath(it)) == os.path.abspath(out_path):
                    raise ValueError(f"{out_path}: is both an input and the output")
                s = Store(it)
                opened.append(s)
            s._handle()
            stores.append(s)
            dmg = s.damage
            if dmg:
                if strict:
                    raise error_class(dmg.status)(dmg.message, dmg.status, s.path)
                warnings.warn(f"{dmg.message} (merging what is complete)", DamagedInputWarning, stacklevel=2)
        out = open_handle(out_path, format, HP_CREATE).value
        handles = (ctypes.c_void_p * len(stores))(*[s._h for s in stores])
        stats = _lib.hp_merge_stats()
        stats.size = ctypes.sizeof(stats)
        st = _lib.lib.hp_merge(out, handles, len(stores), ctypes.byref(stats))
        if st != 0:
            raise make_error(st, out, out_path, "merging")
        st = _lib.lib.hp_store_commit(out)  # the output appears now
        if st != 0:
            raise make_error(st, out, out_path, "committing")
    finally:
        if out:
            _lib.lib.hp_store_abort(out)  # after a commit it only releases the handle
        for s in opened:
            s.close()
    return {
        "inputs": int(stats.inputs),
        "damaged_inputs": int(stats.damaged_inputs),
        "duplicate_processes": int(stats.duplicate_processes),
        "metadata_conflicts": int(stats.metadata_conflicts),
        "rows_in": {t: int(stats.rows_in[i]) for i, t in enumerate(TABLES)},
        "rows_out": {t: int(stats.rows_out[i]) for i, t in enumerate(TABLES)},
    }
