/* hubprof export, inside the module: the small tables kept in memory, the walk over the large ones, and the
 * interface each output format (Perfetto, Chrome JSON, OTF2) implements. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXPORT_INTERNAL_H
#define HUBPROF_EXPORT_INTERNAL_H

#include "exporter.h"

#include "../common/hu_buf.h"

#include <stdio.h>

#define EX_MAX_LANES 16  /* tracks per queue for dispatches that overlap in time (out-of-order queues) */
#define EX_LANE_SPANS 64 /* busy spans a lane remembers (ex_lane.c) */

/* The busy time of a queue lane: the commands placed on it as spans [start, end), sorted and disjoint (spans
 * that touch joined), at most EX_LANE_SPANS (then the two closest are joined, the gap between counted busy);
 * one slot more while a span goes in. */
typedef struct ex_lane {
  int n;
  int64_t span[EX_LANE_SPANS + 1][2];
} ex_lane;

typedef struct ex_proc {
  uint64_t id;
  int64_t pid;
  char *name; /* command line */
  size_t index;
  uint64_t node_id;
  int64_t clock_offset_ns; /* hp_process's (0 = unknown) */
  int64_t shift_ns; /* added to the process's times: its node's clock onto the first node's (ex_align) */
  int64_t exit_code, exit_signal; /* hp_process's (-1 = unknown) */
} ex_proc;

typedef struct ex_thread {
  uint64_t id, process_id;
  int64_t tid;
  char *name;
  size_t index;
} ex_thread;

typedef struct ex_queue {
  uint64_t id, process_id, agent_id;
  char *name;                  /* "queue NAME (DEVICE)" */
  size_t index;                /* position in the model's queue array */
  int lanes;                   /* lanes used so far */
  ex_lane *lane[EX_MAX_LANES]; /* each allocated when the lane opens */
} ex_queue;

/* The lane of a command [start, end) on queue q (0 when q is NULL): the first where it overlaps no command
 * placed before, in any order; with `ordered` (a format that takes each lane's events in time order), the
 * first whose commands all ended by its start. A new lane when none fits; past EX_MAX_LANES, the last one.
 * -1 when out of memory. ex_lanes_free frees q's lanes. */
int ex_lane_place(ex_queue *q, int ordered, int64_t start, int64_t end);
void ex_lanes_free(ex_queue *q);

typedef struct ex_named {
  uint64_t id;
  char *name;
  char *unit; /* counters only */
  char *prog; /* kernels only: the program's identity, NULL unknown (names disambiguated by it: hu_kname.h) */
} ex_named;

/* The small tables, sorted by id. */
typedef struct ex_model {
  ex_proc *procs;
  size_t nprocs;
  ex_thread *threads;
  size_t nthreads;
  ex_queue *queues;
  size_t nqueues;
  ex_named *agents, *kernels, *counters;
  size_t nagents, nkernels, ncounters;
  uint64_t nvalues;  /* rows of counter_value */
  uint64_t nsamples; /* rows of counter_sample */
} ex_model;

typedef struct ex_writer ex_writer;

/* One output format. Every hook returns 0, or -1 with w->err set. */
typedef struct ex_backend {
  int (*open)(ex_writer *w);   /* w->tmp_path is the temporary output (file, or folder for OTF2) */
  int (*tracks)(ex_writer *w); /* processes, threads, queues, counters of the model */
  int (*region)(ex_writer *w, const hp_region *r, const ex_proc *p, const ex_thread *t);
  /* one dispatch: its kernel's name, its process/thread/queue (any may be NULL), its lane on the queue, the
   * counter values measured on it */
  int (*dispatch)(ex_writer *w, const hp_dispatch *d, const char *kernel, const ex_proc *p,
                  const ex_thread *t, ex_queue *q, int lane, const hp_counter_value *cv, size_t ncv);
  int (*finish)(ex_writer *w);   /* write what is left and close (the walker renames afterwards) */
  void (*discard)(ex_writer *w); /* free after a failure (the walker removes the temporary output) */
  int is_dir;                    /* the output is a folder */
  int ordered;                   /* each queue lane's events must come in time order (ex_lane_place) */
  int samples;                   /* the format takes counter samples: w->samples during dispatch() */
  /* one memory copy (a transfer command, --api) on its queue's lane; its enqueue on the thread */
  int (*copy)(ex_writer *w, const hp_memory_copy *c, const ex_proc *p, const ex_thread *t, ex_queue *q,
              int lane);
  /* a counter sample of no dispatch (`sample --whole-run`: a process total polled on a timer), its time
   * on the trace's clock, on process p's "whole run" counter track (the store's first process: such a
   * sample names none); NULL: the format skips them (counted in skipped_order) */
  int (*run_sample)(ex_writer *w, const hp_counter_sample *s, const ex_proc *p);
} ex_backend;

