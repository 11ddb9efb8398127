/* hubprof counters: counter providers (Linux perf_event first), device limits, and the pass planner.
 * Used by the CLI (list, plan, profile) and by the collector (measuring around one dispatch), so it
 * links neither SQLite nor the hub's formats. Prefix hc_, one status enum hc_status. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COUNTERS_H
#define HUBPROF_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum hc_status {
  HC_OK = 0,
  HC_ERR_INVALID = -1,     /* bad argument */
  HC_ERR_NOMEM = -2,       /* out of memory */
  HC_ERR_UNKNOWN = -3,     /* unknown counter / provider / device name */
  HC_ERR_UNAVAILABLE = -4, /* known, but not available here (no PMU, permissions) */
  HC_ERR_IMPOSSIBLE = -5,  /* no plan satisfies the limits (e.g. a block limit of 0) */
  HC_ERR_IO = -6,          /* a system call failed */
  HC_ERR_PARSE = -7,       /* a device description or plan string is malformed */
} hc_status;

const char *hc_status_str(hc_status s);

/* Errors: a call returns its hc_status; the one-line message naming the input and the problem lives on
 * the handle the call worked on (hc_provider_error, hc_plan_error, hc_limits_error, hc_metrics_error).
 * A call that creates a handle may set *out to a handle that only explains a failure: free it all the
 * same. Messages are at most HC_ERROR_MAX - 1 characters. */
#define HC_ERROR_MAX 1024

/* ---- counters and providers ---- */
typedef struct hc_counter {
  const char *name;        /* "task-clock" */
  const char *description; /* one line */
  const char *unit;        /* "ns", "count", "cycles" */
  const char *block;       /* hardware block the counter lives in ("sw", "core", "SQ", …) */
  int available;           /* 1 when it can be measured on this machine now */
  const char *reason;      /* why not, when !available ("no PMU: hardware events unsupported") */
} hc_counter;

typedef struct hc_provider hc_provider; /* opaque */

/* Open a provider by name ("perf"). */
hc_status hc_provider_open(const char *name, hc_provider **out);
void hc_provider_close(hc_provider *p);
const char *hc_provider_name(const hc_provider *p);
size_t hc_provider_count(const hc_provider *p);
const hc_counter *hc_provider_counter(const hc_provider *p, size_t i);
/* Index of a counter by exact name, or -1. */
long hc_provider_find(const hc_provider *p, const char *name);
/* Up to `n` known names closest to `name` (edit distance), for "did you mean" messages. */
size_t hc_provider_suggest(const hc_provider *p, const char *name, const char **out, size_t n);

/* ---- measuring one pass around one dispatch ---- */
typedef struct hc_session hc_session; /* one pass's counters, opened on every thread of the process */

/* Open the counters `idx[0..n)` of provider p for this process: every current thread and (with
 * inherit) threads created later. Must be opened before the runtime's worker threads start where
 * the provider needs it (perf_event: before PoCL's first clGetDeviceIDs) or re-scan threads on start.
 * Open every pass's session up front: a stopped session's hardware counters hold no PMU counter.
 * Inherit follows fork too: child processes started after the open are counted while they live.
 * HC_ERR_UNAVAILABLE (a counter not measurable here, or a description-only provider),
 * HC_ERR_INVALID (an index out of range), HC_ERR_IO; hc_provider_error(p) says which. */
hc_status hc_session_open(hc_provider *p, const size_t *idx, size_t n, hc_session **out);

/* How a session covers the process's threads (hc_session_open uses HC_SESSION_AUTO). */
typedef enum hc_session_mode {
  HC_SESSION_AUTO = 0,       /* INHERIT when the process has one thread at open, PER_THREAD otherwise */
  HC_SESSION_INHERIT = 1,    /* counters on the calling thread with inherit=1: it and every thread it
                                (or its descendants) create after the open; not threads that exist already */
  HC_SESSION_PER_THREAD = 2, /* one counter per thread of /proc/self/task, re-scanned at a start when
                                the thread count changed or 10 ms after the last scan (new threads
                                opened, exited ones closed; capacity fixed at open) */
} hc_session_mode;
hc_status hc_session_open_mode(hc_provider *p, const size_t *idx, size_t n, hc_session_mode mode,
                               hc_session **out);
