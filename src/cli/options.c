/* The CLI's declarative option tables (options.h): parsing argv against a subcommand's table, validating
 * values (kinds, choices, ranges, checks), "did you mean" for typos, and --help written from the same table.
 */
/* SPDX-License-Identifier: MIT */
#include "options.h"
#include "cli.h"

#include "../common/hu_pattern.h"
#include "hubprof/hub.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HELP_WIDTH 110 /* help lines are wrapped to this */
#define HELP_COL 30    /* option help text starts in this column */

const char *const cli_report_formats[] = {"table", "csv", "json", NULL};

const cli_opt cli_opts_common[] = {
    {.name = "help", .short_name = 'h', .kind = CLI_OPT_FLAG, .help = "show this help"},
    {0},
};

const cli_opt cli_opts_select[] = {
    {.name = "metrics-file",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "FILE",
     .help = "more metric definitions",
     .check = cli_check_file},
    {.name = "kernel",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "GLOB",
     .help = "only kernels whose name matches (any of them); the name shown, NAME#PROGRAM where programs "
             "share a name, or the bare name; 're:REGEX' for a regular expression as trace takes",
     .check = cli_check_glob},
    {.name = "device",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "GLOB",
     .help = "only devices whose name matches (any of them)",
     .check = cli_check_glob},
    {0},
};

const cli_opt cli_opts_quiet[] = {
    {.name = "quiet",
     .short_name = 'q',
     .kind = CLI_OPT_FLAG,
     .help = "nothing on stderr but errors and warnings: no plan, progress line or summary"},
    {0},
};

const cli_opt cli_opts_strict[] = {
    {.name = "strict",
     .kind = CLI_OPT_FLAG,
     .help =
         "fail (exit 1, nothing printed) when the store is damaged or incomplete, e.g. a log missing chunks "
         "(default: a warning, and figures of what is readable)"},
    {0},
};

const cli_opt cli_opts_counters[] = {
    {.name = "counters",
     .short_name = 'c',
     .kind = CLI_OPT_LIST,
     .flags = CLI_OPT_REPEAT,
     .value = "LIST",
     .help = "counters to measure, comma-separated, or @FILE (one per line); 'hubprof list counters' shows "
             "them"},
    {.name = "metrics",
     .kind = CLI_OPT_LIST,
     .flags = CLI_OPT_REPEAT,
     .value = "LIST",
     .help =
         "metrics to measure (comma-separated, or @FILE): their counters, each metric's in one pass where "
         "they fit; 'hubprof list metrics' shows them"},
    {.name = "metrics-file",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "FILE",
     .help = "more metric definitions (docs/metrics.md); needs --metrics",
     .check = cli_check_file},
    {.name = "group",
     .short_name = 'g',
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "NAME=C1,C2",
     .help = "counters that belong together (one metric): kept in one pass where the limits allow"},
    {.name = "device",
     .kind = CLI_OPT_STRING,
     .value = "D",
     .def = "cpu-perf",
     .help = "device description giving the counters and limits: a name ('hubprof list devices') or a "
             ".device file; or an NVIDIA chip CUPTI describes (GH100: passes from CUPTI, docs/cuda.md)",
     .check = cli_check_device},
    {.name = "max-counters-per-pass",
     .kind = CLI_OPT_UINT,
     .value = "N",
     .min = 1,
     .max = 100000,
     .help = "at most N counters in one pass (and the device's own limits)"},
    {0},
};

const char *const *cli_store_formats(void) { return hp_formats(); }

const cli_opt cli_opts_store_out[] = {
    {.name = "output-format",
     .short_name = 'F',
     .kind = CLI_OPT_ENUM,
     .choices_fn = cli_store_formats,
     .help =
         "format of OUT (default: from OUT's name: .parquet or a folder -> parquet, .db .sqlite .rocpd -> "
         "rocpd, .log .hplog -> log; else rocpd)"},
    {.name = "format", .kind = CLI_OPT_ENUM, .flags = CLI_OPT_HIDDEN, .alias_of = "output-format"},
    {.name = "force", .short_name = 'f', .kind = CLI_OPT_FLAG, .help = "replace OUT if it exists"},
    {0},
};

int cli_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }

/* ---- did you mean ---- */

