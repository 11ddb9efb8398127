/* hubprof report: the kernels of the run (their names, durations and cold dispatches from one pass), one
 * drill-down section per kernel, the samples, the regions as a flame graph, and the ranks' imbalance. */
/* SPDX-License-Identifier: MIT */
#include "report_internal.h"

#include "../common/hu_search.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RP_HIST_BINS 24          /* bars of a kernel's duration histogram */
#define RP_KROWS 200             /* dispatches listed per kernel section */
#define RP_DISPATCH_QUERY 100000 /* dispatches the per-dispatch tables are taken from, at most */
#define RP_SAMPLE_KERNELS 5      /* kernels with samples shown */
#define RP_SAMPLE_ROWS 20        /* rows per sample table */
#define RP_FLAME_W 1100          /* flame graph width (px) */

/* ---- the kernel names ----------------------------------------------------------------------------- */

typedef struct first_seen {
  int64_t start;
  uint64_t rowid;
} first_seen;

static int cmp_name(const void *a, const void *b) {
  const rp_kname *x = a, *y = b;
  if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
  return strcmp(x->name, y->name);
}

static int cmp_kshape(const void *a, const void *b) {
  const rp_kshape *x = a, *y = b;
  if (x->name != y->name) return x->name < y->name ? -1 : 1;
  return x->calls > y->calls ? -1 : x->calls < y->calls;
}

