#!/usr/bin/env bash
# Cluster runs (docs/cluster.md): a real Open MPI run of 4 ranks on this machine, each rank running an OpenCL
# program under `mpirun hubprof trace -o DIR` (one store per rank) and under `hubprof trace -- mpirun`;
# `merge DIR`; `analyze --by rank` against each rank's own store; the imbalance view; same pid on two
# (faked) nodes; a rank killed mid-run; a foreign file in the folder. mpirun starts twice per suite.
# usage: test_cluster.sh [HUBPROF]
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/../.."
HP=${1:-build/hubprof}
EX=build/examples
. tests/lib.sh
hp_test_env
need_built cluster "$HP" $EX/ocl/vector_add $EX/ocl/crash
need_opencl cluster
if ! command -v mpirun >/dev/null || [ ! -x $EX/mpi/mpi_ocl ]; then
  echo "cluster: skipped: no Open MPI (bash scripts/deps.sh installs openmpi-bin and libopenmpi-dev)"
  echo "cluster: 0 passed, 0 failed"
  exit 0
fi
# as root Open MPI wants to be told; --oversubscribe: 4 ranks on fewer cores
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 4)
# the ranks must not see a launcher of ours
unset OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID HUBPROF_HOSTNAME

# 1. mpirun -np 4 hubprof trace -o DIR -- APP: one store per rank, named for host, pid and rank
expect 0 timeout 300 "${MPIRUN[@]}" "$HP" trace -o "$T/ranks" -- $EX/mpi/mpi_ocl
grep -q "mpi_ocl: 4 ranks, 120 dispatches, ok" "$T/out" && ok || bad "the program's line: $(cat "$T/out")"
# each rank's summary one whole line (issue 28: they interleaved mid-line), whatever order they came in
n=$(grep -cE '^hubprof: [0-9]+ dispatch(es)? of [0-9]+ kernels? in 1 process -> [^ ]+/hubprof-[^ ]+-r[0-3]\.db \(rocpd\); programs: [^;]+$' "$T/err")
[ "$n" -eq 4 ] && ok || bad "4 whole summary lines expected, $n: $(cat "$T/err")"
n=$(ls "$T/ranks" | grep -cE '^hubprof-.+-[0-9]+-r[0-3]\.db$')
[ "$n" -eq 4 ] && ok || bad "4 rank stores expected: $(ls -a "$T/ranks")"
[ "$(ls -A "$T/ranks" | wc -l)" -eq 4 ] && ok || bad "leftovers in the folder: $(ls -a "$T/ranks")"

