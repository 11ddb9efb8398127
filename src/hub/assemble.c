/* The profile-assembly pipeline (include/hubprof/assemble.h): inputs under one damage policy, then ONE
 * streaming merge (merge.c) whose hooks apply the per-input transforms: multiplex imputation (per process and
 * key, the mean of the measured values, only where every pass was measured) and application replay (later
 * runs' processes paired by command line, their dispatches matched to the first run's, values tagged with
 * their pass). Nothing is written but the output. Sections: inputs · plans · multiplexing · application
 * replay · the hooks · write. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/assemble.h"
#include "merge_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_map.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- inputs ---------------------------------------------------------------------------------------- */
typedef struct ainput {
  hp_store *s;
  int owned; /* opened by the assembly */
  uint32_t run;
  char *path;       /* an owned input's path: closed (s NULL) while not read, opened again by ain_open */
  hp_store *parked; /* ... or parked (hp_store_park: its file closed, what was read kept) while s is NULL */
} ainput;

typedef struct mproc mproc;
typedef struct plog plog;

struct hp_assembly {
  hp_assemble_opts o;
  char error[HP_ERRMSG_MAX];
  ainput *in;
  size_t n, cap;
  uint64_t skipped;
  int written;
  /* transforms, built by hp_assembly_write */
  hp_store **merged; /* the merge's inputs: every input, or the first run's */
  size_t nmerged;
  mproc **mux;      /* per merged input: its imputation, or NULL */
  char *mux_json;   /* multiplex_incomplete */
  char *mux_cold;   /* multiplex_cold_raw: the raw readings of cold dispatches replaced by warm estimates */
  char *mux_policy; /* multiplex_policy written */
  uint64_t mux_keys;
  uint32_t replay_runs; /* 0: no application replay */
  plog **runs;          /* runs[k][i]: process i of run k, in order of start */
  size_t *nprocs;
  char *replay_plan; /* the whole plan: every run's pass_plan */
  /* the extra-rows iterator of the hooks */
  size_t it_a, it_b;
  hp_cursor *it_c;
  int it_state;
  hp_merge_hooks *hooks;    /* while writing: where a failing hook leaves its error */
  hp_assemble_stats *stats; /* while writing */
  char num[2][32];          /* metadata values */
  /* processes that did not close their logs (end time 0): reported with the dispatches kept */
  struct unfinished {
    size_t ix;
    uint64_t id; /* the process row's id in input ix */
    int64_t pid;
    char *command;
    uint64_t kept;
    uint64_t incomplete; /* of kept: running when it died (a "dispatch begun" row only) */
    int64_t exit_signal; /* as the input says (-1: unknown) */
  } * unf;
  /* per input of a sampled run: dispatch ids of "dispatch begun" rows → BEGUN_ONLY, BEGUN_ENDED (the
   * dispatch's own row is there too: the begun row is dropped) or BEGUN_KEPT (kept once, as incomplete) */
  hu_idmap *begun;
  size_t nunf;
  /* dispatches not selected (metadata dispatches_not_selected): summed over the processes, written once */
  int has_nsel;
  char nsel[32];
  struct pexit { /* how processes ended, as their waiting parent saw it (hp_assembly_set_exit) */
    int64_t pid, code, sig;
  } * exits;
  size_t nexits;
  /* kernels dispatched (hp_assemble_stats.kernels_dispatched): each kernel (name and program) once */
  hu_strmap kkeys;      /* "name\x1fprogram" -> its index */
  hu_idmap kof;         /* input << 40 | its kernel_symbol id -> index + 1 */
  unsigned char *kdone; /* per index: a dispatch of it was written */
  size_t capkdone;
};

static void warnf(hp_assembly *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(hp_assembly *a, const char *fmt, ...) {
  if (!a->o.warn) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  a->o.warn(a->o.warn_ctx, line);
}

static hp_status fail(hp_assembly *a, hp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static hp_status fail(hp_assembly *a, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->error, sizeof a->error, fmt, ap);
  va_end(ap);
  return st;
}

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
      return fail(a, HP_ERR_NOMEM, "%s: out of memory", hp_store_path(s));
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
    fail(a, st, "%s", hp_store_error(x->s));
  else
    fail(a, st, "%s: %s", x->path, hp_status_str(st));
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
  if (hp_store_note(s)[0]) warnf(a, "%s", hp_store_note(s));
  hp_status d = hp_store_damage(s, NULL);
  if (d == HP_OK) return HP_OK;
  if (a->o.strict) return fail(a, d, "%s", hp_store_error(s));
  warnf(a, "%s (taking what is complete)", hp_store_error(s));
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
      warnf(a, "%s (skipped: nothing complete in it)", why);
      a->skipped++;
      hp_store_abort(s);
      return HP_OK;
    }
    if (s && hp_store_error(s)[0])
      fail(a, st, "%s", why);
    else
      fail(a, st, "%s: %s", path, why);
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
  if (!a || !s || s->mode != HP_READ || a->written) return HP_ERR_INVALID;
  hp_status st = policy(a, s);
  return st != HP_OK ? st : take(a, s, 0, run);
}

