"""hubprof: Python bindings of the hub, hubprof's storage library (every table of a profile as a pandas
DataFrame, the analyses of `hubprof analyze`, merge, and writing stores), over its C API through ctypes.

    import hubprof
    with hubprof.open("run.db") as s:
        df = s.table("dispatch")
        top = s.analyze(by="kernel")
"""
# SPDX-License-Identifier: MIT
from __future__ import annotations

from . import _cli, _lib
from .analysis import GROUPS, diff, read_list_file
from .errors import (
    CancelledError,
    ConstraintError,
    CorruptError,
    DamagedInputWarning,
    Error,
    FormatError,
    HubprofWarning,
    InvalidArgumentError,
    IOFailedError,
    LowerBoundWarning,
    NotFoundError,
    OutOfMemoryError,
    TruncatedError,
    UnsupportedError,
    VersionError,
)
from .merge import merge
from .regions import mark, profiled, region, region_begin, region_end, start, stop
from .schema import TABLES, Column, Table, describe
from .store import Damage, Store, open
from .writer import Writer, create

__version__ = _lib.decode(_lib.lib.hp_version())  # one version source: the VERSION file, via the C library


def version() -> str:
    """Version of the loaded C library (the source tree's VERSION file, e.g. "0.1.0")."""
    return _lib.decode(_lib.lib.hp_version())


def formats() -> list[str]:
    """Names of the store formats compiled into the loaded C library ("rocpd", "log", "parquet")."""
    arr = _lib.lib.hp_formats()
    out = []
    i = 0
    while arr[i]:
        out.append(_lib.decode(arr[i]))
        i += 1
    return out


def trace(app, output, options=(), check: bool = True):
    """Run `hubprof trace -q -o OUTPUT [OPTIONS] -- APP...` (app: the program and its arguments, a list) with
    the hubprof program of this package; returns the CompletedProcess (the application's exit status).
    Open the result with hubprof.open(output)."""
    return _cli.run_app("trace", list(app), output, tuple(options), check)


def sample(app, output, options=(), check: bool = True):
    """Run `hubprof sample -q -o OUTPUT [OPTIONS] -- APP...`, as trace()."""
    return _cli.run_app("sample", list(app), output, tuple(options), check)


def program_path() -> str:
    """Path of the hubprof program that trace(), sample(), Store.export() and the `hubprof` command run."""
    return _cli.program()


def library_path() -> str:
    """Path of the C library these bindings loaded (see HUBPROF_LIB)."""
    return _lib.path


__all__ = [
    "diff", "read_list_file",
    "open", "create", "merge", "formats", "version", "library_path", "describe", "TABLES", "GROUPS",
    "trace", "sample", "program_path",
    "Store", "Writer", "Table", "Column", "Damage",
    "region", "region_begin", "region_end", "mark", "start", "stop", "profiled",
    "Error", "InvalidArgumentError", "OutOfMemoryError", "IOFailedError", "NotFoundError", "FormatError",
    "VersionError", "CorruptError", "TruncatedError", "UnsupportedError", "ConstraintError", "CancelledError",
    "HubprofWarning", "LowerBoundWarning", "DamagedInputWarning",
]
