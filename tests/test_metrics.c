/* Tests of derived metrics and the analysis library: the definition parser (every error names file, line
 * and column), name resolution (suggestions, cycles), evaluation per dispatch and per group (NaN with flags
 * for divisions by zero and missing inputs, mixed passes, imputation, SUM/AVG), the built-in sets against
 * the real providers, metrics to planner groups, and ha_run / ha_diff on synthetic stores whose figures are
 * computed by hand here. Links the hub library, which holds the counters module (providers, planner,
 * metrics). */
/* SPDX-License-Identifier: MIT */

#include "metrics.h"

#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include "check.h"

#include <math.h>

static char tmpdir[256];

static double t_abs(double x) { return x < 0 ? -x : x; }
#define CLOSE(a, b) (t_abs((a) - (b)) <= 1e-9 * (t_abs(a) + t_abs(b)) + 1e-12)
#define CHECK_NEAR(a, b) CHECK_MSG(CLOSE((a), (b)), "%.12g != %.12g", (double)(a), (double)(b))

/* ---- helpers ---- */

/* Definitions from text, resolved (catalogue NULL: every other name a counter). */
static hc_status t_load(const char *text, const char *const *cat, size_t ncat, hc_metrics **out, char *err) {
  hc_metrics *m;
  hc_status st = hc_metrics_new(&m);
  if (st == HC_OK) st = hc_metrics_add_text(m, "t.metrics", text, NULL);
  if (st == HC_OK) st = hc_metrics_resolve(m, cat, ncat);
  if (st != HC_OK) {
    snprintf(err, 512, "%s", hc_metrics_error(m)); /* the message lives on m: keep it for the caller */
    hc_metrics_free(m);
    m = NULL;
  }
  *out = m;
  return st;
}

/* An env whose counters are given by name. */
typedef struct tenv {
  double vals[32];
  uint32_t exec[32];
  uint8_t imp[32];
  hc_metric_env env;
} tenv;

static void t_env(const hc_metrics *m, tenv *e, const char *const *names, const double *vals) {
  memset(e, 0, sizeof *e);
  for (size_t i = 0; i < 32; i++)
    e->vals[i] = NAN;
  for (size_t k = 0; names && names[k]; k++) {
    long i = hc_metrics_counter_find(m, names[k]);
    if (i >= 0) e->vals[i] = vals[k];
  }
  for (int v = 0; v < HC_VAR_COUNT; v++)
    e->env.vars[v] = NAN;
  e->env.counters = e->vals;
  e->env.exec = e->exec;
  e->env.imputed = e->imp;
}

static double t_eval(const hc_metrics *m, const char *metric, const hc_metric_env *env, unsigned *flags) {
  long i = hc_metrics_find(m, metric);
  CHECK_MSG(i >= 0, "no metric %s", metric);
  if (i < 0) return NAN;
  hc_metric_value v;
  hc_metric_eval(m, (size_t)i, env, &v);
  if (flags) *flags = v.flags;
  return v.value;
}

/* Expect a definition text to fail with status `want` and a message holding every fragment. */
static void t_bad(const char *text, hc_status want, const char *f1, const char *f2) {
  hc_metrics *m;
  char err[512] = "";
  hc_status st = t_load(text, NULL, 0, &m, err);
  CHECK_MSG(st == want, "status %d, want %d for <<%s>>: %s", (int)st, (int)want, text, err);
  CHECK_MSG(strstr(err, f1) != NULL, "'%s' not in '%s'", f1, err);
  if (f2) CHECK_MSG(strstr(err, f2) != NULL, "'%s' not in '%s'", f2, err);
  CHECK_MSG(strchr(err, '\n') == NULL, "message of two lines: %s", err);
  hc_metrics_free(m);
}

/* ---- the language ---- */

