/* Replay bookkeeping every provider's counter modes share (replay.c): the counter plan and its passes, one
 * counter session per pass, the keys of iteration multiplexing and of warm-up runs, the profile's log rows
 * (metadata, counter_info, a dispatch row with its values). What replaying a dispatch takes on a runtime
 * (saving and restoring its memory, running it once per pass) is the provider's: prov_opencl_replay.c. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_REPLAY_H
#define HUBPROF_COLLECTOR_REPLAY_H

#include "collector.h"
#include "counters.h"
#include "hubprof/hub.h"

struct hpc_env;

typedef struct hpc_pass {
  size_t n;          /* counters of the pass */
  size_t *idx;       /* their provider indexes */
  uint64_t *info_id; /* their counter_info row ids (1-based position in the plan) */
  hc_session *sess;  /* opened at init (re-opened at need after a fork), reused for every dispatch */
} hpc_pass;

/* Multiplexing and warm-up keys: how many dispatches of each kernel (or launch) were measured. The i-th
 * measured dispatch of a multiplexing key measures pass (i mod N) + 1; a warm-up key is `measured` once its
 * warm-up ran. Keys are few (kernels, or kernels x sizes): a chained table, an entry allocated at a key's
 * first dispatch. The provider's own fields (write tracking's choice) ride along. */
#define HPC_RP_BUCKETS 4096
typedef struct hpc_rp_key {
  struct hpc_rp_key *next;
  uint32_t kernel_id;
  uint32_t agent_id;       /* a kernel rotates (and warms up) on each device on its own */
  uint32_t grid[3], wg[3]; /* zero with policy "kernel" */
  uint64_t measured;       /* dispatches of the key that measured a pass */
  int64_t run_ns;          /* warm-up keys: device time of the last run (write tracking's choice) */
  uint64_t wt_written;     /* warm-up keys: bytes the last write-tracked dispatch saved */
  int64_t mem_ns[2]; /* warm-up keys: what saving memory last cost, [0] tracked, [1] full (0: unknown) */
  uint32_t since;    /* dispatches since the path not chosen was last measured again */
} hpc_rp_key;

/* What the HUBPROF_DEBUG summary and the benchmarks report (under the provider's dispatch lock). */
typedef struct hpc_rp_stats {
  uint64_t dispatches, unreplayed, passes, warmups; /* multiplexing keys: hpc_rp.mux_keys */
  uint64_t accessible, saved, restored, restores;   /* bytes (saved: the ranges, not the pool's padding) */
  uint64_t tracked, full, faults; /* dispatches saved with write tracking / in full; write faults */
  uint64_t track_runs;            /* unmeasured runs that took the write faults out of the passes */
  uint64_t caller_only;           /* dispatches whose passes counted the launching thread alone */
  int64_t warm_ns;                /* the warm-up runs with their compare and restore */
  int64_t save_ns, compare_ns, restore_ns, pass_ns, total_ns;
  int64_t drain_ns, counters_ns, write_ns; /* the drain before pass 1; session start+stop; the log rows */
  double save_best, restore_best;          /* bytes per ns of the fastest save / restore of >= 1 MiB */
} hpc_rp_stats;

/* A device's passes of a per-device plan: [first, first + n), 0-based; known once resolved. */
#define HPC_RP_AGENTS 257
typedef struct hpc_rp_range {
  uint32_t first, n, known;
} hpc_rp_range;