int rp_names_load(rp *p) {
  const ex_model *m = p->w->m;
  const char *lim = getenv("HUBPROF_REPORT_TIMELINE_ITEMS");
  char *end = NULL;
  unsigned long long l = lim && *lim ? strtoull(lim, &end, 10) : 0;
  p->tl_items = lim && *lim && end && !*end && l > 0 ? (size_t)l : RP_TL_ITEMS;
  hu_strmap byname = {0};
  hu_idmap firsts = {0}; /* (process id, kernel) -> index in first + 1 */
  first_seen *first = NULL;
  size_t nfirst = 0, capfirst = 0, *capdur = NULL, capdisp = 0, capks = 0;
  hu_idmap shapemap = {0}; /* (name, shape) -> index in p->kshapes + 1 */
  hu_buf tmp = {0};
  rp_kname *names = NULL;
  size_t *of = calloc(m->nkernels + 1, sizeof *of); /* model kernel -> name index before sorting */
  p->kname = calloc(m->nkernels + 1, sizeof *p->kname);
  int rc = !of || !p->kname ? -1 : 0;
  for (size_t k = 0; !rc && k < m->nkernels; k++) {
    long i = hu_strmap_intern(&byname, m->kernels[k].name ? m->kernels[k].name : "", NULL);
    if (i < 0) rc = -1;
    of[k] = (size_t)i;
  }
  size_t n = byname.n;
  if (!rc) {
    names = calloc(n + 1, sizeof *names);
    capdur = calloc(n + 1, sizeof *capdur);
    if (!names || !capdur) rc = -1;
  }
  for (size_t i = 0; !rc && i < n; i++)
    names[i].name = hu_strmap_str(&byname, i);
  hp_cursor *c = NULL;
  hp_status st = HP_OK;
  if (!rc && (st = hp_cursor_open(p->s, HP_TABLE_DISPATCH, &c)) != HP_OK) {
    free(of), free(names), free(capdur);
    hu_strmap_free(&byname);
    hu_buf_free(&tmp);
    return ex_set_err(p->w, "%s", hp_store_error(p->s)[0] ? hp_store_error(p->s) : hp_status_str(st));
  }
  hp_dispatch d = {.size = sizeof d};
  rp_span *sp = &p->span;
  while (!rc && (st = hp_cursor_next(c, &d)) == HP_OK) {
    const ex_named *k = ex_find_named(m->kernels, m->nkernels, d.kernel_id);
    rp_kname *kn = k ? &names[of[k - m->kernels]] : NULL;
    if (kn) kn->calls++;
    if (d.cold && hu_idmap_put(&p->cold, d.id, RP_COLD_FLAG)) rc = -1;
    if (!d.start_ns || d.end_ns < d.start_ns) {
      sp->untimed++;
      continue;
    }
    if (!sp->timed || d.start_ns < sp->tmin) sp->tmin = d.start_ns;
    if (!sp->timed || d.end_ns > sp->tmax) sp->tmax = d.end_ns;
    sp->timed++;
    tmp.n = 0;
    hu_buf_printf(&tmp, "%u,%u,%u,%u,%u,%u", d.grid[0], d.grid[1], d.grid[2], d.workgroup[0], d.workgroup[1],
                  d.workgroup[2]);
    const char *shs = hu_buf_cstr(&tmp);
    long si = shs ? hu_strmap_intern(&p->shapes, shs, NULL) : -1;
    if (si < 0) {
      rc = -1;
      break;
    }
    if (!p->disp_binned && p->ndisp == p->tl_items) { /* too many to keep: the timeline bins them */
      free(p->disp);
      p->disp = NULL, p->ndisp = 0, capdisp = 0, p->disp_binned = 1;
    }
    if (!p->disp_binned && hu_grow((void **)&p->disp, &capdisp, p->ndisp + 1, sizeof *p->disp)) {
      rc = -1;
      break;
    }
    if (!p->disp_binned)
      p->disp[p->ndisp++] = (rp_disp){.start = d.start_ns,
                                      .end = d.end_ns,
                                      .enq = d.enqueue_ns,
                                      .rowid = d.id,
                                      .process_id = d.process_id,
                                      .thread_id = d.thread_id,
                                      .queue_id = d.queue_id,
                                      .kernel = k ? (uint32_t)(k - m->kernels) : UINT32_MAX,
                                      .shape = (uint32_t)si};
    if (!kn) continue;
    size_t ki = (size_t)(kn - names);
    uint64_t skey = ((uint64_t)ki << 32 | (uint64_t)si) + 1, sv;
    if (!hu_idmap_get(&shapemap, skey, &sv)) {
      if (hu_grow((void **)&p->kshapes, &capks, p->nkshapes + 1, sizeof *p->kshapes) ||
          hu_idmap_put(&shapemap, skey, p->nkshapes + 1)) {
        rc = -1;
        break;
      }
      p->kshapes[p->nkshapes++] = (rp_kshape){ki, (uint32_t)si, 0, 0};
      sv = p->nkshapes;
    }
    p->kshapes[sv - 1].calls++;
    p->kshapes[sv - 1].total_ns += (double)(d.end_ns - d.start_ns);
    kn->timed++;
    kn->total_ns += (double)(d.end_ns - d.start_ns);
    if (hu_grow((void **)&kn->dur, &capdur[ki], kn->ndur + 1, sizeof *kn->dur)) {
      rc = -1;
      break;
    }
    kn->dur[kn->ndur++] = d.end_ns - d.start_ns;
    uint64_t key = (d.process_id << 24 ^ (uint64_t)(k - m->kernels)) + 1, fi;
    if (!hu_idmap_get(&firsts, key, &fi)) {
      if (hu_grow((void **)&first, &capfirst, nfirst + 1, sizeof *first) ||
          hu_idmap_put(&firsts, key, nfirst + 1)) {
        rc = -1;
        break;
      }
      first[nfirst++] = (first_seen){d.start_ns, d.id};
    } else if (d.start_ns < first[fi - 1].start)
      first[fi - 1] = (first_seen){d.start_ns, d.id};
  }
  if (c) hp_cursor_close(c);
  if (!rc && st != HP_END) ex_note_damage(p->w, p->s);
  for (size_t i = 0; !rc && i < nfirst; i++) {
    uint64_t v = 0;
    hu_idmap_get(&p->cold, first[i].rowid, &v);
    if (hu_idmap_put(&p->cold, first[i].rowid, v | RP_COLD_FIRST)) rc = -1;
  }
  free(first);
  free(capdur);
  hu_idmap_free(&firsts);
  hu_idmap_free(&shapemap);
  hu_buf_free(&tmp);
  p->w->st->dispatches = sp->timed + sp->untimed;
  p->w->st->skipped_untimed = sp->untimed;
  if (!rc) { /* most time first; each model kernel's name index follows its name */
    size_t *pos = malloc((n + 1) * sizeof *pos);
    if (!pos)
      rc = -1;
    else {
      qsort(names, n, sizeof *names, cmp_name);
      for (size_t i = 0; i < n; i++)
        pos[hu_strmap_find(&byname, names[i].name)] = i;
      for (size_t k = 0; k < m->nkernels; k++)
        p->kname[k] = pos[of[k]];
      for (size_t i = 0; i < p->nkshapes; i++)
        p->kshapes[i].name = pos[p->kshapes[i].name];
      qsort(p->kshapes, p->nkshapes, sizeof *p->kshapes, cmp_kshape);
      free(pos);
    }
  }
  free(of);
  p->names = names, p->nnames = names ? n : 0;
  p->byname = byname; /* its strings are the names */
  if (rc) return ex_set_err(p->w, "out of memory");
  return 0;
}

