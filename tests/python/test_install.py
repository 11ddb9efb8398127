"""`pip install ./python` for real, into a fresh virtual environment: the installed package loads the
library bundled in it, from any directory, without the source tree on its path."""
# SPDX-License-Identifier: MIT
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
import importlib.metadata
assert importlib.metadata.version("hubprof") == hubprof.__version__ == hubprof.version() == sys.argv[1]
print("installed ok", hubprof.version(), hubprof.formats())
"""


@pytest.mark.slow
def test_pip_install_into_a_venv(tmp_path):
    env_dir = tmp_path / "venv"
    try:
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    except (subprocess.CalledProcessError, OSError, SystemExit) as e:  # Debian's python3 without python3-venv
        # (Debian's venv module exits, SystemExit, when ensurepip is missing; scripts/deps.sh installs it)
        pytest.skip(f"cannot create a virtual environment with pip: {e}")
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("HUBPROF_LIB", "PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # numpy and pandas come from the system site-packages, so nothing is downloaded
    run(py, "-m", "pip", "install", "--no-index", "--no-deps", "-q", REPO / "python", env=env, timeout=600)
    run(py, "-m", "pip", "check", env=env, timeout=120)
    work = tmp_path / "elsewhere"
    work.mkdir()
    version = (REPO / "VERSION").read_text().strip()
    out = run(py, "-c", CHECK, version, cwd=work, env=env, timeout=120).stdout
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


def test_one_version_source():
    """The package's version is the VERSION file's, through the C library; pyproject names none."""
    env = {k: v for k, v in os.environ.items() if k != "HUBPROF_LIB"}
    env["PYTHONPATH"] = str(REPO / "python")
    out = run(sys.executable, "-c", "import hubprof; print(hubprof.__version__, hubprof.version())", env=env,
              cwd=REPO).stdout.split()
    version = (REPO / "VERSION").read_text().strip()
    assert out == [version, version]
    assert 'dynamic = ["version"]' in (REPO / "python" / "pyproject.toml").read_text()


def test_sdist_carries_the_version(tmp_path):
    """An sdist holds VERSION, so a wheel built from it (with HUBPROF_LIB) gets the same version."""
    sys.path.insert(0, str(REPO / "python" / "build_backend"))
    try:
        import hubprof_build
    finally:
        sys.path.pop(0)
    import tarfile
    version = (REPO / "VERSION").read_text().strip()
    name = hubprof_build.build_sdist(str(tmp_path))
    assert name == f"hubprof-{version}.tar.gz"
    with tarfile.open(tmp_path / name) as tar:
        assert tar.extractfile(f"hubprof-{version}/VERSION").read().decode().strip() == version
        assert f"Version: {version}" in tar.extractfile(f"hubprof-{version}/PKG-INFO").read().decode()
