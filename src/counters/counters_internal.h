/* hubprof counters, private: the provider object shared by counters.c (generic part, catalogues of
 * device descriptions), perf.c (Linux perf_event) and devices.c (description files). Not installed. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COUNTERS_INTERNAL_H
#define HUBPROF_COUNTERS_INTERNAL_H

#include "counters.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

enum { HC_KIND_PERF = 1, HC_KIND_CATALOGUE = 2, HC_KIND_CUPTI = 3 };

/* How the perf provider opens one counter (perf.c). */
typedef struct hc_perf_event {
  uint32_t type;      /* PERF_TYPE_* */
  uint64_t config;    /* event within the type */
  int exclude_kernel; /* the probe needed exclude_kernel=1 (perf_event_paranoid >= 2, unprivileged) */
  char reason[200];   /* why unavailable */
} hc_perf_event;

struct hc_provider {
  int kind;              /* HC_KIND_* */
  char name[32];         /* "perf", "catalogue" */
  size_t n;              /* counters */
  hc_counter *counters;  /* n entries; strings static (perf) or owned (catalogue) */
  hc_perf_event *perf;   /* HC_KIND_PERF: n entries */
  int has_limits;        /* opened through a device description */
  hc_limits limits;      /* valid when has_limits */
  char description[256]; /* one line, "" when none */
  /* the last failure's message (hc_provider_error) */
  char error[HC_ERROR_MAX];
  char **owned; /* strings to free with the provider */
  size_t nowned, capowned;
  struct hc_desc_counter *rules; /* catalogue from a description: n entries (derived counters, LEVEL
                                    partners, instances), or NULL */
  /* perf sessions' shared view of the thread list (perf.c rescan_threads): the link count of
   * /proc/self/task at the last check, and a generation bumped whenever a check saw it change */
  unsigned long thr_nlink;
  uint64_t thr_gen;
  /* software counts read from a ring buffer instead of read() (perf.c, "Counts without a system call"):
   * ring_off says why not ("": rings are used where they can be); ring_windows counts the pass windows
   * (start + stop) that made no system call */
  char ring_off[160];
  uint64_t ring_windows;
  struct hc_cupti *cupti; /* HC_KIND_CUPTI: the loaded libcupti (cupti_host.c), closed with the provider */
  /* frees what its kind holds besides the fields above (HC_KIND_CUPTI: closes `cupti`), NULL: nothing;
   * hc_provider_close calls it first */
  void (*release)(struct hc_provider *p);
};

/* Copy s into storage the provider owns (freed with it); NULL when out of memory. */
const char *hc_provider_own(hc_provider *p, const char *s);
/* A zeroed provider of a kind, or NULL. */
hc_provider *hc_provider_alloc(int kind, const char *name);
/* perf.c: the "perf" provider, availability probed. */
hc_status hc_perf_provider_open(hc_provider **out);
/* perf.c's system seams, replaceable by tests (fault injection): perf_event_open(2) and
 * /proc/sys/kernel/perf_event_paranoid (-100 when unreadable); the *_sys functions are the real ones. */
long hc_perf_open_sys(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags);
int hc_perf_paranoid_sys(void);
extern long (*hc_perf_open_fn)(struct perf_event_attr *, pid_t, int, int, unsigned long);
extern int (*hc_perf_paranoid_fn)(void);
/* The count since `base` ({value, time enabled, time running} of read()), scaled up when multiplexed. */
double hc_perf_scaled(const uint64_t now[3], const uint64_t base[3]);
/* Threads of this process (/proc/self/task), without allocating (a session opens one counter each). */
size_t hc_perf_count_threads(void);

/* One parsed device description (devices.c). */
enum { HC_DC_PLAIN = 0, HC_DC_SUM = 1, HC_DC_ACCUMULATE = 2 };
typedef struct hc_desc_counter {
  char *name, *block, *unit, *description;
  int kind;             /* HC_DC_*: a hardware counter, a sum over instances, a LEVEL's accumulation */
  long base;            /* SUM/ACCUMULATE: the counter it is made of (index), else itself */
  unsigned first, last; /* SUM: the instances summed (inclusive); HC_ALL_INSTANCES for all */
  long accumulator;     /* a LEVEL counter: its accumulator (index), else -1 */
  int is_accumulator;   /* named as some LEVEL counter's accumulator */
  int alone;            /* `alone` line */
  size_t line;          /* where it was declared */
} hc_desc_counter;

#define HC_ALL_INSTANCES 0xFFFFFFFFu

typedef struct hc_desc {
  char path[4096];       /* the file */
  char provider[32];     /* `provider` line, "" when none */
  char description[256]; /* `description` line */
  hc_limits lim;         /* name, total and block limits */
  size_t n;              /* counters */
  hc_desc_counter *counters;
  char variant[32];  /* the product variant asked for (NAME:VARIANT), "" for none */
  int variant_found; /* some 'variant' line of that name applied */
  int variant_known; /* the file has 'variant' lines */
  /* hc_desc_load's failure: file and line */
  char error[HC_ERROR_MAX];
} hc_desc;

/* Parse the instances of a channel counter after its '[': "3]", "0..15]", "*]" against a block of
 * ninst instances; -1 with why set when malformed or beyond the device. */
int hc_parse_range(const char *s, unsigned ninst, unsigned *first, unsigned *last, char *why, size_t wl);

/* Find (by name on the search path, or by path) and parse a description; d->error names file and line. */
hc_status hc_desc_load(const char *name_or_path, hc_desc *d);
/* planner.c: a plan with no passes whose hc_plan_error is msg (NULL when out of memory). */
hc_plan *hc_plan_failed(const char *msg);
void hc_desc_free(hc_desc *d);

#endif
