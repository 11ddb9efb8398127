/* hubprof export to Perfetto's protobuf trace format (track events): a small protobuf encoder (varints,
 * length-delimited fields) and the packets for process, thread, queue and counter tracks, slices and flows.
 */
/* SPDX-License-Identifier: MIT */
#include "ex_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Field numbers of the Perfetto protos (perfetto/trace/trace.proto, trace_packet.proto, track_event/...). */
enum {
  PB_TRACE_PACKET = 1,
  PKT_TIMESTAMP = 8,
  PKT_SEQUENCE_ID = 10,
  PKT_TRACK_EVENT = 11,
  PKT_SEQUENCE_FLAGS = 13,
  PKT_TRACK_DESCRIPTOR = 60,
  SEQ_INCREMENTAL_STATE_CLEARED = 1,
  TD_UUID = 1,
  TD_NAME = 2,
  TD_PROCESS = 3,
  TD_THREAD = 4,
  TD_PARENT_UUID = 5,
  TD_COUNTER = 8,
  PD_PID = 1,
  PD_CMDLINE = 2,
  PD_PROCESS_NAME = 6,
  THD_PID = 1,
  THD_TID = 2,
  THD_THREAD_NAME = 5,
  CD_UNIT_NAME = 6,
  TE_DEBUG_ANNOTATIONS = 4,
  TE_TYPE = 9,
  TE_TRACK_UUID = 11,
  TE_CATEGORIES = 22,
  TE_NAME = 23,
  TE_DOUBLE_COUNTER_VALUE = 44,
  TE_FLOW_IDS = 47,
  TE_TERMINATING_FLOW_IDS = 48,
  TYPE_SLICE_BEGIN = 1,
  TYPE_SLICE_END = 2,
  TYPE_INSTANT = 3,
  TYPE_COUNTER = 4,
  DA_UINT_VALUE = 3,
  DA_INT_VALUE = 4,
  DA_DOUBLE_VALUE = 5,
  DA_STRING_VALUE = 6,
  DA_NAME = 10,
};
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

#define SEQ_ID 1

/* Track uuids: the kind in the top bits, the model's index below. */
#define UUID_PROC(i) ((1ULL << 60) | (uint64_t)(i))
#define UUID_THREAD(i) ((2ULL << 60) | (uint64_t)(i))
#define UUID_QUEUE(i, lane) ((3ULL << 60) | (uint64_t)(i) << 8 | (uint64_t)(lane))
#define UUID_COUNTER(q, c) ((4ULL << 60) | (uint64_t)(q) << 28 | (uint64_t)(c))
#define UUID_NOPROC (5ULL << 60)
#define UUID_SAMPLE(q, c) ((6ULL << 60) | (uint64_t)(q) << 28 | (uint64_t)(c))
#define UUID_RUN(c) ((7ULL << 60) | (uint64_t)(c)) /* whole-run samples of counter c (sample --whole-run) */
#define RUN_TRACKS 1024                            /* counters with a whole-run track */

/* ---- the encoder ------------------------------------------------------------------------------------- */

static void pb_tag(hu_buf *b, unsigned field, unsigned wt) { hu_buf_varint(b, (uint64_t)field << 3 | wt); }
static void pb_uint(hu_buf *b, unsigned field, uint64_t v) {
  pb_tag(b, field, WT_VARINT);
  hu_buf_varint(b, v);
}
static void pb_int(hu_buf *b, unsigned field, int64_t v) { pb_uint(b, field, (uint64_t)v); }
static void pb_fixed64(hu_buf *b, unsigned field, uint64_t v) {
  pb_tag(b, field, WT_I64);
  hu_buf_le64(b, v);
}
static void pb_double(hu_buf *b, unsigned field, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  pb_fixed64(b, field, v);
}
static void pb_bytes(hu_buf *b, unsigned field, const void *p, size_t n) {
  pb_tag(b, field, WT_LEN);
  hu_buf_varint(b, n);
  hu_buf_put(b, p, n);
}
static void pb_msg(hu_buf *b, unsigned field, const hu_buf *m) { pb_bytes(b, field, m->p, m->n); }

typedef struct pf_state {
  hu_buf pkt, ev, sub, str;
  int first;                                 /* the first packet clears the sequence's incremental state */
  int noproc;                                /* the "(no process)" track was described */
  int *lanes_written;                        /* per queue: lane tracks described so far */
  unsigned char run_written[RUN_TRACKS / 8]; /* whole-run counter tracks described so far */
} pf_state;

