/* hubprof export to OTF2 through the OTF2 library: a location per thread and per queue lane, dispatches and
 * regions as Enter/Leave of OTF2 regions, counters as metrics (whole-run samples, of no dispatch, on a
 * metric location "whole run" of their process); definitions written at the end, once event counts are
 * known. */
/* SPDX-License-Identifier: MIT */
#ifdef HUBPROF_HAVE_OTF2
#include "ex_internal.h"

#include "../common/hu_map.h"

#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>

typedef struct ot_open {
  int64_t end;
  uint32_t region;
} ot_open;

typedef struct ot_loc {
  OTF2_EvtWriter *ew;
  uint64_t events;
  uint64_t last;  /* timestamp of the last event: OTF2 wants them in order per location */
  ot_open *stack; /* threads: regions entered and not yet left */
  size_t nstack, capstack;
} ot_loc;

typedef struct ot_state {
  OTF2_Archive *ar;
  ot_loc *locs;
  size_t nlocs;
  hu_strmap regions; /* names of store regions, OTF2 regions after the kernels */
  hu_strmap strings; /* every string of the definitions */
  uint64_t tmin, tmax;
  int any_time;
  int any_run; /* whole-run samples were written: their metric classes are defined */
} ot_state;

#define QUEUE_LOC(m, q, lane) ((m)->nthreads + (q)->index * EX_MAX_LANES + (size_t)(lane))
/* the "whole run" metric location of process index i, after every queue lane */
#define RUN_LOC(m, i) ((m)->nthreads + (m)->nqueues * EX_MAX_LANES + (size_t)(i))

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller,
                                bool final) {
  (void)user, (void)type, (void)loc, (void)caller, (void) final;
  return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc) {
  (void)user, (void)type, (void)loc;
  return 0;
}
static OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};

/* The chunks of one OTF2 buffer (a location's events, the definitions). Without memory callbacks the OTF2
 * library allocates a new chunk whenever one fills and keeps every chunk until the writer closes, so memory
 * grows with the events (about 10 bytes each). With them, a buffer holds at most OT_CHUNKS chunks: when they
 * are full, the allocation fails, the library flushes the buffer to its file (pre_flush says OTF2_FLUSH)
 * and releases the chunks (free_all), and the buffer starts again. */
#define OT_CHUNKS 2
typedef struct ot_pool {
  void *chunk[OT_CHUNKS];
  size_t n;
} ot_pool;

static void *pool_alloc(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer,
                        uint64_t size) {
  (void)user, (void)type, (void)loc;
  ot_pool *p = *per_buffer;
  if (!p && !(p = *per_buffer = calloc(1, sizeof *p))) return NULL;
  if (p->n == OT_CHUNKS) return NULL; /* full: the library flushes, then frees all and asks again */
  void *c = malloc(size);
  if (c) p->chunk[p->n++] = c;
  return c;
}

static void pool_free_all(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer,
                          bool final) {
  (void)user, (void)type, (void)loc;
  ot_pool *p = *per_buffer;
  if (!p) return;
  for (size_t i = 0; i < p->n; i++)
    free(p->chunk[i]);
  p->n = 0;
  if (final) free(p), *per_buffer = NULL;
}
static OTF2_MemoryCallbacks memory_callbacks = {.otf2_allocate = pool_alloc, .otf2_free_all = pool_free_all};

static int ot_open_archive(ex_writer *w) {
  ot_state *os = calloc(1, sizeof *os);
  if (!os) return ex_set_err(w, "out of memory");
  w->priv = os;
  os->nlocs = RUN_LOC(w->m, w->m->nprocs);
  if (os->nlocs && !(os->locs = calloc(os->nlocs, sizeof *os->locs))) return ex_set_err(w, "out of memory");
  os->ar = OTF2_Archive_Open(w->tmp_path, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                             OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!os->ar) return ex_set_err(w, "%s: OTF2 cannot create the archive", w->out_path);
  if (OTF2_Archive_SetFlushCallbacks(os->ar, &flush_callbacks, NULL) != OTF2_SUCCESS ||
      OTF2_Archive_SetMemoryCallbacks(os->ar, &memory_callbacks, NULL) != OTF2_SUCCESS ||
      OTF2_Archive_SetSerialCollectiveCallbacks(os->ar) != OTF2_SUCCESS ||
      OTF2_Archive_SetCreator(os->ar, "hubprof") != OTF2_SUCCESS ||
      OTF2_Archive_OpenEvtFiles(os->ar) != OTF2_SUCCESS)
    return ex_set_err(w, "%s: OTF2 cannot open the event files", w->out_path);
  return 0;
}

