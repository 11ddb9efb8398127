/* A small result table for the CLI's reports (analyze, list, …): columns with alignment, rows of cells,
 * printed as an aligned terminal table (fitted to the width), CSV or JSON. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_REPORT_H
#define HUBPROF_CLI_REPORT_H

#include <stddef.h>
#include <stdio.h>

typedef enum report_fmt { REPORT_TABLE = 0, REPORT_CSV, REPORT_JSON } report_fmt;

typedef struct report_col {
  const char *name; /* header; also the CSV header and JSON key */
  int numeric;      /* right-aligned in tables, unquoted in JSON */
  int shrink;       /* this column is cut (with "…") when the table is wider than the terminal */
} report_col;

typedef struct report report;

report *report_new(const report_col *cols, size_t ncols);
/* Append a row: ncols strings (copied). Returns 0, or -1 when out of memory. */
int report_add(report *r, const char *const *cells);
size_t report_rows(const report *r);
/* Print; `width` is the terminal width for tables (0 = no limit). */
void report_print(const report *r, report_fmt fmt, size_t width, FILE *out);
void report_free(report *r);

/* One text value as a CSV field (RFC 4180 quoting when needed; a formula prefix = + - @ tab CR neutralised
 * with a leading single quote) / as a JSON string. */
void report_csv_text(FILE *out, const char *s);
void report_json_text(FILE *out, const char *s);

/* Width of the terminal on stdout, $COLUMNS, or 0 when stdout is not a terminal. */
size_t report_term_width(void);

#endif