const char *hp_assembly_error(const hp_assembly *a) { return a ? a->error : "no assembly"; }

/* ---- plans: "a,b;c" — counters separated by ',' within a pass, ';' between passes ------------------- */
typedef struct aplan {
  char **names;
  uint32_t *pass; /* 1-based */
  size_t n;
  uint32_t npasses;
} aplan;

static void plan_free(aplan *p) {
  for (size_t i = 0; i < p->n; i++)
    free(p->names[i]);
  free(p->names);
  free(p->pass);
  memset(p, 0, sizeof *p);
}

/* 0, or -1 for an empty name or pass, or out of memory. */
static int plan_parse(const char *s, aplan *p) {
  memset(p, 0, sizeof *p);
  size_t cap = 1;
  for (const char *c = s; *c; c++)
    cap += *c == ',' || *c == ';';
  p->names = calloc(cap, sizeof *p->names);
  p->pass = calloc(cap, sizeof *p->pass);
  if (!p->names || !p->pass) return -1;
  uint32_t pass = 1;
  for (const char *c = s;;) {
    size_t w = strcspn(c, ",;");
    const char *b = c, *e = c + w;
    while (b < e && (*b == ' ' || *b == '\t'))
      b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
      e--;
    if (b == e || !(p->names[p->n] = strndup(b, (size_t)(e - b)))) return -1;
    p->pass[p->n++] = pass;
    if (!c[w]) break;
    if (c[w] == ';') pass++;
    c += w + 1;
  }
  p->npasses = pass;
  return 0;
}

/* ---- multiplexing ------------------------------------------------------------------------------------ */
typedef struct mdisp {
  uint64_t row;            /* the dispatch's row id in its input */
  uint64_t dispatch_id;    /* the collector's id: enqueue order in the process */
  uint64_t kernel_id;      /* kernel_symbol id in its input */
  uint32_t grid[3], wg[3]; /* global and work-group sizes */
  size_t key;              /* index of its key */
} mdisp;

/* One measured value of a key's counter (kc = key * C + counter). */
typedef struct mval {
  size_t kc;
  uint64_t row;
  double value;
} mval;

typedef struct mkey {
  const char *name;        /* kernel name (owned by the mproc) */
  const char *prog;        /* its program's identity, "" unknown (owned by the mproc) */
  uint32_t grid[3], wg[3]; /* policy launch only (else 0) */
  uint64_t ndisp;          /* its dispatches */
  uint64_t cold_row;  /* row of its first dispatch by dispatch id (the cold one: first use in the process) */
  uint64_t cold_id;   /* that dispatch's dispatch id */
  size_t covered;     /* passes measured by at least min_per_pass of its dispatches */
  uint64_t *per_pass; /* per pass: how many of its dispatches measured it (fewest over its counters) */
} mkey;

struct mproc {
  aplan plan;
  int launch; /* policy launch */
  int64_t pid, start_ns;
  char **knames; /* kernel_symbol id -> name */
  size_t nknames;
  mdisp *d; /* sorted by row */
  size_t nd;
  mkey *keys;
  size_t nkeys;
  uint64_t *info_of; /* plan index -> counter_info id in the input, 0 = none */
  double *sum;       /* [key * C + c]: sum of the measured values of counter c */
  uint64_t *cnt;     /* [key * C + c]: how many */
  double *est;       /* [key * C + c]: the estimate imputed (median of the warm measured values) */
  struct mval *vals; /* every measured value, for the medians */
  size_t nvals, capvals;
  unsigned char *cold_only; /* [key * C + c]: the estimate is a cold dispatch's value (its only one) */
  uint64_t ncold;           /* such estimates of complete keys (imputed from) */
  unsigned char *measured;  /* [dispatch * C + c]: 1 measured, 2 imputed already (never imputed again) */
  uint64_t nmeasured;
  uint64_t nwarmed; /* cold dispatches' measured values replaced by their warm siblings' estimate */
};

static void mproc_free(mproc *p) {
  if (!p) return;
  plan_free(&p->plan);
  for (size_t i = 0; i < 2 * p->nknames; i++) /* names and identities */
    free(p->knames[i]);
  free(p->knames);
  free(p->d);
  for (size_t k = 0; k < p->nkeys; k++)
    free(p->keys[k].per_pass);
  free(p->keys);
  free(p->info_of);
  free(p->sum);
  free(p->cnt);
  free(p->est);
  free(p->cold_only);
  free(p->vals);
  free(p->measured);
  free(p);
}

