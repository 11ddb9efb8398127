#!/usr/bin/env python3
# Runs a command on a pseudo-terminal of ROWS x COLS (its stdout and stderr both on it, as in a user's shell)
# and prints the screen a VT100-style terminal shows at the end, one line per row (trailing blanks cut), after
# the bytes it received: what a user sees, for tests/cli/test_progress.sh. Interprets what hubprof and the
# test programs write: text, CR, LF, BS, ESC 7/8 (save/restore), ESC D/M (index, reverse index), CSI A/B/C/D,
# H/f, K, J, r (scrolling region), m; anything else is ignored. Exits with the command's status.
# usage: [VT_RAW=FILE] vt_screen.py ROWS COLS CMD...   (VT_RAW: the bytes received written there too)
# SPDX-License-Identifier: MIT
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

rows, cols = int(sys.argv[1]), int(sys.argv[2])
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
# TERM names this terminal, as a terminal emulator does (the caller's may be "dumb", or unset in a container)
p = subprocess.Popen(sys.argv[3:], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
                     env=dict(os.environ, TERM="vt100"))
os.close(slave)
data = b""
while True:
    try:
        b = os.read(master, 65536)
    except OSError:
        break
    if not b:
        break
    data += b
rc = p.wait()
if os.environ.get("VT_RAW"):  # the bytes received, for a test that checks what was drawn on the way
    open(os.environ["VT_RAW"], "wb").write(data)

screen = [[" "] * cols for _ in range(rows)]
r = c = 0
top, bot = 0, rows - 1
saved = (0, 0)


def scroll_up():
    del screen[top]
    screen.insert(bot, [" "] * cols)


def scroll_down():
    del screen[bot]
    screen.insert(top, [" "] * cols)


def index():
    global r
    if r == bot:
        scroll_up()
    elif r < rows - 1:
        r += 1


text = data.decode("utf-8", "replace")
i = 0
while i < len(text):
    ch = text[i]
    if ch == "\x1b":
        m = re.match(r"\x1b\[([0-9;?]*)([A-Za-z])", text[i:])
        if m:
            args = [int(a) if a.isdigit() else 0 for a in m.group(1).replace("?", "").split(";")] if m.group(1) else []
            a0 = args[0] if args else 0
            cmd = m.group(2)
            if cmd == "A":
                r = max(top if r >= top else 0, r - max(a0, 1))
            elif cmd == "B":
                r = min(bot if r <= bot else rows - 1, r + max(a0, 1))
            elif cmd == "C":
                c = min(cols - 1, c + max(a0, 1))
            elif cmd == "D":
                c = max(0, c - max(a0, 1))
            elif cmd in "Hf":
                r = min(rows, max(a0, 1)) - 1
                c = min(cols, max(args[1] if len(args) > 1 else 1, 1)) - 1
            elif cmd == "K":
                if a0 == 0:
                    screen[r][c:] = [" "] * (cols - c)
                elif a0 == 1:
                    screen[r][: c + 1] = [" "] * (c + 1)
                else:
                    screen[r] = [" "] * cols
            elif cmd == "J" and a0 == 2:
                screen = [[" "] * cols for _ in range(rows)]
            elif cmd == "r":
                top = (args[0] if args and args[0] else 1) - 1
                bot = (args[1] if len(args) > 1 and args[1] else rows) - 1
                r = c = 0
            i += m.end()
            continue
        nxt = text[i + 1 : i + 2]
        if nxt == "7":
            saved = (r, c)
        elif nxt == "8":
            r, c = saved
        elif nxt == "D":
            index()
        elif nxt == "M":
            if r == top:
                scroll_down()
            elif r > 0:
                r -= 1
        i += 2
        continue
    if ch == "\r":
        c = 0
    elif ch == "\n":
        index()
    elif ch == "\b":
        c = max(0, c - 1)
    elif ch >= " ":
        if c >= cols:
            c = 0
            index()
        screen[r][c] = ch
        c += 1
    i += 1

for row in screen:
    print("".join(row).rstrip())
sys.exit(rc)
