"""Stores of every format written from Python and read back: every table, dtypes, and values at the
edges of each C type (u64 above 2^63, negative ints, UTF-8 text, -0.0, inf, NaN)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import hubprof

# Three values per C type, at its edges. Ids are unique, not 0, one above 2^63.
EDGE = {
    "u32": [1, 2**32 - 1, 7],
    "i32": [-(2**31), 2**31 - 1, -1],
    "u64": [2**63 + 5, 2**64 - 1, 1],
    "i64": [-(2**63), 2**63 - 1, -1],
    "f64": [-0.0, 1e308, float("inf")],
    "str": ["", "ünïcødé ∑ 日本 \U0001F600 'quote' \"dq\" \\ \t tab", "x" * 5000],
}


def edge_rows(table: hubprof.Table) -> dict[str, list]:
    """A dict of columns of three rows exercising every column of `table`."""
    cols = {c.name: list(EDGE[c.type_name]) if not c.boolean else [0, 1, 1] for c in table.columns}  # flags: 0/1
    if "id" in cols:
        cols["id"] = [1, 2**64 - 1, 3]
    if table.name == "metadata":
        cols["key"] = ["k1", "ключ", "k3"]
    return cols


def expected_frame(table: hubprof.Table, cols: dict[str, list]) -> pd.DataFrame:
    return pd.DataFrame({c.name: pd.Series(cols[c.name], dtype=str if c.is_str else c.dtype)
                         for c in table.columns})


def canonical(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in one order whatever the format's (rocpd reads by its signed id)."""
    return df.sort_values(list(df.columns), kind="stable").reset_index(drop=True)


@pytest.fixture(params=hubprof.formats())
def fmt(request) -> str:
    return request.param


def test_every_table_round_trips(tmp_path, fmt):
    path = tmp_path / f"edges.{fmt}"
    with hubprof.create(path, format=fmt) as w:
        for t in hubprof.TABLES:
            assert w.write(t, edge_rows(hubprof.describe(t))) == 3
    with hubprof.open(path) as s:
        assert s.format == fmt
        assert s.damage is None
        assert s.schema_version
        assert s.tables() == list(hubprof.TABLES)
        for name in hubprof.TABLES:
            t = hubprof.describe(name)
            df = s.table(name)
            assert list(df.columns) == t.column_names
            for c in t.columns:
                if c.is_str:
                    assert pd.api.types.is_string_dtype(df[c.name].dtype), (name, c.name)
                else:
                    assert df[c.name].dtype == c.dtype, (name, c.name, df[c.name].dtype)
            assert s.count(name) == 3
            pd.testing.assert_frame_equal(canonical(df), canonical(expected_frame(t, edge_rows(t))),
                                          check_dtype=False)
            for c in t.columns:  # -0.0 keeps its sign (assert_frame_equal treats it as 0.0)
                if c.type_name == "f64":
                    v = df[c.name].to_numpy()
                    assert np.signbit(v[v == 0]).all(), (name, c.name)


def test_special_floats_and_text(tmp_path, fmt):
    path = tmp_path / f"floats.{fmt}"
    values = [float("nan"), -float("inf"), 5e-324, -0.0, 1.0 / 3]
    with hubprof.create(path, format=fmt) as w:
        w.write("counter_value", {"dispatch_id": range(1, 6), "counter_id": 1, "pass": [1, 2, 1, 2, 1],
                                  "imputed": [0, 1, 0, 0, 1], "value": values})
        w.write("region", [{"id": 1, "name": "a\u00a0b", "category": "ß"}, {"id": 2, "name": None}])
    with hubprof.open(path) as s:
        cv = canonical(s.table("counter_value")).sort_values("dispatch_id")
        got = cv["value"].tolist()
        assert math.isnan(got[0]) and got[1:3] == values[1:3] and got[4] == values[4]
        assert math.copysign(1, got[3]) == -1
        assert cv["pass"].tolist() == [1, 2, 1, 2, 1] and cv["imputed"].tolist() == [0, 1, 0, 0, 1]
        r = canonical(s.table("region"))
        assert r["name"].tolist() == ["a\u00a0b", ""] and r["category"].tolist() == ["ß", ""]