static void test_expressions(void) {
  const char *text = "# a comment\n"
                     "set tests\n"
                     "const two = 2\n"
                     "const four = two * two   # constants use constants\n"
                     "metric prec = 1 + 2 * 3 - 8 / 4 / 2\n"
                     "  unit x\n"
                     "  description precedence, left to right\n"
                     "metric neg = -a + -(-b) * +2\n"
                     "metric fns = min(a, b, 7) + max(a, b) + abs(a - b) + max(1)\n"
                     "metric dashed = task-clock - page-faults\n"
                     "metric quoted = `odd name` * 10\n"
                     "metric ref = prec * two + fns / four\n"
                     "metric ratio = a / b\n"
                     "  peak four\n"
                     "metric util = 100 * task-clock / duration\n"
                     "  unit %\n"
                     "  peak 100 * compute_units\n"
                     "metric total = SUM(a)\n"
                     "metric mean = avg(a / b)\n"
                     "metric sci = 1.5e3 + .5\n";
  hc_metrics *m;
  char err[512] = "";
  CHECK_MSG(t_load(text, NULL, 0, &m, err) == HC_OK, "%s", err);
  if (!m) return;
  CHECK_EQ_U64(hc_metrics_count(m), 11); /* constants are not metrics */
  const hc_metric_info *mi = hc_metrics_get(m, 0);
  CHECK_STR(mi->name, "prec");
  CHECK_STR(mi->unit, "x");
  CHECK_STR(mi->set, "tests");
  CHECK_STR(mi->file, "t.metrics");
  CHECK_EQ_U64(mi->line, 5);
  CHECK_EQ_U64(mi->ncounters, 0);
  const hc_metric_info *dm = hc_metrics_get(m, (size_t)hc_metrics_find(m, "dashed"));
  CHECK_EQ_U64(dm->ncounters, 2);
  CHECK_STR(hc_metrics_counter_name(m, dm->counters[0]), "task-clock");
  CHECK_STR(hc_metrics_counter_name(m, dm->counters[1]), "page-faults");
  const hc_metric_info *um = hc_metrics_get(m, (size_t)hc_metrics_find(m, "util"));
  CHECK(um->vars == ((1u << HC_VAR_DURATION) | (1u << HC_VAR_COMPUTE_UNITS)));
  CHECK_STR(um->peak, "100 * compute_units");
  CHECK(hc_metrics_get(m, (size_t)hc_metrics_find(m, "total"))->aggregates);
  CHECK(hc_metrics_counter_find(m, "odd name") >= 0);

  const char *names[] = {"a", "b", "task-clock", "page-faults", "odd name", NULL};
  const double vals[] = {3, 5, 800, 30, 1.5};
  tenv e;
  t_env(m, &e, names, vals);
  e.env.vars[HC_VAR_DURATION] = 400;
  e.env.vars[HC_VAR_COMPUTE_UNITS] = 4;
  unsigned f;
  CHECK_NEAR(t_eval(m, "prec", &e.env, &f), 6);
  CHECK(f == 0);
  CHECK_NEAR(t_eval(m, "neg", &e.env, NULL), -3 + 5 * 2);
  CHECK_NEAR(t_eval(m, "fns", &e.env, NULL), 3 + 5 + 2 + 1);
  CHECK_NEAR(t_eval(m, "dashed", &e.env, NULL), 770);
  CHECK_NEAR(t_eval(m, "quoted", &e.env, NULL), 15);
  CHECK_NEAR(t_eval(m, "ref", &e.env, NULL), 6 * 2 + 11.0 / 4);
  CHECK_NEAR(t_eval(m, "util", &e.env, NULL), 200);
  CHECK_NEAR(t_eval(m, "sci", &e.env, NULL), 1500.5);
  CHECK_NEAR(t_eval(m, "total", &e.env, NULL), 3); /* per dispatch SUM(x) = x */
  CHECK_NEAR(t_eval(m, "mean", &e.env, NULL), 0.6);
  hc_metric_value v;
  hc_metric_eval(m, (size_t)hc_metrics_find(m, "util"), &e.env, &v);
  CHECK_NEAR(v.peak, 400);
  CHECK_NEAR(v.pct_peak, 50);
  hc_metric_eval(m, (size_t)hc_metrics_find(m, "ratio"), &e.env, &v);
  CHECK_NEAR(v.pct_peak, 100 * 0.6 / 4);
  hc_metric_eval(m, (size_t)hc_metrics_find(m, "prec"), &e.env, &v);
  CHECK(isnan(v.peak) && isnan(v.pct_peak));

  /* division by zero: NaN and a flag, never a crash; so is 0 / 0 */
  e.vals[hc_metrics_counter_find(m, "b")] = 0;
  CHECK(isnan(t_eval(m, "ratio", &e.env, &f)));
  CHECK(f & HC_MV_DIV0);
  e.vals[hc_metrics_counter_find(m, "a")] = 0;
  CHECK(isnan(t_eval(m, "ratio", &e.env, &f)) && (f & HC_MV_DIV0));
  e.env.vars[HC_VAR_DURATION] = 0;
  CHECK(isnan(t_eval(m, "util", &e.env, &f)) && (f & HC_MV_DIV0));
  /* a missing counter or variable: NaN, flagged missing */
  e.vals[hc_metrics_counter_find(m, "a")] = NAN;
  CHECK(isnan(t_eval(m, "fns", &e.env, &f)) && (f & HC_MV_MISSING) && !(f & HC_MV_DIV0));
  e.env.vars[HC_VAR_DURATION] = NAN;
  CHECK(isnan(t_eval(m, "util", &e.env, &f)) && (f & HC_MV_MISSING));
  /* an unknown device constant leaves the value, not the % of peak */
  e.env.vars[HC_VAR_DURATION] = 100;
  e.env.vars[HC_VAR_COMPUTE_UNITS] = NAN;
  hc_metric_eval(m, (size_t)hc_metrics_find(m, "util"), &e.env, &v);
  CHECK_NEAR(v.value, 800);
  CHECK(isnan(v.pct_peak));

  /* passes: counters of two executions of one dispatch are flagged mixed; the duration is execution 1 */
  t_env(m, &e, names, vals);
  e.env.vars[HC_VAR_DURATION] = 400;
  e.exec[hc_metrics_counter_find(m, "task-clock")] = 1;
  e.exec[hc_metrics_counter_find(m, "page-faults")] = 2;
  e.env.duration_exec = 1;
  t_eval(m, "util", &e.env, &f);
  CHECK(!(f & HC_MV_MIXED));
  t_eval(m, "dashed", &e.env, &f);
  CHECK(f & HC_MV_MIXED);
  e.exec[hc_metrics_counter_find(m, "task-clock")] = 2;
  t_eval(m, "util", &e.env, &f);
  CHECK(f & HC_MV_MIXED);
  t_eval(m, "dashed", &e.env, &f);
  CHECK(!(f & HC_MV_MIXED));
  e.imp[hc_metrics_counter_find(m, "a")] = 1;
  t_eval(m, "ratio", &e.env, &f);
  CHECK(f == HC_MV_IMPUTED);

  /* groups: SUM and AVG over the dispatches that had a value; scaled (imputed) when some had none */
  size_t ag[8], nag = hc_metric_aggs(m, (size_t)hc_metrics_find(m, "mean"), ag, 8);
  CHECK_EQ_U64(nag, 1);
  hc_metric_acc acc[4] = {{0}};
  const char *ab[] = {"a", "b", NULL};
  const double da[] = {1, 2, 6}, db[] = {2, 4, 0};
  for (int d = 0; d < 3; d++) {
    const double x[] = {da[d], db[d]};
    tenv de;
    t_env(m, &de, ab, x);
    for (size_t k = 0; k < hc_metrics_naggs(m); k++)
      hc_metrics_agg_add(m, k, &de.env, &acc[k]);
  }
  tenv g;
  const double means[] = {3, 2};
  t_env(m, &g, ab, means);
  g.env.acc = acc;
  g.env.ndispatches = 3;
  CHECK_NEAR(t_eval(m, "mean", &g.env, &f), 0.5); /* (1/2 + 2/4) / 2: the third divided by zero */
  CHECK(f & HC_MV_IMPUTED);
  CHECK_NEAR(t_eval(m, "total", &g.env, &f), 9);
  CHECK(!(f & HC_MV_IMPUTED));
  CHECK_NEAR(t_eval(m, "ratio", &g.env, NULL), 1.5); /* ratio of the group's values */
  memset(acc, 0, sizeof acc);
  CHECK_NEAR(t_eval(m, "total", &g.env, &f), 9); /* no dispatch had one: the group's mean times 3 */
  CHECK(f & HC_MV_IMPUTED);
  hc_metrics_free(m);
}