static int ot_tracks(ex_writer *w) { return 0; }

/* An event at ts on location l: 0 when it may be written (in time order), 1 when it must be skipped. */
static int ot_event(ex_writer *w, ot_state *os, size_t l, uint64_t ts, OTF2_RegionRef region, int enter) {
  ot_loc *lc = &os->locs[l];
  if (!lc->ew && !(lc->ew = OTF2_Archive_GetEvtWriter(os->ar, (OTF2_LocationRef)l)))
    return ex_set_err(w, "%s: OTF2 cannot open an event writer", w->out_path);
  OTF2_ErrorCode e =
      enter ? OTF2_EvtWriter_Enter(lc->ew, NULL, ts, region) : OTF2_EvtWriter_Leave(lc->ew, NULL, ts, region);
  if (e != OTF2_SUCCESS)
    return ex_set_err(w, "%s: OTF2 write failed: %s", w->out_path, OTF2_Error_GetDescription(e));
  lc->events++;
  lc->last = ts;
  if (!os->any_time || ts < os->tmin) os->tmin = ts;
  if (!os->any_time || ts > os->tmax) os->tmax = ts;
  os->any_time = 1;
  return 0;
}

/* A counter's value at ts on location l (in time order, as ot_event): metric class 2 * counter for a
 * per-dispatch value, 2 * counter + 1 for a sample. */
static int ot_metric(ex_writer *w, ot_state *os, size_t l, uint64_t ts, OTF2_MetricRef metric, double v) {
  ot_loc *lc = &os->locs[l];
  OTF2_Type type = OTF2_TYPE_DOUBLE;
  OTF2_MetricValue val = {.floating_point = v};
  OTF2_ErrorCode e = OTF2_EvtWriter_Metric(lc->ew, NULL, ts, metric, 1, &type, &val);
  if (e != OTF2_SUCCESS)
    return ex_set_err(w, "%s: OTF2 write failed: %s", w->out_path, OTF2_Error_GetDescription(e));
  lc->events++;
  lc->last = ts;
  return 0;
}

/* A counter sample of no dispatch (`sample --whole-run`: its process's total, polled on a timer) as a metric
 * of class 2 * ncounters + counter on its process's "whole run" location; one out of time order there, or of
 * an unknown counter, is skipped (counted). */
static int ot_run_sample(ex_writer *w, const hp_counter_sample *s, const ex_proc *p) {
  ot_state *os = w->priv;
  const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, s->counter_id);
  size_t l = p ? RUN_LOC(w->m, p->index) : 0;
  if (!p || !c || s->timestamp_ns < 0 ||
      (os->locs[l].events && (uint64_t)s->timestamp_ns < os->locs[l].last)) {
    w->st->skipped_order++;
    return 0;
  }
  ot_loc *lc = &os->locs[l];
  if (!lc->ew && !(lc->ew = OTF2_Archive_GetEvtWriter(os->ar, (OTF2_LocationRef)l)))
    return ex_set_err(w, "%s: OTF2 cannot open an event writer", w->out_path);
  uint64_t ts = (uint64_t)s->timestamp_ns;
  if (ot_metric(w, os, l, ts, (OTF2_MetricRef)(2 * w->m->ncounters + (size_t)(c - w->m->counters)), s->value))
    return -1;
  if (!os->any_time || ts < os->tmin) os->tmin = ts;
  if (!os->any_time || ts > os->tmax) os->tmax = ts;
  os->any_time = os->any_run = 1;
  w->st->counter_samples++;
  return 0;
}

