"""Stall reasons and SASS (issue 26, docs/sampling.md): a cubin that nvcc builds here with -lineinfo is
stored as a kernel's code object, with PC samples carrying CUPTI's stall reasons at known instructions,
written through the hub in every format; `hubprof analyze --by line|instruction|function` (table, CSV, JSON)
and Python's analyze name the right source line, SASS text and top reasons; without nvdisasm: addresses and
one warning; samples without reasons keep the views as they were (no stall columns)."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import csv
import glob
import io
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import HUBPROF, need, run

import hubprof

SRC = """\
__global__ void chase(const unsigned *next, unsigned *out, int n)
{
  unsigned p = threadIdx.x;
  for (int i = 0; i < n; i++)
    p = next[p];
  out[threadIdx.x] = p;
}
"""
KERNEL = "_Z5chasePKjPji"
LS = "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
SEL = "smsp__pcsamp_warps_issue_stalled_selected"
LG = "smsp__pcsamp_warps_issue_stalled_lg_throttle"


def find_nvcc() -> str | None:
    return shutil.which("nvcc") or next((p for p in ["/usr/local/cuda/bin/nvcc"] if os.access(p, os.X_OK)), None)


def find_nvdisasm() -> str | None:
    env = os.environ.get("HUBPROF_NVDISASM")
    if env:
        return env
    found = shutil.which("nvdisasm") or (
        "/usr/local/cuda/bin/nvdisasm" if os.access("/usr/local/cuda/bin/nvdisasm", os.X_OK) else None)
    if found:
        return found
    try:
        import nvidia  # the pip package nvidia-cuda-nvdisasm
        for d in nvidia.__path__:
            for p in glob.glob(os.path.join(d, "cu*", "bin", "nvdisasm")):
                return p
    except ImportError:
        pass
    return None


def text_section_offset(cubin: bytes, name: str) -> int:
    """File offset of section `name` of an ELF64 (read here with struct, not with the hub's reader)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        s = sh(i)
        end = cubin.index(b"\0", stroff + s[0])
        if cubin[stroff + s[0]:end].decode() == name:
            return s[4]
    raise AssertionError(f"no section {name}")


@pytest.fixture(scope="module")
def cubin(tmp_path_factory):
    nvcc, nvdisasm = find_nvcc(), find_nvdisasm()
    if not nvcc:
        pytest.skip("nvcc not found (the CUDA toolkit builds the test's cubin)")
    if not nvdisasm:
        pytest.skip("nvdisasm not found (the CUDA toolkit, or pip install nvidia-cuda-nvdisasm)")
    d = tmp_path_factory.mktemp("cubin")
    (d / "chase.cu").write_text(SRC)
    run(nvcc, "-cubin", "-arch=sm_90", "-lineinfo", "-o", d / "chase.cubin", d / "chase.cu")
    data = (d / "chase.cubin").read_bytes()
    base = text_section_offset(data, ".text." + KERNEL)
    # the instructions, by nvdisasm here: the first global load (line 5) and the store (line 6)
    out = subprocess.run([nvdisasm, "-c", str(d / "chase.cubin")], capture_output=True, text=True,
                         check=True).stdout
    insns = [(int(l.split("*/")[0].split("/*")[1], 16), l.split("*/", 1)[1].strip().rstrip(" ;"))
             for l in out.splitlines() if l.strip().startswith("/*") and "*/" in l]
    ldg = next(o for o, t in insns if t.startswith("LDG"))
    stg = next(o for o, t in insns if t.startswith("STG"))
    line_of = {t: i + 1 for i, t in enumerate(SRC.splitlines())}
    return {"bytes": data, "base": base, "ldg": ldg, "stg": stg, "nvdisasm": nvdisasm,
            "load_line": line_of["    p = next[p];"], "store_line": line_of["  out[threadIdx.x] = p;"]}


def write_store(path: Path, fmt: str, cb: dict, reasons: bool = True) -> None:
    b = cb["base"]
    # (offset in the cubin, reason, samples): 90 + 5 on the load, 10 on the store, one without a reason
    rows = [(b + cb["ldg"], LS, 90), (b + cb["ldg"], SEL, 5), (b + cb["stg"], LG, 10), (b, "", 0)]
    with hubprof.create(path, fmt) as w:
        w.write("node", {"id": 1, "hostname": "h"})
        w.write("process", {"id": 1, "node_id": 1, "pid": 7, "start_ns": 1})
        w.write("thread", {"id": 1, "process_id": 1, "tid": 7})
        w.write("agent", {"id": 1, "node_id": 1, "type": 2, "name": "sm_90", "vendor": "NVIDIA"})
        h = w.write_code_bytes(cb["bytes"])
        w.write("code_object", {"id": 1, "process_id": 1, "agent_id": 1, "uri": "cubin://chase", "hash": h,
                                "code_size": len(cb["bytes"]), "source": SRC})
        w.write("kernel_symbol", {"id": 1, "code_object_id": 1, "name": KERNEL,
                                  "display_name": "chase(const unsigned int *, unsigned int *, int)"})
        w.write("dispatch", {"id": 1, "dispatch_id": 1, "process_id": 1, "thread_id": 1, "agent_id": 1,
                             "kernel_id": 1, "start_ns": 1000, "end_ns": 9000})
        w.write("pc_sample", [{"id": i + 1, "dispatch_id": 1, "code_object_id": 1, "offset": off,
                               "timestamp_ns": 2000 + i, "thread_id": 1,
                               "stall_reason": r if reasons else "", "samples": n}
                              for i, (off, r, n) in enumerate(rows)])


@pytest.fixture(scope="module", params=["rocpd", "parquet", "log"])
def store(request, cubin, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("stall") / f"chase.{request.param}"
    write_store(path, request.param, cubin)
    return path


@pytest.fixture(autouse=True)
def nvdisasm_env(cubin, monkeypatch):
    monkeypatch.setenv("HUBPROF_NVDISASM", cubin["nvdisasm"])


def test_rows_keep_reasons(store):
    with hubprof.open(store) as s:
        p = s.table("pc_sample").sort_values("id")
    assert list(p.samples) == [90, 5, 10, 0]
    assert list(p.stall_reason.fillna("")) == [LS, SEL, LG, ""]


def test_by_line(store, cubin):
    with hubprof.open(store) as s:
        df = s.analyze(by="line", kernel=KERNEL)
    top = df.iloc[0]
    assert top.line == f"chase.cu:{cubin['load_line']}" and top.samples == 95
    assert top.source == "p = next[p];"  # the program source found by the kernel's display name
    assert top.stall == "long_scoreboard" and top.stall_reasons == "long_scoreboard 95%, selected 5%"
    second = df.iloc[1]
    assert second.line == f"chase.cu:{cubin['store_line']}" and second.samples == 10
    assert second.stall_reasons == "lg_throttle 100%"
    assert df.samples.sum() == 106  # a row of CUPTI's stands for its count; one without a count for one


def test_by_instruction_and_function(store, cubin):
    with hubprof.open(store) as s:
        ins = s.analyze(by="instruction", kernel=KERNEL)
        fn = s.analyze(by="function", kernel=KERNEL)
    top = ins.iloc[0]
    assert top.offset == hex(cubin["base"] + cubin["ldg"]) and top.samples == 95
    assert top.instruction.startswith("LDG.E") and top.line == f"chase.cu:{cubin['load_line']}"
    assert top.function == KERNEL and top.stall == "long_scoreboard"
    assert ins.iloc[1].instruction.startswith("STG.E")
    assert list(fn.function) == [KERNEL] and fn.samples[0] == 106
    assert fn.stall_reasons[0] == "long_scoreboard 85%, lg_throttle 9%, selected 5%"


def test_cli_formats(store, cubin):
    hp = need(HUBPROF)
    line = f"chase.cu:{cubin['load_line']}"
    rows = list(csv.DictReader(io.StringIO(run(hp, "analyze", "--by", "line", "--kernel", "_Z5chase*",
                                               "--format", "csv", store).stdout)))
    assert rows[0]["line"] == line and rows[0]["stall"] == "long_scoreboard"
    assert rows[0]["stall_reasons"] == "long_scoreboard 95%, selected 5%"
    js = json.loads(run(hp, "analyze", "--by", "instruction", "--kernel", KERNEL, "--format", "json",
                        store).stdout)
    text = json.dumps(js)
    assert "LDG.E" in text and "long_scoreboard 95%, selected 5%" in text
    table = run(hp, "analyze", "--by", "line", "--kernel", KERNEL, store).stdout
    assert line in table and "long_scoreboard 95%" in table and "p = next[p];" in table


def rows_without_sass(store, said):
    """analyze --by instruction when nvdisasm gives nothing: the warning says why, the rows are by address
    (no instruction text) and keep their stall reasons."""
    p = run(need(HUBPROF), "analyze", "--by", "instruction", "--kernel", KERNEL, "--format", "csv", store)
    assert said in p.stdout + p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert rows[0]["instruction"] == "" and rows[0]["stall"] == "long_scoreboard"


def test_no_nvdisasm(store, monkeypatch):
    monkeypatch.setenv("HUBPROF_NVDISASM", "/nonexistent/nvdisasm")
    rows_without_sass(store, "HUBPROF_NVDISASM=/nonexistent/nvdisasm is not an executable file")


def test_stuck_nvdisasm_is_stopped(store, monkeypatch, tmp_path):
    """A damaged cubin can keep nvdisasm busy for ever (the code fuzzer found one): analyze stops it after
    HUBPROF_NVDISASM_TIMEOUT seconds and says so."""
    stuck = tmp_path / "nvdisasm"
    stuck.write_text("#!/bin/sh\necho started\nexec sleep 300\n")
    stuck.chmod(0o755)
    monkeypatch.setenv("HUBPROF_NVDISASM", str(stuck))
    monkeypatch.setenv("HUBPROF_NVDISASM_TIMEOUT", "1")
    rows_without_sass(store, "nvdisasm ran longer than 1 s on the cubin and was stopped")


def test_without_reasons_no_stall_columns(cubin, tmp_path):
    path = tmp_path / "plain.db"
    write_store(path, "rocpd", cubin, reasons=False)
    with hubprof.open(path) as s:
        df = s.analyze(by="line", kernel=KERNEL)
    assert list(df.columns) == ["samples", "percent", "line", "source"]
    assert df.samples.sum() == 106