static void test_bad_definitions(void) {
  t_bad("metric x = a +\n", HC_ERR_PARSE, "t.metrics:1: metric 'x'", "expression ends early");
  t_bad("\n\nmetric x = (a + b\n", HC_ERR_PARSE, "t.metrics:3:", "missing ')'");
  t_bad("metric x = a + b)\n", HC_ERR_PARSE, "unbalanced ')' at column 17", NULL);
  t_bad("metric x = a $ b\n", HC_ERR_PARSE, "unexpected '$' at column 14", NULL);
  t_bad("metric x = 2x\n", HC_ERR_PARSE, "a number followed by a name", NULL);
  t_bad("metric x = sqrt(a)\n", HC_ERR_PARSE, "unknown function 'sqrt'", "min, max, abs, SUM, AVG");
  t_bad("metric x = abs(a, b)\n", HC_ERR_PARSE, "abs() takes one argument", NULL);
  t_bad("metric x = SUM()\n", HC_ERR_PARSE, "takes one argument, not 0", NULL);
  t_bad("metric x = `a\n", HC_ERR_PARSE, "unterminated backquote", NULL);
  t_bad("metric x =\n", HC_ERR_PARSE, "empty expression", NULL);
  t_bad("metric x a + b\n", HC_ERR_PARSE, "expected 'metric NAME = EXPRESSION'", NULL);
  t_bad("metric 9x = a\n", HC_ERR_PARSE, "bad metric name '9x'", NULL);
  t_bad("metric duration = a\n", HC_ERR_PARSE, "'duration' is a built-in variable", NULL);
  t_bad("metric x = a\nmetric x = b\n", HC_ERR_PARSE,
        "t.metrics:2: metric 'x' is already defined at t.metrics:1", NULL);
  t_bad("unit %\n", HC_ERR_PARSE, "'unit' must follow a 'metric' line", NULL);
  t_bad("const c = 1\n  unit x\n", HC_ERR_PARSE, "t.metrics:2: 'unit' must follow a 'metric' line", NULL);
  t_bad("metric x = a\n  unit a\n  unit b\n", HC_ERR_PARSE, "t.metrics:3: metric 'x' has two 'unit' lines",
        NULL);
  t_bad("metric x = a\n  peak 1 +\n", HC_ERR_PARSE, "t.metrics:2: peak of metric 'x'", NULL);
  t_bad("metric x = a\nfrobnicate y\n", HC_ERR_PARSE, "t.metrics:2: unknown statement 'frobnicate'", NULL);
  t_bad("metric x = a\nset late\n", HC_ERR_PARSE, "'set' must come before the definitions", NULL);
  t_bad("set a b\n", HC_ERR_PARSE, "expected 'set NAME'", NULL);
  t_bad("metric x = a\x01\n", HC_ERR_PARSE, "control character", NULL);
  /* names: cycles and constants */
  t_bad("metric a = b + 1\nmetric b = 2 * a\n", HC_ERR_PARSE,
        "t.metrics:1: metric 'a' depends on itself: a -> b -> a", NULL);
  t_bad("metric a = a\n", HC_ERR_PARSE, "depends on itself: a -> a", NULL);
  t_bad("metric a = c\nmetric b = a\nmetric c = b * 2\n", HC_ERR_PARSE, "a -> c -> b -> a", NULL);
  t_bad("const k = task-clock * 2\n", HC_ERR_PARSE, "constant 'k' uses 'task-clock'",
        "counters belong in metrics");
  t_bad("metric m = x\nconst k = m\n", HC_ERR_PARSE, "constant 'k' uses metric 'm'", NULL);
  /* deep nesting is an error, not a stack overflow */
  char deep[4096] = "metric x = ";
  for (int i = 0; i < 1000; i++)
    strcat(deep, "(");
  t_bad(deep, HC_ERR_PARSE, "nested too deeply", NULL);

  /* unknown names against a catalogue: suggestions, and the hint for a subtraction without blanks */
  static const char *const cat[] = {"task-clock", "page-faults", "context-switches", "cycles"};
  hc_metrics *m;
  char err[512];
  CHECK(t_load("metric x = task-clok / duration\n", cat, 4, &m, err) == HC_ERR_UNKNOWN);
  CHECK_MSG(strstr(err, "t.metrics:1: metric 'x': unknown name 'task-clok' (did you mean 'task-clock'?)"),
            "%s", err);
  CHECK(t_load("metric y = 1\nmetric x = cycles-y\n", cat, 4, &m, err) == HC_ERR_UNKNOWN);
  CHECK_MSG(strstr(err, "a subtraction needs blanks: 'cycles - y'"), "%s", err);
  CHECK(t_load("metric x = zzzzzz\n", cat, 4, &m, err) == HC_ERR_UNKNOWN);
  CHECK_MSG(strstr(err, "unknown name 'zzzzzz'") && !strstr(err, "did you mean"), "%s", err);
  CHECK(t_load("metric x = cycles - page-faults\n", cat, 4, &m, err) == HC_OK);
  hc_metrics_free(m);

  /* a file for another device: an error when named, skipped among the built-in sets */
  CHECK(hc_metrics_new(&m) == HC_OK);
  CHECK(hc_metrics_add_text(m, "g.metrics", "device gfx9\nmetric x = SQ_WAVES\n", "cpu-perf") ==
        HC_ERR_INVALID);
  CHECK_MSG(strstr(hc_metrics_error(m), "g.metrics:1: these metrics are for device 'gfx9', not 'cpu-perf'"),
            "%s", hc_metrics_error(m));
  CHECK(hc_metrics_add_text(m, "g.metrics", "device gfx9\nmetric x = SQ_WAVES\n", "gfx9") == HC_OK);
  /* a failed file leaves nothing behind: its names can be defined again */
  CHECK(hc_metrics_add_text(m, "h.metrics", "metric y = 1\nmetric z = (\n", NULL) == HC_ERR_PARSE);
  CHECK(hc_metrics_add_text(m, "i.metrics", "metric y = 2\nmetric z = 3\n", NULL) == HC_OK);
  CHECK(hc_metrics_add_text(m, "j.metrics", "metric x = 1\n", NULL) == HC_ERR_PARSE);
  CHECK_MSG(strstr(hc_metrics_error(m), "already defined at g.metrics:2"), "%s", hc_metrics_error(m));
  CHECK(hc_metrics_resolve(m, NULL, 0) == HC_OK);
  CHECK_EQ_U64(hc_metrics_count(m), 3);
  CHECK(hc_metrics_add_text(m, "k.metrics", "metric w = 1\n", NULL) == HC_ERR_INVALID);
  hc_metrics_free(m);
  /* files: missing, binary */
  CHECK(hc_metrics_new(&m) == HC_OK);
  char path[512];
  snprintf(path, sizeof path, "%s/none.metrics", tmpdir);
  CHECK(hc_metrics_add_file(m, path, NULL) == HC_ERR_UNKNOWN);
  CHECK_MSG(strstr(hc_metrics_error(m), "none.metrics: No such file"), "%s", hc_metrics_error(m));
  snprintf(path, sizeof path, "%s/bin.metrics", tmpdir);
  FILE *f = fopen(path, "wb");
  fwrite("metric x = 1\n\0\1\2", 1, 16, f);
  fclose(f);
  CHECK(hc_metrics_add_file(m, path, NULL) == HC_ERR_PARSE);
  CHECK_MSG(strstr(hc_metrics_error(m), "not a text file"), "%s", hc_metrics_error(m));
  hc_metrics_free(m);
}

/* ---- bounds: length, depth and size, each a one-line error naming the file and line ---- */

/* "metric NAME = " then n terms joined by op, into a malloc'd text (line 1). */
static char *t_chain(const char *name, size_t n, const char *term, const char *op) {
  size_t len = strlen(name) + 16 + n * (strlen(term) + strlen(op)), w = 0;
  char *s = malloc(len);
  w += (size_t)snprintf(s + w, len - w, "metric %s = ", name);
  for (size_t i = 0; i < n; i++)
    w += (size_t)snprintf(s + w, len - w, "%s%s", i ? op : "", term);
  snprintf(s + w, len - w, "\n");
  return s;
}