/* Leave the regions of a thread that ended by `until` (all of them when until < 0). */
static int ot_unwind(ex_writer *w, ot_state *os, size_t l, int64_t until) {
  ot_loc *lc = &os->locs[l];
  while (lc->nstack && (until < 0 || lc->stack[lc->nstack - 1].end <= until)) {
    ot_open o = lc->stack[--lc->nstack];
    if (ot_event(w, os, l, (uint64_t)o.end, o.region, 0)) return -1;
  }
  return 0;
}

/* Regions must come in start order per thread and nest: a region that starts before the thread's last event
 * or ends after the region it starts in is skipped (counted). */
static int ot_region(ex_writer *w, const hp_region *r, const ex_proc *p, const ex_thread *t) {
  ot_state *os = w->priv;
  if (!t) {
    w->st->skipped_order++;
    return 0;
  }
  size_t l = t->index;
  if (ot_unwind(w, os, l, r->start_ns)) return -1;
  ot_loc *lc = &os->locs[l];
  if ((lc->events && (uint64_t)r->start_ns < lc->last) ||
      (lc->nstack && r->end_ns > lc->stack[lc->nstack - 1].end)) {
    w->st->skipped_order++;
    return 0;
  }
  int added;
  long ix = hu_strmap_intern(&os->regions, r->name, &added);
  if (ix < 0 || hu_grow((void **)&lc->stack, &lc->capstack, lc->nstack + 1, sizeof *lc->stack))
    return ex_set_err(w, "out of memory");
  uint32_t region = (uint32_t)(w->m->nkernels + 1 + (size_t)ix);
  if (ot_event(w, os, l, (uint64_t)r->start_ns, region, 1)) return -1;
  lc->stack[lc->nstack++] = (ot_open){.end = r->end_ns, .region = region};
  if (r->end_ns == r->start_ns)
    w->st->markers++;
  else
    w->st->regions++;
  return 0;
}

/* The location of a queue lane for a command starting at `start`; -1 (counted as skipped) for a command
 * without a queue or one before the location's last event (OTF2 takes each location's events in order). */
static long queue_loc(ex_writer *w, ot_state *os, const ex_queue *q, int lane, int64_t start) {
  size_t l = q ? QUEUE_LOC(w->m, q, lane) : 0;
  if (!q || (os->locs[l].events && (uint64_t)start < os->locs[l].last)) {
    w->st->skipped_order++;
    return -1;
  }
  return (long)l;
}

static int ot_dispatch(ex_writer *w, const hp_dispatch *d, const char *kernel, const ex_proc *p,
                       const ex_thread *t, ex_queue *q, int lane, const hp_counter_value *cv, size_t ncv) {
  ot_state *os = w->priv;
  long l = queue_loc(w, os, q, lane, d->start_ns);
  if (l < 0) return 0;
  const ex_named *k = ex_find_named(w->m->kernels, w->m->nkernels, d->kernel_id);
  OTF2_RegionRef region = k ? (OTF2_RegionRef)(k - w->m->kernels) : (OTF2_RegionRef)w->m->nkernels;
  ot_loc *lc = &os->locs[l];
  if (ot_event(w, os, (size_t)l, (uint64_t)d->start_ns, region, 1)) return -1;
  /* its counter samples, in time order within the dispatch; then its per-dispatch values at its end */
  for (size_t i = 0; i < w->nsamples; i++) {
    const hp_counter_sample *cs = &w->samples[i];
    const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, cs->counter_id);
    if (!c || cs->timestamp_ns < d->start_ns || cs->timestamp_ns > d->end_ns ||
        (uint64_t)cs->timestamp_ns < lc->last) {
      w->st->skipped_order++;
      continue;
    }
    if (ot_metric(w, os, (size_t)l, (uint64_t)cs->timestamp_ns,
                  (OTF2_MetricRef)(2 * (c - w->m->counters) + 1), cs->value))
      return -1;
    w->st->counter_samples++;
  }
  for (size_t i = 0; i < ncv; i++) {
    const ex_named *c = ex_find_named(w->m->counters, w->m->ncounters, cv[i].counter_id);
    if (!c) continue;
    if (ot_metric(w, os, (size_t)l, (uint64_t)d->end_ns, (OTF2_MetricRef)(2 * (c - w->m->counters)),
                  cv[i].value))
      return -1;
    w->st->counter_values++;
  }
  if (ot_event(w, os, (size_t)l, (uint64_t)d->end_ns, region, 0)) return -1;
  w->st->dispatches++;
  return 0;
}