hc_session_mode hc_session_get_mode(const hc_session *s); /* INHERIT or PER_THREAD, never AUTO */
/* PER_THREAD: threads with counters now; INHERIT: 1. */
size_t hc_session_threads(const hc_session *s);
/* PER_THREAD: threads seen at a start that found no free slot (not counted), summed over starts. */
size_t hc_session_missed_threads(const hc_session *s);
/* Start / stop one pass: values[i] for idx[i], summed over the threads, the count between start and
 * stop (differences from a baseline read at start), scaled by time enabled / time running when the
 * kernel multiplexed a counter. Hardware counters are enabled at start and disabled at stop;
 * software counters run from open to close and are only read (enabling another thread's counter
 * costs an IPI, ~20 µs in a VM). PER_THREAD re-scans /proc/self/task at start when it may have changed
 * (one fstat tells). System calls only:
 * no allocation, no lock. HC_ERR_INVALID: start twice, stop without start. */
/* PER_THREAD: leave thread `tid` out of the count from the next start on (0: count every thread) — the
 * thread that launches the kernel and waits for it, whose work in the window is the runtime's host side,
 * not the kernel. When `tid` is the only thread the session sees, it is counted all the same (a runtime
 * without worker threads runs the kernel on it). Other modes: HC_ERR_INVALID. */
hc_status hc_session_skip_thread(hc_session *s, pid_t tid);
/* Whether the last start left a thread out (0: every thread was counted). */
int hc_session_skipped(const hc_session *s);
/* PER_THREAD: from the next start on, count only the thread that calls start and stop, whose id is `self`
 * (0: every thread again, hc_session_skip_thread's rule applies) — for a runtime that runs kernels on the
 * thread that enqueues and waits (PoCL's basic device). Such a start checks no thread list (it scans only
 * when the caller has no counters yet; a caller beyond the slots falls back to every thread), reads one
 * slot, and a session whose counters are all context-switches reads getrusage(RUSAGE_THREAD) instead of
 * perf (the same count, a cheaper system call; docs/counters.md). Other modes: HC_ERR_INVALID. */
hc_status hc_session_count_caller(hc_session *s, pid_t self);
/* Caller-alone sessions whose counters are all software events that fire one occurrence at a time
 * (context switches, migrations, faults) count from the events' ring buffers: a load at start and stop, no
 * system call (docs/counters.md "Counts without a system call"). How many pass windows rings served, and
 * why the provider does not use them (NULL: it does where it can; HUBPROF_PERF_RING=0 turns them off). */
uint64_t hc_provider_ring_windows(const hc_provider *p);
const char *hc_provider_ring_off(const hc_provider *p);
hc_status hc_session_start(hc_session *s);
hc_status hc_session_stop(hc_session *s, double *values);
/* hc_session_start without checking whether the process's threads changed (PER_THREAD: one fstat, ~1 µs
 * in a VM): the thread list is re-read only when another session's check of the same provider saw a
 * change since this session's last scan, or that scan is 10 ms old. For the passes after the first of
 * one replayed dispatch: a thread that starts during them is counted from the next check on. */
hc_status hc_session_start_cached(hc_session *s);
void hc_session_close(hc_session *s);

/* ---- device limits ---- */
typedef struct hc_block_limit {
  char block[32];
  unsigned max;       /* counters of this block per pass; 0 = none can be measured; HC_UNLIMITED */
  unsigned instances; /* copies of the block (L2 channels, XCDs), each with `max` registers; 0 or 1: one */
} hc_block_limit;

#define HC_MAX_INSTANCES 1024       /* instances of one block a description may declare */
#define HC_DESC_FILE_MAX (1u << 20) /* bytes of a description file (docs/counters.md "Limits") */
#define HC_DESC_COUNTERS_MAX 8192   /* counters ('counter', 'sum', 'accumulate' lines) of a description */