/* a string field, as valid UTF-8 */
static void pb_str(pf_state *ps, hu_buf *b, unsigned field, const char *s) {
  const char *c = ex_utf8_clean(&ps->str, s);
  pb_bytes(b, field, c, strlen(c));
}

/* Write ps->pkt (its fields) as one packet of the trace. */
static int emit(ex_writer *w, pf_state *ps) {
  hu_buf *p = &ps->pkt;
  pb_uint(p, PKT_SEQUENCE_ID, SEQ_ID);
  if (ps->first) {
    pb_uint(p, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    ps->first = 0;
  }
  if (p->oom || ps->ev.oom || ps->sub.oom || ps->str.oom) return ex_set_err(w, "out of memory");
  unsigned char hdr[11];
  size_t n = 0;
  hdr[n++] = PB_TRACE_PACKET << 3 | WT_LEN;
  uint64_t len = p->n;
  do {
    hdr[n++] = (unsigned char)((len & 0x7F) | (len > 0x7F ? 0x80 : 0));
    len >>= 7;
  } while (len);
  if (fwrite(hdr, 1, n, w->f) != n || fwrite(p->p, 1, p->n, w->f) != p->n)
    return ex_set_err(w, "%s: write failed: %s", w->out_path, strerror(errno));
  p->n = ps->ev.n = ps->sub.n = 0;
  return 0;
}

/* A track descriptor packet; `sub` holds the process/thread/counter descriptor when field is not 0. */
static int descriptor(ex_writer *w, pf_state *ps, uint64_t uuid, uint64_t parent, const char *name,
                      unsigned field) {
  hu_buf *e = &ps->ev;
  pb_uint(e, TD_UUID, uuid);
  if (parent) pb_uint(e, TD_PARENT_UUID, parent);
  if (name) pb_str(ps, e, TD_NAME, name);
  if (field) pb_msg(e, field, &ps->sub);
  pb_msg(&ps->pkt, PKT_TRACK_DESCRIPTOR, e);
  return emit(w, ps);
}

static int pf_open(ex_writer *w) {
  pf_state *ps = calloc(1, sizeof *ps);
  if (!ps) return ex_set_err(w, "out of memory");
  w->priv = ps;
  ps->first = 1;
  if (w->m->nqueues && !(ps->lanes_written = calloc(w->m->nqueues, sizeof *ps->lanes_written)))
    return ex_set_err(w, "out of memory");
  return 0;
}

static uint64_t proc_uuid(const ex_proc *p) { return p ? UUID_PROC(p->index) : UUID_NOPROC; }

/* Describe the "(no process)" track the first time an event needs it (before the event's own packet). */
static int need_track(ex_writer *w, pf_state *ps, uint64_t uuid) {
  if (uuid != UUID_NOPROC || ps->noproc) return 0;
  ps->noproc = 1;
  pb_str(ps, &ps->sub, PD_PROCESS_NAME, "(no process)");
  return descriptor(w, ps, UUID_NOPROC, 0, "(no process)", TD_PROCESS);
}

static int lane_track(ex_writer *w, pf_state *ps, const ex_queue *q, int lane) {
  char name[64];
  snprintf(name, sizeof name, " lane %d", lane + 1);
  hu_buf *t = &w->scratch[0];
  t->n = 0;
  hu_buf_str(t, q->name);
  if (lane) hu_buf_str(t, name);
  const char *nm = hu_buf_cstr(t);
  if (!nm) return ex_set_err(w, "out of memory");
  if (descriptor(w, ps, UUID_QUEUE(q->index, lane), proc_uuid(ex_find_proc(w->m, q->process_id)), nm, 0))
    return -1;
  ps->lanes_written[q->index] = lane + 1;
  return 0;
}

static int pf_tracks(ex_writer *w) {
  pf_state *ps = w->priv;
  ex_model *m = w->m;
  int orphans = 0; /* threads or queues whose process is not in the store (damage, foreign writers) */
  for (size_t i = 0; i < m->nthreads; i++)
    orphans |= !ex_find_proc(m, m->threads[i].process_id);
  for (size_t i = 0; i < m->nqueues; i++)
    orphans |= !ex_find_proc(m, m->queues[i].process_id);
  if (orphans && need_track(w, ps, UUID_NOPROC)) return -1;
  for (size_t i = 0; i < m->nprocs; i++) {
    const ex_proc *p = &m->procs[i];
    pb_int(&ps->sub, PD_PID, p->pid);
    pb_str(ps, &ps->sub, PD_CMDLINE, p->name);
    pb_str(ps, &ps->sub, PD_PROCESS_NAME, p->name);
    if (descriptor(w, ps, UUID_PROC(i), 0, NULL, TD_PROCESS)) return -1;
  }
  for (size_t i = 0; i < m->nthreads; i++) {
    const ex_thread *t = &m->threads[i];
    const ex_proc *p = ex_find_proc(m, t->process_id);
    pb_int(&ps->sub, THD_PID, p ? p->pid : 0);
    pb_int(&ps->sub, THD_TID, t->tid);
    if (t->name[0]) pb_str(ps, &ps->sub, THD_THREAD_NAME, t->name);
    if (descriptor(w, ps, UUID_THREAD(i), proc_uuid(p), NULL, TD_THREAD)) return -1;
  }
  for (size_t i = 0; i < m->nqueues; i++)
    if (lane_track(w, ps, &m->queues[i], 0)) return -1;
  /* counter tracks per queue: per-dispatch values, and samples (`COUNTER (sample)`) when the store has them
   */
  for (int smp = 0; smp < 2; smp++)
    if (smp ? m->nsamples : m->nvalues)
      for (size_t i = 0; i < m->nqueues; i++)
        for (size_t c = 0; c < m->ncounters; c++) {
          const ex_queue *q = &m->queues[i];
          hu_buf *t = &w->scratch[0];
          t->n = 0;
          hu_buf_printf(t, "%s %s%s", q->name, m->counters[c].name, smp ? " (sample)" : "");
          const char *nm = hu_buf_cstr(t);
          if (!nm) return ex_set_err(w, "out of memory");
          if (m->counters[c].unit[0]) pb_str(ps, &ps->sub, CD_UNIT_NAME, m->counters[c].unit);
          if (descriptor(w, ps, smp ? UUID_SAMPLE(i, c) : UUID_COUNTER(i, c),
                         proc_uuid(ex_find_proc(m, q->process_id)), nm, TD_COUNTER))
            return -1;
        }
  return 0;
}

/* the track of a host-side event: its thread's, else its process's */
static uint64_t host_uuid(const ex_proc *p, const ex_thread *t) {
  return t ? UUID_THREAD(t->index) : proc_uuid(p);
}

static void begin_event(pf_state *ps, int64_t ts, int type, uint64_t track) {
  pb_uint(&ps->pkt, PKT_TIMESTAMP, (uint64_t)ts);
  pb_uint(&ps->ev, TE_TYPE, (uint64_t)type);
  pb_uint(&ps->ev, TE_TRACK_UUID, track);
}

static int end_event(ex_writer *w, pf_state *ps) {
  pb_msg(&ps->pkt, PKT_TRACK_EVENT, &ps->ev);
  return emit(w, ps);
}

static void annotation_str(pf_state *ps, const char *name, const char *v) {
  ps->sub.n = 0;
  pb_str(ps, &ps->sub, DA_NAME, name);
  pb_str(ps, &ps->sub, DA_STRING_VALUE, v);
  pb_msg(&ps->ev, TE_DEBUG_ANNOTATIONS, &ps->sub);
}
static void annotation_uint(pf_state *ps, const char *name, uint64_t v) {
  ps->sub.n = 0;
  pb_str(ps, &ps->sub, DA_NAME, name);
  pb_uint(&ps->sub, DA_UINT_VALUE, v);
  pb_msg(&ps->ev, TE_DEBUG_ANNOTATIONS, &ps->sub);
}
static void annotation_int(pf_state *ps, const char *name, int64_t v) {
  ps->sub.n = 0;
  pb_str(ps, &ps->sub, DA_NAME, name);
  pb_int(&ps->sub, DA_INT_VALUE, v);
  pb_msg(&ps->ev, TE_DEBUG_ANNOTATIONS, &ps->sub);
}

static int pf_region(ex_writer *w, const hp_region *r, const ex_proc *p, const ex_thread *t) {
  pf_state *ps = w->priv;
  uint64_t track = host_uuid(p, t);
  if (need_track(w, ps, track)) return -1;
  int marker = r->end_ns == r->start_ns;
  begin_event(ps, r->start_ns, marker ? TYPE_INSTANT : TYPE_SLICE_BEGIN, track);
  pb_str(ps, &ps->ev, TE_NAME, r->name);
  if (r->category[0]) pb_str(ps, &ps->ev, TE_CATEGORIES, r->category);
  if (end_event(w, ps)) return -1;
  if (marker) {
    w->st->markers++;
    return 0;
  }
  begin_event(ps, r->end_ns, TYPE_SLICE_END, track);
  if (end_event(w, ps)) return -1;
  w->st->regions++;
  return 0;
}

/* The tracks a command needs: its queue lane's (and the lanes before it) and its host thread's. */
static int tracks_for(ex_writer *w, pf_state *ps, ex_queue *q, int lane, uint64_t track, uint64_t host) {
  if (need_track(w, ps, track) || need_track(w, ps, host)) return -1;
  if (q && lane >= ps->lanes_written[q->index])
    for (int l = ps->lanes_written[q->index]; l <= lane; l++)
      if (lane_track(w, ps, q, l)) return -1;
  return 0;
}

/* What ends a command's slice: its enqueue and end times, its tracks, its flow, its name and id. */
typedef struct cmd_ends {
  int64_t enqueue_ns, end_ns;
  uint64_t track, host, flow;
  const char *name, *id_key;
  uint64_t id;
} cmd_ends;

/* The rest of a command's begin event (its id and enqueue time; the flow's end), its end event, and the
 * host side: an instant on the enqueuing thread, where the flow starts. */
static int slice_end(ex_writer *w, pf_state *ps, const cmd_ends *c) {
  annotation_uint(ps, c->id_key, c->id);
  if (c->enqueue_ns) annotation_int(ps, "enqueue_ns", c->enqueue_ns);
  if (c->enqueue_ns) pb_fixed64(&ps->ev, TE_TERMINATING_FLOW_IDS, c->flow);
  if (end_event(w, ps)) return -1;
  begin_event(ps, c->end_ns, TYPE_SLICE_END, c->track);
  if (end_event(w, ps)) return -1;
  if (!c->enqueue_ns) return 0;
  begin_event(ps, c->enqueue_ns, TYPE_INSTANT, c->host);
  pb_str(ps, &ps->ev, TE_NAME, c->name);
  pb_str(ps, &ps->ev, TE_CATEGORIES, "enqueue");
  annotation_uint(ps, c->id_key, c->id);
  pb_fixed64(&ps->ev, TE_FLOW_IDS, c->flow);
  if (end_event(w, ps)) return -1;
  w->st->flows++;
  return 0;
}

static int pf_dispatch(ex_writer *w, const hp_dispatch *d, const char *kernel, const ex_proc *p,
                       const ex_thread *t, ex_queue *q, int lane, const hp_counter_value *cv, size_t ncv) {
  pf_state *ps = w->priv;
  uint64_t track = q ? UUID_QUEUE(q->index, lane) : proc_uuid(p), host = host_uuid(p, t);
  if (tracks_for(w, ps, q, lane, track, host)) return -1;
  uint64_t flow = d->id;
  char dims[96];
  begin_event(ps, d->start_ns, TYPE_SLICE_BEGIN, track);
  pb_str(ps, &ps->ev, TE_NAME, kernel);
  pb_str(ps, &ps->ev, TE_CATEGORIES, "dispatch");
  annotation_str(ps, "kernel", kernel);
  snprintf(dims, sizeof dims, "%u,%u,%u", d->grid[0], d->grid[1], d->grid[2]);
  annotation_str(ps, "grid", dims);
  snprintf(dims, sizeof dims, "%u,%u,%u", d->workgroup[0], d->workgroup[1], d->workgroup[2]);
  annotation_str(ps, "workgroup", dims);
  if (slice_end(
          w, ps,
          &(cmd_ends){d->enqueue_ns, d->end_ns, track, host, flow, kernel, "dispatch_id", d->dispatch_id}))
    return -1;
  for (size_t i = 0; q && i < ncv; i++) {
    const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, cv[i].counter_id);
    if (!c) continue;
    begin_event(ps, d->start_ns, TYPE_COUNTER, UUID_COUNTER(q->index, (size_t)(c - w->m->counters)));
    pb_double(&ps->ev, TE_DOUBLE_COUNTER_VALUE, cv[i].value);
    if (end_event(w, ps)) return -1;
    w->st->counter_values++;
  }
  for (size_t i = 0; q && i < w->nsamples; i++) { /* counter samples read during the dispatch */
    const hp_counter_sample *cs = &w->samples[i];
    const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, cs->counter_id);
    if (!c || !cs->timestamp_ns) {
      w->st->skipped_order++;
      continue;
    }
    begin_event(ps, cs->timestamp_ns, TYPE_COUNTER, UUID_SAMPLE(q->index, (size_t)(c - w->m->counters)));
    pb_double(&ps->ev, TE_DOUBLE_COUNTER_VALUE, cs->value);
    if (end_event(w, ps)) return -1;
    w->st->counter_samples++;
  }
  w->st->dispatches++;
  return 0;
}

