"""In-tree PEP 517 build backend of the hubprof Python package: builds a wheel that is the whole tool: the
pure-Python package, the hub's C library (hubprof/_native/libhubprof.so) and its code plugin, the hubprof
program and the collector beside it, and the `hubprof` command (a console script), made with the source
tree's Makefile or taken from the folder of $HUBPROF_LIB. It needs nothing from PyPI, so `pip install
./python` works offline."""
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


# What the wheel carries beside the library, from the source tree's build/ (all made by `make all`): the
# hubprof program, the collector it loads into applications and the exit shim beside it, and (when LLVM 15 was
# there to build it) the analysis plugin for source lines. The program finds them beside itself.
PROGRAM = "hubprof"
NATIVE = ["libhubprof_collector.so", "libhubprof_exit.so"]
OPTIONAL = ["libhubprof_llvm.so"]


def _given(config_settings: dict | None) -> Path | None:
    given = (config_settings or {}).get("lib") or os.environ.get("HUBPROF_LIB")
    return Path(given) if given else None


def _find_library(config_settings: dict | None) -> Path:
    """The libhubprof.so to bundle: config setting `lib` or $HUBPROF_LIB, else built with make (with the
    program and the collector: the whole tool)."""
    given = _given(config_settings)
    if given:
        if not given.is_file():
            raise RuntimeError(f"hubprof build: {given}: no such library")
        return given
    if (REPO / "Makefile").is_file() and (REPO / "include" / "hubprof" / "hub.h").is_file():
        cmd = ["make", "-C", str(REPO), f"build/{LIB}", f"build/{PROGRAM}", "collector"]
        print("hubprof build: " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        return REPO / "build" / LIB
    raise RuntimeError("hubprof build: no hubprof source tree above python/ to build libhubprof.so in; "
                       "set HUBPROF_LIB to a built libhubprof.so")


def _native_files(lib: Path) -> list[tuple[str, bytes, int]]:
    """The program and the collector from the library's folder (build/, or HUBPROF_LIB's folder). Missing
    ones are an error: a wheel without them is not the whole tool (HUBPROF_WHEEL_LIBRARY_ONLY=1 builds the
    bindings alone, for a machine where only the library was built)."""
    if os.environ.get("HUBPROF_WHEEL_LIBRARY_ONLY") == "1":
        return []
    folder = lib.resolve().parent
    out = []
    for name in [PROGRAM, *NATIVE, *OPTIONAL]:
        f = folder / name
        if not f.is_file():
            if name in OPTIONAL:
                continue
            raise RuntimeError(f"hubprof build: {f} is missing: build it with `make all` (or set "
                               "HUBPROF_WHEEL_LIBRARY_ONLY=1 for a wheel of the bindings alone)")
        out.append((f"hubprof/_native/{name}", f.read_bytes(), 0o755))
    return out


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


def _entry_points(p: dict) -> str:
    """entry_points.txt from [project.scripts]: the `hubprof` command."""
    scripts = p.get("scripts", {})
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())


def _write_wheel(wheel_directory: str, files: list[tuple[str, bytes, int]], entry_points: str = "") -> str:
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
    if entry_points:
        w.add(f"{dist_info}/entry_points.txt", entry_points.encode())
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
    files += _native_files(lib)
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
    return _write_wheel(wheel_directory, files, _entry_points(_project()))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth file puts python/ on sys.path; the library is found in the source
    tree's build/ (run make) or through $HUBPROF_LIB."""
    return _write_wheel(wheel_directory, [("hubprof_editable.pth", (str(HERE) + "\n").encode(), 0o644)],
                        _entry_points(_project()))


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