void rp_names_free(rp *p) {
  for (size_t i = 0; i < p->nnames; i++)
    free(p->names[i].dur);
  free(p->names);
  free(p->kname);
  hu_strmap_free(&p->byname);
  hu_idmap_free(&p->cold);
  hu_strmap_free(&p->shapes);
  free(p->disp);
  free(p->kshapes);
  p->disp = NULL, p->kshapes = NULL, p->ndisp = p->nkshapes = 0;
  p->names = NULL, p->kname = NULL, p->nnames = 0;
}

/* ---- kernel sections ----------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The durations of kernel kn as a histogram of RP_HIST_BINS equal bins from its shortest to its longest;
 * each bar carries its count in data-count (they sum to the timed calls). */
static void histogram(hu_buf *b, rp_kname *kn, size_t idx) {
  if (!kn->ndur) {
    hu_buf_str(b, "<p>No timed dispatch.</p>\n");
    return;
  }
  qsort(kn->dur, kn->ndur, sizeof *kn->dur, cmp_i64);
  int64_t lo = kn->dur[0], hi = kn->dur[kn->ndur - 1];
  double w = hi > lo ? (double)(hi - lo) / RP_HIST_BINS : 1;
  uint64_t cnt[RP_HIST_BINS] = {0}, max = 0;
  for (size_t i = 0; i < kn->ndur; i++) {
    size_t x = hi > lo ? (size_t)((double)(kn->dur[i] - lo) / w) : 0;
    cnt[x < RP_HIST_BINS ? x : RP_HIST_BINS - 1]++;
  }
  for (size_t x = 0; x < RP_HIST_BINS; x++)
    if (cnt[x] > max) max = cnt[x];
  const int bw = 28, H = 120, W = RP_HIST_BINS * bw + 80;
  hu_buf_printf(
      b,
      "<svg class=\"hist\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"duration histogram\" "
      "data-calls=\"%zu\">\n",
      W, H + 40, kn->ndur);
  for (size_t x = 0; x < RP_HIST_BINS; x++) {
    double h = max ? (double)cnt[x] / (double)max * H : 0;
    if (cnt[x] && h < 1) h = 1;
    hu_buf_printf(b, "<rect x=\"%zu\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"", 40 + x * bw,
                  H - h + 4, bw - 2, h);
    rp_color(b, idx);
    hu_buf_printf(b, "\" data-count=\"%" PRIu64 "\"><title>%" PRIu64 " dispatch%s, ", cnt[x], cnt[x],
                  cnt[x] == 1 ? "" : "es");
    rp_ns(b, (double)lo + (double)x * w);
    hu_buf_str(b, " to ");
    rp_ns(b, (double)lo + (double)(x + 1) * w);
    hu_buf_str(b, "</title></rect>\n");
  }
  hu_buf_printf(b, "<text x=\"40\" y=\"%d\">", H + 22);
  rp_ns(b, (double)lo);
  hu_buf_printf(b, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">", 40 + RP_HIST_BINS * bw, H + 22);
  rp_ns(b, (double)hi);
  hu_buf_printf(b, "</text><text x=\"36\" y=\"14\" text-anchor=\"end\">%" PRIu64 "</text></svg>\n", max);
}

