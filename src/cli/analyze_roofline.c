/* `hubprof analyze --roofline STORE`: the store's ceilings (one row per device and ceiling: device, ceiling,
 * value, unit), then its kernels placed under them (roofline_place.c): FLOPs, DRAM bytes, arithmetic
 * intensity and achieved GFLOP/s per precision, or the counters that are missing to place a kernel. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "report.h"

#include "../export/roofline_place.h"

#include <stdio.h>
#include <stdlib.h>

static void num(char *buf, size_t len, const char *fmt, double v) { snprintf(buf, len, fmt, v); }

int cli_analyze_roofline(hp_store *s, int fmt) {
  rf_roofline r;
  hp_status st = rf_read(s, &r);
  if (st != HP_OK) {
    cli_error("analyze --roofline: %s: %s", hp_store_path(s),
              hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    return CLI_FAIL;
  }
  int table = fmt == REPORT_TABLE;
  static const report_col ccols[] = {{"device", 0, 1}, {"ceiling", 0, 0}, {"value", 1, 0}, {"unit", 0, 0}};
  static const report_col tccols[] = {{"DEVICE", 0, 1}, {"CEILING", 0, 0}, {"VALUE", 1, 0}, {"UNIT", 0, 0}};
  static const report_col kcols[] = {
      {"device", 0, 1},  {"kernel", 0, 1},    {"precision", 0, 0}, {"flop", 1, 0},  {"bytes", 1, 0},
      {"time_ns", 1, 0}, {"intensity", 1, 0}, {"gflops", 1, 0},    {"bound", 0, 0}, {"missing", 0, 1}};
  static const report_col tkcols[] = {
      {"DEVICE", 0, 1},   {"KERNEL", 0, 1},    {"PRECISION", 0, 0}, {"FLOP", 1, 0},  {"BYTES", 1, 0},
      {"TIME(ns)", 1, 0}, {"FLOP/BYTE", 1, 0}, {"GFLOP/s", 1, 0},   {"BOUND", 0, 0}, {"MISSING", 0, 1}};
  report *c = report_new(table ? tccols : ccols, 4), *k = report_new(table ? tkcols : kcols, 10);
  int rc = c && k ? CLI_OK : CLI_FAIL;
  for (size_t i = 0; rc == CLI_OK && i < r.nceilings; i++) {
    char v[64];
    num(v, sizeof v, "%.2f", r.ceilings[i].value);
    const char *cells[] = {r.ceilings[i].device, r.ceilings[i].name, v, r.ceilings[i].unit};
    if (report_add(c, cells)) rc = CLI_FAIL;
  }
  for (size_t i = 0; rc == CLI_OK && i < r.npoints; i++) {
    const rf_point *p = &r.points[i];
    char f[32] = "", b[32] = "", t[32], in[32] = "", g[32] = "";
    num(t, sizeof t, "%.0f", p->time_ns);
    if (p->precision) {
      num(f, sizeof f, "%.0f", p->flop);
      num(b, sizeof b, "%.0f", p->bytes);
      num(in, sizeof in, "%.6g", p->intensity);
      num(g, sizeof g, "%.6g", p->gflops);
    }
    const char *cells[] = {
        p->device, p->kernel, p->precision ? p->precision : (table ? "-" : ""), f, b, t, in, g,
        p->bound,  p->missing};
    if (report_add(k, cells)) rc = CLI_FAIL;
  }
  if (rc != CLI_OK) {
    cli_error("out of memory");
  } else if (fmt == REPORT_JSON) { /* one object: {"ceilings": [...], "kernels": [...]} */
    fputs("{\"ceilings\": ", stdout);
    report_print(c, REPORT_JSON, 0, stdout);
    fputs(", \"kernels\": ", stdout);
    report_print(k, REPORT_JSON, 0, stdout);
    fputs("}\n", stdout);
  } else { /* two tables, a blank line between (CSV: two header lines) */
    if (table && !r.nceilings)
      printf("no ceilings in %s (measure them with 'hubprof roofline --store %s')\n", hp_store_path(s),
             hp_store_path(s));
    else
      report_print(c, (report_fmt)fmt, report_term_width(), stdout);
    printf("\n");
    if (table && !r.npoints)
      printf("no kernels in %s\n", hp_store_path(s));
    else
      report_print(k, (report_fmt)fmt, report_term_width(), stdout);
  }
  report_free(c);
  report_free(k);
  rf_free(&r);
  return rc;
}