static int pf_copy(ex_writer *w, const hp_memory_copy *c, const ex_proc *p, const ex_thread *t, ex_queue *q,
                   int lane) {
  pf_state *ps = w->priv;
  uint64_t track = q ? UUID_QUEUE(q->index, lane) : proc_uuid(p), host = host_uuid(p, t);
  if (tracks_for(w, ps, q, lane, track, host)) return -1;
  uint64_t flow = (1ULL << 62) | c->id; /* apart from the dispatches' flows (their row ids) */
  begin_event(ps, c->start_ns, TYPE_SLICE_BEGIN, track);
  pb_str(ps, &ps->ev, TE_NAME, c->name);
  pb_str(ps, &ps->ev, TE_CATEGORIES, "copy");
  annotation_uint(ps, "bytes", c->bytes);
  annotation_str(ps, "direction", ex_copy_direction(c->direction));
  if (slice_end(w, ps, &(cmd_ends){c->enqueue_ns, c->end_ns, track, host, flow, c->name, "copy_id", c->id}))
    return -1;
  w->st->copies++;
  return 0;
}

static void pf_free(pf_state *ps) {
  if (!ps) return;
  hu_buf_free(&ps->pkt), hu_buf_free(&ps->ev), hu_buf_free(&ps->sub), hu_buf_free(&ps->str);
  free(ps->lanes_written);
  free(ps);
}