/* The (grid, work-group) shapes kernel n ran with: calls and average duration of each, most calls first. */
static void shapes(rp *p, size_t n) {
  hu_buf *b = p->b;
  size_t lo; /* kshapes are by name: the first of n */
  HU_PARTITION(lo, p->nkshapes, mid, p->kshapes[mid].name < n);
  if (lo == p->nkshapes || p->kshapes[lo].name != n) return;
  hu_buf_str(b, "<p>Shapes it ran with:</p>\n<div class=\"wrap\"><table class=\"sort shapes\"><thead><tr>"
                "<th>grid</th><th>work-group</th><th>calls</th><th>avg_ns (ns)</th></tr></thead><tbody>\n");
  for (size_t i = lo; i < p->nkshapes && p->kshapes[i].name == n; i++) {
    const rp_kshape *k = &p->kshapes[i];
    unsigned g[6] = {0};
    sscanf(hu_strmap_str(&p->shapes, k->shape), "%u,%u,%u,%u,%u,%u", &g[0], &g[1], &g[2], &g[3], &g[4],
           &g[5]);
    double avg = k->total_ns / (double)k->calls;
    hu_buf_printf(b,
                  "<tr><td class=\"t\">%ux%ux%u</td><td class=\"t\">%ux%ux%u</td><td data-v=\"%" PRIu64
                  "\">%" PRIu64 "</td><td data-v=\"%.17g\">%.3f</td></tr>\n",
                  g[0], g[1], g[2], g[3], g[4], g[5], k->calls, k->calls, avg, avg);
  }
  hu_buf_str(b, "</tbody></table></div>\n");
}

/* The dispatches of kernel `name` in r (HA_BY_DISPATCH), RP_KROWS at most, with the cold one marked. */
static void dispatch_table(rp *p, const ha_result *r, const char *name, uint64_t calls, int partial) {
  hu_buf *b = p->b;
  long ck = ha_result_col_find(r, "kernel"), crow = ha_result_col_find(r, "row");
  if (ck < 0) return;
  size_t nc = ha_result_ncols(r), shown = 0, matched = 0;
  for (size_t i = 0; i < ha_result_nrows(r); i++) {
    if (strcmp(ha_result_text(r, i, (size_t)ck), name)) continue;
    matched++;
    if (shown == RP_KROWS) continue;
    if (!shown++) {
      hu_buf_str(b, "<div class=\"wrap\"><table class=\"sort dispatches\">");
      rp_thead(b, r, "note");
      hu_buf_str(b, "<tbody>\n");
    }
    hu_buf_str(b, "<tr>");
    for (size_t c = 0; c < nc; c++)
      rp_cell(b, r, i, c);
    uint64_t cold = 0;
    if (crow >= 0) hu_idmap_get(&p->cold, (uint64_t)ha_result_int(r, i, (size_t)crow), &cold);
    hu_buf_str(b, "<td class=\"t\">");
    if (cold & RP_COLD_FIRST)
      hu_buf_str(b, "<span class=\"cold\" title=\"its first dispatch in its process: "
                    "compilation and first touch\">first (JIT)</span> ");
    if (cold & RP_COLD_FLAG)
      hu_buf_str(b, "<span class=\"cold\" title=\"left out of imputed medians\">cold</span>");
    hu_buf_str(b, "</td></tr>\n");
  }
  if (shown) hu_buf_str(b, "</tbody></table></div>\n");
  if (matched > shown || (partial && calls > matched))
    hu_buf_printf(b,
                  "<p class=\"note\">%zu of its %" PRIu64 " dispatches listed%s (<code>hubprof analyze --by "
                  "dispatch --kernel NAME</code> lists them all).</p>\n",
                  shown, calls, partial ? ", taken from the run's first dispatches" : "");
}

