/* hubprof report: a store as one self-contained HTML page (summary, top kernels, the interactive timeline,
 * kernel drill-down, samples, regions, ranks, the comparison with a baseline); this file assembles the page
 * and writes the shared pieces, the sections live in report_*.c. */
/* SPDX-License-Identifier: MIT */
#include "report_internal.h"

#include "report_js.h" /* generated from src/export/report.js */

#include "../common/hu_bytes.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RP_TOP 15   /* bars in the top-kernel and comparison charts */
#define RP_LABEL 56 /* characters of a name in a chart (the full name in its tooltip) */

static const char rp_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}\n"
    "th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:pre-wrap}\n"
    "th{background:#f3f3f3;cursor:pointer;user-select:none}\n"
    "th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "td.t{text-align:left;min-width:6em;max-width:480px;overflow-wrap:anywhere}\n"
    ".wrap{overflow-x:auto}\n"
    "td.imp{color:#a60}dl{display:grid;grid-template-columns:max-content auto;gap:2px 16px}\n"
    "dt{font-weight:600}dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}\n"
    ".warn{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px}\n"
    ".note{color:#555;font-size:12px}svg{display:block;margin:8px 0}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#222}\n"
    ".tl{position:relative;overflow:auto;border:1px solid #ccc;max-height:640px}\n"
    ".tl canvas{display:block;cursor:grab}.tl canvas:focus{outline:2px solid #4e79a7}\n"
    ".tip{position:absolute;z-index:2;background:#fff;border:1px solid #888;padding:4px 6px;"
    "font-size:12px;white-space:pre-wrap;max-width:420px;overflow-wrap:anywhere;pointer-events:none;"
    "box-shadow:0 2px 6px rgba(0,0,0,.2)}\n"
    ".sel pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:4px 6px}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:8px 0}\n"
    ".legend a{color:#222;text-decoration:none;overflow-wrap:anywhere}.legend svg{display:inline;margin:0 "
    "4px 0 0}\n"
    "details.kernel{border:1px solid #ddd;margin:6px 0;padding:4px 8px}\n"
    "details.kernel summary{cursor:pointer;overflow-wrap:anywhere}details.kernel summary "
    "svg{display:inline;margin:0}\n"
    ".cold{color:#a60;font-weight:600}\n";

/* ---- charts --------------------------------------------------------------------------------------- */

typedef struct rp_bar {
  const char *label, *sub; /* name; device (or NULL) */
  double value;            /* bar length */
  double pct;              /* shown after the value (NaN = none) */
  size_t color;            /* the page's kernel colour (rp_color), SIZE_MAX: the first bar colour */
} rp_bar;

/* Horizontal bars of durations, longest first as given, scaled to the largest. */
static void bar_chart(hu_buf *b, const rp_bar *bars, size_t n, const char *aria) {
  const int lw = 380, bw = 560, rh = 22, W = lw + bw + 140;
  double max = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(bars[i].value) && bars[i].value > max) max = bars[i].value;
  hu_buf_printf(b,
                "<svg width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" role=\"img\" aria-label=\"%s\">\n",
                W, n * rh + 8, W, n * rh + 8, aria);
  for (size_t i = 0; i < n; i++) {
    double v = isfinite(bars[i].value) ? bars[i].value : 0;
    double len = max > 0 ? v / max * bw : 0;
    size_t y = i * rh + 4;
    hu_buf_str(b, "<g><title>");
    rp_text(b, bars[i].label);
    if (bars[i].sub) {
      hu_buf_str(b, " on ");
      rp_text(b, bars[i].sub);
    }
    hu_buf_str(b, "</title>");
    hu_buf_printf(b, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", lw - 6, y + 15);
    rp_text_n(b, bars[i].label, RP_LABEL);
    hu_buf_str(b, "</text>");
    hu_buf_printf(b, "<rect x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"%d\" fill=\"", lw, y,
                  len > 0.5 ? len : 0.5, rh - 6);
    if (bars[i].color == SIZE_MAX)
      hu_buf_str(b, "#4e79a7");
    else
      rp_color(b, bars[i].color);
    hu_buf_str(b, "\"/>");
    hu_buf_printf(b, "<text x=\"%.1f\" y=\"%zu\">", lw + len + 6, y + 15);
    rp_ns(b, v);
    if (isfinite(bars[i].pct)) hu_buf_printf(b, " (%.1f%%)", bars[i].pct);
    hu_buf_str(b, "</text></g>\n");
  }
  hu_buf_str(b, "</svg>\n");
}