static int cmp_mrow(const void *a, const void *b) {
  const mdisp *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Kernel names by id of store s, and in names[n + id] its program's identity (a kernel is its name and its
 * program: two programs' kernels of one name are two keys); ids above a million are ignored: no such log
 * exists. */
static int load_knames(hp_store *s, char ***names, size_t *n) {
  hp_cursor *c = NULL;
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) != HP_OK) return -1;
  int rc = 0;
  while (rc == 0 && hp_cursor_next(c, &k) == HP_OK) {
    if (k.id > 1000000) continue;
    if (k.id >= *n) { /* names then identities: both halves grow */
      size_t m = k.id + 16;
      char **v = realloc(*names, 2 * m * sizeof *v);
      if (!v) {
        rc = -1;
        break;
      }
      memmove(v + m, v + *n, *n * sizeof *v);
      memset(v + *n, 0, (m - *n) * sizeof *v);
      memset(v + m + *n, 0, (m - *n) * sizeof *v);
      *names = v;
      *n = m;
    }
    free((*names)[k.id]);
    free((*names)[*n + k.id]);
    (*names)[*n + k.id] = NULL;
    if (!((*names)[k.id] = strdup(k.name)) ||
        (k.program_hash && *k.program_hash && !((*names)[*n + k.id] = strdup(k.program_hash))))
      rc = -1;
  }
  hp_cursor_close(c);
  return rc;
}

static const char *kname(char *const *names, size_t n, uint64_t id) {
  return id < n && names[id] ? names[id] : "";
}
static const char *kprog(char *const *names, size_t n, uint64_t id) {
  return id < n && names[n + id] ? names[n + id] : "";
}
/* Two kernel ids of one store as keys: by name, then by program. */
static int kcmp(char *const *names, size_t n, uint64_t x, uint64_t y) {
  if (x == y) return 0;
  int c = strcmp(kname(names, n, x), kname(names, n, y));
  return c ? c : strcmp(kprog(names, n, x), kprog(names, n, y));
}

