/* hubprof export to the Chrome trace-event JSON format: "X" complete events for dispatches and regions, "i"
 * instants for markers, "s"/"f" flows from enqueue to device, "C" counters, "M" metadata naming the tracks.
 */
/* SPDX-License-Identifier: MIT */
#include "ex_internal.h"

#include <inttypes.h>
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Queues have no thread id: each queue lane gets one above any real tid. */
#define QUEUE_TID(q, lane) (0x40000000LL + (long long)(q)->index * EX_MAX_LANES + (lane))

typedef struct ch_state {
  hu_buf ev;
  int any;            /* an event was written: the next needs a comma */
  int *lanes_written; /* per queue */
} ch_state;

static int64_t pid_of(const ex_proc *p) { return p ? p->pid : 0; }

/* Write ps->ev as one element of traceEvents. */
static int put(ex_writer *w, ch_state *cs) {
  if (cs->ev.oom) return ex_set_err(w, "out of memory");
  if ((cs->any && fputs(",\n", w->f) == EOF) || fwrite(cs->ev.p, 1, cs->ev.n, w->f) != cs->ev.n)
    return ex_set_err(w, "%s: write failed: %s", w->out_path, strerror(errno));
  cs->any = 1;
  cs->ev.n = 0;
  return 0;
}

static int meta(ex_writer *w, ch_state *cs, const char *what, int64_t pid, long long tid, const char *name) {
  hu_buf *b = &cs->ev;
  hu_buf_printf(b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%lld,\"args\":{\"name\":", what,
                pid, tid);
  ex_json_str(b, name);
  hu_buf_str(b, "}}");
  return put(w, cs);
}

static int lane_meta(ex_writer *w, ch_state *cs, const ex_queue *q, int lane) {
  hu_buf *t = &w->scratch[0];
  t->n = 0;
  hu_buf_str(t, q->name);
  if (lane) hu_buf_printf(t, " lane %d", lane + 1);
  const char *nm = hu_buf_cstr(t);
  if (!nm) return ex_set_err(w, "out of memory");
  if (meta(w, cs, "thread_name", pid_of(ex_find_proc(w->m, q->process_id)), QUEUE_TID(q, lane), nm))
    return -1;
  cs->lanes_written[q->index] = lane + 1;
  return 0;
}

static int ch_open(ex_writer *w) {
  ch_state *cs = calloc(1, sizeof *cs);
  if (!cs) return ex_set_err(w, "out of memory");
  w->priv = cs;
  if (w->m->nqueues && !(cs->lanes_written = calloc(w->m->nqueues, sizeof *cs->lanes_written)))
    return ex_set_err(w, "out of memory");
  if (fputs(
          "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"hubprof\",\"clock\":\"nanoseconds of "
          "each "
          "node's recorded clock (CLOCK_MONOTONIC_RAW for OpenCL), as microseconds\"},\n\"traceEvents\":[\n",
          w->f) == EOF)
    return ex_set_err(w, "%s: write failed: %s", w->out_path, strerror(errno));
  return 0;
}

static int ch_tracks(ex_writer *w) {
  ch_state *cs = w->priv;
  ex_model *m = w->m;
  for (size_t i = 0; i < m->nprocs; i++)
    if (meta(w, cs, "process_name", m->procs[i].pid, 0, m->procs[i].name)) return -1;
  for (size_t i = 0; i < m->nthreads; i++) {
    const ex_thread *t = &m->threads[i];
    if (t->name[0] && meta(w, cs, "thread_name", pid_of(ex_find_proc(m, t->process_id)), t->tid, t->name))
      return -1;
  }
  for (size_t i = 0; i < m->nqueues; i++)
    if (lane_meta(w, cs, &m->queues[i], 0)) return -1;
  return 0;
}

/* "ph","name","cat","pid","tid","ts" of an event (the object left open) */
static void head(hu_buf *b, const char *ph, const char *name, const char *cat, int64_t pid, long long tid,
                 int64_t ts) {
  hu_buf_printf(b, "{\"ph\":\"%s\",\"name\":", ph);
  ex_json_str(b, name);
  if (cat) {
    hu_buf_str(b, ",\"cat\":");
    ex_json_str(b, cat);
  }
  hu_buf_printf(b, ",\"pid\":%" PRId64 ",\"tid\":%lld,\"ts\":", pid, tid);
  ex_json_us(b, ts);
}

