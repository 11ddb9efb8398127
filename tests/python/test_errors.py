"""Bad input and failures: missing, foreign, empty, truncated and damaged stores raise the hub's one-line
message naming the file; bad rows raise ValueError naming the column; an aborted writer leaves nothing."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import gc
import shutil
import warnings

import pytest

import hubprof


def test_missing_file(tmp_path):
    p = tmp_path / "missing.db"
    with pytest.raises(hubprof.NotFoundError) as e:
        hubprof.open(p)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, hubprof.Error)
    assert str(p) in str(e.value) and e.value.status == -4 and e.value.status_text


def test_foreign_and_empty_files(tmp_path):
    foreign = tmp_path / "notes.txt"
    foreign.write_text("hello world\n" * 50)
    with pytest.raises(hubprof.FormatError, match=str(foreign)):
        hubprof.open(foreign)
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(hubprof.FormatError, match="empty"):
        hubprof.open(empty)
    with pytest.raises(hubprof.FormatError, match="unknown format"):
        hubprof.open(foreign, format="csv")


def test_truncated_stores(tmp_path, logs, rocpd_store, parquet_store):
    data = rocpd_store.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(hubprof.Error) as e:
        hubprof.open(cut)
    assert isinstance(e.value, (hubprof.TruncatedError, hubprof.CorruptError)) and str(cut) in str(e.value)

    head = tmp_path / "head.log"
    head.write_bytes(logs[0].read_bytes()[:10])
    with pytest.raises(hubprof.TruncatedError, match=str(head)):
        hubprof.open(head)

    # A log cut by a crash: readable up to its last complete block, the damage reported.
    half = tmp_path / "half.log"
    whole = logs[0].read_bytes()
    half.write_bytes(whole[: len(whole) // 2])
    with hubprof.open(half) as s:
        d = s.damage
        assert d is not None and d.status == hubprof.TruncatedError.status
        assert 0 < d.offset <= len(whole) // 2 and str(half) in d.message
        assert len(s.table("dispatch")) == s.count("dispatch")

    # A parquet store with one file cut: the store opens, the damage names the file.
    pq = tmp_path / "cut.parquet"
    shutil.copytree(parquet_store, pq)
    f = pq / "dispatch" / "part-00000.parquet"
    f.write_bytes(f.read_bytes()[:100])
    try:
        s = hubprof.open(pq)
    except hubprof.Error as err:
        assert "dispatch/part-00000.parquet" in str(err)
    else:
        with s:
            assert s.damage is not None and "dispatch/part-00000.parquet" in s.damage.message


def test_bad_rows(tmp_path):
    with hubprof.create(tmp_path / "bad.db") as w:
        with pytest.raises(ValueError, match="'colour', 'size'"):
            w.write("dispatch", {"id": 1, "colour": 2, "size": 3})
        with pytest.raises(ValueError, match="out of range"):
            w.write("dispatch", {"id": -1})
        with pytest.raises(ValueError, match="out of range"):
            w.write("dispatch", {"id": [1], "grid_x": [2**32]})
        with pytest.raises(ValueError, match="whole number"):
            w.write("dispatch", {"id": [1.5]})
        with pytest.raises(ValueError, match="not text"):
            w.write("kernel_symbol", {"id": 1, "name": 5})
        with pytest.raises(ValueError, match="NUL"):
            w.write("kernel_symbol", {"id": 1, "name": "a\0b"})
        with pytest.raises(ValueError, match="different lengths"):
            w.write("dispatch", {"id": [1, 2], "kernel_id": [1]})
        with pytest.raises(hubprof.InvalidArgumentError, match="unknown table"):
            w.write("dispatches", {"id": 1})
        with pytest.raises(TypeError):
            w.write("dispatch", "id")
        w.write("dispatch", {"id": 1})
    with hubprof.open(tmp_path / "bad.db") as s:
        assert s.count("dispatch") == 1  # nothing from the refused writes


@pytest.mark.parametrize("fmt", hubprof.formats())
def test_writer_abort_leaves_nothing(tmp_path, fmt):
    p = tmp_path / f"aborted.{fmt}"
    with pytest.raises(RuntimeError):
        with hubprof.create(p, format=fmt) as w:
            w.write("dispatch", {"id": [1, 2, 3]})
            raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
    w = hubprof.create(p, format=fmt)
    w.write("dispatch", {"id": [1]})
    w.abort()
    w.abort()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="closed"):
        w.write("dispatch", {"id": [2]})
    w = hubprof.create(p, format=fmt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del w
        gc.collect()
    assert any(issubclass(c.category, ResourceWarning) for c in caught)
    assert list(tmp_path.iterdir()) == []


def test_existing_output_is_kept_unless_forced(tmp_path):
    p = tmp_path / "x.db"
    with hubprof.create(p) as w:
        w.write("dispatch", {"id": [1]})
    with pytest.raises(FileExistsError):
        hubprof.create(p)
    with hubprof.create(p, force=True) as w:
        w.write("dispatch", {"id": [1, 2]})
    with hubprof.open(p) as s:
        assert s.count("dispatch") == 2


def test_closed_store_and_hierarchy(tmp_path, rocpd_store):
    s = hubprof.open(rocpd_store)
    s.close()
    s.close()
    assert s.closed and "closed" in repr(s)
    with pytest.raises(ValueError, match="closed"):
        s.table("dispatch")
    with pytest.raises(hubprof.InvalidArgumentError):
        hubprof.open(rocpd_store).count("nope")
    seen = set()
    for cls in (hubprof.InvalidArgumentError, hubprof.OutOfMemoryError, hubprof.IOFailedError,
                hubprof.NotFoundError, hubprof.FormatError, hubprof.VersionError, hubprof.CorruptError,
                hubprof.TruncatedError, hubprof.UnsupportedError, hubprof.ConstraintError):
        assert issubclass(cls, hubprof.Error) and cls.status < 0 and cls.status not in seen
        seen.add(cls.status)
        e = cls("x.db: problem", cls.status, "x.db")
        assert str(e) == "x.db: problem" and e.status_text and e.path == "x.db"
    assert seen == set(range(-10, 0))
