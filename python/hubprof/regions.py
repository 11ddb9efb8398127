"""Regions, markers and collection start/stop from a Python program, into the hubprof collector loaded in
this process (under `hubprof trace|profile`); every call is a no-op when the program is not profiled.

    import hubprof
    with hubprof.region("forward"):
        run_kernels()
    hubprof.mark("epoch done")
    hubprof.stop(); ...; hubprof.start()

The collector is found like include/hubprof/api.h finds it: already in the process (LD_PRELOAD), else the
library named by HUBPROF_INJECTION_PATH, which `hubprof trace|profile` sets. Looked up once, on first use.
"""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Iterator, Optional

_lock = threading.Lock()
_api: Optional[ctypes.CDLL] = None
_looked_up = False


def _find() -> Optional[ctypes.CDLL]:
    """The collector's library when this process runs under hubprof, else None."""
    global _api, _looked_up
    if _looked_up:
        return _api
    with _lock:
        if _looked_up:
            return _api
        lib: Optional[ctypes.CDLL] = None
        try:
            here = ctypes.CDLL(None)  # the process's global namespace
            here.hubprof_region_begin  # noqa: B018 (raises AttributeError when absent)
            lib = here
        except (OSError, AttributeError):
            path = os.environ.get("HUBPROF_INJECTION_PATH")
            if path:
                try:
                    lib = ctypes.CDLL(path)
                    lib.hubprof_region_begin  # noqa: B018
                except (OSError, AttributeError):
                    lib = None
        if lib is not None:
            lib.hubprof_region_begin.argtypes = [ctypes.c_char_p]
            lib.hubprof_region_begin.restype = None
            lib.hubprof_region_end.argtypes = []
            lib.hubprof_region_end.restype = None
            lib.hubprof_mark.argtypes = [ctypes.c_char_p]
            lib.hubprof_mark.restype = None
            lib.hubprof_start.argtypes = []
            lib.hubprof_start.restype = None
            lib.hubprof_stop.argtypes = []
            lib.hubprof_stop.restype = None
        _api = lib
        _looked_up = True
        return lib


def _name(name: object) -> bytes:
    if isinstance(name, bytes):
        return name
    # surrogates (undecodable file names) pass through as bytes; the collector escapes what is not UTF-8
    return str(name).encode("utf-8", "surrogateescape")


def profiled() -> bool:
    """True when this process runs under hubprof (the calls below reach the collector)."""
    return _find() is not None


def region_begin(name: object) -> None:
    """Open a region on the calling thread (regions nest per thread)."""
    lib = _find()
    if lib is not None:
        lib.hubprof_region_begin(_name(name))


def region_end() -> None:
    """Close the calling thread's innermost region."""
    lib = _find()
    if lib is not None:
        lib.hubprof_region_end()


@contextlib.contextmanager
def region(name: object) -> Iterator[None]:
    """`with hubprof.region("op"):` a region around the block, closed also when it raises."""
    region_begin(name)
    try:
        yield
    finally:
        region_end()


def mark(name: object) -> None:
    """A marker: a region of zero length, now."""
    lib = _find()
    if lib is not None:
        lib.hubprof_mark(_name(name))


def start() -> None:
    """Turn collection on for the whole process (see `hubprof trace --start-paused`)."""
    lib = _find()
    if lib is not None:
        lib.hubprof_start()


def stop() -> None:
    """Turn collection off for the whole process: dispatches are neither recorded nor replayed."""
    lib = _find()
    if lib is not None:
        lib.hubprof_stop()
