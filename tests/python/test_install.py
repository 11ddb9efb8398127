"""`pip install ./python` for real, into a fresh virtual environment: the installed package loads the
library bundled in it, from any directory, without the source tree on its path."""
from __future__ import annotations

import os
import subprocess
import sys
import venv

import pytest
from conftest import REPO, run

CHECK = """
import sys, hubprof
lib = hubprof.library_path()
print(lib)
assert lib.startswith(sys.prefix) and lib.endswith("hubprof/_native/libhubprof.so"), lib
assert hubprof.__file__.startswith(sys.prefix), hubprof.__file__
with hubprof.create("t.parquet", format="parquet") as w:
    w.write("dispatch", {"id": [1, 2, 3], "kernel_id": 1})
stats = hubprof.merge(["t.parquet"], "t.db")
with hubprof.open("t.db") as s:
    assert len(s.table("dispatch")) == 3 == stats["rows_out"]["dispatch"]
print("installed ok", hubprof.version(), hubprof.formats())
"""


@pytest.mark.slow
def test_pip_install_into_a_venv(tmp_path):
    env_dir = tmp_path / "venv"
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    except (subprocess.CalledProcessError, OSError) as e:  # Debian's python3 without python3-venv
        pytest.skip(f"cannot create a virtual environment with pip: {e}")
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("HUBPROF_LIB", "PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # numpy and pandas come from the system site-packages, so nothing is downloaded
    run(py, "-m", "pip", "install", "--no-index", "--no-deps", "-q", REPO / "python", env=env, timeout=600)
    run(py, "-m", "pip", "check", env=env, timeout=120)
    work = tmp_path / "elsewhere"
    work.mkdir()
    out = run(py, "-c", CHECK, cwd=work, env=env, timeout=120).stdout
    assert "installed ok" in out
    # HUBPROF_LIB overrides the bundled copy
    lib = REPO / "build" / "libhubprof.so"
    out = run(py, "-c", "import hubprof; print(hubprof.library_path())", cwd=work,
              env=dict(env, HUBPROF_LIB=str(lib)), timeout=120).stdout
    assert out.strip() == str(lib.resolve())
    assert not (REPO / "python" / "build").exists()  # the build left nothing in the source tree


def test_source_tree_import_without_install():
    """`PYTHONPATH=python python3 -c 'import hubprof'` after make: the library of build/ is used."""
    env = {k: v for k, v in os.environ.items() if k != "HUBPROF_LIB"}
    env["PYTHONPATH"] = str(REPO / "python")
    out = run(sys.executable, "-c", "import hubprof; print(hubprof.library_path())", env=env, cwd=REPO).stdout
    assert out.strip() == str((REPO / "build" / "libhubprof.so").resolve())
