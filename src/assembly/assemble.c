/* The profile-assembly pipeline (include/hubprof/assemble.h): inputs under one damage policy, then ONE
 * streaming merge (merge.c) whose hooks apply the per-input transforms: multiplex imputation (assemble_mux.c)
 * and application replay (later runs' processes paired by command line, their dispatches matched to the first
 * run's, values tagged with their pass). Nothing is written but the output. Sections: inputs · application
 * replay · dispatches running when their process died · the hooks · write. */
/* SPDX-License-Identifier: MIT */
#include "assemble_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_json.h"
#include "../common/hu_map.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- inputs ---------------------------------------------------------------------------------------- */
hp_status hp_assembly_new(const hp_assemble_opts *o, hp_assembly **out) {
  if (!out) return HP_ERR_INVALID;
  *out = NULL;
  if (o && o->size < offsetof(hp_assemble_opts, impute)) return HP_ERR_INVALID;
  hp_assembly *a = calloc(1, sizeof *a);
  if (!a) return HP_ERR_NOMEM;
  if (o) memcpy(&a->o, o, o->size < sizeof a->o ? o->size : sizeof a->o);
  a->o.size = sizeof a->o;
  if ((unsigned)a->o.impute > HP_IMPUTE_AUTO || (unsigned)a->o.match > HP_MATCH_ALL) {
    free(a);
    return HP_ERR_INVALID;
  }
  if (!a->o.min_per_pass) a->o.min_per_pass = 1;
  *out = a;
  return HP_OK;
}

static hp_status take(hp_assembly *a, hp_store *s, int owned, uint32_t run) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    ainput *v = realloc(a->in, cap * sizeof *v);
    if (!v) {
      if (owned) hp_store_close(s);
      return asm_fail(a, HP_ERR_NOMEM, "%s: out of memory", hp_store_path(s));
    }
    a->in = v;
    a->cap = cap;
  }
  a->in[a->n++] = (ainput){s, owned, run, NULL, NULL};
  return HP_OK;
}

/* An input of the assembly, open: one closed while not read is opened again (the merge of many inputs holds
 * one open at a time, docs/cluster.md). */
static hp_status ain_open(hp_assembly *a, size_t i) {
  ainput *x = &a->in[i];
  if (x->s) return HP_OK;
  hp_status st;
  if (x->parked) { /* a log: its scan is not made again when the file is the one scanned */
    x->s = x->parked;
    x->parked = NULL;
    st = hp_store_resume(x->s);
  } else {
    st = hp_store_open(x->path, NULL, HP_READ, &x->s);
  }
  if (st == HP_OK) return HP_OK;
  if (x->s && hp_store_error(x->s)[0])
    asm_fail(a, st, "%s", hp_store_error(x->s));
  else
    asm_fail(a, st, "%s: %s", x->path, hp_status_str(st));
  hp_store_abort(x->s);
  x->s = NULL;
  return st;
}

/* Close an input the assembly opened until it is read again (its path kept); others stay open. */
static void ain_park(hp_assembly *a, size_t i) {
  ainput *x = &a->in[i];
  if (!x->owned || !x->path || !x->s) return;
  if (hp_store_park(x->s))
    x->parked = x->s;
  else
    hp_store_close(x->s);
  x->s = NULL;
}

/* Inputs of a plain merge below this index stay open from the write's first look at them (small tables,
 * metadata) until the merge has read them: they are read first, and opening a log again reads all of it
 * again. Later inputs are closed in between, so at most this many (plus the one being read) are open. */
#define AIN_KEEP_OPEN 8

/* Done with input i before the merge reads it: parked unless it is one of the first AIN_KEEP_OPEN. */
static void ain_pause(hp_assembly *a, size_t i) {
  if (i >= AIN_KEEP_OPEN) ain_park(a, i);
}

/* The damage policy for a store that opened: damaged = an error (strict) or a warning. */
static hp_status policy(hp_assembly *a, hp_store *s) {
  if (hp_store_note(s)[0]) asm_warnf(a, "%s", hp_store_note(s));
  hp_status d = hp_store_damage(s, NULL);
  if (d == HP_OK) return HP_OK;
  if (a->o.strict) return asm_fail(a, d, "%s", hp_store_error(s));
  asm_warnf(a, "%s (taking what is complete)", hp_store_error(s));
  return HP_OK;
}

hp_status hp_assembly_add(hp_assembly *a, const char *path, uint32_t run) {
  if (!a || !path || a->written) return HP_ERR_INVALID;
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  if (st != HP_OK) {
    const char *why = s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st);
    if (!a->o.strict && (st == HP_ERR_TRUNCATED || st == HP_ERR_CORRUPT)) {
      /* nothing complete in it (a process killed before its first block): skipped, said */
      asm_warnf(a, "%s (skipped: nothing complete in it)", why);
      a->skipped++;
      hp_store_abort(s);
      return HP_OK;
    }
    if (s && hp_store_error(s)[0])
      asm_fail(a, st, "%s", why);
    else
      asm_fail(a, st, "%s: %s", path, why);
    hp_store_abort(s);
    return st;
  }
  if ((st = policy(a, s)) != HP_OK) {
    hp_store_close(s);
    return st;
  }
  if ((st = take(a, s, 1, run)) != HP_OK) return st;
  if ((a->in[a->n - 1].path = strdup(path))) ain_park(a, a->n - 1); /* else it stays open */
  return HP_OK;
}

hp_status hp_assembly_add_store(hp_assembly *a, hp_store *s, uint32_t run) {
  if (!a || !s || hp_store_mode(s) != HP_READ || a->written) return HP_ERR_INVALID;
  hp_status st = policy(a, s);
  return st != HP_OK ? st : take(a, s, 0, run);
}

const char *hp_assembly_error(const hp_assembly *a) { return a ? a->error : "no assembly"; }

