/* Application replay (`hubprof profile --replay application`): runs the application once per pass, each run's
 * logs in their own directory, matches every later run's dispatches to the first run's by a policy (name,
 * grid, all), and writes ONE store: the first run's dispatches with every pass's counter values attached.
 * A dispatch that does not match is reported and its values left out: never joined to another dispatch.
 * Sections: reading one log · keys and matching · one process's output · the runs. */
#include "cli.h"
#include "run_app.h"

#include "counters.h"
#include "hubprof/hub.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MATCH_NAME, MATCH_GRID, MATCH_ALL };

/* ---- reading one log ------------------------------------------------------------------------------------
 */
typedef struct dkey {
  const char *name;        /* kernel name (owned by the plog) */
  uint32_t grid[3], wg[3]; /* global and work-group sizes */
  uint64_t seq;            /* position in the process's sequence of dispatches (by dispatch id) */
  uint64_t occ;            /* occurrence among the dispatches with the same policy fields */
  uint64_t row;            /* the dispatch's row id in its log */
  uint64_t dispatch_id;    /* the collector's id */
  uint64_t target;         /* matched row id of the first run's dispatch, 0 = none */
} dkey;

typedef struct plog { /* one process's log of one run */
  hp_store *s;
  char *path;
  int64_t start_ns;
  char *command;
  char **knames; /* kernel_symbol id -> name */
  size_t nknames;
  dkey *keys;
  size_t nkeys;
} plog;

static void plog_free(plog *p) {
  hp_store_close(p->s);
  free(p->path);
  free(p->command);
  for (size_t i = 0; i < p->nknames; i++)
    free(p->knames[i]);
  free(p->knames);
  free(p->keys);
  memset(p, 0, sizeof *p);
}

static int cmp_dispatch_id(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  return x->dispatch_id < y->dispatch_id ? -1 : x->dispatch_id > y->dispatch_id;
}

/* Load the process row, kernel names and dispatch keys of p->s. Returns 0 or -1 (message printed). */
static int plog_load(plog *p) {
  hp_cursor *c = NULL;
  hp_process pr = {.size = sizeof pr};
  if (hp_cursor_open(p->s, HP_TABLE_PROCESS, &c) == HP_OK) {
    while (hp_cursor_next(c, &pr) == HP_OK) { /* the last row of a process is its latest */
      free(p->command);
      p->command = strdup(pr.command);
      p->start_ns = pr.start_ns;
    }
    hp_cursor_close(c);
  }
  if (!p->command) p->command = strdup("");
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(p->s, HP_TABLE_KERNEL_SYMBOL, &c) != HP_OK) return -1;
  while (hp_cursor_next(c, &k) == HP_OK) {
    if (k.id > 1000000) continue;
    if (k.id >= p->nknames) {
      size_t n = k.id + 16;
      char **v = realloc(p->knames, n * sizeof *v);
      if (!v) break;
      memset(v + p->nknames, 0, (n - p->nknames) * sizeof *v);
      p->knames = v;
      p->nknames = n;
    }
    free(p->knames[k.id]);
    p->knames[k.id] = strdup(k.name);
  }
  hp_cursor_close(c);
  hp_dispatch d = {.size = sizeof d};
  size_t cap = 0;
  if (hp_cursor_open(p->s, HP_TABLE_DISPATCH, &c) != HP_OK) return -1;
  hp_status st;
  while ((st = hp_cursor_next(c, &d)) == HP_OK) {
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
    x->name = d.kernel_id < p->nknames && p->knames[d.kernel_id] ? p->knames[d.kernel_id] : "";
    memcpy(x->grid, d.grid, sizeof x->grid);
    memcpy(x->wg, d.workgroup, sizeof x->wg);
    x->row = d.id;
    x->dispatch_id = d.dispatch_id;
  }
  hp_cursor_close(c);
  qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_dispatch_id);
  for (size_t i = 0; i < p->nkeys; i++)
    p->keys[i].seq = i;
  return 0;
}

/* ---- keys and matching ----------------------------------------------------------------------------------
 */
static int g_policy;

/* Order of the policy's fields, then occurrence. */
static int cmp_fields(const dkey *x, const dkey *y) {
  int c = strcmp(x->name, y->name);
  if (c || g_policy == MATCH_NAME) return c;
  c = memcmp(x->grid, y->grid, sizeof x->grid);
  if (c) return c;
  return memcmp(x->wg, y->wg, sizeof x->wg);
}
static int cmp_fields_seq(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  int c = cmp_fields(x, y);
  if (c) return c;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}