static void test_bounds(void) {
  /* a 20 000-term sum: the line's length (it crashed resolving, a stack overflow) */
  char *t = t_chain("big", 20000, "a", " + ");
  t_bad(t, HC_ERR_PARSE, "t.metrics:1: line longer than 4096 bytes", NULL);
  free(t);
  /* a chain within the length but deeper than the limit; the limit itself is fine */
  t = t_chain("deep", HC_METRICS_DEPTH_MAX + 1, "a", "+");
  t_bad(t, HC_ERR_PARSE, "t.metrics:1: metric 'deep': expression deeper than 256 levels", NULL);
  free(t);
  hc_metrics *m;
  char err[512] = "";
  t = t_chain("ok", HC_METRICS_DEPTH_MAX / 2, "a", "+");
  CHECK_MSG(t_load(t, NULL, 0, &m, err) == HC_OK, "%s", err);
  hc_metrics_free(m);
  free(t);
  /* depth through the definitions used: two chains of 200 */
  char *a = t_chain("d0", 200, "a", "+"), *b = t_chain("d1", 200, "d0", " - ");
  char both[4096];
  snprintf(both, sizeof both, "%s%s", a, b);
  t_bad(both, HC_ERR_PARSE, "t.metrics:2: metric 'd1': expression deeper than 256 levels, counting", NULL);
  free(a);
  free(b);
  /* a file over the size limit: refused before it is read (a sparse one here) */
  char path[512];
  snprintf(path, sizeof path, "%s/huge.metrics", tmpdir);
  FILE *f = fopen(path, "w");
  CHECK(f && fputs("metric x = 1\n", f) >= 0 && fseek(f, HC_METRICS_FILE_MAX, SEEK_SET) == 0 &&
        fputc('\n', f) == '\n');
  if (f) fclose(f);
  CHECK(hc_metrics_new(&m) == HC_OK);
  CHECK(hc_metrics_add_file(m, path, NULL) == HC_ERR_PARSE);
  CHECK_MSG(strstr(hc_metrics_error(m), "huge.metrics: larger than 1048576 bytes"), "%s",
            hc_metrics_error(m));
  hc_metrics_free(m);
  /* counters of one metric, through the definitions it uses */
  char wide[8192];
  size_t w = 0;
  for (int d = 0; d < 2; d++) {
    w += (size_t)snprintf(wide + w, sizeof wide - w, "metric w%d = (0", d);
    for (int i = 0; i < 600; i++)
      w += (size_t)snprintf(wide + w, sizeof wide - w, "%s%c%d", i % 100 ? "+" : ")+(0+", 'x' + d, i);
    w += (size_t)snprintf(wide + w, sizeof wide - w, ")\n");
  }
  snprintf(wide + w, sizeof wide - w, "metric w2 = w0 + w1\n");
  t_bad(wide, HC_ERR_PARSE, "t.metrics:3: metric 'w2' needs more than 1024 counters", NULL);
}

/* ---- the built-in sets against the devices' counters, and planning ---- */

static hc_status t_device_metrics(const char *device, hc_provider **pp, hc_metrics **out, char *err) {
  hc_provider *p;
  hc_status st = hc_device_open(device, &p);
  if (st != HC_OK) {
    snprintf(err, 512, "%s", hc_provider_error(p));
    hc_provider_close(p);
    return st;
  }
  const char *names[512];
  size_t n = hc_provider_count(p);
  for (size_t i = 0; i < n && i < 512; i++)
    names[i] = hc_provider_counter(p, i)->name;
  hc_metrics *m;
  st = hc_metrics_new(&m);
  if (st == HC_OK) st = hc_metrics_add_builtin(m, device);
  if (st == HC_OK) st = hc_metrics_resolve(m, names, n < 512 ? n : 512);
  if (st != HC_OK) {
    snprintf(err, 512, "%s", hc_metrics_error(m));
    hc_metrics_free(m);
    hc_provider_close(p);
    return st;
  }
  *pp = p;
  *out = m;
  return HC_OK;
}

static void test_builtin_sets(void) {
  char **paths;
  size_t n;
  CHECK(hc_metrics_files(&paths, &n) == HC_OK);
  int perf = 0, gfx9 = 0;
  for (size_t i = 0; i < n; i++) {
    perf |= strstr(paths[i], "/perf.metrics") != NULL;
    gfx9 |= strstr(paths[i], "/gfx9.metrics") != NULL;
  }
  CHECK(perf && gfx9);
  hc_metrics_files_free(paths);

  hc_provider *p;
  hc_metrics *m;
  char err[512] = "";
  CHECK_MSG(t_device_metrics("cpu-perf", &p, &m, err) == HC_OK, "%s", err);
  if (m) {
    CHECK(hc_metrics_find(m, "cpu_util") >= 0 && hc_metrics_find(m, "ipc") >= 0);
    CHECK(hc_metrics_find(m, "valu_util") < 0);          /* gfx9's set is not for this device */
    CHECK(hc_metrics_find(m, "work_items_per_us") >= 0); /* a set for any device */
    for (size_t i = 0; i < hc_metrics_count(m); i++) {
      const hc_metric_info *mi = hc_metrics_get(m, i);
      CHECK_MSG(mi->unit[0] && mi->description[0], "metric %s lacks a unit or description", mi->name);
    }
    /* planner groups: a metric's counters together */
    char **g;
    size_t ng;
    CHECK(hc_metrics_plan_groups(m, "cpu_util, faults_per_us ,ipc", &g, &ng) == HC_OK);
    CHECK_EQ_U64(ng, 3);
    if (ng == 3) {
      CHECK_STR(g[0], "cpu_util=task-clock");
      CHECK_STR(g[1], "faults_per_us=page-faults");
      CHECK_STR(g[2], "ipc=instructions,cycles");
      CHECK(g[3] == NULL);
    }
    hc_metrics_groups_free(g);
    CHECK(hc_metrics_plan_groups(m, "work_items_per_us", &g, &ng) == HC_OK && ng == 0);
    hc_metrics_groups_free(g);
    CHECK(hc_metrics_plan_groups(m, "cpu_utl", &g, &ng) == HC_ERR_UNKNOWN);
    CHECK_MSG(strstr(hc_metrics_error(m), "unknown metric 'cpu_utl' (did you mean 'cpu_util'?)"), "%s",
              hc_metrics_error(m));
    CHECK(hc_metrics_plan_groups(m, "cpu_util,,ipc", &g, &ng) == HC_ERR_INVALID);
    hc_metrics_free(m);
    hc_provider_close(p);
  }
  /* gfx9: every metric's counters in one pass under the block limits */
  CHECK_MSG(t_device_metrics("gfx9", &p, &m, err) == HC_OK, "%s", err);
  if (m) {
    const char *names[64];
    size_t nn = 0;
    for (size_t i = 0; i < hc_metrics_count(m) && nn < 64; i++)
      if (hc_metrics_get(m, i)->ncounters) names[nn++] = hc_metrics_get(m, i)->name;
    CHECK(nn >= 8);
    hc_request *req;
    size_t nreq;
    CHECK(hc_metrics_requests(m, names, nn, &req, &nreq) == HC_OK);
    hc_plan *pl;
    CHECK_MSG(hc_plan_make(req, nreq, hc_provider_limits(p), hc_provider_block_of, p, &pl) == HC_OK, "%s",
              hc_plan_error(pl));
    if (!hc_plan_error(pl)[0]) {
      CHECK(pl->split_groups[0] == NULL);
      for (size_t r = 0; r < nreq; r++) { /* every counter of a metric in the pass of its first */
        unsigned pass = 0;
        for (size_t c = 0; c < req[r].ncounters; c++)
          for (size_t i = 0; i < pl->ncounters; i++)
            if (!strcmp(pl->names[i], req[r].counters[c])) {
              if (!pass) pass = pl->pass[i];
              CHECK_MSG(pl->pass[i] == pass, "metric %s split", req[r].group);
            }
      }
    }
    hc_plan_free(pl);
    hc_metrics_requests_free(req, nreq);
    hc_metrics_free(m);
    hc_provider_close(p);
  }
}

/* ---- analysis on synthetic stores ---- */

typedef struct tdisp {
  uint64_t kernel, agent;
  uint32_t grid, wg;
  int64_t dur;       /* -1: untimed */
  double tc, pf, cs; /* NaN: not measured */
  uint32_t passes;
} tdisp;

/* A store of 3 kernels on 2 devices, counters in 2 passes (task-clock, page-faults in pass 1,
 * context-switches in pass 2), as kernel replay leaves it. */