/* ---- application replay ------------------------------------------------------------------------------ */
typedef struct dkey {
  const char *name;        /* kernel name (owned by the plog) */
  const char *prog;        /* its program's identity, "" unknown (owned by the plog) */
  uint32_t grid[3], wg[3]; /* global and work-group sizes */
  uint32_t policy;         /* hp_match: which fields count (every key of an assembly has the same) */
  int64_t device;          /* its device's index (agent.device_index; -1 unknown): matched per device */
  uint64_t seq;            /* position in the process's sequence of dispatches (by dispatch id) */
  uint64_t occ;            /* occurrence among the dispatches with the same policy fields */
  uint64_t row;            /* the dispatch's row id in its input */
  uint64_t dispatch_id;    /* the collector's id */
  uint64_t target;         /* run 0: passes that measured it; later runs: the first run's row, 0 = none */
} dkey;

typedef struct cname { /* a counter_info row kept for later */
  char *name, *description, *block, *unit, *expression;
  uint64_t agent_id, id;
} cname;

struct plog { /* one process of one run */
  hp_store *s;
  size_t input; /* index among the merged inputs (run 0) */
  int64_t pid, start_ns;
  char *command;
  char **knames;
  size_t nknames;
  dkey *keys; /* sorted by row once matched */
  size_t nkeys;
  plog *partner;  /* later runs: the first run's process; run 0: unused */
  uint64_t *cmap; /* later runs: counter_info id of this input -> id in its partner's ids, [ncmap] */
  size_t ncmap;
  cname *extra; /* run 0: counters only later runs measured, with the ids they get here */
  size_t nextra;
};

static void cname_clear(cname *c) {
  free(c->name);
  free(c->description);
  free(c->block);
  free(c->unit);
  free(c->expression);
}

static void plog_clear(plog *p) {
  for (size_t i = 0; i < p->nextra; i++)
    cname_clear(&p->extra[i]);
  free(p->extra);
  free(p->command);
  for (size_t i = 0; i < 2 * p->nknames; i++) /* names and identities */
    free(p->knames[i]);
  free(p->knames);
  free(p->keys);
  free(p->cmap);
}

static int cmp_dispatch_id(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  return x->dispatch_id < y->dispatch_id ? -1 : x->dispatch_id > y->dispatch_id;
}
static int cmp_fields(const dkey *x, const dkey *y) {
  if (x->device != y->device) return x->device < y->device ? -1 : 1; /* never across devices */
  int c = strcmp(x->name, y->name);
  if (!c) c = strcmp(x->prog, y->prog); /* a kernel is its name and its program */
  if (c || x->policy == HP_MATCH_NAME) return c;
  c = memcmp(x->grid, y->grid, sizeof x->grid);
  return c ? c : memcmp(x->wg, y->wg, sizeof x->wg);
}
static int cmp_fields_seq(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  int c = cmp_fields(x, y);
  return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}
static int cmp_dkey(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  int c = cmp_fields(x, y);
  return c ? c : x->occ < y->occ ? -1 : x->occ > y->occ;
}
static int cmp_drow(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Process row, kernel names and dispatch keys of p->s, keys numbered among their equals and sorted by
 * (fields, occurrence). */
static int plog_load(plog *p, hp_match policy) {
  hp_cursor *c = NULL;
  hp_process pr = {.size = sizeof pr};
  if (hp_cursor_open(p->s, HP_TABLE_PROCESS, &c) == HP_OK) {
    while (hp_cursor_next(c, &pr) == HP_OK) {
      free(p->command);
      p->command = strdup(pr.command);
      p->pid = pr.pid;
      p->start_ns = pr.start_ns;
    }
    hp_cursor_close(c);
  }
  if (!p->command && !(p->command = strdup(""))) return -1;
  if (asm_knames_load(p->s, &p->knames, &p->nknames)) return -1;
  hu_idmap dev = {0}; /* agent row id -> 1 + its device index */
  hp_agent ag = {.size = sizeof ag};
  if (hp_cursor_open(p->s, HP_TABLE_AGENT, &c) == HP_OK) {
    int bad = 0;
    while (!bad && hp_cursor_next(c, &ag) == HP_OK)
      bad = ag.device_index >= 0 && hu_idmap_put(&dev, ag.id, (uint64_t)ag.device_index + 1) != 0;
    hp_cursor_close(c);
    if (bad) {
      hu_idmap_free(&dev);
      return -1;
    }
  }
  hp_dispatch d = {.size = sizeof d};
  size_t cap = 0;
  if (hp_cursor_open(p->s, HP_TABLE_DISPATCH, &c) != HP_OK) {
    hu_idmap_free(&dev);
    return -1;
  }
  while (hp_cursor_next(c, &d) == HP_OK) {
    if (p->nkeys == cap) {
      cap = cap ? 2 * cap : 1024;
      dkey *v = realloc(p->keys, cap * sizeof *v);
      if (!v) {
        hp_cursor_close(c);
        hu_idmap_free(&dev);
        return -1;
      }
      p->keys = v;
    }
    dkey *x = &p->keys[p->nkeys++];
    memset(x, 0, sizeof *x);
    x->name = asm_kname(p->knames, p->nknames, d.kernel_id);
    x->prog = asm_kprog(p->knames, p->nknames, d.kernel_id);
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
    x->row = d.id;
    x->dispatch_id = d.dispatch_id;
    x->policy = policy;
    uint64_t di = 0;
    x->device = hu_idmap_get(&dev, d.agent_id, &di) ? (int64_t)di - 1 : -1;
  }
  hp_cursor_close(c);
  hu_idmap_free(&dev);
  qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_dispatch_id);
  for (size_t i = 0; i < p->nkeys; i++)
    p->keys[i].seq = i;
  qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_fields_seq);
  for (size_t i = 0; i < p->nkeys; i++)
    p->keys[i].occ = p->keys[i].policy == HP_MATCH_ALL                    ? p->keys[i].seq
                     : i && cmp_fields(&p->keys[i - 1], &p->keys[i]) == 0 ? p->keys[i - 1].occ + 1
                                                                          : 0;
  qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_dkey);
  return 0;
}