/* ---- sections ------------------------------------------------------------------------------------- */

static int cmp_row_time(const void *a, const void *b) {
  double x = ((const double *)a)[0], y = ((const double *)b)[0];
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The page's kernel index of a name (SIZE_MAX when the run has no such name). */
static size_t name_index(const rp *p, const char *name) {
  for (size_t i = 0; i < p->nnames; i++)
    if (!strcmp(p->names[i].name, name)) return i;
  return SIZE_MAX;
}

/* Top kernels: the bar chart over every device, most device time first, each bar in its kernel's colour. */
static void top_kernels(rp *p, const ha_result *r) {
  hu_buf *b = p->b;
  long ck = ha_result_col_find(r, "kernel"), cd = ha_result_col_find(r, "device"),
       ct = ha_result_col_find(r, "total_ns"), cp = ha_result_col_find(r, "percent");
  size_t nr = ha_result_nrows(r);
  hu_buf_str(b, "<h2 id=\"top\">Top kernels</h2>\n");
  if (ck < 0 || ct < 0 || !nr) {
    hu_buf_str(b, "<p>No dispatches.</p>\n");
    return;
  }
  /* rows come per device: order them by time over all devices ([time, row] pairs) */
  double(*ord)[2] = malloc(nr * sizeof *ord);
  if (!ord) {
    b->oom = 1;
    return;
  }
  for (size_t i = 0; i < nr; i++) {
    double t = ha_result_num(r, i, (size_t)ct);
    ord[i][0] = isfinite(t) ? t : -1, ord[i][1] = (double)i;
  }
  qsort(ord, nr, sizeof *ord, cmp_row_time);
  rp_bar bars[RP_TOP];
  size_t n = 0;
  for (size_t i = 0; i < nr && n < RP_TOP; i++) {
    size_t row = (size_t)ord[i][1];
    const char *name = ha_result_text(r, row, (size_t)ck);
    bars[n++] = (rp_bar){.label = name,
                         .sub = cd >= 0 ? ha_result_text(r, row, (size_t)cd) : NULL,
                         .value = ha_result_num(r, row, (size_t)ct),
                         .pct = cp >= 0 ? ha_result_num(r, row, (size_t)cp) : NAN,
                         .color = name_index(p, name)};
  }
  free(ord);
  hu_buf_printf(b,
                "<p>Device time of the %zu kernel%s with the most, over every device (in brackets: the "
                "kernel's share of its device's time).</p>\n",
                n, n == 1 ? "" : "s");
  bar_chart(b, bars, n, "top kernels by device time");
}

/* The run's summary: nodes, processes, devices, dispatches, kernels, time span, damage. */
static void summary(rp *p, const char *name, const rp_span *sp, uint64_t lost) {
  hu_buf *b = p->b;
  const ex_model *m = p->w->m;
  uint64_t nodes = 0, regions = 0, values = 0;
  (void)hp_store_count(p->s, HP_TABLE_NODE, &nodes);
  (void)hp_store_count(p->s, HP_TABLE_REGION, &regions);
  (void)hp_store_count(p->s, HP_TABLE_COUNTER_VALUE, &values);
  hu_buf_str(b, "<h2 id=\"summary\">Run</h2>\n<dl>\n<dt>store</dt><dd>");
  rp_text(b, name);
  hu_buf_printf(b, "</dd>\n<dt>nodes</dt><dd>%" PRIu64 "</dd>\n<dt>processes</dt><dd>%zu", nodes, m->nprocs);
  for (size_t i = 0; i < m->nprocs && i < 20; i++) {
    const ex_proc *pr = &m->procs[i];
    hu_buf_printf(b, "\npid %" PRId64 ": ", pr->pid);
    rp_text_n(b, pr->name, 200);
    const char *sig = pr->exit_signal > 0 ? sigabbrev_np((int)pr->exit_signal) : NULL;
    if (sig)
      hu_buf_printf(b, " <span class=\"exit bad\">(killed by SIG%s)</span>", sig);
    else if (pr->exit_signal > 0)
      hu_buf_printf(b, " <span class=\"exit bad\">(killed by signal %" PRId64 ")</span>", pr->exit_signal);
    else if (pr->exit_code >= 0)
      hu_buf_printf(b, " <span class=\"exit%s\">(exit status %" PRId64 ")</span>",
                    pr->exit_code ? " bad" : "", pr->exit_code);
  }
  if (m->nprocs > 20) hu_buf_printf(b, "\n… %zu more", m->nprocs - 20);
  hu_buf_printf(b, "</dd>\n<dt>devices</dt><dd>%zu", m->nagents);
  for (size_t i = 0; i < m->nagents && i < 20; i++) {
    hu_buf_str(b, "\n");
    rp_text(b, m->agents[i].name);
  }
  if (m->nagents > 20) hu_buf_printf(b, "\n… %zu more", m->nagents - 20);
  hu_buf_printf(
      b,
      "</dd>\n<dt>queues</dt><dd>%zu</dd>\n<dt>kernels</dt><dd>%zu</dd>\n<dt>dispatches</dt><dd>%" PRIu64
      " (%" PRIu64 " timed)</dd>\n<dt>counter values</dt><dd>%" PRIu64 "</dd>\n<dt>regions</dt><dd>%" PRIu64
      "</dd>\n<dt>time span</dt><dd>",
      m->nqueues, m->nkernels, sp->timed + sp->untimed, sp->timed, values, regions);
  if (sp->timed) {
    rp_ns(b, (double)(sp->tmax - sp->tmin));
    hu_buf_printf(b, " (first dispatch start %" PRId64 " ns to last end %" PRId64 " ns, the node's clock)",
                  sp->tmin, sp->tmax);
  } else
    hu_buf_str(b, "no timed dispatch");
  hu_buf_str(b, "</dd>\n</dl>\n");
  if (lost)
    hu_buf_printf(
        b, "<p class=\"warn\">The collector lost %" PRIu64 " record%s: the figures are lower bounds.</p>\n",
        lost, lost == 1 ? "" : "s");
}

static void damage_note(rp *p) {
  if (!p->w->st->damaged) return;
  hu_buf_str(p->b,
             "<p class=\"warn\">Damaged store: this report shows what was readable; the rest was skipped (");
  rp_text(p->b, p->w->st->damage);
  hu_buf_str(p->b, ").</p>\n");
}

/* The comparison with a baseline: the change of each kernel's average as a chart, then the table. */
static void comparison(rp *p, const ha_result *r, const char *base_name) {
  hu_buf *b = p->b;
  hu_buf_str(b, "<h2 id=\"diff\">Against the baseline</h2>\n<p>Baseline: ");
  rp_text(b, base_name);
  hu_buf_str(b, ". Change of each kernel's average device time, this run against the baseline (most time "
                "first; green: faster, red: slower; bars end at ±100 %, the label says the change).</p>\n");
  long ck = ha_result_col_find(r, "kernel"), cs = ha_result_col_find(r, "status"),
       cpct = ha_result_col_find(r, "avg_ns_delta_pct"), ca = ha_result_col_find(r, "avg_ns_a"),
       cb = ha_result_col_find(r, "avg_ns_b");
  size_t nr = ha_result_nrows(r), n = nr < RP_TOP ? nr : RP_TOP;
  if (ck >= 0 && cs >= 0 && cpct >= 0 && ca >= 0 && cb >= 0 && n) {
    const int lw = 380, half = 260, rh = 22, W = lw + 2 * half + 200;
    hu_buf_printf(
        b, "<svg width=\"%d\" height=\"%zu\" role=\"img\" aria-label=\"change against the baseline\">\n", W,
        n * rh + 8);
    hu_buf_printf(b, "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%zu\" stroke=\"#888\"/>\n", lw + half,
                  lw + half, n * rh + 8);
    for (size_t i = 0; i < n; i++) {
      size_t y = i * rh + 4;
      const char *status = ha_result_text(r, i, (size_t)cs);
      double pct = ha_result_num(r, i, (size_t)cpct);
      hu_buf_str(b, "<g><title>");
      rp_text(b, ha_result_text(r, i, (size_t)ck));
      hu_buf_str(b, "</title>");
      hu_buf_printf(b, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", lw - 6, y + 15);
      rp_text_n(b, ha_result_text(r, i, (size_t)ck), RP_LABEL);
      hu_buf_str(b, "</text>");
      double label_x = lw + half + 6;
      if (!strcmp(status, "both") && isfinite(pct)) {
        double c = pct > 100 ? 100 : pct < -100 ? -100 : pct, len = fabs(c) / 100 * half;
        double x = c < 0 ? lw + half - len : lw + half;
        hu_buf_printf(b, "<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", x, y,
                      len > 0.5 ? len : 0.5, rh - 6, c < 0 ? "#59a14f" : "#e15759");
        label_x = (c < 0 ? lw + half : lw + half + len) + 6;
        hu_buf_printf(b, "<text x=\"%.1f\" y=\"%zu\">%+.1f%% (", label_x, y + 15, pct);
        rp_ns(b, ha_result_num(r, i, (size_t)ca));
        hu_buf_str(b, " \xE2\x86\x92 ");
        rp_ns(b, ha_result_num(r, i, (size_t)cb));
        hu_buf_str(b, ")</text></g>\n");
      } else {
        hu_buf_printf(b, "<text x=\"%.1f\" y=\"%zu\">", label_x, y + 15);
        hu_buf_str(b, !strcmp(status, "new")       ? "new: only in this run"
                      : !strcmp(status, "missing") ? "missing: only in the baseline"
                                                   : "no timed calls");
        hu_buf_str(b, "</text></g>\n");
      }
    }
    hu_buf_str(b, "</svg>\n");
  }
  rp_table(b, r);
}

/* ---- the page ----------------------------------------------------------------------------------- */

/* 'sha256-BASE64' of text, for the CSP. */
static void csp_hash(hu_buf *b, const char *text) {
  unsigned char h[32];
  char b64[48];
  hu_sha256 c;
  hu_sha256_init(&c);
  hu_sha256_update(&c, text, strlen(text));
  hu_sha256_final(&c, h);
  hu_base64_encode(h, sizeof h, b64);
  hu_buf_printf(b, "'sha256-%s'", b64);
}

static int build_page(rp *p, const char *name, hp_store *base, const char *base_name) {
  hu_buf *b = p->b;
  ex_writer *w = p->w;
  if (rp_names_load(p)) return -1;
  /* per kernel with every counter and metric the store can give; without them when those fail */
  ha_result *kr = rp_query(p->s, HA_BY_KERNEL, NULL, NULL);
  int no_metrics = !kr;
  if (!kr) {
    ha_query q = {.size = sizeof q, .group = HA_BY_KERNEL, .counters = "", .metrics = ""};
    if (ha_run(p->s, &q, &kr) != HP_OK) {
      int r = ex_set_err(w, "%s", ha_result_error(kr));
      ha_result_free(kr);
      return r;
    }
  }
  uint64_t nregions = 0, nsamples = 0;
  (void)hp_store_count(p->s, HP_TABLE_REGION, &nregions);
  (void)hp_store_count(p->s, HP_TABLE_PC_SAMPLE, &nsamples);
  uint64_t nceilings = 0;
  (void)hp_store_count(p->s, HP_TABLE_CEILING, &nceilings);
  w->st->regions = nregions;

  hu_buf_str(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src ");
  csp_hash(b, rp_script);
  hu_buf_str(b, "; style-src ");
  csp_hash(b, rp_style);
  hu_buf_str(b, "; base-uri 'none'; form-action 'none'\">\n<title>hubprof report: ");
  rp_text_n(b, name, 200);
  hu_buf_printf(b, "</title>\n<style>%s</style>\n</head><body>\n<h1>hubprof report: ", rp_style);
  rp_text(b, name);
  hu_buf_printf(b,
                "</h1>\n<p class=\"note\">hubprof %s. Contents: <a href=\"#summary\">run</a> · "
                "<a href=\"#top\">top kernels</a> · <a href=\"#timeline\">timeline</a> · "
                "<a href=\"#kernels\">kernels</a>%s%s%s%s. Click a table's header to sort it.</p>\n",
                hp_version(), nsamples ? " · <a href=\"#samples\">samples</a>" : "",
                nregions ? " · <a href=\"#regions\">regions</a>" : "",
                base ? " · <a href=\"#diff\">baseline</a>" : "",
                nceilings ? " · <a href=\"#roofline\">roofline</a>" : "");
  damage_note(p);
  summary(p, name, &p->span, ha_result_lost_records(kr));
  top_kernels(p, kr);
  int rc = rp_timeline(p);
  if (!rc) {
    hu_buf_str(b,
               "<h2 id=\"kernels\">Kernels</h2>\n<p>As <code>hubprof analyze</code> gives them: per device "
               "and kernel, calls and device time, then each counter (mean per dispatch) and metric.</p>\n");
    if (no_metrics)
      hu_buf_str(b, "<p class=\"warn\">The counters and metrics could not be computed for this store; "
                    "times only.</p>\n");
    rp_table(b, kr);
    rc = rp_kernel_sections(p);
  }
  ha_result_free(kr);
  if (!rc && nsamples) rp_samples(p);
  if (!rc) rp_run_counters(p);
  if (!rc && nregions) rp_regions(p, nregions);
  if (!rc) rp_ranks(p);
  if (!rc) rc = rp_roofline(p);
  if (!rc && base) {
    ha_query q = {.size = sizeof q, .group = HA_BY_KERNEL, .counters = "", .metrics = ""};
    ha_result *dr = NULL;
    if (ha_diff(base, p->s, &q, 2.0, &dr) != HP_OK)
      rc = ex_set_err(w, "%s", ha_result_error(dr));
    else
      comparison(p, dr, base_name);
    ha_result_free(dr);
  }
  hu_buf_printf(b, "<script>%s</script>\n</body></html>\n", rp_script);
  if (!rc && b->oom) rc = ex_set_err(w, "out of memory");
  return rc;
}

ex_status ex_report(hp_store *s, const char *name, hp_store *baseline, const char *baseline_name,
                    const char *out_path, ex_result **out) {
  if (!out) return EX_ERR_INVALID;
  ex_result *res = *out = calloc(1, sizeof *res);
  if (!res) return EX_ERR_NOMEM;
  if (!s || !out_path || !*out_path)
    return ex_result_err(res, EX_ERR_INVALID, "report: no store or no output path");
  ex_model m = {0};
  ex_writer w = {.m = &m, .st = &res->stats, .out_path = out_path};
  if (ex_model_load(&w, s)) {
    ex_model_free(&m);
    return ex_result_err(res, EX_ERR_STORE, "%s", w.err);
  }
  uint64_t off = 0;
  if (hp_store_damage(s, &off) != HP_OK) ex_note_damage(&w, s);
  hu_buf page = {0};
  rp p = {.w = &w, .b = &page, .s = s};
  int failed = build_page(&p, name ? name : "store", baseline, baseline_name ? baseline_name : "baseline");
  rp_names_free(&p);
  if (failed) {
    hu_buf_free(&page);
    ex_model_free(&m);
    return ex_result_err(res, strstr(w.err, "out of memory") ? EX_ERR_NOMEM : EX_ERR_STORE, "%s", w.err);
  }
  ex_model_free(&m);
  hu_buf tb = {0};
  hu_buf_printf(&tb, "%s.tmp.XXXXXX", out_path);
  char *tmp = hu_buf_cstr(&tb);
  ex_status rc = EX_OK;
  FILE *f = tmp ? ex_tmp_file(tmp) : NULL;
  if (!tmp)
    rc = ex_result_err(res, EX_ERR_NOMEM, "out of memory");
  else if (!f)
    rc = ex_result_err(res, EX_ERR_IO, "%s: cannot create the output: %s", out_path, strerror(errno));
  else {
    int bad = fwrite(page.p, 1, page.n, f) != page.n || fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) || bad) {
      rc = ex_result_err(res, EX_ERR_IO, "%s: write failed: %s", out_path, strerror(bad ? e : errno));
      unlink(tmp);
    } else if (rename(tmp, out_path)) {
      rc = ex_result_err(res, EX_ERR_IO, "%s: cannot write the output: %s", out_path, strerror(errno));
      unlink(tmp);
    }
  }
  hu_buf_free(&tb);
  hu_buf_free(&page);
  return rc;
}
