/* `hubprof analyze STORE`: kernels, kernel launches or dispatches with device time, counters and derived
 * metrics (the analysis library, ha_run), filtered by kernel, device and dispatch range, printed as tables
 * fitted to the terminal (split into panels side by side when too wide), CSV or JSON. */
#include "cli.h"
#include "report.h"

#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cmd_analyze_help(FILE *out) {
  fprintf(out, "usage: hubprof analyze [options] STORE\n\n"
               "Device time, counters and derived metrics of a store's kernels (the default view: top\n"
               "kernels per device, most expensive first), kernel launches or dispatches. Any store\n"
               "format is read. Counters of a group are means per dispatch; metrics are computed from\n"
               "them (docs/metrics.md). In tables, * marks an imputed value (measured on part of the\n"
               "group's dispatches), ! a value combining different replay passes, - no value.\n\n"
               "options:\n"
               "  --by G             kernel (default), kernel-grid (kernel + grid + work-group sizes) or\n"
               "                     dispatch (one row per dispatch)\n"
               "  --counters LIST    counters to show, comma-separated; 'none' for none (default: every\n"
               "                     counter measured in the store)\n"
               "  --metrics LIST     metrics to show; 'none' for none (default: every metric the store's\n"
               "                     counters give; 'hubprof list metrics' names them)\n"
               "  --metrics-file F   more metric definitions (repeatable)\n"
               "  --kernel GLOB      only kernels whose name matches (repeatable: any of them)\n"
               "  --device GLOB      only devices whose name matches (repeatable)\n"
               "  --dispatch A-B     only the collector's dispatch ids A to B (A, A- and -B too; the ids\n"
               "                     of the 'dispatch' column, the same in every pass and process)\n"
               "  --sort S           time (default for kernels), order (store order; default for\n"
               "                     dispatches) or name\n"
               "  -n, --limit N      only the first N rows of each device\n"
               "  --format F         table (default; fitted to the terminal), csv or json; csv and json\n"
               "                     give every column, times in nanoseconds, and the columns 'imputed'\n"
               "                     and 'incomplete' naming the row's imputed and unmeasured values\n"
               "  -h, --help         show this help\n");
}

/* ---- numbers as text ---- */

/* A value for CSV/JSON: integers exactly, others to 9 significant digits, "" for no value. */
static double absd(double v) { return v < 0 ? -v : v; }

static void fmt_data(char *buf, size_t len, double v) {
  if (isnan(v) || isinf(v))
    buf[0] = 0;
  else if (v == (double)(int64_t)v && absd(v) < 1e15)
    snprintf(buf, len, "%" PRId64, (int64_t)v);
  else
    snprintf(buf, len, "%.9g", v);
}

/* A value for people: about 4 significant digits, thousands kept whole. */
static void fmt_human(char *buf, size_t len, double v) {
  double a = absd(v);
  if (isnan(v))
    snprintf(buf, len, "-");
  else if (a >= 1e9)
    snprintf(buf, len, "%.3e", v);
  else if (a >= 1000 || v == (double)(int64_t)v)
    snprintf(buf, len, "%.0f", v);
  else if (a >= 10)
    snprintf(buf, len, "%.1f", v);
  else if (a >= 0.01)
    snprintf(buf, len, "%.3f", v);
  else
    snprintf(buf, len, "%.2e", v);
}

/* ---- the table ---- */

typedef struct tcol {
  size_t src;                 /* result column */
  char head[160];             /* header */
  char unit[64];              /* units row: "[ns]" */
  int numeric, shrink, fixed; /* fixed: repeated in every panel */
  size_t unit_id; /* columns of one unit stay in one panel (a metric, its % of peak, its deltas) */
  size_t width;
} tcol;

static size_t text_width(const char *s) {
  size_t w = 0;
  for (; *s; s++)
    w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* What a column shows, from its name: the quantity (total_ns, avg_ns, a metric …) and which side of a
 * comparison ("a", "b", "delta", "delta_pct", "dir"; "" for a plain value). */
static void split_name(const char *name, char *base, size_t len, const char **side) {
  static const char *const sufs[] = {"_delta_pct", "_delta", "_dir", "_a", "_b"};
  *side = "";
  snprintf(base, len, "%s", name);
  if (!strcmp(name, "time")) { /* ha_diff's direction of the average time */
    snprintf(base, len, "avg_ns");
    *side = "dir";
    return;
  }
  for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++)
    if (ends_with(name, sufs[i])) {
      base[strlen(name) - strlen(sufs[i])] = 0;
      *side = sufs[i] + 1;
      return;
    }
}

