"""hubprof.merge(): several stores of any formats into one through the hub's assembly pipeline
(hubprof/assemble.h, the same as `hubprof merge`, trace and profile use): ids remapped; nodes, agents,
kernels … de-duplicated; passes kept apart; optionally multiplex imputation and application-replay matching;
the output appears only when everything succeeds."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import ctypes
import os
import warnings
from typing import Callable, Iterable, Optional, Sequence, Union

from . import _lib
from .errors import DamagedInputWarning, HubprofWarning, error_class, make_error
from .schema import TABLES
from .store import HP_CREATE, Store, open_handle

PathOrStore = Union[str, "os.PathLike[str]", Store]

_IMPUTE = {None: 0, "none": 0, "kernel": 1, "launch": 2, "auto": 3}
_MATCH = {"grid": 0, "name": 1, "all": 2}


def merge(inputs: Iterable[PathOrStore], output: str | os.PathLike, format: str = "rocpd",
          force: bool = False, strict: bool = False, impute: Optional[str] = None,
          plan: Optional[str] = None, runs: Optional[Sequence[int]] = None, match: str = "grid",
          progress: Optional[Callable[[int, int], None]] = None) -> dict:
    """Merge stores (paths or open Stores) into a new store at `output` of `format`.

    impute: None (nothing imputed), "kernel" or "launch" (iteration multiplexing: every counter a dispatch
    did not measure gets the mean of its kernel's — or launch's — measured values in its process, where
    every pass was measured), or "auto" (each input as its metadata says). `plan` ("a,b;c") overrides the
    inputs' pass_plan. runs: for application replay, the run (0 = first) each input came from; later runs'
    counter values are attached to the first run's dispatches (processes paired by command line, dispatches
    by `match`: "grid", "name" or "all"). progress(done, total) is called with rows read (total 0 unknown).

    Returns {"inputs", "damaged_inputs", "skipped_inputs", "duplicate_processes", "metadata_conflicts",
    "measured_values", "imputed_values", "keys", "incomplete_keys", "unmatched_dispatches",
    "unmatched_processes", "lost_records", "unfinished_processes", "unfinished_dispatches",
    "not_selected_dispatches", "incomplete_dispatches", "rows_in": {table: rows}, "rows_out": {table: rows}};
    unfinished_*: processes that did not close their logs (killed: their end time unknown) and the dispatches
    kept of them, each also named in a HubprofWarning; incomplete_dispatches: of those, the ones still running
    when their process died (a sampled run: kept without device times, with their samples) or launched and not
    seen to end (a run not sampled: from the log's launch file, without device times);
    not_selected_dispatches: the inputs' metadata dispatches_not_selected summed
    (hubprof trace|profile --kernel, --dispatch-range, --region).
    An existing output raises FileExistsError unless force=True. A damaged input (a log cut by a crash)
    gives what is complete with a DamagedInputWarning; strict=True raises its error instead. Other notes of
    the pipeline (incomplete multiplex keys, unmatched dispatches) come as HubprofWarning."""
    items = list(inputs)
    if not items:
        raise ValueError("merge: no input stores given")
    if impute not in _IMPUTE:
        raise ValueError(f"merge: impute must be one of None, 'kernel', 'launch', 'auto', not {impute!r}")
    if match not in _MATCH:
        raise ValueError(f"merge: match must be 'grid', 'name' or 'all', not {match!r}")
    if runs is not None:
        runs = list(runs)
        if len(runs) != len(items) or any(not isinstance(r, int) or r < 0 for r in runs):
            raise ValueError("merge: runs needs one run number (0, 1, …) per input")
    out_path = os.fspath(output)
    if not force and os.path.lexists(out_path):
        raise FileExistsError(f"{out_path}: already exists (use force=True to replace it)")
    notes: list[tuple[type, str]] = []

    def on_warn(_ctx, line):
        text = _lib.decode(line)
        damaged = text.endswith("(taking what is complete)") or text.endswith("(skipped: nothing complete in it)")
        notes.append((DamagedInputWarning if damaged else HubprofWarning, text))

    def on_progress(_ctx, done, total):
        if progress:
            progress(int(done), int(total))

    warn_cb, progress_cb = _lib.WARN_FN(on_warn), _lib.PROGRESS_FN(on_progress)
    opts = _lib.hp_assemble_opts(size=ctypes.sizeof(_lib.hp_assemble_opts), strict=int(bool(strict)),
                                 impute=_IMPUTE[impute], plan=_lib.encode(plan) if plan else None,
                                 match=_MATCH[match], progress=progress_cb, warn=warn_cb)
    opened: list[Store] = []
    asm = ctypes.c_void_p()
    out = None
    stats = _lib.hp_assemble_stats()
    stats.size = ctypes.sizeof(stats)
    try:
        st = _lib.lib.hp_assembly_new(ctypes.byref(opts), ctypes.byref(asm))
        if st != 0:
            raise error_class(st)("merge: cannot start the assembly", st, out_path)
        for i, it in enumerate(items):
            if isinstance(it, Store):
                s = it
            else:
                if os.path.abspath(os.fspath(it)) == os.path.abspath(out_path):
                    raise ValueError(f"{out_path}: is both an input and the output")
                s = Store(it)
                opened.append(s)
            st = _lib.lib.hp_assembly_add_store(asm, s._handle(), runs[i] if runs else 0)
            if st != 0:
                raise error_class(st)(_lib.decode(_lib.lib.hp_assembly_error(asm)), st, s.path)
        out = open_handle(out_path, format, HP_CREATE).value
        st = _lib.lib.hp_assembly_write(asm, out, ctypes.byref(stats))
        if st != 0:
            msg = _lib.decode(_lib.lib.hp_assembly_error(asm))
            raise error_class(st)(msg, st, out_path) if msg else make_error(st, out, out_path, "merging")
        st = _lib.lib.hp_store_commit(out)  # the output appears now
        if st != 0:
            raise make_error(st, out, out_path, "committing")
    finally:
        for cls, text in notes:
            warnings.warn(text, cls, stacklevel=3)
        if out:
            _lib.lib.hp_store_abort(out)  # after a commit it only releases the handle
        _lib.lib.hp_assembly_free(asm)
        for s in opened:
            s.close()
    m = stats.merge
    return {
        "inputs": int(m.inputs),
        "damaged_inputs": int(m.damaged_inputs),
        "skipped_inputs": int(stats.skipped_inputs),
        "duplicate_processes": int(m.duplicate_processes),
        "metadata_conflicts": int(m.metadata_conflicts),
        "measured_values": int(stats.measured_values),
        "imputed_values": int(stats.imputed_values),
        "keys": int(stats.keys),
        "incomplete_keys": int(stats.incomplete_keys),
        "unmatched_dispatches": int(stats.unmatched_dispatches),
        "unmatched_processes": int(stats.unmatched_processes),
        "lost_records": int(stats.lost_records),
        "unfinished_processes": int(stats.unfinished_processes),
        "unfinished_dispatches": int(stats.unfinished_dispatches),
        "not_selected_dispatches": int(stats.not_selected_dispatches),
        "incomplete_dispatches": int(stats.incomplete_dispatches),
        "rows_in": {t: int(m.rows_in[i]) for i, t in enumerate(TABLES)},
        "rows_out": {t: int(m.rows_out[i]) for i, t in enumerate(TABLES)},
    }