static int mux_key_cmp(const mproc *p, const mdisp *x, const mdisp *y) {
  int c = kcmp(p->knames, p->nknames, x->kernel_id, y->kernel_id);
  if (c || !p->launch) return c;
  c = memcmp(x->grid, y->grid, sizeof x->grid);
  return c ? c : memcmp(x->wg, y->wg, sizeof x->wg);
}
static int mux_cmp_key(const void *a, const void *b, void *ctx) {
  const mproc *p = ctx;
  const mdisp *x = &p->d[*(const size_t *)a], *y = &p->d[*(const size_t *)b];
  int c = mux_key_cmp(p, x, y);
  return c ? c : x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_mval(const void *a, const void *b) {
  const mval *x = a, *y = b;
  if (x->kc != y->kc) return x->kc < y->kc ? -1 : 1;
  return x->value < y->value ? -1 : x->value > y->value;
}

/* The estimate of each key's counters: the median of its measured values, the key's cold dispatch (its
 * first: compilation and first-use work of the runtime may fall into its window) left out unless it is
 * the only measurement. Robust to outliers (a preempted dispatch, a first-touch page storm), where the mean
 * follows them. */
static int mux_estimates(mproc *p) {
  size_t C = p->plan.n, n = (p->nkeys ? p->nkeys : 1) * (C ? C : 1);
  if (!(p->est = calloc(n, sizeof *p->est)) || !(p->cold_only = calloc(n, 1))) return -1;
  if (p->nvals) qsort(p->vals, p->nvals, sizeof *p->vals, cmp_mval);
  for (size_t i = 0; i < p->nvals;) {
    size_t j = i, kc = p->vals[i].kc;
    while (j < p->nvals && p->vals[j].kc == kc)
      j++;
    uint64_t cold = p->keys[kc / C].cold_row;
    size_t warm = 0;
    for (size_t t = i; t < j; t++)
      warm += p->vals[t].row != cold;
    if (!warm) { /* the cold dispatch measured it and no other did */
      p->est[kc] = p->vals[i].value;
      p->cold_only[kc] = 1;
    } else { /* the median of the warm values: the middle one, or the mean of the middle two */
      size_t want[2] = {(warm - 1) / 2, warm / 2}, seen = 0;
      double m[2] = {0, 0};
      for (size_t t = i; t < j; t++) {
        if (p->vals[t].row == cold) continue;
        for (int h = 0; h < 2; h++)
          if (seen == want[h]) m[h] = p->vals[t].value;
        seen++;
      }
      p->est[kc] = want[0] == want[1] ? m[0] : (m[0] + m[1]) / 2;
    }
    i = j;
  }
  return 0;
}

/* Read process p of store s: its dispatches grouped into keys, which counters each dispatch measured, per
 * key the sum and count of each counter's measured values, and each key's coverage of the passes. */
static int mproc_load(mproc *p, hp_store *s, uint32_t min_per_pass) {
  hp_cursor *c = NULL;
  hp_process pr = {.size = sizeof pr};
  if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
    while (hp_cursor_next(c, &pr) == HP_OK) { /* the last row of a process is its latest */
      p->pid = pr.pid;
      p->start_ns = pr.start_ns;
    }
    hp_cursor_close(c);
  }
  if (load_knames(s, &p->knames, &p->nknames)) return -1;
  size_t C = p->plan.n, P = p->plan.npasses;
  if (!(p->info_of = calloc(C ? C : 1, sizeof *p->info_of))) return -1;
  hp_counter_info ci = {.size = sizeof ci};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_INFO, &c) == HP_OK) {
    while (hp_cursor_next(c, &ci) == HP_OK)
      for (size_t i = 0; i < C; i++)
        if (strcmp(p->plan.names[i], ci.name) == 0) p->info_of[i] = ci.id;
    hp_cursor_close(c);
  }
  hp_dispatch d = {.size = sizeof d};
  size_t cap = 0;
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) != HP_OK) return -1;
  while (hp_cursor_next(c, &d) == HP_OK) {
    if (p->nd == cap) {
      cap = cap ? 2 * cap : 1024;
      mdisp *v = realloc(p->d, cap * sizeof *v);
      if (!v) {
        hp_cursor_close(c);
        return -1;
      }
      p->d = v;
    }
    mdisp *x = &p->d[p->nd++];
    memset(x, 0, sizeof *x);
    x->row = d.id;
    x->dispatch_id = d.dispatch_id;
    x->kernel_id = d.kernel_id;
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
  }
  hp_cursor_close(c);
  qsort(p->d, p->nd, sizeof *p->d, cmp_mrow);
  /* keys, ordered by name and sizes */
  size_t *ord = malloc((p->nd ? p->nd : 1) * sizeof *ord);
  if (!ord) return -1;
  for (size_t i = 0; i < p->nd; i++)
    ord[i] = i;
  qsort_r(ord, p->nd, sizeof *ord, mux_cmp_key, p);
  for (size_t i = 0; i < p->nd; i++)
    p->nkeys += !i || mux_key_cmp(p, &p->d[ord[i - 1]], &p->d[ord[i]]) != 0;
  if (!(p->keys = calloc(p->nkeys ? p->nkeys : 1, sizeof *p->keys))) {
    free(ord);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < p->nd; i++) {
    mdisp *x = &p->d[ord[i]];
    if (i && mux_key_cmp(p, &p->d[ord[i - 1]], x) != 0) k++;
    mkey *y = &p->keys[k];
    if (!y->ndisp) {
      y->name = kname(p->knames, p->nknames, x->kernel_id);
      y->prog = kprog(p->knames, p->nknames, x->kernel_id);
      if (p->launch) {
        memcpy(y->grid, x->grid, sizeof y->grid);
        memcpy(y->wg, x->wg, sizeof y->wg);
      }
    }
    if (!y->ndisp || x->dispatch_id < y->cold_id) { /* rows of several threads need not be in enqueue order */
      y->cold_row = x->row;
      y->cold_id = x->dispatch_id;
    }
    y->ndisp++;
    x->key = k;
  }
  free(ord);
  size_t nk = p->nkeys ? p->nkeys : 1, Cn = C ? C : 1;
  p->sum = calloc(nk * Cn, sizeof *p->sum);
  p->cnt = calloc(nk * Cn, sizeof *p->cnt);
  p->measured = calloc((p->nd ? p->nd : 1) * Cn, 1);
  if (!p->sum || !p->cnt || !p->measured) return -1;
  uint64_t maxid = 0; /* counter_info id -> plan index */
  for (size_t i = 0; i < C; i++)
    if (p->info_of[i] > maxid) maxid = p->info_of[i];
  long *plan_of = malloc((maxid + 1) * sizeof *plan_of);
  if (!plan_of) return -1;
  for (uint64_t i = 0; i <= maxid; i++)
    plan_of[i] = -1;
  for (size_t i = 0; i < C; i++)
    if (p->info_of[i]) plan_of[p->info_of[i]] = (long)i;
  hp_counter_value v = {.size = sizeof v};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
    while (hp_cursor_next(c, &v) == HP_OK) {
      if (v.counter_id > maxid || plan_of[v.counter_id] < 0) continue;
      mdisp want = {.row = v.dispatch_id};
      mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
      if (!x) continue;
      size_t ci2 = (size_t)plan_of[v.counter_id];
      unsigned char *m = &p->measured[(size_t)(x - p->d) * C + ci2];
      if (*m) continue; /* a counter twice on one dispatch: the first value counts */
      *m = v.imputed ? 2 : 1;
      if (v.imputed) continue;
      p->sum[x->key * C + ci2] += v.value;
      p->cnt[x->key * C + ci2]++;
      p->nmeasured++;
      if (p->nvals == p->capvals) {
        size_t nc = p->capvals ? 2 * p->capvals : 1024;
        mval *nv = realloc(p->vals, nc * sizeof *nv);
        if (!nv) {
          hp_cursor_close(c);
          free(plan_of);
          return -1;
        }
        p->vals = nv;
        p->capvals = nc;
      }
      p->vals[p->nvals++] = (mval){x->key * C + ci2, x->row, v.value};
    }
    hp_cursor_close(c);
  }
  free(plan_of);
  if (mux_estimates(p)) return -1;
  for (size_t y = 0; y < p->nkeys; y++) { /* coverage of pass q: the fewest measurements of its counters */
    mkey *key = &p->keys[y];
    if (!(key->per_pass = calloc(P ? P : 1, sizeof *key->per_pass))) return -1;
    for (size_t q = 0; q < P; q++) {
      uint64_t least = UINT64_MAX;
      for (size_t i = 0; i < C; i++)
        if (p->plan.pass[i] == q + 1 && p->cnt[y * C + i] < least) least = p->cnt[y * C + i];
      key->per_pass[q] = least == UINT64_MAX ? 0 : least;
      key->covered += key->per_pass[q] >= min_per_pass;
    }
    for (size_t i = 0; i < C && key->covered == P; i++)
      p->ncold += p->cold_only[y * C + i];
  }
  return 0;
}