/* Time columns are shown in ms (totals) or µs (the others). */
static double time_scale(const char *base) {
  if (!strcmp(base, "total_ns")) return 1e6;
  if (!strcmp(base, "avg_ns") || !strcmp(base, "min_ns") || !strcmp(base, "max_ns") ||
      !strcmp(base, "duration_ns"))
    return 1e3;
  return 0;
}

/* The table text of one cell. `t0` is the earliest start among rows (dispatch start column). */
static void table_cell(const ha_result *res, size_t row, const tcol *c, int64_t t0, char *buf, size_t len) {
  size_t s = c->src;
  unsigned f = ha_result_flags(res, row, s);
  const char *name = ha_result_col_name(res, s), *side;
  char base[128];
  double v = ha_result_num(res, row, s);
  if (ha_result_col_kind(res, s) == HA_TEXT) {
    snprintf(buf, len, "%s", ha_result_text(res, row, s));
    return;
  }
  if (f & HA_CELL_DIV0) {
    snprintf(buf, len, "NaN");
    return;
  }
  if (f & HA_CELL_MISSING || isnan(v)) {
    snprintf(buf, len, "-");
    return;
  }
  split_name(name, base, sizeof base, &side);
  double scale = time_scale(base);
  int delta = !strcmp(side, "delta");
  if (!strcmp(side, "delta_pct"))
    snprintf(buf, len, "%+.1f", v);
  else if (scale)
    snprintf(buf, len, delta ? "%+.*f" : "%.*f", scale == 1e6 ? 3 : 2, v / scale);
  else if (!strcmp(name, "start_ns"))
    snprintf(buf, len, "%.3f", t0 && v ? (v - (double)t0) / 1e6 : 0.0);
  else if (!strcmp(name, "percent") || ha_result_col_role(res, s) == HA_ROLE_PEAK)
    snprintf(buf, len, "%.1f", v);
  else if (ha_result_col_kind(res, s) == HA_INT)
    snprintf(buf, len, delta ? "%+" PRId64 : "%" PRId64, ha_result_int(res, row, s));
  else {
    fmt_human(buf + (delta && v > 0), len - 1, v);
    if (delta && v > 0) buf[0] = '+';
  }
  size_t w = strlen(buf);
  if (f & HA_CELL_MIXED && w + 1 < len) buf[w++] = '!', buf[w] = 0;
  if (f & HA_CELL_IMPUTED && w + 1 < len) buf[w++] = '*', buf[w] = 0;
}

/* Width a panel takes once report.c has cut its shrinkable columns to 12. */
static size_t panel_width(const tcol *cols, const size_t *idx, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const tcol *c = &cols[idx[i]];
    w += (c->shrink && c->width > 12 ? 12 : c->width) + (i ? 2 : 0);
  }
  return w;
}

