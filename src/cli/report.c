/* Result tables of the CLI: aligned text fitted to the terminal, CSV (RFC 4180 quoting) and JSON
 * (an array of objects). Used by every subcommand that prints rows, so they all look alike. */
/* SPDX-License-Identifier: MIT */
#include "report.h"

#include "../common/hu_json.h"
#include "../common/hu_text.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct report {
  const report_col *cols;
  size_t ncols, nrows, cap;
  char **cells; /* nrows * ncols */
};

report *report_new(const report_col *cols, size_t ncols) {
  report *r = calloc(1, sizeof *r);
  if (r) {
    r->cols = cols;
    r->ncols = ncols;
  }
  return r;
}

int report_add(report *r, const char *const *cells) {
  if (r->nrows == r->cap) {
    size_t nc = r->cap ? r->cap * 2 : 64;
    char **n = realloc(r->cells, nc * r->ncols * sizeof *n);
    if (!n) return -1;
    r->cells = n;
    r->cap = nc;
  }
  for (size_t c = 0; c < r->ncols; c++) {
    /* text that is not UTF-8 (a store written before hubprof escaped it) is escaped here, for every format */
    const char *v = cells[c] ? cells[c] : "";
    int bad;
    size_t n = hu_utf8_escaped_size(v, &bad);
    char *s = bad ? malloc(n) : strdup(v);
    if (s && bad) hu_utf8_escape(v, s);
    if (!s) {
      for (size_t k = 0; k < c; k++)
        free(r->cells[r->nrows * r->ncols + k]);
      return -1;
    }
    r->cells[r->nrows * r->ncols + c] = s;
  }
  r->nrows++;
  return 0;
}

size_t report_rows(const report *r) { return r->nrows; }

void report_free(report *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nrows * r->ncols; i++)
    free(r->cells[i]);
  free(r->cells);
  free(r);
}

size_t report_term_width(void) {
  struct winsize ws;
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  const char *c = getenv("COLUMNS");
  if (c && atoi(c) > 0) return (size_t)atoi(c);
  return 0;
}