static int pf_finish(ex_writer *w) {
  pf_free(w->priv);
  w->priv = NULL;
  FILE *f = w->f;
  w->f = NULL;
  int bad = fflush(f) != 0 || ferror(f);
  if (fclose(f) || bad) return ex_set_err(w, "%s: write failed: %s", w->out_path, strerror(errno));
  return 0;
}

static void pf_discard(ex_writer *w) {
  pf_free(w->priv);
  w->priv = NULL;
}

/* A whole-run counter sample on the process's "whole run COUNTER" track (described at its first). */
static int pf_run_sample(ex_writer *w, const hp_counter_sample *s, const ex_proc *p) {
  pf_state *ps = w->priv;
  const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, s->counter_id);
  size_t ci = c ? (size_t)(c - w->m->counters) : RUN_TRACKS;
  if (ci >= RUN_TRACKS || !s->timestamp_ns) {
    w->st->skipped_order++;
    return 0;
  }
  if (!(ps->run_written[ci / 8] >> (ci % 8) & 1)) {
    hu_buf *t = &w->scratch[0];
    t->n = 0;
    hu_buf_printf(t, "whole run %s", c->name);
    const char *nm = hu_buf_cstr(t);
    if (!nm) return ex_set_err(w, "out of memory");
    if (c->unit[0]) pb_str(ps, &ps->sub, CD_UNIT_NAME, c->unit);
    if (descriptor(w, ps, UUID_RUN(ci), proc_uuid(p), nm, TD_COUNTER)) return -1;
    ps->run_written[ci / 8] |= (unsigned char)(1u << (ci % 8));
  }
  begin_event(ps, s->timestamp_ns, TYPE_COUNTER, UUID_RUN(ci));
  pb_double(&ps->ev, TE_DOUBLE_COUNTER_VALUE, s->value);
  if (end_event(w, ps)) return -1;
  w->st->counter_samples++;
  return 0;
}

const ex_backend ex_perfetto_backend = {
    .open = pf_open,
    .tracks = pf_tracks,
    .region = pf_region,
    .dispatch = pf_dispatch,
    .finish = pf_finish,
    .discard = pf_discard,
    .copy = pf_copy,
    .samples = 1,
    .run_sample = pf_run_sample,
};
