/* Derived metrics: the definition file parser (errors name file, line and column), name resolution with
 * "did you mean" suggestions and cycle detection, evaluation per dispatch and per group (NaN with flags,
 * never a crash), the search path of the built-in sets, and metric names to planner groups.
 * Sections: storage · parsing · resolving · queries · evaluation · search path · planning. Uses no libm. */
/* SPDX-License-Identifier: MIT */
#include "metrics.h"

#include "../common/hu_buf.h"
#include "../common/hu_dir.h"
#include "../common/hu_map.h"
#include "../common/hu_text.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MET_EXT ".metrics"
#define MET_MAX_DIRS 16
#define MAX_DEPTH 200 /* expression nesting */

/* ---- storage ---- */

enum {
  N_NUM = 1,
  N_NAME,    /* unresolved name (parse) */
  N_COUNTER, /* ref: counter index */
  N_VAR,     /* ref: hc_var */
  N_DEF,     /* ref: definition index (metric or constant) */
  N_NEG,
  N_ADD,
  N_SUB,
  N_MUL,
  N_DIV,
  N_MIN,
  N_MAX,
  N_ABS,
  N_SUM, /* ref: aggregate index */
  N_AVG,
};

typedef struct node {
  int op;
  int a, b; /* children, -1 when none */
  double num;
  long ref;
  char *name;   /* N_NAME and the names it resolved to (messages) */
  unsigned col; /* 1-based column in the definition's line */
  unsigned h;   /* height of the tree below (1: a leaf), at most HC_METRICS_DEPTH_MAX */
} node;

typedef struct def {
  char *name, *unit, *desc, *expr, *peak, *exceeds;
  const char *file, *set, *device; /* owned by the metrics object */
  unsigned line;
  int is_const;
  int root, peak_root; /* nodes, -1 when none */
  int state;           /* cycle search: 0 new, 1 on the path, 2 done */
  unsigned height;     /* the root's tree height counting the definitions it uses (after visit) */
  size_t *counters, ncounters;
  size_t *aggs, naggs;
  unsigned vars;
  int aggregates;
  hc_metric_info info;
} def;

struct hc_metrics {
  def *defs;
  size_t ndefs, capdefs;
  node *nodes;
  size_t nnodes, capnodes;
  hu_strmap defmap;      /* definition names: index = definition index (lookups in constant time) */
  hu_strmap counters;    /* counter names, after resolve: index = counter index */
  size_t *cmark, *amark; /* while resolving: the definition (index + 1) a counter, an aggregate was last
                          * added to (each added once in constant time) */
  size_t nrefs;          /* counters and aggregates of every definition's lists (HC_METRICS_REFS_MAX) */
  size_t *metrics;       /* defs that are metrics, in definition order */
  size_t nmetrics;
  int *agg_node; /* node of each aggregate */
  size_t naggs, capaggs;
  char **owned; /* file, set and device strings */
  size_t nowned, capowned;
  int resolved;
  char error[HC_ERROR_MAX]; /* the last failure's message (hc_metrics_error) */
};

static const char *const var_names[HC_VAR_COUNT] = {"duration",        "grid_size",     "workgroup_size",
                                                    "compute_units",   "max_clock_mhz", "global_mem_bytes",
                                                    "local_mem_bytes", "wave_size"};

const char *hc_var_name(int v) { return v >= 0 && v < HC_VAR_COUNT ? var_names[v] : NULL; }

static const char *own(hc_metrics *m, const char *s) {
  if (hu_grow((void **)&m->owned, &m->capowned, m->nowned + 1, sizeof *m->owned)) return NULL;
  char *c = strdup(s);
  if (c) m->owned[m->nowned++] = c;
  return c;
}

/* What a definition owns (counters and aggs are set by resolving; NULL before). */
static void def_free(def *d) {
  free(d->name);
  free(d->unit);
  free(d->desc);
  free(d->expr);
  free(d->peak);
  free(d->exceeds);
  free(d->counters);
  free(d->aggs);
}

hc_status hc_metrics_new(hc_metrics **out) {
  if (!out) return HC_ERR_INVALID;
  *out = calloc(1, sizeof **out);
  return *out ? HC_OK : HC_ERR_NOMEM;
}

const char *hc_metrics_error(const hc_metrics *m) { return m ? m->error : "out of memory"; }

void hc_metrics_free(hc_metrics *m) {
  if (!m) return;
  for (size_t i = 0; i < m->ndefs; i++)
    def_free(&m->defs[i]);
  for (size_t i = 0; i < m->nnodes; i++)
    free(m->nodes[i].name);
  for (size_t i = 0; i < m->nowned; i++)
    free(m->owned[i]);
  free(m->defs);
  free(m->nodes);
  hu_strmap_free(&m->counters);
  hu_strmap_free(&m->defmap);
  free(m->metrics);
  free(m->agg_node);
  free(m->owned);
  free(m);
}

/* The one setter of the metrics' message (hc_metrics_error). */
static void seterr(hc_metrics *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(hc_metrics *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->error, sizeof m->error, fmt, ap);
  va_end(ap);
}

static long find_def(const hc_metrics *m, const char *name) { return hu_strmap_find(&m->defmap, name); }

/* ---- parsing ---- */

typedef struct parser {
  hc_metrics *m;
  const char *file; /* for messages */
  unsigned line;
  const char *what, *name; /* "metric", "x": the definition being parsed */
  const char *start, *p;   /* the expression text, the cursor */
  unsigned col0;           /* column of start in the line */
  int depth;
  int failed;
} parser;

