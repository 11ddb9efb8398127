/* The report's "Whole-run counters" section: the counter samples of no dispatch (`hubprof sample
 * --whole-run`, process totals polled on a timer), one small line chart per counter over the run. */
/* SPDX-License-Identifier: MIT */
#include "report_internal.h"

#include "hubprof/analysis.h"

#include <inttypes.h>
#include <string.h>

#define RUN_W 640.0
#define RUN_H 56.0
#define RUN_POINTS 2000 /* points of one chart at most */
#define RUN_MAX 64      /* counters drawn (a sample run reads at most 64) */

void rp_run_counters(rp *p) {
  ha_result *r = rp_query(p->s, HA_TIMELINE, NULL, NULL); /* no dispatch: the whole run */
  size_t n = r ? ha_result_nrows(r) : 0;
  if (!n) {
    ha_result_free(r);
    return;
  }
  hu_buf *b = p->b;
  int64_t t0 = ha_result_int(r, 0, 0), t1 = t0;
  for (size_t i = 0; i < n; i++) {
    int64_t t = ha_result_int(r, i, 0);
    t0 = t < t0 ? t : t0;
    t1 = t > t1 ? t : t1;
  }
  hu_buf_str(b,
             "<h2 id=\"run-counters\">Whole-run counters</h2>\n<p>Counters polled on a timer for the whole "
             "run (<code>hubprof sample --whole-run</code>): the process's totals since sampling began, "
             "between kernels too; ");
  rp_ns(b, (double)(t1 - t0));
  hu_buf_str(b, " from the first poll to the last.</p>\n<table><tr><th>counter</th><th>over the run</th>"
                "<th>last</th></tr>\n");
  /* one row per counter (in order of first appearance; up to RUN_MAX): rows * counters work */
  const char *names[RUN_MAX];
  size_t nn = 0;
  for (size_t i = 0; i < n && nn < RUN_MAX; i++) {
    const char *name = ha_result_text(r, i, 1);
    size_t k = 0;
    while (k < nn && strcmp(names[k], name))
      k++;
    if (k == nn) names[nn++] = name;
  }
  for (size_t c = 0; c < nn; c++) {
    const char *name = names[c];
    double lo = 0, hi = 0, last = 0;
    int any = 0;
    size_t cnt = 0, seen = 0;
    for (size_t k = 0; k < n; k++)
      if (!strcmp(ha_result_text(r, k, 1), name)) {
        double v = ha_result_num(r, k, 2);
        lo = !any || v < lo ? v : lo;
        hi = !any || v > hi ? v : hi;
        last = v, any = 1, cnt++;
      }
    size_t stride = cnt > RUN_POINTS ? (cnt + RUN_POINTS - 1) / RUN_POINTS : 1; /* a long run: every k-th */
    hu_buf_str(b, "<tr><td>");
    rp_text(b, name);
    hu_buf_printf(
        b,
        "</td><td><svg width=\"%.0f\" height=\"%.0f\" class=\"run-counter\"><polyline fill=\"none\" "
        "stroke=\"currentColor\" points=\"",
        RUN_W, RUN_H);
    for (size_t k = 0; k < n; k++)
      if (!strcmp(ha_result_text(r, k, 1), name) && (seen++ % stride == 0 || seen == cnt)) {
        double x = t1 > t0 ? (double)(ha_result_int(r, k, 0) - t0) / (double)(t1 - t0) * RUN_W : 0;
        double y = hi > lo ? RUN_H - 2 - (ha_result_num(r, k, 2) - lo) / (hi - lo) * (RUN_H - 4) : RUN_H / 2;
        hu_buf_printf(b, "%.1f,%.1f ", x, y);
      }
    hu_buf_printf(b, "\"/></svg></td><td>%.6g</td></tr>\n", last);
  }
  hu_buf_str(b, "</table>\n");
  ha_result_free(r);
}
