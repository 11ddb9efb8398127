/* Iteration multiplexing after the run (`hubprof profile --replay multiplex`): each dispatch measured one
 * pass of the plan; per process and key (kernel, or kernel + global and work-group sizes) this imputes every
 * counter a dispatch did not measure as the mean of the key's measured values — only where the key's
 * dispatches measured every pass — reports the keys left incomplete (stderr, metadata multiplex_incomplete)
 * and writes ONE store through the hub. Never writes a zero for a value it does not have. Sections: one
 * process's log · keys and coverage · the incomplete keys as JSON · intermediates · multiplex_merge. */
#include "multiplex.h"
#include "cli.h"

#include "counters.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- one process's log ----------------------------------------------------------------------------------
 */
typedef struct mdisp {
  uint64_t row;            /* the dispatch's row id in its log */
  uint64_t kernel_id;      /* kernel_symbol id in its log */
  uint32_t grid[3], wg[3]; /* global and work-group sizes */
  size_t key;              /* index of its key in mproc.keys */
} mdisp;

typedef struct mkey {
  const char *name;        /* kernel name (owned by the mproc) */
  uint32_t grid[3], wg[3]; /* policy launch only (else 0) */
  uint64_t ndisp;          /* its dispatches */
  size_t covered;          /* passes measured by at least MUX_MIN_PER_PASS of its dispatches */
  uint64_t *per_pass;      /* per pass: how many of its dispatches measured it (fewest over its counters) */
} mkey;

typedef struct mproc {
  hp_store *s;
  char *path;
  int64_t pid, start_ns;
  char **knames; /* kernel_symbol id -> name */
  size_t nknames;
  mdisp *d; /* sorted by row */
  size_t nd;
  mkey *keys;
  size_t nkeys;
  uint64_t *info_of;       /* plan index -> counter_info id in the log, 0 = none */
  double *sum;             /* [key * C + c]: sum of the measured values of counter c */
  uint64_t *cnt;           /* [key * C + c]: how many */
  unsigned char *measured; /* [dispatch * C + c]: 1 when the dispatch measured counter c */
  uint64_t nmeasured, nimputed;
} mproc;

static const hc_plan *g_plan; /* counter names, their passes */
static int g_launch;          /* policy "launch" */

static void mproc_free(mproc *p) {
  hp_store_close(p->s);
  free(p->path);
  for (size_t i = 0; i < p->nknames; i++)
    free(p->knames[i]);
  free(p->knames);
  free(p->d);
  for (size_t k = 0; k < p->nkeys; k++)
    free(p->keys[k].per_pass);
  free(p->keys);
  free(p->info_of);
  free(p->sum);
  free(p->cnt);
  free(p->measured);
  memset(p, 0, sizeof *p);
}

static int cmp_row(const void *a, const void *b) {
  const mdisp *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

static const char *kname(const mproc *p, uint64_t id) {
  return id < p->nknames && p->knames[id] ? p->knames[id] : "";
}

/* Process row, kernel names, counter ids and dispatches of p->s. Returns 0, or -1 (out of memory or an
 * unreadable table). */
static int mproc_load(mproc *p) {
  hp_cursor *c = NULL;
  hp_process pr = {.size = sizeof pr};
  if (hp_cursor_open(p->s, HP_TABLE_PROCESS, &c) == HP_OK) {
    while (hp_cursor_next(c, &pr) == HP_OK) { /* the last row of a process is its latest */
      p->pid = pr.pid;
      p->start_ns = pr.start_ns;
    }
    hp_cursor_close(c);
  }
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(p->s, HP_TABLE_KERNEL_SYMBOL, &c) != HP_OK) return -1;
  while (hp_cursor_next(c, &k) == HP_OK) {
    if (k.id > 1000000) continue;
    if (k.id >= p->nknames) {
      size_t n = k.id + 16;
      char **v = realloc(p->knames, n * sizeof *v);
      if (!v) {
        hp_cursor_close(c);
        return -1;
      }
      memset(v + p->nknames, 0, (n - p->nknames) * sizeof *v);
      p->knames = v;
      p->nknames = n;
    }
    free(p->knames[k.id]);
    p->knames[k.id] = strdup(k.name);
  }
  hp_cursor_close(c);
  size_t C = g_plan->ncounters;
  p->info_of = calloc(C ? C : 1, sizeof *p->info_of);
  if (!p->info_of) return -1;
  hp_counter_info ci = {.size = sizeof ci};
  if (hp_cursor_open(p->s, HP_TABLE_COUNTER_INFO, &c) == HP_OK) {
    while (hp_cursor_next(c, &ci) == HP_OK)
      for (size_t i = 0; i < C; i++)
        if (strcmp(g_plan->names[i], ci.name) == 0) p->info_of[i] = ci.id;
    hp_cursor_close(c);
  }
  hp_dispatch d = {.size = sizeof d};
  size_t cap = 0;
  if (hp_cursor_open(p->s, HP_TABLE_DISPATCH, &c) != HP_OK) return -1;
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
    x->kernel_id = d.kernel_id;
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
  }
  hp_cursor_close(c);
  qsort(p->d, p->nd, sizeof *p->d, cmp_row);
  return 0;
}