/* A memory copy: Enter/Leave of an OTF2 region named for its call, on its queue's location. */
static int ot_copy(ex_writer *w, const hp_memory_copy *c, const ex_proc *p, const ex_thread *t, ex_queue *q,
                   int lane) {
  ot_state *os = w->priv;
  long l = queue_loc(w, os, q, lane, c->start_ns);
  if (l < 0) return 0;
  int added;
  long ix = hu_strmap_intern(&os->regions, c->name, &added);
  if (ix < 0) return ex_set_err(w, "out of memory");
  uint32_t region = (uint32_t)(w->m->nkernels + 1 + (size_t)ix);
  if (ot_event(w, os, (size_t)l, (uint64_t)c->start_ns, region, 1) ||
      ot_event(w, os, (size_t)l, (uint64_t)c->end_ns, region, 0))
    return -1;
  w->st->copies++;
  return 0;
}

static OTF2_StringRef str_ref(ot_state *os, const char *s, int *oom) {
  int added;
  long ix = hu_strmap_intern(&os->strings, s ? s : "", &added);
  if (ix < 0) *oom = 1;
  return ix < 0 ? 0 : (OTF2_StringRef)ix;
}

static void ot_free(ot_state *os) {
  if (!os) return;
  for (size_t i = 0; i < os->nlocs; i++)
    free(os->locs[i].stack);
  free(os->locs);
  hu_strmap_free(&os->regions);
  hu_strmap_free(&os->strings);
  free(os);
}