static int cmp_key(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  int c = cmp_fields(x, y);
  if (c) return c;
  return x->occ < y->occ ? -1 : x->occ > y->occ;
}
static int cmp_row(const void *a, const void *b) {
  const dkey *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Number each dispatch among its equals (name: same kernel; grid: same kernel and sizes) in sequence order,
 * or by its position in the whole sequence (all); leaves the keys sorted by (fields, occ). */
static void key_prepare(plog *p) {
  qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_fields_seq);
  for (size_t i = 0; i < p->nkeys; i++) {
    if (g_policy == MATCH_ALL)
      p->keys[i].occ = p->keys[i].seq;
    else
      p->keys[i].occ = i && cmp_fields(&p->keys[i - 1], &p->keys[i]) == 0 ? p->keys[i - 1].occ + 1 : 0;
  }
  qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_key);
}

/* Match every key of `later` to `first` (both prepared); returns the matched count. */
static size_t match(plog *first, plog *later) {
  size_t n = 0;
  for (size_t i = 0; i < later->nkeys; i++) {
    dkey *x = &later->keys[i];
    dkey *y = bsearch(x, first->keys, first->nkeys, sizeof *x, cmp_key);
    x->target = y ? y->row : 0;
    n += y != NULL;
  }
  return n;
}

/* ---- one process's output: the first run's rows, every run's values ----------------------------------- */
typedef struct runs {
  const run_opts *o;
  const hc_plan *plan;
  const hc_provider *prov;
  size_t nruns;
  plog **procs;   /* procs[k][i]: process i of run k (matched by position) */
  size_t *nprocs; /* per run */
  int *rcs;       /* exit status per run */
  char **dirs;
} runs;

static long plan_index(const hc_plan *plan, const char *name) {
  for (size_t i = 0; i < plan->ncounters; i++)
    if (strcmp(plan->names[i], name) == 0) return (long)i;
  return -1;
}

/* Write process i's intermediate store at `path`: tables of the first run's log, counter_info of the whole
 * plan, dispatches with their pass count, the matched values of every run. */