static int cmp_start(const void *a, const void *b) {
  const plog *x = a, *y = b;
  return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Match the dispatches of later process p to its partner f (both keyed); report what did not match. */
static void match_dispatches(hp_assembly *a, size_t k, plog *f, plog *p, hp_assemble_stats *stats) {
  size_t got = 0;
  for (size_t i = 0; i < p->nkeys; i++) {
    dkey *x = &p->keys[i];
    dkey *y = bsearch(x, f->keys, f->nkeys, sizeof *x, cmp_dkey);
    x->target = y ? y->row : 0;
    if (y) y->target++, got++;
  }
  size_t extra = p->nkeys - got, missing = f->nkeys - got;
  if (!extra && !missing) return;
  if (stats) stats->unmatched_dispatches += extra + missing;
  char first_few[512] = "";
  size_t w = 0, shown = 0;
  dkey *seq = malloc((p->nkeys ? p->nkeys : 1) * sizeof *seq); /* the first few unmatched, in order */
  if (seq) {
    memcpy(seq, p->keys, p->nkeys * sizeof *seq);
    qsort(seq, p->nkeys, sizeof *seq, cmp_dispatch_id);
    for (size_t d = 0; d < p->nkeys && shown < 3 && w < sizeof first_few - 100; d++)
      if (!seq[d].target) {
        w += (size_t)snprintf(first_few + w, sizeof first_few - w,
                              "%s#%" PRIu64 " %s grid %u,%u,%u wg %u,%u,%u", shown ? "; " : ": ",
                              seq[d].seq + 1, seq[d].name, seq[d].grid[0], seq[d].grid[1], seq[d].grid[2],
                              seq[d].wg[0], seq[d].wg[1], seq[d].wg[2]);
        shown++;
      }
    free(seq);
  }
  static const char *const pol[] = {"grid", "name", "all"};
  asm_warnf(
      a,
      "pass %zu: %zu dispatch%s matched no dispatch of the first run and %zu of the first run's had no match "
      "(policy '%s'); their counters of this pass are left out%s",
      k + 1, extra, extra == 1 ? "" : "es", missing, pol[a->o.match], first_few);
}

/* Counter ids of later process p in its partner f's ids, by name: a name f lacks gets the next id after f's
 * own and the partner's extra rows so far (written after f's counter_info). 0, or -1 out of memory. */
static int map_counters(plog *f, plog *p) {
  hp_cursor *c = NULL;
  if (hp_cursor_open(p->s, HP_TABLE_COUNTER_INFO, &c) != HP_OK) return 0;
  hp_counter_info ci = {.size = sizeof ci};
  int rc = 0;
  while (rc == 0 && hp_cursor_next(c, &ci) == HP_OK) {
    if (ci.id >= 1000000) continue;
    uint64_t id = 0, maxid = 0;
    hp_cursor *fc = NULL;
    hp_counter_info fi = {.size = sizeof fi};
    if (hp_cursor_open(f->s, HP_TABLE_COUNTER_INFO, &fc) == HP_OK) {
      while (hp_cursor_next(fc, &fi) == HP_OK) {
        if (fi.id > maxid) maxid = fi.id;
        if (!id && !strcmp(fi.name, ci.name)) id = fi.id;
      }
      hp_cursor_close(fc);
    }
    for (size_t i = 0; i < f->nextra; i++) {
      if (f->extra[i].id > maxid) maxid = f->extra[i].id;
      if (!id && !strcmp(f->extra[i].name, ci.name)) id = f->extra[i].id;
    }
    if (!id) {
      cname *v = realloc(f->extra, (f->nextra + 1) * sizeof *v);
      if (!v) {
        rc = -1;
        break;
      }
      f->extra = v;
      cname *x = &f->extra[f->nextra++];
      *x = (cname){strdup(ci.name), strdup(ci.description), strdup(ci.block),
                   strdup(ci.unit), strdup(ci.expression),  ci.agent_id,
                   id = maxid + 1};
      if (!x->name || !x->description || !x->block || !x->unit || !x->expression) rc = -1;
    }
    if (ci.id >= p->ncmap) {
      size_t n = ci.id + 16;
      uint64_t *v = realloc(p->cmap, n * sizeof *v);
      if (!v) {
        rc = -1;
        break;
      }
      memset(v + p->ncmap, 0, (n - p->ncmap) * sizeof *v);
      p->cmap = v;
      p->ncmap = n;
    }
    p->cmap[ci.id] = id;
  }
  hp_cursor_close(c);
  return rc;
}

/* The program a process ran: the first word of its command line. */
static int same_program(const char *a, const char *b) {
  size_t la = strcspn(a, " "), lb = strcspn(b, " ");
  return la == lb && strncmp(a, b, la) == 0;
}

static hp_status replay_prepare(hp_assembly *a, hp_assemble_stats *stats) {
  uint32_t R = 0;
  for (size_t i = 0; i < a->n; i++)
    if (a->in[i].run + 1 > R) R = a->in[i].run + 1;
  a->replay_runs = R;
  if (stats) stats->runs = R;
  a->runs = calloc(R, sizeof *a->runs);
  a->nprocs = calloc(R, sizeof *a->nprocs);
  if (!a->runs || !a->nprocs) return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  for (uint32_t k = 0; k < R; k++) {
    size_t m = 0;
    for (size_t i = 0; i < a->n; i++)
      m += a->in[i].run == k;
    if (!(a->runs[k] = calloc(m ? m : 1, sizeof **a->runs)))
      return asm_fail(a, HP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < a->n; i++) {
      if (a->in[i].run != k) continue;
      plog *p = &a->runs[k][a->nprocs[k]++];
      p->s = a->in[i].s;
      if (plog_load(p, a->o.match))
        return asm_fail(a, HP_ERR_NOMEM, "%s: cannot read its dispatches (out of memory?)",
                        hp_store_path(p->s));
    }
    qsort(a->runs[k], a->nprocs[k], sizeof **a->runs, cmp_start);
  }
  /* the merge's inputs: the first run's processes, in order of start */
  a->nmerged = a->nprocs[0];
  if (!(a->merged = calloc(a->nmerged ? a->nmerged : 1, sizeof *a->merged)))
    return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < a->nmerged; i++) {
    a->merged[i] = a->runs[0][i].s;
    a->runs[0][i].input = i;
  }
  /* the whole plan: each run's pass; with per-device plans, every run's plan is the whole one (each device
   * measured its own pass of the run in it) */
  hu_buf plan = {0};
  a->replay_devplans = a->nprocs[0] && hp_store_metadata(a->runs[0][0].s, "device_plans");
  for (uint32_t k = 0; k < (a->replay_devplans ? 1 : R); k++) {
    const char *pp = a->nprocs[k] ? hp_store_metadata(a->runs[k][0].s, "pass_plan") : NULL;
    hu_buf_printf(&plan, "%s%s", k ? ";" : "", pp ? pp : "");
  }
  if (plan.oom || !hu_buf_cstr(&plan)) {
    hu_buf_free(&plan);
    return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  }
  a->replay_plan = (char *)plan.p;
  /* processes paired by command line, then order of start among equals */
  for (uint32_t k = 1; k < R; k++) {
    plog *first = a->runs[0];
    size_t n0 = a->nprocs[0];
    unsigned char *taken = calloc(n0 ? n0 : 1, 1);
    if (!taken) return asm_fail(a, HP_ERR_NOMEM, "out of memory");
    /* the same command line first; then the same program (arguments may differ between runs) */
    for (int tier = 0; tier < 2; tier++)
      for (size_t i = 0; i < a->nprocs[k]; i++) {
        plog *p = &a->runs[k][i];
        for (size_t j = 0; j < n0 && !p->partner; j++)
          if (!taken[j] &&
              (tier ? same_program(first[j].command, p->command) : !strcmp(first[j].command, p->command))) {
            taken[j] = 1;
            p->partner = &first[j];
          }
      }
    for (size_t i = 0; i < a->nprocs[k]; i++) {
      plog *p = &a->runs[k][i];
      if (!p->partner) {
        if (stats) {
          stats->unmatched_processes++;
          stats->unmatched_dispatches += p->nkeys;
        }
        asm_warnf(a,
                  "pass %u: process %" PRId64
                  " '%s' has no process of the same program in the first run: its %zu dispatch%s left out",
                  k + 1, p->pid, p->command, p->nkeys, p->nkeys == 1 ? " is" : "es are");
        continue;
      }
      match_dispatches(a, k, p->partner, p, stats);
    }
    for (size_t j = 0; j < n0; j++)
      if (!taken[j]) {
        if (stats) {
          stats->unmatched_processes++;
          stats->unmatched_dispatches += first[j].nkeys;
        }
        asm_warnf(
            a,
            "pass %u: the first run's process %" PRId64
            " '%s' has no process with the same command line in this run: its counters of this pass are "
            "missing",
            k + 1, first[j].pid, first[j].command);
      }
    free(taken);
  }
  for (uint32_t k = 1; k < R; k++)
    for (size_t i = 0; i < a->nprocs[k]; i++)
      if (a->runs[k][i].partner && map_counters(a->runs[k][i].partner, &a->runs[k][i]))
        return asm_fail(a, HP_ERR_NOMEM, "%s: cannot read its counters (out of memory?)",
                        hp_store_path(a->runs[k][i].s));
  /* every process sorted by row: run 0 for the passes of its dispatches, later runs for their values */
  for (uint32_t k = 0; k < R; k++)
    for (size_t i = 0; i < a->nprocs[k]; i++)
      qsort(a->runs[k][i].keys, a->runs[k][i].nkeys, sizeof(dkey), cmp_drow);
  return HP_OK;
}