#define HC_UNLIMITED 0xFFFFFFFFu /* a block limit meaning "no limit" (`block sw unlimited`) */

typedef struct hc_limits {
  char device[64];       /* description name ("gfx9", "cpu-perf") */
  unsigned max_per_pass; /* total counters per pass, 0 = unlimited */
  size_t nblocks;
  hc_block_limit blocks[64];
  char error[HC_ERROR_MAX]; /* hc_limits_load's failure message, "" when none (hc_limits_error) */
} hc_limits;

/* Load a device description data file (share/hubprof/devices/NAME.device; format in docs/counters.md)
 * by name (found on the search path of hc_devices_list) or by path (has a '/' or ends in .device).
 * HC_ERR_UNKNOWN when not found (the message lists the known devices), HC_ERR_PARSE with "FILE:LINE: why";
 * the message is in out->error (hc_limits_error). */
hc_status hc_limits_load(const char *name_or_path, hc_limits *out);
/* The message of hc_limits_load's failure, "" when none; "out of memory" for NULL. */
const char *hc_limits_error(const hc_limits *l);

/* Open the provider of a device description (share/hubprof/devices/NAME.device, or a path): the
 * provider its `provider` line names (cpu-perf: "perf"), with the description's limits; or, when no
 * provider measures that device here (gfx9), a catalogue of the description's counters, all
 * unavailable, usable for planning only. On failure *out may be a provider whose hc_provider_error is one
 * line naming the file and line (close it): NULL only when out of memory. */
hc_status hc_device_open(const char *name_or_path, hc_provider **out);
/* The device limits the provider was opened with (hc_device_open), or NULL (hc_provider_open). */
const hc_limits *hc_provider_limits(const hc_provider *p);
/* One line on the device ("Linux perf_event on this CPU"), "" when none. */
const char *hc_provider_description(const hc_provider *p);
/* 1 when sessions can be opened (a real provider), 0 for a description-only catalogue. */
int hc_provider_measurable(const hc_provider *p);
/* The last failure's message (hc_device_open, hc_session_open, hc_provider_need, hc_provider_check), ""
 * when none; "out of memory" for NULL. */
const char *hc_provider_error(const hc_provider *p);
/* The perf_event type and config of a counter of the "perf" provider by name: 0, or -1 when unknown. */
int hc_perf_event_of(const char *name, uint32_t *type, uint64_t *config);
/* hc_plan_make's block_of callback over a provider (ctx is the hc_provider *): NULL when unknown. */
const char *hc_provider_block_of(const char *counter, void *provider);

/* What measuring one counter name takes (a description's counter, or a channel counter TCC_HIT[3],
 * TCC_HIT[0..15], TCC_HIT[*]): the hardware counter it occupies, on which instances of its block, and
 * the rules that go with it. The planner asks it of a provider (hc_plan_make with hc_provider_block_of). */
typedef struct hc_counter_need {
  const char *block;       /* its block */
  const char *base;        /* the hardware counter it occupies (TCC_HIT for TCC_HIT[3] and TCC_HIT_sum) */
  unsigned first, last;    /* instances of the block it occupies, inclusive; 0..0 for a single block */
  const char *accumulator; /* a LEVEL counter: the accumulator planned right after it, else NULL */
  int is_accumulator;      /* an accumulator: measured only after a LEVEL counter */
  int alone;               /* must be the only counter of its pass (with its accumulator) */
  const char *accumulated; /* a LEVEL counter: the name of its accumulator's value (SQ_LEVEL_WAVES_ACCUM, an
                              `accumulate` counter of the description), else the accumulator's name */
} hc_counter_need;
/* HC_OK, or HC_ERR_UNKNOWN (no such counter), HC_ERR_IMPOSSIBLE with a line in hc_provider_error (a channel
 * index on a counter whose block has no instances, an instance beyond the device's), HC_ERR_INVALID (bad
 * syntax). */