static int by_index(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

static int print_panel(const ha_result *res, const tcol *cols, size_t *idx, size_t n, int64_t t0,
                       size_t width) {
  qsort(idx, n, sizeof *idx, by_index);
  report_col *rc = calloc(n, sizeof *rc);
  const char **cells = calloc(n, sizeof *cells);
  char(*buf)[128] = calloc(n, sizeof *buf);
  report *r = NULL;
  int ok = rc && cells && buf, units = 0;
  if (ok) {
    for (size_t i = 0; i < n; i++) {
      rc[i] = (report_col){cols[idx[i]].head, cols[idx[i]].numeric, cols[idx[i]].shrink};
      units |= cols[idx[i]].unit[0] != 0;
    }
    ok = (r = report_new(rc, n)) != NULL;
  }
  if (ok && units) {
    for (size_t i = 0; i < n; i++)
      cells[i] = cols[idx[i]].unit;
    if (report_add(r, cells)) ok = 0;
  }
  for (size_t row = 0; ok && row < ha_result_nrows(res); row++) {
    for (size_t i = 0; i < n; i++) {
      table_cell(res, row, &cols[idx[i]], t0, buf[i], sizeof buf[i]);
      cells[i] = buf[i];
    }
    if (report_add(r, cells)) ok = 0;
  }
  if (ok) report_print(r, REPORT_TABLE, width, stdout);
  report_free(r);
  free(rc);
  free(cells);
  free(buf);
  return ok ? 0 : -1;
}

/* Notes wrapped to the width, "note: " first. */
static void print_note(FILE *out, const char *note, size_t width) {
  const size_t lead = 6;
  size_t w = width > 30 ? width : 0, col = lead;
  fputs("note: ", out);
  const char *p = note;
  while (*p) {
    size_t wl = strcspn(p, " ");
    if (w && col > lead && col + 1 + wl > w) {
      fputs("\n      ", out);
      col = lead;
    } else if (col > lead) {
      fputc(' ', out);
      col++;
    }
    fwrite(p, 1, wl, out);
    col += wl;
    p += wl;
    while (*p == ' ')
      p++;
  }
  fputc('\n', out);
}

static size_t distinct_text(const ha_result *res, long col) {
  size_t n = 0;
  for (size_t r = 0; col >= 0 && r < ha_result_nrows(res) && n < 2; r++) {
    int seen = 0;
    for (size_t q = 0; q < r && !seen; q++)
      seen = strcmp(ha_result_text(res, q, (size_t)col), ha_result_text(res, r, (size_t)col)) == 0;
    n += !seen;
  }
  return n;
}

/* A result as tables fitted to the width: columns that do not fit go to further panels below, each
 * repeating the columns that identify a row. */
static int print_table(const ha_result *res, size_t width) {
  size_t nc = ha_result_ncols(res), nrows = ha_result_nrows(res), n = 0;
  tcol *cols = calloc(nc + 1, sizeof *cols);
  size_t *pidx = calloc(nc + 1, sizeof *pidx);
  int rc = cols && pidx ? 0 : -1;
  int64_t t0 = 0;
  long sc = ha_result_col_find(res, "start_ns"), dc = ha_result_col_find(res, "dispatch");
  for (size_t r = 0; sc >= 0 && r < nrows; r++) {
    int64_t v = ha_result_int(res, r, (size_t)sc);
    if (v && (!t0 || v < t0)) t0 = v;
  }
  int many_devices = distinct_text(res, ha_result_col_find(res, "device")) > 1;
  char prev_base[128] = "";
  for (size_t c = 0; rc == 0 && c < nc; c++) {
    const char *name = ha_result_col_name(res, c), *unit = ha_result_col_unit(res, c), *side;
    ha_col_role role = ha_result_col_role(res, c);
    if (role == HA_ROLE_FLAGS || !strcmp(name, "timed_calls") || !strcmp(name, "row")) continue;
    tcol *t = &cols[n];
    t->src = c;
    t->numeric = ha_result_col_kind(res, c) != HA_TEXT;
    t->shrink = !strcmp(name, "device") || !strcmp(name, "kernel");
    if (!strcmp(name, "device"))
      t->fixed = many_devices;
    else if (dc >= 0) /* dispatches: the dispatch id and kernel identify a row */
      t->fixed = !strcmp(name, "dispatch") || !strcmp(name, "kernel");
    else
      t->fixed = role == HA_ROLE_KEY && strcmp(name, "status");
    char base[128];
    split_name(name, base, sizeof base, &side);
    /* a unit: the columns of one quantity (its a/b/delta/dir sides, a metric's % of peak) */
    int same = role == HA_ROLE_PEAK || (side[0] && !strcmp(base, prev_base));
    t->unit_id = same && n ? cols[n - 1].unit_id : n;
    snprintf(prev_base, sizeof prev_base, "%s", role == HA_ROLE_PEAK ? prev_base : base);
    static const struct {
      const char *name, *head;
    } heads[] = {{"total_ns", "TOTAL(ms)"}, {"avg_ns", "AVG(us)"}, {"min_ns", "MIN(us)"},
                 {"max_ns", "MAX(us)"},     {"percent", "%"},      {"duration_ns", "TIME(us)"},
                 {"start_ns", "START(ms)"}, {"workgroup", "WG"},   {"calls", "CALLS"}};
    char what[128] = "";
    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++)
      if (!strcmp(base, heads[h].name)) snprintf(what, sizeof what, "%s", heads[h].head);
    int measure =
        role == HA_ROLE_COUNTER || role == HA_ROLE_METRIC ||
        (role == HA_ROLE_DIFF && !time_scale(base) && strcmp(base, "calls") && strcmp(name, "time"));
    if (!what[0]) {
      if (measure)
        snprintf(what, sizeof what, "%s", base);
      else
        for (size_t k = 0; base[k] && k + 1 < sizeof what; k++)
          what[k] = (char)(base[k] >= 'a' && base[k] <= 'z' ? base[k] - 32 : base[k]);
    }
    if (role == HA_ROLE_PEAK)
      snprintf(t->head, sizeof t->head, "%%PEAK");
    else if (!strcmp(name, "time"))
      snprintf(t->head, sizeof t->head, "TIME");
    else if (!strcmp(side, "a"))
      snprintf(t->head, sizeof t->head, "%s A", what);
    else if (!strcmp(side, "b"))
      snprintf(t->head, sizeof t->head, "B");
    else if (!strcmp(side, "delta"))
      snprintf(t->head, sizeof t->head, "DELTA");
    else if (!strcmp(side, "delta_pct"))
      snprintf(t->head, sizeof t->head, "DELTA%%");
    else if (!strcmp(side, "dir"))
      snprintf(t->head, sizeof t->head, "DIR");
    else
      snprintf(t->head, sizeof t->head, "%s", what);
    if (measure && unit[0] && strcmp(side, "delta_pct") && strcmp(side, "dir"))
      snprintf(t->unit, sizeof t->unit, "[%s]", unit);
    n++;
  }
  /* widths */
  char buf[128];
  for (size_t i = 0; rc == 0 && i < n; i++) {
    tcol *t = &cols[i];
    t->width = text_width(t->head);
    if (text_width(t->unit) > t->width) t->width = text_width(t->unit);
    for (size_t r = 0; r < nrows; r++) {
      table_cell(res, r, t, t0, buf, sizeof buf);
      size_t w = text_width(buf);
      if (w > t->width) t->width = w;
    }
  }
  /* panels: the fixed columns, then whole units while they fit (a panel takes at least one) */
  size_t next = 0, panel = 0;
  while (next < n && cols[next].fixed)
    next++;
  while (rc == 0) {
    size_t pn = 0;
    for (size_t i = 0; i < n; i++)
      if (cols[i].fixed) pidx[pn++] = i;
    size_t base = pn;
    while (next < n) {
      if (cols[next].fixed) {
        next++;
        continue;
      }
      size_t end = next + 1;
      while (end < n && cols[end].unit_id == cols[next].unit_id)
        end++;
      size_t take = 0;
      for (size_t k = next; k < end; k++)
        if (!cols[k].fixed) pidx[pn + take++] = k;
      if (!width || panel_width(cols, pidx, pn + take) <= width) {
        pn += take;
        next = end;
        continue;
      }
      if (pn > base) break; /* the unit goes to the next panel */
      /* a unit wider than the terminal alone: as many of its columns as fit (at least one) */
      pn++;
      next++;
      while (next < end && !cols[next].fixed) {
        pidx[pn] = next;
        if (panel_width(cols, pidx, pn + 1) > width) break;
        pn++;
        next++;
      }
      break;
    }
    if (panel) putchar('\n');
    rc = print_panel(res, cols, pidx, pn, t0, width);
    panel++;
    while (next < n && cols[next].fixed)
      next++;
    if (next >= n) break;
  }
  free(pidx);
  free(cols);
  return rc;
}

