/* hubprof report: the roofline chart, where the store has ceilings (`hubprof roofline --store`): per device a
 * log-log SVG (arithmetic intensity in FLOP per DRAM byte across, GFLOP/s up), one roof per compute ceiling
 * under the DRAM slope, a slope per cache level measured (l1, l2, l3: the bandwidth a kernel whose bytes came
 * from that level could reach), the kernels placed by their counters (roofline_place.c) as points, and the
 * kernels that could not be placed with the counters they lack. Drawn here, no script: the page's CSP allows
 * none. */
/* SPDX-License-Identifier: MIT */
#include "report_internal.h"
#include "roofline_place.h"

#include <math.h>
#include <string.h>

#define W 640.0
#define H 400.0
#define L 70.0 /* left margin (axis labels) */
#define B 40.0 /* bottom margin */
#define T 10.0
#define R 90.0 /* right margin (roof labels) */

typedef struct axes {
  double x0, x1, y0, y1; /* log10 of the ranges */
} axes;

static double px(const axes *a, double x) { return L + (log10(x) - a->x0) / (a->x1 - a->x0) * (W - L - R); }
static double py(const axes *a, double y) {
  return H - B - (log10(y) - a->y0) / (a->y1 - a->y0) * (H - B - T);
}

static const char *roof_color(const char *name) {
  return !strcmp(name, "fp64")    ? "#1f77b4"
         : !strcmp(name, "fp32")  ? "#2ca02c"
         : !strcmp(name, "fp16")  ? "#9467bd"
         : !strcmp(name, "int32") ? "#8c564b"
         : !strcmp(name, "l1")    ? "#ff7f0e"
         : !strcmp(name, "l2")    ? "#17becf"
         : !strcmp(name, "l3")    ? "#bcbd22"
         : !strcmp(name, "l4")    ? "#7f7f7f"
                                  : "#d62728";
}

/* A bandwidth ceiling (dram and the cache levels: GB/s), drawn as a slope; the others are flat roofs. */
static int is_slope(const rf_ceiling *c) { return strcmp(c->unit, "GB/s") == 0; }

