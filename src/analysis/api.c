/* The host API calls per function (HA_BY_API) and the memory copies per direction (HA_BY_COPY), as
 * hubprof trace --api records them. */
/* SPDX-License-Identifier: MIT */
#include "ha_result.h"
#include "ha_tables.h"

#include "../common/hu_buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct apiagg {
  const char *name; /* interned: compared by address */
  int64_t calls, total, min, max;
} apiagg;

static int cmp_apiagg(const void *x, const void *y) {
  const apiagg *a = x, *b = y;
  if (a->total != b->total) return a->total > b->total ? -1 : 1;
  return strcmp(a->name, b->name);
}

/* The API calls summed per function (hai_each's context: res interns the names). */
typedef struct api_sum {
  ha_result *res;
  apiagg *ag;
  size_t na, cap;
  int64_t all;
} api_sum;

static hp_status api_add(const void *row, void *ctx) {
  const hp_region *g = row;
  api_sum *a = ctx;
  if (strcmp(g->category, "api") != 0) return HP_OK;
  const char *name = hai_intern(a->res, g->name);
  if (!name) return HP_ERR_NOMEM;
  int64_t d = g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0;
  size_t i = 0;
  while (i < a->na && a->ag[i].name != name) /* a few dozen functions: a scan is enough */
    i++;
  if (i == a->na) {
    if (a->na == a->cap && hu_grow((void **)&a->ag, &a->cap, a->na + 1, sizeof *a->ag)) return HP_ERR_NOMEM;
    a->ag[a->na++] = (apiagg){.name = name, .min = d, .max = d};
  }
  apiagg *x = &a->ag[i];
  x->calls++;
  x->total = sat_add(x->total, d);
  if (d < x->min) x->min = d;
  if (d > x->max) x->max = d;
  a->all = sat_add(a->all, d);
  return HP_OK;
}

/* Per OpenCL function: the regions of category "api". */
hp_status hai_api(hp_store *s, const ha_query *q, ha_result **out) {
  ha_result *res = calloc(1, sizeof *res);
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  api_sum sum = {.res = res};
  hp_region reg = {.size = sizeof reg};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_REGION, &reg, api_add, &sum);
  apiagg *ag = sum.ag;
  size_t na = sum.na;
  int64_t all = sum.all;
  if (st == HP_OK) {
    qsort(ag, na, sizeof *ag, cmp_apiagg);
    static const hai_coldef cols[] = {
        {"function", HA_TEXT, HA_ROLE_KEY, ""},   {"calls", HA_INT, HA_ROLE_STAT, ""},
        {"total_ns", HA_INT, HA_ROLE_STAT, "ns"}, {"avg_ns", HA_REAL, HA_ROLE_STAT, "ns"},
        {"min_ns", HA_INT, HA_ROLE_STAT, "ns"},   {"max_ns", HA_INT, HA_ROLE_STAT, "ns"},
        {"percent", HA_REAL, HA_ROLE_STAT, "%"}};
    if (hai_cols(res, cols, sizeof cols / sizeof cols[0])) st = HP_ERR_NOMEM;
  }
  size_t lim = hai_limit(q, na);
  for (size_t i = 0; st == HP_OK && i < na && i < lim; i++) {
    uint8_t *fl;
    cell *row = hai_next_row(res, &fl, &st);
    if (!row) break;
    row[0].text = ag[i].name;
    row[1].i = ag[i].calls;
    row[2].i = ag[i].total;
    row[3].num = (double)ag[i].total / (double)ag[i].calls;
    row[4].i = ag[i].min;
    row[5].i = ag[i].max;
    row[6].num = all ? 100.0 * (double)ag[i].total / (double)all : NAN;
  }
  if (st == HP_OK && !na &&
      hai_note(
          res,
          "no API calls in this store: record them with 'hubprof trace --api' (or profile/sample --api)"))
    st = HP_ERR_NOMEM;
  free(ag);
  return hai_hand_out(s, st, res, out);
}

/* The memory copies summed per direction (H2D, D2H, D2D, FILL, then the unknown ones). */
enum { NCOPYDIR = 5 };
typedef struct copy_sum {
  int64_t n[NCOPYDIR], timed[NCOPYDIR], ns[NCOPYDIR];
  uint64_t bytes[NCOPYDIR], tbytes[NCOPYDIR];
} copy_sum;

static hp_status copy_add(const void *row, void *ctx) {
  const hp_memory_copy *m = row;
  copy_sum *a = ctx;
  size_t k = m->direction >= HP_COPY_H2D && m->direction <= HP_COPY_FILL ? m->direction - 1 : NCOPYDIR - 1;
  a->n[k]++;
  a->bytes[k] += m->bytes;
  if (m->start_ns && m->end_ns >= m->start_ns) {
    a->timed[k]++;
    a->tbytes[k] += m->bytes;
    a->ns[k] = sat_add(a->ns[k], m->end_ns - m->start_ns);
  }
  return HP_OK;
}

/* Per direction: the memory_copy rows (device time of the timed ones; bandwidth over those). */
hp_status hai_copies(hp_store *s, const ha_query *q, ha_result **out) {
  static const char *const dirs[NCOPYDIR] = {"H2D", "D2H", "D2D", "FILL", "UNKNOWN"};
  enum { ND = NCOPYDIR };
  copy_sum a;
  memset(&a, 0, sizeof a);
  const int64_t *n = a.n, *timed = a.timed, *ns = a.ns;
  const uint64_t *bytes = a.bytes, *tbytes = a.tbytes;
  ha_result *res = calloc(1, sizeof *res);
  hp_status st = res ? HP_OK : HP_ERR_NOMEM;
  hp_memory_copy cp = {.size = sizeof cp};
  if (st == HP_OK) st = hai_each(s, HP_TABLE_MEMORY_COPY, &cp, copy_add, &a);
  static const hai_coldef cols[] = {
      {"direction", HA_TEXT, HA_ROLE_KEY, ""},         {"copies", HA_INT, HA_ROLE_STAT, ""},
      {"bytes", HA_INT, HA_ROLE_STAT, "bytes"},        {"timed_copies", HA_INT, HA_ROLE_STAT, ""},
      {"total_ns", HA_INT, HA_ROLE_STAT, "ns"},        {"avg_ns", HA_REAL, HA_ROLE_STAT, "ns"},
      {"bandwidth_gbs", HA_REAL, HA_ROLE_STAT, "GB/s"}};
  if (st == HP_OK && hai_cols(res, cols, sizeof cols / sizeof cols[0])) st = HP_ERR_NOMEM;
  size_t rows = 0, lim = hai_limit(q, ND);
  for (size_t k = 0; st == HP_OK && k < ND && rows < lim; k++) {
    if (!n[k]) continue;
    uint8_t *fl;
    cell *row = hai_next_row(res, &fl, &st);
    if (!row) break;
    rows++;
    row[0].text = hai_intern(res, dirs[k]);
    row[1].i = n[k];
    row[2].i = (int64_t)bytes[k];
    row[3].i = timed[k];
    row[4].i = ns[k];
    row[5].num = timed[k] ? (double)ns[k] / (double)timed[k] : NAN;
    row[6].num = ns[k] ? (double)tbytes[k] / (double)ns[k] : NAN; /* bytes per ns = GB/s */
    if (!row[0].text) st = HP_ERR_NOMEM;
  }
  if (st == HP_OK && !rows &&
      hai_note(
          res,
          "no memory copies in this store: record them with 'hubprof trace --api' (or profile/sample --api)"))
    st = HP_ERR_NOMEM;
  return hai_hand_out(s, st, res, out);
}
