#!/usr/bin/env python3
"""No metric above its physical peak goes unflagged: for each store given, every metric with a peak is
computed per dispatch, per kernel and per kernel launch, and each value whose share of the peak
(<metric>_pct_peak) is over 100 % must carry OVER_PEAK on both cells and be named in over_peak, and none
at or under it may. Prints "check_peaks: N values over peak, all flagged" or the offending rows and exits 1.
usage: check_peaks.py STORE..."""
# SPDX-License-Identifier: MIT
import sys

import hubprof
from hubprof.analysis import OVER_PEAK


def check(path: str) -> tuple[int, list[str]]:
    over, bad = 0, []
    with hubprof.open(path) as s:
        for by in ("dispatch", "kernel", "kernel-grid"):
            df = s.analyze(by=by)
            flags = df.attrs["flags"]
            for col in df.columns:
                if not col.endswith("_pct_peak"):
                    continue
                m = col[: -len("_pct_peak")]
                for i, pct in enumerate(df[col].tolist()):
                    if pct != pct:  # NaN: no value
                        continue
                    f_m = int(flags.get(m, [0] * len(df))[i])
                    f_p = int(flags.get(col, [0] * len(df))[i])
                    named = any(x.startswith(m + "=") for x in str(df["over_peak"][i]).split())
                    if pct > 100:
                        over += 1
                        if not (f_m & OVER_PEAK and f_p & OVER_PEAK and named):
                            bad.append(f"{path} by {by} row {i}: {m} at {pct:.1f}% of its peak, not flagged")
                    elif f_m & OVER_PEAK or f_p & OVER_PEAK or named:
                        bad.append(f"{path} by {by} row {i}: {m} at {pct:.1f}% flagged over its peak")
    return over, bad


def main() -> int:
    over, bad = 0, []
    for p in sys.argv[1:]:
        o, b = check(p)
        over += o
        bad += b
    for line in bad[:20]:
        print("check_peaks: " + line)
    if bad:
        return 1
    print(f"check_peaks: {over} values over peak in {len(sys.argv) - 1} stores, all flagged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