hc_status hc_provider_need(hc_provider *p, const char *name, hc_counter_need *out);

/* Paths of every device description found on the search path ($HUBPROF_DEVICES, ':'-separated;
 * share/hubprof/devices one and two folders above the executable's: bin/.., build/.., build/san/..;
 * /usr/local/share/hubprof/devices; /usr/share/hubprof/devices), one per name (the first found wins), sorted
 * by name. NULL-terminated, malloc'd: free with hc_devices_free. */
hc_status hc_devices_list(char ***paths, size_t *n);
void hc_devices_free(char **paths);

/* ---- NVIDIA chips through CUPTI's Profiler Host API, no GPU needed (cupti_host.c, docs/cuda.md) ---- */
typedef struct hc_cupti hc_cupti; /* libcupti, loaded with dlopen (never linked) */
/* Find and load libcupti: $HUBPROF_CUPTI (a file; when set, the only one tried), else /usr/local/cuda/lib64,
 * /usr/local/cuda/extras/CUPTI/lib64, $CUDA_HOME/lib64, $CUDA_HOME/extras/CUPTI/lib64, else the
 * nvidia-cuda-cupti pip package (site-packages/nvidia/cuda_cupti/lib). HC_ERR_UNAVAILABLE when none loads:
 * hc_cupti_error(*out) is one line saying where it looked (close *out all the same). */
hc_status hc_cupti_open(hc_cupti **out);
void hc_cupti_close(hc_cupti *c);
const char *hc_cupti_error(const hc_cupti *c);
const char *hc_cupti_path(const hc_cupti *c); /* the file loaded */
/* Another entry point of the loaded libcupti (dlsym), NULL when it has none: the collector's CUDA PC
 * sampling (src/collector/sample_cupti_pc.c) finds libcupti here, one home for where it is looked for. */
void *hc_cupti_sym(hc_cupti *c, const char *name);
/* CUpti_Device_GetChipName_Params (cupti_target.h), declared here in its fields' order for every caller of
 * cuptiDeviceGetChipName (the CLI's profile and roofline, the collector's CUDA provider, Range Profiler and
 * PM sampling; tests/cuda/test_cuda_range.c checks its size against the header where present). */
typedef struct hc_cupti_chip_params {
  size_t size;
  void *priv;
  size_t device;
  const char *chip;
} hc_cupti_chip_params;
/* The chip name ("GH100") of CUDA device `device` through get (libcupti's cuptiDeviceGetChipName; NULL gives
 * NULL): libcupti's own string, or NULL when the call fails or names none. */
static inline const char *hc_cupti_chip(int (*get)(void *params), size_t device) {
  hc_cupti_chip_params p = {sizeof p, NULL, device, NULL};
  return get && get(&p) == 0 && p.chip && *p.chip ? p.chip : NULL;
}
/* PM sampling's configuration (the collector's sample_cupti_pm.c): a Profiler Host object of type PM sampling
 * for chip and its counter availability image, and the configuration image of the metrics (malloc'd, *size
 * bytes). HC_OK, or an error with one line in err; close *host with hc_cupti_host_close, free *image. */
hc_status hc_cupti_pm_config(hc_cupti *c, const char *chip, const uint8_t *avail, const char *const *names,
                             size_t n, void **host, uint8_t **image, size_t *size, char *err, size_t len);
void hc_cupti_host_close(hc_cupti *c, void *host);
/* The same for any profiler type (0: the Range Profiler, CUDA counters: src/collector/prov_cuda_range.c; 1:
 * PM sampling); avail NULL: no device, every counter assumed available. *passes (when not NULL): CUPTI's
 * pass count of the image (cuptiProfilerHostGetNumOfPasses). */
hc_status hc_cupti_config(hc_cupti *c, int type, const char *chip, const uint8_t *avail,
                          const char *const *names, size_t n, void **host, uint8_t **image, size_t *size,
                          size_t *passes, char *err, size_t len);