/* Edit distance with adjacent transpositions (optimal string alignment), capped inputs. */
static size_t distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return (size_t)-1;
  size_t d[65][65];
  for (size_t i = 0; i <= n; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= m; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      size_t cost = a[i - 1] != b[j - 1], v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m];
}

const char *cli_suggest(const char *word, const char *const *cands, size_t n) {
  const char *best = NULL, *prefix = NULL;
  size_t bestd = (size_t)-1, nprefix = 0, len = strlen(word);
  for (size_t i = 0; i < n; i++) {
    if (!cands[i]) continue;
    size_t d = distance(word, cands[i]);
    if (d < bestd) {
      bestd = d;
      best = cands[i];
    }
    if (len >= 2 && strncmp(word, cands[i], len) == 0) {
      prefix = cands[i];
      nprefix++;
    }
  }
  /* a typo: at most one edit per four characters (and at least one allowed) */
  if (best && bestd <= 1 + len / 4 && bestd < len) return best;
  return nprefix == 1 ? prefix : NULL;
}

/* ---- checks ---- */

/* A path that exists must be a regular file: FIFOs, devices and sockets would block or never end. */
static int regular(const char *v, int must_exist, char *err, size_t len) {
  struct stat st;
  if (stat(v, &st) != 0) {
    if (!must_exist && errno == ENOENT) return CLI_OK;
    snprintf(err, len, "%s: %s", v, strerror(errno));
    return CLI_FAIL;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, len, "%s: not a regular file (%s)", v,
             S_ISDIR(st.st_mode)    ? "a directory"
             : S_ISFIFO(st.st_mode) ? "a FIFO"
             : S_ISSOCK(st.st_mode) ? "a socket"
                                    : "a device");
    return CLI_FAIL;
  }
  return CLI_OK;
}

int cli_check_file(const char *v, char *err, size_t len) { return regular(v, 1, err, len); }

int cli_check_device(const char *v, char *err, size_t len) {
  /* a name is looked up among the descriptions; a path (with a '/' or ending in .device) must be a file; a
   * missing one is left to the device loader, which says so */
  size_t n = strlen(v);
  if (!strchr(v, '/') && !(n > 7 && strcmp(v + n - 7, ".device") == 0)) return CLI_OK;
  return regular(v, 0, err, len);
}

/* ---- parsing ---- */

static size_t count_opts(const cli_spec *s) {
  size_t n = 0;
  for (const cli_opt *const *t = s->tables; *t; t++)
    for (const cli_opt *o = *t; o->name; o++)
      n++;
  return n;
}

static long find_long(const cli_args *a, const char *name, size_t len) {
  for (size_t i = 0; i < a->nopts; i++)
    if (strlen(a->opts[i]->name) == len && strncmp(a->opts[i]->name, name, len) == 0) return (long)i;
  return -1;
}

static long find_short(const cli_args *a, char c) {
  for (size_t i = 0; i < a->nopts; i++)
    if (a->opts[i]->short_name == c) return (long)i;
  return -1;
}

/* The option whose values an entry stores (itself or its alias target). */
static long target(const cli_args *a, long i) {
  if (!a->opts[i]->alias_of) return i;
  long t = find_long(a, a->opts[i]->alias_of, strlen(a->opts[i]->alias_of));
  assert(t >= 0);
  return t;
}

static const char *const *choices_of(const cli_opt *o) {
  return o->choices_fn ? o->choices_fn() : o->choices;
}

