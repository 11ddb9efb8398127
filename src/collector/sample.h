/* PC sampling and counter timelines of the threads that run kernels (`hubprof sample`): the hooks the
 * collector calls, and the provider interface a sampling source implements (perf_event on the CPU device
 * today, sample_perf.c; a GPU's vendor sampling service would be another provider). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_SAMPLE_H
#define HUBPROF_COLLECTOR_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hp_store;
struct hp_dispatch;

#define HPC_SAMPLE_MAX_COUNTERS 8 /* in one set (one perf group: one pass) */
#define HPC_SAMPLE_MAX_SETS 8     /* sets that rotate by time slice (sampling beyond one pass) */

/* One sample as a provider delivers it: when, where (the program counter), on which thread, and the
 * listed counters' values at that moment (cumulative on that thread since sampling began). */
typedef struct hpc_raw_sample {
  int64_t time_ns; /* CLOCK_MONOTONIC_RAW, the clock of the dispatches' device times */
  uint64_t ip;
  int32_t tid;
  uint32_t nvals;
  uint64_t vals[HPC_SAMPLE_MAX_COUNTERS];
  /* Not NULL: not a sample but a file mapped executable by the thread at time_ns (the provider saw the mmap):
   * [ip, ip + map_len) from file offset map_pgoff of map_path (device map_dev = major << 32 | minor, inode
   * map_ino); the path lives until the callback returns. */
  const char *map_path;
  uint64_t map_len, map_pgoff, map_dev, map_ino;
} hpc_raw_sample;

/* A sampling source. Every call comes from the collector's harvester thread (or its exit handler), never
 * from an application thread. */
typedef struct hpc_sample_provider {
  const char *name;
  /* Start sampling thread tid every period_ns of its CPU time, reading the counters on every sample.
   * Returns a handle, or NULL with a static reason in *why. */
  void *(*open_thread)(pid_t tid, uint64_t period_ns, const char *const *counters, size_t ncounters,
                       const char **why);
  /* Deliver the samples taken since the last call (in the order taken); returns the samples the source
   * itself lost (its buffer was full). */
  uint64_t (*drain)(void *h, void (*fn)(void *ctx, const hpc_raw_sample *s), void *ctx);
  void (*close_thread)(void *h);
  /* The listed counters' values on the thread now (cumulative since open_thread), for whole-run polling
   * (HUBPROF_SAMPLE_WHOLE_RUN); the number read, 0 when it cannot. NULL: the provider cannot poll. */
  size_t (*read_now)(void *h, uint64_t *vals, size_t n);
  /* Sample the thread every period_ns of its CPU time from now on (samples already taken keep theirs);
   * 0 when done. NULL: the provider cannot change its period. */
  int (*set_period)(void *h, uint64_t period_ns);
} hpc_sample_provider;

extern const hpc_sample_provider hpc_sample_perf __attribute__((visibility("hidden")));

/* Hooks (the core reaches them through feature_hooks.c). All cheap no-ops unless HUBPROF_SAMPLE_PERIOD_US was
 * set. */
__attribute__((visibility("hidden"))) int hpc_sample_init(const char **why); /* 0, or -1 with a reason */
__attribute__((visibility("hidden"))) int hpc_sample_on(void);
__attribute__((visibility("hidden"))) void hpc_sample_log_opened(struct hp_store *s);
/* A dispatch's device window is known (harvest): its samples can be attributed. */
__attribute__((visibility("hidden"))) void hpc_sample_window(uint64_t dispatch_id, uint32_t kernel_id,
                                                             uint32_t agent_id, int64_t start, int64_t end);
/* A dispatch is running since `start` (device time; harvest, for a dispatch not complete yet): samples of its
 * kernel after start and in no completed window are attributed to it right away, so they reach the log while
 * it runs (and survive a SIGKILL). `begun` is its "dispatch begun" row (no device times, passes 0), written
 * to the log once, before its first sample, so a process killed while it runs still has a dispatch for those
 * samples (the assembly drops it when the dispatch's own row follows). Its hpc_sample_window closes it. */
__attribute__((visibility("hidden"))) void hpc_sample_running(const struct hp_dispatch *begun, int64_t start);
__attribute__((visibility("hidden"))) void hpc_sample_pass(int final); /* harvester period; final at exit */
__attribute__((visibility("hidden"))) void hpc_sample_exit(struct hp_store *s);
/* A forked child samples its own threads: the parent's samplers, samples and code are dropped (its copies).
 */
__attribute__((visibility("hidden"))) void hpc_sample_fork_child(void);
/* The bytes of what runs, when sampling or asked for (HUBPROF_CODE=all: --code; hpc_code_keep set at init):
 * a harvested dispatch of a kernel never seen before (hpc_code_note, cheap: a bit; its agent is the code
 * object's) makes the next
 * hpc_code_capture (after a harvest, off the enqueue path) look for new kernel code objects in
 * /proc/self/maps and store their rows and bytes once per hash. */
__attribute__((visibility("hidden"))) extern int hpc_code_keep;
__attribute__((visibility("hidden"))) void hpc_code_note(uint32_t kernel_id, uint32_t agent_id);
__attribute__((visibility("hidden"))) void hpc_code_capture(struct hp_store *s);
/* collector.c: the name of kernel_symbol row `id` copied into buf ("" when unknown). */
__attribute__((visibility("hidden"))) void hpc_kernel_name(uint32_t id, char *buf, size_t n);

#endif
