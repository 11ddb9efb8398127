# Shared by the shell tests (source it, then call hp_test_env or set T, a scratch directory): the common
# environment, counting checks and running a command with its exit code, stdout and stderr captured. The caller prints its closing
# "NAME: N passed, N failed" line from $pass and $fail.
# SPDX-License-Identifier: MIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*" >&2
}
# steal_mark: remembers /proc/stat's CPU ticks; steal_since: the share of them a hypervisor took (steal) since
# the mark, "N%": the cause when a task-clock check against a thread's CPU time fails on a shared VM.
steal_mark() { _steal0=$(awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat 2>/dev/null); }
steal_since() {
  awk -v m="$_steal0" '/^cpu /{split(m, a, " "); t = $2+$3+$4+$5+$6+$7+$8+$9 - a[2];
    printf "%.0f%%", (t > 0 ? 100 * ($9 - a[1]) / t : 0)}' /proc/stat 2>/dev/null
}
# expect CODE CMD...: run, keep stdout in $T/out and stderr in $T/err, check the exit code
expect() {
  local want=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "exit $got (want $want): $* :: $(head -c 300 "$T/err")"; fi
}
# need_built NAME FILE...: each FILE exists, or the test NAME ends failed (it was not built)
need_built() {
  local name=$1 f
  shift
  for f in "$@"; do
    [ -e "$f" ] && continue
    echo "$name: $f is missing (make all)" >&2
    echo "$name: 0 passed, 1 failed"
    exit 1
  done
}
# need_opencl NAME: an OpenCL device is there, or the test NAME ends skipped (passing nothing)
need_opencl() {
  clinfo -l 2>/dev/null | grep -q Device && return 0
  echo "$1: skipped: no OpenCL device (install pocl-opencl-icd)"
  echo "$1: 0 passed, 0 failed"
  exit 0
}
# one_line_error PATTERN: stderr is exactly one line and contains PATTERN; stdout is empty
one_line_error() {
  if [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$1" "$T/err" && [ ! -s "$T/out" ]; then ok; else
    bad "stderr not one line with '$1': $(cat "$T/err") / stdout: $(head -c 200 "$T/out")"
  fi
}
# hp_clean_env [KEEP...]: EVERY HUBPROF_* variable of the caller's environment unset (a new one is never
# forgotten) except the KEEP names (one tests/run.sh passes on purpose, e.g. HUBPROF_WTRACK), and
# OPENCL_LAYERS, LD_PRELOAD and NVTX_INJECTION64_PATH too: nothing of the caller's changes what a test runs.
hp_clean_env() {
  local v k
  for v in $(compgen -v HUBPROF_); do
    for k in "$@"; do [ "$v" = "$k" ] && continue 2; done
    unset "$v"
  done
  unset OPENCL_LAYERS LD_PRELOAD NVTX_INJECTION64_PATH CUDA_INJECTION64_PATH
}
# hp_test_env [KEEP...]: the common start of a test that runs hubprof or an application, called from the
# repository root after sourcing this file: hp_clean_env KEEP..., a scratch directory $T removed on exit, no
# core files, HUBPROF_COLLECTOR set to the build's collector (an ASan hubprof must not put its runtime into
# the application; the build folder is $B, default build) and PYTHONPATH to python/.
hp_test_env() {
  hp_clean_env "$@"
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
  ulimit -c 0
  export HUBPROF_COLLECTOR=$PWD/${B:-build}/libhubprof_collector.so
  export PYTHONPATH=$PWD/python
}