static hp_status write_process(runs *R, size_t i, const char *path, uint64_t *nvalues) {
  plog *first = &R->procs[0][i];
  hp_store *out = NULL;
  hp_status st = hp_store_open(path, "log", HP_CREATE, &out);
  static const hp_table plain[] = {HP_TABLE_NODE,          HP_TABLE_PROCESS, HP_TABLE_THREAD,
                                   HP_TABLE_AGENT,         HP_TABLE_QUEUE,   HP_TABLE_CODE_OBJECT,
                                   HP_TABLE_KERNEL_SYMBOL, HP_TABLE_REGION};
  for (size_t t = 0; st == HP_OK && t < sizeof plain / sizeof plain[0]; t++)
    st = run_copy_table(first->s, out, plain[t]);
  /* metadata: the first run's, with the profile's own replay description */
  hp_cursor *c = NULL;
  if (st == HP_OK && hp_cursor_open(first->s, HP_TABLE_METADATA, &c) == HP_OK) {
    hp_metadata m = {.size = sizeof m};
    while (st == HP_OK && hp_cursor_next(c, &m) == HP_OK)
      if (strcmp(m.key, "replay") && strcmp(m.key, "pass_plan") && strcmp(m.key, "replay_pass"))
        st = hp_write_metadata(out, m.key, m.value);
    hp_cursor_close(c);
  }
  if (st == HP_OK) st = hp_write_metadata(out, "replay", "application");
  if (st == HP_OK) st = hp_write_metadata(out, "pass_plan", R->o->plan);
  if (st == HP_OK) st = hp_write_metadata(out, "replay_match", R->o->match);
  for (size_t j = 0; st == HP_OK && j < R->plan->ncounters; j++) {
    long x = hc_provider_find(R->prov, R->plan->names[j]);
    const hc_counter *hc = x >= 0 ? hc_provider_counter(R->prov, (size_t)x) : NULL;
    hp_counter_info ci = {.size = sizeof ci,
                          .id = j + 1,
                          .name = R->plan->names[j],
                          .description = hc ? hc->description : "",
                          .block = hc ? hc->block : "",
                          .unit = hc ? hc->unit : "",
                          .expression = ""};
    st = hp_write_counter_info(out, &ci);
  }
  /* passes per dispatch of the first run: 1 + the later runs it matched in */
  size_t n1 = first->nkeys;
  uint32_t *passes = calloc(n1 ? n1 : 1, sizeof *passes);
  dkey *by_row = malloc((n1 ? n1 : 1) * sizeof *by_row);
  if (!passes || !by_row) st = HP_ERR_NOMEM;
  if (st == HP_OK) {
    memcpy(by_row, first->keys, n1 * sizeof *by_row);
    qsort(by_row, n1, sizeof *by_row, cmp_row);
  }
  /* values of every run, attached to the first run's dispatch */
  for (size_t k = 0; st == HP_OK && k < R->nruns; k++) {
    if (i >= R->nprocs[k]) continue;
    plog *p = &R->procs[k][i];
    if (!p->s) continue;
    dkey *rows = k ? malloc((p->nkeys ? p->nkeys : 1) * sizeof *rows) : NULL;
    if (k && !rows) {
      st = HP_ERR_NOMEM;
      break;
    }
    if (k) {
      memcpy(rows, p->keys, p->nkeys * sizeof *rows);
      qsort(rows, p->nkeys, sizeof *rows, cmp_row);
    }
    for (size_t d = 0; k && d < p->nkeys; d++)
      if (rows[d].target) {
        dkey want = {.row = rows[d].target};
        dkey *y = bsearch(&want, by_row, n1, sizeof *y, cmp_row);
        if (y) passes[y - by_row]++;
      }
    if (!k)
      for (size_t d = 0; d < n1; d++)
        passes[d]++;
    /* counter_info ids of this run -> plan index */
    long map[1024];
    for (size_t m = 0; m < 1024; m++)
      map[m] = -1;
    if (hp_cursor_open(p->s, HP_TABLE_COUNTER_INFO, &c) == HP_OK) {
      hp_counter_info ci = {.size = sizeof ci};
      while (hp_cursor_next(c, &ci) == HP_OK)
        if (ci.id < 1024) map[ci.id] = plan_index(R->plan, ci.name);
      hp_cursor_close(c);
    }
    if (hp_cursor_open(p->s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
      hp_counter_value v = {.size = sizeof v};
      while (st == HP_OK && hp_cursor_next(c, &v) == HP_OK) {
        if (v.counter_id >= 1024 || map[v.counter_id] < 0) continue;
        uint64_t target = v.dispatch_id;
        if (k) {
          dkey want = {.row = v.dispatch_id};
          dkey *y = bsearch(&want, rows, p->nkeys, sizeof *y, cmp_row);
          target = y ? y->target : 0;
        }
        if (!target) continue; /* unmatched: never joined to another dispatch */
        hp_counter_value w = {.size = sizeof w,
                              .dispatch_id = target,
                              .counter_id = (uint64_t)map[v.counter_id] + 1,
                              .pass = (uint32_t)(k + 1),
                              .value = v.value};
        st = hp_write_counter_value(out, &w);
        (*nvalues)++;
      }
      hp_cursor_close(c);
    }
    free(rows);
  }
  /* the first run's dispatches, with the passes that measured them */
  if (st == HP_OK && hp_cursor_open(first->s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    hp_dispatch d = {.size = sizeof d};
    while (st == HP_OK && hp_cursor_next(c, &d) == HP_OK) {
      dkey want = {.row = d.id};
      dkey *y = bsearch(&want, by_row, n1, sizeof *y, cmp_row);
      d.passes = y ? passes[y - by_row] : 1;
      d.bytes_restored = 0; /* nothing is restored: every run starts afresh */
      st = hp_write_dispatch(out, &d);
    }
    hp_cursor_close(c);
  }
  free(passes);
  free(by_row);
  if (st == HP_OK) {
    st = hp_store_close(out);
  } else {
    if (out && hp_store_error(out)[0]) cli_warn("%s", hp_store_error(out));
    hp_store_abort(out);
  }
  return st;
}

/* ---- the runs -------------------------------------------------------------------------------------------
 */
static int cmp_start(const void *a, const void *b) {
  const plog *x = a, *y = b;
  return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Open and load every log of run k. Returns the number of process logs. */
static size_t load_run(runs *R, size_t k) {
  size_t n = 0;
  char **logs = run_list_logs(R->dirs[k], &n);
  plog *v = calloc(n ? n : 1, sizeof *v);
  size_t m = 0;
  for (size_t i = 0; v && i < n; i++) {
    hp_store *s = NULL;
    hp_status st = hp_store_open(logs[i], "log", HP_READ, &s);
    if (st != HP_OK) {
      cli_warn("%s (skipped)", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
      hp_store_abort(s);
      continue;
    }
    if (hp_store_damage(s, NULL) != HP_OK && !R->o->quiet)
      cli_warn("%s (a process ended abruptly; keeping what it committed)", hp_store_error(s));
    v[m].s = s;
    v[m].path = strdup(logs[i]);
    if (plog_load(&v[m]) != 0) {
      cli_warn("%s: cannot read its dispatches (skipped)", logs[i]);
      plog_free(&v[m]);
      continue;
    }
    key_prepare(&v[m]);
    m++;
  }
  run_free_list(logs, n);
  qsort(v, m, sizeof *v, cmp_start);
  R->procs[k] = v;
  R->nprocs[k] = m;
  return m;
}

/* The program a process ran: the first word of its command line. */
static int same_program(const char *a, const char *b) {
  size_t la = strcspn(a, " "), lb = strcspn(b, " ");
  return la == lb && strncmp(a, b, la) == 0;
}

/* Match run k (k > 0) to the first run, process by process (in order of start, the same program); report
 * what did not match. */
static void match_run(runs *R, size_t k, uint64_t *unmatched_total) {
  size_t np = R->nprocs[0] < R->nprocs[k] ? R->nprocs[0] : R->nprocs[k];
  if (R->nprocs[k] != R->nprocs[0])
    cli_warn("pass %zu: the run had %zu process%s using OpenCL, the first run %zu; processes are matched in "
             "order of start",
             k + 1, R->nprocs[k], R->nprocs[k] == 1 ? "" : "es", R->nprocs[0]);
  for (size_t i = 0; i < R->nprocs[k]; i++) {
    plog *p = &R->procs[k][i];
    if (i >= np || !same_program(p->command, R->procs[0][i].command)) {
      if (i < np)
        cli_warn("pass %zu: process %zu ran '%s', the first run's ran '%s': its %zu dispatches are left out",
                 k + 1, i + 1, p->command, R->procs[0][i].command, p->nkeys);
      for (size_t d = 0; d < p->nkeys; d++)
        p->keys[d].target = 0;
      *unmatched_total += p->nkeys;
      continue;
    }
    plog *f = &R->procs[0][i];
    size_t got = match(f, p);
    size_t extra = p->nkeys - got, missing = f->nkeys - got;
    if (!extra && !missing) continue;
    *unmatched_total += extra + missing;
    char first_few[512] = "";
    size_t w = 0, shown = 0;
    /* the first few unmatched dispatches of this run, in sequence order */
    dkey *seq = malloc((p->nkeys ? p->nkeys : 1) * sizeof *seq);
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
    cli_warn("pass %zu: %zu dispatch%s matched no dispatch of the first run and %zu of the first run's had "
             "no match (policy '%s'); their counters of this pass are left out%s",
             k + 1, extra, extra == 1 ? "" : "es", missing, R->o->match, first_few);
  }
}

int app_replay(const run_opts *o, const hc_plan *plan, const hc_provider *prov, int argc, char **argv) {
  char *output = NULL, *collector = NULL;
  int rc = run_prepare(o, argv[0], &output, &collector);
  if (rc) return rc;
  g_policy = strcmp(o->match, "name") == 0  ? MATCH_NAME
             : strcmp(o->match, "all") == 0 ? MATCH_ALL
                                            : MATCH_GRID;
  runs R = {.o = o, .plan = plan, .prov = prov, .nruns = plan->npasses};
  R.procs = calloc(R.nruns, sizeof *R.procs);
  R.nprocs = calloc(R.nruns, sizeof *R.nprocs);
  R.rcs = calloc(R.nruns, sizeof *R.rcs);
  R.dirs = calloc(R.nruns, sizeof *R.dirs);
  size_t plen = 0;
  for (size_t i = 0; i < plan->ncounters; i++)
    plen += strlen(plan->names[i]) + 1;
  char *pass_str = malloc(plen + 1);
  int app_rc = CLI_FAIL, ok = R.procs && R.nprocs && R.rcs && R.dirs && pass_str;
  if (!ok) cli_error("profile: out of memory");
  size_t ran = 0;
  for (size_t k = 0; ok && k < R.nruns; k++) {
    size_t w = 0;
    for (size_t i = 0; i < plan->ncounters; i++)
      if (plan->pass[i] == k + 1) w += (size_t)sprintf(pass_str + w, "%s%s", w ? "," : "", plan->names[i]);
    if (!(R.dirs[k] = run_make_log_dir(output))) {
      cli_error("cannot create a directory for the logs: %s", strerror(errno));
      ok = 0;
      break;
    }
    if (!o->quiet) fprintf(stderr, "hubprof: [pass %zu/%zu] %s\n", k + 1, R.nruns, pass_str);
    int started = 0;
    R.rcs[k] = run_launch(o, collector, R.dirs[k], pass_str, k + 1, argc, argv, &started);
    if (!started) {
      app_rc = R.rcs[k];
      ok = 0;
      break;
    }
    ran++;
    if (k == 0)
      app_rc = R.rcs[0];
    else if (R.rcs[k] != R.rcs[0])
      cli_warn("pass %zu: the application exited with %d, in the first run with %d (hubprof exits with the "
               "first run's)",
               k + 1, R.rcs[k], R.rcs[0]);
  }
  uint64_t unmatched = 0, nvalues = 0, ndisp = 0;
  int keep_logs = 0;
  if (ok) {
    for (size_t k = 0; k < R.nruns; k++)
      load_run(&R, k);
    if (!R.nprocs[0]) {
      cli_warn(
          "no OpenCL activity recorded in the first run (did the application use OpenCL?); %s not written",
          output);
      ok = 0; /* as trace and kernel replay: a warning, and the application's own exit status */
    }
  }
  if (ok) {
    for (size_t k = 1; k < R.nruns; k++)
      match_run(&R, k, &unmatched);
    hp_store **in = calloc(R.nprocs[0], sizeof *in);
    size_t nin = 0;
    hp_status st = in ? HP_OK : HP_ERR_NOMEM;
    for (size_t i = 0; st == HP_OK && i < R.nprocs[0]; i++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/replay-%zu.hplog", R.dirs[0], i);
      st = write_process(&R, i, path, &nvalues);
      ndisp += R.procs[0][i].nkeys;
      if (st == HP_OK) st = hp_store_open(path, "log", HP_READ, &in[nin]);
      if (st == HP_OK) nin++;
    }
    hp_store *out = NULL;
    hp_merge_stats stats = {.size = sizeof stats};
    if (st == HP_OK) st = hp_store_open(output, o->format, HP_CREATE, &out);
    if (st == HP_OK) st = hp_merge(out, in, nin, &stats);
    if (st == HP_OK) st = hp_store_commit(out);
    if (st != HP_OK) {
      /* as run_app: one warning, the logs kept for `hubprof merge`, the application's own exit status */
      cli_warn("%s; the per-run logs are kept in %s",
               out && hp_store_error(out)[0] ? hp_store_error(out) : hp_status_str(st), R.dirs[0]);
      keep_logs = 1;
    } else if (!o->quiet) {
      fprintf(stderr,
              "hubprof: %" PRIu64 " dispatches of %" PRIu64 " kernel%s in %" PRIu64 " process%s, %" PRIu64
              " counter values in %zu pass%s (application replay, match '%s'",
              stats.rows_out[HP_TABLE_DISPATCH], stats.rows_out[HP_TABLE_KERNEL_SYMBOL],
              stats.rows_out[HP_TABLE_KERNEL_SYMBOL] == 1 ? "" : "s", stats.rows_out[HP_TABLE_PROCESS],
              stats.rows_out[HP_TABLE_PROCESS] == 1 ? "" : "es", stats.rows_out[HP_TABLE_COUNTER_VALUE],
              R.nruns, R.nruns == 1 ? "" : "es", o->match);
      if (unmatched) fprintf(stderr, ", %" PRIu64 " unmatched", unmatched);
      fprintf(stderr, ") -> %s (%s)\n", output, o->format);
    }
    hp_store_abort(out);
    for (size_t i = 0; i < nin; i++)
      hp_store_close(in[i]);
    free(in);
  }
  for (size_t k = 0; k < R.nruns; k++) {
    for (size_t i = 0; R.procs && i < R.nprocs[k]; i++)
      plog_free(&R.procs[k][i]);
    if (R.procs) free(R.procs[k]);
    if (R.dirs && R.dirs[k]) {
      if (!keep_logs) run_remove_dir(R.dirs[k]);
      free(R.dirs[k]);
    }
  }
  (void)ran;
  (void)ndisp;
  free(R.procs);
  free(R.nprocs);
  free(R.rcs);
  free(R.dirs);
  free(pass_str);
  free(output);
  free(collector);
  return app_rc;
}