/* A dispatch of a multiplexed input is cold when it is its key's first (by dispatch id): stored on the row
 * (hp_dispatch.cold), so every format and reader can tell which values hold first-use cost. */
static void mux_mark_cold(const mproc *p, hp_dispatch *d) {
  mdisp want = {.row = d->id};
  const mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
  d->cold = x && p->keys[x->key].cold_row == d->id;
}

static int key_complete(const mproc *p, const mkey *k) { return k->covered == p->plan.npasses; }

/* The estimate that replaces a measured value of a cold dispatch (its key's first), or NULL to keep the
 * value: only for a complete key whose counter was measured by at least one warm dispatch too. The cold
 * reading holds first-use cost (JIT, first touch) that no warm-up could take out under multiplexing, so the
 * dispatch gets the same robust estimate as the values it did not measure; the raw reading is kept in
 * metadata multiplex_cold_raw (docs/counters.md). */
static const double *mux_cold_estimate(const mproc *p, const mdisp *x, uint64_t counter_id) {
  const mkey *key = &p->keys[x->key];
  if (key->cold_row != x->row || !key_complete(p, key)) return NULL;
  size_t C = p->plan.n;
  for (size_t ci = 0; ci < C; ci++) {
    size_t kc = x->key * C + ci;
    if (p->info_of[ci] == counter_id) return p->cnt[kc] && !p->cold_only[kc] ? &p->est[kc] : NULL;
  }
  return NULL;
}

/* A measured counter value of a cold dispatch: its warm siblings' estimate instead, marked imputed. */
static void mux_warm_cold(const mproc *p, hp_counter_value *v) {
  if (v->imputed) return;
  mdisp want = {.row = v->dispatch_id};
  const mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
  const double *e = x ? mux_cold_estimate(p, x, v->counter_id) : NULL;
  if (!e) return;
  v->value = *e;
  v->imputed = 1;
}

/* A growable string for the incomplete keys as JSON. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
  int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = b->failed ? 0 : vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (b->failed || w < 0) {
      b->failed = 1;
      return;
    }
    if (b->p && b->n + (size_t)w < b->cap) {
      b->n += (size_t)w;
      return;
    }
    size_t cap = b->cap ? 2 * b->cap : 1024;
    while (cap <= b->n + (size_t)w)
      cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->failed = 1;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
}

static void sb_json_str(sbuf *b, const char *s) {
  sb_printf(b, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      sb_printf(b, "\\%c", *c);
    else if (*c < 0x20)
      sb_printf(b, "\\u%04x", *c);
    else
      sb_printf(b, "%c", *c);
  }
  sb_printf(b, "\"");
}

/* A number as JSON: null where JSON has none (NaN, infinities). */
static void sb_json_num(sbuf *b, double v) {
  if (v - v == 0) /* finite */
    sb_printf(b, "%.17g", v);
  else
    sb_printf(b, "null");
}

#define MAX_WARNED 20 /* incomplete keys named in warnings; the metadata holds them all */

/* Metadata multiplex_cold_raw: per cold dispatch and counter whose reading is replaced by its warm siblings'
 * estimate (mux_warm_cold), the raw reading and the estimate, so the first-use cost stays visible; an input
 * assembled before keeps its own list (its values are imputed already: nothing is replaced again). Counts
 * the replaced values as imputed, not measured. */
