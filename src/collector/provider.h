/* The runtime-provider seam of the collector: what a runtime provider (OpenCL today, prov_opencl*.c; CUDA
 * through CUPTI next) gives the collector's shared core, and what the core does for every provider. */
/* SPDX-License-Identifier: MIT */
/* A provider gives: the runtime's entry points it intercepts (its own files: an ICD layer, a preload shim, a
 * CUPTI callback), dispatches put into the calling thread's ring (collector.h: hpc_thread, hpc_pending) or
 * rows written directly (hpc_store_enter), code objects, counters through kernel or application replay, and
 * the answers to the questions below, which the core asks on its slow paths only.
 *
 * The core does for every provider: the per-process log and its opening, the registries (agents, kernel
 * symbols, queues: hpc_agent_of, hpc_kernel_slow/created, hpc_queue_slow/created, the lock-free lookup
 * tables), the rings and their harvest (at sync points, by the background harvester, at thread and process
 * exit), dispatch selection (select.h), regions and markers (regions.h), PC samples (sample.h), fork and
 * exit, the counter modes' bookkeeping (replay.h: plan, sessions, keys, rows) and the replay guard
 * (hpc_replay_active).
 *
 * Cost rule: the enqueue hot path never goes through this table. A provider's intercepted entry points call
 * the core directly (inline ring push, hpc_tab_get); the core calls a provider through the table at init,
 * fork and exit, once per device, kernel or queue it registers, and once per harvested batch of up to
 * HPC_POLL_BATCH dispatches. agent_describe runs with the registries' lock held: it must not call back into
 * the core's registries (the others may). */
#ifndef HUBPROF_COLLECTOR_PROVIDER_H
#define HUBPROF_COLLECTOR_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

struct hpc_env;
struct hp_store;
struct hp_agent;
struct hpc_pending;

/* What a provider says of one pending dispatch at harvest (poll). */
enum {
  HPC_POLL_DONE = 0,    /* complete (or failed): start_ns/end_ns its device times, 0/0 when it has none */
  HPC_POLL_PENDING = 1, /* not complete: stays in the ring */
  HPC_POLL_RUNNING = 2  /* running: stays; start_ns its device start when asked for and known, else 0 */
};
typedef struct hpc_poll {
  int64_t start_ns, end_ns;
  int state; /* HPC_POLL_* */
} hpc_poll;
#define HPC_POLL_BATCH 32 /* dispatches one poll call answers at most */

typedef struct hpc_provider {
  const char *name; /* "opencl" */
  void *h;          /* the provider's own state, handed back to every function */
  /* Init, once, after the environment was read and before collection starts (e: the whole configuration;
   * e->profile: counters). 0, or -1 with a static reason in *why: the collector then stays disabled. */
  int (*init)(void *h, const struct hpc_env *e, const char **why);
  /* How it is attached to the runtime, for the HUBPROF_DEBUG line at init ("OpenCL layer", "LD_PRELOAD"). */
  const char *(*attached)(void *h);
  /* The log opened (in this process, or a forked child's): the provider's own metadata and rows. */
  void (*log_opened)(void *h, struct hp_store *s);
  /* A device the core registers as an agent (g_lock held): fill row's descriptive fields (strings from
   * malloc, kept by the core) and *caller (1: it runs ready commands inside the enqueue call, on the
   * enqueuing thread; decides when the background harvester starts). `rt`: the runtime context the object
   * came through (for OpenCL the dispatch table to call). */
  void (*agent_describe)(void *h, const void *rt, uintptr_t dev, struct hp_agent *row, int *caller);
  /* A kernel's name (a kernel_symbol row): into buf (len bytes) or a malloc'd string when longer; NULL when
   * unknown. The caller frees a result that is not buf. */
  char *(*kernel_name)(void *h, const void *rt, uintptr_t kernel, char *buf, size_t len);
  /* The code object (code_object row id) a kernel belongs to, 0 when unknown. */
  uint64_t (*kernel_code_object)(void *h, const void *rt, uintptr_t kernel);
  /* The device of a queue the provider did not see created, 0 when unknown. */
  uintptr_t (*queue_device)(void *h, const void *rt, uintptr_t queue);
  /* Harvest: the state of ring entries ring[(from + i) & mask], i < n (n <= HPC_POLL_BATCH), into out[i].
   * An entry answered HPC_POLL_DONE has its completion handle (hpc_pending.ev) released. want_start: the
   * start of running ones is wanted (PC sampling). Never waits for the device. */
  void (*poll)(void *h, const void *rt, struct hpc_pending *ring, uint64_t mask, uint64_t from, size_t n,
               int want_start, hpc_poll *out);
  /* Release the completion handle of an entry written without waiting for it (full ring, exit). */
  void (*release)(void *h, const void *rt, void *ev);
  /* Exit: write what the provider still holds (before the process's end row), e.g. pending copies. */
  void (*flush)(void *h, struct hp_store *s);
  /* A forked child (in the child, after the core reset its own state). */
  void (*fork_child)(void *h);
  /* Exit, after the log's last flush: the provider's summary line (debug); returns the dispatch rows the
   * provider wrote itself (kernel replay writes each dispatch as it ends), 0 when the rings wrote them. */
  uint64_t (*exit)(void *h, int debug);
  /* The identity of a kernel's program (module): HPC_PROGRAM_ID - 1 lower-case hex digits of a hash of what
   * the application gave the runtime (sources and build options, binaries, linked inputs), never of
   * anything the runtime would have to produce; into id, returning 1; 0 when unknown. The core keys kernel
   * symbols by name and this identity (two programs' kernels of one name are two kernels). NULL: the
   * provider knows no identities (kernels are told apart by name alone). */
  int (*kernel_program)(void *h, const void *rt, uintptr_t kernel, char id[17]);
} hpc_provider;

#define HPC_PROGRAM_ID 17 /* a program identity as text: 16 hex digits (64 bits of SHA-256) and its NUL */

/* Every provider compiled in, in the order the core initialises them (collector.c). */
extern hpc_provider hpc_opencl __attribute__((visibility("hidden"))); /* prov_opencl.c */
extern hpc_provider hpc_cuda __attribute__((visibility("hidden")));   /* prov_cuda.c */

#endif
