"""Per-channel counters (AMD L2 channels) in a store: the channel is part of the counter's name
(`TCC_HIT[3]`, docs/counters.md), so every format keeps it, and the channels of a counter sum back to
the counter over all channels, in the same numbers in rocpd, Parquet and the log."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import re

import pytest

import hubprof


@pytest.mark.parametrize("fmt", hubprof.formats())
def test_channel_counters_round_trip_and_sum(tmp_path, fmt):
    path = tmp_path / f"channels.{fmt}"
    channels = 16
    names = [f"TCC_HIT[{i}]" for i in range(channels)] + ["TCC_HIT_sum", "SQ_WAVES"]
    values = {1: [float(10 * i + 1) for i in range(channels)], 2: [float(i) for i in range(channels)]}
    rows = []
    for d, per in values.items():
        for i, v in enumerate(per):
            rows.append({"dispatch_id": d, "counter_id": i + 1, "pass": 1, "value": v})
        rows.append({"dispatch_id": d, "counter_id": channels + 1, "pass": 1, "value": sum(per)})
    with hubprof.create(path, format=fmt) as w:
        w.write("counter_info", [{"id": i + 1, "name": n, "block": "TCC" if n.startswith("TCC") else "SQ"}
                                 for i, n in enumerate(names)])
        w.write("counter_value", rows)
    with hubprof.open(path) as s:
        info = s.table("counter_info")
        cv = s.table("counter_value").merge(info[["id", "name"]], left_on="counter_id", right_on="id")
    # the dimension is kept: one row per channel, its index readable from the name
    ch = cv[cv["name"].str.contains(r"\[")].copy()
    ch["base"] = ch["name"].str.replace(r"\[\d+\]$", "", regex=True)
    ch["channel"] = ch["name"].map(lambda n: int(re.search(r"\[(\d+)\]$", n).group(1)))
    assert sorted(set(ch["channel"])) == list(range(channels))
    assert set(ch["base"]) == {"TCC_HIT"}
    # summable: the channels of each dispatch add up to the sum over all channels
    per_dispatch = ch.groupby("dispatch_id")["value"].sum().to_dict()
    total = cv[cv["name"] == "TCC_HIT_sum"].set_index("dispatch_id")["value"].to_dict()
    assert per_dispatch == total == {d: sum(v) for d, v in values.items()}