def test_input_shapes_and_defaults(tmp_path):
    """DataFrame, list of dicts, dict of columns with scalars repeated, one row as a dict; missing
    columns are 0 / ""; numpy datetime64 times become ns."""
    path = tmp_path / "shapes.db"
    with hubprof.create(path) as w:
        w.write("kernel_symbol", pd.DataFrame({"id": [1, 2], "name": ["k1", "k2"]}))
        w.write("kernel_symbol", [{"id": 3, "name": "k3"}, {"id": 4, "display_name": "K4"}])
        w.write("kernel_symbol", {"id": 5, "name": "k5"})
        w.write("dispatch", {"id": np.arange(1, 101, dtype=np.uint64), "kernel_id": 1,
                             "start_ns": np.arange(100) * 10, "end_ns": np.arange(100) * 10 + 5,
                             "enqueue_ns": np.datetime64(7, "us")})
        w.write("dispatch", pd.DataFrame())  # nothing
        w.write_metadata("mode", "trace")
        w.write_metadata("mode", "profile")  # the later value replaces the earlier
        assert w.rows_written == {"kernel_symbol": 5, "dispatch": 100}
    with hubprof.open(path) as s:
        ks = s.table("kernel_symbol")
        assert ks["name"].tolist() == ["k1", "k2", "k3", "", "k5"]
        assert ks["display_name"].tolist() == ["", "", "", "K4", ""]
        assert (ks["private_size"] == 0).all()
        d = s.table("dispatch")
        assert len(d) == 100 and (d["kernel_id"] == 1).all()
        assert (d["end_ns"] - d["start_ns"] == 5).all() and (d["enqueue_ns"] == 7000).all()
        assert s.metadata()["mode"] == "profile"


def test_reading_columns_and_batches(tmp_path):
    path = tmp_path / "batches.log"
    n = 10_000
    with hubprof.create(path, format="log") as w:
        w.write("dispatch", {"id": np.arange(1, n + 1), "start_ns": np.arange(n)})
        w.write("region", {"id": np.arange(1, n + 1), "name": [f"r{i}" for i in range(n)], "category": "c"})
    with hubprof.open(path) as s:
        df = s.table("dispatch", columns=["start_ns", "id"])
        assert list(df.columns) == ["id", "start_ns"]  # the table's order
        parts = list(s.batches("region", rows=3000))
        assert [len(p) for p in parts] == [3000, 3000, 3000, 1000]
        allr = pd.concat(parts, ignore_index=True)
        assert allr["name"].tolist() == [f"r{i}" for i in range(n)]
        assert (allr["category"] == "c").all()
        with pytest.raises(ValueError, match="no column 'nope'"):
            s.table("dispatch", columns=["nope"])


def test_live_log_is_readable_while_written(tmp_path):
    path = tmp_path / "live.log"
    w = hubprof.create(path, format="log", live=True)
    w.write("dispatch", {"id": [1, 2, 3]})
    assert path.exists()  # written in place
    w.commit()
    with hubprof.open(path) as s:
        assert s.count("dispatch") == 3
    with pytest.raises(FileExistsError):
        hubprof.create(path, format="log", live=True)
    w = hubprof.create(path, format="log", live=True, force=True)  # replaces it: the old one removed first
    w.write("dispatch", {"id": [7]})
    w.commit()
    with hubprof.open(path) as s:
        assert s.count("dispatch") == 1


def test_describe_matches_the_c_row_layout():
    d = hubprof.describe("dispatch")
    assert d.row_dtype.itemsize == d.row_size
    assert d.column("kernel_id").ref == "kernel_symbol"
    assert [c.name for c in d.columns][:2] == ["id", "dispatch_id"]
    assert hubprof.TABLES[0] == "node" and "counter_value" in hubprof.TABLES
    with pytest.raises(hubprof.InvalidArgumentError):
        hubprof.describe("nope")


def test_string_batches_fast_and_fallback_paths():
    """strings() decodes a batch at once when the hub's pointers show its one-buffer layout, and string
    by string otherwise (same result either way)."""
    import ctypes

    from hubprof import _read

    texts = [["a", "ü", ""], ["bb", "∑x", "c"]]  # two columns, three rows
    blob = b"".join(s.encode() + b"\0" for row in zip(*texts) for s in row)
    buf = ctypes.create_string_buffer(blob, len(blob))
    base = ctypes.addressof(buf)
    offs = np.cumsum([0] + [len(s.encode()) + 1 for row in zip(*texts) for s in row])[:-1]
    ptrs = [np.array([base + offs[r * 2 + c] for r in range(3)], dtype=np.uintp) for c in range(2)]
    assert _read.strings(ptrs, 3) == texts
    separate = [[ctypes.create_string_buffer(s.encode()) for s in col] for col in texts]
    ptrs = [np.array([ctypes.addressof(b) for b in col][::-1], dtype=np.uintp) for col in separate]
    assert _read.strings(ptrs, 3) == [col[::-1] for col in texts]
    assert _read.strings([], 0) == [] and _read.strings(ptrs, 0) == [[], []]
