"""In-tree PEP 517 build backend of the hubprof Python package: builds a wheel holding the pure-Python
package, the hub's C library (hubprof/_native/libhubprof.so) and its code plugin beside it, made with the source tree's Makefile or
taken from $HUBPROF_LIB. It needs nothing from PyPI, so `pip install ./python` works offline."""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import base64
import hashlib
import io
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11: pyproject lists tomli as a build requirement there
    import tomli as tomllib

HERE = Path(__file__).resolve().parent.parent  # python/
REPO = HERE.parent  # the hubprof source tree, when building from it
LIB = "libhubprof.so"
PLUGIN = "libhubprof_code.so"  # src/analysis/code_plugin.h: capstone, libdw, libelf


def _version() -> str:
    """The one version source: VERSION at the top of the source tree (copied into an sdist's root)."""
    for path in (HERE / "VERSION", REPO / "VERSION"):
        if path.is_file():
            return path.read_text(encoding="utf-8").strip()
    raise RuntimeError(f"hubprof build: no VERSION file in {HERE} or {REPO}")


def _project() -> dict:
    with open(HERE / "pyproject.toml", "rb") as f:
        p = tomllib.load(f)["project"]
    if "version" in p.get("dynamic", []):
        p["version"] = _version()
    return p


def _dist_name(p: dict) -> str:
    return f"{p['name'].replace('-', '_')}-{p['version']}"


def _metadata(p: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}"]
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license")
    if isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and (HERE / readme).exists():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (HERE / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _tag() -> str:
    """py3-none-<platform>: the package is pure Python over ctypes, but carries a native library."""
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _find_library(config_settings: dict | None) -> Path:
    """The libhubprof.so to bundle: config setting `lib` or $HUBPROF_LIB, else built with make."""
    given = (config_settings or {}).get("lib") or os.environ.get("HUBPROF_LIB")
    if given:
        path = Path(given)
        if not path.is_file():
            raise RuntimeError(f"hubprof build: {path}: no such library")
        return path
    if (REPO / "Makefile").is_file() and (REPO / "include" / "hubprof" / "hub.h").is_file():
        cmd = ["make", "-C", str(REPO), f"build/{LIB}"]
        print("hubprof build: " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        return REPO / "build" / LIB
    raise RuntimeError("hubprof build: no hubprof source tree above python/ to build libhubprof.so in; "
                       "set HUBPROF_LIB to a built libhubprof.so")


def _package_files() -> list[tuple[str, Path]]:
    out = []
    for f in sorted((HERE / "hubprof").rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".so"):
            out.append((f.relative_to(HERE).as_posix(), f))
    return out


class _Wheel:
    """A wheel being written: files added with their RECORD line."""

    def __init__(self, path: Path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record: list[str] = []

    def add(self, arcname: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, dist_info: str) -> None:
        self.record.append(f"{dist_info}/RECORD,,")
        self.zip.writestr(f"{dist_info}/RECORD", "\n".join(self.record) + "\n")
        self.zip.close()


def _write_wheel(wheel_directory: str, files: list[tuple[str, bytes, int]]) -> str:
    p = _project()
    name = _dist_name(p)
    tag = _tag()
    filename = f"{name}-{tag}.whl"
    dist_info = f"{name}.dist-info"
    w = _Wheel(Path(wheel_directory) / filename)
    for arc, data, mode in files:
        w.add(arc, data, mode)
    w.add(f"{dist_info}/METADATA", _metadata(p).encode())
    w.add(f"{dist_info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: hubprof_build\nRoot-Is-Purelib: false\n"
                                 f"Tag: {tag}\n").encode())
    w.add(f"{dist_info}/top_level.txt", b"hubprof\n")
    w.close(dist_info)
    return filename


# ---- PEP 517 / PEP 660 hooks ----
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    lib = _find_library(config_settings)
    files = [(arc, f.read_bytes(), 0o644) for arc, f in _package_files()]
    files.append((f"hubprof/_native/{LIB}", lib.read_bytes(), 0o755))
    # the code plugin (disassembly and source lines of the sample views), loaded from beside the library
    plugin = lib.parent / PLUGIN
    if not plugin.is_file() and (REPO / "Makefile").is_file() and lib.parent == REPO / "build":
        subprocess.run(["make", "-C", str(REPO), f"build/{PLUGIN}"], check=True, stdout=sys.stderr)
    if plugin.is_file():
        files.append((f"hubprof/_native/{PLUGIN}", plugin.read_bytes(), 0o755))
    # the built-in metric sets and device descriptions, where the library looks beside itself
    share = REPO / "share" / "hubprof"
    for f in sorted(share.rglob("*")) if share.is_dir() else []:
        if f.is_file():
            files.append((f"hubprof/_native/share/hubprof/{f.relative_to(share).as_posix()}", f.read_bytes(), 0o644))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth file puts python/ on sys.path; the library is found in the source
    tree's build/ (run make) or through $HUBPROF_LIB."""
    return _write_wheel(wheel_directory, [("hubprof_editable.pth", (str(HERE) + "\n").encode(), 0o644)])


def build_sdist(sdist_directory, config_settings=None):
    """The Python sources only: a wheel built from it needs HUBPROF_LIB (no C sources are included)."""
    p = _project()
    name = _dist_name(p)
    filename = f"{name}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        paths = [HERE / "pyproject.toml", HERE / "build_backend" / "hubprof_build.py"]
        paths += [f for _, f in _package_files()]
        readme = p.get("readme")
        if isinstance(readme, str) and (HERE / readme).exists():
            paths.append(HERE / readme)
        for f in paths:
            tar.add(f, arcname=f"{name}/{f.relative_to(HERE).as_posix()}")
        version = (_version() + "\n").encode()  # the one version source travels with the sdist
        info = tarfile.TarInfo(f"{name}/VERSION")
        info.size = len(version)
        tar.addfile(info, io.BytesIO(version))
        pkg_info = _metadata(p).encode()
        info = tarfile.TarInfo(f"{name}/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return filename