/* A table's rows in dispatch order (ex_sort.c): the rows of a table without strings (counter samples), read
 * once at open and sorted by the uint64_t dispatch id at id_off, stably (a dispatch's rows keep their store
 * order), in runs of at most 32768 rows in memory; a longer table is written run by run to an unlinked file
 * in $TMPDIR and merged back. open: 0, or -1 with the message in err (*out to close either way). next: HP_OK,
 * then what the store's read ended with (HP_END, or the failure a damaged table gave), or HP_ERR_IO when the
 * file could not be read back (ex_sorted_error: its errno). */
typedef struct ex_sorted ex_sorted;
int ex_sorted_open(hp_store *s, hp_table t, size_t row_size, size_t id_off, ex_sorted **out, char *err,
                   size_t errlen);
hp_status ex_sorted_next(ex_sorted *x, void *row);
int ex_sorted_error(const ex_sorted *x);
void ex_sorted_close(ex_sorted *x);

/* Direction of a memory copy as text ("H2D", ...). */
const char *ex_copy_direction(uint32_t d);
/* Flow ids of memory copies, apart from the dispatches' (their row ids) */
#define EX_COPY_FLOW(id) ((uint64_t)1 << 52 | (uint64_t)(id))

struct ex_writer {
  ex_model *m;
  ex_stats *st;
  const char *out_path;
  char *tmp_path;
  FILE *f;    /* file formats: the temporary file */
  void *priv; /* the backend's state */
  char err[512];
  hu_buf scratch[4]; /* reusable buffers */
  /* progress (ex_opts): regions and dispatches read so far, of total (0 = unknown) */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *progress_ctx;
  uint64_t done, total;
  /* during dispatch(), for a backend with `samples`: the dispatch's counter samples in store order */
  const hp_counter_sample *samples;
  size_t nsamples;
};

extern const ex_backend ex_perfetto_backend, ex_chrome_backend;
#ifdef HUBPROF_HAVE_OTF2
extern const ex_backend ex_otf2_backend;
#endif

/* Lookups in the model (NULL when the id is 0 or unknown). */
const ex_proc *ex_find_proc(const ex_model *m, uint64_t id);
const ex_thread *ex_find_thread(const ex_model *m, uint64_t id);
ex_queue *ex_find_queue(const ex_model *m, uint64_t id);
const ex_named *ex_find_named(const ex_named *v, size_t n, uint64_t id);

/* The next code point of s[0..n): its length in *len (>= 1); -1 for a byte that does not start a valid UTF-8
 * sequence (overlong forms, surrogates and code points above U+10FFFF are invalid too). */
int32_t ex_utf8_next(const unsigned char *s, size_t n, size_t *len);
/* s as valid UTF-8: each invalid byte replaced by U+FFFD; into b (cleared first), NUL-terminated. */
const char *ex_utf8_clean(hu_buf *b, const char *s);
/* s as a JSON string with quotes; valid UTF-8 (invalid bytes as \ufffd), control characters and < > & escaped
 * as \u00XX so the text is also safe inside HTML. */
void ex_json_str(hu_buf *b, const char *s);
/* Timestamps of the Chrome format: microseconds with three decimals from nanoseconds. */
void ex_json_us(hu_buf *b, int64_t ns);

/* The small tables of store s into w->m (a damaged table kept up to its damage, noted in w->st): 0, or -1
 * with w->err set. ex_model_free frees them (also after a failure). */
int ex_model_load(ex_writer *w, hp_store *s);
void ex_model_free(ex_model *m);
/* Note the store's damage in w->st (the first only). */
void ex_note_damage(ex_writer *w, hp_store *s);

struct ex_result {
  ex_stats stats;
  char error[600];
};
/* Put a one-line reason in r and return st. */
ex_status ex_result_err(ex_result *r, ex_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Create and open the temporary file named by tmpl ("….XXXXXX", filled in) with the mode a plain create
 * would give; NULL with errno set and nothing left behind when it cannot. */
FILE *ex_tmp_file(char *tmpl);

int ex_set_err(ex_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
