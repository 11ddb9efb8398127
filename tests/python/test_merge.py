"""hubprof.merge(): several logs into one store of each format, the same as `hubprof merge` gives; the
output appears only on success; damaged inputs warn (or raise with strict)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import cli_json

import hubprof


def canonical(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns), kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("fmt", hubprof.formats())
def test_merge_logs_like_the_cli(tmp_path, logs, rocpd_store, fmt):
    out = tmp_path / f"merged.{fmt}"
    stats = hubprof.merge(logs, out, format=fmt)
    assert stats["inputs"] == 3 and stats["damaged_inputs"] == 0
    want = cli_json("info", "--json", rocpd_store)["rows"]
    assert stats["rows_out"] == want
    assert stats["rows_in"]["dispatch"] == want["dispatch"] and stats["rows_in"]["node"] == 3
    with hubprof.open(out) as s, hubprof.open(rocpd_store) as ref:
        assert s.format == fmt and s.counts() == want
        for t in ("dispatch", "counter_value", "kernel_symbol", "process", "agent"):
            pd.testing.assert_frame_equal(canonical(s.table(t)), canonical(ref.table(t)), check_dtype=False)


def test_merge_accepts_open_stores_and_mixed_formats(tmp_path, logs):
    mine = tmp_path / "mine.parquet"  # a third process, written from Python
    with hubprof.create(mine, format="parquet") as w:
        w.write("node", {"id": 1, "hostname": "other-host"})
        w.write("process", {"id": 1, "node_id": 1, "pid": 777, "command": "python"})
        w.write("kernel_symbol", {"id": 1, "name": "py_kernel"})
        w.write("dispatch", {"id": [1, 2], "dispatch_id": [1, 2], "process_id": 1, "kernel_id": 1})
    out = tmp_path / "mixed.db"
    with hubprof.open(logs[0]) as first:
        stats = hubprof.merge([first, logs[1], mine], out)
        assert not first.closed  # the caller's store stays open
    with hubprof.open(out) as s:
        assert sorted(s.table("process")["pid"]) == [777, 10000, 10001]
        assert stats["rows_out"]["dispatch"] == s.count("dispatch") == 2 * 1500 + 2
        assert "py_kernel" in set(s.table("kernel_symbol")["name"])


def test_merge_failure_leaves_no_output(tmp_path, logs):
    bad = tmp_path / "foreign.txt"
    bad.write_text("not a profile\n")
    out = tmp_path / "out.db"
    with pytest.raises(hubprof.FormatError, match=str(bad)):
        hubprof.merge([logs[0], bad], out)
    assert not out.exists()
    with pytest.raises(hubprof.NotFoundError):
        hubprof.merge([logs[0], tmp_path / "missing.log"], out)
    assert not out.exists()
    with pytest.raises(hubprof.FormatError):
        hubprof.merge(logs, out, format="csv")
    assert not out.exists()
    with pytest.raises(ValueError):
        hubprof.merge([], out)


def test_merge_existing_output_and_damaged_inputs(tmp_path, logs):
    out = tmp_path / "out.db"
    hubprof.merge(logs[:1], out)
    with pytest.raises(FileExistsError):
        hubprof.merge(logs, out)
    cut = tmp_path / "cut.log"
    whole = logs[1].read_bytes()
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(hubprof.TruncatedError, match=str(cut)):
        hubprof.merge([logs[0], cut], out, force=True, strict=True)
    with pytest.warns(hubprof.DamagedInputWarning, match="truncated"):
        stats = hubprof.merge([logs[0], cut], out, force=True)
    assert stats["damaged_inputs"] == 1
    with hubprof.open(out) as s:
        assert s.count("process") == 2


# ---- the assembly pipeline from Python: multiplex imputation and application-replay matching ----
def write_mux(path, fmt="log"):
    """One multiplexed process: kernel k's 4 dispatches alternate passes 1 (counter a) and 2 (counter b);
    kernel lonely's one dispatch measured pass 1 only (incomplete)."""
    with hubprof.create(path, format=fmt) as w:
        w.write_metadata("replay", "multiplex")
        w.write_metadata("multiplex_policy", "kernel")
        w.write_metadata("pass_plan", "a;b")
        w.write("node", {"id": 1, "hostname": "h"})
        w.write("process", {"id": 1, "node_id": 1, "pid": 42, "start_ns": 10, "command": "app"})
        w.write("kernel_symbol", {"id": [1, 2], "name": ["k", "lonely"]})
        w.write("counter_info", {"id": [1, 2], "name": ["a", "b"]})
        w.write("dispatch", {"id": [1, 2, 3, 4, 5], "dispatch_id": [1, 2, 3, 4, 5], "process_id": 1,
                             "kernel_id": [1, 1, 1, 1, 2]})
        w.write("counter_value", {"dispatch_id": [1, 2, 3, 4, 5], "counter_id": [1, 2, 1, 2, 1],
                                  "pass": [1, 2, 1, 2, 1], "value": [10.0, 100.0, 30.0, 300.0, 7.0]})


