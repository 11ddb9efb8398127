/* hubprof export: loads the small tables, walks regions and dispatches (with their counter values) once, in
 * store order, and hands each to the output format; the output appears under its name only when complete. */
/* SPDX-License-Identifier: MIT */
#include "ex_internal.h"
#include "../common/hu_dir.h"

#include "../common/hu_kname.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const ex_format_names[] = {"perfetto", "chrome", "otf2", NULL};

int ex_format_available(ex_format f) {
#ifdef HUBPROF_HAVE_OTF2
  return f >= 0 && f < EX_FORMAT_COUNT;
#else
  return f == EX_PERFETTO || f == EX_CHROME;
#endif
}

int ex_set_err(ex_writer *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->err, sizeof w->err, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- UTF-8 and JSON text ---------------------------------------------------------------------- */

int32_t ex_utf8_next(const unsigned char *s, size_t n, size_t *len) {
  *len = 1;
  unsigned c = s[0];
  if (c < 0x80) return (int32_t)c;
  size_t k;
  uint32_t cp, min;
  if (c >= 0xC2 && c <= 0xDF)
    k = 2, cp = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF)
    k = 3, cp = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4)
    k = 4, cp = c & 0x07, min = 0x10000;
  else
    return -1;
  if (n < k) return -1;
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return -1;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  *len = k;
  return (int32_t)cp;
}

const char *ex_utf8_clean(hu_buf *b, const char *s) {
  b->n = 0;
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)p);
  while (n) {
    size_t len, run = 0;
    while (run < n && p[run] < 0x80)
      run++;
    if (run) {
      hu_buf_put(b, p, run);
      p += run, n -= run;
      continue;
    }
    if (ex_utf8_next(p, n, &len) < 0)
      hu_buf_str(b, "\xEF\xBF\xBD");
    else
      hu_buf_put(b, p, len);
    p += len, n -= len;
  }
  const char *r = hu_buf_cstr(b);
  return r ? r : "";
}

void ex_json_str(hu_buf *b, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)p);
  hu_buf_byte(b, '"');
  while (n) {
    size_t run = 0; /* a run of plain ASCII goes in at once */
    while (run < n && p[run] >= 0x20 && p[run] < 0x7F && p[run] != '"' && p[run] != '\\' && p[run] != '<' &&
           p[run] != '>' && p[run] != '&')
      run++;
    if (run) {
      hu_buf_put(b, p, run);
      p += run, n -= run;
      continue;
    }
    size_t len;
    int32_t cp = ex_utf8_next(p, n, &len);
    if (cp < 0)
      hu_buf_str(b, "\\ufffd");
    else if (cp == '"')
      hu_buf_str(b, "\\\"");
    else if (cp == '\\')
      hu_buf_str(b, "\\\\");
    else if (cp == '\n')
      hu_buf_str(b, "\\n");
    else if (cp == '\t')
      hu_buf_str(b, "\\t");
    else if (cp < 0x20 || cp == '<' || cp == '>' || cp == '&' || cp == 0x7F || cp == 0x2028 || cp == 0x2029)
      hu_buf_printf(b, "\\u%04x", (unsigned)cp);
    else
      hu_buf_put(b, p, len);
    p += len, n -= len;
  }
  hu_buf_byte(b, '"');
}

