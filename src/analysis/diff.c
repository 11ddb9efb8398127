/* The comparison of two stores (ha_diff): the same query on both, rows matched by their keys (kernel or
 * region), and per pair the calls, times and shared measures side by side with deltas and directions. */
/* SPDX-License-Identifier: MIT */
#include "ha_result.h"

#include "../common/hu_hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key columns diff matches rows by and shows, in this order: device kernel [grid workgroup] (the
 * device only counts for matching when a store has several), or category region / category path. */
static size_t diff_keys(int group, const char **names) {
  size_t n = 0;
  if (group == HA_BY_REGION || group == HA_BY_REGION_TREE) {
    names[n++] = "category";
    names[n++] = group == HA_BY_REGION ? "region" : "path";
    return n;
  }
  names[n++] = "device";
  names[n++] = "kernel";
  if (group == HA_BY_KERNEL_GRID) names[n++] = "grid", names[n++] = "workgroup";
  return n;
}

/* Key of a row: its key columns joined by \x1f (the device left out unless with_device). */
static void row_key(const ha_result *r, size_t row, int group, int with_device, char *buf, size_t len) {
  const char *names[4];
  size_t n = diff_keys(group, names), w = 0;
  buf[0] = 0;
  for (size_t i = 0; i < n && w < len; i++) {
    if (!strcmp(names[i], "device") && !with_device) continue;
    long c = ha_result_col_find(r, names[i]);
    w += (size_t)snprintf(buf + w, len - w, "%s\x1f", c >= 0 ? ha_result_text(r, row, (size_t)c) : "");
  }
}

static size_t count_devices(const ha_result *r) {
  long dc = ha_result_col_find(r, "device");
  size_t n = 0;
  for (size_t i = 0; i < r->nrows; i++) {
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++)
      seen = ha_result_text(r, j, (size_t)dc) == ha_result_text(r, i, (size_t)dc) ||
             strcmp(ha_result_text(r, j, (size_t)dc), ha_result_text(r, i, (size_t)dc)) == 0;
    n += !seen;
    if (n > 1) break;
  }
  return n;
}

typedef struct pair {
  long a, b; /* rows, -1 when absent */
  double weight;
} pair;

static int cmp_pairs(const void *x, const void *y) {
  const pair *a = x, *b = y;
  if (a->weight != b->weight) return a->weight > b->weight ? -1 : 1;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  return a->b < b->b ? -1 : a->b > b->b;
}

static const char *direction(double a, double b, double same_pct, const char *up, const char *down) {
  if (is_nan(a) || is_nan(b)) return "";
  double d = b - a;
  if (d == 0) return "same";
  if (a != 0) {
    double pct = 100 * d / (a < 0 ? -a : a);
    if ((pct < 0 ? -pct : pct) < same_pct) return "same";
  }
  return d > 0 ? up : down;
}

/* The columns of a diff: the keys, status, calls and times of both sides, then per shared measure (ra's
 * columns ma) its two values, delta, delta in percent and direction. 0 or -1 (out of memory). */