def test_merge_imputes_multiplexed_values(tmp_path):
    src = tmp_path / "mux.log"
    write_mux(src)
    plain = tmp_path / "plain.db"
    assert hubprof.merge([src], plain)["imputed_values"] == 0
    with hubprof.open(plain) as s:
        assert s.count("counter_value") == 5
    out = tmp_path / "imputed.db"
    with pytest.warns(hubprof.HubprofWarning, match="kernel lonely: 1 dispatch covers 1 of 2 passes"):
        stats = hubprof.merge([src], out, impute="kernel")
    # dispatch 1's cold a=10 is replaced by the warm median 30 (imputed); the raw reading kept in metadata
    assert stats["imputed_values"] == 5 and stats["measured_values"] == 4
    assert stats["keys"] == 2 and stats["incomplete_keys"] == 1
    with hubprof.open(out) as s:
        v = s.table("counter_value")
        imp = v[v["imputed"] == 1]
        ci = s.table("counter_info").set_index("id")["name"]
        got = sorted((int(r.dispatch_id), ci[r.counter_id], int(r["pass"]), r.value) for _, r in imp.iterrows())
        # the median of each counter's warm values: a = 30 (dispatch 1's 10 is the cold first dispatch's), b = 200
        assert got == [(1, "a", 1, 30.0), (1, "b", 2, 200.0), (2, "a", 1, 30.0), (3, "b", 2, 200.0),
                       (4, "a", 1, 30.0)]
        raw = json.loads(s.metadata()["multiplex_cold_raw"])
        assert [(r["kernel"], r["dispatch_id"], r["counter"], r["raw"], r["estimate"]) for r in raw] == \
            [("k", 1, "a", 10.0, 30.0)]
        assert s.metadata()["multiplex_imputation"] == "median"
        assert s.metadata()["replay"] == "multiplex" and s.metadata()["multiplex_policy"] == "kernel"
        assert '"kernel":"lonely"' in s.metadata()["multiplex_incomplete"]
    # "auto" reads the policy from the input; imputing an imputed store again adds nothing
    again = tmp_path / "again.db"
    with pytest.warns(hubprof.HubprofWarning):
        assert hubprof.merge([out], again, impute="auto")["imputed_values"] == 0
    with hubprof.open(again) as s:
        assert s.count("counter_value") == 9
        assert json.loads(s.metadata()["multiplex_cold_raw"]) == raw  # the raw reading survives a re-merge
    with pytest.raises(ValueError):
        hubprof.merge([src], tmp_path / "x.db", impute="median")


def write_run(path, pid, start, command, kernel, n, counter, value):
    """One process of one application-replay run: n dispatches of `kernel`, each with `counter`."""
    with hubprof.create(path, format="log") as w:
        w.write_metadata("pass_plan", counter)
        w.write("node", {"id": 1, "hostname": "h"})
        w.write("process", {"id": 1, "node_id": 1, "pid": pid, "start_ns": start, "command": command})
        w.write("kernel_symbol", {"id": 1, "name": kernel})
        w.write("counter_info", {"id": 1, "name": counter})
        ids = list(range(1, n + 1))
        w.write("dispatch", {"id": ids, "dispatch_id": ids, "process_id": 1, "kernel_id": 1, "grid_x": 64})
        w.write("counter_value", {"dispatch_id": ids, "counter_id": 1, "pass": 1, "value": value})


def test_merge_application_replay_pairs_processes_by_command(tmp_path):
    # run 0 starts A then B; run 1 starts B then A: pairing by command line keeps every counter
    r0a, r0b, r1b, r1a = (tmp_path / f"{n}.log" for n in ("r0a", "r0b", "r1b", "r1a"))
    write_run(r0a, 100, 1000, "progA x", "ka", 2, "c1", 1.0)
    write_run(r0b, 101, 2000, "progB", "kb", 3, "c1", 2.0)
    write_run(r1b, 200, 500, "progB", "kb", 3, "c2", 20.0)
    write_run(r1a, 201, 600, "progA x", "ka", 2, "c2", 10.0)
    out = tmp_path / "replay.db"
    stats = hubprof.merge([r0a, r0b, r1b, r1a], out, runs=[0, 0, 1, 1])
    assert stats["unmatched_dispatches"] == 0 and stats["unmatched_processes"] == 0
    with hubprof.open(out) as s:
        assert s.count("dispatch") == 5 and s.count("counter_value") == 10
        assert set(s.table("dispatch")["passes"]) == {2}
        assert s.metadata()["replay"] == "application" and s.metadata()["pass_plan"] == "c1;c2"
        v = s.table("counter_value").merge(s.table("counter_info"), left_on="counter_id", right_on="id")
        d = s.table("dispatch").merge(s.table("kernel_symbol"), left_on="kernel_id", right_on="id")
        v = v.merge(d, left_on="dispatch_id", right_on="id_x")
        got = sorted(set((r.name_y, r.name_x, int(r["pass"]), r.value) for _, r in v.iterrows()))
        assert got == [("ka", "c1", 1, 1.0), ("ka", "c2", 2, 10.0), ("kb", "c1", 1, 2.0), ("kb", "c2", 2, 20.0)]
    # a later run's process that the first run lacks: reported by its command line, left out
    extra = tmp_path / "r1c.log"
    write_run(extra, 202, 700, "progC", "kc", 4, "c2", 5.0)
    with pytest.warns(hubprof.HubprofWarning, match="process 202 'progC' has no process of the same program"):
        stats = hubprof.merge([r0a, r0b, r1b, r1a, extra], out, runs=[0, 0, 1, 1, 1], force=True)
    assert stats["unmatched_processes"] == 1 and stats["unmatched_dispatches"] == 4
    with pytest.raises(ValueError):
        hubprof.merge([r0a, r1a], tmp_path / "y.db", runs=[0])


def test_merge_reports_progress(tmp_path, logs):
    seen = []
    hubprof.merge(logs, tmp_path / "p.db", progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] > 0
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
