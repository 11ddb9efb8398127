"""The wheel is the whole tool (issue 28): `pip wheel ./python` builds a platform wheel holding the library,
the hubprof program, the collector and its exit shim, and the `hubprof` console command; installed into a
fresh virtual environment it traces an OpenCL program under PoCL (from the command and from Python, Python
regions included) and reads the store back as pandas DataFrames and Arrow tables."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile

import pytest
from conftest import BUILD, REPO, need, run

APP = BUILD / "examples" / "ocl" / "vector_add"

TRACED = """
import subprocess, sys, hubprof
assert hubprof.profiled()  # under `hubprof trace`: the collector is there for Python's regions
with hubprof.region("from python"):
    subprocess.run([sys.argv[1], "512", "2"], check=True, stdout=subprocess.DEVNULL)
"""

READ = """
import sys, hubprof, pyarrow as pa
for path, n, region in [(sys.argv[1], 3, False), (sys.argv[2], 2, True), (sys.argv[3], 4, False)]:
    with hubprof.open(path) as s:
        d = s.table("dispatch")
        a = s.arrow("dispatch")
        assert isinstance(a, pa.Table) and a.num_rows == len(d) == n, (path, a.num_rows, len(d))
        assert a.column_names == list(d.columns)
        assert a.column("start_ns").to_pylist() == d["start_ns"].tolist()
        assert str(a.schema.field("start_ns").type) == "int64" and str(a.schema.field("id").type) == "uint64"
        ds = s.arrow("dispatch", dataset=True)  # the Parquet datasets' layout: nulls for unknowns
        assert ds.num_rows == n and "dispatch_seq" in ds.column_names, ds.column_names
        ks = s.arrow("kernel_symbol").to_pandas()
        assert set(ks["name"]) == {"vector_add"}
        r = s.table("region")
        assert ("from python" in set(r["name"])) == region, r
print("read ok", hubprof.program_path())
"""


@pytest.mark.slow
def test_wheel_is_the_whole_tool(tmp_path):
    need(BUILD / "hubprof")
    need(APP)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HUBPROF_") and k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["POCL_CACHE_DIR"] = str(tmp_path / "kcache")
    env.setdefault("POCL_DEVICES", "basic")
    alone = run(APP, 16, 1, check=False, env=env, timeout=120)
    if alone.returncode != 0:
        pytest.skip(f"OpenCL (PoCL) does not run here: {alone.stderr.strip()[:200]}")
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "--no-index", "--no-deps", "--no-build-isolation", "-q", "-w", wheels,
        REPO / "python", env=env, timeout=900)
    (whl,) = wheels.glob("hubprof-*.whl")
    assert not whl.name.endswith("-any.whl") and "-py3-none-linux_" in whl.name, whl.name
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        for f in ("libhubprof.so", "hubprof", "libhubprof_collector.so", "libhubprof_exit.so"):
            info = z.getinfo(f"hubprof/_native/{f}")
            assert (info.external_attr >> 16) & 0o111, f  # executable
        ep = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "hubprof = hubprof._cli:main" in z.read(ep).decode()
        assert any(n.startswith("hubprof/_native/share/hubprof/") for n in names)
    env_dir = tmp_path / "venv"
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    except (subprocess.CalledProcessError, OSError) as e:  # Debian's python3 without python3-venv
        pytest.skip(f"cannot create a virtual environment with pip: {e}")
    py, cmd = env_dir / "bin" / "python", env_dir / "bin" / "hubprof"
    run(py, "-m", "pip", "install", "--no-index", "--no-deps", "-q", whl, env=env, timeout=600)
    work = tmp_path / "elsewhere"
    work.mkdir()
    venv_env = dict(env, PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    # the command: the program bundled in the package, with its collector beside it
    out = run(cmd, "--version", cwd=work, env=venv_env, timeout=120).stdout
    assert (REPO / "VERSION").read_text().strip() in out, out
    run(cmd, "trace", "-q", "-o", "cli.db", "--", APP, 1024, 3, cwd=work, env=venv_env, timeout=300)
    # a Python program traced: its regions reach the collector
    (work / "traced.py").write_text(TRACED)
    run(cmd, "trace", "-q", "-o", "py.db", "--", py, "traced.py", APP, cwd=work, env=venv_env, timeout=300)
    # tracing from Python
    run(py, "-c", f"import hubprof; hubprof.trace([{str(APP)!r}, '256', '4'], 'api.parquet')", cwd=work,
        env=venv_env, timeout=300)
    out = run(py, "-c", READ, "cli.db", "py.db", "api.parquet", cwd=work, env=venv_env, timeout=300).stdout
    assert "read ok" in out and str(env_dir) in out, out
