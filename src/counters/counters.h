/* hubprof counters: counter providers (Linux perf_event first), device limits, and the pass planner.
 * Used by the CLI (list, plan, profile) and by the collector (measuring around one dispatch), so it
 * links neither SQLite nor the hub's formats. Prefix hc_, one status enum hc_status. */
#ifndef HUBPROF_COUNTERS_H
#define HUBPROF_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

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
 * the provider needs it (perf_event: before PoCL's first clGetDeviceIDs) or re-scan threads on start. */
hc_status hc_session_open(hc_provider *p, const size_t *idx, size_t n, hc_session **out);
/* Reset and enable (start) / disable and read (stop): values[i] for idx[i]. No allocation. */
hc_status hc_session_start(hc_session *s);
hc_status hc_session_stop(hc_session *s, double *values);
void hc_session_close(hc_session *s);

/* ---- device limits ---- */
typedef struct hc_block_limit {
  char block[32];
  unsigned max; /* counters of this block per pass */
} hc_block_limit;

typedef struct hc_limits {
  char device[64];       /* description name ("gfx9", "cpu-perf") */
  unsigned max_per_pass; /* total counters per pass, 0 = unlimited */
  size_t nblocks;
  hc_block_limit blocks[64];
} hc_limits;

/* Load a device description data file (share/hubprof/devices/NAME.*) by name or path. */
hc_status hc_limits_load(const char *name_or_path, hc_limits *out, char *err, size_t errlen);

/* ---- the pass planner ---- */
typedef struct hc_request {
  const char *group;         /* metric name the counters belong to, or NULL for a lone counter */
  const char *const *counters; /* counter names of the group (one for a lone counter) */
  size_t ncounters;
} hc_request;

typedef struct hc_plan {
  size_t npasses;
  size_t ncounters;        /* distinct counters over all passes */
  const char **names;      /* counter names, in plan order */
  const char **blocks;     /* block of each counter */
  unsigned *pass;          /* pass of each counter, 1-based */
  char **split_groups;     /* groups whose counters had to be split across passes (NULL-terminated) */
} hc_plan;

/* Pack the requests into the fewest passes the limits allow (`block_of` maps a counter name to its
 * block). Groups stay in one pass where the limits allow; a group that cannot fit is split and named in
 * split_groups. Deterministic: the same input gives the same plan. */
hc_status hc_plan_make(const hc_request *req, size_t nreq, const hc_limits *lim,
                       const char *(*block_of)(const char *counter, void *ctx), void *ctx, hc_plan **out,
                       char *err, size_t errlen);
void hc_plan_free(hc_plan *p);
/* The plan as one line: passes separated by ';', counters by ',' ("task-clock,page-faults;cycles").
 * This is how the CLI hands a plan to the collector (HUBPROF_PLAN). malloc'd. */
char *hc_plan_format(const hc_plan *p);
/* Parse that line back (names only: blocks are ""). */
hc_status hc_plan_parse(const char *s, hc_plan **out);

#endif