static int mux_cold_json(hp_assembly *a, hp_assemble_stats *stats) {
  sbuf b = {0};
  sb_printf(&b, "[");
  for (size_t i = 0; i < a->nmerged; i++) {
    mproc *p = a->mux[i];
    if (!p) continue;
    const char *had = hp_store_metadata(a->merged[i], "multiplex_cold_raw"); /* an assembled input's own */
    size_t hn = had ? strlen(had) : 0;
    if (hn > 2 && had[0] == '[' && had[hn - 1] == ']')
      sb_printf(&b, "%s%.*s", b.n > 1 ? "," : "", (int)(hn - 2), had + 1);
    size_t C = p->plan.n;
    for (size_t t = 0; t < p->nvals; t++) {
      const mval *v = &p->vals[t];
      mdisp want = {.row = v->row};
      const mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_mrow);
      size_t ci = v->kc % C;
      const double *e = x ? mux_cold_estimate(p, x, p->info_of[ci]) : NULL;
      if (!e) continue;
      p->nwarmed++;
      sb_printf(&b, "%s{\"pid\":%" PRId64 ",\"process_start_ns\":%" PRId64 ",\"kernel\":", b.n > 1 ? "," : "",
                p->pid, p->start_ns);
      sb_json_str(&b, p->keys[x->key].name);
      if (*p->keys[x->key].prog) {
        sb_printf(&b, ",\"program\":");
        sb_json_str(&b, p->keys[x->key].prog);
      }
      sb_printf(&b, ",\"dispatch_id\":%" PRIu64 ",\"counter\":", x->dispatch_id);
      sb_json_str(&b, p->plan.names[ci]);
      sb_printf(&b, ",\"raw\":");
      sb_json_num(&b, v->value);
      sb_printf(&b, ",\"estimate\":");
      sb_json_num(&b, *e);
      sb_printf(&b, "}");
    }
    if (stats) {
      stats->measured_values -= p->nwarmed;
      stats->imputed_values += p->nwarmed;
    }
  }
  sb_printf(&b, "]");
  if (b.failed) {
    free(b.p);
    return -1;
  }
  a->mux_cold = b.p;
  return 0;
}

