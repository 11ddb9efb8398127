"""Store.export() and Store.report(): a store's run as a timeline (Perfetto, Chrome JSON, OTF2) or as an HTML
page by running the `hubprof export` / `hubprof report` command, found as $HUBPROF_CLI, beside the loaded libhubprof.so (a source tree's build/), or on PATH."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path

from . import _lib
from .errors import Error, InvalidArgumentError

FORMATS = ("perfetto", "chrome", "otf2")


def find_cli() -> str:
    """Path of the hubprof command; FileNotFoundError naming where it was looked for."""
    env = os.environ.get("HUBPROF_CLI")
    if env:
        return env
    beside = Path(_lib.path).parent / "hubprof" if os.sep in _lib.path else None
    if beside and beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("hubprof")
    if found:
        return found
    raise FileNotFoundError("hubprof: the `hubprof` command is needed for export: not in $HUBPROF_CLI, "
                            f"beside {_lib.path}, or on PATH (build it with `make` or install it)")


def export(store_path: str | os.PathLike, out: str | os.PathLike, format: str = "perfetto",
           force: bool = False) -> Path:
    """Write the store at store_path as a timeline at `out` (for otf2 a folder); returns `out`. A damaged
    store is exported up to its damage with a warning. Raises InvalidArgumentError for an unknown format
    and Error with the command's one-line message when the store cannot be read or `out` written."""
    if format not in FORMATS:
        raise InvalidArgumentError(f"unknown export format {format!r} (one of {', '.join(FORMATS)})", -1)
    args = [find_cli(), "export", "-q", os.fspath(store_path), "-o", os.fspath(out), "--format", format]
    return _run(args, store_path, out, force)


def report(store_path: str | os.PathLike, out: str | os.PathLike, baseline: str | os.PathLike | None = None,
           force: bool = False) -> Path:
    """Write the store at store_path as an HTML report at `out` (compared with the store at `baseline` when
    given); returns `out`. Errors and warnings as export()."""
    args = [find_cli(), "report", "-q", os.fspath(store_path), "-o", os.fspath(out)]
    if baseline is not None:
        args += ["--baseline", os.fspath(baseline)]
    return _run(args, store_path, out, force)


def _run(args: list[str], store_path: str | os.PathLike, out: str | os.PathLike, force: bool) -> Path:
    """Run the command; its error line as Error, its warnings as RuntimeWarning."""
    if force:
        args.append("-f")
    p = subprocess.run(args, capture_output=True, text=True, errors="replace")
    lines = [ln.removeprefix("hubprof: ") for ln in p.stderr.splitlines() if ln.strip()]
    if p.returncode != 0:
        raise Error(lines[-1] if lines else f"hubprof {args[1]} exited {p.returncode}", -3, os.fspath(store_path))
    for ln in lines:
        warnings.warn(ln.removeprefix("warning: "), RuntimeWarning, stacklevel=4)
    return Path(out)