static const tdisp store_a[] = {
    {1, 1, 1024, 64, 1000, 500, 2, 1, 2},  {1, 1, 1024, 64, 3000, 2500, 0, 3, 2},
    {1, 1, 2048, 64, 2000, 1000, 4, 0, 2}, {2, 1, 256, 0, 0, 100, 1, 0, 2},
    {2, 1, 256, 0, 500, NAN, NAN, NAN, 1}, {3, 2, 64, 64, 4000, 8000, 0, 2, 2},
    {3, 2, 64, 64, 2000, 4000, 2, 3, 2}, /* context-switches also in pass 1 (4): averaged to 3 */
};
#define NA (sizeof store_a / sizeof store_a[0])

static hp_status t_write_store(const char *path, const tdisp *ds, size_t n, const char *mux_meta,
                               int imputed_cs, const char *const *knames) {
  hp_store *s;
  hp_status st = hp_store_open(path, "rocpd", HP_CREATE, &s);
  if (st != HP_OK) return st;
  hp_node node = {.size = sizeof node, .id = 1, .hostname = "h"};
  hp_process pr = {.size = sizeof pr, .id = 1, .node_id = 1, .pid = 100, .start_ns = 1000, .rank = -1};
  hp_agent a1 = {.size = sizeof a1,
                 .id = 1,
                 .node_id = 1,
                 .type = HP_AGENT_CPU,
                 .name = "cpu",
                 .product_name = "testcpu",
                 .compute_units = 4,
                 .max_clock_mhz = 2000};
  hp_agent a2 = {.size = sizeof a2,
                 .id = 2,
                 .node_id = 1,
                 .type = HP_AGENT_GPU,
                 .name = "gpu",
                 .product_name = "testgpu",
                 .device_index = 1};
  hp_queue q = {.size = sizeof q, .id = 1, .process_id = 1, .agent_id = 1};
  st = hp_write_node(s, &node);
  if (!st) st = hp_write_process(s, &pr);
  if (!st) st = hp_write_agent(s, &a1);
  if (!st) st = hp_write_agent(s, &a2);
  if (!st) st = hp_write_queue(s, &q);
  static const char *const def_names[] = {"alpha", "beta", "gamma", "delta", "eps"};
  if (!knames) knames = def_names;
  for (uint64_t k = 1; k <= 5 && !st; k++) {
    hp_kernel_symbol ks = {.size = sizeof ks, .id = k, .name = knames[k - 1]};
    st = hp_write_kernel_symbol(s, &ks);
  }
  static const char *const cn[] = {"task-clock", "page-faults", "context-switches"};
  static const char *const cu[] = {"ns", "count", "count"};
  for (uint64_t c = 1; c <= 3 && !st; c++) {
    hp_counter_info ci = {.size = sizeof ci, .id = c, .name = cn[c - 1], .block = "sw", .unit = cu[c - 1]};
    st = hp_write_counter_info(s, &ci);
  }
  int64_t t = 100000;
  for (size_t i = 0; i < n && !st; i++) {
    const tdisp *x = &ds[i];
    hp_dispatch d = {.size = sizeof d,
                     .id = i + 1,
                     .dispatch_id = i + 1,
                     .process_id = 1,
                     .agent_id = x->agent,
                     .queue_id = 1,
                     .kernel_id = x->kernel,
                     .grid = {x->grid, 1, 1},
                     .workgroup = {x->wg, x->wg ? 1 : 0, x->wg ? 1 : 0},
                     .start_ns = x->dur >= 0 ? t : 0,
                     .end_ns = x->dur >= 0 ? t + x->dur : 0,
                     .passes = x->passes};
    t += 10000;
    st = hp_write_dispatch(s, &d);
    const double v[3] = {x->tc, x->pf, x->cs};
    for (int c = 0; c < 3 && !st; c++) {
      if (isnan(v[c])) continue;
      uint32_t pass = x->passes > 1 ? (c < 2 ? 1 : 2) : 1;
      hp_counter_value cv = {.size = sizeof cv,
                             .dispatch_id = i + 1,
                             .counter_id = (uint64_t)c + 1,
                             .pass = pass,
                             .imputed = c == 2 && imputed_cs,
                             .value = v[c]};
      if (c == 2 && i == 6 && !mux_meta && !imputed_cs) { /* the same counter in two passes of dispatch 7 */
        cv.value = 2;
        st = hp_write_counter_value(s, &cv);
        cv.value = 4;
        cv.pass = 1;
      }
      if (!st) st = hp_write_counter_value(s, &cv);
    }
  }
  if (!st && mux_meta) st = hp_write_metadata(s, "multiplex_incomplete", mux_meta);
  if (st) {
    hp_store_abort(s);
    return st;
  }
  return hp_store_close(s);
}

/* A query of every field. */
static ha_query t_query(int group, const char *counters, const char *metrics) {
  ha_query q = {.size = sizeof q, .group = group, .counters = counters, .metrics = metrics};
  return q;
}

static long col(const ha_result *r, const char *name) {
  long c = ha_result_col_find(r, name);
  CHECK_MSG(c >= 0, "no column %s", name);
  return c;
}

/* Row whose text column `key` is `val` (the first), or -1. */
static long row_of(const ha_result *r, const char *key, const char *val) {
  long c = ha_result_col_find(r, key);
  for (size_t i = 0; c >= 0 && i < ha_result_nrows(r); i++)
    if (!strcmp(ha_result_text(r, i, (size_t)c), val)) return (long)i;
  return -1;
}

static double num(const ha_result *r, long row, const char *name) {
  long c = ha_result_col_find(r, name);
  return row >= 0 && c >= 0 ? ha_result_num(r, (size_t)row, (size_t)c) : NAN;
}

static unsigned flags(const ha_result *r, long row, const char *name) {
  long c = ha_result_col_find(r, name);
  return row >= 0 && c >= 0 ? ha_result_flags(r, (size_t)row, (size_t)c) : 0xff;
}

static int has_note(const ha_result *r, const char *frag) {
  for (size_t i = 0; i < ha_result_nnotes(r); i++)
    if (strstr(ha_result_note(r, i), frag)) return 1;
  return 0;
}

static void print_notes(const ha_result *r) {
  for (size_t i = 0; i < ha_result_nnotes(r); i++)
    fprintf(stderr, "  note: %s\n", ha_result_note(r, i));
}