static int diff_cols(ha_result *res, const char *const *keys, size_t nkeys, const ha_result *ra,
                     const long *ma, size_t nmeas) {
  static const hai_coldef cols[] = {{"status", HA_TEXT, HA_ROLE_KEY, ""},
                                    {"calls_a", HA_INT, HA_ROLE_STAT, ""},
                                    {"calls_b", HA_INT, HA_ROLE_STAT, ""},
                                    {"total_ns_a", HA_INT, HA_ROLE_STAT, "ns"},
                                    {"total_ns_b", HA_INT, HA_ROLE_STAT, "ns"},
                                    {"total_ns_delta", HA_INT, HA_ROLE_DIFF, "ns"},
                                    {"total_ns_delta_pct", HA_REAL, HA_ROLE_DIFF, "%"},
                                    {"avg_ns_a", HA_REAL, HA_ROLE_STAT, "ns"},
                                    {"avg_ns_b", HA_REAL, HA_ROLE_STAT, "ns"},
                                    {"avg_ns_delta", HA_REAL, HA_ROLE_DIFF, "ns"},
                                    {"avg_ns_delta_pct", HA_REAL, HA_ROLE_DIFF, "%"},
                                    {"time", HA_TEXT, HA_ROLE_DIFF, ""}};
  int e = 0;
  for (size_t k = 0; k < nkeys; k++)
    e = e || hai_col(res, keys[k], HA_TEXT, HA_ROLE_KEY, "");
  e = e || hai_cols(res, cols, sizeof cols / sizeof cols[0]);
  for (size_t k = 0; !e && k < nmeas; k++) {
    const rcol *c = &ra->cols[ma[k]];
    char nm[300];
    static const char *const suf[] = {"_a", "_b", "_delta", "_delta_pct", "_dir"};
    for (int x = 0; x < 5 && !e; x++) {
      snprintf(nm, sizeof nm, "%s%s", c->name, suf[x]);
      e = hai_col(res, nm, x == 4 ? HA_TEXT : HA_REAL, x < 2 ? c->role : HA_ROLE_DIFF,
                  x == 3   ? "%"
                  : x == 4 ? ""
                           : c->unit);
    }
  }
  return e ? -1 : 0;
}