/* ---- dispatches running when their process died ----------------------------------------------------------
 * A sampled process writes a "dispatch begun" row (no device times, passes 0) for a running dispatch before
 * its first sample (src/collector/sample.c); the dispatch's own row follows when it ends. A begun row whose
 * dispatch has its own row is dropped; one without (the process died while it ran) is kept as it is: the
 * dispatch without device times (its end unknown, never invented), to which its samples stay attached. */
enum { BEGUN_ONLY = 1, BEGUN_ENDED, BEGUN_KEPT };

static int is_begun(const hp_dispatch *d) { return !d->passes && !d->start_ns && !d->end_ns; }

/* Input i's begun rows (only a sampled run has them: its metadata names the period). */
static hp_status begun_scan(hp_assembly *a, size_t i, hp_store *s) {
  if (!hp_store_metadata(s, "sample_period_ns")) return HP_OK;
  if (!a->begun && !(a->begun = calloc(a->n, sizeof *a->begun)))
    return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  hu_idmap *m = &a->begun[i];
  for (int pass = 0; pass < 2 && (pass == 0 || m->n); pass++) { /* the begun ids, then their own rows */
    hp_cursor *c;
    if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) != HP_OK) return HP_OK; /* the merge reports it */
    hp_dispatch d = {.size = sizeof d};
    int nomem = 0;
    while (!nomem && hp_cursor_next(c, &d) == HP_OK) {
      if (pass == 0 && is_begun(&d))
        nomem = hu_idmap_put(m, d.id, BEGUN_ONLY) != 0;
      else if (pass == 1 && !is_begun(&d) && hu_idmap_get(m, d.id, NULL))
        nomem = hu_idmap_put(m, d.id, BEGUN_ENDED) != 0;
    }
    hp_cursor_close(c);
    if (nomem) return asm_fail(a, HP_ERR_NOMEM, "out of memory");
  }
  return HP_OK;
}