/* One device's chart: its ceilings (dram and the compute ones) and its placed points. */
static void chart(hu_buf *b, const rf_roofline *r, uint64_t agent) {
  double dram = -1, bwmax = -1, bwmin = INFINITY, cmax = 0, cmin = INFINITY;
  const char *device = "";
  for (size_t i = 0; i < r->nceilings; i++) {
    const rf_ceiling *c = &r->ceilings[i];
    if (c->agent_id != agent || !(c->value > 0)) continue;
    device = c->device;
    if (!strcmp(c->name, "dram")) dram = c->value;
    if (is_slope(c)) {
      bwmax = fmax(bwmax, c->value);
      bwmin = fmin(bwmin, c->value);
    } else {
      cmax = fmax(cmax, c->value);
      cmin = fmin(cmin, c->value);
    }
  }
  /* ranges: from the ridge points (the fastest cache's too) and the points, in whole decades */
  double xlo = 1.0 / 16, xhi = 64, ylo = INFINITY, yhi = cmax > 0 ? cmax : 1;
  if (dram > 0 && cmax > 0) {
    xlo = fmin(xlo, cmin / bwmax / 16);
    xhi = fmax(xhi, cmax / dram * 16);
  }
  for (size_t i = 0; i < r->npoints; i++) {
    const rf_point *q = &r->points[i];
    if (q->agent_id != agent || !q->precision || !(q->intensity > 0) || !(q->gflops > 0)) continue;
    xlo = fmin(xlo, q->intensity / 2), xhi = fmax(xhi, q->intensity * 2);
    ylo = fmin(ylo, q->gflops / 2), yhi = fmax(yhi, q->gflops * 2);
  }
  if (isfinite(bwmin)) ylo = fmin(ylo, bwmin * xlo); /* the lowest slope (dram) on the chart */
  if (!isfinite(ylo)) ylo = yhi / 1e4;
  axes a = {floor(log10(xlo)), ceil(log10(xhi)), floor(log10(ylo)), ceil(log10(yhi * 2))};
  if (a.y1 <= a.y0) a.y1 = a.y0 + 1;
  hu_buf_str(b, "<figure><svg class=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" "
                "height=\"400\" viewBox=\"0 0 640 400\" role=\"img\" data-device=\"");
  rp_text(b, device);
  hu_buf_str(b, "\"><title>roofline of ");
  rp_text(b, device);
  hu_buf_str(b, "</title>\n");
  /* decades: grid and labels */
  for (double e = a.x0; e <= a.x1; e++) {
    double x = px(&a, pow(10, e));
    hu_buf_printf(b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" "
                  "y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
                  x, T, x, H - B, x, H - B + 14, pow(10, e));
  }
  for (double e = a.y0; e <= a.y1; e++) {
    double y = py(&a, pow(10, e));
    hu_buf_printf(b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" "
                  "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n",
                  L, y, W - R, y, L - 4, y + 4, pow(10, e));
  }
  hu_buf_printf(b,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">arithmetic intensity "
                "(FLOP/byte of DRAM)</text><text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 14 %.1f)\">GFLOP/s</text>\n",
                (L + W - R) / 2, H - 6, (H - B) / 2, (H - B) / 2);
  double xa = pow(10, a.x0), xb = pow(10, a.x1);
  /* each roof: the DRAM slope up to its ridge, then flat (or flat alone without a dram ceiling); each cache
   * level's slope, thinner, up to the highest compute roof */
  for (size_t i = 0; i < r->nceilings; i++) {
    const rf_ceiling *c = &r->ceilings[i];
    if (c->agent_id != agent || !(c->value > 0)) continue;
    hu_buf_str(b, "<g class=\"roof\" data-ceiling=\"");
    rp_text(b, c->name);
    hu_buf_printf(b, "\" data-value=\"%.17g\" data-unit=\"", c->value);
    rp_text(b, c->unit);
    hu_buf_printf(b, "\"><title>%s %.2f %s</title>", c->name, c->value, c->unit);
    if (is_slope(c)) {
      double bw = c->value, x2 = cmax > 0 ? fmin(cmax / bw, xb) : xb;
      hu_buf_printf(b,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\" "
                    "stroke-dasharray=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">",
                    px(&a, xa), py(&a, bw * xa), px(&a, x2), py(&a, bw * x2), roof_color(c->name),
                    !strcmp(c->name, "dram") ? "2" : "1.5", !strcmp(c->name, "dram") ? "6 3" : "2 3",
                    px(&a, xa) + 4, py(&a, bw * xa) - 6, roof_color(c->name));
      rp_text(b, c->name);
      hu_buf_printf(b, " %.4g %s</text>", c->value, c->unit);
    } else {
      double ridge = dram > 0 ? fmax(c->value / dram, xa) : xa;
      if (dram > 0 && ridge > xa)
        hu_buf_printf(
            b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>",
            px(&a, xa), py(&a, dram * xa), px(&a, ridge), py(&a, c->value), roof_color(c->name));
      hu_buf_printf(b,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">%s %.6g</text>",
                    px(&a, ridge), py(&a, c->value), px(&a, xb), py(&a, c->value), roof_color(c->name),
                    W - R + 4, py(&a, c->value) + 4, roof_color(c->name), c->name, c->value);
    }
    hu_buf_str(b, "</g>\n");
  }
  for (size_t i = 0; i < r->npoints; i++) {
    const rf_point *q = &r->points[i];
    if (q->agent_id != agent || !q->precision || !(q->intensity > 0) || !(q->gflops > 0)) continue;
    hu_buf_printf(b,
                  "<circle class=\"kpoint\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#000\" "
                  "data-kernel=\"",
                  px(&a, q->intensity), py(&a, q->gflops), roof_color(q->precision));
    rp_text(b, q->kernel);
    hu_buf_printf(b, "\" data-precision=\"%s\" data-intensity=\"%.17g\" data-gflops=\"%.17g\"><title>",
                  q->precision, q->intensity, q->gflops);
    rp_text(b, q->kernel);
    hu_buf_printf(b, " (%s): %.4g FLOP/byte, %.4g GFLOP/s%s%s</title></circle>\n", q->precision, q->intensity,
                  q->gflops, q->bound[0] ? ", " : "", q->bound[0] ? q->bound : "");
    if (q->bound[0]) hu_buf_printf(b, "<!-- %s bound -->", q->bound);
  }
  hu_buf_str(b, "</svg><figcaption>");
  rp_text(b, device);
  hu_buf_str(b, "</figcaption></figure>\n");
}

int rp_roofline(rp *p) {
  uint64_t n = 0;
  if (hp_store_count(p->s, HP_TABLE_CEILING, &n) != HP_OK || !n) return 0;
  rf_roofline r;
  if (rf_read(p->s, &r) != HP_OK)
    return ex_set_err(p->w, "%s: the roofline: %s", hp_store_path(p->s), hp_store_error(p->s));
  hu_buf *b = p->b;
  hu_buf_str(b, "<h2 id=\"roofline\">Roofline</h2>\n");
  if (!r.nceilings) { /* rows, none measured */
    hu_buf_str(b, "<p>The store's ceilings have no value: none could be measured (the ceiling table's notes "
                  "say why).</p>\n");
    rf_free(&r);
    return 0;
  }
  hu_buf_str(b, "<p>The devices' ceilings as <code>hubprof roofline</code> "
                "measured them, and each kernel whose counters give its FLOPs and DRAM bytes placed by "
                "arithmetic intensity and achieved GFLOP/s (<code>hubprof analyze --roofline</code>).</p>\n");
  for (size_t i = 0; i < r.nceilings; i++) {
    size_t j = 0;
    while (j < i && r.ceilings[j].agent_id != r.ceilings[i].agent_id)
      j++;
    if (j == i) chart(b, &r, r.ceilings[i].agent_id);
  }
  int missing = 0;
  for (size_t i = 0; i < r.npoints; i++) {
    const rf_point *q = &r.points[i];
    if (q->precision) continue;
    hu_buf_str(b, missing++ ? "<li>" : "<p>Not placed:</p>\n<ul class=\"roof-missing\">\n<li>");
    hu_buf_str(b, "<b>");
    rp_text(b, q->kernel);
    hu_buf_str(b, "</b> (");
    rp_text(b, q->device);
    hu_buf_str(b, "): ");
    rp_text(b, q->missing);
    hu_buf_str(b, "</li>\n");
  }
  if (missing) hu_buf_str(b, "</ul>\n");
  rf_free(&r);
  return 0;
}
