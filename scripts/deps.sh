#!/usr/bin/env bash
# Installs what hubprof needs to build, test and demo on Debian 12, only when it is missing:
# Debian packages with apt-get (as root, or through sudo). Safe to run again.
# SPDX-License-Identifier: MIT
set -euo pipefail

debs=(gcc g++ make clang libclang-rt-14-dev libsqlite3-dev sqlite3 libzstd-dev pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo libotf2-trace-dev otf2-tools libsnappy-dev)
# Spark (the dataset tests, tests/python/test_dataset.py and check_readers.py) needs a Java runtime: Debian 12's
# OpenJDK 17 (about 200 MB; pyspark below is about 500 MB, a few minutes of download, no build).
debs+=(openjdk-17-jre-headless)
debs+=(libcapstone-dev libdw-dev) # hubprof analyze --by instruction|line (h-sample)
debs+=(chromium chromium-driver) # hubprof report: the page opened headless, driven through selenium (tests/python/test_report*.py)
debs+=(openmpi-bin libopenmpi-dev) # cluster runs: the MPI rank tests
debs+=(llvm-15-dev) # analyze --by line for -g alone: the LLVM-C headers of the plugin build/libhubprof_llvm.so (h-lines)
debs+=(time) # /usr/bin/time: the memory and time bounds of tests/cli/test_bounds.sh
debs+=(clpeak) # the OpenCL peak benchmark hubprof roofline's ceilings are compared with (bench/bench_roofline.sh)
debs+=(pkg-config) # tests/test_install.sh builds an application against the installed hubprof.pc (a bare Debian 12 lacks it)
debs+=(python3-venv) # tests/python/test_install.py: pip install ./python into a fresh venv (ensurepip; a bare Debian 12 lacks it)
debs+=(python3 python3-pip) # the Python bindings and their tests; pip for the packages below (a bare Debian 12 has neither)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages for the bindings' tests and the Parquet reference readers (pip, only when missing).
pips=(pytest numpy pandas pyarrow duckdb polars pyspark perfetto selenium)
need=()
for m in "${pips[@]}"; do
  python3 -c "import $m" 2>/dev/null || need+=("$m")
done
# Debian's own python3 is "externally managed" (PEP 668): pip refuses to install into it unless told to. The
# tests run that interpreter, so the packages go there (a python3 from pyenv or a venv needs no flag).
pipflags=(-q)
if python3 -c 'import sys, sysconfig, os; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
  pipflags+=(--break-system-packages)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: pip installing ${need[*]}" >&2
  python3 -m pip install "${pipflags[@]}" "${need[@]}"
fi

# nvdisasm for the SASS of stored cubins (docs/sampling.md), where nvcc builds them and no toolkit nvdisasm is
# installed: the pip package nvidia-cuda-nvdisasm (site-packages/nvidia/cu*/bin/nvdisasm)
if { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; } && ! command -v nvdisasm >/dev/null &&
  [ ! -x /usr/local/cuda/bin/nvdisasm ] && ! python3 -m pip show -q nvidia-cuda-nvdisasm >/dev/null 2>&1; then
  echo "deps: pip installing nvidia-cuda-nvdisasm" >&2
  python3 -m pip install "${pipflags[@]}" nvidia-cuda-nvdisasm || echo "deps: nvidia-cuda-nvdisasm not installed" >&2
fi