/* ---- CSV and JSON: every column, streamed (a million dispatches need no copy of every cell) ---- */

static int print_data(const ha_result *res, int fmt) {
  size_t nc = ha_result_ncols(res), nr = ha_result_nrows(res);
  FILE *out = stdout;
  char buf[64];
  if (fmt == REPORT_CSV) {
    for (size_t c = 0; c < nc; c++) {
      if (c) fputc(',', out);
      report_csv_text(out, ha_result_col_name(res, c));
    }
    fputc('\n', out);
  } else {
    fputc('[', out);
  }
  for (size_t row = 0; row < nr; row++) {
    if (fmt == REPORT_JSON) fputs(row ? ",\n {" : "{", out);
    for (size_t c = 0; c < nc; c++) {
      if (fmt == REPORT_CSV) {
        if (c) fputc(',', out);
      } else {
        if (c) fputs(", ", out);
        report_json_text(out, ha_result_col_name(res, c));
        fputs(": ", out);
      }
      if (ha_result_col_kind(res, c) == HA_TEXT) {
        (fmt == REPORT_CSV ? report_csv_text : report_json_text)(out, ha_result_text(res, row, c));
        continue;
      }
      if (ha_result_flags(res, row, c) & HA_CELL_MISSING)
        buf[0] = 0;
      else if (ha_result_col_kind(res, c) == HA_INT)
        snprintf(buf, sizeof buf, "%" PRId64, ha_result_int(res, row, c));
      else
        fmt_data(buf, sizeof buf, ha_result_num(res, row, c));
      fputs(buf[0] || fmt == REPORT_CSV ? buf : "null", out);
    }
    if (fmt == REPORT_JSON)
      fputc('}', out);
    else
      fputc('\n', out);
  }
  if (fmt == REPORT_JSON) fputs("]\n", out);
  return 0;
}

