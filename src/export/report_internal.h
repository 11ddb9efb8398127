/* hubprof report, inside the export module: the page's shared writers (HTML text, durations, colours,
 * analysis tables) and its sections, one file each (report_html.c assembles the page). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_REPORT_INTERNAL_H
#define HUBPROF_REPORT_INTERNAL_H

#include "ex_internal.h"

#include "hubprof/analysis.h"

#include "../common/hu_map.h"

#define RP_MAX_ROWS 5000 /* rows of an analysis table written; the rest counted */
/* Timed dispatches the timeline holds one by one; past them it holds them binned (the page says so).
 * HUBPROF_REPORT_TIMELINE_ITEMS changes it (docs/cli/report.md). */
#define RP_TL_ITEMS 2000000

/* The time span of the timed dispatches, read once. */
typedef struct rp_span {
  int64_t tmin, tmax;
  uint64_t timed, untimed;
} rp_span;

/* One kernel name of the run (kernels of the same name in several processes or code objects are one):
 * the page's kernel N is names[N], most device time first. */
typedef struct rp_kname {
  const char *name;
  double total_ns;
  uint64_t calls, timed;
  size_t ndur; /* timed durations in dur[], in store order */
  int64_t *dur;
} rp_kname;

/* One timed dispatch as the page needs it (rp_names_load keeps them for the timeline: one pass). */
typedef struct rp_disp {
  int64_t start, end, enq;
  uint64_t rowid, process_id, thread_id, queue_id;
  uint32_t kernel; /* model kernel index (UINT32_MAX: unknown) */
  uint32_t shape;  /* index in rp.shapes */
} rp_disp;

/* A kernel name's calls with one (grid, work-group) shape. */
typedef struct rp_kshape {
  size_t name; /* index in rp.names */
  uint32_t shape;
  uint64_t calls;
  double total_ns;
} rp_kshape;

/* hu_idmap values of rp.cold: why a dispatch is its kernel's cold one */
#define RP_COLD_FIRST 1 /* the first dispatch of its kernel in its process (JIT, first touch) */
#define RP_COLD_FLAG 2  /* marked cold by the collector (multiplexing: left out of the imputed medians) */

typedef struct rp {
  ex_writer *w;
  hu_buf *b; /* the page */
  hp_store *s;
  rp_span span;
  rp_kname *names; /* by time, most first */
  size_t nnames;
  size_t *kname;    /* model kernel k -> its name's index in names */
  hu_strmap byname; /* owns the names' strings */
  rp_disp *disp;    /* the timed dispatches, in store order (none when disp_binned) */
  size_t ndisp;
  size_t tl_items;    /* the timeline's limit (RP_TL_ITEMS or the environment's) */
  int disp_binned;    /* more timed dispatches than tl_items: the timeline bins them */
  hu_strmap shapes;   /* "gx,gy,gz,wx,wy,wz" */
  rp_kshape *kshapes; /* by name (page order), then most calls first */
  size_t nkshapes;
  hu_idmap cold; /* store row id of a cold dispatch -> RP_COLD_* bits */
} rp;

/* s as HTML text (also fine in a quoted attribute and in SVG): & < > " ' as references, bytes that are not
 * UTF-8 and control characters (but tab and newline) as U+FFFD; at most max code points (0 = all), an
 * ellipsis when cut. */
void rp_text_n(hu_buf *b, const char *s, size_t max);
void rp_text(hu_buf *b, const char *s);
/* A duration for people: "12.3 ms". */
void rp_ns(hu_buf *b, double ns);
/* The colour of the page's kernel N, as the timeline's script draws it ("hsl(...)"): a hue by the golden
 * angle, three lightnesses in turn, so neighbours differ. */
void rp_color(hu_buf *b, size_t n);
/* One cell of r as a table cell (numbers carry their exact value in data-v, the sort key). */
void rp_cell(hu_buf *b, const ha_result *r, size_t row, size_t col);
/* r's header row (every column, its unit in brackets) as <thead>; `extra` names one more column (or NULL). */
void rp_thead(hu_buf *b, const ha_result *r, const char *extra);
/* r as a sortable table: every column, at most RP_MAX_ROWS rows, then r's notes. */
void rp_table(hu_buf *b, const ha_result *r);
/* A query of p's store; NULL when it fails. */
ha_result *rp_query(hp_store *s, int group, const char *counters, const char *metrics);

/* The kernel names (p->names, p->kname), their durations and shapes, the cold dispatches and the timed
 * dispatches (p->disp), from one pass over the dispatches. 0 or -1. */
int rp_names_load(rp *p);
void rp_names_free(rp *p);

/* Sections. Each returns 0, or -1 with p->w's error set. */
int rp_timeline(rp *p);                    /* report_timeline.c */
int rp_kernel_sections(rp *p);             /* report_kernels.c */
void rp_samples(rp *p);                    /* report_kernels.c: when the store has PC samples */
void rp_regions(rp *p, uint64_t nregions); /* report_kernels.c: flame graph and table */
void rp_ranks(rp *p);                      /* report_kernels.c: when the run has several ranks */
void rp_run_counters(rp *p); /* report_run.c: counter samples of no dispatch (sample --whole-run) */
int rp_roofline(rp *p);      /* report_roofline.c: when the store has ceilings */

#endif
