#!/usr/bin/env bash
# Size limits of the sources (docs/development.md, "Checks"): no file under src/ (.c .h .cu) over 1 500 lines and no
# function over 200, counted from the line of its opening brace to the line of its closing one (a brace-depth scan
# of the top-level bodies, comments, strings and preprocessor lines skipped); and the scan itself, on a synthetic
# tree, finds a long function and a long file. usage: check_sizes.sh [DIR...] (default: src)
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh

MAX_FILE=1500
MAX_FUNC=200

# scan DIR...: prints "FILE:LINE: function NAME is N lines" and "FILE: N lines" for what is over
scan() {
  python3 - "$MAX_FILE" "$MAX_FUNC" "$@" <<'PY'
import os, re, sys

max_file, max_func, dirs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]


def blank(text):
    """The text with comments, strings, character constants and preprocessor lines blanked (newlines kept)."""
    out, i, n, bol = [], 0, len(text), True
    while i < n:
        c = text[i]
        if bol and c == "#" or (bol and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            j = i
            while j < n and text[j] != "\n":  # a directive, with its continuation lines
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i, bol = j, False
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j]) + c)
            i, bol = j + 1, False
            continue
        out.append(c)
        bol = c == "\n" or (bol and c in " \t")
        i += 1
    return "".join(out)


def functions(text):
    """(name, first line, number of lines) of each top-level function body."""
    text = blank(text)
    out, depth, head, start, line = [], 0, "", None, 1
    for c in text:
        if c == "\n":
            line += 1
        if depth == 0:
            if c == "{":
                h = " ".join(head.split())
                m = re.search(r"([A-Za-z_]\w*)\s*\([^;]*\)\s*(__attribute__\s*\(\(.*\)\)\s*)?$", h)
                is_func = m and not re.match(r"(typedef|struct|union|enum)\b", h) and "=" not in h
                start = (m.group(1), line) if is_func else None
                depth, head = 1, ""
            elif c == ";":
                head = ""
            else:
                head += c
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    if start:
                        out.append((start[0], start[1], line - start[1] + 1))
                    start, head = None, ""
    return out


bad = 0
for d in dirs:
    for root, _, files in sorted(os.walk(d)):
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".cu")):
                continue
            p = os.path.join(root, f)
            text = open(p, encoding="utf-8", errors="replace").read()
            nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if nlines > max_file:
                print(f"{p}: {nlines} lines (at most {max_file})")
                bad += 1
            for name, first, n in functions(text):
                if n > max_func:
                    print(f"{p}:{first}: function {name} is {n} lines (at most {max_func})")
                    bad += 1
sys.exit(1 if bad else 0)
PY
}

# 1. the tree
[ $# -gt 0 ] || set -- src
if out=$(scan "$@"); then ok; else
  bad "sources over the size limits (split them along their jobs):"
  echo "$out" | sed 's/^/  /' >&2
fi

# 2. the scan, on a synthetic tree: functions of 201 lines (braces in comments and strings not counted, the
# opening brace at the end of the head or on a line of its own) and a file of 1 501 lines fail; a function of
# 200 lines and a struct of 300 do not
mkdir -p "$T/ok" "$T/long" "$T/big"
body() { # body N: N-2 lines of a function's inside
  for ((i = 0; i < $1 - 2; i++)); do echo '  x += 1; /* { */ s = "}{"; c = '"'{'"';'; done
}
{
  printf 'static int x;\nstruct big {\n'
  for ((i = 0; i < 300; i++)); do echo "  int f$i;"; done
  printf '};\nint fits(void)\n{\n'
  body 200
  printf '}\nint one_line(void) { return 0; }\n'
} >"$T/ok/a.c"
{
  printf '#define M(a) { a }\nstatic int\ntoo_long(int a, /* ( */\n         int b) {\n'
  body 201
  printf '}\nvoid\nbrace_below(void)\n{\n'
  body 201
  printf '}\n'
} >"$T/long/b.c"
{ for ((i = 0; i < 1501; i++)); do echo "int v$i;"; done; } >"$T/big/c.h"
scan "$T/ok" >"$T/out.ok" && ok || bad "the scan fails a tree within the limits: $(cat "$T/out.ok")"
scan "$T/long" >"$T/out.long"
[ $? -ne 0 ] && grep -qF "b.c:4: function too_long is 201 lines (at most 200)" "$T/out.long" &&
  grep -qF "b.c:207: function brace_below is 201 lines (at most 200)" "$T/out.long" && ok ||
  bad "the scan does not report the functions of 201 lines: $(cat "$T/out.long")"
scan "$T/big" >"$T/out.big"
[ $? -ne 0 ] && grep -qF "c.h: 1501 lines (at most 1500)" "$T/out.big" && ok ||
  bad "the scan does not report a file of 1 501 lines: $(cat "$T/out.big")"

echo "check_sizes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