/* "'a', 'b' or 'c'" */
static void join_choices(const char *const *c, char *out, size_t len) {
  size_t w = 0, n = 0;
  out[0] = 0;
  while (c[n])
    n++;
  for (size_t i = 0; i < n && w < len; i++)
    w += (size_t)snprintf(out + w, len - w, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or " : ", ", c[i]);
}

static void usage_error(const cli_spec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void usage_error(const cli_spec *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = NULL;
  int n = vasprintf(&text, fmt, ap);
  va_end(ap);
  cli_error("%s: %s", s->command, n < 0 ? "out of memory" : text); /* control characters made visible */
  free(text);
}

/* Check and store one value of option i (spelled `spelled` on the command line). */
static int take(cli_args *a, long i, const char *spelled, const char *value) {
  const cli_spec *s = a->spec;
  long t = target(a, i);
  const cli_opt *o = a->opts[t];
  cli_val *v = &a->vals[t];
  char err[1200];
  if (o->kind == CLI_OPT_FLAG) {
    v->n++;
    return CLI_PROCEED;
  }
  if (!*value) {
    usage_error(s, "option '%s' needs a value (an empty one is not allowed)", spelled);
    return CLI_USAGE;
  }
  switch (o->kind) {
  case CLI_OPT_UINT: {
    char *end;
    errno = 0;
    unsigned long u = strtoul(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end || errno || u < o->min || u > o->max) {
      char range[64];
      snprintf(range, sizeof range, "from %lu to %lu", o->min, o->max);
      usage_error(s, "--%s needs a number %s, not '%s'", o->name, range, value);
      return CLI_USAGE;
    }
    if (v->n && !(o->flags & CLI_OPT_REPEAT) && u != v->u) break;
    v->u = u;
    break;
  }
  case CLI_OPT_ENUM: {
    const char *const *c = choices_of(o);
    size_t n = 0;
    while (c[n] && strcmp(c[n], value))
      n++;
    if (!c[n]) {
      char all[256], hint[300] = "";
      join_choices(c, all, sizeof all);
      size_t nc = 0;
      while (c[nc])
        nc++;
      const char *sug = cli_suggest(value, c, nc);
      if (sug) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sug);
      char msg[700];
      snprintf(msg, sizeof msg, "--%s must be %s, not '%s'%s", o->name, all, value, hint);
      usage_error(s, "%s", msg);
      return CLI_USAGE;
    }
    break;
  }
  case CLI_OPT_LIST: {
    char why[1200];
    const char *x = cli_list_expand(value, why, sizeof why); /* @FILE (list_file.c) */
    if (!x) {
      usage_error(s, "--%s %s", o->name, why);
      return CLI_FAIL; /* an input file's problem, as an unknown counter */
    }
    value = x;
    size_t l = strlen(value);
    if (value[0] == ',' || value[l - 1] == ',' || strstr(value, ",,")) {
      usage_error(s, "--%s '%s': an empty name in the list", o->name, value);
      return CLI_USAGE;
    }
    break;
  }
  default: break;
  }
  /* one value unless repeatable: the same value twice is harmless, another is a contradiction */
  if (v->n && !(o->flags & CLI_OPT_REPEAT)) {
    if (strcmp(v->v[v->n - 1], value) != 0) {
      usage_error(s, "--%s given twice ('%s' and '%s'): give one", o->name, v->v[v->n - 1], value);
      return CLI_USAGE;
    }
    return CLI_PROCEED;
  }
  if (o->check) {
    int rc = o->check(value, err, sizeof err);
    if (rc != CLI_OK) {
      usage_error(s, "--%s %s", o->name, err);
      return rc;
    }
  }
  const char **nv = realloc(v->v, (v->n + 1) * sizeof *nv);
  if (!nv) {
    usage_error(s, "out of memory");
    return CLI_FAIL;
  }
  nv[v->n++] = value;
  v->v = nv;
  return CLI_PROCEED;
}

static int unknown_option(cli_args *a, const char *arg, size_t len) {
  const char *names[128];
  size_t n = 0;
  for (size_t i = 0; i < a->nopts && n < 128; i++)
    names[n++] = a->opts[i]->name;
  char word[128];
  snprintf(word, sizeof word, "%.*s", (int)(len < 127 ? len : 127), arg);
  const char *sug = arg[0] == '-' && arg[1] == '-' ? cli_suggest(word + 2, names, n) : NULL;
  if (sug) { /* an old spelling suggests the current one */
    long i = find_long(a, sug, strlen(sug));
    if (a->opts[i]->alias_of) sug = a->opts[i]->alias_of;
  }
  fprintf(stderr, "hubprof: %s: unknown option '%s'", a->spec->command, word);
  if (sug) fprintf(stderr, "; did you mean '--%s'?", sug);
  fprintf(stderr, " (see 'hubprof %s --help')\n", a->spec->command);
  return CLI_USAGE;
}

int cli_parse(const cli_spec *spec, int argc, char **argv, cli_args *a) {
  memset(a, 0, sizeof *a);
  a->spec = spec;
  a->nopts = count_opts(spec);
  a->opts = calloc(a->nopts, sizeof *a->opts);
  a->vals = calloc(a->nopts, sizeof *a->vals);
  a->operands = calloc((size_t)(argc > 0 ? argc : 1), sizeof *a->operands);
  if (!a->opts || !a->vals || !a->operands) {
    cli_args_free(a);
    cli_error("out of memory");
    return CLI_FAIL;
  }
  size_t k = 0;
  for (const cli_opt *const *t = spec->tables; *t; t++)
    for (const cli_opt *o = *t; o->name; o++)
      a->opts[k++] = o;
  int rc = CLI_PROCEED, help = 0;
  int i = 1;
  for (; i < argc && rc == CLI_PROCEED; i++) {
    char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (arg[0] != '-' || arg[1] == 0) { /* an operand ("-" included) */
      if (spec->stop_at_operand) break;
      a->operands[a->noperands++] = arg;
      continue;
    }
    if (arg[1] == '-') { /* --name, --name=value, --name value */
      const char *name = arg + 2, *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      long o = find_long(a, name, len);
      if (o < 0) {
        rc = unknown_option(a, arg, eq ? (size_t)(eq - arg) : strlen(arg));
        break;
      }
      const cli_opt *op = a->opts[target(a, o)];
      if (op->kind == CLI_OPT_FLAG) {
        if (eq) {
          usage_error(spec, "option '--%s' takes no value", op->name);
          rc = CLI_USAGE;
          break;
        }
        if (strcmp(op->name, "help") == 0) help = 1;
        rc = take(a, o, arg, "");
      } else if (eq) {
        rc = take(a, o, arg, eq + 1);
      } else if (i + 1 < argc) {
        rc = take(a, o, arg, argv[++i]);
      } else {
        usage_error(spec, "option '%s' needs a value", arg);
        rc = CLI_USAGE;
      }
      continue;
    }
    /* -x, -xVALUE, -x VALUE, -abc (flags) */
    for (char *p = arg + 1; *p && rc == CLI_PROCEED; p++) {
      long o = find_short(a, *p);
      if (o < 0) {
        char one[3] = {'-', *p, 0};
        rc = unknown_option(a, one, 2);
        break;
      }
      const cli_opt *op = a->opts[target(a, o)];
      char spelled[3] = {'-', *p, 0};
      if (op->kind == CLI_OPT_FLAG) {
        if (strcmp(op->name, "help") == 0) help = 1;
        rc = take(a, o, spelled, "");
        continue;
      }
      if (p[1])
        rc = take(a, o, spelled, p + 1);
      else if (i + 1 < argc)
        rc = take(a, o, spelled, argv[++i]);
      else {
        usage_error(spec, "option '%s' needs a value", spelled);
        rc = CLI_USAGE;
      }
      break;
    }
  }
  if (help && rc == CLI_PROCEED) { /* --help wins over everything else that parsed */
    cli_args_free(a);
    cli_help(spec, stdout);
    return cli_finish_stdout(CLI_OK);
  }
  if (rc != CLI_PROCEED) {
    cli_args_free(a);
    return rc;
  }
  for (; i < argc; i++)
    a->operands[a->noperands++] = argv[i];
  return CLI_PROCEED;
}

void cli_args_free(cli_args *a) {
  for (size_t i = 0; a->vals && i < a->nopts; i++)
    free(a->vals[i].v);
  free(a->vals);
  free(a->opts);
  free(a->operands);
  memset(a, 0, sizeof *a);
}

static const cli_val *val(const cli_args *a, const char *name) {
  long i = find_long(a, name, strlen(name));
  assert(i >= 0 && !a->opts[i]->alias_of);
  return i >= 0 ? &a->vals[i] : NULL;
}

int cli_given(const cli_args *a, const char *name) {
  const cli_val *v = val(a, name);
  return v ? (int)v->n : 0;
}

const char *cli_str(const cli_args *a, const char *name) {
  const cli_val *v = val(a, name);
  return v && v->n ? v->v[v->n - 1] : NULL;
}

unsigned long cli_uint(const cli_args *a, const char *name, unsigned long def) {
  const cli_val *v = val(a, name);
  return v && v->n ? v->u : def;
}

int cli_enum(const cli_args *a, const char *name, int def) {
  const char *s = cli_str(a, name);
  if (!s) return def;
  const char *const *c = choices_of(a->opts[find_long(a, name, strlen(name))]);
  for (int i = 0; c[i]; i++)
    if (strcmp(c[i], s) == 0) return i;
  return def;
}

const char *const *cli_list(const cli_args *a, const char *name, size_t *n) {
  const cli_val *v = val(a, name);
  *n = v ? v->n : 0;
  return v ? v->v : NULL;
}

/* ---- help ---- */

/* Print text from column `col` (the cursor is there), wrapped at HELP_WIDTH; continuation lines indented. */
static void wrap(FILE *out, const char *text, size_t col) {
  size_t x = col;
  const char *p = text;
  while (*p) {
    if (*p == '\n') {
      fprintf(out, "\n%*s", (int)col, "");
      x = col;
      p++;
      continue;
    }
    size_t sp = 0;
    while (p[sp] == ' ')
      sp++;
    size_t w = 0;
    while (p[sp + w] && p[sp + w] != ' ' && p[sp + w] != '\n')
      w++;
    if (x > col && x + sp + w > HELP_WIDTH) {
      fprintf(out, "\n%*s", (int)col, "");
      x = col;
    } else if (x > col) {
      fprintf(out, "%*s", (int)sp, "");
      x += sp;
    }
    fwrite(p + sp, 1, w, out);
    x += w;
    p += sp + w;
  }
}

void cli_help(const cli_spec *s, FILE *out) {
  fprintf(out, "usage: hubprof %s\n\n%s\n\noptions:\n", s->usage, s->about);
  for (const cli_opt *const *t = s->tables; *t; t++)
    for (const cli_opt *o = *t; o->name; o++) {
      if (o->flags & CLI_OPT_HIDDEN) continue;
      char left[256], value[200] = "";
      if (o->kind == CLI_OPT_ENUM) {
        const char *const *c = choices_of(o);
        size_t w = 0;
        for (size_t i = 0; c[i] && w < sizeof value; i++)
          w += (size_t)snprintf(value + w, sizeof value - w, "%s%s", i ? "|" : "", c[i]);
      } else if (o->kind != CLI_OPT_FLAG) {
        snprintf(value, sizeof value, "%s", o->value ? o->value : "VALUE");
      }
      if (o->short_name)
        snprintf(left, sizeof left, "  -%c, --%s%s%s", o->short_name, o->name, value[0] ? " " : "", value);
      else
        snprintf(left, sizeof left, "      --%s%s%s", o->name, value[0] ? " " : "", value);
      fputs(left, out);
      if (strlen(left) + 2 > HELP_COL)
        fprintf(out, "\n%*s", HELP_COL, "");
      else
        fprintf(out, "%*s", (int)(HELP_COL - strlen(left)), "");
      char text[1200];
      snprintf(text, sizeof text, "%s%s%s%s%s", o->help ? o->help : "", o->def ? " (default: " : "",
               o->def ? o->def : "", o->def ? ")" : "", o->flags & CLI_OPT_REPEAT ? " (repeatable)" : "");
      wrap(out, text, HELP_COL);
      fputc('\n', out);
    }
  if (s->epilog) fprintf(out, "\n%s\n", s->epilog);
}

const cli_opt cli_opts_api[] = {
    {.name = "api",
     .kind = CLI_OPT_FLAG,
     .help =
         "also record every OpenCL call the collector intercepts (regions of category \"api\", with thread, "
         "start and end) and every transfer command (memory_copy: bytes, direction, queue, device times); "
         "'hubprof analyze --by api|copy' sums them"},
    {0},
};

const cli_opt cli_opts_code[] = {
    {.name = "code",
     .kind = CLI_OPT_FLAG,
     .help = "also store each program's sources and binaries (code_object.source, code_blob); asking the "
             "runtime for the binaries makes PoCL compile every kernel once more. Without it a store keeps "
             "each program's identity (a hash of its sources and options, or of its binaries) and build "
             "options only; 'hubprof sample' keeps the sources for source lines"},
    {0},
};