static void test_analysis(void) {
  char path[512], err[512];
  snprintf(path, sizeof path, "%s/a.db", tmpdir);
  CHECK_OK(t_write_store(path, store_a, NA, NULL, 0, NULL), NULL);
  hp_store *s;
  CHECK_OK(hp_store_open(path, NULL, HP_READ, &s), s);
  if (!s) return;
  ha_result *r;

  /* an old caller's query (size 16): exactly the columns it knew */
  struct {
    uint32_t size;
    int32_t group;
    int64_t limit;
  } old = {16, HA_BY_KERNEL, 0};
  CHECK(ha_run(s, (const ha_query *)&old, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_ncols(r), 9);
  CHECK_EQ_U64(ha_result_nrows(r), 3);
  ha_result_free(r);

  /* per dispatch, default counters and metrics (the built-in sets) */
  ha_query q = t_query(HA_BY_DISPATCH, NULL, NULL);
  CHECK_MSG(ha_run(s, &q, &r) == HP_OK, "%s", ha_result_error(r));
  CHECK_EQ_U64(ha_result_nrows(r), NA);
  CHECK(ha_result_col_find(r, "task-clock") >= 0 && ha_result_col_find(r, "context-switches") >= 0);
  CHECK(ha_result_col_find(r, "cpu_util") >= 0 && ha_result_col_find(r, "cs_per_ms") >= 0);
  CHECK(ha_result_col_find(r, "ipc") < 0);               /* the store lacks its counters */
  CHECK(ha_result_col_find(r, "work_items_per_us") < 0); /* needs no counter: only when asked */
  CHECK_STR(ha_result_col_unit(r, (size_t)col(r, "task-clock")), "ns");
  CHECK_STR(ha_result_col_unit(r, (size_t)col(r, "cpu_util")), "%");
  CHECK(ha_result_col_role(r, (size_t)col(r, "cpu_util_pct_peak")) == HA_ROLE_PEAK);
  CHECK_NEAR(num(r, 0, "cpu_util"), 100.0 * 500 / 1000);
  CHECK_NEAR(num(r, 0, "cpu_util_pct_peak"), 100.0 * 500 / 1000 / 4);
  CHECK_NEAR(num(r, 1, "cpu_util"), 100.0 * 2500 / 3000);
  CHECK_NEAR(num(r, 0, "faults_per_us"), 1000.0 * 2 / 1000);
  CHECK(flags(r, 0, "faults_per_us") == 0); /* page-faults and the time both from pass 1 */
  CHECK_NEAR(num(r, 0, "cs_per_ms"), 1e6 * 1 / 1000);
  CHECK(flags(r, 0, "cs_per_ms") & HA_CELL_MIXED); /* context-switches from pass 2 */
  CHECK(has_note(r, "metric 'cs_per_ms' combines values of different replay passes"));
  CHECK(isnan(num(r, 3, "faults_per_us")) && (flags(r, 3, "faults_per_us") & HA_CELL_DIV0)); /* 0 ns */
  CHECK(has_note(r, "metric 'faults_per_us' divides by zero in 1 row"));
  CHECK(isnan(num(r, 4, "task-clock")) && (flags(r, 4, "task-clock") & HA_CELL_MISSING)); /* unreplayed */
  CHECK(flags(r, 4, "cpu_util") & HA_CELL_INCOMPLETE);
  CHECK_STR(ha_result_text(r, 4, (size_t)col(r, "incomplete")), "task-clock page-faults context-switches");
  CHECK_NEAR(num(r, 6, "context-switches"), 3); /* two passes averaged, never summed */
  CHECK(has_note(r, "counter 'context-switches' was measured in several passes of 1 dispatch"));
  CHECK_NEAR(num(r, 5, "cpu_util"), 200); /* gamma on testgpu: no compute_units, so no % of peak */
  CHECK(isnan(num(r, 5, "cpu_util_pct_peak")));
  CHECK(ha_result_int(r, 0, (size_t)col(r, "dispatch")) == 1 &&
        ha_result_int(r, 0, (size_t)col(r, "pid")) == 100);
  CHECK_STR(ha_result_text(r, 2, (size_t)col(r, "grid")), "2048x1x1");
  CHECK_STR(ha_result_text(r, 3, (size_t)col(r, "workgroup")), "0x0x0");
  CHECK_STR(ha_result_text(r, 5, (size_t)col(r, "device")), "testgpu#1");
  CHECK_NEAR(num(r, 0, "percent"), 100.0 * 1000 / (1000 + 3000 + 2000 + 0 + 500));
  if (check_failed) print_notes(r);
  ha_result_free(r);

  /* per kernel: counters are means per dispatch, metrics ratios of sums over the same dispatches */
  q = t_query(HA_BY_KERNEL, NULL, NULL);
  CHECK_MSG(ha_run(s, &q, &r) == HP_OK, "%s", ha_result_error(r));
  CHECK_EQ_U64(ha_result_nrows(r), 3);
  long ra = row_of(r, "kernel", "alpha"), rb = row_of(r, "kernel", "beta"), rg = row_of(r, "kernel", "gamma");
  CHECK(ra == 0 && rb == 1 && rg == 2); /* by device, then time */
  CHECK_NEAR(num(r, ra, "calls"), 3);
  CHECK_NEAR(num(r, ra, "total_ns"), 6000);
  CHECK_NEAR(num(r, ra, "min_ns"), 1000);
  CHECK_NEAR(num(r, ra, "max_ns"), 3000);
  CHECK_NEAR(num(r, ra, "task-clock"), 4000.0 / 3);
  CHECK_NEAR(num(r, ra, "cpu_util"), 100.0 * 4000 / 6000);
  CHECK_NEAR(num(r, ra, "cpu_util_avg"), (50 + 100.0 * 2500 / 3000 + 50) / 3);
  CHECK_NEAR(num(r, ra, "page_faults"), 2);
  CHECK_NEAR(num(r, ra, "page_faults_total"), 6);
  CHECK_NEAR(num(r, ra, "faults_per_us"), 1000.0 * 6 / 6000);
  CHECK(flags(r, ra, "cpu_util") == 0 && flags(r, ra, "cs_per_ms") == HA_CELL_MIXED);
  /* beta: one of two dispatches measured: imputed values; its time is 0 ns: a division by zero */
  CHECK_NEAR(num(r, rb, "task-clock"), 100);
  CHECK(flags(r, rb, "task-clock") == HA_CELL_IMPUTED);
  CHECK(isnan(num(r, rb, "cpu_util")) && (flags(r, rb, "cpu_util") & HA_CELL_DIV0));
  CHECK_NEAR(num(r, rb, "page_faults_total"), 2); /* one measured dispatch, scaled to two */
  CHECK(flags(r, rb, "page_faults_total") & HA_CELL_IMPUTED);
  CHECK(strstr(ha_result_text(r, (size_t)rb, (size_t)col(r, "imputed")), "task-clock"));
  CHECK_NEAR(num(r, rg, "context-switches"), (2 + 3) / 2.0);
  CHECK_NEAR(num(r, rg, "cpu_util"), 100.0 * 12000 / 6000);
  CHECK_NEAR(num(r, rg, "percent"), 100);
  CHECK(has_note(r, "1 kernel has values imputed"));
  if (check_failed) print_notes(r);
  ha_result_free(r);

  /* kernel + launch sizes */
  q = t_query(HA_BY_KERNEL_GRID, "", "cpu_util");
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 4);
  CHECK_STR(ha_result_text(r, 0, (size_t)col(r, "grid")), "1024x1x1");
  CHECK_NEAR(num(r, 0, "cpu_util"), 100.0 * 3000 / 4000);
  CHECK_NEAR(num(r, 1, "cpu_util"), 100.0 * 1000 / 2000);
  CHECK(ha_result_col_find(r, "task-clock") < 0); /* counters "" = none */
  ha_result_free(r);

  /* filters, sort, limit */
  const char *kpat[] = {"al*", "gam?a"};
  q = t_query(HA_BY_KERNEL, "", "");
  q.kernels = kpat;
  q.nkernels = 2;
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 2);
  CHECK_EQ_U64(ha_result_ncols(r), 9);
  ha_result_free(r);
  const char *dpat[] = {"testgpu*"};
  q = t_query(HA_BY_DISPATCH, "", "");
  q.devices = dpat;
  q.ndevices = 1;
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 2);
  ha_result_free(r);
  q = t_query(HA_BY_KERNEL, "task-clock", "");
  q.dispatch_first = 2;
  q.dispatch_last = 3;
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 1);
  CHECK_NEAR(num(r, 0, "calls"), 2);
  CHECK_NEAR(num(r, 0, "task-clock"), 1750);
  CHECK_NEAR(num(r, 0, "percent"), 100);
  ha_result_free(r);
  q = t_query(HA_BY_DISPATCH, "", "");
  q.dispatch_first = 6;
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 2);
  ha_result_free(r);
  q = t_query(HA_BY_KERNEL, "", "");
  q.sort = HA_SORT_NAME;
  q.limit = 1;
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 2); /* one per device */
  CHECK_STR(ha_result_text(r, 0, 1), "alpha");
  CHECK_STR(ha_result_text(r, 1, 1), "gamma");
  ha_result_free(r);
  q = t_query(HA_BY_DISPATCH, "", "");
  q.sort = HA_SORT_TIME;
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK(ha_result_int(r, 0, (size_t)col(r, "dispatch")) == 2);
  ha_result_free(r);

  /* bad requests: one line saying why */
  q = t_query(HA_BY_KERNEL, "task-clock,cycles", NULL);
  CHECK(ha_run(s, &q, &r) == HP_ERR_INVALID && r && ha_result_ncols(r) == 0 && ha_result_nrows(r) == 0);
  CHECK_MSG(strstr(ha_result_error(r), "counter 'cycles' is not in the store (it has: task-clock"), "%s",
            ha_result_error(r));
  ha_result_free(r);
  q = t_query(HA_BY_KERNEL, NULL, "cpu_utl");
  CHECK(ha_run(s, &q, &r) == HP_ERR_INVALID);
  CHECK_MSG(strstr(ha_result_error(r), "unknown metric 'cpu_utl' (did you mean 'cpu_util'?)"), "%s",
            ha_result_error(r));
  ha_result_free(r);
  q = t_query(HA_BY_KERNEL, NULL, "ipc");
  CHECK(ha_run(s, &q, &r) == HP_ERR_INVALID);
  CHECK_MSG(
      strstr(ha_result_error(r), "metric 'ipc' needs counters the store does not have: instructions, cycles"),
      "%s", ha_result_error(r));
  ha_result_free(r);
  q = t_query(99, NULL, NULL);
  CHECK(ha_run(s, &q, &r) == HP_ERR_INVALID && strstr(ha_result_error(r), "unknown grouping 99"));
  ha_result_free(r);
  q = t_query(HA_BY_KERNEL, NULL, NULL);
  q.dispatch_first = 5;
  q.dispatch_last = 2;
  CHECK(ha_run(s, &q, &r) == HP_ERR_INVALID && strstr(ha_result_error(r), "empty dispatch range"));
  ha_result_free(r);
  CHECK(ha_run(s, &q, NULL) == HP_ERR_INVALID); /* nowhere to put why: status only */
  CHECK(strcmp(ha_result_error(NULL), "no result (out of memory)") == 0);

  /* a metric file of our own, alone: division by zero and unknown constants noted */
  snprintf(path, sizeof path, "%s/own.metrics", tmpdir);
  FILE *f = fopen(path, "w");
  fputs("metric per_fault = task-clock / page-faults\n  unit ns\nmetric per_cu = task-clock / compute_units\n"
        "metric items = grid_size / 64\n",
        f);
  fclose(f);
  const char *files[] = {path};
  q = t_query(HA_BY_KERNEL, "", NULL);
  q.metric_files = files;
  q.nmetric_files = 1;
  q.flags = HA_NO_BUILTIN_METRICS;
  CHECK_MSG(ha_run(s, &q, &r) == HP_OK, "%s", ha_result_error(r));
  CHECK(ha_result_col_find(r, "cpu_util") < 0 && ha_result_col_find(r, "items") < 0);
  CHECK_NEAR(num(r, 0, "per_fault"), 4000.0 / 6);
  CHECK(isnan(num(r, 2, "per_cu")) && (flags(r, 2, "per_cu") & HA_CELL_MISSING));
  CHECK(has_note(r, "metric 'per_cu' has no value in 1 row: unknown compute_units"));
  ha_result_free(r);
  q.metrics = "items,per_fault";
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_NEAR(num(r, 0, "items"), (1024 + 1024 + 2048) / 3.0 / 64);
  ha_result_free(r);
  f = fopen(path, "w");
  fputs("metric broken = (task-clock\n", f);
  fclose(f);
  q.metrics = NULL;
  CHECK(ha_run(s, &q, &r) == HP_ERR_INVALID); /* a file named explicitly must be right */
  CHECK_MSG(strstr(ha_result_error(r), "own.metrics:1: metric 'broken'"), "%s", ha_result_error(r));
  ha_result_free(r);
  hp_store_close(s);
  (void)err;
}

