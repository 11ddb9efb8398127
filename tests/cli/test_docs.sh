#!/usr/bin/env bash
# Docs that match the code (issue 28): check_docs.py compares each subcommand's -h (from the option tables that
# parse it) with the option table of docs/cli/CMD.md both ways, and README.md's command and layout tables with
# `hubprof --help` and the tree.
# usage: test_docs.sh [HUBPROF]   (default build/hubprof)
# SPDX-License-Identifier: MIT
set -u
HP=$(realpath "${1:-build/hubprof}")
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
need_built test_docs "$HP"
hp_test_env
python3 tests/cli/check_docs.py "$HP" && ok || bad "docs and code differ (the MISMATCH lines above)"
echo "test_docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