/* Display width of UTF-8 text: code points, not bytes (no wide-character tables: kernel names are ASCII). */
static size_t text_width(const char *s) {
  size_t w = 0;
  for (; *s; s++)
    w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

/* Print s in w columns: padded, or cut with "~" at the end when longer. */
static void put_cell(FILE *out, const char *s, size_t w, int right) {
  size_t tw = text_width(s);
  if (tw <= w) {
    if (right)
      fprintf(out, "%*s%s", (int)(w - tw), "", s);
    else
      fprintf(out, "%s%*s", s, (int)(w - tw), "");
    return;
  }
  size_t keep = w ? w - 1 : 0, seen = 0;
  const char *p = s;
  while (*p && seen < keep) {
    p++;
    while (((unsigned char)*p & 0xC0) == 0x80)
      p++;
    seen++;
  }
  fprintf(out, "%.*s%s", (int)(p - s), s, w ? "~" : "");
}

/* The table for people: cells and headers with their control characters made visible (hu_term_clean). */
static void print_table(const report *r, size_t width, FILE *out) {
  size_t n = (r->nrows + 1) * r->ncols; /* the headers, then the cells */
  size_t *w = calloc(r->ncols, sizeof *w);
  const char **vis = calloc(n ? n : 1, sizeof *vis);
  char **tmp = calloc(n ? n : 1, sizeof *tmp);
  if (!w || !vis || !tmp) {
    free(w);
    free(vis);
    free(tmp);
    return;
  }
  for (size_t c = 0; c < r->ncols; c++)
    vis[c] = hu_term_clean(r->cols[c].name, &tmp[c]);
  for (size_t i = 0; i < r->nrows * r->ncols; i++)
    vis[r->ncols + i] = hu_term_clean(r->cells[i], &tmp[r->ncols + i]);
  const char *const *head = vis, *const *cells = vis + r->ncols;
  for (size_t c = 0; c < r->ncols; c++) {
    w[c] = text_width(head[c]);
    for (size_t i = 0; i < r->nrows; i++) {
      size_t tw = text_width(cells[i * r->ncols + c]);
      if (tw > w[c]) w[c] = tw;
    }
  }
  size_t total = 0;
  for (size_t c = 0; c < r->ncols; c++)
    total += w[c] + (c ? 2 : 0);
  if (width && total > width) { /* shrink the shrinkable columns, widest first, down to 12 */
    for (;;) {
      size_t best = r->ncols;
      for (size_t c = 0; c < r->ncols; c++)
        if (r->cols[c].shrink && w[c] > 12 && (best == r->ncols || w[c] > w[best])) best = c;
      if (best == r->ncols || total <= width) break;
      size_t cut = total - width, room = w[best] - 12;
      cut = cut < room ? cut : room;
      w[best] -= cut;
      total -= cut;
    }
  }
  for (size_t c = 0; c < r->ncols; c++) {
    if (c) fputs("  ", out);
    if (c + 1 == r->ncols && !r->cols[c].numeric && text_width(head[c]) <= w[c])
      fputs(head[c], out);
    else
      put_cell(out, head[c], w[c], r->cols[c].numeric);
  }
  fputc('\n', out);
  for (size_t i = 0; i < r->nrows; i++) {
    for (size_t c = 0; c < r->ncols; c++) {
      if (c) fputs("  ", out);
      /* the last column is not padded: no trailing blanks */
      if (c + 1 == r->ncols && !r->cols[c].numeric && text_width(cells[i * r->ncols + c]) <= w[c])
        fputs(cells[i * r->ncols + c], out);
      else
        put_cell(out, cells[i * r->ncols + c], w[c], r->cols[c].numeric);
    }
    fputc('\n', out);
  }
  for (size_t i = 0; i < n; i++)
    free(tmp[i]);
  free(tmp);
  free(vis);
  free(w);
}

/* Text leaves as UTF-8 whatever the store holds: invalid bytes as \xNN (hu_utf8_clean); a formula
 * prefix is neutralised (hu_csv_write_text). */
void report_csv_text(FILE *out, const char *s) {
  char *tmp;
  hu_csv_write_text(out, hu_utf8_clean(s, &tmp));
  free(tmp);
}

/* A cell of a numeric column: as it is (a negative number stays a number). */
static void csv_number(FILE *out, const char *s) {
  char *tmp;
  hu_csv_write_str(out, hu_utf8_clean(s, &tmp));
  free(tmp);
}

void report_json_text(FILE *out, const char *s) {
  char *tmp;
  hu_json_write_str(out, hu_utf8_clean(s, &tmp));
  free(tmp);
}

/* A numeric cell goes out as a JSON number when it is one ("" and "-" become null, "nan" too). */
static void json_number(FILE *out, const char *s) {
  char *end;
  if (!*s || !strcmp(s, "-")) {
    fputs("null", out);
    return;
  }
  double v = strtod(s, &end);
  if (*end || v != v)
    report_json_text(out, s);
  else
    fputs(s, out);
}

void report_print(const report *r, report_fmt fmt, size_t width, FILE *out) {
  if (fmt == REPORT_TABLE) {
    print_table(r, width, out);
  } else if (fmt == REPORT_CSV) {
    for (size_t c = 0; c < r->ncols; c++) {
      if (c) fputc(',', out);
      report_csv_text(out, r->cols[c].name);
    }
    fputc('\n', out);
    for (size_t i = 0; i < r->nrows; i++) {
      for (size_t c = 0; c < r->ncols; c++) {
        if (c) fputc(',', out);
        (r->cols[c].numeric ? csv_number : report_csv_text)(out, r->cells[i * r->ncols + c]);
      }
      fputc('\n', out);
    }
  } else {
    fputc('[', out);
    for (size_t i = 0; i < r->nrows; i++) {
      fputs(i ? ",\n {" : "{", out);
      for (size_t c = 0; c < r->ncols; c++) {
        if (c) fputs(", ", out);
        report_json_text(out, r->cols[c].name);
        fputs(": ", out);
        if (r->cols[c].numeric)
          json_number(out, r->cells[i * r->ncols + c]);
        else
          report_json_text(out, r->cells[i * r->ncols + c]);
      }
      fputc('}', out);
    }
    fputs("]\n", out);
  }
}