static int ot_finish(ex_writer *w) {
  ot_state *os = w->priv;
  ex_model *m = w->m;
  for (size_t l = 0; l < m->nthreads && l < os->nlocs; l++)
    if (ot_unwind(w, os, l, -1)) return -1;
  for (size_t l = 0; l < os->nlocs; l++)
    if (os->locs[l].ew && OTF2_Archive_CloseEvtWriter(os->ar, os->locs[l].ew) != OTF2_SUCCESS)
      return ex_set_err(w, "%s: OTF2 write failed", w->out_path);
  if (OTF2_Archive_CloseEvtFiles(os->ar) != OTF2_SUCCESS || OTF2_Archive_OpenDefFiles(os->ar) != OTF2_SUCCESS)
    return ex_set_err(w, "%s: OTF2 write failed", w->out_path);
  for (size_t l = 0; l < os->nlocs; l++)
    if (os->locs[l].ew) {
      OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(os->ar, (OTF2_LocationRef)l);
      if (!dw || OTF2_Archive_CloseDefWriter(os->ar, dw) != OTF2_SUCCESS)
        return ex_set_err(w, "%s: OTF2 write failed", w->out_path);
    }
  if (OTF2_Archive_CloseDefFiles(os->ar) != OTF2_SUCCESS)
    return ex_set_err(w, "%s: OTF2 write failed", w->out_path);

  OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(os->ar);
  if (!g) return ex_set_err(w, "%s: OTF2 cannot write the definitions", w->out_path);
  int oom = 0;
  OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteClockProperties(
      g, 1000000000ULL, os->tmin, os->tmax - os->tmin + 1, OTF2_UNDEFINED_TIMESTAMP);
  /* the strings are interned first, written before anything that names them */
  OTF2_StringRef s_node = str_ref(os, "node", &oom), s_machine = str_ref(os, "machine", &oom);
  OTF2_StringRef s_noproc = str_ref(os, "(no process)", &oom),
                 s_unknown = str_ref(os, "(unknown kernel)", &oom);
  for (size_t i = 0; i < m->nprocs; i++)
    str_ref(os, m->procs[i].name, &oom);
  for (size_t i = 0; i < m->nthreads; i++)
    str_ref(os, m->threads[i].name, &oom);
  for (size_t i = 0; i < m->nkernels; i++)
    str_ref(os, m->kernels[i].name, &oom);
  for (size_t i = 0; i < os->regions.n; i++)
    str_ref(os, hu_strmap_str(&os->regions, i), &oom);
  hu_buf *nb = &w->scratch[1];
  for (size_t i = 0; i < m->nqueues; i++)
    for (int lane = 0; lane < EX_MAX_LANES; lane++)
      if (os->locs[QUEUE_LOC(m, &m->queues[i], lane)].events) {
        nb->n = 0;
        hu_buf_str(nb, m->queues[i].name);
        if (lane) hu_buf_printf(nb, " lane %d", lane + 1);
        str_ref(os, hu_buf_cstr(nb) ? hu_buf_cstr(nb) : "", &oom);
      }
  OTF2_StringRef s_per = str_ref(os, "per dispatch: the counter's value over the dispatch, at its end", &oom),
                 s_sample = str_ref(os, "sample: the counter's value since the dispatch began", &oom),
                 s_whole = str_ref(
                     os, "whole run: the process's total since sampling began, polled on a timer", &oom),
                 s_runloc = str_ref(os, "whole run", &oom);
  static const char *const kind[] = {"%s", "%s (sample)", "%s (whole run)"};
  for (size_t i = 0; i < m->ncounters; i++) {
    str_ref(os, m->counters[i].unit, &oom);
    for (int k = 0; k < 3; k++) {
      nb->n = 0;
      hu_buf_printf(nb, kind[k], m->counters[i].name);
      str_ref(os, hu_buf_cstr(nb) ? hu_buf_cstr(nb) : "", &oom);
    }
  }
  if (oom || nb->oom) return ex_set_err(w, "out of memory");
  hu_buf *cb = &w->scratch[2];
  for (size_t i = 0; e == OTF2_SUCCESS && i < os->strings.n; i++)
    e = OTF2_GlobalDefWriter_WriteString(g, (OTF2_StringRef)i,
                                         ex_utf8_clean(cb, hu_strmap_str(&os->strings, i)));
  if (e == OTF2_SUCCESS)
    e = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (size_t i = 0; e == OTF2_SUCCESS && i <= m->nprocs; i++)
    e = OTF2_GlobalDefWriter_WriteLocationGroup(
        g, (OTF2_LocationGroupRef)i, i < m->nprocs ? str_ref(os, m->procs[i].name, &oom) : s_noproc,
        OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  for (size_t i = 0; e == OTF2_SUCCESS && i < m->nthreads; i++)
    if (os->locs[i].events) {
      const ex_proc *p = ex_find_proc(m, m->threads[i].process_id);
      e = OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)i, str_ref(os, m->threads[i].name, &oom),
                                             OTF2_LOCATION_TYPE_CPU_THREAD, os->locs[i].events,
                                             (OTF2_LocationGroupRef)(p ? p->index : m->nprocs));
    }
  for (size_t i = 0; e == OTF2_SUCCESS && i < m->nqueues; i++)
    for (int lane = 0; e == OTF2_SUCCESS && lane < EX_MAX_LANES; lane++) {
      size_t l = QUEUE_LOC(m, &m->queues[i], lane);
      if (!os->locs[l].events) continue;
      nb->n = 0;
      hu_buf_str(nb, m->queues[i].name);
      if (lane) hu_buf_printf(nb, " lane %d", lane + 1);
      const ex_proc *p = ex_find_proc(m, m->queues[i].process_id);
      e = OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)l, str_ref(os, hu_buf_cstr(nb), &oom),
                                             OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, os->locs[l].events,
                                             (OTF2_LocationGroupRef)(p ? p->index : m->nprocs));
    }
  for (size_t i = 0; e == OTF2_SUCCESS && i < m->nprocs; i++) /* whole-run samples: a metric location */
    if (os->locs[RUN_LOC(m, i)].events)
      e = OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)RUN_LOC(m, i), s_runloc,
                                             OTF2_LOCATION_TYPE_METRIC, os->locs[RUN_LOC(m, i)].events,
                                             (OTF2_LocationGroupRef)i);
  for (size_t i = 0; e == OTF2_SUCCESS && i <= m->nkernels; i++) {
    OTF2_StringRef n = i < m->nkernels ? str_ref(os, m->kernels[i].name, &oom) : s_unknown;
    e = OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)i, n, n, n, OTF2_REGION_ROLE_FUNCTION,
                                         OTF2_PARADIGM_OPENCL, OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING,
                                         0, 0);
  }
  for (size_t i = 0; e == OTF2_SUCCESS && i < os->regions.n; i++) {
    OTF2_StringRef n = str_ref(os, hu_strmap_str(&os->regions, i), &oom);
    e = OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)(m->nkernels + 1 + i), n, n, n,
                                         OTF2_REGION_ROLE_CODE, OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                         OTF2_UNDEFINED_STRING, 0, 0);
  }
  /* counters: a metric member and class per counter for per-dispatch values (2 i), one for samples (2 i + 1),
   * and with whole-run samples one for them (2 ncounters + i) */
  size_t nc = m->ncounters;
  for (size_t r = 0; e == OTF2_SUCCESS && r < (os->any_run ? 3 : 2) * nc; r++) {
    int smp = r < 2 * nc ? (int)(r % 2) : 2;
    size_t i = r < 2 * nc ? r / 2 : r - 2 * nc;
    OTF2_MetricMemberRef ref = (OTF2_MetricMemberRef)r;
    nb->n = 0;
    hu_buf_printf(nb, kind[smp], m->counters[i].name);
    e = OTF2_GlobalDefWriter_WriteMetricMember(
        g, ref, str_ref(os, hu_buf_cstr(nb), &oom),
        smp == 2 ? s_whole
        : smp    ? s_sample
                 : s_per,
        OTF2_METRIC_TYPE_OTHER, smp ? OTF2_METRIC_ABSOLUTE_POINT : OTF2_METRIC_ABSOLUTE_LAST,
        OTF2_TYPE_DOUBLE, OTF2_BASE_DECIMAL, 0, str_ref(os, m->counters[i].unit, &oom));
    if (e == OTF2_SUCCESS)
      e = OTF2_GlobalDefWriter_WriteMetricClass(g, (OTF2_MetricRef)ref, 1, &ref, OTF2_METRIC_ASYNCHRONOUS,
                                                OTF2_RECORDER_KIND_ABSTRACT);
  }
  if (e != OTF2_SUCCESS)
    return ex_set_err(w, "%s: OTF2 write failed: %s", w->out_path, OTF2_Error_GetDescription(e));
  if (OTF2_Archive_CloseGlobalDefWriter(os->ar, g) != OTF2_SUCCESS ||
      OTF2_Archive_Close(os->ar) != OTF2_SUCCESS) {
    os->ar = NULL;
    return ex_set_err(w, "%s: OTF2 write failed", w->out_path);
  }
  os->ar = NULL;
  ot_free(os);
  w->priv = NULL;
  return 0;
}

static void ot_discard(ex_writer *w) {
  ot_state *os = w->priv;
  if (os && os->ar) OTF2_Archive_Close(os->ar);
  ot_free(os);
  w->priv = NULL;
}

const ex_backend ex_otf2_backend = {
    .open = ot_open_archive,
    .tracks = ot_tracks,
    .region = ot_region,
    .dispatch = ot_dispatch,
    .copy = ot_copy,
    .run_sample = ot_run_sample,
    .finish = ot_finish,
    .discard = ot_discard,
    .is_dir = 1,
    .ordered = 1,
    .samples = 1,
};
#else
typedef int ex_otf2_not_built; /* ISO C wants a translation unit to declare something */
#endif