/* Iteration multiplexing: imputed values stored by profile, and a key the metadata lists as incomplete. */
static void test_multiplexed(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/mux.db", tmpdir);
  const tdisp ds[] = {
      {1, 1, 64, 64, 1000, 400, 1, 2, 1},
      {1, 1, 64, 64, 2000, 1600, 3, 2, 1}, /* complete key */
      {4, 1, 64, 64, 1000, 100, NAN, NAN, 1},
      {4, 1, 64, 64, 1000, NAN, 5, NAN, 1}, /* incomplete */
  };
  CHECK_OK(t_write_store(path, ds, 4,
                         "[{\"pid\":100,\"process_start_ns\":1000,\"kernel\":\"delta\",\"dispatches\":2,"
                         "\"passes\":3,\"passes_covered\":2,\"measured_per_pass\":[1,1,0]}]",
                         1, NULL),
           NULL);
  hp_store *s;
  CHECK_OK(hp_store_open(path, NULL, HP_READ, &s), s);
  if (!s) return;
  ha_result *r;
  ha_query q = t_query(HA_BY_KERNEL, NULL, "cpu_util,faults_per_us,cs_per_ms");
  CHECK_MSG(ha_run(s, &q, &r) == HP_OK, "%s", ha_result_error(r));
  long ra = row_of(r, "kernel", "alpha"), rd = row_of(r, "kernel", "delta");
  CHECK_NEAR(num(r, ra, "context-switches"), 2);
  CHECK(flags(r, ra, "context-switches") == HA_CELL_IMPUTED);
  CHECK(flags(r, ra, "task-clock") == 0);
  CHECK_NEAR(num(r, ra, "cpu_util"), 100.0 * 2000 / 3000);
  CHECK(flags(r, ra, "cpu_util") == 0);
  CHECK(flags(r, ra, "cs_per_ms") == HA_CELL_IMPUTED);
  /* the incomplete key: its measured counters show (imputed from part of its dispatches), no metric */
  CHECK_NEAR(num(r, rd, "task-clock"), 100);
  CHECK(flags(r, rd, "task-clock") == HA_CELL_IMPUTED);
  CHECK(isnan(num(r, rd, "context-switches")));
  CHECK(flags(r, rd, "cpu_util") & HA_CELL_INCOMPLETE);
  CHECK(flags(r, rd, "faults_per_us") & HA_CELL_INCOMPLETE);
  CHECK_STR(ha_result_text(r, (size_t)rd, (size_t)col(r, "incomplete")), "context-switches");
  CHECK(has_note(r, "1 kernel lacks a counter"));
  if (check_failed) print_notes(r);
  ha_result_free(r);
  q = t_query(HA_BY_DISPATCH, NULL, "cpu_util");
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK_NEAR(num(r, 0, "cpu_util"), 40);
  CHECK(flags(r, 2, "cpu_util") &
        HA_CELL_INCOMPLETE); /* has task-clock and a time, but its key missed passes */
  CHECK_STR(ha_result_text(r, 0, (size_t)col(r, "imputed")), "context-switches");
  ha_result_free(r);
  hp_store_close(s);
  /* unreadable metadata: a note, never a failure */
  snprintf(path, sizeof path, "%s/mux2.db", tmpdir);
  CHECK_OK(t_write_store(path, ds, 4, "[{\"pid\":", 1, NULL), NULL);
  CHECK_OK(hp_store_open(path, NULL, HP_READ, &s), s);
  if (!s) return;
  q = t_query(HA_BY_KERNEL, NULL, NULL);
  CHECK(ha_run(s, &q, &r) == HP_OK);
  CHECK(has_note(r, "multiplex_incomplete cannot be read"));
  ha_result_free(r);
  hp_store_close(s);
}