hp_status ha_diff(hp_store *sa, hp_store *sb, const ha_query *q, double same_pct, ha_result **out) {
  if (out) *out = NULL;
  if (!sa || !sb || !q || !out || q->size < HA_QUERY_V1)
    return hai_error_out(out, HP_ERR_INVALID, "bad arguments");
  if (q->group != HA_BY_KERNEL && q->group != HA_BY_KERNEL_GRID && q->group != HA_BY_REGION &&
      q->group != HA_BY_REGION_TREE)
    return hai_error_out(
        out, HP_ERR_INVALID,
        "diff compares kernels or regions: group by kernel, kernel-grid, region or region-tree");
  int regions = q->group == HA_BY_REGION || q->group == HA_BY_REGION_TREE;
  if (!(same_pct >= 0)) same_pct = 0;
  ha_query qq; /* only the caller's size is read: older callers pass a shorter struct */
  memset(&qq, 0, sizeof qq);
  memcpy(&qq, q, q->size < sizeof qq ? q->size : sizeof qq);
  qq.limit = 0;
  qq.sort = HA_SORT_TIME;
  if (!qq.counters) qq.counters = "";
  ha_result *ra = NULL, *rb = NULL, *res = NULL;
  hp_status st = ha_run(sa, &qq, &ra);
  if (st == HP_OK) st = ha_run(sb, &qq, &rb);
  if (st != HP_OK) { /* the failed side's result holds why */
    hp_store *bad = ra && !ra->error[0] ? sb : sa;
    st = hai_error_out(out, st, "%s: %s", hp_store_path(bad), ha_result_error(bad == sa ? ra : rb));
    ha_result_free(ra);
    ha_result_free(rb);
    return st;
  }
  /* the measures both sides have (metrics default to those both can give) */
  size_t cap = ra->ncols + 1, nmeas = 0;
  long *ma = malloc(cap * sizeof *ma), *mb = malloc(cap * sizeof *mb);
  pair *pairs = NULL;
  size_t npairs = 0;
  res = calloc(1, sizeof *res);
  if (!ma || !mb || !res) st = HP_ERR_NOMEM;
  for (size_t c = 0; st == HP_OK && c < ra->ncols; c++) {
    ha_col_role role = ra->cols[c].role;
    if (role != HA_ROLE_COUNTER && role != HA_ROLE_METRIC) continue;
    long cb = ha_result_col_find(rb, ra->cols[c].name);
    if (cb < 0) continue;
    ma[nmeas] = (long)c;
    mb[nmeas++] = cb;
  }
  const char *keys[4];
  size_t nkeys = diff_keys(q->group, keys);
  int with_device = st == HP_OK && !regions && (count_devices(ra) > 1 || count_devices(rb) > 1);
  /* match rows by key: hash of B's keys */
  char key[2048];
  size_t hcap = 64;
  while (hcap < 2 * (rb->nrows + 1))
    hcap *= 2;
  long *htab = st == HP_OK ? malloc(hcap * sizeof *htab) : NULL;
  char **bkeys = st == HP_OK ? calloc(rb->nrows + 1, sizeof *bkeys) : NULL;
  int *bused = st == HP_OK ? calloc(rb->nrows + 1, sizeof *bused) : NULL;
  if (st == HP_OK && (!htab || !bkeys || !bused)) st = HP_ERR_NOMEM;
  if (st == HP_OK) {
    for (size_t i = 0; i < hcap; i++)
      htab[i] = -1;
    for (size_t i = 0; i < rb->nrows && st == HP_OK; i++) {
      row_key(rb, i, q->group, with_device, key, sizeof key);
      if (!(bkeys[i] = strdup(key))) {
        st = HP_ERR_NOMEM;
        break;
      }
      size_t j = hu_hash_str(key) & (hcap - 1);
      while (htab[j] >= 0)
        j = (j + 1) & (hcap - 1);
      htab[j] = (long)i;
    }
  }
  if (st == HP_OK && !(pairs = calloc(ra->nrows + rb->nrows + 1, sizeof *pairs))) st = HP_ERR_NOMEM;
  long tca = ha_result_col_find(ra, "total_ns"), tcb = ha_result_col_find(rb, "total_ns");
  for (size_t i = 0; st == HP_OK && i < ra->nrows; i++) {
    row_key(ra, i, q->group, with_device, key, sizeof key);
    size_t j = hu_hash_str(key) & (hcap - 1);
    long found = -1;
    while (htab[j] >= 0) {
      if (!bused[htab[j]] && strcmp(bkeys[htab[j]], key) == 0) {
        found = htab[j];
        break;
      }
      j = (j + 1) & (hcap - 1);
    }
    if (found >= 0) bused[found] = 1;
    double wa = (double)ha_result_int(ra, i, (size_t)tca),
           wb = found >= 0 ? (double)ha_result_int(rb, (size_t)found, (size_t)tcb) : 0;
    pairs[npairs++] = (pair){.a = (long)i, .b = found, .weight = wa > wb ? wa : wb};
  }
  for (size_t i = 0; st == HP_OK && i < rb->nrows; i++)
    if (!bused[i])
      pairs[npairs++] = (pair){.a = -1, .b = (long)i, .weight = (double)ha_result_int(rb, i, (size_t)tcb)};
  if (st == HP_OK) qsort(pairs, npairs, sizeof *pairs, cmp_pairs);
  if (st == HP_OK && q->limit > 0 && (size_t)q->limit < npairs) npairs = (size_t)q->limit;
  if (st == HP_OK && diff_cols(res, keys, nkeys, ra, ma, nmeas)) st = HP_ERR_NOMEM;
  long ca[3], cb[3];
  ca[0] = ha_result_col_find(ra, "calls");
  ca[1] = tca;
  ca[2] = ha_result_col_find(ra, "avg_ns");
  cb[0] = ha_result_col_find(rb, "calls");
  cb[1] = tcb;
  cb[2] = ha_result_col_find(rb, "avg_ns");
  for (size_t p = 0; st == HP_OK && p < npairs; p++) {
    const pair *pr = &pairs[p];
    const ha_result *src = pr->a >= 0 ? ra : rb;
    size_t srow = (size_t)(pr->a >= 0 ? pr->a : pr->b);
    uint8_t *fl;
    cell *row = hai_next_row(res, &fl, &st);
    if (!row) break;
    size_t c = 0;
    for (size_t k = 0; k < nkeys; k++) {
      long kc = ha_result_col_find(src, keys[k]);
      row[c++].text = hai_intern(res, kc >= 0 ? ha_result_text(src, srow, (size_t)kc) : "");
    }
    row[c++].text = hai_intern(res, pr->a >= 0 && pr->b >= 0 ? "both" : pr->a >= 0 ? "missing" : "new");
    for (size_t k = 0; k < c; k++)
      if (!row[k].text) st = HP_ERR_NOMEM;
    int64_t calls_a = pr->a >= 0 ? ha_result_int(ra, (size_t)pr->a, (size_t)ca[0]) : 0;
    int64_t calls_b = pr->b >= 0 ? ha_result_int(rb, (size_t)pr->b, (size_t)cb[0]) : 0;
    int64_t tot_a = pr->a >= 0 ? ha_result_int(ra, (size_t)pr->a, (size_t)ca[1]) : 0;
    int64_t tot_b = pr->b >= 0 ? ha_result_int(rb, (size_t)pr->b, (size_t)cb[1]) : 0;
    double avg_a = pr->a >= 0 ? ha_result_num(ra, (size_t)pr->a, (size_t)ca[2]) : NAN;
    double avg_b = pr->b >= 0 ? ha_result_num(rb, (size_t)pr->b, (size_t)cb[2]) : NAN;
    int both = pr->a >= 0 && pr->b >= 0;
    row[c++].i = calls_a;
    row[c++].i = calls_b;
    row[c++].i = tot_a;
    row[c++].i = tot_b;
    row[c++].i = tot_b - tot_a;
    row[c].num = both && tot_a ? 100.0 * ((double)tot_b - (double)tot_a) / (double)tot_a : NAN;
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_a;
    if (is_nan(avg_a)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_b;
    if (is_nan(avg_b)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_b - avg_a;
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    row[c].num = avg_a != 0 ? 100.0 * (avg_b - avg_a) / avg_a : NAN;
    if (is_nan(row[c].num)) fl[c] = HA_CELL_MISSING;
    c++;
    if (!(row[c++].text = hai_intern(res, direction(avg_a, avg_b, same_pct, "slower", "faster"))))
      st = HP_ERR_NOMEM;
    for (size_t k = 0; k < nmeas && st == HP_OK; k++) {
      double va = pr->a >= 0 ? ha_result_num(ra, (size_t)pr->a, (size_t)ma[k]) : NAN;
      double vb = pr->b >= 0 ? ha_result_num(rb, (size_t)pr->b, (size_t)mb[k]) : NAN;
      unsigned fa = pr->a >= 0 ? ha_result_flags(ra, (size_t)pr->a, (size_t)ma[k]) : HA_CELL_MISSING;
      unsigned fb = pr->b >= 0 ? ha_result_flags(rb, (size_t)pr->b, (size_t)mb[k]) : HA_CELL_MISSING;
      row[c].num = va;
      fl[c++] = (uint8_t)(fa | (is_nan(va) ? HA_CELL_MISSING : 0));
      row[c].num = vb;
      fl[c++] = (uint8_t)(fb | (is_nan(vb) ? HA_CELL_MISSING : 0));
      unsigned fd = ((fa | fb) & (HA_CELL_IMPUTED | HA_CELL_MIXED)) | (is_nan(vb - va) ? HA_CELL_MISSING : 0);
      row[c].num = vb - va;
      fl[c++] = (uint8_t)fd;
      row[c].num = va != 0 ? 100.0 * (vb - va) / (va < 0 ? -va : va) : NAN;
      fl[c] = (uint8_t)(fd | (is_nan(row[c].num) ? HA_CELL_MISSING : 0));
      c++;
      if (!(row[c++].text = hai_intern(res, direction(va, vb, same_pct, "higher", "lower"))))
        st = HP_ERR_NOMEM;
    }
  }
  if (st == HP_OK) {
    res->lost = ra->lost + rb->lost;
    for (size_t i = 0; i < ra->nnotes && st == HP_OK; i++)
      if (hai_note(res, "A: %s", ra->notes[i])) st = HP_ERR_NOMEM;
    for (size_t i = 0; i < rb->nnotes && st == HP_OK; i++)
      if (hai_note(res, "B: %s", rb->notes[i])) st = HP_ERR_NOMEM;
  }
  if (bkeys)
    for (size_t i = 0; i < rb->nrows; i++)
      free(bkeys[i]);
  free(bkeys);
  free(bused);
  free(htab);
  free(pairs);
  free(ma);
  free(mb);
  ha_result_free(ra);
  ha_result_free(rb);
  return hai_hand_out(NULL, st, res, out);
}