# 2. merge DIR, then --by rank equals each rank's store alone (exact dispatch counts per rank)
expect 0 "$HP" merge -o "$T/run.parquet" "$T/ranks"
grep -q "4 processes, 120 dispatches" "$T/err" && ok || bad "merge summary: $(cat "$T/err")"
expect 0 "$HP" analyze --by rank --format csv "$T/run.parquet"
cp "$T/out" "$T/by_rank.csv"
expect 0 "$HP" analyze --by rank-imbalance --format csv "$T/run.parquet"
cp "$T/out" "$T/imbalance.csv"
[ "$(wc -l <"$T/imbalance.csv")" -eq 3 ] && ok || bad "imbalance rows: $(cat "$T/imbalance.csv")"
expect 0 python3 tests/cluster/check_ranks.py "$HP" "$T/run.parquet" "$T/by_rank.csv" "$T/imbalance.csv" \
  "$T"/ranks/*.db
cat "$T/out"
expect 0 "$HP" analyze --by rank-imbalance --format json "$T/run.parquet"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["rows"] if isinstance(d,dict) else d; assert len(r)==2' \
  "$T/out" 2>/dev/null && ok || bad "imbalance JSON: $(head -c 300 "$T/out")"

# 3. hubprof trace -o ONE -- mpirun ...: the same ranks in one store
expect 0 timeout 300 "$HP" trace -q -o "$T/one.db" -- "${MPIRUN[@]}" $EX/mpi/mpi_ocl
expect 0 "$HP" analyze --by rank --format csv "$T/one.db"
python3 - "$T/out" "$T/by_rank.csv" <<'PY' && ok || bad "trace -- mpirun: rank rows differ from mpirun hubprof"
import csv, sys
key = lambda f: sorted((r["rank"], r["kernel"], r["calls"]) for r in csv.DictReader(open(f)))
sys.exit(0 if key(sys.argv[1]) == key(sys.argv[2]) and len(key(sys.argv[1])) == 8 else 1)
PY

# 4. two ranks of one job on two nodes with the same pid: a pid namespace gives both pid 1, HUBPROF_HOSTNAME
# stands for the node
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  for r in 0 1; do
    h=node$r
    expect 0 env OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 SLURM_JOB_ID=77 HUBPROF_HOSTNAME=$h \
      unshare --pid --fork --mount-proc "$HP" trace -q -o "$T/same" -- $EX/ocl/vector_add 1024 $((r + 2))
  done
  [ -e "$T/same/hubprof-node0-1-r0.db" ] && [ -e "$T/same/hubprof-node1-1-r1.db" ] && ok ||
    bad "same pid on two nodes: $(ls "$T/same")"
  expect 0 "$HP" merge -o "$T/same.db" "$T/same"
  expect 0 "$HP" analyze --by rank --format csv "$T/same.db"
  python3 - "$T/out" <<'PY' && ok || bad "same pid: $(cat "$T/out")"
import csv, sys
rows = sorted((r["rank"], r["host"], r["pid"], r["calls"]) for r in csv.DictReader(open(sys.argv[1])))
sys.exit(0 if rows == [("0", "node0", "2", "2"), ("1", "node1", "2", "3")] else 1)
PY
else
  echo "cluster: no pid namespaces here: the same-pid case checks the names only"
  for h in nodeA nodeB; do
    expect 0 env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 HUBPROF_HOSTNAME=$h "$HP" trace -q -o "$T/same" \
      -- $EX/ocl/vector_add 1024 2
  done
  [ "$(ls "$T/same" | grep -c nodeA)" -eq 1 ] && [ "$(ls "$T/same" | grep -c nodeB)" -eq 1 ] && ok || bad "$(ls "$T/same")"
fi

# 5. a rank killed mid-run: its dispatches are kept (7 harvested, 3 launched after its last sync from its launch
# file), and merge names the rank
expect 0 env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$HP" trace -q -o "$T/cut" -- $EX/ocl/vector_add 1024 3
expect 137 env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 "$HP" trace -q -o "$T/cut" -- $EX/ocl/crash kill 7
expect 0 "$HP" merge -o "$T/cut.db" "$T/cut"
grep -q "rank 1 (host .*, pid [0-9]*, .*-r1.db) was cut: .*its 10 recorded dispatches are kept" "$T/err" && ok ||
  bad "merge does not name the cut rank: $(cat "$T/err")"
grep -q "rank 0 " "$T/err" && bad "rank 0 named as cut: $(cat "$T/err")" || ok
expect 0 "$HP" analyze --by rank --format csv "$T/cut.db"
python3 -c 'import csv,sys; sys.exit(sum(int(r["calls"]) for r in csv.DictReader(open(sys.argv[1])) if r["rank"] == "1") != 10)' \
  "$T/out" && ok ||
  bad "the cut rank's dispatches: $(cat "$T/out")"

# 5b. a rank whose hubprof was killed (the job manager's SIGKILL): its logs stay in DIR/.hubprof-logs.*, and
# merge takes them with a warning
env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 "$HP" trace -q -o "$T/killed" -- \
  sh -c "$EX/ocl/vector_add 1024 6 >/dev/null; echo \$\$ >$T/sleeper; exec sleep 60" &
hp_pid=$!
for _ in $(seq 600); do [ -s "$T/sleeper" ] && break; sleep 0.1; done
exec 3>&2 2>/dev/null # not the shell's "Killed" line
kill -9 "$hp_pid"
wait "$hp_pid"
exec 2>&3 3>&-
[ -s "$T/sleeper" ] && kill "$(cat "$T/sleeper")" 2>/dev/null
expect 0 "$HP" merge -o "$T/killed.db" "$T/killed"
grep -q "\.hubprof-logs\..*: 1 per-process log that no hubprof assembled" "$T/err" && ok ||
  bad "merge of a killed hubprof's logs: $(cat "$T/err")"
expect 0 "$HP" analyze --by rank --format csv "$T/killed.db"
python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); sys.exit(not (len(r)==1 and r[0]["rank"]=="3" and r[0]["calls"]=="6"))' \
  "$T/out" && ok || bad "the killed hubprof's rank: $(cat "$T/out")"

# 6. a foreign file in the folder is named; nothing is written
echo "notes" >"$T/ranks/notes.txt"
expect 1 "$HP" merge -o "$T/foreign.parquet" "$T/ranks"
one_line_error "$T/ranks/notes.txt: not a hubprof store"
[ ! -e "$T/foreign.parquet" ] && ok || bad "an output was written despite the foreign file"
rm "$T/ranks/notes.txt"
mkdir "$T/empty"
expect 1 "$HP" merge -o "$T/empty.db" "$T/empty"
one_line_error "a folder without stores"

# 7. under a launcher, -o naming a file or a Parquet store is refused before the application starts
touch "$T/afile"
expect 1 env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$HP" trace -o "$T/afile" -- $EX/ocl/vector_add
one_line_error "is not a folder"
expect 1 env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$HP" trace -o "$T/run.parquet" -- $EX/ocl/vector_add
one_line_error "is a Parquet store"
# a job of one rank (srun -n 1) writes the one store it names, as without a launcher
expect 0 env SLURM_PROCID=0 SLURM_NTASKS=1 "$HP" trace -q -o "$T/single.db" -- $EX/ocl/vector_add 1024 1
[ -f "$T/single.db" ] && ok || bad "a job of one: $(ls "$T")"

echo "cluster: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