/* A dispatch row of input ix: 1 keep, 0 drop (a begun row of a dispatch that has its own row, or one kept
 * already), -1 out of memory. *incomplete: it is kept as a dispatch that never ended; 2 when it is a row of
 * a run that is not sampled: a dispatch its process launched and was not seen to end before it died (the
 * log's reader adds them from the launch file, docs/formats/log.md). */
static int begun_row(hp_assembly *a, size_t ix, const hp_dispatch *d, int *incomplete) {
  *incomplete = 0;
  if (!is_begun(d)) return 1;
  if (!a->begun || !a->begun[ix].n) {
    *incomplete = 2;
    return 1;
  }
  uint64_t v = 0;
  hu_idmap_get(&a->begun[ix], d->id, &v);
  if (v != BEGUN_ONLY) return 0;
  if (hu_idmap_put(&a->begun[ix], d->id, BEGUN_KEPT)) return -1;
  *incomplete = 1;
  return 1;
}

/* ---- the hooks ----------------------------------------------------------------------------------------- */
static int drop_key(const char *key, int replay) {
  if (replay)
    return !strcmp(key, "replay") || !strcmp(key, "pass_plan") || !strcmp(key, "replay_pass") ||
           !strcmp(key, "replay_match");
  return !strcmp(key, "replay") || !strncmp(key, "multiplex_", 10);
}

static int hook_failed(hp_merge_hooks *h, hp_status st, const char *what);

static const struct pexit *exit_of(const hp_assembly *a, int64_t pid) {
  for (size_t k = a->nexits; k-- > 0;) /* the latest word on a pid */
    if (a->exits[k].pid == pid) return &a->exits[k];
  return NULL;
}

hp_status hp_assembly_set_exit(hp_assembly *a, int64_t pid, int64_t exit_code, int64_t exit_signal) {
  if (!a || pid <= 0) return HP_ERR_INVALID;
  struct pexit *e = realloc(a->exits, (a->nexits + 1) * sizeof *e);
  if (!e) return HP_ERR_NOMEM;
  a->exits = e;
  a->exits[a->nexits++] = (struct pexit){pid, exit_code, exit_signal};
  return HP_OK;
}

/* "killed by SIGKILL", "exited with status 3", or "" when nobody saw it end: what its waiting parent said
 * (hp_assembly_set_exit), else what the input says. */
static const char *ended_how(const hp_assembly *a, const struct unfinished *u, char *b, size_t n) {
  const struct pexit *e = exit_of(a, u->pid);
  /* an input's code is taken only with its signal: a writer that never heard of the columns leaves 0s */
  int64_t code = e ? e->code : -1, sig = e ? e->sig : u->exit_signal;
  b[0] = 0;
  if (sig > 0) {
    const char *abbrev = sigabbrev_np((int)sig);
    if (abbrev)
      snprintf(b, n, "killed by SIG%s", abbrev);
    else
      snprintf(b, n, "killed by signal %" PRId64, sig);
  } else if (code >= 0) {
    snprintf(b, n, "exited with status %" PRId64, code);
  }
  return b;
}

/* The kernels the output's dispatches name, each kernel (name and program) counted once across inputs. */
static int count_kernels(hp_assembly *a, size_t ix, hp_table t, const void *row) {
  uint64_t v = 0;
  if (t == HP_TABLE_KERNEL_SYMBOL) {
    const hp_kernel_symbol *k = row;
    size_t nl = strlen(k->name), pl = k->program_hash ? strlen(k->program_hash) : 0;
    char buf[512], *key = nl + pl + 2 <= sizeof buf ? buf : malloc(nl + pl + 2);
    if (!key) return -1;
    memcpy(key, k->name, nl);
    key[nl] = 0x1f;
    memcpy(key + nl + 1, pl ? k->program_hash : "", pl + 1);
    long i = hu_strmap_intern(&a->kkeys, key, NULL);
    if (key != buf) free(key);
    size_t had = a->capkdone;
    if (i < 0 || hu_grow((void **)&a->kdone, &a->capkdone, (size_t)i + 1, 1)) return -1;
    memset(a->kdone + had, 0, a->capkdone - had);
    return hu_idmap_put(&a->kof, (uint64_t)ix << 40 | k->id, (uint64_t)i + 1);
  }
  const hp_dispatch *d = row;
  if (a->stats && hu_idmap_get(&a->kof, (uint64_t)ix << 40 | d->kernel_id, &v) && !a->kdone[v - 1]) {
    a->kdone[v - 1] = 1;
    a->stats->kernels_dispatched++;
  }
  return 0;
}