int rp_kernel_sections(rp *p) {
  hu_buf *b = p->b;
  if (!p->nnames) return 0;
  /* per dispatch with every counter and metric (times only when those fail), from the first dispatches */
  int partial = p->span.timed + p->span.untimed > RP_DISPATCH_QUERY;
  ha_query q = {.size = sizeof q, .group = HA_BY_DISPATCH};
  if (partial) q.dispatch_first = 1, q.dispatch_last = RP_DISPATCH_QUERY;
  ha_result *dr = NULL;
  if (ha_run(p->s, &q, &dr) != HP_OK) {
    ha_result_free(dr);
    dr = NULL;
    q.counters = "", q.metrics = "";
    if (ha_run(p->s, &q, &dr) != HP_OK) {
      ha_result_free(dr);
      dr = NULL;
    }
  }
  hu_buf_str(b,
             "<h2 id=\"drill\">Kernel by kernel</h2>\n<p>One section per kernel, most device time first: "
             "the spread of its durations, the shapes it ran with, and its dispatches with their counters "
             "and metrics as <code>hubprof analyze --by dispatch</code> gives them (* imputed, ! values of "
             "different passes combined, ^ above its physical peak). Its first dispatch in each process "
             "is marked: it carries the compilation and first touch.</p>\n");
  for (size_t i = 0; i < p->nnames; i++) {
    rp_kname *kn = &p->names[i];
    hu_buf_printf(b,
                  "<details id=\"kernel-%zu\" class=\"kernel\"><summary><svg width=\"12\" height=\"12\" "
                  "aria-hidden=\"true\"><rect width=\"12\" height=\"12\" fill=\"",
                  i);
    rp_color(b, i);
    hu_buf_str(b, "\"/></svg> <span class=\"kname\">");
    rp_text(b, kn->name);
    hu_buf_printf(b, "</span> \xC2\xB7 %" PRIu64 " call%s \xC2\xB7 ", kn->calls, kn->calls == 1 ? "" : "s");
    rp_ns(b, kn->total_ns);
    hu_buf_printf(b, "</summary>\n<p>%" PRIu64 " call%s, %" PRIu64 " timed, ", kn->calls,
                  kn->calls == 1 ? "" : "s", kn->timed);
    rp_ns(b, kn->total_ns);
    hu_buf_str(b, " of device time");
    if (kn->timed) {
      hu_buf_str(b, " (");
      rp_ns(b, kn->total_ns / (double)kn->timed);
      hu_buf_str(b, " on average)");
    }
    hu_buf_str(b, ". Durations:</p>\n");
    histogram(b, kn, i);
    shapes(p, i);
    if (dr) dispatch_table(p, dr, kn->name, kn->calls, partial);
    hu_buf_str(b, "</details>\n");
  }
  ha_result_free(dr);
  return b->oom ? ex_set_err(p->w, "out of memory") : 0;
}

/* ---- samples ----------------------------------------------------------------------------------------- */

static void sample_table(hu_buf *b, hp_store *s, int group, const char *kernel, const char *title) {
  const char *k[1] = {kernel};
  ha_query q = {.size = sizeof q, .group = group, .limit = RP_SAMPLE_ROWS, .kernels = k, .nkernels = 1};
  ha_result *r = NULL;
  hu_buf_str(b, "<h4>");
  rp_text(b, title);
  hu_buf_str(b, "</h4>\n");
  if (ha_run(s, &q, &r) != HP_OK) {
    hu_buf_str(b, "<p class=\"warn\">");
    rp_text(b, ha_result_error(r));
    hu_buf_str(b, "</p>\n");
  } else
    rp_table(b, r);
  ha_result_free(r);
}

