#!/usr/bin/env python3
# Docs that match the code (issue 28): every option `hubprof CMD -h` lists (written from the option tables that
# parse it) is in the option table of docs/cli/CMD.md with the same short name, and every option such a table
# names is accepted by CMD (shown in -h, or an old spelling the parser still takes); README.md's command table
# names every subcommand `hubprof --help` lists, and only those, each with a docs/cli page that exists; the
# folders of its layout table exist. Prints each mismatch; exit 1 when there is one.
# usage: check_docs.py HUBPROF   (run from the repository root)
# SPDX-License-Identifier: MIT
import os
import re
import subprocess
import sys

HP = sys.argv[1]
bad = []


def run(*args):
    p = subprocess.run([HP, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def commands():
    _, out, _ = run("--help")
    return [m.group(1) for m in re.finditer(r"^  ([a-z]+) +\S", out, re.M)]


def help_options(cmd):
    """{long name: short letter or ''} from `hubprof CMD -h`."""
    rc, out, err = run(cmd, "-h")
    if rc != 0:
        bad.append(f"hubprof {cmd} -h exited {rc}: {err.strip()}")
    opts = {}
    for m in re.finditer(r"^  (?:-([A-Za-z0-9]), )?--([a-z0-9][a-z0-9-]*)|^      --([a-z0-9][a-z0-9-]*)", out, re.M):
        if m.group(2):
            opts[m.group(2)] = m.group(1) or ""
        else:
            opts[m.group(3)] = ""
    return opts


def doc_options(path):
    """({long name: short letter or ''}, {short letters named alone}) from the first cells of the page's
    `| option |` tables. A short name belongs to a long one written right after it: `-q, --quiet` in one code
    span, or `-q`, `--quiet` in two; a short name alone (`-o, -F, -f` "as for trace") stands for the option
    of that short name."""
    opts, alone = {}, set()
    in_table = False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^\| *option *\|", line):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if not in_table or re.match(r"^\|[-: |]+\|$", line.strip()):
            continue
        cell = re.split(r"(?<!\\)\|", line)[1]
        text = " ".join(re.findall(r"`([^`]*)`", cell)).replace("`", "")
        # tokens in order: -x and --name
        toks = re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*|-[A-Za-z0-9](?![\w-]))", text)
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.startswith("--"):
                opts.setdefault(t[2:], "")
            elif i + 1 < len(toks) and toks[i + 1].startswith("--") and re.search(
                re.escape(t) + r",? +" + re.escape(toks[i + 1]) + r"\b", text
            ):
                opts[toks[i + 1][2:]] = t[1]
                i += 1
            else:
                alone.add(t[1])
            i += 1
    return opts, alone


def accepted(cmd, name):
    """The parser takes --name (an old spelling hidden from -h): anything but 'unknown option'."""
    _, _, err = run(cmd, "--" + name + "=x", "--help")
    return "unknown option" not in err


cmds = commands()
if len(cmds) < 10:
    bad.append(f"hubprof --help lists {len(cmds)} commands: {cmds}")
checked = 0
for cmd in cmds:
    page = f"docs/cli/{cmd}.md"
    if not os.path.exists(page):
        bad.append(f"{cmd}: no {page}")
        continue
    h, (d, alone) = help_options(cmd), doc_options(page)
    for name, short in sorted(h.items()):
        checked += 1
        if name == "help":  # -h, --help on every subcommand: docs/cli/exit-codes.md#options says it once
            continue
        if name not in d and not (short and short in alone):
            bad.append(f"{page}: --{name} (in 'hubprof {cmd} -h') is not in the option table")
        elif name in d and short != d[name]:
            bad.append(f"{page}: --{name}: short name '-{d[name]}' in the docs, '-{short}' in -h")
    shorts = {v for v in h.values() if v}
    for x in sorted(alone - shorts - {"h"}):
        bad.append(f"{page}: -{x} is in the option table but 'hubprof {cmd} -h' has no such short name")
    for name in sorted(set(d) - set(h)):
        checked += 1
        if not accepted(cmd, name):
            bad.append(f"{page}: --{name} is in the option table but 'hubprof {cmd}' does not accept it")

# README.md: the command table and the layout table
readme = open("README.md", encoding="utf-8").read()
table_cmds, links = set(), []
for line in readme.splitlines():
    m = re.match(r"^\| `hubprof ([a-z]+)", line)
    if m:
        for c in re.findall(r"`hubprof ([a-z]+)", line.split("|")[1]):
            table_cmds.add(c)
        links += re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", line)
for c in sorted(set(cmds) - table_cmds):
    bad.append(f"README.md: the command table lacks 'hubprof {c}'")
for c in sorted(table_cmds - set(cmds)):
    bad.append(f"README.md: the command table names 'hubprof {c}', which hubprof --help does not list")
for link in links:
    if not os.path.exists(link):
        bad.append(f"README.md: the command table links {link}, which does not exist")
for m in re.finditer(r"^\| `([^`]+/)` \|", readme, re.M):
    if not os.path.isdir(m.group(1)):
        bad.append(f"README.md: the layout table names {m.group(1)}, which is not a folder")
checked += len(cmds) + len(links)

for b in bad:
    print("MISMATCH:", b)
print(f"check_docs: {len(cmds)} commands, {checked} options and links checked, {len(bad)} mismatches")
sys.exit(1 if bad else 0)