static int hook_row(void *ctx, size_t ix, hp_table t, void *row) {
  hp_assembly *a = ctx;
  if (t == HP_TABLE_PROCESS && a->nexits) {
    hp_process *p = row;
    const struct pexit *e = exit_of(a, p->pid);
    if (e) {
      p->exit_code = e->code;
      p->exit_signal = e->sig;
    }
  }
  if ((t == HP_TABLE_KERNEL_SYMBOL || t == HP_TABLE_DISPATCH) && count_kernels(a, ix, t, row))
    return hook_failed(a->hooks, HP_ERR_NOMEM, "out of memory");
  if (t == HP_TABLE_METADATA && !strcmp(((hp_metadata *)row)->key, "dispatches_not_selected"))
    return 0; /* one row with the sum instead (hook_extra) */
  int incomplete = 0;
  if (t == HP_TABLE_DISPATCH && !a->replay_runs) {
    int k = begun_row(a, ix, row, &incomplete);
    if (k <= 0) return k < 0 ? hook_failed(a->hooks, HP_ERR_NOMEM, "out of memory") : 0;
  }
  int unf = 0; /* of a process that did not close its log */
  if (a->nunf && t == HP_TABLE_DISPATCH)
    for (size_t k = 0; k < a->nunf; k++)
      if (a->unf[k].ix == ix && a->unf[k].id == ((const hp_dispatch *)row)->process_id) {
        unf = 1;
        a->unf[k].kept++;
        a->unf[k].incomplete += incomplete == 1;
        a->unf[k].launched += incomplete == 2;
      }
  if (incomplete == 2 && !unf) incomplete = 0; /* a closed log's: no launch file was read for it */
  if (incomplete && a->stats) a->stats->incomplete_dispatches++;
  if (a->replay_runs) {
    if (t == HP_TABLE_METADATA) return !drop_key(((hp_metadata *)row)->key, 1);
    if (t == HP_TABLE_DISPATCH) {
      hp_dispatch *d = row;
      plog *f = &a->runs[0][ix];
      dkey want = {.row = d->id};
      dkey *y = bsearch(&want, f->keys, f->nkeys, sizeof *y, cmp_drow);
      d->passes = (uint32_t)(1 + (y ? y->target : 0));
      d->bytes_restored = 0; /* nothing is restored: every run starts afresh */
    }
    if (t == HP_TABLE_COUNTER_VALUE && ((hp_counter_value *)row)->dispatch_id && !a->replay_devplans)
      ((hp_counter_value *)row)->pass = 1; /* a region's host part stays pass 0 (every run measures it);
                                              per-device plans: the device's pass, kept */
    return 1;
  }
  if (a->mux && a->mux_policy && t == HP_TABLE_METADATA) return !drop_key(((hp_metadata *)row)->key, 0);
  if (a->mux && a->mux[ix] && t == HP_TABLE_DISPATCH) asm_mux_mark_cold(a->mux[ix], row);
  if (a->mux && a->mux[ix] && t == HP_TABLE_COUNTER_VALUE) asm_mux_warm_cold(a->mux[ix], row);
  return 1;
}

/* Metadata rows of the first input: the assembly's own description. */
static int extra_meta(hp_assembly *a, hp_metadata *m) {
  char(*num)[32] = a->num;
  if (a->replay_runs) {
    static const char *const pol[] = {"grid", "name", "all"};
    const char *kv[][2] = {
        {"replay", "application"}, {"pass_plan", a->replay_plan}, {"replay_match", pol[a->o.match]}};
    if (a->it_a >= 3) return 0;
    m->key = kv[a->it_a][0];
    m->value = kv[a->it_a][1];
    a->it_a++;
    return 1;
  }
  snprintf(num[0], sizeof num[0], "%" PRIu32, a->o.min_per_pass);
  snprintf(num[1], sizeof num[1], "%" PRIu64, a->mux_keys);
  const char *kv[][2] = {{"replay", "multiplex"},
                         {"multiplex_policy", a->mux_policy},
                         {"multiplex_imputation", "median"},
                         {"multiplex_min_per_pass", num[0]},
                         {"multiplex_keys", num[1]},
                         {"multiplex_incomplete", a->mux_json},
                         {"multiplex_cold_raw", a->mux_cold}};
  if (a->it_a >= 7) return 0;
  m->key = kv[a->it_a][0];
  m->value = kv[a->it_a][1];
  a->it_a++;
  return 1;
}

/* A hook's failure: the status and message the merge returns. */
static int hook_failed(hp_merge_hooks *h, hp_status st, const char *what) {
  h->status = st;
  snprintf(h->error, sizeof h->error, "%s", what);
  return -1;
}

/* Later runs' counter_info rows whose names the first run's process lacks (ids given in replay_prepare),
 * then the later runs' values of its dispatches, tagged with their pass. */
static int extra_replay(hp_assembly *a, size_t ix, hp_table t, void *row) {
  plog *f = &a->runs[0][ix];
  if (t == HP_TABLE_COUNTER_INFO) {
    if (a->it_a >= f->nextra) return 0;
    const cname *x = &f->extra[a->it_a++];
    hp_counter_info *ci = row;
    ci->id = x->id;
    ci->agent_id = x->agent_id;
    ci->name = x->name;
    ci->description = x->description;
    ci->block = x->block;
    ci->unit = x->unit;
    ci->expression = x->expression;
    return 1;
  }
  if (t == HP_TABLE_COUNTER_VALUE) {
    for (;;) {
      if (!a->it_c) {
        while (a->it_a < a->replay_runs && !a->it_b) {
          a->it_a++;
          for (size_t i = 0; a->it_a < a->replay_runs && i < a->nprocs[a->it_a]; i++)
            if (a->runs[a->it_a][i].partner == f) a->it_b = i + 1;
        }
        if (a->it_a >= a->replay_runs) return 0;
        if (hp_cursor_open(a->runs[a->it_a][a->it_b - 1].s, HP_TABLE_COUNTER_VALUE, &a->it_c) != HP_OK)
          return hook_failed(a->hooks, HP_ERR_IO, hp_store_error(a->runs[a->it_a][a->it_b - 1].s));
      }
      plog *p = &a->runs[a->it_a][a->it_b - 1];
      hp_counter_value *v = row;
      hp_status st = hp_cursor_next(a->it_c, v);
      if (st != HP_OK) {
        hp_cursor_close(a->it_c);
        a->it_c = NULL;
        a->it_b = 0;
        if (st != HP_END) return hook_failed(a->hooks, st, hp_store_error(p->s));
        continue;
      }
      dkey want = {.row = v->dispatch_id};
      dkey *y = bsearch(&want, p->keys, p->nkeys, sizeof *y, cmp_drow);
      uint64_t cid = v->counter_id < p->ncmap ? p->cmap[v->counter_id] : 0;
      if (!y || !y->target || !cid) continue; /* unmatched: never joined to another dispatch */
      v->dispatch_id = y->target;
      v->counter_id = cid;
      if (!a->replay_devplans) v->pass = a->it_a + 1; /* per-device plans: the device's pass, kept */
      return 1;
    }
  }
  return 0;
}