void rp_samples(rp *p) {
  hu_buf *b = p->b;
  hu_buf_str(b, "<h2 id=\"samples\">Samples</h2>\n<p>Where the sampled kernels spent their time, as "
                "<code>hubprof analyze --by function|line|instruction --kernel NAME</code> gives it (the "
                "kernels with the most device time first).</p>\n");
  size_t shown = 0;
  for (size_t i = 0; i < p->nnames && shown < RP_SAMPLE_KERNELS; i++) {
    const char *name = p->names[i].name;
    if (strpbrk(name, "*?[\\")) continue; /* a glob would match others */
    const char *k[1] = {name};
    ha_query q = {.size = sizeof q, .group = HA_BY_FUNCTION, .limit = 1, .kernels = k, .nkernels = 1};
    ha_result *r = NULL;
    int any = ha_run(p->s, &q, &r) == HP_OK && ha_result_nrows(r) > 0;
    ha_result_free(r);
    if (!any) continue;
    shown++;
    hu_buf_printf(b, "<h3 class=\"skernel\" data-kernel=\"%zu\">", i);
    rp_text(b, name);
    hu_buf_str(b, "</h3>\n<div class=\"samples\" data-kernel=\"");
    rp_text(b, name);
    hu_buf_str(b, "\">\n");
    sample_table(b, p->s, HA_BY_FUNCTION, name, "functions");
    sample_table(b, p->s, HA_BY_LINE, name, "lines");
    sample_table(b, p->s, HA_BY_INSTRUCTION, name, "instructions");
    hu_buf_str(b, "</div>\n");
  }
  if (!shown) hu_buf_str(b, "<p>No kernel with samples.</p>\n");
}

/* ---- regions: a flame graph ------------------------------------------------------------------------- */

/* Region colours: warm hues by a hash of the name (the kernels' colours are for kernels). */
static unsigned name_hue(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h % 60;
}

/* HA_BY_REGION_TREE rows as an icicle: each row of the tree (in tree order, a row after its parent) is a
 * box as wide as its inclusive time, under its parent, beside its earlier siblings. */
static void flame(hu_buf *b, const ha_result *r) {
  long cn = ha_result_col_find(r, "region"), ct = ha_result_col_find(r, "total_ns"),
       cx = ha_result_col_find(r, "exclusive_ns"), cd = ha_result_col_find(r, "depth"),
       cc = ha_result_col_find(r, "calls"), ccat = ha_result_col_find(r, "category");
  size_t nr = ha_result_nrows(r);
  if (cn < 0 || ct < 0 || cd < 0 || !nr) return;
  double root = 0;
  int64_t maxd = 0;
  for (size_t i = 0; i < nr; i++) {
    int64_t d = ha_result_int(r, i, (size_t)cd);
    double t = ha_result_num(r, i, (size_t)ct);
    if (d == 0 && isfinite(t)) root += t;
    if (d > maxd) maxd = d;
  }
  if (root <= 0) return;
  if (maxd > 31) maxd = 31;
  const int rh = 22;
  double next[33] = {0}; /* next free x per depth */
  double xs[33] = {0};   /* x of the last box per depth (a child starts under it) */
  hu_buf_printf(b,
                "<svg class=\"flame\" width=\"%d\" height=\"%" PRId64 "\" role=\"img\" "
                "aria-label=\"regions flame graph\">\n",
                RP_FLAME_W, (maxd + 1) * rh + 4);
  for (size_t i = 0; i < nr; i++) {
    int64_t d = ha_result_int(r, i, (size_t)cd);
    if (d < 0 || d > maxd) continue;
    double t = ha_result_num(r, i, (size_t)ct);
    if (!isfinite(t) || t <= 0) continue;
    double x = d ? (next[d] > xs[d - 1] ? next[d] : xs[d - 1]) : next[0];
    double w = t / root * RP_FLAME_W;
    xs[d] = x, next[d] = x + w;
    for (int64_t e = d + 1; e <= maxd; e++) /* deeper levels start under this box */
      next[e] = x;
    const char *name = ha_result_text(r, i, (size_t)cn);
    while (*name == ' ')
      name++;
    hu_buf_printf(b, "<g><title>");
    if (ccat >= 0 && *ha_result_text(r, i, (size_t)ccat)) {
      rp_text(b, ha_result_text(r, i, (size_t)ccat));
      hu_buf_str(b, ": ");
    }
    rp_text(b, name);
    hu_buf_str(b, "\ninclusive ");
    rp_ns(b, t);
    if (cx >= 0) {
      hu_buf_str(b, ", exclusive ");
      rp_ns(b, ha_result_num(r, i, (size_t)cx));
    }
    if (cc >= 0)
      hu_buf_printf(b, ", %" PRId64 " call%s", ha_result_int(r, i, (size_t)cc),
                    ha_result_int(r, i, (size_t)cc) == 1 ? "" : "s");
    for (size_t c = 0; c < ha_result_ncols(r); c++) {
      int role = ha_result_col_role(r, c);
      if (role != HA_ROLE_COUNTER && role != HA_ROLE_METRIC) continue;
      double v = ha_result_num(r, i, c);
      if (!isfinite(v)) continue;
      hu_buf_str(b, "\n");
      rp_text(b, ha_result_col_name(r, c));
      hu_buf_printf(b, " %.6g", v);
    }
    hu_buf_printf(b,
                  "</title><rect x=\"%.2f\" y=\"%" PRId64 "\" width=\"%.2f\" height=\"%d\" "
                  "fill=\"hsl(%u,75%%,62%%)\" stroke=\"#fff\"/>",
                  x, d * rh, w > 0.5 ? w : 0.5, rh - 2, 10 + name_hue(name));
    size_t fit = w > 12 ? (size_t)((w - 8) / 7) : 0; /* ~7 px per character: the whole name or none */
    if (fit && strlen(name) <= fit) {
      hu_buf_printf(b, "<text x=\"%.2f\" y=\"%" PRId64 "\">", x + 4, d * rh + 15);
      rp_text(b, name);
      hu_buf_str(b, "</text>");
    }
    hu_buf_str(b, "</g>\n");
  }
  hu_buf_str(b, "</svg>\n");
}

