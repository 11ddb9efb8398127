#!/usr/bin/env bash
# `hubprof report` at 10^4, 10^5 and 10^6 dispatches (gen_logs, one process, 8 kernels, 2 counters, rocpd): the
# page's size, its write time, its load time in headless Chromium (navigation to the timeline drawn) and the
# time of a zoom step's redraw (8 steps in, 8 out, around the middle); median and min-max of R rounds, the sizes
# interleaved in each round, one browser for the whole run (selenium, chromium-driver: scripts/deps.sh).
# usage: bench_report.sh DIR [R [SIZES]]   (default 5 rounds, SIZES "10000 100000 1000000"; needs `make all`)
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
bench_start "${1:?usage: bench_report.sh DIR [ROUNDS [SIZES]]}"
rounds=${2:-5}
read -r -a sizes <<<"${3:-10000 100000 1000000}"
for n in "${sizes[@]}"; do
  if [ ! -f "$dir/g$n.db" ]; then
    rm -rf "$dir/logs$n"
    "$B/examples/gen_logs" "$dir/logs$n" 1 "$n" 2 1 >/dev/null
    "$B/hubprof" merge -q -o "$dir/g$n.db" "$dir/logs$n"/*.log
    rm -rf "$dir/logs$n"
  fi
done
echo "load before: $(bench_load)"
declare -A write size
for ((r = 0; r < rounds; r++)); do
  for n in "${sizes[@]}"; do
    write[$n]+=" $(bench_wall_ms "$B/hubprof" report -q -f "$dir/g$n.db" -o "$dir/g$n.html")"
    size[$n]=$(stat -c %s "$dir/g$n.html")
  done
done
# the browser's side: every page loaded R times, interleaved; one line per size: "N load... redraw..."
python3 - "$dir" "$rounds" "${sizes[@]}" >"$dir/browser.txt" <<'EOF'
import shutil, statistics, sys, time
from pathlib import Path
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
d, rounds, sizes = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
o = Options()
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
    o.add_argument(a)
b = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
load = {n: [] for n in sizes}
redraw = {n: [] for n in sizes}
for _ in range(rounds):
    for n in sizes:
        b.get("about:blank")
        b.get((d / f"g{n}.html").resolve().as_uri())
        while b.execute_script("var t = document.getElementById('timeline'); return t && t.getAttribute('data-ready')") != "1":
            time.sleep(0.01)
        load[n].append(float(b.execute_script("return document.getElementById('timeline').getAttribute('data-load-ms')")))
        steps = b.execute_script("""var tl = window.hubprof.timeline, out = [];
          for (var k = 0; k < 16; k++) { var w = tl.window(), c = (w[0] + w[1]) / 2, h = (w[1] - w[0]) / 2 * (k < 8 ? 0.67 : 1.5);
            tl.setWindow(c - h, c + h); out.push(tl.redraw()); }
          return out;""")
        redraw[n].extend(steps)
b.quit()
for n in sizes:
    print(n, " ".join(f"{v:.1f}" for v in load[n]), "|", " ".join(f"{v:.2f}" for v in redraw[n]))
EOF
echo "load after: $(bench_load)"
printf '%-9s %9s %10s %16s %10s %16s %10s %14s\n' dispatches "page MB" "write ms" "min-max" "load ms" "min-max" \
  "redraw ms" "min-max"
for n in "${sizes[@]}"; do
  read -r wm wl wh <<<"$(stats ${write[$n]})"
  line=$(grep "^$n " "$dir/browser.txt")
  read -r lm ll lh <<<"$(stats $(echo "$line" | cut -d'|' -f1 | cut -d' ' -f2-))"
  rd=$(echo "$line" | cut -d'|' -f2)
  read -r rm rl rh <<<"$(printf '%s\n' $rd | sort -g | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }')"
  printf '%-9s %9.2f %10s %16s %10s %16s %10s %14s\n' "$n" "$(awk -v s="${size[$n]}" 'BEGIN { print s / 1e6 }')" \
    "$wm" "$wl-$wh" "$lm" "$ll-$lh" "$rm" "$rl-$rh"
done