/* Imputed values of merged input ix, dispatch by dispatch (it_a) and counter by counter (it_b). */

static int hook_extra(void *ctx, size_t ix, hp_table t, void *row) {
  hp_assembly *a = ctx;
  if (a->it_state != (int)(ix * HP_TABLE_COUNT + t) + 1) { /* a new table: restart the iterator */
    a->it_state = (int)(ix * HP_TABLE_COUNT + t) + 1;
    a->it_a = a->it_b = 0;
    if (a->it_c) hp_cursor_close(a->it_c);
    a->it_c = NULL;
  }
  if (t == HP_TABLE_METADATA) {
    if (ix == 0 && (a->replay_runs || (a->mux && a->mux_policy)) && extra_meta(a, row)) return 1;
    if (ix != 0 || !a->has_nsel || a->it_b) return 0;
    a->it_b = 1; /* the sum of dispatches not selected, once */
    ((hp_metadata *)row)->key = "dispatches_not_selected";
    ((hp_metadata *)row)->value = a->nsel;
    return 1;
  }
  if (a->replay_runs) return extra_replay(a, ix, t, row);
  if (a->mux && a->mux[ix] && t == HP_TABLE_COUNTER_VALUE) return asm_mux_extra(a, ix, row, a->stats);
  return 0;
}

static void hook_progress(void *ctx, uint64_t done, uint64_t total) {
  hp_assembly *a = ctx;
  if (a->o.progress) a->o.progress(a->o.progress_ctx, done, total);
}

/* Merged input i's processes that did not close their logs (a->unf), from its store s. */
static hp_status unfinished_of(hp_assembly *a, size_t i, hp_store *s) {
  hp_cursor *c;
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) != HP_OK) return HP_OK;
  hp_status st = HP_OK;
  hp_process p = {.size = sizeof p};
  while (st == HP_OK && hp_cursor_next(c, &p) == HP_OK) {
    if (p.end_ns != 0) continue;
    struct unfinished *u = realloc(a->unf, (a->nunf + 1) * sizeof *u);
    char *cmd = strdup(p.command ? p.command : "");
    if (!u || !cmd) {
      if (u) a->unf = u;
      free(cmd);
      st = asm_fail(a, HP_ERR_NOMEM, "out of memory");
      break;
    }
    a->unf = u;
    a->unf[a->nunf++] =
        (struct unfinished){.ix = i, .id = p.id, .pid = p.pid, .command = cmd, .exit_signal = p.exit_signal};
  }
  hp_cursor_close(c);
  return st;
}

/* A streamed merge's input, opened when the merge reaches it and closed after. */
static hp_store *hook_open(void *ctx, size_t ix) {
  hp_assembly *a = ctx;
  hp_status st = ain_open(a, ix);
  if (st != HP_OK) {
    a->hooks->status = st;
    snprintf(a->hooks->error, sizeof a->hooks->error, "%s", a->error);
    return NULL;
  }
  return a->merged[ix] = a->in[ix].s;
}

static void hook_done(void *ctx, size_t ix) {
  hp_assembly *a = ctx;
  a->merged[ix] = NULL;
  ain_park(a, ix);
}

/* ---- write -----------------------------------------------------------------------------------------------
 */