void rp_regions(rp *p, uint64_t nregions) {
  hu_buf *b = p->b;
  hu_buf_printf(b,
                "<h2 id=\"regions\">Regions</h2>\n<p>%" PRIu64 " region%s. The flame graph: each region "
                "under the one around it, as wide as its inclusive time (hover for inclusive and "
                "exclusive time and its counters); the tables as <code>hubprof analyze --by region</code> "
                "and <code>--by region-tree</code> give them.</p>\n",
                nregions, nregions == 1 ? "" : "s");
  ha_result *tr = rp_query(p->s, HA_BY_REGION_TREE, NULL, NULL);
  if (!tr) tr = rp_query(p->s, HA_BY_REGION_TREE, "", "");
  if (tr) flame(b, tr);
  ha_result *rr = rp_query(p->s, HA_BY_REGION, NULL, NULL);
  if (!rr) rr = rp_query(p->s, HA_BY_REGION, "", "");
  if (!rr && !tr) hu_buf_str(b, "<p class=\"warn\">The regions could not be read.</p>\n");
  if (rr) rp_table(b, rr);
  if (tr) {
    hu_buf_str(b, "<h3>By nesting</h3>\n");
    rp_table(b, tr);
  }
  ha_result_free(rr);
  ha_result_free(tr);
}

/* ---- ranks ------------------------------------------------------------------------------------------ */

void rp_ranks(rp *p) {
  hu_buf *b = p->b;
  if (p->w->m->nprocs < 2) return; /* one process: one rank */
  ha_query q = {.size = sizeof q, .group = HA_BY_RANK_IMBALANCE};
  ha_result *r = NULL;
  if (ha_run(p->s, &q, &r) != HP_OK) {
    ha_result_free(r);
    return;
  }
  long cr = ha_result_col_find(r, "ranks");
  int several = 0;
  for (size_t i = 0; cr >= 0 && i < ha_result_nrows(r); i++)
    if (ha_result_int(r, i, (size_t)cr) > 1) several = 1;
  if (several) {
    hu_buf_str(b,
               "<h2 id=\"ranks\">Ranks</h2>\n<p>Per kernel, the device time of each rank that ran it: "
               "the spread from the fastest to the slowest (imbalance: (max \xE2\x88\x92 median) / median), "
               "as <code>hubprof analyze --by rank-imbalance</code> gives it.</p>\n");
    rp_table(b, r);
  }
  ha_result_free(r);
}