/* The chips CUPTI describes ("GV100" … "GH100", "GB100"); the names belong to libcupti. */
hc_status hc_cupti_chips(hc_cupti *c, const char *const **names, size_t *n);
/* How many base metrics CUPTI describes for chip (all types); HC_ERR_IO with hc_cupti_error. */
hc_status hc_cupti_metric_count(hc_cupti *c, const char *chip, size_t *n);
/* "counter", "ratio", "throughput" for CUPTI's metric types 0, 1, 2. */
const char *hc_cupti_type_name(int type);
/* A provider describing one chip (name matched case-insensitively): its base metrics as counters (block =
 * the metric type, none available here), limits naming the chip and no block. hc_device_open falls back
 * to it for a name that is no description. HC_ERR_UNAVAILABLE (no libcupti), HC_ERR_UNKNOWN (not a CUPTI
 * chip), HC_ERR_IO; the message in hc_provider_error(*out) (close it). */
hc_status hc_cupti_device_open(const char *chip, hc_provider **out);
int hc_provider_is_cupti(const hc_provider *p);
/* The counter index of a metric name's base metric ("dram__bytes_read" for "dram__bytes_read.sum"), or -1. */
long hc_cupti_base(const hc_provider *p, const char *name);
/* CUPTI's own pass count of names[0..n) (full metric names: base metric plus rollup,
 * "dram__bytes_read.sum") added as one configuration. HC_ERR_UNKNOWN when CUPTI refuses a metric: the
 * message in hc_provider_error names the first refused one, with "did you mean" suggestions. */
hc_status hc_cupti_passes(hc_provider *p, const char *const *names, size_t n, size_t *passes);

/* ---- the pass planner ---- */
typedef struct hc_request {
  const char *group;           /* metric name the counters belong to, or NULL for a lone counter */
  const char *const *counters; /* counter names of the group (one for a lone counter) */
  size_t ncounters;
} hc_request;

typedef struct hc_plan {
  size_t npasses;
  size_t ncounters;    /* entries over all passes (a counter measured in two passes: two entries) */
  const char **names;  /* counter names, in plan order */
  const char **blocks; /* block of each counter */
  unsigned *pass;      /* pass of each counter, 1-based */
  char **split_groups; /* groups whose counters had to be split across passes (NULL-terminated) */
  const char **groups; /* group of each counter (the first request naming it), NULL for a lone
                          counter; all NULL after hc_plan_parse */
  /* added for AMD devices (issue 17): */
  char **split_passes;   /* per split group (same index as split_groups): its passes, "2, 5" */
  char **split_counters; /* per split group: its counters with their passes, "SQ_WAVES:2 GRBM_COUNT:2,5" */
  size_t nrepeated;      /* entries of a counter already measured in an earlier pass (a counter shared by
                            groups measured again where a group needs it; an accumulator per LEVEL) */
  const char **level_of; /* per entry: an accumulator's LEVEL counter (the entry before it), else NULL */
  size_t lower_bound;    /* hc_plan_make: fewest passes any plan of these counters needs; 0 after parse */
  size_t nblocks;        /* hc_plan_make: the limits' blocks (0 after parse) */
  unsigned *pass_regs;   /* npasses * nblocks: registers pass p (0-based) takes in block b, in its busiest
                            instance (a LEVEL's accumulator included; a counter read on every L2 channel
                            takes one register in each channel) */
} hc_plan;

/* Pack the requests into the fewest passes the limits allow (`block_of` maps a counter name to its
 * block). Groups stay in one pass where the limits allow; a group that cannot fit is split and named in
 * split_groups. Deterministic: the same input gives the same plan. Rules:
 * - a counter requested twice (alone, in several groups) is measured once; groups sharing a counter
 *   are kept together as one unit when the unit fits one pass (otherwise some of them are split);
 * - a request with group NULL holds lone counters, each planned on its own;
 * - lim NULL: no limits (one pass); limits naming no block: only max_per_pass applies;
 * - a counter block_of does not know: HC_ERR_UNKNOWN; its block missing from the limits, or limited to
 *   0: HC_ERR_IMPOSSIBLE; *out is then a plan whose hc_plan_error is one line naming the counter (free it;
 *   NULL when out of memory);
 * - plan order: by pass, then by first request. To constrain any device to N per pass, plan with a
 *   copy of the limits whose max_per_pass is N (or the smaller of the two). */
