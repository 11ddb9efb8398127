"""The `hubprof` command of a pip-installed package: runs the hubprof program bundled beside the library
(hubprof/_native/hubprof, with the collector it loads into applications), replacing this Python process."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import os
import sys
from pathlib import Path

_NATIVE = Path(__file__).resolve().parent / "_native" / "hubprof"


def program() -> str:
    """Path of the hubprof program this package runs: $HUBPROF_CLI, else the one bundled in the package,
    else the source tree's build/hubprof (an editable install or PYTHONPATH=python). Never looked up on
    PATH, where the `hubprof` found may be this package's own console script. FileNotFoundError when there
    is none."""
    env = os.environ.get("HUBPROF_CLI")
    tried = [Path(env)] if env else []
    tried += [_NATIVE, Path(__file__).resolve().parent.parent.parent / "build" / "hubprof"]
    for p in tried:
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    raise FileNotFoundError("hubprof: no hubprof program; tried " + ", ".join(map(str, tried))
                            + " (reinstall the package, build it with make, or set HUBPROF_CLI)")


def run_app(command: str, app: list, output: str | os.PathLike, options: tuple = (), check: bool = True):
    """`hubprof COMMAND -q -o OUTPUT [OPTIONS] -- APP...` (trace, sample, profile): the run's
    CompletedProcess (hubprof exits with the application's status; its output and errors pass through).
    Raises subprocess.CalledProcessError for a non-zero status when check is true."""
    import subprocess

    args = [program(), command, "-q", "-o", os.fspath(output), *map(str, options), "--", *map(str, app)]
    return subprocess.run(args, check=check)


def main() -> None:
    """Console entry point: exec the program with this command's arguments (exit status and signals are
    the program's own)."""
    try:
        path = program()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        raise SystemExit(127) from None
    os.execv(path, ["hubprof", *sys.argv[1:]])


if __name__ == "__main__":
    main()