/* The state of the counter modes (set at init; the tables and `off` under the provider's dispatch lock). */
typedef struct hpc_replay_state {
  const struct hpc_env *env;
  hc_provider *prov; /* the counter provider */
  hc_plan *plan;
  hpc_pass *passes;
  size_t npasses;
  double *vals; /* one pass's values */
  int mux;      /* HUBPROF_MULTIPLEX: HPC_MUX_* */
  /* HUBPROF_WINDOW: 1 "kernel" (default): an unmeasured warm-up run of each new kernel + launch, and the
   * launching thread left out of the count; 0 "enqueue": the window of old, every thread from enqueue to
   * completion, first use included (kept for comparisons: tests/replay/test_known_work.sh, bench/). */
  int warmup;
  int timed;         /* HUBPROF_DEBUG: the stages' times are taken */
  _Atomic int off;   /* replay given up after a failure */
  uint64_t mux_keys; /* multiplexing keys made (the summary) */
  hpc_rp_stats st;   /* reset in a forked child by the provider */
  hpc_rp_key *muxtab[HPC_RP_BUCKETS];
  hpc_rp_key *warmtab[HPC_RP_BUCKETS]; /* kernel + launch configurations that had their warm-up run */
  /* HUBPROF_DEVICE_PLANS (per-device plans, device_plans.c): the plan holds each device list's passes one
   * after the other; a device measures the passes of the first selector it matches (the last entry, with
   * an empty selector, is every other device's). Resolved once per agent, under the dispatch lock. */
  char *devplans; /* the map (src/common/hu_devplan.h), NULL without per-device plans */
  hpc_rp_range agent_range[HPC_RP_AGENTS]; /* agent id -> its passes, once resolved */
} hpc_replay_state;
extern hpc_replay_state hpc_rp HPC_HIDDEN;

/* A dispatch row of profile mode and its counter values. */
typedef struct hpc_rp_row {
  hp_dispatch d;
  double *vals;   /* values of every pass that ran */
  uint64_t *ids;  /* their counter_info row ids */
  uint32_t *pass; /* the pass each value was measured in */
  size_t nvals;
} hpc_rp_row;

/* Init, in two steps so a provider can check its own settings between them: the counting window, the plan
 * and the counter provider; then the passes with their sessions (opened now, before the runtime starts its
 * worker threads, which inherit the counters) and the regions' host part. 0, or -1 with a reason in *why. */
HPC_HIDDEN int hpc_rp_init_plan(const struct hpc_env *e, const char **why);
HPC_HIDDEN int hpc_rp_init_passes(const char **why);
/* The log opened: the profile's metadata (replay, multiplex_policy, pass_plan, replay_pass,
 * counter_provider), then, after the provider's own, the counter_info rows. */
HPC_HIDDEN void hpc_rp_log_head(struct hp_store *s);
HPC_HIDDEN void hpc_rp_log_counters(struct hp_store *s);
/* Open the sessions a forked child lost; -1 (profiling then disabled, one line) when one cannot be. */
HPC_HIDDEN int hpc_rp_sessions_ready(void);
/* The key of a dispatch in `tab` (`launch`: keyed by sizes too), created at its first one; NULL when out of
 * memory (multiplexing: the dispatch then measures pass 1, unrotated; warm-up: it runs none). */
HPC_HIDDEN hpc_rp_key *hpc_rp_key_find(hpc_rp_key **tab, int launch, uint32_t kid, uint32_t agent,
                                       const uint32_t grid[3], const uint32_t wg[3]);
/* Write a dispatch row and its values (and first, when meta_value is set, that metadata). */
HPC_HIDDEN void hpc_rp_write_row(const hpc_rp_row *r, const char *meta_key, const char *meta_value);
/* At exit with HUBPROF_DEBUG: the summary lines (the provider's dispatch lock held). */
HPC_HIDDEN void hpc_rp_summary(void);
/* Per-device plans (device_plans.c): check HUBPROF_DEVICE_PLANS (0; -1 with a reason); the passes agent
 * `agent_id` measures, [*first, *first + *n) 0-based (all of them without per-device plans; n 0: none;
 * in application replay the device's pass of this run only), its plan written to the log's metadata at
 * its first dispatch. */
HPC_HIDDEN int hpc_rp_devplans_init(const char **why);
HPC_HIDDEN void hpc_rp_device_passes(uint32_t agent_id, size_t *first, size_t *n);
/* A forked child: the parent's sessions closed (re-opened at need), its keys dropped. */
HPC_HIDDEN void hpc_rp_fork_child(void);

#endif