hc_status hc_plan_make(const hc_request *req, size_t nreq, const hc_limits *lim,
                       const char *(*block_of)(const char *counter, void *ctx), void *ctx, hc_plan **out);
void hc_plan_free(hc_plan *p);
/* The message of the failure that made the plan (hc_plan_make, hc_plan_text), "" for a plan made;
 * "out of memory" for NULL. A plan that explains a failure has no passes. */
const char *hc_plan_error(const hc_plan *p);
/* The plan as one line: passes separated by ';', counters by ',' ("task-clock,page-faults;cycles").
 * This is how the CLI hands a plan to the collector (HUBPROF_PLAN). malloc'd. */
char *hc_plan_format(const hc_plan *p);
/* Is `name` a counter of p, measurable here (when need_available and p is measurable)? HC_OK, or
 * HC_ERR_UNKNOWN with "unknown counter 'task-clok' (did you mean 'task-clock'?)", or
 * HC_ERR_UNAVAILABLE with "counter 'cycles' is not available on cpu-perf: no PMU: …" in hc_provider_error. */
hc_status hc_provider_check(hc_provider *p, const char *name, int need_available);

/* A request as the CLI takes it (`--counters a,b --group NAME=c,d --max-counters-per-pass N`). */
typedef struct hc_plan_args {
  const char *const *counters; /* lists of lone counters, each "a,b,c" (blanks around names ignored) */
  size_t ncounters;
  const char *const *groups; /* groups, each "NAME=C1,C2" */
  size_t ngroups;
  unsigned max_per_pass; /* 0: the device's own total limit; otherwise the smaller of the two */
  int need_available;    /* refuse counters a measurable provider cannot measure here */
} hc_plan_args;
/* Check every name against p (hc_provider_check) and plan under p's limits (none when p was opened
 * without a description). Errors, one line in hc_plan_error(*out) (free *out): HC_ERR_INVALID (an empty
 * name, a group without "NAME=", a group given twice, nothing requested), then those of hc_provider_check
 * and hc_plan_make. */
hc_status hc_plan_text(hc_provider *p, const hc_plan_args *a, hc_plan **out);

/* Parse that line back (names only: blocks are ""). Blanks around names are ignored; an empty name
 * or pass, or a counter named twice in one pass, is HC_ERR_PARSE (a counter may be measured in several
 * passes: an accumulator after each LEVEL counter, a counter shared by groups). */
hc_status hc_plan_parse(const char *s, hc_plan **out);
/* Lower bound on the passes any plan needs for these distinct counters (max over the total and every
 * block of ceil(count / limit)); 0 for none. Used to tell an optimal plan. */
size_t hc_plan_lower_bound(const hc_plan *p, const hc_limits *lim);

/* ---- the calling thread's own counters (perf provider), read at any moment: a region's host part ---- */
typedef struct hc_self hc_self;
#define HC_SELF_MAX 32 /* counters one hc_self holds */
/* Open counters idx[0..n) on the calling thread alone (no inherit), running from now on. Hardware events
 * beyond the PMU's counters are time-multiplexed by the kernel (values scaled). HC_ERR_UNAVAILABLE: not the
 * perf provider (device counters have no host part) or a counter not measurable here; HC_ERR_IO. */
hc_status hc_self_open(hc_provider *p, const size_t *idx, size_t n, hc_self **out);
/* values[k]: counter k's count since the open (scaled when multiplexed). read() calls only: no allocation,
 * no lock. Any thread may read (the counts stay the opening thread's). */
hc_status hc_self_read(hc_self *s, double *values);
void hc_self_close(hc_self *s);

#endif
