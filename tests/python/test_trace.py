"""A real trace: `hubprof trace` of an OpenCL program under PoCL, read from Python."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import os

import pytest
from conftest import BUILD, HUBPROF, need, run

import hubprof

APP = BUILD / "examples" / "ocl" / "vector_add"


def test_trace_of_vector_add(tmp_path):
    need(HUBPROF)
    need(APP)
    env = dict(os.environ, POCL_DEVICES=os.environ.get("POCL_DEVICES", "basic"))
    alone = run(APP, 16, 1, check=False, env=env, timeout=120)
    if alone.returncode != 0:
        pytest.skip(f"OpenCL (PoCL) does not run here: {alone.stderr.strip()[:200]}")
    out = tmp_path / "trace.db"
    run(HUBPROF, "trace", "-o", out, "--", APP, 1024, 10, env=env, timeout=300)
    with hubprof.open(out) as s:
        d = s.table("dispatch")
        assert len(d) == 10
        assert (d["grid_x"] == 1024).all()
        assert d["dispatch_id"].is_unique
        assert ((d["end_ns"] >= d["start_ns"]) & (d["start_ns"] > 0)).all()
        ks = s.table("kernel_symbol")
        assert set(ks.loc[ks["id"].isin(d["kernel_id"]), "name"]) == {"vector_add"}
        assert s.table("process")["command"].str.contains("vector_add").all()
        top = s.analyze()
        assert top["kernel"].tolist() == ["vector_add"] and top["calls"].tolist() == [10]