static long long host_tid(const ex_proc *p, const ex_thread *t) { return t ? (long long)t->tid : pid_of(p); }

static int ch_region(ex_writer *w, const hp_region *r, const ex_proc *p, const ex_thread *t) {
  ch_state *cs = w->priv;
  hu_buf *b = &cs->ev;
  int marker = r->end_ns == r->start_ns;
  head(b, marker ? "i" : "X", r->name, r->category[0] ? r->category : NULL, pid_of(p), host_tid(p, t),
       r->start_ns);
  if (marker)
    hu_buf_str(b, ",\"s\":\"t\"");
  else {
    hu_buf_str(b, ",\"dur\":");
    ex_json_us(b, r->end_ns - r->start_ns);
  }
  hu_buf_byte(b, '}');
  if (put(w, cs)) return -1;
  if (marker)
    w->st->markers++;
  else
    w->st->regions++;
  return 0;
}

/* Name the queue's lanes up to `lane` (once each). */
static int lanes_named(ex_writer *w, ch_state *cs, ex_queue *q, int lane) {
  if (q && lane >= cs->lanes_written[q->index])
    for (int l = cs->lanes_written[q->index]; l <= lane; l++)
      if (lane_meta(w, cs, q, l)) return -1;
  return 0;
}

/* A "C" event of the counter track "QUEUE COUNTER" + suffix: value v at ts. */
static int counter_event(ex_writer *w, ch_state *cs, int64_t pid, long long qtid, const ex_queue *q,
                         const ex_named *c, const char *suffix, int64_t ts, double v) {
  hu_buf *b = &cs->ev, *nm = &w->scratch[0];
  nm->n = 0;
  hu_buf_printf(nm, "%s %s%s", q->name, c->name, suffix);
  const char *name = hu_buf_cstr(nm);
  if (!name) return ex_set_err(w, "out of memory");
  head(b, "C", name, "counter", pid, qtid, ts);
  if (isfinite(v))
    hu_buf_printf(b, ",\"args\":{\"value\":%.17g}}", v);
  else
    hu_buf_str(b, ",\"args\":{\"value\":null}}"); /* JSON has no NaN or infinity */
  return put(w, cs);
}

static int ch_dispatch(ex_writer *w, const hp_dispatch *d, const char *kernel, const ex_proc *p,
                       const ex_thread *t, ex_queue *q, int lane, const hp_counter_value *cv, size_t ncv) {
  ch_state *cs = w->priv;
  hu_buf *b = &cs->ev;
  if (lanes_named(w, cs, q, lane)) return -1;
  int64_t pid = pid_of(p);
  long long qtid = q ? QUEUE_TID(q, lane) : host_tid(p, t);
  head(b, "X", kernel, "dispatch", pid, qtid, d->start_ns);
  hu_buf_str(b, ",\"dur\":");
  ex_json_us(b, d->end_ns - d->start_ns);
  hu_buf_str(b, ",\"args\":{\"kernel\":");
  ex_json_str(b, kernel);
  hu_buf_printf(b,
                ",\"grid\":\"%u,%u,%u\",\"workgroup\":\"%u,%u,%u\",\"dispatch_id\":%" PRIu64
                ",\"enqueue_ns\":%" PRId64 "}}",
                d->grid[0], d->grid[1], d->grid[2], d->workgroup[0], d->workgroup[1], d->workgroup[2],
                d->dispatch_id, d->enqueue_ns);
  if (put(w, cs)) return -1;
  if (d->enqueue_ns) {
    long long htid = host_tid(p, t);
    head(b, "X", kernel, "enqueue", pid, htid, d->enqueue_ns);
    hu_buf_printf(b, ",\"dur\":0,\"args\":{\"dispatch_id\":%" PRIu64 "}}", d->dispatch_id);
    if (put(w, cs)) return -1;
    head(b, "s", "dispatch", "flow", pid, htid, d->enqueue_ns);
    hu_buf_printf(b, ",\"id\":%" PRIu64 "}", d->id);
    if (put(w, cs)) return -1;
    head(b, "f", "dispatch", "flow", pid, qtid, d->start_ns);
    hu_buf_printf(b, ",\"bp\":\"e\",\"id\":%" PRIu64 "}", d->id);
    if (put(w, cs)) return -1;
    w->st->flows++;
  }
  for (size_t i = 0; q && i < ncv; i++) {
    const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, cv[i].counter_id);
    if (!c) continue;
    if (counter_event(w, cs, pid, qtid, q, c, "", d->start_ns, cv[i].value)) return -1;
    w->st->counter_values++;
  }
  for (size_t i = 0; q && i < w->nsamples; i++) { /* counter samples read during the dispatch */
    const hp_counter_sample *s = &w->samples[i];
    const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, s->counter_id);
    if (!c || !s->timestamp_ns) {
      w->st->skipped_order++;
      continue;
    }
    if (counter_event(w, cs, pid, qtid, q, c, " (sample)", s->timestamp_ns, s->value)) return -1;
    w->st->counter_samples++;
  }
  w->st->dispatches++;
  return 0;
}