/* ---- keys and coverage ----------------------------------------------------------------------------------
 */
static const mproc *g_sorting; /* the process whose dispatches cmp_key orders */

/* Kernel name, then (policy launch) global and work-group sizes. */
static int key_cmp(const mproc *p, const mdisp *x, const mdisp *y) {
  int c = x->kernel_id == y->kernel_id ? 0 : strcmp(kname(p, x->kernel_id), kname(p, y->kernel_id));
  if (c || !g_launch) return c;
  c = memcmp(x->grid, y->grid, sizeof x->grid);
  return c ? c : memcmp(x->wg, y->wg, sizeof x->wg);
}
static int cmp_key(const void *a, const void *b) {
  const mdisp *x = &g_sorting->d[*(const size_t *)a], *y = &g_sorting->d[*(const size_t *)b];
  int c = key_cmp(g_sorting, x, y);
  return c ? c : x->row < y->row ? -1 : x->row > y->row;
}

/* Group the dispatches into keys (ordered by name and sizes), then read the counter values: which counters
 * each dispatch measured, and per key the sum and count of each counter's values. Returns 0 or -1. */
static int mproc_cover(mproc *p) {
  size_t C = g_plan->ncounters, P = g_plan->npasses;
  size_t *ord = malloc((p->nd ? p->nd : 1) * sizeof *ord);
  if (!ord) return -1;
  for (size_t i = 0; i < p->nd; i++)
    ord[i] = i;
  g_sorting = p;
  qsort(ord, p->nd, sizeof *ord, cmp_key);
  for (size_t i = 0; i < p->nd; i++)
    p->nkeys += !i || key_cmp(p, &p->d[ord[i - 1]], &p->d[ord[i]]) != 0;
  p->keys = calloc(p->nkeys ? p->nkeys : 1, sizeof *p->keys);
  if (!p->keys) {
    free(ord);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < p->nd; i++) {
    mdisp *x = &p->d[ord[i]];
    if (i && key_cmp(p, &p->d[ord[i - 1]], x) != 0) k++;
    mkey *y = &p->keys[k];
    if (!y->ndisp) {
      y->name = kname(p, x->kernel_id);
      if (g_launch) {
        memcpy(y->grid, x->grid, sizeof y->grid);
        memcpy(y->wg, x->wg, sizeof y->wg);
      }
    }
    y->ndisp++;
    x->key = k;
  }
  free(ord);
  size_t nk = p->nkeys ? p->nkeys : 1;
  p->sum = calloc(nk * (C ? C : 1), sizeof *p->sum);
  p->cnt = calloc(nk * (C ? C : 1), sizeof *p->cnt);
  p->measured = calloc((p->nd ? p->nd : 1) * (C ? C : 1), 1);
  if (!p->sum || !p->cnt || !p->measured) return -1;
  /* counter_info id -> plan index */
  uint64_t maxid = 0;
  for (size_t i = 0; i < C; i++)
    if (p->info_of[i] > maxid) maxid = p->info_of[i];
  long *plan_of = malloc((maxid + 1) * sizeof *plan_of);
  if (!plan_of) return -1;
  for (uint64_t i = 0; i <= maxid; i++)
    plan_of[i] = -1;
  for (size_t i = 0; i < C; i++)
    if (p->info_of[i]) plan_of[p->info_of[i]] = (long)i;
  hp_cursor *c = NULL;
  hp_counter_value v = {.size = sizeof v};
  if (hp_cursor_open(p->s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
    while (hp_cursor_next(c, &v) == HP_OK) {
      if (v.imputed || v.counter_id > maxid || plan_of[v.counter_id] < 0) continue;
      mdisp want = {.row = v.dispatch_id};
      mdisp *x = bsearch(&want, p->d, p->nd, sizeof *p->d, cmp_row);
      if (!x) continue;
      size_t ci = (size_t)plan_of[v.counter_id];
      unsigned char *m = &p->measured[(size_t)(x - p->d) * C + ci];
      if (*m) continue; /* a counter twice on one dispatch: the first value counts */
      *m = 1;
      p->sum[x->key * C + ci] += v.value;
      p->cnt[x->key * C + ci]++;
      p->nmeasured++;
    }
    hp_cursor_close(c);
  }
  free(plan_of);
  /* coverage of pass q: the fewest measurements among its counters */
  for (size_t y = 0; y < p->nkeys; y++) {
    mkey *key = &p->keys[y];
    if (!(key->per_pass = calloc(P ? P : 1, sizeof *key->per_pass))) return -1;
    for (size_t q = 0; q < P; q++) {
      uint64_t least = UINT64_MAX;
      for (size_t i = 0; i < C; i++)
        if (g_plan->pass[i] == q + 1 && p->cnt[y * C + i] < least) least = p->cnt[y * C + i];
      key->per_pass[q] = least == UINT64_MAX ? 0 : least;
      key->covered += key->per_pass[q] >= MUX_MIN_PER_PASS;
    }
  }
  return 0;
}

static int key_complete(const mkey *k) { return k->covered == g_plan->npasses; }

/* ---- the incomplete keys as JSON ------------------------------------------------------------------------
 */
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

/* Append one incomplete key to the JSON array in b (documented in docs/replay.md). */
static void json_key(sbuf *b, const mproc *p, const mkey *k) {
  sb_printf(b, "%s{\"pid\":%" PRId64 ",\"process_start_ns\":%" PRId64 ",\"kernel\":", b->n > 1 ? "," : "",
            p->pid, p->start_ns);
  sb_json_str(b, k->name);
  if (g_launch)
    sb_printf(b, ",\"grid\":[%u,%u,%u],\"workgroup\":[%u,%u,%u]", k->grid[0], k->grid[1], k->grid[2],
              k->wg[0], k->wg[1], k->wg[2]);
  sb_printf(b, ",\"dispatches\":%" PRIu64 ",\"passes\":%zu,\"passes_covered\":%zu,\"measured_per_pass\":[",
            k->ndisp, g_plan->npasses, k->covered);
  for (size_t q = 0; q < g_plan->npasses; q++)
    sb_printf(b, "%s%" PRIu64, q ? "," : "", k->per_pass[q]);
  sb_printf(b, "]}");
}

/* ---- intermediates: the log's rows unchanged, then the imputed values ------------------------------------
 */
/* Write process p's intermediate store at path; `meta` (process 0 only) adds the multiplex_* metadata. */
static hp_status write_process(mproc *p, const char *path, const run_opts *o, const char *incomplete,
                               uint64_t nkeys, int meta) {
  static const hp_table copied[] = {HP_TABLE_NODE,          HP_TABLE_PROCESS,      HP_TABLE_THREAD,
                                    HP_TABLE_AGENT,         HP_TABLE_QUEUE,        HP_TABLE_CODE_OBJECT,
                                    HP_TABLE_KERNEL_SYMBOL, HP_TABLE_COUNTER_INFO, HP_TABLE_DISPATCH,
                                    HP_TABLE_COUNTER_VALUE, HP_TABLE_REGION};
  hp_store *out = NULL;
  hp_status st = hp_store_open(path, "log", HP_CREATE, &out);
  if (st == HP_OK && meta) { /* first: the merge keeps the first value of a key */
    char b[64];
    st = hp_write_metadata(out, "replay", "multiplex");
    if (st == HP_OK) st = hp_write_metadata(out, "multiplex_policy", o->multiplex);
    if (st == HP_OK) st = hp_write_metadata(out, "multiplex_imputation", "mean");
    snprintf(b, sizeof b, "%d", MUX_MIN_PER_PASS);
    if (st == HP_OK) st = hp_write_metadata(out, "multiplex_min_per_pass", b);
    snprintf(b, sizeof b, "%" PRIu64, nkeys);
    if (st == HP_OK) st = hp_write_metadata(out, "multiplex_keys", b);
    if (st == HP_OK) st = hp_write_metadata(out, "multiplex_incomplete", incomplete);
  }
  if (st == HP_OK) { /* the collector's own metadata, less what the lines above say */
    hp_cursor *c = NULL;
    if (hp_cursor_open(p->s, HP_TABLE_METADATA, &c) == HP_OK) {
      hp_metadata m = {.size = sizeof m};
      while (st == HP_OK && hp_cursor_next(c, &m) == HP_OK)
        if (!meta || (strcmp(m.key, "replay") && strncmp(m.key, "multiplex_", 10)))
          st = hp_write_metadata(out, m.key, m.value);
      hp_cursor_close(c);
    }
  }
  for (size_t t = 0; st == HP_OK && t < sizeof copied / sizeof copied[0]; t++)
    st = run_copy_table(p->s, out, copied[t]);
  size_t C = g_plan->ncounters;
  for (size_t i = 0; st == HP_OK && i < p->nd; i++) {
    const mdisp *x = &p->d[i];
    if (!key_complete(&p->keys[x->key])) continue; /* incomplete: no imputed value at all */
    for (size_t ci = 0; st == HP_OK && ci < C; ci++) {
      if (p->measured[i * C + ci] || !p->info_of[ci]) continue;
      hp_counter_value v = {.size = sizeof v,
                            .dispatch_id = x->row,
                            .counter_id = p->info_of[ci],
                            .pass = g_plan->pass[ci],
                            .imputed = 1,
                            .value = p->sum[x->key * C + ci] / (double)p->cnt[x->key * C + ci]};
      st = hp_write_counter_value(out, &v);
      p->nimputed++;
    }
  }
  if (st == HP_OK) {
    st = hp_store_close(out);
  } else {
    if (out && hp_store_error(out)[0]) cli_warn("%s", hp_store_error(out));
    hp_store_abort(out);
  }
  return st;
}

/* ---- multiplex_merge ------------------------------------------------------------------------------------
 */
#define MAX_WARNED 20 /* incomplete keys named on stderr; the metadata holds them all */

int multiplex_merge(const run_opts *o, const char *output, const char *dir) {
  size_t nlogs = 0;
  char **logs = run_list_logs(dir, &nlogs);
  if (!nlogs) {
    cli_warn("no OpenCL activity recorded (did the application use OpenCL?); %s not written", output);
    free(logs);
    return 1;
  }
  hc_plan *plan = NULL;
  if (hc_plan_parse(o->plan, &plan) != HC_OK) {
    cli_error("cannot read the plan '%s'", o->plan);
    run_free_list(logs, nlogs);
    return 1;
  }
  g_plan = plan;
  g_launch = strcmp(o->multiplex, "launch") == 0;
  mproc *P = calloc(nlogs, sizeof *P);
  char **paths = calloc(nlogs, sizeof *paths);
  hp_store **in = calloc(nlogs, sizeof *in);
  size_t np = 0, nin = 0;
  int rc = P && paths && in ? 0 : 1;
  if (rc) cli_error("out of memory");
  for (size_t i = 0; !rc && i < nlogs; i++) {
    mproc *p = &P[np];
    hp_status st = hp_store_open(logs[i], "log", HP_READ, &p->s);
    if (st != HP_OK) { /* a process killed before its first block: nothing to merge from it */
      cli_warn("%s (skipped)", p->s && hp_store_error(p->s)[0] ? hp_store_error(p->s) : hp_status_str(st));
      hp_store_abort(p->s);
      p->s = NULL;
      continue;
    }
    if (hp_store_damage(p->s, NULL) != HP_OK && !o->quiet)
      cli_warn("%s (a process ended abruptly; keeping what it committed)", hp_store_error(p->s));
    p->path = strdup(logs[i]);
    if (!p->path || mproc_load(p) != 0 || mproc_cover(p) != 0) {
      cli_error("%s: cannot read its dispatches and counters (out of memory?); the per-process logs are kept "
                "in %s",
                logs[i], dir);
      mproc_free(p);
      rc = 1;
      break;
    }
    np++;
  }
  /* the incomplete keys: stderr and the metadata */
  sbuf js = {0};
  sb_printf(&js, "[");
  uint64_t nkeys = 0, nincomplete = 0;
  for (size_t i = 0; !rc && i < np; i++)
    for (size_t k = 0; k < P[i].nkeys; k++) {
      const mkey *key = &P[i].keys[k];
      nkeys++;
      if (key_complete(key)) continue;
      json_key(&js, &P[i], key);
      if (nincomplete++ >= MAX_WARNED) continue;
      char what[512], where[64] = "";
      if (g_launch)
        snprintf(what, sizeof what, "kernel %s grid %u,%u,%u wg %u,%u,%u", key->name, key->grid[0],
                 key->grid[1], key->grid[2], key->wg[0], key->wg[1], key->wg[2]);
      else
        snprintf(what, sizeof what, "kernel %s", key->name);
      if (np > 1) snprintf(where, sizeof where, " (pid %" PRId64 ")", P[i].pid);
      cli_warn("%s%s: %" PRIu64 " dispatch%s cover%s %zu of %zu passes: left out of metrics", what, where,
               key->ndisp, key->ndisp == 1 ? "" : "es", key->ndisp == 1 ? "s" : "", key->covered,
               plan->npasses);
    }
  sb_printf(&js, "]");
  if (nincomplete > MAX_WARNED)
    cli_warn("... and %" PRIu64 " more incomplete (metadata multiplex_incomplete lists them all)",
             nincomplete - MAX_WARNED);
  if (!rc && js.failed) {
    cli_error("out of memory");
    rc = 1;
  }
  /* one intermediate per process, merged into the output */
  hp_status st = HP_OK;
  uint64_t nmeasured = 0, nimputed = 0;
  for (size_t i = 0; !rc && st == HP_OK && i < np; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/multiplex-%zu.hplog", dir, i);
    if (!(paths[i] = strdup(path))) {
      st = HP_ERR_NOMEM;
      break;
    }
    st = write_process(&P[i], path, o, js.p, nkeys, i == 0);
    if (st == HP_OK) st = hp_store_open(path, "log", HP_READ, &in[nin]);
    if (st == HP_OK) nin++;
    nmeasured += P[i].nmeasured;
    nimputed += P[i].nimputed;
  }
  hp_store *out = NULL;
  hp_merge_stats stats = {.size = sizeof stats};
  if (!rc && st == HP_OK) st = hp_store_open(output, o->format, HP_CREATE, &out);
  if (!rc && st == HP_OK) st = hp_merge(out, in, nin, &stats);
  if (!rc && st == HP_OK) st = hp_store_commit(out);
  if (!rc && st != HP_OK) {
    cli_warn("%s; the per-process logs are kept in %s",
             out && hp_store_error(out)[0] ? hp_store_error(out) : hp_status_str(st), dir);
    rc = 1;
  }
  hp_store_abort(out);
  uint64_t lost = 0;
  for (size_t i = 0; i < np; i++) {
    hp_cursor *c;
    if (P[i].s && hp_cursor_open(P[i].s, HP_TABLE_PROCESS, &c) == HP_OK) {
      hp_process pr = {.size = sizeof pr};
      while (hp_cursor_next(c, &pr) == HP_OK)
        lost += pr.lost_records;
      hp_cursor_close(c);
    }
  }
  if (!rc && !o->quiet) {
    fprintf(stderr,
            "hubprof: %" PRIu64 " dispatches of %" PRIu64 " kernel%s in %" PRIu64 " process%s, %" PRIu64
            " measured and %" PRIu64 " imputed counter values in %zu pass%s (iteration multiplexing, policy "
            "'%s': %" PRIu64 " of %" PRIu64 " key%s complete) -> %s (%s)\n",
            stats.rows_out[HP_TABLE_DISPATCH], stats.rows_out[HP_TABLE_KERNEL_SYMBOL],
            stats.rows_out[HP_TABLE_KERNEL_SYMBOL] == 1 ? "" : "s", stats.rows_out[HP_TABLE_PROCESS],
            stats.rows_out[HP_TABLE_PROCESS] == 1 ? "" : "es", nmeasured, nimputed, plan->npasses,
            plan->npasses == 1 ? "" : "es", o->multiplex, nkeys - nincomplete, nkeys, nkeys == 1 ? "" : "s",
            output, o->format);
    if (lost) cli_warn("%" PRIu64 " records were lost (the collector ran out of space)", lost);
  }
  for (size_t i = 0; i < nin; i++)
    hp_store_close(in[i]);
  for (size_t i = 0; paths && i < np; i++)
    if (paths[i]) {
      unlink(paths[i]); /* intermediates go; on failure the logs stay for the user */
      free(paths[i]);
    }
  for (size_t i = 0; i < np; i++)
    mproc_free(&P[i]);
  free(P);
  free(paths);
  free(in);
  free(js.p);
  hc_plan_free(plan);
  g_plan = NULL;
  run_free_list(logs, nlogs);
  return rc;
}
