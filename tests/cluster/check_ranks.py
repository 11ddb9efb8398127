"""Checks of tests/cluster/test_cluster.sh on a merged cluster run: `analyze --by rank` (CSV) equals each rank's
own store analyzed alone, the imbalance view's figures follow from the per-rank rows, and the process table
holds the launcher's rank, size, local rank and job.
usage: check_ranks.py HUBPROF MERGED RANKS_CSV IMBALANCE_CSV RANK_STORE...   exit 0 and one line when all hold."""
# SPDX-License-Identifier: MIT
import csv
import statistics
import subprocess
import sys


def rows(text):
    return list(csv.DictReader(text.splitlines()))


def main():
    hubprof, merged, by_rank, imbalance = sys.argv[1:5]
    stores = sys.argv[5:]
    ranks = rows(open(by_rank).read())
    problems = []
    seen = set()
    for store in stores:
        name = store.rsplit("/", 1)[-1]
        rank = int(name.rsplit("-r", 1)[1].split(".")[0])
        seen.add(rank)
        own = rows(subprocess.run([hubprof, "analyze", "--format", "csv", store], check=True,
                                  capture_output=True, text=True).stdout)
        mine = {r["kernel"]: r for r in ranks if int(r["rank"]) == rank}
        if len(own) != len(mine):
            problems.append(f"rank {rank}: {len(own)} kernels alone, {len(mine)} in --by rank")
        for r in own:
            m = mine.get(r["kernel"])
            for col in ("calls", "timed_calls", "total_ns", "min_ns", "max_ns"):
                if m is None or m[col] != r[col]:
                    problems.append(f"rank {rank} {r['kernel']} {col}: alone {r[col]}, merged {m and m[col]}")
            want = 10 * (rank + 1) if r["kernel"] == "scale" else 5
            if int(r["calls"]) != want:
                problems.append(f"rank {rank} {r['kernel']}: {r['calls']} calls, the program made {want}")
    if seen != {int(r["rank"]) for r in ranks}:
        problems.append(f"ranks in the stores {sorted(seen)}, in --by rank {sorted({r['rank'] for r in ranks})}")
    for row in rows(open(imbalance).read()):
        per = {}
        for r in ranks:
            if r["kernel"] == row["kernel"]:
                per[int(r["rank"])] = per.get(int(r["rank"]), 0) + int(r["total_ns"])
        vals = sorted(per.values())
        slow = min(k for k, v in per.items() if v == vals[-1])
        got = (int(row["ranks"]), int(row["min_ns"]), float(row["median_ns"]), int(row["max_ns"]),
               int(row["slowest_rank"]))
        want = (len(vals), vals[0], float(statistics.median(vals)), vals[-1], slow)
        if got != want:
            problems.append(f"imbalance {row['kernel']}: {got}, from the rank rows {want}")
    sys.path.insert(0, "python")
    import hubprof as hp
    p = hp.open(merged).table("process")
    if sorted(p["rank"].tolist()) != sorted(seen) or set(p["world_size"].tolist()) != {len(seen)}:
        problems.append(f"process table: ranks {p['rank'].tolist()}, sizes {p['world_size'].tolist()}")
    if sorted(p["local_rank"].tolist()) != sorted(seen) or p["job_id"].nunique() != 1 or not p["job_id"].iloc[0]:
        problems.append(f"process table: local ranks {p['local_rank'].tolist()}, jobs {p['job_id'].tolist()}")
    if (p["clock_offset_ns"].fillna(0) <= 0).any():
        problems.append(f"process table: clock offsets {p['clock_offset_ns'].tolist()}")
    for line in problems:
        print("FAIL:", line)
    print(f"check_ranks: {len(stores)} rank stores, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