int cli_print_analysis(const struct ha_result *res, int fmt, size_t width) {
  int e = fmt == REPORT_TABLE ? print_table(res, width) : print_data(res, fmt);
  if (e) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  /* notes: after the table for people, on stderr beside CSV and JSON */
  for (size_t i = 0; i < ha_result_nnotes(res); i++) {
    if (fmt == REPORT_TABLE) {
      if (i == 0) putchar('\n');
      print_note(stdout, ha_result_note(res, i), width);
    } else {
      fprintf(stderr, "hubprof: note: %s\n", ha_result_note(res, i));
    }
  }
  return CLI_OK;
}

typedef struct opts {
  int fmt, group, sort;
  long limit;
  const char *counters, *metrics;
  const char **files, **kernels, **devices;
  size_t nfiles, nkernels, ndevices;
  uint64_t first, last;
} opts;

static int analyze(hp_store *s, const opts *o) {
  ha_query q = {.size = sizeof q,
                .group = o->group,
                .limit = o->limit,
                .counters = o->counters,
                .metrics = o->metrics,
                .metric_files = o->files,
                .nmetric_files = o->nfiles,
                .kernels = o->kernels,
                .nkernels = o->nkernels,
                .devices = o->devices,
                .ndevices = o->ndevices,
                .dispatch_first = o->first,
                .dispatch_last = o->last,
                .sort = o->sort};
  ha_result *res;
  hp_status st = ha_run(s, &q, &res);
  if (st != HP_OK) {
    const char *why = ha_last_error();
    if (st != HP_ERR_INVALID && hp_store_error(s)[0]) why = hp_store_error(s);
    cli_error("analyze: %s", why[0] ? why : hp_status_str(st));
    return CLI_FAIL;
  }
  int rc = CLI_OK;
  if (o->fmt == REPORT_TABLE && ha_result_nrows(res) == 0)
    printf("no dispatches in %s%s\n", hp_store_path(s),
           o->nkernels || o->ndevices || o->first || o->last ? " match the filters" : "");
  else
    rc = cli_print_analysis(res, o->fmt, report_term_width());
  /* losses make every figure a lower bound: say so */
  if (ha_result_lost_records(res))
    cli_warn("%" PRIu64 " records were lost while tracing: calls and times are lower bounds",
             ha_result_lost_records(res));
  if (hp_store_damage(s, NULL) != HP_OK) cli_warn("%s (figures cover the readable part)", hp_store_error(s));
  ha_result_free(res);
  return rc;
}

static int push(const char ***v, size_t *n, const char *s) {
  const char **nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  nv[(*n)++] = s;
  *v = nv;
  return 0;
}

/* "A-B", "A", "A-", "-B" (positive ids). */
static int parse_range(const char *s, uint64_t *first, uint64_t *last) {
  const char *dash = strchr(s, '-');
  char *end;
  *first = *last = 0;
  if (!*s) return -1;
  if (s[0] != '-') {
    if (s[0] < '0' || s[0] > '9') return -1;
    unsigned long long a = strtoull(s, &end, 10);
    if (end != (dash ? dash : s + strlen(s)) || a == 0) return -1;
    *first = a;
  }
  if (!dash) {
    *last = *first;
    return 0;
  }
  if (dash[1]) {
    if (dash[1] < '0' || dash[1] > '9') return -1;
    unsigned long long b = strtoull(dash + 1, &end, 10);
    if (*end || b == 0) return -1;
    *last = b;
  }
  if (!*first && !*last) return -1;
  return *first && *last && *first > *last ? -1 : 0;
}