hp_status hp_assembly_write(hp_assembly *a, hp_store *out, hp_assemble_stats *user) {
  if (!a || !out || hp_store_mode(out) == HP_READ || a->written) return HP_ERR_INVALID;
  if (user && user->size < offsetof(hp_assemble_stats, skipped_inputs)) return HP_ERR_INVALID;
  a->written = 1;
  hp_assemble_stats full;
  memset(&full, 0, sizeof full);
  full.size = sizeof full;
  full.merge.size = sizeof full.merge;
  full.skipped_inputs = a->skipped;
  hp_status st = HP_OK;
  int replay = 0;
  for (size_t i = 0; i < a->n; i++)
    replay |= a->in[i].run > 0;
  if (replay && a->o.impute != HP_IMPUTE_NONE && a->o.impute != HP_IMPUTE_AUTO)
    st = asm_fail(a, HP_ERR_INVALID, "application replay and multiplex imputation exclude each other");
  /* A plain merge (no application replay, no multiplex imputation) reads one input at a time: an input is
   * open only while it is read (first its small tables here, then all of it in the merge), so memory does
   * not grow with the number of inputs; the first AIN_KEEP_OPEN stay open in between (ain_pause). Replay
   * and imputation compare inputs: they keep all open. */
  int stream = !replay && a->o.impute != HP_IMPUTE_KERNEL && a->o.impute != HP_IMPUTE_LAUNCH;
  for (size_t i = 0; st == HP_OK && stream && a->o.impute == HP_IMPUTE_AUTO && i < a->n; i++) {
    if ((st = ain_open(a, i)) != HP_OK) break;
    const char *rp = hp_store_metadata(a->in[i].s, "replay");
    if (rp && !strcmp(rp, "multiplex") && hp_store_metadata(a->in[i].s, "multiplex_policy")) stream = 0;
    ain_pause(a, i);
  }
  for (size_t i = 0; st == HP_OK && !stream && i < a->n; i++)
    st = ain_open(a, i);
  if (st == HP_OK && replay) {
    st = replay_prepare(a, &full);
  } else if (st == HP_OK) {
    a->nmerged = a->n;
    if (!(a->merged = calloc(a->n ? a->n : 1, sizeof *a->merged)))
      st = asm_fail(a, HP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == HP_OK && i < a->n; i++)
      a->merged[i] = stream ? NULL : a->in[i].s; /* NULL: hook_open opens it (again) for the merge */
    if (st == HP_OK && !stream && a->o.impute != HP_IMPUTE_NONE) st = asm_mux_prepare(a, &full);
  }
  uint64_t total = 0;                                /* the inputs' rows, for progress */
  for (size_t i = 0; st == HP_OK && i < a->n; i++) { /* lost records, from every input's processes */
    if ((st = ain_open(a, i)) != HP_OK) break;
    for (int t = 0; stream && a->o.progress && t < HP_TABLE_COUNT; t++) {
      uint64_t k = 0;
      if (hp_store_count(a->in[i].s, (hp_table)t, &k) == HP_OK) total += k;
    }
    if (stream) st = unfinished_of(a, i, a->in[i].s);
    if (st == HP_OK && !replay) st = begun_scan(a, i, a->in[i].s);
    hp_cursor *c;
    if (st != HP_OK || hp_cursor_open(a->in[i].s, HP_TABLE_PROCESS, &c) != HP_OK) {
      if (stream) ain_pause(a, i); /* the merge opens it again where it was closed */
      continue;
    }
    const char *ns = a->in[i].run == 0 ? hp_store_metadata(a->in[i].s, "dispatches_not_selected") : NULL;
    if (ns) { /* every run of an application replay selects the same: its first run counts */
      full.not_selected_dispatches += strtoull(ns, NULL, 10);
      a->has_nsel = 1;
      snprintf(a->nsel, sizeof a->nsel, "%" PRIu64, full.not_selected_dispatches);
    }
    hp_process p = {.size = sizeof p};
    while (hp_cursor_next(c, &p) == HP_OK)
      full.lost_records = full.lost_records + p.lost_records < full.lost_records
                              ? UINT64_MAX /* saturated */
                              : full.lost_records + p.lost_records;
    hp_cursor_close(c);
    if (stream) ain_pause(a, i);
  }
  for (size_t i = 0; st == HP_OK && !stream && i < a->nmerged; i++) /* those found above when streaming */
    st = unfinished_of(a, i, a->merged[i]);
  if (st == HP_OK) {
    hp_merge_hooks h = {.ctx = a, .row = hook_row, .extra = hook_extra, .total = total};
    if (stream) {
      h.open = hook_open;
      h.done = hook_done;
    }
    if (a->o.progress) h.progress = hook_progress; /* else the inputs' rows need not be counted */
    h.cancel = a->o.cancel;
    a->hooks = &h;
    a->stats = &full;
    st = hp_merge_with(out, a->merged, a->nmerged, &full.merge, &h);
    a->hooks = NULL;
    a->stats = NULL;
    if (a->it_c) hp_cursor_close(a->it_c);
    a->it_c = NULL;
    if (st != HP_OK) asm_fail(a, st, "%s", hp_store_error(out)[0] ? hp_store_error(out) : hp_status_str(st));
  }
  for (size_t k = 0; st == HP_OK && k < a->nunf; k++) {
    const struct unfinished *u = &a->unf[k];
    full.unfinished_processes++;
    full.unfinished_dispatches += u->kept;
    char running[96] = "";
    if (u->incomplete)
      snprintf(running, sizeof running, " (%" PRIu64 " running when it died: no end time, samples kept)",
               u->incomplete);
    else if (u->launched)
      snprintf(running, sizeof running,
               " (%" PRIu64 " launched and not seen to end before it died: no end time)", u->launched);
    char how[64];
    ended_how(a, u, how, sizeof how);
    asm_warnf(a,
              "%s: process %" PRId64 " (%s) did not close its log (%s): %" PRIu64
              " dispatch%s kept%s, its end time unknown",
              a->merged[u->ix] ? hp_store_path(a->merged[u->ix]) : a->in[u->ix].path, u->pid, u->command,
              how[0] ? how : "killed, or its log cut short", u->kept, u->kept == 1 ? "" : "es", running);
  }
  if (user) {
    size_t keep = user->size < sizeof full ? user->size : sizeof full;
    memcpy((char *)user + sizeof full.size, (char *)&full + sizeof full.size, keep - sizeof full.size);
  }
  return st;
}

void hp_assembly_free(hp_assembly *a) {
  if (!a) return;
  for (size_t i = 0; a->mux && i < a->nmerged; i++)
    asm_mproc_free(a->mux[i]);
  free(a->mux);
  free(a->mux_json);
  free(a->mux_cold);
  free(a->mux_policy);
  for (uint32_t k = 0; a->runs && k < a->replay_runs; k++) {
    for (size_t i = 0; i < a->nprocs[k]; i++)
      plog_clear(&a->runs[k][i]);
    free(a->runs[k]);
  }
  free(a->runs);
  free(a->nprocs);
  free(a->replay_plan);
  free(a->merged);
  for (size_t k = 0; k < a->nunf; k++)
    free(a->unf[k].command);
  free(a->unf);
  free(a->exits);
  for (size_t i = 0; a->begun && i < a->n; i++)
    hu_idmap_free(&a->begun[i]);
  free(a->begun);
  hu_strmap_free(&a->kkeys);
  hu_idmap_free(&a->kof);
  free(a->kdone);
  for (size_t i = 0; i < a->n; i++) {
    if (a->in[i].owned && a->in[i].s) hp_store_close(a->in[i].s);
    if (a->in[i].parked) hp_store_close(a->in[i].parked);
    free(a->in[i].path);
  }
  free(a->in);
  free(a);
}
