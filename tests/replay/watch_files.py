#!/usr/bin/env python3
"""Watch folders while a command runs: prints every name created under them (recursively, as paths
relative to the watched folder they appeared in), one a line, into LIST, then exits with the command's
status. Used to check that the pipeline writes no intermediate files.
usage: watch_files.py LIST DIR... -- CMD ARGS..."""
# SPDX-License-Identifier: MIT
import ctypes
import ctypes.util
import os
import select
import struct
import subprocess
import sys

IN_CREATE, IN_MOVED_TO, IN_ISDIR = 0x100, 0x80, 0x40000000
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def main() -> int:
    sep = sys.argv.index("--")
    listing, dirs, cmd = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1:]
    fd = libc.inotify_init1(os.O_NONBLOCK)
    if fd < 0:
        print("watch_files: inotify unavailable", file=sys.stderr)
        return 125
    wd_path: dict[int, str] = {}

    def watch(path: str) -> None:
        wd = libc.inotify_add_watch(fd, path.encode(), IN_CREATE | IN_MOVED_TO)
        if wd >= 0:
            wd_path[wd] = path

    for d in dirs:
        watch(os.path.realpath(d))
    seen: list[str] = []

    def drain() -> None:
        while True:
            try:
                buf = os.read(fd, 65536)
            except BlockingIOError:
                return
            i = 0
            while i < len(buf):
                wd, mask, _cookie, n = struct.unpack_from("iIII", buf, i)
                name = buf[i + 16:i + 16 + n].rstrip(b"\0").decode(errors="replace")
                i += 16 + n
                full = os.path.join(wd_path.get(wd, "?"), name)
                seen.append(full)
                if mask & IN_ISDIR:
                    watch(full)  # a folder made during the run: what appears in it counts too
                    try:
                        for e in os.listdir(full):
                            seen.append(os.path.join(full, e))
                    except OSError:
                        pass

    proc = subprocess.Popen(cmd)
    while proc.poll() is None:
        select.select([fd], [], [], 0.005)
        drain()
    drain()
    roots = [os.path.realpath(d) for d in dirs]
    with open(listing, "w") as f:
        for p in dict.fromkeys(seen):
            root = next((r for r in roots if p.startswith(r + "/")), None)
            print(os.path.relpath(p, root) if root else p, file=f)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