static void test_diff(void) {
  char pa[512], pb[512];
  snprintf(pa, sizeof pa, "%s/a.db", tmpdir); /* written by test_analysis */
  snprintf(pb, sizeof pb, "%s/b.db", tmpdir);
  /* B: alpha twice as slow and twice the CPU time, beta gone, gamma the same, eps new */
  const tdisp ds[] = {
      {1, 1, 1024, 64, 2000, 2000, 2, 1, 2}, {1, 1, 1024, 64, 6000, 6000, 0, 3, 2},
      {1, 1, 2048, 64, 4000, 4000, 4, 0, 2}, {3, 2, 64, 64, 4000, 8000, 0, 2, 2},
      {3, 2, 64, 64, 2000, 4000, 2, 3, 2},   {5, 1, 16, 16, 100, 10, 0, 0, 2},
  };
  CHECK_OK(t_write_store(pb, ds, 6, NULL, 0, NULL), NULL);
  hp_store *a, *b;
  CHECK_OK(hp_store_open(pa, NULL, HP_READ, &a), a);
  CHECK_OK(hp_store_open(pb, NULL, HP_READ, &b), b);
  if (!a || !b) return;
  ha_query q = t_query(HA_BY_KERNEL, NULL, "cpu_util");
  ha_result *r;
  CHECK_MSG(ha_diff(a, b, &q, 1.0, &r) == HP_OK, "%s", ha_result_error(r));
  CHECK_EQ_U64(ha_result_nrows(r), 4);
  long ra = row_of(r, "kernel", "alpha"), rb = row_of(r, "kernel", "beta"), rg = row_of(r, "kernel", "gamma"),
       re = row_of(r, "kernel", "eps");
  CHECK(ra == 0); /* most time first */
  CHECK_STR(ha_result_text(r, (size_t)ra, (size_t)col(r, "status")), "both");
  CHECK_STR(ha_result_text(r, (size_t)rb, (size_t)col(r, "status")), "missing");
  CHECK_STR(ha_result_text(r, (size_t)re, (size_t)col(r, "status")), "new");
  CHECK_NEAR(num(r, ra, "total_ns_a"), 6000);
  CHECK_NEAR(num(r, ra, "total_ns_b"), 12000);
  CHECK_NEAR(num(r, ra, "total_ns_delta"), 6000);
  CHECK_NEAR(num(r, ra, "total_ns_delta_pct"), 100);
  CHECK_NEAR(num(r, ra, "avg_ns_delta_pct"), 100);
  CHECK_STR(ha_result_text(r, (size_t)ra, (size_t)col(r, "time")), "slower");
  CHECK_NEAR(num(r, ra, "cpu_util_a"), 100.0 * 4000 / 6000);
  CHECK_NEAR(num(r, ra, "cpu_util_b"), 100);
  CHECK_STR(ha_result_text(r, (size_t)ra, (size_t)col(r, "cpu_util_dir")), "higher");
  CHECK_STR(ha_result_text(r, (size_t)rg, (size_t)col(r, "time")), "same");
  CHECK_STR(ha_result_text(r, (size_t)rg, (size_t)col(r, "cpu_util_dir")), "same");
  CHECK(isnan(num(r, re, "avg_ns_a")) && num(r, re, "calls_a") == 0);
  CHECK_STR(ha_result_text(r, (size_t)re, (size_t)col(r, "time")), "");
  ha_result_free(r);
  /* the other way round: faster, lower */
  CHECK(ha_diff(b, a, &q, 1.0, &r) == HP_OK);
  ra = row_of(r, "kernel", "alpha");
  CHECK_STR(ha_result_text(r, (size_t)ra, (size_t)col(r, "time")), "faster");
  CHECK_STR(ha_result_text(r, (size_t)ra, (size_t)col(r, "cpu_util_dir")), "lower");
  CHECK_STR(ha_result_text(r, (size_t)row_of(r, "kernel", "beta"), (size_t)col(r, "status")), "new");
  ha_result_free(r);
  /* a threshold over the change: same */
  CHECK(ha_diff(a, b, &q, 150, &r) == HP_OK);
  CHECK_STR(ha_result_text(r, 0, (size_t)col(r, "time")), "same");
  ha_result_free(r);
  /* kernel-grid: launches matched by sizes too */
  q = t_query(HA_BY_KERNEL_GRID, NULL, "");
  CHECK(ha_diff(a, b, &q, 1.0, &r) == HP_OK);
  CHECK_EQ_U64(ha_result_nrows(r), 5);
  CHECK(ha_result_col_find(r, "grid") >= 0 && ha_result_col_find(r, "cpu_util_a") < 0);
  ha_result_free(r);
  q = t_query(HA_BY_DISPATCH, NULL, NULL);
  CHECK(ha_diff(a, b, &q, 1.0, &r) == HP_ERR_INVALID && strstr(ha_result_error(r), "diff compares kernels"));
  ha_result_free(r);
  q = t_query(HA_BY_KERNEL, NULL, "ipc");
  CHECK(ha_diff(a, b, &q, 1.0, &r) == HP_ERR_INVALID);
  CHECK_MSG(strstr(ha_result_error(r), "a.db: metric 'ipc' needs counters"), "%s", ha_result_error(r));
  ha_result_free(r);
  hp_store_close(a);
  hp_store_close(b);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "%s/test_metrics.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  /* the data files of the source tree, wherever this program was built */
  if (!getenv("HUBPROF_DEVICES")) setenv("HUBPROF_DEVICES", "share/hubprof/devices", 1);
  if (!getenv("HUBPROF_METRICS")) setenv("HUBPROF_METRICS", "share/hubprof/metrics", 1);
  test_expressions();
  test_bad_definitions();
  test_bounds();
  test_builtin_sets();
  test_analysis();
  test_multiplexed();
  test_diff();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
  return check_report("test_metrics");
}