/* Build the imputation of every merged input that asks for it; warnings for incomplete keys. */
static hp_status mux_prepare(hp_assembly *a, hp_assemble_stats *stats) {
  if (!(a->mux = calloc(a->nmerged ? a->nmerged : 1, sizeof *a->mux)))
    return fail(a, HP_ERR_NOMEM, "out of memory");
  sbuf js = {0};
  sb_printf(&js, "[");
  uint64_t nincomplete = 0;
  size_t nmux = 0;
  for (size_t i = 0; i < a->nmerged; i++) {
    hp_store *s = a->merged[i];
    int launch;
    if (a->o.impute == HP_IMPUTE_AUTO) {
      const char *rp = hp_store_metadata(s, "replay"), *pol = hp_store_metadata(s, "multiplex_policy");
      if (!rp || strcmp(rp, "multiplex") || !pol) continue;
      launch = strcmp(pol, "launch") == 0;
    } else {
      launch = a->o.impute == HP_IMPUTE_LAUNCH;
    }
    const char *plan = a->o.plan ? a->o.plan : hp_store_metadata(s, "pass_plan");
    if (!plan || !*plan) {
      free(js.p);
      return fail(a, HP_ERR_INVALID, "%s: no pass plan to impute with (metadata pass_plan missing)",
                  hp_store_path(s));
    }
    mproc *p = calloc(1, sizeof *p);
    if (!p) break;
    a->mux[i] = p;
    p->launch = launch;
    if (plan_parse(plan, &p->plan)) {
      free(js.p);
      return fail(a, HP_ERR_INVALID, "%s: cannot read the pass plan '%s'", hp_store_path(s), plan);
    }
    if (mproc_load(p, s, a->o.min_per_pass)) {
      free(js.p);
      return fail(a, HP_ERR_NOMEM, "%s: cannot read its dispatches and counters (out of memory?)",
                  hp_store_path(s));
    }
    if (!a->mux_policy && !(a->mux_policy = strdup(launch ? "launch" : "kernel"))) break;
    nmux++;
  }
  size_t nm = 0;
  for (size_t i = 0; i < a->nmerged; i++)
    nm += a->mux[i] != NULL;
  for (size_t i = 0; i < a->nmerged; i++) {
    const mproc *p = a->mux[i];
    if (!p) continue;
    if (stats) stats->measured_values += p->nmeasured;
    for (size_t k = 0; k < p->nkeys; k++) {
      const mkey *key = &p->keys[k];
      a->mux_keys++;
      if (key_complete(p, key)) continue;
      sb_printf(&js,
                "%s{\"pid\":%" PRId64 ",\"process_start_ns\":%" PRId64 ",\"kernel\":", js.n > 1 ? "," : "",
                p->pid, p->start_ns);
      sb_json_str(&js, key->name);
      if (*key->prog) {
        sb_printf(&js, ",\"program\":");
        sb_json_str(&js, key->prog);
      }
      if (p->launch)
        sb_printf(&js, ",\"grid\":[%u,%u,%u],\"workgroup\":[%u,%u,%u]", key->grid[0], key->grid[1],
                  key->grid[2], key->wg[0], key->wg[1], key->wg[2]);
      sb_printf(&js,
                ",\"dispatches\":%" PRIu64 ",\"passes\":%u,\"passes_covered\":%zu,\"measured_per_pass\":[",
                key->ndisp, p->plan.npasses, key->covered);
      for (size_t q = 0; q < p->plan.npasses; q++)
        sb_printf(&js, "%s%" PRIu64, q ? "," : "", key->per_pass[q]);
      sb_printf(&js, "]}");
      if (nincomplete++ >= MAX_WARNED) continue;
      char what[512], where[64] = "";
      if (p->launch)
        snprintf(what, sizeof what, "kernel %s grid %u,%u,%u wg %u,%u,%u", key->name, key->grid[0],
                 key->grid[1], key->grid[2], key->wg[0], key->wg[1], key->wg[2]);
      else
        snprintf(what, sizeof what, "kernel %s", key->name);
      if (nm > 1) snprintf(where, sizeof where, " (pid %" PRId64 ")", p->pid);
      warnf(a, "%s%s: %" PRIu64 " dispatch%s cover%s %zu of %u passes: left out of metrics", what, where,
            key->ndisp, key->ndisp == 1 ? "" : "es", key->ndisp == 1 ? "s" : "", key->covered,
            p->plan.npasses);
    }
  }
  sb_printf(&js, "]");
  if (mux_cold_json(a, stats)) {
    free(js.p);
    return fail(a, HP_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < a->nmerged; i++)
    if (a->mux[i] && a->mux[i]->ncold)
      warnf(a,
            "pid %" PRId64 ": %" PRIu64
            " imputed counter%s come%s from a kernel's cold first dispatch only (its "
            "first use may be in them): more dispatches per kernel give warm ones",
            a->mux[i]->pid, a->mux[i]->ncold, a->mux[i]->ncold == 1 ? "" : "s",
            a->mux[i]->ncold == 1 ? "s" : "");
  if (nincomplete > MAX_WARNED)
    warnf(a, "... and %" PRIu64 " more incomplete (metadata multiplex_incomplete lists them all)",
          nincomplete - MAX_WARNED);
  if (stats) {
    stats->keys = a->mux_keys;
    stats->incomplete_keys = nincomplete;
  }
  a->mux_json = js.p;
  if (js.failed || (nmux && !a->mux_policy)) return fail(a, HP_ERR_NOMEM, "out of memory");
  return HP_OK;
}

/* ---- application replay ------------------------------------------------------------------------------ */
typedef struct dkey {
  const char *name;        /* kernel name (owned by the plog) */
  const char *prog;        /* its program's identity, "" unknown (owned by the plog) */
  uint32_t grid[3], wg[3]; /* global and work-group sizes */
  uint32_t policy;         /* hp_match: which fields count (every key of an assembly has the same) */
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
  if (load_knames(p->s, &p->knames, &p->nknames)) return -1;
  hp_dispatch d = {.size = sizeof d};
  size_t cap = 0;
  if (hp_cursor_open(p->s, HP_TABLE_DISPATCH, &c) != HP_OK) return -1;
  while (hp_cursor_next(c, &d) == HP_OK) {
    if (p->nkeys == cap) {
      cap = cap ? 2 * cap : 1024;
      dkey *v = realloc(p->keys, cap * sizeof *v);
      if (!v) {
        hp_cursor_close(c);
        return -1;
      }
      p->keys = v;
    }
    dkey *x = &p->keys[p->nkeys++];
    memset(x, 0, sizeof *x);
    x->name = kname(p->knames, p->nknames, d.kernel_id);
    x->prog = kprog(p->knames, p->nknames, d.kernel_id);
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
    x->row = d.id;
    x->dispatch_id = d.dispatch_id;
    x->policy = policy;
  }
  hp_cursor_close(c);
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
  warnf(
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
  if (!a->runs || !a->nprocs) return fail(a, HP_ERR_NOMEM, "out of memory");
  for (uint32_t k = 0; k < R; k++) {
    size_t m = 0;
    for (size_t i = 0; i < a->n; i++)
      m += a->in[i].run == k;
    if (!(a->runs[k] = calloc(m ? m : 1, sizeof **a->runs))) return fail(a, HP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < a->n; i++) {
      if (a->in[i].run != k) continue;
      plog *p = &a->runs[k][a->nprocs[k]++];
      p->s = a->in[i].s;
      if (plog_load(p, a->o.match))
        return fail(a, HP_ERR_NOMEM, "%s: cannot read its dispatches (out of memory?)", hp_store_path(p->s));
    }
    qsort(a->runs[k], a->nprocs[k], sizeof **a->runs, cmp_start);
  }
  /* the merge's inputs: the first run's processes, in order of start */
  a->nmerged = a->nprocs[0];
  if (!(a->merged = calloc(a->nmerged ? a->nmerged : 1, sizeof *a->merged)))
    return fail(a, HP_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < a->nmerged; i++) {
    a->merged[i] = a->runs[0][i].s;
    a->runs[0][i].input = i;
  }
  /* the whole plan: each run's pass */
  sbuf plan = {0};
  for (uint32_t k = 0; k < R; k++) {
    const char *pp = a->nprocs[k] ? hp_store_metadata(a->runs[k][0].s, "pass_plan") : NULL;
    sb_printf(&plan, "%s%s", k ? ";" : "", pp ? pp : "");
  }
  if (plan.failed) return fail(a, HP_ERR_NOMEM, "out of memory");
  a->replay_plan = plan.p;
  /* processes paired by command line, then order of start among equals */
  for (uint32_t k = 1; k < R; k++) {
    plog *first = a->runs[0];
    size_t n0 = a->nprocs[0];
    unsigned char *taken = calloc(n0 ? n0 : 1, 1);
    if (!taken) return fail(a, HP_ERR_NOMEM, "out of memory");
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
        warnf(a,
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
        warnf(a,
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
        return fail(a, HP_ERR_NOMEM, "%s: cannot read its counters (out of memory?)",
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
    return fail(a, HP_ERR_NOMEM, "out of memory");
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
    if (nomem) return fail(a, HP_ERR_NOMEM, "out of memory");
  }
  return HP_OK;
}

/* A dispatch row of input ix: 1 keep, 0 drop (a begun row of a dispatch that has its own row, or one kept
 * already), -1 out of memory. *incomplete: it is kept as a dispatch that never ended. */
static int begun_row(hp_assembly *a, size_t ix, const hp_dispatch *d, int *incomplete) {
  *incomplete = 0;
  if (!a->begun || !a->begun[ix].n || !is_begun(d)) return 1;
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
    if (incomplete && a->stats) a->stats->incomplete_dispatches++;
  }
  if (a->nunf && t == HP_TABLE_DISPATCH)
    for (size_t k = 0; k < a->nunf; k++)
      if (a->unf[k].ix == ix && a->unf[k].id == ((const hp_dispatch *)row)->process_id) {
        a->unf[k].kept++;
        a->unf[k].incomplete += incomplete;
      }
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
    if (t == HP_TABLE_COUNTER_VALUE && ((hp_counter_value *)row)->dispatch_id)
      ((hp_counter_value *)row)->pass = 1; /* a region's host part stays pass 0 (every run measures it) */
    return 1;
  }
  if (a->mux && a->mux_policy && t == HP_TABLE_METADATA) return !drop_key(((hp_metadata *)row)->key, 0);
  if (a->mux && a->mux[ix] && t == HP_TABLE_DISPATCH) mux_mark_cold(a->mux[ix], row);
  if (a->mux && a->mux[ix] && t == HP_TABLE_COUNTER_VALUE) mux_warm_cold(a->mux[ix], row);
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
      v->pass = a->it_a + 1;
      return 1;
    }
  }
  return 0;
}

/* Imputed values of merged input ix, dispatch by dispatch (it_a) and counter by counter (it_b). */
static int extra_mux(hp_assembly *a, size_t ix, hp_counter_value *v, hp_assemble_stats *stats) {
  mproc *p = a->mux[ix];
  size_t C = p->plan.n;
  for (; a->it_a < p->nd; a->it_a++, a->it_b = 0) {
    const mdisp *x = &p->d[a->it_a];
    if (!key_complete(p, &p->keys[x->key])) continue; /* incomplete: no imputed value at all */
    while (a->it_b < C) {
      size_t ci = a->it_b++;
      if (p->measured[a->it_a * C + ci] || !p->info_of[ci]) continue;
      v->dispatch_id = x->row;
      v->counter_id = p->info_of[ci];
      v->pass = p->plan.pass[ci];
      v->imputed = 1;
      v->value = p->est[x->key * C + ci];
      if (stats) stats->imputed_values++;
      return 1;
    }
  }
  return 0;
}

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
  if (a->mux && a->mux[ix] && t == HP_TABLE_COUNTER_VALUE) return extra_mux(a, ix, row, a->stats);
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
      st = fail(a, HP_ERR_NOMEM, "out of memory");
      break;
    }
    a->unf = u;
    a->unf[a->nunf++] = (struct unfinished){i, p.id, p.pid, cmd, 0, 0, p.exit_signal};
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
  if (!a || !out || out->mode == HP_READ || a->written) return HP_ERR_INVALID;
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
    st = fail(a, HP_ERR_INVALID, "application replay and multiplex imputation exclude each other");
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
      st = fail(a, HP_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == HP_OK && i < a->n; i++)
      a->merged[i] = stream ? NULL : a->in[i].s; /* NULL: hook_open opens it (again) for the merge */
    if (st == HP_OK && !stream && a->o.impute != HP_IMPUTE_NONE) st = mux_prepare(a, &full);
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
    if (st != HP_OK) fail(a, st, "%s", hp_store_error(out)[0] ? hp_store_error(out) : hp_status_str(st));
  }
  for (size_t k = 0; st == HP_OK && k < a->nunf; k++) {
    const struct unfinished *u = &a->unf[k];
    full.unfinished_processes++;
    full.unfinished_dispatches += u->kept;
    char running[96] = "";
    if (u->incomplete)
      snprintf(running, sizeof running, " (%" PRIu64 " running when it died: no end time, samples kept)",
               u->incomplete);
    char how[64];
    ended_how(a, u, how, sizeof how);
    warnf(a,
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
    mproc_free(a->mux[i]);
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