void ex_json_us(hu_buf *b, int64_t ns) {
  if (ns < 0) {
    hu_buf_byte(b, '-');
    ns = -ns;
  }
  hu_buf_printf(b, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* ---- the small tables --------------------------------------------------------------------------- */

static int cmp_id(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; /* every struct starts with its id */
  return x < y ? -1 : x > y;
}

static void *find_id(const void *v, size_t n, size_t elem, uint64_t id) {
  if (!id || !n) return NULL;
  return bsearch(&id, v, n, elem, cmp_id);
}

const ex_proc *ex_find_proc(const ex_model *m, uint64_t id) {
  return find_id(m->procs, m->nprocs, sizeof *m->procs, id);
}
const ex_thread *ex_find_thread(const ex_model *m, uint64_t id) {
  return find_id(m->threads, m->nthreads, sizeof *m->threads, id);
}
ex_queue *ex_find_queue(const ex_model *m, uint64_t id) {
  return find_id(m->queues, m->nqueues, sizeof *m->queues, id);
}
const ex_named *ex_find_named(const ex_named *v, size_t n, uint64_t id) {
  return find_id(v, n, sizeof *v, id);
}

static char *ex_dup(const char *s) { return strdup(s ? s : ""); }

/* Read the whole of a small table: a damaged one is kept up to its damage. 0, or -1 (message in w->err). */
#define LOAD(w, s, table, rowtype, arr, n, ...)                                                              \
  do {                                                                                                       \
    hp_cursor *c_;                                                                                           \
    hp_status st_ = hp_cursor_open(s, table, &c_);                                                           \
    if (st_ != HP_OK)                                                                                        \
      return ex_set_err(w, "%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st_));             \
    rowtype r = {.size = sizeof r};                                                                          \
    size_t cap_ = 0;                                                                                         \
    while ((st_ = hp_cursor_next(c_, &r)) == HP_OK) {                                                        \
      if (hu_grow((void **)&(arr), &cap_, (n) + 1, sizeof *(arr))) {                                         \
        hp_cursor_close(c_);                                                                                 \
        return ex_set_err(w, "out of memory");                                                               \
      }                                                                                                      \
      memset(&(arr)[n], 0, sizeof *(arr));                                                                   \
      __VA_ARGS__;                                                                                           \
      if (oom_) {                                                                                            \
        hp_cursor_close(c_);                                                                                 \
        return ex_set_err(w, "out of memory");                                                               \
      }                                                                                                      \
      (n)++;                                                                                                 \
    }                                                                                                        \
    hp_cursor_close(c_);                                                                                     \
    if (st_ != HP_END) ex_note_damage(w, s);                                                                 \
    if (n) qsort(arr, n, sizeof *(arr), cmp_id);                                                             \
  } while (0)

void ex_note_damage(ex_writer *w, hp_store *s) {
  if (w->st->damaged) return;
  w->st->damaged = 1;
  snprintf(w->st->damage, sizeof w->st->damage, "%s", hp_store_error(s)[0] ? hp_store_error(s) : "damaged");
}

/* The offset of node n's clock (CLOCK_REALTIME - CLOCK_MONOTONIC_RAW): that of its first process (by id) that
 * knows it; 0 when none does. One offset per node: its processes share one monotonic clock. */
static int64_t node_offset(const ex_model *m, uint64_t node) {
  for (size_t i = 0; i < m->nprocs; i++)
    if (m->procs[i].node_id == node && m->procs[i].clock_offset_ns) return m->procs[i].clock_offset_ns;
  return 0;
}

/* Clock alignment across nodes: when processes of more than one node know their node's clock offset, every
 * node's times go onto the time base of the first such node (the lowest process id): shift = the node's
 * offset - the first node's. One node, or offsets unknown: no shift. */
static void ex_align(ex_model *m) {
  int64_t ref = 0;
  uint64_t ref_node = 0;
  int nodes = 0;
  for (size_t i = 0; i < m->nprocs; i++) {
    const ex_proc *p = &m->procs[i];
    if (!p->clock_offset_ns) continue;
    if (!nodes) {
      ref = node_offset(m, p->node_id), ref_node = p->node_id, nodes = 1;
    } else if (p->node_id != ref_node) {
      nodes = 2;
      break;
    }
  }
  if (nodes < 2) return;
  for (size_t i = 0; i < m->nprocs; i++) {
    int64_t off = node_offset(m, m->procs[i].node_id);
    m->procs[i].shift_ns = off ? off - ref : 0;
  }
}

/* A time of process `id` on the common time base (0 = unknown stays 0). */
static int64_t shifted(const ex_model *m, uint64_t id, int64_t t) {
  const ex_proc *p = t ? ex_find_proc(m, id) : NULL;
  return p ? t + p->shift_ns : t;
}

int ex_model_load(ex_writer *w, hp_store *s) {
  ex_model *m = w->m;
  int oom_ = 0;
  LOAD(w, s, HP_TABLE_PROCESS, hp_process, m->procs, m->nprocs, {
    ex_proc *p = &m->procs[m->nprocs];
    p->id = r.id, p->pid = r.pid, p->name = ex_dup(r.command), oom_ = !p->name;
    p->node_id = r.node_id, p->clock_offset_ns = r.clock_offset_ns;
    p->exit_code = r.exit_code, p->exit_signal = r.exit_signal;
  });
  LOAD(w, s, HP_TABLE_THREAD, hp_thread, m->threads, m->nthreads, {
    ex_thread *t = &m->threads[m->nthreads];
    t->id = r.id, t->process_id = r.process_id, t->tid = r.tid, t->name = ex_dup(r.name), oom_ = !t->name;
  });
  LOAD(w, s, HP_TABLE_AGENT, hp_agent, m->agents, m->nagents, {
    ex_named *a = &m->agents[m->nagents];
    a->id = r.id, a->name = ex_dup(r.product_name[0] ? r.product_name : r.name), oom_ = !a->name;
  });
  LOAD(w, s, HP_TABLE_KERNEL_SYMBOL, hp_kernel_symbol, m->kernels, m->nkernels, {
    ex_named *k = &m->kernels[m->nkernels];
    k->id = r.id, k->name = ex_dup(r.display_name[0] ? r.display_name : r.name), oom_ = !k->name;
    if (!oom_ && r.program_hash && *r.program_hash) oom_ = !(k->prog = ex_dup(r.program_hash));
  });
  if (hu_kname_disambiguate(m->kernels, m->nkernels, sizeof *m->kernels, offsetof(ex_named, name),
                            offsetof(ex_named, prog)))
    return ex_set_err(w, "out of memory"); /* names programs share, with the program's digits */
  LOAD(w, s, HP_TABLE_COUNTER_INFO, hp_counter_info, m->counters, m->ncounters, {
    ex_named *k = &m->counters[m->ncounters];
    k->id = r.id, k->name = ex_dup(r.name), k->unit = ex_dup(r.unit), oom_ = !k->name || !k->unit;
  });
  LOAD(w, s, HP_TABLE_QUEUE, hp_queue, m->queues, m->nqueues, {
    ex_queue *q = &m->queues[m->nqueues];
    q->id = r.id, q->process_id = r.process_id, q->agent_id = r.agent_id;
    q->name = ex_dup(r.name), oom_ = !q->name;
  });
  for (size_t i = 0; i < m->nprocs; i++)
    m->procs[i].index = i;
  ex_align(m);
  for (size_t i = 0; i < m->nthreads; i++)
    m->threads[i].index = i;
  /* queue names for people: "NAME (DEVICE)" */
  for (size_t i = 0; i < m->nqueues; i++) {
    ex_queue *q = &m->queues[i];
    q->index = i;
    const ex_named *a = ex_find_named(m->agents, m->nagents, q->agent_id);
    hu_buf b = {0};
    hu_buf_printf(&b, "%s%s%s%s", q->name[0] ? q->name : "queue", a ? " (" : "", a ? a->name : "",
                  a ? ")" : "");
    char *n = hu_buf_cstr(&b);
    if (!n) return ex_set_err(w, "out of memory");
    free(q->name);
    q->name = n;
  }
  if (hp_store_count(s, HP_TABLE_COUNTER_VALUE, &m->nvalues) != HP_OK) m->nvalues = 0;
  if (hp_store_count(s, HP_TABLE_COUNTER_SAMPLE, &m->nsamples) != HP_OK) m->nsamples = 0;
  w->st->processes = m->nprocs, w->st->threads = m->nthreads, w->st->queues = m->nqueues;
  return 0;
}

void ex_model_free(ex_model *m) {
  for (size_t i = 0; i < m->nprocs; i++)
    free(m->procs[i].name);
  for (size_t i = 0; i < m->nthreads; i++)
    free(m->threads[i].name);
  for (size_t i = 0; i < m->nqueues; i++)
    free(m->queues[i].name), ex_lanes_free(&m->queues[i]);
  for (size_t i = 0; i < m->nagents; i++)
    free(m->agents[i].name);
  for (size_t i = 0; i < m->nkernels; i++)
    free(m->kernels[i].name), free(m->kernels[i].prog);
  for (size_t i = 0; i < m->ncounters; i++)
    free(m->counters[i].name), free(m->counters[i].unit);
  free(m->procs), free(m->threads), free(m->queues), free(m->agents), free(m->kernels), free(m->counters);
}

/* ---- the walk ------------------------------------------------------------------------------------- */

/* One more row read: the progress hook every 4096 rows. */
static void tick(ex_writer *w) {
  if (++w->done % 4096 == 0 && w->progress) w->progress(w->progress_ctx, w->done, w->total);
}

static int walk_regions(ex_writer *w, const ex_backend *be, hp_store *s) {
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_REGION, &c);
  if (st != HP_OK) return ex_set_err(w, "%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
  hp_region r = {.size = sizeof r};
  int rc = 0;
  while (!rc && (st = hp_cursor_next(c, &r)) == HP_OK) {
    tick(w);
    if (!r.start_ns || r.end_ns < r.start_ns) {
      w->st->skipped_untimed++;
      continue;
    }
    r.start_ns = shifted(w->m, r.process_id, r.start_ns), r.end_ns = shifted(w->m, r.process_id, r.end_ns);
    rc = be->region(w, &r, ex_find_proc(w->m, r.process_id), ex_find_thread(w->m, r.thread_id));
  }
  hp_cursor_close(c);
  if (!rc && st != HP_END && st != HP_OK) ex_note_damage(w, s);
  return rc;
}

/* The lane of a command (dispatch or copy) on its queue (ex_lane_place): -1 with w->err set when out of
 * memory. */
static int lane_at(ex_writer *w, const ex_backend *be, ex_queue *q, int64_t start, int64_t end) {
  int lane = ex_lane_place(q, be->ordered, start, end);
  return lane < 0 ? ex_set_err(w, "out of memory") : lane;
}

const char *ex_copy_direction(uint32_t d) {
  static const char *const names[] = {"UNKNOWN", "H2D", "D2H", "D2D", "FILL"};
  return d < sizeof names / sizeof names[0] ? names[d] : "UNKNOWN";
}

/* The memory copies (--api), read alongside the dispatches so that both share their queues' lanes in time
 * order: every copy that starts before `until` goes out first. */
typedef struct copy_walk {
  hp_cursor *c;
  hp_status st; /* of the last read: HP_OK while `next` holds a row */
  hp_memory_copy next;
} copy_walk;

/* The next memory copy into cw->next, its times on the common time base. */
static void copy_next(ex_writer *w, copy_walk *cw) {
  cw->st = hp_cursor_next(cw->c, &cw->next);
  if (cw->st != HP_OK) return;
  hp_memory_copy *c = &cw->next;
  c->enqueue_ns = shifted(w->m, c->process_id, c->enqueue_ns);
  c->start_ns = shifted(w->m, c->process_id, c->start_ns),
  c->end_ns = shifted(w->m, c->process_id, c->end_ns);
}

static int copies_before(ex_writer *w, const ex_backend *be, copy_walk *cw, int64_t until) {
  while (cw->st == HP_OK && cw->next.start_ns < until) {
    const hp_memory_copy *c = &cw->next;
    tick(w);
    if (!c->start_ns || c->end_ns < c->start_ns || !be->copy) {
      w->st->skipped_untimed += !c->start_ns || c->end_ns < c->start_ns;
    } else {
      ex_queue *q = ex_find_queue(w->m, c->queue_id);
      int lane = lane_at(w, be, q, c->start_ns, c->end_ns);
      if (lane < 0 ||
          be->copy(w, c, ex_find_proc(w->m, c->process_id), ex_find_thread(w->m, c->thread_id), q, lane))
        return -1;
    }
    copy_next(w, cw);
  }
  return 0;
}

/* A table read alongside the dispatches, in step, by dispatch id: the dispatches of a store hubprof wrote
 * come in increasing id order (merge numbers them in the order it reads them). Counter values are stored
 * after their dispatch, in dispatch order (the collector writes them with it), and are read as they are.
 * Counter samples are stored in time order, as a sampler reads them: the samples of dispatches that overlap
 * interleave, and a dispatch the collector's harvester thread wrote (into its own part of a log) may lie
 * ahead of one that ran before it; so they are read sorted by dispatch id (ex_sorted). Its rows hold no
 * strings, so they are copied as they are. */
typedef struct ex_step {
  hp_cursor *c;
  ex_sorted *sorted; /* the rows by dispatch id, instead of c */
  hp_status st;      /* of the last read: HP_OK while `pending` holds a row */
  size_t id_off;     /* offset of the row's dispatch_id (a uint64_t) */
  hp_table table;
  union {
    hp_counter_value v;
    hp_counter_sample s;
  } pending;
  size_t row_size;
  unsigned char *rows; /* the current dispatch's rows */
  size_t n, cap;
  const ex_backend *be; /* counter samples: the backend that draws those of no dispatch (whole run) */
  int err;              /* its failure */
} ex_step;

static void step_next(ex_step *k) {
  k->st = k->sorted ? ex_sorted_next(k->sorted, &k->pending) : hp_cursor_next(k->c, &k->pending);
}

/* 0, or -1 with w->err set (sorting failed: k to close all the same). */
static int step_open(ex_writer *w, hp_store *s, hp_table t, uint64_t nrows, size_t row_size, size_t id_off,
                     int by_id, ex_step *k) {
  memset(k, 0, sizeof *k);
  k->st = HP_END, k->row_size = row_size, k->id_off = id_off, k->table = t;
  memcpy(&k->pending, &(uint32_t){(uint32_t)row_size}, sizeof(uint32_t)); /* every row starts with its size */
  if (!nrows) return 0;
  if (by_id) {
    if (ex_sorted_open(s, t, row_size, id_off, &k->sorted, w->err, sizeof w->err)) return -1;
    step_next(k);
    return 0;
  }
  k->st = hp_cursor_open(s, t, &k->c);
  if (k->st == HP_OK) step_next(k);
  return 0;
}

static uint64_t step_id(const ex_step *k) {
  uint64_t id;
  memcpy(&id, (const unsigned char *)&k->pending + k->id_off, sizeof id);
  return id;
}

/* A row passed without its dispatch: counted in skipped_order, unless it is a region's host part (a counter
 * value with no dispatch, docs/api-regions.md), which the timeline formats leave out. */
static void step_skip(ex_writer *w, ex_step *k) {
  if (k->table == HP_TABLE_COUNTER_SAMPLE && !k->pending.s.dispatch_id && k->be && k->be->run_sample &&
      !k->err) { /* a whole-run sample: drawn on its process's own track */
    hp_counter_sample s = k->pending.s;
    const ex_proc *p = ex_find_proc(w->m, s.process_id); /* stores from before: the first process */
    if (!p && w->m->nprocs) p = &w->m->procs[0];
    if (p && s.timestamp_ns) s.timestamp_ns = shifted(w->m, p->id, s.timestamp_ns);
    if (k->be->run_sample(w, &s, p)) k->err = 1;
  } else if (k->table != HP_TABLE_COUNTER_VALUE || !hp_counter_value_is_host_part(&k->pending.v))
    w->st->skipped_order++;
  step_next(k);
}

/* The rows of dispatch `id` into k->rows; rows of dispatches before it (up to prev_id) that were never
 * matched are out of order: counted in skipped_order. 0, or -1 when out of memory. */
static int step_take(ex_writer *w, ex_step *k, uint64_t id, uint64_t prev_id) {
  k->n = 0;
  while (k->st == HP_OK && step_id(k) <= prev_id && step_id(k) != id)
    step_skip(w, k);
  while (k->st == HP_OK && (step_id(k) == id || (!step_id(k) && k->be))) {
    if (step_id(k) != id) { /* a whole-run sample between this dispatch's own: drawn, not skipped */
      step_skip(w, k);
      continue;
    }
    if (hu_grow((void **)&k->rows, &k->cap, k->n + 1, k->row_size)) return ex_set_err(w, "out of memory");
    memcpy(k->rows + k->n++ * k->row_size, &k->pending, k->row_size);
    step_next(k);
  }
  return 0;
}

/* Rows left whose dispatch never came are counted; damage is noted; the cursor closed. -1 (w->err set) when
 * the sorted rows could not be read back. */
static int step_close(ex_writer *w, ex_step *k, hp_store *s, int ok) {
  while (ok && k->st == HP_OK)
    step_skip(w, k);
  int e = ex_sorted_error(k->sorted);
  if (ok && e) ex_set_err(w, "cannot read back the sorted counter samples: %s", strerror(e));
  if (ok && !e && k->st != HP_END && k->st != HP_OK) ex_note_damage(w, s);
  free(k->rows);
  hp_cursor_close(k->c);
  ex_sorted_close(k->sorted);
  return ok && e ? -1 : 0;
}

/* Dispatches in store order, with the counter values of each and, for the formats that take them, its counter
 * samples (w->samples): both read alongside in step (ex_step); a row whose dispatch was already passed, or
 * never comes (a damaged store), is counted in skipped_order. */
static int walk_dispatches(ex_writer *w, const ex_backend *be, hp_store *s) {
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_DISPATCH, &c);
  if (st != HP_OK) return ex_set_err(w, "%s", hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
  ex_step vals, samples;
  uint64_t nsamples = 0;
  if (!be->samples || hp_store_count(s, HP_TABLE_COUNTER_SAMPLE, &nsamples) != HP_OK) nsamples = 0;
  int rc = step_open(w, s, HP_TABLE_COUNTER_VALUE, w->m->nvalues, sizeof(hp_counter_value),
                     offsetof(hp_counter_value, dispatch_id), 0, &vals);
  rc |= step_open(w, s, HP_TABLE_COUNTER_SAMPLE, nsamples, sizeof(hp_counter_sample),
                  offsetof(hp_counter_sample, dispatch_id), 1, &samples);
  samples.be = be;
  uint64_t prev_id = 0;
  hp_dispatch d = {.size = sizeof d};
  copy_walk cw = {.st = HP_END, .next = {.size = sizeof cw.next}};
  uint64_t ncopies = 0;
  if (hp_store_count(s, HP_TABLE_MEMORY_COPY, &ncopies) == HP_OK && ncopies &&
      (cw.st = hp_cursor_open(s, HP_TABLE_MEMORY_COPY, &cw.c)) == HP_OK)
    copy_next(w, &cw);
  while (!rc && (st = hp_cursor_next(c, &d)) == HP_OK) {
    tick(w);
    int64_t shift = d.start_ns ? shifted(w->m, d.process_id, d.start_ns) - d.start_ns : 0;
    if (shift) {
      d.start_ns += shift, d.end_ns = d.end_ns ? d.end_ns + shift : 0;
      d.enqueue_ns = d.enqueue_ns ? d.enqueue_ns + shift : 0;
    }
    if (d.start_ns && (rc = copies_before(w, be, &cw, d.start_ns)) != 0) break;
    if (step_take(w, &vals, d.id, prev_id) || step_take(w, &samples, d.id, prev_id) || samples.err) {
      rc = -1;
      break;
    }
    prev_id = d.id > prev_id ? d.id : prev_id;
    if (!d.start_ns || d.end_ns < d.start_ns) {
      w->st->skipped_untimed++;
      continue;
    }
    const ex_named *k = ex_find_named(w->m->kernels, w->m->nkernels, d.kernel_id);
    ex_queue *q = ex_find_queue(w->m, d.queue_id);
    hp_counter_sample *cs = (hp_counter_sample *)samples.rows;
    for (size_t i = 0; shift && i < samples.n; i++)
      cs[i].timestamp_ns = cs[i].timestamp_ns ? cs[i].timestamp_ns + shift : 0;
    w->samples = cs, w->nsamples = samples.n;
    int lane = lane_at(w, be, q, d.start_ns, d.end_ns);
    rc = lane < 0 ? -1
                  : be->dispatch(w, &d, k ? k->name : "(unknown kernel)", ex_find_proc(w->m, d.process_id),
                                 ex_find_thread(w->m, d.thread_id), q, lane,
                                 (const hp_counter_value *)vals.rows, vals.n);
  }
  if (!rc && st != HP_END) ex_note_damage(w, s);
  if (!rc) rc = copies_before(w, be, &cw, INT64_MAX);
  if (!rc && cw.st != HP_END && cw.st != HP_OK && ncopies) ex_note_damage(w, s);
  hp_cursor_close(cw.c);
  if (step_close(w, &vals, s, !rc)) rc = -1;
  if (step_close(w, &samples, s, !rc) || (!rc && samples.err)) rc = -1;
  w->samples = NULL, w->nsamples = 0;
  hp_cursor_close(c);
  return rc;
}

FILE *ex_tmp_file(char *tmpl) {
  int fd = mkstemp(tmpl);
  if (fd < 0) return NULL;
  mode_t um = umask(0); /* mkstemp makes 0600: give the file the mode a plain create would */
  umask(um);
  (void)fchmod(fd, 0666 & ~um);
  FILE *f = fdopen(fd, "w");
  if (!f) {
    int e = errno;
    close(fd), unlink(tmpl);
    errno = e;
  }
  return f;
}

/* Remove a temporary output (a file, or the OTF2 archive's folder with everything in it): 0 when it is gone.
 */
static int remove_tree(const char *path) {
  int e = errno;
  hu_dir_remove(path, 16);
  struct stat sb;
  if (lstat(path, &sb) == 0) return -1; /* errno: why the last removal failed */
  errno = e;
  return 0;
}

const ex_stats *ex_result_stats(const ex_result *r) {
  static const ex_stats none;
  return r ? &r->stats : &none;
}
const char *ex_result_error(const ex_result *r) { return r ? r->error : "out of memory"; }
void ex_result_free(ex_result *r) { free(r); }

ex_status ex_result_err(ex_result *r, ex_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error, sizeof r->error, fmt, ap);
  va_end(ap);
  return st;
}

ex_status ex_export(hp_store *s, const char *out_path, ex_format f, const ex_opts *opts, ex_result **out) {
  if (!out) return EX_ERR_INVALID;
  ex_result *res = *out = calloc(1, sizeof *res);
  if (!res) return EX_ERR_NOMEM;
  if (!s || !out_path || !*out_path)
    return ex_result_err(res, EX_ERR_INVALID, "export: no store or no output path");
  ex_stats *stats = &res->stats;
  if (!ex_format_available(f))
    return ex_result_err(res, f >= 0 && f < EX_FORMAT_COUNT ? EX_ERR_UNSUPPORTED : EX_ERR_INVALID,
                         "export format %s is not compiled into this build",
                         f >= 0 && f < EX_FORMAT_COUNT ? ex_format_names[f] : "?");
  const ex_backend *be = f == EX_PERFETTO ? &ex_perfetto_backend
                         : f == EX_CHROME ? &ex_chrome_backend
                                          :
#ifdef HUBPROF_HAVE_OTF2
                                          &ex_otf2_backend;
#else
                                          NULL;
#endif
  ex_model m = {0};
  ex_writer w = {.m = &m, .st = stats, .out_path = out_path};
  if (opts && opts->progress) {
    uint64_t nr = 0, nd = 0;
    w.progress = opts->progress;
    w.progress_ctx = opts->progress_ctx;
    uint64_t nc = 0;
    if (hp_store_count(s, HP_TABLE_REGION, &nr) == HP_OK &&
        hp_store_count(s, HP_TABLE_DISPATCH, &nd) == HP_OK)
      w.total = nr + nd + (hp_store_count(s, HP_TABLE_MEMORY_COPY, &nc) == HP_OK ? nc : 0);
  }
  ex_status rc = EX_OK;
  if (ex_model_load(&w, s)) {
    ex_model_free(&m);
    return ex_result_err(res, EX_ERR_STORE, "%s", w.err);
  }
  uint64_t off = 0;
  if (hp_store_damage(s, &off) != HP_OK)
    ex_note_damage(&w, s); /* a log cut short: its complete blocks are read */
  /* the temporary output beside the final one, so the rename stays on one file system */
  hu_buf tb = {0};
  hu_buf_printf(&tb, "%s.tmp.XXXXXX", out_path);
  w.tmp_path = hu_buf_cstr(&tb);
  if (!w.tmp_path) {
    ex_model_free(&m);
    return ex_result_err(res, EX_ERR_NOMEM, "out of memory");
  }
  int made = 0;
  if (be->is_dir) {
    if (!mkdtemp(w.tmp_path)) {
      rc = ex_result_err(res, EX_ERR_IO, "%s: cannot create the output: %s", out_path, strerror(errno));
    } else { /* mkdtemp makes 0700: give the folder the mode a plain mkdir would */
      mode_t um = umask(0);
      umask(um);
      (void)chmod(w.tmp_path, 0777 & ~um);
      made = 1;
    }
  } else {
    if (!(w.f = ex_tmp_file(w.tmp_path)))
      rc = ex_result_err(res, EX_ERR_IO, "%s: cannot create the output: %s", out_path, strerror(errno));
    else
      made = 1;
  }
  if (!rc) {
    int bad = be->open(&w) || be->tracks(&w) || walk_regions(&w, be, s) || walk_dispatches(&w, be, s) ||
              be->finish(&w);
    if (bad) {
      rc = ex_result_err(res, strstr(w.err, "out of memory") ? EX_ERR_NOMEM : EX_ERR_IO, "%s", w.err);
      be->discard(&w);
    } else if ((be->is_dir && remove_tree(out_path)) || rename(w.tmp_path, out_path)) {
      rc = ex_result_err(res, EX_ERR_IO, "%s: cannot write the output: %s", out_path, strerror(errno));
    } else {
      made = 0;
      if (w.progress) w.progress(w.progress_ctx, w.done, w.total);
    }
  }
  if (w.f) fclose(w.f);
  if (made) remove_tree(w.tmp_path);
  for (int i = 0; i < 4; i++)
    hu_buf_free(&w.scratch[i]);
  hu_buf_free(&tb);
  ex_model_free(&m);
  return rc;
}