int cmd_analyze(int argc, char **argv) {
  static const struct option lo[] = {
      {"format", required_argument, 0, 'F'},   {"limit", required_argument, 0, 'n'},
      {"by", required_argument, 0, 'b'},       {"counters", required_argument, 0, 'c'},
      {"metrics", required_argument, 0, 'm'},  {"metrics-file", required_argument, 0, 'f'},
      {"kernel", required_argument, 0, 'k'},   {"device", required_argument, 0, 'd'},
      {"dispatch", required_argument, 0, 'D'}, {"sort", required_argument, 0, 's'},
      {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
  opts o = {.fmt = REPORT_TABLE, .group = HA_BY_KERNEL};
  int c, rc = CLI_USAGE, have_counters = 0, have_metrics = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":n:h", lo, NULL)) != -1) {
    switch (c) {
    case 'F':
      if ((o.fmt = report_fmt_parse(optarg)) < 0) {
        cli_error("analyze: unknown output format '%s' (table, csv or json)", optarg);
        goto out;
      }
      break;
    case 'n': {
      char *end;
      o.limit = strtol(optarg, &end, 10);
      if (*end || end == optarg || o.limit < 1) {
        cli_error("analyze: --limit needs a positive number, not '%s'", optarg);
        goto out;
      }
      break;
    }
    case 'b':
      if (!strcmp(optarg, "kernel"))
        o.group = HA_BY_KERNEL;
      else if (!strcmp(optarg, "kernel-grid"))
        o.group = HA_BY_KERNEL_GRID;
      else if (!strcmp(optarg, "dispatch"))
        o.group = HA_BY_DISPATCH;
      else {
        cli_error("analyze: unknown grouping '%s' (kernel, kernel-grid or dispatch)", optarg);
        goto out;
      }
      break;
    case 'c':
    case 'm': {
      int *have = c == 'c' ? &have_counters : &have_metrics;
      if (*have) {
        cli_error("analyze: --%s given twice (give one comma-separated list)",
                  c == 'c' ? "counters" : "metrics");
        goto out;
      }
      *have = 1;
      const char *v = !strcmp(optarg, "none") ? "" : optarg;
      if (!*optarg) {
        cli_error("analyze: --%s needs a list (or 'none')", c == 'c' ? "counters" : "metrics");
        goto out;
      }
      if (c == 'c')
        o.counters = v;
      else
        o.metrics = v;
      break;
    }
    case 'f':
    case 'k':
    case 'd': {
      int e = c == 'f'   ? push(&o.files, &o.nfiles, optarg)
              : c == 'k' ? push(&o.kernels, &o.nkernels, optarg)
                         : push(&o.devices, &o.ndevices, optarg);
      if (e) {
        cli_error("out of memory");
        rc = CLI_FAIL;
        goto out;
      }
      break;
    }
    case 'D':
      if (parse_range(optarg, &o.first, &o.last)) {
        cli_error("analyze: --dispatch needs A-B, A, A- or -B with ids from 1 and A <= B, not '%s'", optarg);
        goto out;
      }
      break;
    case 's':
      if (!strcmp(optarg, "time"))
        o.sort = HA_SORT_TIME;
      else if (!strcmp(optarg, "order"))
        o.sort = HA_SORT_ORDER;
      else if (!strcmp(optarg, "name"))
        o.sort = HA_SORT_NAME;
      else {
        cli_error("analyze: unknown sort order '%s' (time, order or name)", optarg);
        goto out;
      }
      break;
    case 'h':
      cmd_analyze_help(stdout);
      rc = cli_finish_stdout(CLI_OK);
      goto out;
    case ':': cli_error("analyze: option '%s' needs a value", argv[optind - 1]); goto out;
    default:
      cli_error("analyze: unknown option '%s' (see 'hubprof analyze --help')", argv[optind - 1]);
      goto out;
    }
  }
  if (argc - optind != 1) {
    cli_error("analyze: expected one STORE (see 'hubprof analyze --help')");
    goto out;
  }
  hp_store *s;
  hp_status st = hp_store_open(argv[optind], NULL, HP_READ, &s);
  if (st != HP_OK) {
    cli_error("%s", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    hp_store_abort(s);
    rc = CLI_FAIL;
    goto out;
  }
  rc = analyze(s, &o);
  hp_store_close(s);
  rc = cli_finish_stdout(rc);
out:
  free(o.files);
  free(o.kernels);
  free(o.devices);
  return rc;
}
