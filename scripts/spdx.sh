#!/usr/bin/env bash
# Adds the line `SPDX-License-Identifier: MIT` to every tracked source file (.c .h .py .sh .mk, Makefile) that
# lacks it, right after its purpose comment (and shebang). Idempotent. usage: scripts/spdx.sh [REPO_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
git ls-files -z | python3 -c '
import os, re, sys

TAG = "SPDX-License-Identifier: MIT"
SOURCE = re.compile(r"(\.(c|h|py|sh|mk)|(^|/)Makefile)$")


def insert_at(lines, path):
    """Index of the line to insert before, and the line itself, for one file."""
    if path.endswith((".c", ".h")):
        if lines and lines[0].lstrip().startswith("/*"):
            end = next((i for i, l in enumerate(lines) if "*/" in l), None)
            if end is not None:
                return end + 1, "/* " + TAG + " */\n"
        if lines and lines[0].startswith("//"):
            i = 0
            while i < len(lines) and lines[i].startswith("//"):
                i += 1
            return i, "// " + TAG + "\n"
        return 0, "/* " + TAG + " */\n"
    i = 1 if lines and lines[0].startswith("#!") else 0
    if path.endswith(".py") and i < len(lines) and lines[i].lstrip().startswith(("\"\"\"", "\x27\x27\x27")):
        quote = lines[i].lstrip()[:3]
        if lines[i].count(quote) >= 2:
            return i + 1, "# " + TAG + "\n"
        end = next((j for j in range(i + 1, len(lines)) if quote in lines[j]), None)
        if end is not None:
            return end + 1, "# " + TAG + "\n"
    while i < len(lines) and lines[i].startswith("#") and not lines[i].startswith("#!"):
        i += 1
    return i, "# " + TAG + "\n"


changed = 0
for path in sys.stdin.read().split("\0"):
    if not path or not SOURCE.search(path) or not os.path.isfile(path) or os.path.islink(path):
        continue
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.readlines()
    if any("SPDX-License-Identifier:" in l for l in lines[:15]):
        continue
    at, line = insert_at(lines, path)
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    lines.insert(at, line)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.writelines(lines)
    changed += 1
print(f"spdx: {changed} file(s) given the SPDX line")
'