static void perr(parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(parser *ps, const char *at, const char *fmt, ...) {
  if (ps->failed) return;
  ps->failed = 1;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  seterr(ps->m, "%s:%u: %s '%s': %s at column %u", ps->file, ps->line, ps->what, ps->name, msg,
         ps->col0 + (unsigned)(at - ps->start));
}

static int new_node(parser *ps, int op, int a, int b, const char *at) {
  hc_metrics *m = ps->m;
  if (hu_grow((void **)&m->nodes, &m->capnodes, m->nnodes + 1, sizeof *m->nodes)) {
    perr(ps, at, "out of memory");
    return -1;
  }
  /* the tree's height bounds every recursion over it (resolving, collecting, evaluating) */
  unsigned h = 1 + (a >= 0 ? m->nodes[a].h : 0), hb = 1 + (b >= 0 ? m->nodes[b].h : 0);
  if (hb > h) h = hb;
  if (h > HC_METRICS_DEPTH_MAX) {
    perr(ps, at, "expression deeper than %d levels (a chain of more than %d operators; docs/metrics.md)",
         HC_METRICS_DEPTH_MAX, HC_METRICS_DEPTH_MAX - 1);
    return -1;
  }
  node *n = &m->nodes[m->nnodes];
  memset(n, 0, sizeof *n);
  n->h = h;
  n->op = op;
  n->a = a;
  n->b = b;
  n->col = ps->col0 + (unsigned)(at - ps->start);
  return (int)m->nnodes++;
}

static void skip_blanks(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t')
    ps->p++;
}

static int name_start(int c) { return isalpha(c) || c == '_'; }
static int name_char(int c) { return isalnum(c) || c == '_' || c == '.' || c == ':'; }

/* A name: letters, digits, _ . : and '-' between a name character and a letter (task-clock); or any
 * text between backquotes. Returns a malloc'd copy, NULL when none starts here. */
static char *read_name(parser *ps) {
  const char *s = ps->p, *e;
  if (*s == '`') {
    e = strchr(s + 1, '`');
    if (!e || e == s + 1) {
      perr(ps, s, e ? "empty name between backquotes" : "unterminated backquote");
      return NULL;
    }
    ps->p = e + 1;
    return strndup(s + 1, (size_t)(e - s - 1));
  }
  if (!name_start((unsigned char)*s)) return NULL;
  e = s + 1;
  for (;;) {
    if (name_char((unsigned char)*e))
      e++;
    else if (*e == '-' && name_start((unsigned char)e[1]))
      e++;
    else
      break;
  }
  ps->p = e;
  return strndup(s, (size_t)(e - s));
}

static int parse_expr(parser *ps);

static int parse_primary(parser *ps) {
  skip_blanks(ps);
  const char *at = ps->p;
  if (++ps->depth > MAX_DEPTH) {
    perr(ps, at, "expression nested too deeply");
    return -1;
  }
  int r = -1;
  if (isdigit((unsigned char)*at) || (*at == '.' && isdigit((unsigned char)at[1]))) {
    char *end;
    double v = strtod(at, &end);
    if (name_start((unsigned char)*end)) {
      perr(ps, end, "a number followed by a name (write 2 * x)");
      goto out;
    }
    ps->p = end;
    if ((r = new_node(ps, N_NUM, -1, -1, at)) >= 0) ps->m->nodes[r].num = v;
  } else if (*at == '(') {
    ps->p++;
    int e = parse_expr(ps);
    if (e < 0) goto out;
    skip_blanks(ps);
    if (*ps->p != ')') {
      perr(ps, ps->p, *ps->p ? "expected ')'" : "missing ')' at the end");
      goto out;
    }
    ps->p++;
    r = e;
  } else if (*at == '-' || *at == '+') {
    ps->p++;
    int e = parse_primary(ps);
    if (e < 0) goto out;
    r = *at == '-' ? new_node(ps, N_NEG, e, -1, at) : e;
  } else {
    char *name = read_name(ps);
    if (!name) {
      if (!ps->failed) {
        if (*at)
          perr(ps, at, "expected a name, a number or '(', not '%c'", *at);
        else
          perr(ps, at, "expression ends early");
      }
      goto out;
    }
    skip_blanks(ps);
    if (*ps->p != '(' || *at == '`') {
      if ((r = new_node(ps, N_NAME, -1, -1, at)) >= 0)
        ps->m->nodes[r].name = name;
      else
        free(name);
      goto out;
    }
    /* a function call */
    static const struct {
      const char *name;
      int op, min, max;
    } fns[] = {{"min", N_MIN, 1, 64},
               {"max", N_MAX, 1, 64},
               {"abs", N_ABS, 1, 1},
               {"sum", N_SUM, 1, 1},
               {"avg", N_AVG, 1, 1}};
    int f = -1;
    for (int i = 0; i < 5; i++)
      if (strcasecmp(name, fns[i].name) == 0) f = i;
    if (f < 0) {
      perr(ps, at, "unknown function '%s' (min, max, abs, SUM, AVG)", name);
      free(name);
      goto out;
    }
    free(name);
    ps->p++;
    int args[64], nargs = 0;
    skip_blanks(ps);
    if (*ps->p != ')')
      for (;;) {
        int e = parse_expr(ps);
        if (e < 0) goto out;
        if (nargs == 64) {
          perr(ps, ps->p, "too many arguments");
          goto out;
        }
        args[nargs++] = e;
        skip_blanks(ps);
        if (*ps->p == ',') {
          ps->p++;
          continue;
        }
        if (*ps->p == ')') break;
        perr(ps, ps->p, *ps->p ? "expected ',' or ')'" : "missing ')' at the end");
        goto out;
      }
    ps->p++;
    if (nargs < fns[f].min || nargs > fns[f].max) {
      perr(ps, at, "%s() takes %s argument%s, not %d", fns[f].name, fns[f].max == 1 ? "one" : "one or more",
           fns[f].max == 1 ? "" : "s", nargs);
      goto out;
    }
    int op = fns[f].op;
    if (op == N_MIN || op == N_MAX) {
      r = args[0];
      for (int i = 1; i < nargs && r >= 0; i++)
        r = new_node(ps, op, r, args[i], at);
    } else if ((r = new_node(ps, op, args[0], -1, at)) >= 0 && (op == N_SUM || op == N_AVG)) {
      hc_metrics *m = ps->m;
      if (hu_grow((void **)&m->agg_node, &m->capaggs, m->naggs + 1, sizeof *m->agg_node)) {
        perr(ps, at, "out of memory");
        r = -1;
        goto out;
      }
      m->nodes[r].ref = (long)m->naggs;
      m->agg_node[m->naggs++] = r;
    }
  }
out:
  ps->depth--;
  return ps->failed ? -1 : r;
}

/* A left-associative chain of one precedence level's operators: level 0 is + and -, level 1 is * and /
 * (whose operands are primaries). */
static int parse_level(parser *ps, int level) {
  static const char ops[2][2] = {{'+', '-'}, {'*', '/'}};
  static const int kinds[2][2] = {{N_ADD, N_SUB}, {N_MUL, N_DIV}};
  int l = level ? parse_primary(ps) : parse_level(ps, 1);
  while (l >= 0) {
    skip_blanks(ps);
    char c = *ps->p;
    if (!c || (c != ops[level][0] && c != ops[level][1])) break;
    const char *at = ps->p++;
    int r = level ? parse_primary(ps) : parse_level(ps, 1);
    if (r < 0) return -1;
    l = new_node(ps, kinds[level][c == ops[level][1]], l, r, at);
  }
  return l;
}

static int parse_expr(parser *ps) { return parse_level(ps, 0); }

/* Parse a whole expression of a definition; -1 with err set on failure. */
static int parse_full(parser *ps, const char *text, unsigned col0) {
  ps->start = ps->p = text;
  ps->col0 = col0;
  ps->depth = 0;
  skip_blanks(ps);
  if (!*ps->p) {
    perr(ps, ps->p, "empty expression");
    return -1;
  }
  int r = parse_expr(ps);
  if (r < 0) return -1;
  skip_blanks(ps);
  if (*ps->p) {
    perr(ps, ps->p, *ps->p == ')' ? "unbalanced ')'" : "unexpected '%c'", *ps->p);
    return -1;
  }
  return r;
}

static int valid_def_name(const char *s) {
  if (!name_start((unsigned char)*s)) return 0;
  for (s++; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* Split "KEYWORD REST": returns the keyword's length, *rest points at REST (blanks skipped). */
static size_t keyword(const char *s, const char **rest) {
  size_t n = 0;
  while (s[n] && s[n] != ' ' && s[n] != '\t')
    n++;
  const char *r = s + n;
  while (*r == ' ' || *r == '\t')
    r++;
  *rest = r;
  return n;
}

static int kw_is(const char *s, size_t n, const char *kw) {
  return strlen(kw) == n && strncmp(s, kw, n) == 0;
}

/* One file's text being added: where it started (to take it all back on failure) and what it said so far. */
typedef struct mfile {
  hc_metrics *m;
  const char *file, *ofile, *oset, *odev; /* odev: its `device` line, or "" */
  const char *device;                     /* the device being described, or NULL: any */
  int skip_other;
  size_t first, first_node, first_agg;
  int seen_set, seen_device;
  long last; /* its last definition, -1 before the first */
  unsigned line;
  const char *buf; /* the line, for column numbers */
} mfile;

/* The next line of *pp into *buf (comments cut, blanks trimmed); NULL at the end of the text or on an error
 * (*st says which); "" for a line with nothing in it. */
static char *next_line(mfile *f, const char **pp, char **buf, size_t *cap, hc_status *st) {
  const char *p = *pp;
  if (!*p) return NULL;
  f->line++;
  size_t len = strcspn(p, "\n");
  if (len > HC_METRICS_LINE_MAX) {
    seterr(f->m, "%s:%u: line longer than %d bytes (the limit of a metrics line; docs/metrics.md)", f->file,
           f->line, HC_METRICS_LINE_MAX);
    *st = HC_ERR_PARSE;
    return NULL;
  }
  if (hu_grow((void **)buf, cap, len + 1, 1)) {
    *st = HC_ERR_NOMEM;
    return NULL;
  }
  char *b = *buf;
  memcpy(b, p, len);
  b[len] = 0;
  *pp = p + len + (p[len] == '\n');
  /* comments: '#' at the start or after a blank; then trim */
  for (char *c = b; *c; c++)
    if (*c == '#' && (c == b || c[-1] == ' ' || c[-1] == '\t')) {
      *c = 0;
      break;
    }
  size_t n = strlen(b);
  while (n && (b[n - 1] == ' ' || b[n - 1] == '\t' || b[n - 1] == '\r'))
    b[--n] = 0;
  char *s = b;
  while (*s == ' ' || *s == '\t')
    s++;
  for (char *c = s; *c; c++)
    if ((unsigned char)*c < 0x20 && *c != '\t') {
      seterr(f->m, "%s:%u: control character in the line", f->file, f->line);
      *st = HC_ERR_PARSE;
      return NULL;
    }
  f->buf = b;
  return s;
}

/* 1 when `device` is one of the comma-separated names of a `device` line (NVIDIA chips share a set:
 * "device GA100,GH100,GB100"; chip names matched without regard to case). */
static int device_listed(const char *line, const char *device) {
  size_t dl = strlen(device);
  for (const char *p = line;;) {
    size_t l = strcspn(p, ",");
    if (l == dl && !strncasecmp(p, device, l)) return 1;
    if (!p[l]) return 0;
    p += l + 1;
  }
}

/* `set NAME` or `device NAME` (s: the keyword). *stop: a set for another device, to be skipped. */
static hc_status stmt_header(mfile *f, const char *s, const char *rest, int *stop) {
  hc_metrics *m = f->m;
  int is_set = s[0] == 's';
  if (is_set ? f->seen_set : f->seen_device) {
    seterr(m, "%s:%u: '%s' given twice", f->file, f->line, is_set ? "set" : "device");
    return HC_ERR_PARSE;
  }
  if (m->ndefs > f->first) {
    seterr(m, "%s:%u: '%s' must come before the definitions", f->file, f->line, is_set ? "set" : "device");
    return HC_ERR_PARSE;
  }
  if (!*rest || strpbrk(rest, " \t")) {
    seterr(m, "%s:%u: expected '%s NAME'", f->file, f->line, is_set ? "set" : "device");
    return HC_ERR_PARSE;
  }
  if (is_set) {
    f->seen_set = 1;
    return (f->oset = own(m, rest)) ? HC_OK : HC_ERR_NOMEM;
  }
  f->seen_device = 1;
  if (!(f->odev = own(m, rest))) return HC_ERR_NOMEM;
  if (f->device && !device_listed(rest, f->device)) {
    if (f->skip_other) { /* a set for another device: not ours */
      *stop = 1;
      return HC_OK;
    }
    seterr(m, "%s:%u: these metrics are for device '%s', not '%s'", f->file, f->line, rest, f->device);
    return HC_ERR_INVALID;
  }
  return HC_OK;
}

/* `metric NAME = EXPRESSION` or `const NAME = EXPRESSION` (s: the keyword). */
static hc_status stmt_def(mfile *f, const char *s, const char *rest) {
  hc_metrics *m = f->m;
  int is_const = s[0] == 'c';
  const char *what = is_const ? "constant" : "metric";
  const char *eq = strchr(rest, '=');
  char name[256];
  size_t nl = eq ? (size_t)(eq - rest) : strlen(rest);
  while (nl && (rest[nl - 1] == ' ' || rest[nl - 1] == '\t'))
    nl--;
  if (nl >= sizeof name) nl = sizeof name - 1;
  memcpy(name, rest, nl);
  name[nl] = 0;
  if (!eq || !nl) {
    seterr(m, "%s:%u: expected '%s NAME = EXPRESSION'", f->file, f->line, is_const ? "const" : "metric");
    return HC_ERR_PARSE;
  }
  if (!valid_def_name(name)) {
    seterr(m, "%s:%u: bad %s name '%s' (letters, digits and '_', not starting with a digit)", f->file,
           f->line, what, name);
    return HC_ERR_PARSE;
  }
  for (int v = 0; v < HC_VAR_COUNT; v++)
    if (strcmp(name, var_names[v]) == 0) {
      seterr(m, "%s:%u: '%s' is a built-in variable and cannot be redefined", f->file, f->line, name);
      return HC_ERR_PARSE;
    }
  long prev = find_def(m, name);
  if (prev >= 0) {
    seterr(m, "%s:%u: %s '%s' is already defined at %s:%u", f->file, f->line, what, name, m->defs[prev].file,
           m->defs[prev].line);
    return HC_ERR_PARSE;
  }
  if (hu_grow((void **)&m->defs, &m->capdefs, m->ndefs + 1, sizeof *m->defs)) return HC_ERR_NOMEM;
  def *d = &m->defs[m->ndefs];
  memset(d, 0, sizeof *d);
  d->root = d->peak_root = -1;
  d->is_const = is_const;
  d->file = f->ofile;
  d->set = f->oset;
  d->device = f->odev;
  d->line = f->line;
  if (!(d->name = strdup(name)) || !(d->expr = strdup(eq + 1 + strspn(eq + 1, " \t")))) {
    free(d->name);
    return HC_ERR_NOMEM;
  }
  m->ndefs++;
  if (hu_strmap_intern(&m->defmap, name, NULL) != (long)m->ndefs - 1) return HC_ERR_NOMEM;
  parser ps = {.m = m, .file = f->file, .line = f->line, .what = what, .name = d->name};
  int r = parse_full(&ps, eq + 1, (unsigned)(eq + 1 - f->buf) + 1);
  if (r < 0) return HC_ERR_PARSE;
  m->defs[m->ndefs - 1].root = r;
  f->last = (long)m->ndefs - 1;
  return HC_OK;
}

/* `unit`, `description`, `peak` or `exceeds` of the last metric (s: the keyword, kl its length). */
static hc_status stmt_attr(mfile *f, const char *s, size_t kl, const char *rest) {
  hc_metrics *m = f->m;
  char kw[16];
  snprintf(kw, sizeof kw, "%.*s", (int)kl, s);
  if (f->last < 0 || m->defs[f->last].is_const) {
    seterr(m, "%s:%u: '%s' must follow a 'metric' line", f->file, f->line, kw);
    return HC_ERR_PARSE;
  }
  def *d = &m->defs[f->last];
  char **slot = kw[0] == 'u' ? &d->unit : kw[0] == 'd' ? &d->desc : kw[0] == 'e' ? &d->exceeds : &d->peak;
  if (*slot) {
    seterr(m, "%s:%u: metric '%s' has two '%s' lines", f->file, f->line, d->name, kw);
    return HC_ERR_PARSE;
  }
  if (!*rest) {
    seterr(m, "%s:%u: '%s' needs a value", f->file, f->line, kw);
    return HC_ERR_PARSE;
  }
  if (!(*slot = strdup(rest))) return HC_ERR_NOMEM;
  if (kw[0] == 'p') {
    parser ps = {.m = m, .file = f->file, .line = f->line, .what = "peak of metric", .name = d->name};
    int r = parse_full(&ps, rest, (unsigned)(rest - f->buf) + 1);
    if (r < 0) return HC_ERR_PARSE;
    m->defs[f->last].peak_root = r;
  }
  return HC_OK;
}

/* Nothing of a bad file stays: its definitions and nodes dropped, the name map rebuilt from the rest. */
static hc_status take_back(mfile *f, hc_status st) {
  hc_metrics *m = f->m;
  for (size_t i = f->first; i < m->ndefs; i++)
    def_free(&m->defs[i]);
  m->ndefs = f->first;
  for (size_t i = f->first_node; i < m->nnodes; i++)
    free(m->nodes[i].name);
  m->nnodes = f->first_node;
  m->naggs = f->first_agg;
  hu_strmap_free(&m->defmap); /* the names of the definitions kept, again */
  memset(&m->defmap, 0, sizeof m->defmap);
  for (size_t i = 0; i < f->first && st != HC_ERR_NOMEM; i++)
    if (hu_strmap_intern(&m->defmap, m->defs[i].name, NULL) < 0) st = HC_ERR_NOMEM;
  if (st == HC_ERR_NOMEM) seterr(m, "%s: out of memory", f->file);
  return st;
}

/* The definitions of one file's text. skip_other: a `device` line naming another device skips the
 * file (built-in sets) instead of failing. */
static hc_status add_text(hc_metrics *m, const char *file, const char *text, const char *device,
                          int skip_other) {
  if (!m || !text) return HC_ERR_INVALID;
  if (m->resolved) {
    seterr(m, "%s: definitions added after the names were resolved", file);
    return HC_ERR_INVALID;
  }
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  char setname[256];
  snprintf(setname, sizeof setname, "%s", base);
  size_t bl = strlen(setname), el = strlen(MET_EXT);
  if (bl > el && strcmp(setname + bl - el, MET_EXT) == 0) setname[bl - el] = 0;
  mfile f = {.m = m,
             .file = file,
             .ofile = own(m, file),
             .oset = own(m, setname),
             .odev = own(m, ""),
             .device = device,
             .skip_other = skip_other,
             .first = m->ndefs,
             .first_node = m->nnodes,
             .first_agg = m->naggs,
             .last = -1};
  if (!f.ofile || !f.oset || !f.odev) return HC_ERR_NOMEM;
  hc_status st = HC_OK;
  const char *p = text;
  char *buf = NULL, *s;
  size_t bufcap = 0;
  int stop = 0;
  while (st == HC_OK && !stop && (s = next_line(&f, &p, &buf, &bufcap, &st))) {
    if (!*s) continue;
    const char *rest;
    size_t kl = keyword(s, &rest);
    if (kw_is(s, kl, "set") || kw_is(s, kl, "device"))
      st = stmt_header(&f, s, rest, &stop);
    else if (kw_is(s, kl, "metric") || kw_is(s, kl, "const"))
      st = stmt_def(&f, s, rest);
    else if (kw_is(s, kl, "unit") || kw_is(s, kl, "description") || kw_is(s, kl, "peak") ||
             kw_is(s, kl, "exceeds"))
      st = stmt_attr(&f, s, kl, rest);
    else {
      seterr(m,
             "%s:%u: unknown statement '%.*s' (set, device, metric, const, unit, description, peak, exceeds)",
             file, f.line, (int)(kl > 40 ? 40 : kl), s);
      st = HC_ERR_PARSE;
    }
  }
  free(buf);
  return st != HC_OK ? take_back(&f, st) : st;
}

hc_status hc_metrics_add_text(hc_metrics *m, const char *name, const char *text, const char *device) {
  if (!m) return HC_ERR_INVALID;
  m->error[0] = 0;
  return add_text(m, name ? name : "(text)", text, device, 0);
}

static hc_status add_file(hc_metrics *m, const char *path, const char *device, int skip_other) {
  if (!m) return HC_ERR_INVALID;
  m->error[0] = 0;
  if (!m || !path) return HC_ERR_INVALID;
  FILE *f = fopen(path, "r");
  if (!f) {
    seterr(m, "%s: %s", path, strerror(errno));
    return errno == ENOENT ? HC_ERR_UNKNOWN : HC_ERR_IO;
  }
  char *text = NULL;
  size_t len = 0, cap = 0;
  hc_status st = HC_OK;
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > HC_METRICS_FILE_MAX) {
    seterr(m, "%s: larger than %u bytes, the limit of a metrics file (docs/metrics.md)", path,
           HC_METRICS_FILE_MAX);
    fclose(f);
    return HC_ERR_PARSE;
  }
  for (;;) { /* read whole, at most the limit (a file growing as it is read, or a size fstat cannot tell) */
    if (hu_grow((void **)&text, &cap, len + 4097, 1)) {
      st = HC_ERR_NOMEM;
      break;
    }
    size_t got = fread(text + len, 1, 4096, f);
    len += got;
    if (len > HC_METRICS_FILE_MAX) {
      seterr(m, "%s: larger than %u bytes, the limit of a metrics file (docs/metrics.md)", path,
             HC_METRICS_FILE_MAX);
      st = HC_ERR_PARSE;
      break;
    }
    if (got < 4096) break;
  }
  if (st == HC_OK && ferror(f)) {
    seterr(m, "%s: read error", path);
    st = HC_ERR_IO;
  }
  fclose(f);
  if (st == HC_OK && memchr(text, 0, len)) {
    seterr(m, "%s: not a text file", path);
    st = HC_ERR_PARSE;
  }
  if (st == HC_OK) {
    text[len] = 0;
    st = add_text(m, path, text, device, skip_other);
  } else if (st == HC_ERR_NOMEM) {
    seterr(m, "%s: out of memory", path);
  }
  free(text);
  return st;
}

hc_status hc_metrics_add_file(hc_metrics *m, const char *path, const char *device) {
  return add_file(m, path, device, 0);
}

/* ---- resolving ---- */

/* The closest candidate within a third of the name's length, or NULL. */
typedef struct suggest {
  const char *name;
  const char *best;
  size_t dist;
} suggest;

static void consider(suggest *s, const char *cand) {
  size_t d = hu_edit_distance(s->name, cand), lim = strlen(s->name) / 3 + 1;
  if (d <= lim && d < s->dist) {
    s->dist = d;
    s->best = cand;
  }
}

static long counter_index(hc_metrics *m, const char *name) {
  long i = hu_strmap_intern(&m->counters, name, NULL);
  return i < 0 ? -2 : i;
}

static int in_list(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (v[i] && strcmp(v[i], s) == 0) return 1;
  return 0;
}

/* Resolve the names of one tree. */
static hc_status resolve_tree(hc_metrics *m, size_t di, int ni, const char *const *cat, size_t ncat) {
  if (ni < 0) return HC_OK;
  node *n = &m->nodes[ni];
  hc_status st = resolve_tree(m, di, n->a, cat, ncat);
  if (st == HC_OK) st = resolve_tree(m, di, n->b, cat, ncat);
  if (st != HC_OK || n->op != N_NAME) return st;
  def *d = &m->defs[di];
  const char *what = d->is_const ? "constant" : "metric";
  for (int v = 0; v < HC_VAR_COUNT; v++)
    if (strcmp(n->name, var_names[v]) == 0) {
      n->op = N_VAR;
      n->ref = v;
      return HC_OK;
    }
  long k = find_def(m, n->name);
  if (k >= 0) {
    if (d->is_const && !m->defs[k].is_const) {
      seterr(m,
             "%s:%u: constant '%s' uses metric '%s': constants use numbers, variables and other "
             "constants",
             d->file, d->line, d->name, n->name);
      return HC_ERR_PARSE;
    }
    n->op = N_DEF;
    n->ref = k;
    return HC_OK;
  }
  if (cat && !in_list(cat, ncat, n->name)) {
    suggest s = {.name = n->name, .dist = (size_t)-1};
    for (size_t i = 0; i < ncat; i++)
      if (cat[i]) consider(&s, cat[i]);
    for (size_t i = 0; i < m->ndefs; i++)
      consider(&s, m->defs[i].name);
    for (int v = 0; v < HC_VAR_COUNT; v++)
      consider(&s, var_names[v]);
    char hint[300] = "";
    /* "a-b" where a and b are known: a subtraction needs blanks */
    for (const char *dash = strchr(n->name, '-'); dash && !hint[0]; dash = strchr(dash + 1, '-')) {
      char left[256];
      snprintf(left, sizeof left, "%.*s", (int)(dash - n->name), n->name);
      const char *right = dash + 1;
      int lk = find_def(m, left) >= 0 || in_list(cat, ncat, left) || in_list(var_names, HC_VAR_COUNT, left);
      int rk =
          find_def(m, right) >= 0 || in_list(cat, ncat, right) || in_list(var_names, HC_VAR_COUNT, right);
      if (lk && rk) snprintf(hint, sizeof hint, " (a subtraction needs blanks: '%s - %s')", left, right);
    }
    if (!hint[0] && s.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", s.best);
    seterr(m, "%s:%u: %s '%s': unknown name '%s'%s", d->file, d->line, what, d->name, n->name, hint);
    return HC_ERR_UNKNOWN;
  }
  if (d->is_const) {
    seterr(m,
           "%s:%u: constant '%s' uses '%s', which is not a constant or a variable (counters belong "
           "in metrics)",
           d->file, d->line, d->name, n->name);
    return HC_ERR_PARSE;
  }
  long c = counter_index(m, n->name);
  if (c < 0) return HC_ERR_NOMEM;
  n->op = N_COUNTER;
  n->ref = c;
  return HC_OK;
}

/* Add x to d's list v (counters: mark = m->cmark, else aggregates) unless there: HC_OK, HC_ERR_NOMEM, or
 * HC_ERR_PARSE past a limit (the message set). */
static hc_status push_unique(hc_metrics *m, def *d, size_t **v, size_t *n, size_t x, size_t *mark) {
  size_t stamp = (size_t)(d - m->defs) + 1;
  if (mark[x] == stamp) return HC_OK;
  if (mark == m->cmark && *n == HC_METRICS_COUNTERS_MAX) {
    seterr(m, "%s:%u: metric '%s' needs more than %d counters (docs/metrics.md)", d->file, d->line, d->name,
           HC_METRICS_COUNTERS_MAX);
    return HC_ERR_PARSE;
  }
  if (m->nrefs == HC_METRICS_REFS_MAX) {
    seterr(m,
           "%s:%u: metric '%s': the definitions use more than %d counters and aggregates in all, "
           "counting those of the definitions they use (docs/metrics.md)",
           d->file, d->line, d->name, HC_METRICS_REFS_MAX);
    return HC_ERR_PARSE;
  }
  if (*n < 4 || !(*n & (*n - 1))) { /* 0..4, then at each power of two: room doubles */
    size_t *nv = realloc(*v, (*n < 4 ? 4 : 2 * *n) * sizeof *nv);
    if (!nv) return HC_ERR_NOMEM;
    *v = nv;
  }
  mark[x] = stamp;
  (*v)[(*n)++] = x;
  m->nrefs++;
  return HC_OK;
}

/* Counters, variables and aggregates a tree uses directly, and (through done definitions) indirectly. */
static hc_status collect(hc_metrics *m, def *d, int ni) {
  if (ni < 0) return HC_OK;
  node *n = &m->nodes[ni];
  hc_status st = collect(m, d, n->a);
  if (st == HC_OK) st = collect(m, d, n->b);
  if (st != HC_OK) return st;
  switch (n->op) {
  case N_COUNTER: return push_unique(m, d, &d->counters, &d->ncounters, (size_t)n->ref, m->cmark);
  case N_VAR: d->vars |= 1u << n->ref; return HC_OK;
  case N_SUM:
  case N_AVG: d->aggregates = 1; return push_unique(m, d, &d->aggs, &d->naggs, (size_t)n->ref, m->amark);
  case N_DEF: {
    def *o = &m->defs[n->ref];
    d->vars |= o->vars;
    d->aggregates |= o->aggregates;
    for (size_t i = 0; i < o->ncounters && st == HC_OK; i++)
      st = push_unique(m, d, &d->counters, &d->ncounters, o->counters[i], m->cmark);
    for (size_t i = 0; i < o->naggs && st == HC_OK; i++)
      st = push_unique(m, d, &d->aggs, &d->naggs, o->aggs[i], m->amark);
    return st;
  }
  default: return HC_OK;
  }
}

static hc_status visit(hc_metrics *m, size_t di, size_t *path, size_t depth, unsigned level);

/* Height of a tree counting the definitions it uses (theirs computed by visit before): the depth of the
 * evaluation's recursion. */
static unsigned def_height(const hc_metrics *m, int ni) {
  if (ni < 0) return 0;
  const node *n = &m->nodes[ni];
  unsigned a = def_height(m, n->a), b = def_height(m, n->b), h = a > b ? a : b;
  if (n->op == N_DEF) h = m->defs[n->ref].height;
  return h + 1;
}

static hc_status check_height(hc_metrics *m, const def *d, int root, const char *what) {
  unsigned h = def_height(m, root);
  if (h <= HC_METRICS_DEPTH_MAX) return HC_OK;
  seterr(m,
         "%s:%u: %s '%s': expression deeper than %d levels, counting the definitions it uses (%u; "
         "docs/metrics.md)",
         d->file, d->line, what, d->name, HC_METRICS_DEPTH_MAX, h);
  return HC_ERR_PARSE;
}

/* Visit the definitions a tree refers to. `level`: the nodes above this one, through the definitions on the
 * path (bounded, so this recursion is). */
static hc_status visit_tree(hc_metrics *m, int ni, size_t *path, size_t depth, unsigned level) {
  if (ni < 0) return HC_OK;
  if (++level > HC_METRICS_DEPTH_MAX) {
    const def *d = &m->defs[path[0]];
    seterr(m,
           "%s:%u: %s '%s': expression deeper than %d levels, counting the definitions it uses "
           "(docs/metrics.md)",
           d->file, d->line, d->is_const ? "constant" : "metric", d->name, HC_METRICS_DEPTH_MAX);
    return HC_ERR_PARSE;
  }
  const node *x = &m->nodes[ni];
  hc_status st = visit_tree(m, x->a, path, depth, level);
  if (st == HC_OK) st = visit_tree(m, x->b, path, depth, level);
  if (st == HC_OK && x->op == N_DEF) st = visit(m, (size_t)x->ref, path, depth, level);
  return st;
}

/* Depth-first: a definition on the current path reached again is a cycle. */
static hc_status visit(hc_metrics *m, size_t di, size_t *path, size_t depth, unsigned level) {
  def *d = &m->defs[di];
  if (d->state == 2) return HC_OK;
  path[depth] = di;
  if (d->state == 1) {
    size_t from = 0;
    while (path[from] != di)
      from++;
    const def *start = &m->defs[path[from]];
    char chain[1024];
    size_t w = 0;
    for (size_t i = from; i <= depth && w < sizeof chain; i++)
      w += (size_t)snprintf(chain + w, sizeof chain - w, "%s%s", i > from ? " -> " : "",
                            m->defs[path[i]].name);
    seterr(m, "%s:%u: %s '%s' depends on itself: %s", start->file, start->line,
           start->is_const ? "constant" : "metric", start->name, chain);
    return HC_ERR_PARSE;
  }
  if (depth + 1 >= 256) {
    seterr(m, "%s:%u: metric '%s': definitions nested too deeply", d->file, d->line, d->name);
    return HC_ERR_PARSE;
  }
  d->state = 1;
  hc_status st = visit_tree(m, d->root, path, depth + 1, level);
  if (st == HC_OK) st = check_height(m, d, d->root, d->is_const ? "constant" : "metric");
  if (st != HC_OK) return st;
  d->height = def_height(m, d->root);
  d->state = 2;
  return collect(m, d, d->root);
}

hc_status hc_metrics_resolve(hc_metrics *m, const char *const *counters, size_t ncounters) {
  if (!m) return HC_ERR_INVALID;
  m->error[0] = 0;
  if (!m || m->resolved) return HC_ERR_INVALID;
  hc_status st = HC_OK;
  for (size_t i = 0; i < m->ndefs && st == HC_OK; i++) {
    st = resolve_tree(m, i, m->defs[i].root, counters, ncounters);
    if (st == HC_OK) st = resolve_tree(m, i, m->defs[i].peak_root, counters, ncounters);
  }
  if (st == HC_OK && (!(m->cmark = calloc(m->counters.n + 1, sizeof *m->cmark)) ||
                      !(m->amark = calloc(m->naggs + 1, sizeof *m->amark))))
    st = HC_ERR_NOMEM;
  size_t path[256];
  for (size_t i = 0; i < m->ndefs && st == HC_OK; i++)
    st = visit(m, i, path, 0, 0);
  /* a peak's needs count as the metric's (its % of peak needs them) */
  for (size_t i = 0; i < m->ndefs && st == HC_OK; i++) {
    def *d = &m->defs[i];
    if (d->peak_root < 0) continue;
    for (size_t k = 0; k < d->ncounters; k++) /* marked again: a later definition may have marked them */
      m->cmark[d->counters[k]] = i + 1;
    for (size_t k = 0; k < d->naggs; k++)
      m->amark[d->aggs[k]] = i + 1;
    if ((st = check_height(m, d, d->peak_root, "peak of metric")) == HC_OK) st = collect(m, d, d->peak_root);
  }
  free(m->cmark);
  free(m->amark);
  m->cmark = m->amark = NULL;
  if (st == HC_OK && !(m->metrics = malloc((m->ndefs + 1) * sizeof *m->metrics))) st = HC_ERR_NOMEM;
  if (st != HC_OK) {
    if (st == HC_ERR_NOMEM) seterr(m, "out of memory");
    return st;
  }
  for (size_t i = 0; i < m->ndefs; i++) {
    def *d = &m->defs[i];
    d->info = (hc_metric_info){.name = d->name,
                               .unit = d->unit ? d->unit : "",
                               .description = d->desc ? d->desc : "",
                               .expression = d->expr,
                               .peak = d->peak ? d->peak : "",
                               .exceeds = d->exceeds ? d->exceeds : "",
                               .set = d->set,
                               .device = d->device,
                               .file = d->file,
                               .line = d->line,
                               .ncounters = d->ncounters,
                               .counters = d->counters,
                               .vars = d->vars,
                               .aggregates = d->aggregates};
    if (!d->is_const) m->metrics[m->nmetrics++] = i;
  }
  m->resolved = 1;
  return HC_OK;
}

/* ---- queries ---- */

size_t hc_metrics_count(const hc_metrics *m) { return m && m->resolved ? m->nmetrics : 0; }

const hc_metric_info *hc_metrics_get(const hc_metrics *m, size_t i) {
  return m && m->resolved && i < m->nmetrics ? &m->defs[m->metrics[i]].info : NULL;
}

long hc_metrics_find(const hc_metrics *m, const char *name) {
  if (!m || !m->resolved || !name) return -1;
  for (size_t i = 0; i < m->nmetrics; i++)
    if (strcmp(m->defs[m->metrics[i]].name, name) == 0) return (long)i;
  return -1;
}

size_t hc_metrics_suggest(const hc_metrics *m, const char *name, const char **out, size_t n) {
  if (!m || !m->resolved || !name || !n) return 0;
  size_t lim = strlen(name) / 3 + 1, got = 0;
  for (size_t d = 0; d <= lim && got < n; d++)
    for (size_t i = 0; i < m->nmetrics && got < n; i++)
      if (hu_edit_distance(name, m->defs[m->metrics[i]].name) == d) out[got++] = m->defs[m->metrics[i]].name;
  return got;
}

size_t hc_metrics_ncounters(const hc_metrics *m) { return m ? m->counters.n : 0; }
const char *hc_metrics_counter_name(const hc_metrics *m, size_t i) {
  return m ? hu_strmap_str(&m->counters, i) : NULL;
}
long hc_metrics_counter_find(const hc_metrics *m, const char *name) {
  return m && name ? hu_strmap_find(&m->counters, name) : -1;
}

/* ---- evaluation ---- */

typedef struct evst {
  const hc_metrics *m;
  const hc_metric_env *env;
  unsigned flags;
  uint32_t exec; /* the first execution seen, 0 none */
} evst;

static void saw_exec(evst *s, uint32_t e) {
  if (!e) return;
  if (!s->exec)
    s->exec = e;
  else if (s->exec != e)
    s->flags |= HC_MV_MIXED;
}

static int isnan_(double x) { return x != x; }

static double ev(evst *s, int ni) {
  const node *n = &s->m->nodes[ni];
  const hc_metric_env *env = s->env;
  double x, y;
  switch (n->op) {
  case N_NUM: return n->num;
  case N_COUNTER:
    x = env->counters ? env->counters[n->ref] : (double)NAN;
    if (isnan_(x)) {
      s->flags |= HC_MV_MISSING;
      return NAN;
    }
    if (env->imputed && env->imputed[n->ref]) s->flags |= HC_MV_IMPUTED;
    if (env->exec) saw_exec(s, env->exec[n->ref]);
    return x;
  case N_VAR:
    x = env->vars[n->ref];
    if (isnan_(x)) {
      s->flags |= HC_MV_MISSING;
      return NAN;
    }
    if (n->ref == HC_VAR_DURATION) saw_exec(s, env->duration_exec);
    return x;
  case N_DEF: return ev(s, s->m->defs[n->ref].root);
  case N_NEG: return -ev(s, n->a);
  case N_ABS: x = ev(s, n->a); return x < 0 ? -x : x;
  case N_ADD: x = ev(s, n->a); return x + ev(s, n->b);
  case N_SUB: x = ev(s, n->a); return x - ev(s, n->b);
  case N_MUL: x = ev(s, n->a); return x * ev(s, n->b);
  case N_DIV:
    x = ev(s, n->a);
    y = ev(s, n->b);
    if (y == 0) {
      s->flags |= HC_MV_DIV0;
      return NAN;
    }
    return x / y;
  case N_MIN:
  case N_MAX:
    x = ev(s, n->a);
    y = ev(s, n->b);
    if (isnan_(x) || isnan_(y)) return NAN;
    return n->op == N_MIN ? (x < y ? x : y) : (x > y ? x : y);
  case N_SUM:
  case N_AVG: {
    if (!env->acc) return ev(s, n->a); /* one dispatch: SUM(x) = AVG(x) = x */
    const hc_metric_acc *a = &env->acc[n->ref];
    double nd = env->ndispatches;
    if (a->n == 0) { /* no dispatch alone had a value: from the group's values */
      s->flags |= HC_MV_IMPUTED;
      x = ev(s, n->a);
      return n->op == N_SUM ? x * nd : x;
    }
    if ((double)a->n < nd) s->flags |= HC_MV_IMPUTED;
    if (n->op == N_AVG) return a->sum / (double)a->n;
    return (double)a->n < nd ? a->sum * nd / (double)a->n : a->sum;
  }
  default: return NAN;
  }
}

void hc_metric_eval(const hc_metrics *m, size_t i, const hc_metric_env *env, hc_metric_value *out) {
  if (!out) return;
  out->value = out->peak = out->pct_peak = NAN;
  out->flags = HC_MV_MISSING;
  if (!m || !m->resolved || i >= m->nmetrics || !env) return;
  const def *d = &m->defs[m->metrics[i]];
  evst s = {.m = m, .env = env};
  out->value = ev(&s, d->root);
  out->flags = s.flags;
  if (isnan_(out->value) && !(s.flags & (HC_MV_MISSING | HC_MV_DIV0))) out->flags |= HC_MV_MISSING;
  if (d->peak_root >= 0) {
    evst p = {.m = m, .env = env};
    out->peak = ev(&p, d->peak_root);
    if (!isnan_(out->value) && !isnan_(out->peak) && out->peak != 0)
      out->pct_peak = 100 * out->value / out->peak;
  }
}

size_t hc_metrics_naggs(const hc_metrics *m) { return m ? m->naggs : 0; }

size_t hc_metric_aggs(const hc_metrics *m, size_t i, size_t *out, size_t max) {
  if (!m || !m->resolved || i >= m->nmetrics) return 0;
  const def *d = &m->defs[m->metrics[i]];
  for (size_t k = 0; k < d->naggs && k < max; k++)
    out[k] = d->aggs[k];
  return d->naggs;
}

void hc_metrics_agg_add(const hc_metrics *m, size_t k, const hc_metric_env *dispatch, hc_metric_acc *acc) {
  if (!m || k >= m->naggs || !dispatch || !acc) return;
  hc_metric_env e = *dispatch;
  e.acc = NULL;
  evst s = {.m = m, .env = &e};
  double v = ev(&s, m->nodes[m->agg_node[k]].a);
  if (!isnan_(v)) {
    acc->sum += v;
    acc->n++;
  }
}

/* ---- search path ---- */

static int met_is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void met_add_dir(char dirs[][PATH_MAX], size_t *n, const char *d) {
  char real[PATH_MAX];
  if (*n >= MET_MAX_DIRS || !met_is_dir(d) || !realpath(d, real)) return;
  for (size_t i = 0; i < *n; i++)
    if (strcmp(dirs[i], real) == 0) return;
  snprintf(dirs[(*n)++], PATH_MAX, "%s", real);
}

/* share/hubprof/KIND one and two folders above the folder of `file`, and (for a library bundled in a
 * package) that folder's own share/hubprof/KIND. */
static void add_above(char dirs[][PATH_MAX], size_t *n, const char *file, const char *kind, int here_too) {
  char d[PATH_MAX], buf[PATH_MAX + 64];
  snprintf(d, sizeof d, "%s", file);
  char *slash = strrchr(d, '/');
  if (!slash) return;
  *slash = 0;
  snprintf(buf, sizeof buf, "%s/../share/hubprof/%s", d, kind);
  met_add_dir(dirs, n, buf);
  snprintf(buf, sizeof buf, "%s/../../share/hubprof/%s", d, kind);
  met_add_dir(dirs, n, buf);
  if (here_too) {
    snprintf(buf, sizeof buf, "%s/share/hubprof/%s", d, kind);
    met_add_dir(dirs, n, buf);
  }
}

size_t hc_data_dirs(const char *env_var, const char *kind, char dirs[][PATH_MAX]) {
  size_t n = 0;
  const char *env = getenv(env_var);
  if (env) {
    char buf[PATH_MAX];
    while (*env) {
      size_t len = strcspn(env, ":");
      if (len && len < sizeof buf) {
        memcpy(buf, env, len);
        buf[len] = 0;
        met_add_dir(dirs, &n, buf);
      }
      env += len;
      if (*env == ':') env++;
    }
  }
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = 0;
    add_above(dirs, &n, exe, kind, 0);
  }
  Dl_info info;
  if (dladdr((void *)&hc_metrics_files, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
    char real[PATH_MAX];
    if (realpath(info.dli_fname, real)) add_above(dirs, &n, real, kind, 1);
  }
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "/usr/local/share/hubprof/%s", kind);
  met_add_dir(dirs, &n, buf);
  snprintf(buf, sizeof buf, "/usr/share/hubprof/%s", kind);
  met_add_dir(dirs, &n, buf);
  return n;
}

hc_status hc_data_files(const char *env_var, const char *kind, const char *ext, char ***paths, size_t *n) {
  if (!paths) return HC_ERR_INVALID;
  char dirs[MET_MAX_DIRS][PATH_MAX];
  const char *dp[MET_MAX_DIRS];
  size_t nd = hc_data_dirs(env_var, kind, dirs);
  for (size_t i = 0; i < nd; i++)
    dp[i] = dirs[i];
  return hu_dir_find(dp, nd, ext, paths, n) == HU_OK ? HC_OK : HC_ERR_NOMEM;
}

hc_status hc_metrics_files(char ***paths, size_t *n) {
  return hc_data_files("HUBPROF_METRICS", "metrics", MET_EXT, paths, n);
}

void hc_metrics_files_free(char **paths) { hu_strv_free(paths); }

hc_status hc_metrics_add_builtin(hc_metrics *m, const char *device) {
  if (!m) return HC_ERR_INVALID;
  m->error[0] = 0;
  char **paths;
  hc_status st = hc_metrics_files(&paths, NULL);
  if (st != HC_OK) {
    seterr(m, "out of memory");
    return st;
  }
  for (char **p = paths; *p && st == HC_OK; p++)
    st = add_file(m, *p, device, 1);
  hc_metrics_files_free(paths);
  return st;
}

/* ---- planning ---- */

/* Split "a, b,c" into names; each malloc'd in *out (NULL-terminated). */
static hc_status met_split(hc_metrics *m, const char *list, char ***out, size_t *n) {
  hu_status st = *list ? hu_split_names(list, out, n) : HU_ERR_INVALID;
  if (st == HU_ERR_INVALID) seterr(m, "empty metric name in '%s'", list);
  return st == HU_OK ? HC_OK : st == HU_ERR_NOMEM ? HC_ERR_NOMEM : HC_ERR_INVALID;
}

static hc_status check_metric(hc_metrics *m, const char *name, long *idx) {
  *idx = hc_metrics_find(m, name);
  if (*idx >= 0) return HC_OK;
  const char *sug[1];
  if (hc_metrics_suggest(m, name, sug, 1))
    seterr(m, "unknown metric '%s' (did you mean '%s'?)", name, sug[0]);
  else
    seterr(m, "unknown metric '%s' ('hubprof list metrics' lists them)", name);
  return HC_ERR_UNKNOWN;
}

hc_status hc_metrics_requests(hc_metrics *m, const char *const *names, size_t n, hc_request **out,
                              size_t *nout) {
  if (!m) return HC_ERR_INVALID;
  m->error[0] = 0;
  if (!m->resolved || !out || !nout || (n && !names)) return HC_ERR_INVALID;
  hc_request *req = calloc(n + 1, sizeof *req);
  if (!req) return HC_ERR_NOMEM;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    long idx;
    hc_status st = check_metric(m, names[i], &idx);
    if (st != HC_OK) {
      hc_metrics_requests_free(req, k);
      return st;
    }
    const hc_metric_info *mi = hc_metrics_get(m, (size_t)idx);
    if (!mi->ncounters) continue;
    const char **c = malloc(mi->ncounters * sizeof *c);
    if (!c) {
      hc_metrics_requests_free(req, k);
      return HC_ERR_NOMEM;
    }
    for (size_t j = 0; j < mi->ncounters; j++)
      c[j] = hu_strmap_str(&m->counters, mi->counters[j]);
    req[k++] = (hc_request){.group = mi->name, .counters = c, .ncounters = mi->ncounters};
  }
  *out = req;
  *nout = k;
  return HC_OK;
}

void hc_metrics_requests_free(hc_request *req, size_t n) {
  if (!req) return;
  for (size_t i = 0; i < n; i++)
    free((void *)req[i].counters);
  free(req);
}

hc_status hc_metrics_plan_groups(hc_metrics *m, const char *list, char ***groups, size_t *n) {
  if (!m) return HC_ERR_INVALID;
  m->error[0] = 0;
  if (!list || !groups) return HC_ERR_INVALID;
  char **names;
  size_t nn;
  hc_status st = met_split(m, list, &names, &nn);
  if (st != HC_OK) return st;
  if (nn == 1 && strcmp(names[0], "all") == 0 && hc_metrics_find(m, "all") < 0) { /* every metric loaded */
    size_t nm = hc_metrics_count(m);
    char **every = calloc(nm ? nm : 1, sizeof *every);
    for (size_t i = 0; every && i < nm; i++)
      if (!(every[i] = strdup(hc_metrics_get(m, i)->name))) {
        for (size_t k = 0; k < i; k++)
          free(every[k]);
        free(every);
        every = NULL;
      }
    free(names[0]);
    free(names);
    if (!every) return HC_ERR_NOMEM;
    names = every;
    nn = nm;
  }
  hc_request *req = NULL;
  size_t nreq = 0;
  st = hc_metrics_requests(m, (const char *const *)names, nn, &req, &nreq);
  char **g = NULL;
  if (st == HC_OK && !(g = calloc(nreq + 1, sizeof *g))) st = HC_ERR_NOMEM;
  for (size_t i = 0; st == HC_OK && i < nreq; i++) {
    size_t len = strlen(req[i].group) + 2;
    for (size_t j = 0; j < req[i].ncounters; j++)
      len += strlen(req[i].counters[j]) + 1;
    if (!(g[i] = malloc(len))) {
      st = HC_ERR_NOMEM;
      break;
    }
    size_t w = (size_t)snprintf(g[i], len, "%s=", req[i].group);
    for (size_t j = 0; j < req[i].ncounters; j++)
      w += (size_t)snprintf(g[i] + w, len - w, "%s%s", j ? "," : "", req[i].counters[j]);
  }
  hc_metrics_requests_free(req, nreq);
  for (size_t i = 0; i < nn; i++)
    free(names[i]);
  free(names);
  if (st != HC_OK) {
    hc_metrics_groups_free(g);
    if (st == HC_ERR_NOMEM) seterr(m, "out of memory");
    return st;
  }
  *groups = g;
  if (n) *n = nreq;
  return HC_OK;
}

void hc_metrics_groups_free(char **groups) {
  if (!groups) return;
  for (char **g = groups; *g; g++)
    free(*g);
  free(groups);
}
