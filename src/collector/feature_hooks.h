/* The collector's features as its core drives them: regions and NVTX ranges (regions.c, nvtx.c), dispatch
 * selection (select.c), PC sampling and code capture (sample.c). They use the core's services (the log,
 * the registries, one-line messages: collector.h); the core tells them of its events only through the
 * table here (feature_hooks.c), so neither side calls the other back. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_FEATURE_HOOKS_H
#define HUBPROF_COLLECTOR_FEATURE_HOOKS_H

#include <stdint.h>

struct hpc_env;
struct hp_store;
struct hp_dispatch;

typedef struct hpc_feature_hooks {
  /* Init, before the providers' (not in profile mode): sampling's settings (HUBPROF_SAMPLE_*); 0, or -1 with
   * a static reason in *why (sampling is then off). */
  int (*sample_init)(const char **why);
  int (*sampling)(void); /* 1 while PC sampling is on (set at init) */
  /* Init, after the providers': HUBPROF_START_PAUSED and the dispatch selection. */
  void (*init)(const struct hpc_env *e);
  void (*log_opened)(struct hp_store *s); /* the log just opened: sampling's counter_info rows */
  /* Harvest, for each dispatch written: its device window (only while sampling), its kernel for the code
   * capture (only with hpc_code_keep); a dispatch still running (while sampling); after a harvest that
   * wrote dispatches, the code of kernels seen for the first time. */
  void (*window)(uint64_t dispatch_id, uint32_t kernel_id, uint32_t agent_id, int64_t start, int64_t end);
  void (*code_note)(uint32_t kernel_id, uint32_t agent_id);
  void (*running)(const struct hp_dispatch *begun, int64_t start);
  void (*code_capture)(struct hp_store *s);
  void (*pass)(int final); /* the background harvester's period */
  void (*fork_child)(void);
  /* Exit handler, the log open: regions and NVTX ranges still open ended at end_ns, the selection's counts,
   * the last code and samples. */
  void (*exit)(struct hp_store *s, int64_t end_ns, int debug);
} hpc_feature_hooks;

extern const hpc_feature_hooks hpc_features __attribute__((visibility("hidden")));

#endif
