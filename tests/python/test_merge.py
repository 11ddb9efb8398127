"""hubprof.merge(): several logs into one store of each format, the same as `hubprof merge` gives; the
output appears only on success; damaged inputs warn (or raise with strict)."""
from __future__ import annotations

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