static int ch_copy(ex_writer *w, const hp_memory_copy *c, const ex_proc *p, const ex_thread *t, ex_queue *q,
                   int lane) {
  ch_state *cs = w->priv;
  hu_buf *b = &cs->ev;
  if (lanes_named(w, cs, q, lane)) return -1;
  int64_t pid = pid_of(p);
  long long qtid = q ? QUEUE_TID(q, lane) : host_tid(p, t);
  head(b, "X", c->name, "copy", pid, qtid, c->start_ns);
  hu_buf_str(b, ",\"dur\":");
  ex_json_us(b, c->end_ns - c->start_ns);
  hu_buf_printf(b,
                ",\"args\":{\"bytes\":%" PRIu64 ",\"direction\":\"%s\",\"copy_id\":%" PRIu64
                ",\"enqueue_ns\":%" PRId64 "}}",
                c->bytes, ex_copy_direction(c->direction), c->id, c->enqueue_ns);
  if (put(w, cs)) return -1;
  if (c->enqueue_ns) { /* the flow from the enqueuing call (its API region holds the start) */
    long long htid = host_tid(p, t);
    head(b, "s", "copy", "flow", pid, htid, c->enqueue_ns);
    hu_buf_printf(b, ",\"id\":%" PRIu64 "}", EX_COPY_FLOW(c->id));
    if (put(w, cs)) return -1;
    head(b, "f", "copy", "flow", pid, qtid, c->start_ns);
    hu_buf_printf(b, ",\"bp\":\"e\",\"id\":%" PRIu64 "}", EX_COPY_FLOW(c->id));
    if (put(w, cs)) return -1;
    w->st->flows++;
  }
  w->st->copies++;
  return 0;
}

static void ch_free(ch_state *cs) {
  if (!cs) return;
  hu_buf_free(&cs->ev);
  free(cs->lanes_written);
  free(cs);
}

static int ch_finish(ex_writer *w) {
  ch_free(w->priv);
  w->priv = NULL;
  FILE *f = w->f;
  w->f = NULL;
  int bad = fputs("\n]}\n", f) == EOF || fflush(f) != 0 || ferror(f);
  if (fclose(f) || bad) return ex_set_err(w, "%s: write failed: %s", w->out_path, strerror(errno));
  return 0;
}

static void ch_discard(ex_writer *w) {
  ch_free(w->priv);
  w->priv = NULL;
}

/* A whole-run counter sample: a counter event "whole run COUNTER" of the process. */
static int ch_run_sample(ex_writer *w, const hp_counter_sample *s, const ex_proc *p) {
  ch_state *cs = w->priv;
  const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, s->counter_id);
  if (!c || !s->timestamp_ns) {
    w->st->skipped_order++;
    return 0;
  }
  hu_buf *b = &cs->ev, *nm = &w->scratch[0];
  nm->n = 0;
  hu_buf_printf(nm, "whole run %s", c->name);
  const char *name = hu_buf_cstr(nm);
  if (!name) return ex_set_err(w, "out of memory");
  head(b, "C", name, "counter", pid_of(p), 0, s->timestamp_ns);
  hu_buf_printf(b, ",\"args\":{\"value\":%.17g}}", isfinite(s->value) ? s->value : 0.0);
  w->st->counter_samples++;
  return put(w, cs);
}

const ex_backend ex_chrome_backend = {
    .open = ch_open,
    .tracks = ch_tracks,
    .region = ch_region,
    .dispatch = ch_dispatch,
    .finish = ch_finish,
    .discard = ch_discard,
    .copy = ch_copy,
    .samples = 1,
    .run_sample = ch_run_sample,
};
