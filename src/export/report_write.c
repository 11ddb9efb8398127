/* The report's shared writers (report_internal.h): store text made safe for HTML, durations, the table of an
 * analysis result with its head and cells, the page's kernel colours, and one analysis query; called by
 * report_html.c and every section file, calling none of them. */
/* SPDX-License-Identifier: MIT */
#include "report_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- text ------------------------------------------------------------------------------------------ */

void rp_text_n(hu_buf *b, const char *s, size_t max) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)p), cps = 0;
  while (n) {
    if (max && cps == max) {
      hu_buf_str(b, "\xE2\x80\xA6");
      return;
    }
    size_t len;
    int32_t cp = ex_utf8_next(p, n, &len);
    cps++;
    if (cp == '&')
      hu_buf_str(b, "&amp;");
    else if (cp == '<')
      hu_buf_str(b, "&lt;");
    else if (cp == '>')
      hu_buf_str(b, "&gt;");
    else if (cp == '"')
      hu_buf_str(b, "&quot;");
    else if (cp == '\'')
      hu_buf_str(b, "&#39;");
    else if (cp < 0 || (cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7F && cp < 0xA0))
      hu_buf_str(b, "\xEF\xBF\xBD");
    else
      hu_buf_put(b, p, len);
    p += len, n -= len;
  }
}
void rp_text(hu_buf *b, const char *s) { rp_text_n(b, s, 0); }

void rp_ns(hu_buf *b, double ns) {
  if (!isfinite(ns))
    hu_buf_str(b, "\xE2\x80\x93");
  else if (fabs(ns) >= 1e9)
    hu_buf_printf(b, "%.3g s", ns / 1e9);
  else if (fabs(ns) >= 1e6)
    hu_buf_printf(b, "%.3g ms", ns / 1e6);
  else if (fabs(ns) >= 1e3)
    hu_buf_printf(b, "%.3g \xC2\xB5s", ns / 1e3);
  else
    hu_buf_printf(b, "%.0f ns", ns);
}

/* ---- tables of analysis results ----------------------------------------------------------------------- */

void rp_cell(hu_buf *b, const ha_result *r, size_t row, size_t col) {
  ha_col_kind k = ha_result_col_kind(r, col);
  if (k == HA_TEXT) {
    hu_buf_str(b, "<td class=\"t\">");
    rp_text(b, ha_result_text(r, row, col));
    hu_buf_str(b, "</td>");
    return;
  }
  unsigned fl = ha_result_flags(r, row, col);
  const char *cls = fl & HA_CELL_IMPUTED ? " class=\"imp\" title=\"imputed\"" : "";
  if (k == HA_INT) {
    long long v = (long long)ha_result_int(r, row, col);
    hu_buf_printf(b, "<td data-v=\"%lld\"%s>%lld</td>", v, cls, v);
    return;
  }
  double v = ha_result_num(r, row, col);
  if (!isfinite(v)) {
    hu_buf_printf(b, "<td data-v=\"\"%s>\xE2\x80\x93</td>", cls);
    return;
  }
  hu_buf_printf(b, "<td data-v=\"%.17g\"%s>", v, cls);
  if (fabs(v) >= 1e15 || (v != 0 && fabs(v) < 1e-3))
    hu_buf_printf(b, "%.6g", v);
  else
    hu_buf_printf(b, "%.3f", v);
  /* analyze's marks: * imputed, ! values of different passes combined, ^ above its physical peak */
  if (fl & (HA_CELL_IMPUTED | HA_CELL_MIXED | HA_CELL_OVER_PEAK))
    hu_buf_printf(b, "<sup title=\"%s%s%s\">%s%s%s</sup>", fl & HA_CELL_IMPUTED ? "imputed " : "",
                  fl & HA_CELL_MIXED ? "combines different replay passes " : "",
                  fl & HA_CELL_OVER_PEAK ? "above its peak" : "", fl & HA_CELL_IMPUTED ? "*" : "",
                  fl & HA_CELL_MIXED ? "!" : "", fl & HA_CELL_OVER_PEAK ? "^" : "");
  hu_buf_str(b, "</td>");
}

void rp_thead(hu_buf *b, const ha_result *r, const char *extra) {
  size_t nc = ha_result_ncols(r);
  hu_buf_str(b, "<thead><tr>");
  for (size_t c = 0; c < nc; c++) {
    hu_buf_str(b, "<th>");
    rp_text(b, ha_result_col_name(r, c));
    const char *u = ha_result_col_unit(r, c);
    if (u && *u) {
      hu_buf_str(b, " (");
      rp_text(b, u);
      hu_buf_byte(b, ')');
    }
    hu_buf_str(b, "</th>");
  }
  if (extra) {
    hu_buf_str(b, "<th>");
    rp_text(b, extra);
    hu_buf_str(b, "</th>");
  }
  hu_buf_str(b, "</tr></thead>");
}

void rp_table(hu_buf *b, const ha_result *r) {
  size_t nc = ha_result_ncols(r), nr = ha_result_nrows(r);
  hu_buf_str(b, "<div class=\"wrap\"><table class=\"sort\">");
  rp_thead(b, r, NULL);
  hu_buf_str(b, "<tbody>\n");
  for (size_t i = 0; i < nr && i < RP_MAX_ROWS; i++) {
    hu_buf_str(b, "<tr>");
    for (size_t c = 0; c < nc; c++)
      rp_cell(b, r, i, c);
    hu_buf_str(b, "</tr>\n");
  }
  hu_buf_str(b, "</tbody></table></div>\n");
  if (nr > RP_MAX_ROWS)
    hu_buf_printf(b, "<p class=\"note\">%zu more rows not shown (hubprof analyze lists them all).</p>\n",
                  nr - RP_MAX_ROWS);
  for (size_t i = 0; i < ha_result_nnotes(r); i++) {
    hu_buf_str(b, "<p class=\"note\">");
    rp_text(b, ha_result_note(r, i));
    hu_buf_str(b, "</p>\n");
  }
}

void rp_color(hu_buf *b, size_t n) {
  static const int light[3] = {52, 38, 66};
  hu_buf_printf(b, "hsl(%.1f,65%%,%d%%)", (double)((uint64_t)n * 137508 % 360000) / 1000, light[n % 3]);
}

ha_result *rp_query(hp_store *s, int group, const char *counters, const char *metrics) {
  ha_query q = {.size = sizeof q, .group = group, .counters = counters, .metrics = metrics};
  ha_result *r = NULL;
  if (ha_run(s, &q, &r) != HP_OK) {
    ha_result_free(r);
    return NULL;
  }
  return r;
}
