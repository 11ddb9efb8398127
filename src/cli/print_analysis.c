/* An analysis result (ha_run, ha_diff) printed for people or programs: tables fitted to the terminal (split
 * into panels side by side when too wide, values scaled to readable units), or CSV / JSON with every column;
 * then the result's notes. Shared by `analyze` and `diff`. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "report.h"

#include "../common/hu_text.h"

#include "hubprof/analysis.h"
#include "hubprof/hub.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers as text ---- */

/* A value for CSV/JSON: integers exactly, others to 9 significant digits and at least every digit of their
 * integer part and one decimal (a median or mean of nanoseconds over a second keeps its units and halves),
 * "" for no value. */
static double absd(double v) { return v < 0 ? -v : v; }

static void fmt_data(char *buf, size_t len, double v) {
  if (isnan(v) || isinf(v)) {
    buf[0] = 0;
  } else if (v == (double)(int64_t)v && absd(v) < 1e15) {
    snprintf(buf, len, "%" PRId64, (int64_t)v);
  } else {
    int digits = absd(v) >= 1e8 ? (int)floor(log10(absd(v))) + 2 : 9;
    snprintf(buf, len, "%.*g", digits < 17 ? digits : 17, v);
  }
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
      !strcmp(base, "duration_ns") || !strcmp(base, "median_ns") || !strcmp(base, "mean_ns"))
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
  else if (!strcmp(name, "percent") || !strcmp(name, "imbalance_pct") ||
           ha_result_col_role(res, s) == HA_ROLE_PEAK)
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
  if (f & HA_CELL_OVER_PEAK && w + 1 < len) buf[w++] = '^', buf[w] = 0;
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
  char *tmp; /* a kernel name in a note: its control characters made visible */
  const char *p = hu_term_clean(note, &tmp);
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
  free(tmp);
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
    if (role == HA_ROLE_FLAGS || !strcmp(name, "timed_calls") || !strcmp(name, "cold_calls") ||
        !strcmp(name, "row"))
      continue; /* in CSV and JSON; the table has notes for them */
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
    } heads[] = {{"total_ns", "TOTAL(ms)"},   {"avg_ns", "AVG(us)"},   {"min_ns", "MIN(us)"},
                 {"max_ns", "MAX(us)"},       {"percent", "%"},        {"duration_ns", "TIME(us)"},
                 {"start_ns", "START(ms)"},   {"workgroup", "WG"},     {"calls", "CALLS"},
                 {"median_ns", "MEDIAN(us)"}, {"mean_ns", "MEAN(us)"}, {"imbalance_pct", "IMBALANCE(%)"}};
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
  /* notes: after the table for people, on stderr beside CSV and JSON; warnings on stderr always */
  for (size_t i = 0, shown = 0; i < ha_result_nnotes(res); i++) {
    if (!strncmp(ha_result_note(res, i), "warning: ", 9)) {
      cli_error("%s", ha_result_note(res, i));
    } else if (fmt == REPORT_TABLE) {
      if (shown++ == 0) putchar('\n');
      print_note(stdout, ha_result_note(res, i), width);
    } else {
      cli_error("note: %s", ha_result_note(res, i));
    }
  }
  /* the table leaves out timed_calls: say when the time columns cover fewer calls than it shows */
  long cc = ha_result_col_find(res, "calls"), tc = ha_result_col_find(res, "timed_calls");
  if (fmt == REPORT_TABLE && cc >= 0 && tc >= 0) {
    uint64_t calls = 0, timed = 0;
    for (size_t r = 0; r < ha_result_nrows(res); r++) {
      calls += (uint64_t)ha_result_int(res, r, (size_t)cc);
      timed += (uint64_t)ha_result_int(res, r, (size_t)tc);
    }
    if (timed < calls) {
      char note[256];
      snprintf(note, sizeof note,
               "%" PRIu64 " of the %" PRIu64
               " call%s shown %s no device time (never completed, or not timed): "
               "the time columns cover the other %" PRIu64 " (timed_calls in CSV and JSON)",
               calls - timed, calls, calls == 1 ? "" : "s", calls - timed == 1 ? "has" : "have", timed);
      if (!ha_result_nnotes(res)) putchar('\n');
      print_note(stdout, note, width);
    }
  }
  return CLI_OK;
}
