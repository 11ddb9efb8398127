/* The pass planner: packs requested counters into the fewest passes a device's limits allow (a total
 * per pass, per-block limits, per block instance for blocks with instances such as the L2 channels),
 * keeping the counters of one group (a metric's ratio partners) in one pass where they fit, a LEVEL
 * counter with its accumulator, and the one-line plan string the CLI hands to the collector (HUBPROF_PLAN).
 *
 * Method: every requested name is resolved to the hardware counter it occupies (a measurement: TCC_HIT for
 * TCC_HIT[3], TCC_HIT[*] and TCC_HIT_sum) and the block instances it takes; a LEVEL counter's measurement
 * carries its accumulator (two registers, one LEVEL per pass). Items are packed by first-fit decreasing
 * under three orders (size, tightness against the limits, scarcity of the blocks they use). Two ways to
 * make items are tried: groups sharing a counter joined into one unit (the shared counter measured once),
 * and every group its own item (a shared counter measured again in every pass that needs it); an item too
 * big for one pass is cut into pieces that each fit. The plan with the fewest passes, then the fewest split
 * groups, then the fewest repeated counters is kept. Every tie breaks on request order, so the same input
 * always gives the same plan. */
/* SPDX-License-Identifier: MIT */
#include "counters.h"

#include "../common/hu_buf.h"
#include "../common/hu_map.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pl_meas {
  const char *base;    /* the hardware counter */
  const char *block;   /* its block */
  long b;              /* index into the limits' blocks, -1 when the limits name no block */
  uint64_t *inst;      /* instances taken (bitmap), NULL for a block without instances */
  const char *acc;     /* a LEVEL counter's accumulator, else NULL */
  const char *accname; /* the name of the accumulator's value in the plan (SQ_LEVEL_WAVES_ACCUM) */
  const char *accblk;  /* the accumulator's block */
  long accb;           /* its index into the limits' blocks */
  int alone;           /* alone in its pass */
  size_t *names;       /* requested names measured by it, first request order */
  size_t nn, ncap;
} pl_meas;

typedef struct pl_name {
  const char *name;
  size_t m;             /* its measurement */
  long group;           /* first named group requesting it, -1 for none */
  unsigned first, last; /* instances it reads */
  int lone;             /* requested alone (outside a group) */
} pl_name;

typedef struct pl_group {
  const char *name;
  size_t *m; /* distinct measurements, request order */
  size_t nm, cap;
} pl_group;

typedef struct pl_item {
  size_t *m; /* measurements of this unit or piece */
  size_t nm, cap;
  unsigned *cnt; /* charge over the slots */
  size_t first;  /* smallest measurement index: the request-order key */
  long *serves;  /* groups it serves (all of a unit's, a group's own), -1 terminated */
  int alone;
} pl_item;

typedef struct planner {
  const hc_limits *lim;
  size_t nb;     /* blocks in the limits */
  size_t w;      /* slots: per block (one per instance when it has instances), total, LEVEL */
  size_t *off;   /* first slot of each block */
  unsigned *max; /* limit of each slot */
  pl_meas *ms;   /* measurements, first-appearance order */
  size_t nm, mcap;
  hu_strmap bases; /* base name -> measurement */
  pl_name *ns;     /* requested names */
  size_t nn, ncap;
  hu_strmap names;  /* name -> index into ns */
  unsigned *charge; /* nm * w: what each measurement takes */
  pl_group *gs;     /* named groups */
  size_t ng;
  pl_item *items;
  size_t ni, icap;
} planner;

/* One packing: the pass of each item and what came of it. */
typedef struct pl_result {
  pl_item *items; /* owned */
  size_t ni;
  unsigned char *in; /* npasses * nm: measurement m is measured in pass p */
  size_t npasses, nsplit, nrepeat;
} pl_result;

static int push(size_t **v, size_t *n, size_t *cap, size_t x) {
  if (hu_grow((void **)v, cap, *n + 1, sizeof **v)) return -1;
  (*v)[(*n)++] = x;
  return 0;
}

static unsigned block_instances(const planner *P, long b) {
  if (b < 0) return 1;
  unsigned n = P->lim->blocks[b].instances;
  return n > 1 ? n : 1;
}

/* Does `add` fit on top of `have` (both w long)? */
static int fits(const planner *P, const unsigned *have, const unsigned *add) {
  for (size_t s = 0; s < P->w; s++)
    if (add[s] && P->max[s] != HC_UNLIMITED && have[s] + add[s] > P->max[s]) return 0;
  return 1;
}

static void charge_add(const planner *P, unsigned *cnt, size_t m) {
  const unsigned *c = &P->charge[m * P->w];
  for (size_t s = 0; s < P->w; s++)
    cnt[s] += c[s];
}

/* What measurement m takes: a register in its block (in each instance it reads), one more in the
 * accumulator's block for a LEVEL counter, its share of the total, and the pass's one LEVEL slot. */
static void make_charge(planner *P, size_t m) {
  const pl_meas *M = &P->ms[m];
  unsigned *c = &P->charge[m * P->w];
  if (M->b >= 0) {
    unsigned ni = block_instances(P, M->b);
    if (M->inst) {
      for (unsigned i = 0; i < ni; i++)
        if (M->inst[i / 64] >> (i % 64) & 1) c[P->off[M->b] + i]++;
    } else {
      c[P->off[M->b]]++;
    }
  }
  c[P->w - 2]++;
  if (M->acc) {
    if (M->accb >= 0) {
      unsigned ni = block_instances(P, M->accb);
      for (unsigned i = 0; i < ni; i++)
        c[P->off[M->accb] + i]++;
    }
    c[P->w - 2]++;
    c[P->w - 1]++;
  }
}

/* ---- items ---- */

static pl_item *new_item(planner *P, pl_item **items, size_t *ni, size_t *icap) {
  (void)P;
  if (hu_grow((void **)items, icap, *ni + 1, sizeof **items)) return NULL;
  pl_item *it = &(*items)[*ni];
  memset(it, 0, sizeof *it);
  if (!(it->cnt = calloc(P->w, sizeof *it->cnt))) return NULL;
  it->first = SIZE_MAX;
  (*ni)++;
  return it;
}

static int item_add(planner *P, pl_item *it, size_t m) {
  if (push(&it->m, &it->nm, &it->cap, m)) return -1;
  charge_add(P, it->cnt, m);
  if (m < it->first) it->first = m;
  it->alone |= P->ms[m].alone;
  return 0;
}

static int item_serves(pl_item *it, const size_t *g, size_t ng) {
  if (!(it->serves = malloc((ng + 1) * sizeof *it->serves))) return -1;
  for (size_t k = 0; k < ng; k++)
    it->serves[k] = (long)g[k];
  it->serves[ng] = -1;
  return 0;
}

static void items_free(pl_item *items, size_t ni) {
  for (size_t i = 0; i < ni; i++) {
    free(items[i].m);
    free(items[i].cnt);
    free(items[i].serves);
  }
  free(items);
}

static int by_index(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

static size_t uf_find(size_t *up, size_t x) {
  while (up[x] != x)
    x = up[x] = up[up[x]];
  return x;
}

static int by_group_size(const void *a, const void *b, void *ctx) {
  const pl_group *gs = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (gs[x].nm != gs[y].nm) return gs[x].nm > gs[y].nm ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* Does a set of measurements fit one empty pass? An alone measurement fits only by itself. */
static int fits_empty(planner *P, const size_t *m, size_t n, unsigned *tmp) {
  memset(tmp, 0, P->w * sizeof *tmp);
  int alone = 0;
  for (size_t k = 0; k < n; k++) {
    charge_add(P, tmp, m[k]);
    alone |= P->ms[m[k]].alone;
  }
  unsigned *zero = tmp + P->w;
  memset(zero, 0, P->w * sizeof *zero);
  return fits(P, zero, tmp) && (!alone || n == 1);
}

/* Cut a unit too big for one pass (`ug`: its groups) into pieces that each fit: groups largest first,
 * each whole into the piece that already holds its measurements or the first with room, else measurement
 * by measurement into the first piece with room. Every piece serves the unit's groups. */
static int cut_unit(planner *P, pl_item **items, size_t *ni, size_t *icap, size_t *ug, size_t nug,
                    long *piece_of) {
  size_t first_piece = *ni;
  unsigned *add = calloc(2 * P->w, sizeof *add), *one = calloc(2 * P->w, sizeof *one);
  size_t *fresh = malloc((P->nm ? P->nm : 1) * sizeof *fresh);
  int rc = (!add || !fresh || !one) ? -1 : 0;
  qsort_r(ug, nug, sizeof *ug, by_group_size, P->gs);
  for (size_t gi = 0; rc == 0 && gi < nug; gi++) {
    const pl_group *g = &P->gs[ug[gi]];
    size_t nf = 0;
    long home = -2; /* the one piece holding its placed measurements, -2 none yet, -3 several */
    for (size_t k = 0; k < g->nm; k++) {
      long pc = piece_of[g->m[k]];
      if (pc < 0)
        fresh[nf++] = g->m[k];
      else if (home == -2 || home == pc)
        home = pc;
      else
        home = -3;
    }
    if (!nf) continue;
    memset(add, 0, P->w * sizeof *add);
    int alone = 0;
    for (size_t k = 0; k < nf; k++) {
      charge_add(P, add, fresh[k]);
      alone |= P->ms[fresh[k]].alone;
    }
    long to = -1;
    if (!alone && home >= 0) {
      if (!(*items)[home].alone && fits(P, (*items)[home].cnt, add)) to = home;
    } else if (!alone && home == -2) {
      for (size_t p = first_piece; p < *ni && to < 0; p++)
        if (!(*items)[p].alone && fits(P, (*items)[p].cnt, add)) to = (long)p;
      if (to < 0 && fits_empty(P, fresh, nf, one)) {
        if (!new_item(P, items, ni, icap)) rc = -1;
        to = (long)*ni - 1;
      }
    }
    for (size_t k = 0; rc == 0 && k < nf; k++) {
      long dst = to;
      if (dst < 0) { /* measurement by measurement */
        memset(one, 0, P->w * sizeof *one);
        charge_add(P, one, fresh[k]);
        for (size_t p = first_piece; !P->ms[fresh[k]].alone && p < *ni && dst < 0; p++)
          if (!(*items)[p].alone && fits(P, (*items)[p].cnt, one)) dst = (long)p;
        if (dst < 0) {
          if (!new_item(P, items, ni, icap)) {
            rc = -1;
            break;
          }
          dst = (long)*ni - 1;
        }
      }
      if (item_add(P, &(*items)[dst], fresh[k])) rc = -1;
      piece_of[fresh[k]] = dst;
    }
  }
  for (size_t p = first_piece; rc == 0 && p < *ni; p++)
    rc = item_serves(&(*items)[p], ug, nug);
  free(add);
  free(one);
  free(fresh);
  return rc;
}

/* Is measurement m cheap to measure again: do its blocks have room for it in about every pass? Its block's
 * (and its accumulator's) demand at most half of what `lb` passes hold. */
static int replicable(const planner *P, size_t m, const double *demand, size_t lb) {
  const unsigned *c = &P->charge[m * P->w];
  for (size_t s = 0; s + 1 < P->w; s++)
    if (c[s] && P->max[s] != HC_UNLIMITED && demand[s] * 2 > (double)P->max[s] * (double)lb) return 0;
  return !c[P->w - 1]; /* a LEVEL counter never */
}

/* Items: groups joined into units where they share a measurement that joins (strategy 0: every shared
 * measurement; 1: none, every group its own item; 2: only those not cheap to measure again), a unit too
 * big for one pass cut into pieces; lone measurements that no group holds are items of their own. */
static int make_items(planner *P, int strategy, pl_item **items, size_t *ni) {
  size_t icap = 0, n = P->nm ? P->nm : 1, ng = P->ng ? P->ng : 1;
  size_t *up = malloc(ng * sizeof *up), *uc = malloc(n * sizeof *uc), *ug = malloc(ng * sizeof *ug);
  long *owner = malloc(n * sizeof *owner), *piece_of = malloc(n * sizeof *piece_of);
  unsigned *tmp = calloc(2 * P->w, sizeof *tmp);
  unsigned char *done = calloc(ng, 1), *in_group = calloc(n, 1), *inunit = calloc(n, 1),
                *joins = calloc(n, 1);
  double *demand = calloc(P->w, sizeof *demand);
  int rc =
      (!up || !uc || !ug || !owner || !piece_of || !tmp || !done || !in_group || !inunit || !joins || !demand)
          ? -1
          : 0;
  *items = NULL;
  *ni = 0;
  size_t lb = 1;
  for (size_t m = 0; rc == 0 && m < P->nm; m++)
    for (size_t s = 0; s < P->w; s++)
      demand[s] += P->charge[m * P->w + s];
  for (size_t s = 0; rc == 0 && s < P->w; s++)
    if (P->max[s] != HC_UNLIMITED && demand[s] > 0) {
      size_t need = (size_t)((demand[s] + P->max[s] - 1) / P->max[s]);
      if (need > lb) lb = need;
    }
  for (size_t m = 0; rc == 0 && m < P->nm; m++) {
    owner[m] = -1;
    piece_of[m] = -1;
    joins[m] = strategy == 0 || (strategy == 2 && !replicable(P, m, demand, lb));
  }
  for (size_t g = 0; rc == 0 && g < P->ng; g++)
    up[g] = g;
  /* join groups through a shared measurement that joins; the root is the earliest group */
  for (size_t g = 0; rc == 0 && g < P->ng; g++)
    for (size_t k = 0; k < P->gs[g].nm; k++) {
      size_t m = P->gs[g].m[k];
      in_group[m] = 1;
      if (!joins[m]) continue;
      if (owner[m] < 0) {
        owner[m] = (long)g;
        continue;
      }
      size_t a = uf_find(up, (size_t)owner[m]), b = uf_find(up, g);
      if (a != b) up[a > b ? a : b] = a < b ? a : b;
    }
  for (size_t g0 = 0; rc == 0 && g0 < P->ng; g0++) {
    if (done[g0]) continue;
    size_t root = uf_find(up, g0), nuc = 0, nug = 0;
    for (size_t g = g0; g < P->ng; g++)
      if (!done[g] && uf_find(up, g) == root) {
        ug[nug++] = g;
        done[g] = 1;
        for (size_t k = 0; k < P->gs[g].nm; k++)
          if (!inunit[P->gs[g].m[k]]) {
            inunit[P->gs[g].m[k]] = 1;
            uc[nuc++] = P->gs[g].m[k];
          }
      }
    for (size_t k = 0; k < nuc; k++) { /* a measurement may be in several units: fresh state per unit */
      inunit[uc[k]] = 0;
      piece_of[uc[k]] = -1;
    }
    qsort(uc, nuc, sizeof *uc, by_index);
    if (fits_empty(P, uc, nuc, tmp)) {
      pl_item *it = new_item(P, items, ni, &icap);
      for (size_t k = 0; it && k < nuc && rc == 0; k++)
        rc = item_add(P, it, uc[k]);
      if (!it || (rc == 0 && item_serves(it, ug, nug))) rc = -1;
    } else {
      rc = cut_unit(P, items, ni, &icap, ug, nug, piece_of);
    }
  }
  for (size_t m = 0; rc == 0 && m < P->nm; m++) { /* lone measurements no group holds */
    if (in_group[m]) continue;
    pl_item *it = new_item(P, items, ni, &icap);
    if (!it || item_add(P, it, m) || item_serves(it, ug, 0)) rc = -1;
  }
  free(up);
  free(uc);
  free(ug);
  free(owner);
  free(piece_of);
  free(tmp);
  free(done);
  free(in_group);
  free(inunit);
  free(joins);
  free(demand);
  return rc;
}

/* ---- first-fit decreasing under one order ---- */

typedef struct pl_key {
  double k[3];
  size_t first, item;
} pl_key;

static int by_key(const void *a, const void *b) {
  const pl_key *x = a, *y = b;
  for (int i = 0; i < 3; i++)
    if (x->k[i] != y->k[i]) return x->k[i] > y->k[i] ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* Pack the items in `order`: an item's measurements already in a pass cost nothing there. pass_of[item]
 * set; returns the number of passes or (size_t)-1. */
static size_t first_fit(planner *P, const pl_item *items, size_t ni, const pl_key *order, size_t *pass_of) {
  size_t np = 0, cap = 0, w = P->w;
  unsigned *passes = NULL, *add = malloc(w * sizeof *add);
  unsigned char *has = NULL, *alone = NULL; /* np * nm: measurement in pass; np: pass closed */
  if (!add) return (size_t)-1;
  size_t rc = 0;
  for (size_t i = 0; i < ni; i++) {
    const pl_item *it = &items[order[i].item];
    size_t p = 0;
    for (; p < np; p++) {
      if (alone[p] || (it->alone && memchr(&has[p * P->nm], 1, P->nm))) continue;
      memset(add, 0, w * sizeof *add);
      for (size_t k = 0; k < it->nm; k++)
        if (!has[p * P->nm + it->m[k]]) charge_add(P, add, it->m[k]);
      if (fits(P, &passes[p * w], add)) break;
    }
    if (p == np) {
      if (np == cap) {
        size_t nc = cap ? 2 * cap : 8;
        unsigned *nv = realloc(passes, nc * w * sizeof *nv);
        unsigned char *nh = nv ? realloc(has, nc * (P->nm ? P->nm : 1)) : NULL;
        unsigned char *na = nh ? realloc(alone, nc) : NULL;
        if (nv) passes = nv;
        if (nh) has = nh;
        if (na) alone = na;
        if (!na) {
          rc = (size_t)-1;
          break;
        }
        cap = nc;
      }
      memset(&passes[np * w], 0, w * sizeof *passes);
      memset(&has[np * P->nm], 0, P->nm);
      alone[np] = 0;
      np++;
    }
    for (size_t k = 0; k < it->nm; k++)
      if (!has[p * P->nm + it->m[k]]) {
        charge_add(P, &passes[p * w], it->m[k]);
        has[p * P->nm + it->m[k]] = 1;
      }
    alone[p] |= (unsigned char)it->alone;
    pass_of[order[i].item] = p;
  }
  free(passes);
  free(has);
  free(alone);
  free(add);
  return rc ? rc : np;
}

/* Is group g whole in pass p of the matrix `in` (np * nm)? */
static int whole_in(const planner *P, const unsigned char *in, size_t p, size_t g) {
  for (size_t k = 0; k < P->gs[g].nm; k++)
    if (!in[p * P->nm + P->gs[g].m[k]]) return 0;
  return 1;
}

/* Make split groups whole where the limits allow: copy the measurements a group misses into the pass that
 * needs the fewest copies and has room for them (a counter shared by groups measured again there). Groups
 * in request order; passes holding an alone measurement take nothing. */
static int repair(planner *P, unsigned char *in, size_t np) {
  size_t w = P->w, nm = P->nm;
  unsigned *use = calloc(np * w + w, sizeof *use), *add = use ? use + np * w : NULL;
  unsigned char *closed = calloc(np ? np : 1, 1);
  if (!use || !closed) {
    free(use);
    free(closed);
    return -1;
  }
  for (size_t p = 0; p < np; p++)
    for (size_t m = 0; m < nm; m++)
      if (in[p * nm + m]) {
        charge_add(P, &use[p * w], m);
        closed[p] |= (unsigned char)P->ms[m].alone;
      }
  for (size_t g = 0; g < P->ng; g++) {
    const pl_group *G = &P->gs[g];
    int whole = 0, alone = 0;
    for (size_t p = 0; p < np && !whole; p++)
      whole = whole_in(P, in, p, g);
    for (size_t k = 0; k < G->nm; k++)
      alone |= P->ms[G->m[k]].alone;
    if (whole || alone) continue;
    size_t best = SIZE_MAX, best_miss = SIZE_MAX;
    for (size_t p = 0; p < np; p++) {
      if (closed[p]) continue;
      size_t miss = 0;
      memset(add, 0, w * sizeof *add);
      for (size_t k = 0; k < G->nm; k++)
        if (!in[p * nm + G->m[k]]) {
          miss++;
          charge_add(P, add, G->m[k]);
        }
      if (miss < best_miss && miss < G->nm && fits(P, &use[p * w], add)) {
        best = p;
        best_miss = miss;
      }
    }
    if (best == SIZE_MAX) continue;
    for (size_t k = 0; k < G->nm; k++)
      if (!in[best * nm + G->m[k]]) {
        in[best * nm + G->m[k]] = 1;
        charge_add(P, &use[best * w], G->m[k]);
      }
  }
  free(use);
  free(closed);
  return 0;
}

/* Split groups (whole in no pass) and repeated measurements (in more than one pass) of a matrix. */
static void score(const planner *P, const unsigned char *in, size_t np, size_t *nsplit, size_t *nrepeat) {
  *nsplit = *nrepeat = 0;
  for (size_t g = 0; g < P->ng; g++) {
    int whole = 0;
    for (size_t p = 0; p < np && !whole; p++)
      whole = whole_in(P, in, p, g);
    *nsplit += !whole;
  }
  for (size_t m = 0; m < P->nm; m++) {
    size_t c = 0;
    for (size_t p = 0; p < np; p++)
      c += in[p * P->nm + m];
    if (c > 1) *nrepeat += c - 1;
  }
}

/* Pack items under three orders, make split groups whole where there is room; keep the fewest passes,
 * then the fewest split groups, then the fewest repeated measurements. */
static int pack(planner *P, pl_item *items, size_t ni, pl_result *best) {
  size_t w = P->w, nm = P->nm ? P->nm : 1;
  double *demand = calloc(w, sizeof *demand);
  pl_key *keys = malloc((ni ? ni : 1) * sizeof *keys);
  size_t *pass_of = malloc((ni ? ni : 1) * sizeof *pass_of);
  int rc = (!demand || !keys || !pass_of) ? -1 : 0;
  best->items = items;
  best->ni = ni;
  best->npasses = SIZE_MAX;
  best->in = NULL;
  for (size_t i = 0; rc == 0 && i < ni; i++)
    for (size_t s = 0; s < w; s++)
      demand[s] += items[i].cnt[s];
  for (int order = 0; rc == 0 && order < 3; order++) {
    for (size_t i = 0; i < ni; i++) {
      const pl_item *it = &items[i];
      double tight = 0, scarce = 0;
      for (size_t s = 0; s < w; s++) {
        unsigned m = P->max[s];
        if (!it->cnt[s] || m == HC_UNLIMITED) continue;
        if ((double)it->cnt[s] / m > tight) tight = (double)it->cnt[s] / m;
        if (demand[s] / m > scarce) scarce = demand[s] / m;
      }
      double size = (double)it->nm + (it->alone ? 1e6 : 0);
      pl_key *k = &keys[i];
      k->first = it->first;
      k->item = i;
      if (order == 0) {
        k->k[0] = size, k->k[1] = tight, k->k[2] = scarce;
      } else if (order == 1) {
        k->k[0] = tight, k->k[1] = size, k->k[2] = scarce;
      } else {
        k->k[0] = scarce, k->k[1] = tight, k->k[2] = size;
      }
    }
    qsort(keys, ni, sizeof *keys, by_key);
    size_t np = first_fit(P, items, ni, keys, pass_of);
    unsigned char *in = np == (size_t)-1 ? NULL : calloc(np ? np * nm : 1, 1);
    if (!in) {
      rc = -1;
      break;
    }
    for (size_t i = 0; i < ni; i++)
      for (size_t k = 0; k < items[i].nm; k++)
        in[pass_of[i] * nm + items[i].m[k]] = 1;
    size_t nsplit, nrepeat;
    if (repair(P, in, np)) {
      free(in);
      rc = -1;
      break;
    }
    score(P, in, np, &nsplit, &nrepeat);
    if (np < best->npasses || (np == best->npasses && (nsplit < best->nsplit || (nsplit == best->nsplit &&
                                                                                 nrepeat < best->nrepeat)))) {
      free(best->in);
      best->in = in;
      best->npasses = np;
      best->nsplit = nsplit;
      best->nrepeat = nrepeat;
    } else {
      free(in);
    }
  }
  if (!ni) best->npasses = best->nsplit = best->nrepeat = 0;
  free(demand);
  free(keys);
  free(pass_of);
  return rc;
}

/* ---- the plan object ---- */

typedef struct plan_impl {
  hc_plan pub;
  char *arena;
  char error[HC_ERROR_MAX]; /* a plan that explains a failure: why (hc_plan_error) */
} plan_impl;

static plan_impl *plan_alloc(size_t n, size_t nsplit, size_t arena) {
  plan_impl *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  q->pub.names = calloc(n ? n : 1, sizeof *q->pub.names);
  q->pub.blocks = calloc(n ? n : 1, sizeof *q->pub.blocks);
  q->pub.groups = calloc(n ? n : 1, sizeof *q->pub.groups);
  q->pub.level_of = calloc(n ? n : 1, sizeof *q->pub.level_of);
  q->pub.pass = calloc(n ? n : 1, sizeof *q->pub.pass);
  q->pub.split_groups = calloc(nsplit + 1, sizeof *q->pub.split_groups);
  q->pub.split_passes = calloc(nsplit + 1, sizeof *q->pub.split_passes);
  q->pub.split_counters = calloc(nsplit + 1, sizeof *q->pub.split_counters);
  q->arena = malloc(arena ? arena : 1);
  if (!q->pub.names || !q->pub.blocks || !q->pub.groups || !q->pub.level_of || !q->pub.pass ||
      !q->pub.split_groups || !q->pub.split_passes || !q->pub.split_counters || !q->arena) {
    hc_plan_free(&q->pub);
    return NULL;
  }
  return q;
}

hc_plan *hc_plan_failed(const char *msg) {
  plan_impl *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  snprintf(q->error, sizeof q->error, "%s", msg && msg[0] ? msg : "out of memory");
  return &q->pub;
}

const char *hc_plan_error(const hc_plan *p) { return p ? ((const plan_impl *)p)->error : "out of memory"; }

void hc_plan_free(hc_plan *p) {
  if (!p) return;
  plan_impl *q = (plan_impl *)p;
  free(p->names);
  free(p->blocks);
  free(p->groups);
  free(p->level_of);
  free(p->pass);
  free(p->split_groups);
  free(p->split_passes);
  free(p->split_counters);
  free(p->pass_regs);
  free(q->arena);
  free(q);
}

static char *arena_put(char **at, const char *s) {
  char *r = *at;
  size_t l = strlen(s) + 1;
  memcpy(r, s, l);
  *at += l;
  return r;
}

static hc_status build_plan(planner *P, const pl_result *R, hc_plan **out) {
  size_t np = R->npasses, nm = P->nm ? P->nm : 1;
  const unsigned char *in = R->in;
  /* a group is whole when one pass holds all of it; a split group's passes: those holding its counters */
  unsigned char *gp = calloc((P->ng ? P->ng : 1) * (np ? np : 1), 1);
  hu_buf text = {0};
  if (!gp) return HC_ERR_NOMEM;
  for (size_t g = 0; g < P->ng; g++) {
    int whole = 0;
    for (size_t p = 0; p < np && !whole; p++)
      whole = whole_in(P, in, p, g);
    for (size_t p = 0; !whole && p < np; p++)
      for (size_t k = 0; k < P->gs[g].nm; k++)
        if (in[p * nm + P->gs[g].m[k]]) gp[g * np + p] = 1;
  }
  /* entries: per pass, measurements in first-request order, their names, then a LEVEL's accumulator */
  size_t ne = 0, nsplit = 0, arena = 0;
  for (size_t p = 0; p < np; p++)
    for (size_t m = 0; m < P->nm; m++)
      if (in[p * nm + m]) ne += P->ms[m].nn + (P->ms[m].acc != NULL) * 2;
  for (size_t g = 0; g < P->ng; g++) {
    size_t c = 0;
    for (size_t p = 0; p < np; p++)
      c += gp[g * np + p];
    if (c > 1) nsplit++;
    arena += strlen(P->gs[g].name) + 1 + 12 * c;
    if (c > 1)
      for (size_t k = 0; k < P->gs[g].nm; k++)
        arena += strlen(P->ns[P->ms[P->gs[g].m[k]].names[0]].name) + 3 + 12 * np;
  }
  for (size_t i = 0; i < P->nn; i++)
    arena += strlen(P->ns[i].name) + 1;
  for (size_t m = 0; m < P->nm; m++)
    arena +=
        strlen(P->ms[m].block) + 1 +
        (P->ms[m].acc ? strlen(P->ms[m].accname) + strlen(P->ms[m].accblk) + strlen(P->ms[m].base) + 3 : 0);
  plan_impl *q = plan_alloc(ne, nsplit, arena);
  if (!q) {
    free(gp);
    return HC_ERR_NOMEM;
  }
  char *at = q->arena;
  const char **gname = malloc((P->ng ? P->ng : 1) * sizeof *gname);
  const char **nname = malloc((P->nn ? P->nn : 1) * sizeof *nname);
  const char **mblk = malloc(nm * sizeof *mblk), **macc = malloc(nm * sizeof *macc),
             **maccb = malloc(nm * sizeof *maccb);
  const char **mbase = malloc(nm * sizeof *mbase);
  hc_status st = gname && nname && mblk && macc && maccb && mbase ? HC_OK : HC_ERR_NOMEM;
  for (size_t g = 0, s = 0; st == HC_OK && g < P->ng; g++) {
    gname[g] = arena_put(&at, P->gs[g].name);
    size_t c = 0;
    for (size_t p = 0; p < np; p++)
      c += gp[g * np + p];
    if (c < 2) continue;
    q->pub.split_groups[s] = (char *)gname[g];
    q->pub.split_passes[s] = at;
    for (size_t p = 0, k = 0; p < np; p++)
      if (gp[g * np + p]) at += sprintf(at, "%s%zu", k++ ? ", " : "", p + 1);
    at++;
    q->pub.split_counters[s] = at;
    for (size_t k = 0; k < P->gs[g].nm; k++) {
      size_t m = P->gs[g].m[k];
      at += sprintf(at, "%s%s:", k ? " " : "", P->ns[P->ms[m].names[0]].name);
      for (size_t p = 0, j = 0; p < np; p++)
        if (in[p * nm + m]) at += sprintf(at, "%s%zu", j++ ? "," : "", p + 1);
    }
    at++;
    s++;
  }
  for (size_t i = 0; st == HC_OK && i < P->nn; i++)
    nname[i] = arena_put(&at, P->ns[i].name);
  for (size_t m = 0; st == HC_OK && m < P->nm; m++) {
    mblk[m] = arena_put(&at, P->ms[m].block);
    macc[m] = P->ms[m].acc ? arena_put(&at, P->ms[m].accname) : NULL;
    mbase[m] = P->ms[m].acc ? arena_put(&at, P->ms[m].base) : NULL;
    maccb[m] = P->ms[m].acc ? arena_put(&at, P->ms[m].accblk) : NULL;
  }
  size_t e = 0;
  for (size_t p = 0; st == HC_OK && p < np; p++)
    for (size_t m = 0; m < P->nm; m++) {
      if (!in[p * nm + m]) continue;
      const pl_meas *M = &P->ms[m];
      if (M->acc) { /* a LEVEL counter, then its accumulator: under the names that say what they hold */
        const pl_name *N = &P->ns[M->names[0]];
        q->pub.names[e] = mbase[m];
        q->pub.blocks[e] = mblk[m];
        q->pub.groups[e] = N->group >= 0 ? gname[N->group] : NULL;
        q->pub.pass[e++] = (unsigned)p + 1;
        q->pub.names[e] = macc[m];
        q->pub.blocks[e] = maccb[m];
        q->pub.level_of[e] = q->pub.names[e - 1];
        q->pub.groups[e] = q->pub.groups[e - 1];
        q->pub.pass[e++] = (unsigned)p + 1;
        continue;
      }
      for (size_t k = 0; k < M->nn; k++) {
        const pl_name *N = &P->ns[M->names[k]];
        q->pub.names[e] = nname[M->names[k]];
        q->pub.blocks[e] = mblk[m];
        q->pub.groups[e] = N->group >= 0 ? gname[N->group] : NULL;
        q->pub.pass[e++] = (unsigned)p + 1;
      }
    }
  q->pub.ncounters = e;
  q->pub.npasses = np;
  q->pub.nrepeated = R->nrepeat;
  /* the lower bound: every measurement in some pass, so each slot needs ceil(demand / limit) passes */
  size_t lb = np ? 1 : 0;
  for (size_t s = 0; s < P->w; s++) {
    size_t d = 0;
    for (size_t m = 0; m < P->nm; m++)
      d += P->charge[m * P->w + s];
    if (d && P->max[s] != HC_UNLIMITED && (d + P->max[s] - 1) / P->max[s] > lb)
      lb = (d + P->max[s] - 1) / P->max[s];
  }
  q->pub.lower_bound = lb;
  /* registers per pass and block: the busiest slot of the block */
  unsigned *use = calloc(P->w, sizeof *use);
  q->pub.nblocks = P->nb;
  size_t nregs = np * P->nb;
  q->pub.pass_regs = calloc(nregs ? nregs : 1, sizeof *q->pub.pass_regs);
  if (!use || !q->pub.pass_regs) st = HC_ERR_NOMEM;
  for (size_t p = 0; st == HC_OK && p < np; p++) {
    memset(use, 0, P->w * sizeof *use);
    for (size_t m = 0; m < P->nm; m++)
      if (in[p * nm + m]) charge_add(P, use, m);
    for (size_t b = 0; b < P->nb; b++)
      for (unsigned i = 0; i < block_instances(P, (long)b); i++)
        if (use[P->off[b] + i] > q->pub.pass_regs[p * P->nb + b])
          q->pub.pass_regs[p * P->nb + b] = use[P->off[b] + i];
  }
  free(use);
  (void)text;
  free(gname);
  free(nname);
  free(mblk);
  free(macc);
  free(maccb);
  free(mbase);
  free(gp);
  if (st != HC_OK) {
    hc_plan_free(&q->pub);
    return st;
  }
  *out = &q->pub;
  return HC_OK;
}

static void planner_free(planner *P) {
  for (size_t m = 0; m < P->nm; m++) {
    free(P->ms[m].inst);
    free(P->ms[m].names);
  }
  free(P->ms);
  free(P->ns);
  hu_strmap_free(&P->bases);
  hu_strmap_free(&P->names);
  free(P->charge);
  free(P->off);
  free(P->max);
  for (size_t g = 0; g < P->ng; g++)
    free(P->gs[g].m);
  free(P->gs);
}

#define PL_ERR(st_, ...)                                                                                     \
  do {                                                                                                       \
    snprintf(err, sizeof err, __VA_ARGS__);                                                                  \
    st = (st_);                                                                                              \
    goto out;                                                                                                \
  } while (0)

typedef struct need_ctx {
  const char *(*block_of)(const char *counter, void *ctx);
  void *ctx;
} need_ctx;

/* The need of a counter name: the provider's own (channels, LEVEL partners, derived counters) when
 * block_of is hc_provider_block_of, else its block alone. */
static hc_status need_of(const need_ctx *c, const char *name, hc_counter_need *o) {
  if (c->block_of == hc_provider_block_of) return hc_provider_need(c->ctx, name, o);
  memset(o, 0, sizeof *o);
  o->block = c->block_of ? c->block_of(name, c->ctx) : "";
  o->base = name;
  return o->block ? HC_OK : HC_ERR_UNKNOWN;
}

static long block_index(const hc_limits *lim, const char *b) {
  for (size_t i = 0; i < lim->nblocks; i++)
    if (strcmp(lim->blocks[i].block, b) == 0) return (long)i;
  return -1;
}

hc_status hc_plan_make(const hc_request *req, size_t nreq, const hc_limits *lim,
                       const char *(*block_of)(const char *counter, void *ctx), void *ctx, hc_plan **out) {
  if (!out) return HC_ERR_INVALID;
  *out = NULL;
  if (nreq && !req) {
    *out = hc_plan_failed("no requests");
    return HC_ERR_INVALID;
  }
  static const hc_limits none; /* no limits at all */
  if (!lim) lim = &none;
  if (!block_of && lim->nblocks) {
    *out = hc_plan_failed("block_of is needed when the limits name blocks");
    return HC_ERR_INVALID;
  }
  char err[HC_ERROR_MAX] = ""; /* the failure's message, given to the plan that explains it */
  hc_status st = HC_OK;
  planner P = {.lim = lim, .nb = lim->nblocks};
  pl_result R[3] = {{0}, {0}, {0}};
  need_ctx nc = {block_of, ctx};
  if (P.nb > sizeof lim->blocks / sizeof lim->blocks[0])
    PL_ERR(HC_ERR_INVALID, "limits with %zu blocks", P.nb);
  const char *dev = lim->device[0] ? lim->device : "this device";
  /* slots: one per block (per instance where it has instances), the total, the LEVEL slot */
  if (!(P.off = calloc(P.nb + 1, sizeof *P.off))) PL_ERR(HC_ERR_NOMEM, "out of memory");
  for (size_t b = 0; b < P.nb; b++) {
    P.off[b] = P.w;
    P.w += block_instances(&P, (long)b);
  }
  P.w += 2;
  if (!(P.max = malloc(P.w * sizeof *P.max))) PL_ERR(HC_ERR_NOMEM, "out of memory");
  for (size_t b = 0; b < P.nb; b++)
    for (unsigned i = 0; i < block_instances(&P, (long)b); i++)
      P.max[P.off[b] + i] = lim->blocks[b].max;
  P.max[P.w - 2] = lim->max_per_pass ? lim->max_per_pass : HC_UNLIMITED;
  P.max[P.w - 1] = 1;
  /* named groups, merged by name, in request order */
  P.gs = calloc(nreq ? nreq : 1, sizeof *P.gs);
  if (!P.gs) PL_ERR(HC_ERR_NOMEM, "out of memory");
  for (size_t r = 0; r < nreq; r++) {
    const hc_request *q = &req[r];
    if (!q->ncounters || !q->counters)
      PL_ERR(HC_ERR_INVALID, "request %zu%s%s%s has no counters", r + 1, q->group ? " (group '" : "",
             q->group ? q->group : "", q->group ? "')" : "");
    long g = -1;
    if (q->group) {
      if (!*q->group) PL_ERR(HC_ERR_INVALID, "request %zu: empty group name", r + 1);
      for (size_t k = 0; k < P.ng && g < 0; k++)
        if (strcmp(P.gs[k].name, q->group) == 0) g = (long)k;
      if (g < 0) {
        g = (long)P.ng;
        P.gs[P.ng++].name = q->group;
      }
    }
    /* an accumulator named in a request belongs to the one LEVEL counter of that request */
    const char *acc_named = NULL, *levels[3] = {0};
    size_t nlevels = 0;
    for (size_t k = 0; k < q->ncounters; k++) {
      const char *name = q->counters[k];
      if (!name || !*name) PL_ERR(HC_ERR_INVALID, "request %zu: empty counter name", r + 1);
      hc_counter_need nd;
      hc_status s = need_of(&nc, name, &nd);
      if (s == HC_ERR_UNKNOWN) PL_ERR(HC_ERR_UNKNOWN, "unknown counter '%s'", name);
      if (s != HC_OK)
        PL_ERR(s, "%s", block_of == hc_provider_block_of ? hc_provider_error(ctx) : "invalid counter");
      if (nd.is_accumulator) {
        acc_named = name;
        continue;
      }
      if (nd.accumulator) {
        int seen = 0;
        for (size_t j = 0; j < nlevels && j < 3; j++)
          seen |= strcmp(levels[j], nd.base) == 0;
        if (!seen && nlevels < 3) levels[nlevels] = nd.base;
        if (!seen) nlevels++;
      }
      long b = -1, ab = -1;
      if (P.nb) {
        b = block_index(lim, nd.block);
        if (b < 0)
          PL_ERR(HC_ERR_IMPOSSIBLE,
                 "counter '%s' is in block '%s', for which %s has no limit (cannot be measured)", name,
                 nd.block, dev);
        if (lim->blocks[b].max == 0)
          PL_ERR(HC_ERR_IMPOSSIBLE,
                 "counter '%s' cannot be measured: block '%s' allows 0 counters per pass on %s", name,
                 nd.block, dev);
      }
      const char *accblk = "";
      if (nd.accumulator) {
        hc_counter_need na;
        if (need_of(&nc, nd.accumulator, &na) != HC_OK)
          PL_ERR(HC_ERR_UNKNOWN, "LEVEL counter '%s': unknown accumulator '%s'", name, nd.accumulator);
        accblk = na.block;
        if (P.nb && ((ab = block_index(lim, na.block)) < 0 || lim->blocks[ab].max == 0))
          PL_ERR(HC_ERR_IMPOSSIBLE, "LEVEL counter '%s': its accumulator '%s' cannot be measured on %s", name,
                 nd.accumulator, dev);
      }
      int added;
      long mi = hu_strmap_intern(&P.bases, nd.base, &added);
      if (mi < 0) PL_ERR(HC_ERR_NOMEM, "out of memory");
      if (added) {
        if (hu_grow((void **)&P.ms, &P.mcap, P.nm + 1, sizeof *P.ms)) PL_ERR(HC_ERR_NOMEM, "out of memory");
        pl_meas *M = &P.ms[P.nm++];
        memset(M, 0, sizeof *M);
        M->base = hu_strmap_str(&P.bases, (size_t)mi);
        M->block = nd.block;
        M->b = b;
        M->acc = nd.accumulator;
        M->accname = nd.accumulated ? nd.accumulated : nd.accumulator;
        M->accblk = accblk;
        M->accb = ab;
        M->alone = nd.alone;
        unsigned ni = block_instances(&P, b);
        if (ni > 1 && !(M->inst = calloc((ni + 63) / 64, sizeof *M->inst)))
          PL_ERR(HC_ERR_NOMEM, "out of memory");
      }
      pl_meas *M = &P.ms[mi];
      unsigned ni = block_instances(&P, b);
      for (unsigned i = nd.first; M->inst && i <= nd.last && i < ni; i++)
        M->inst[i / 64] |= 1ull << (i % 64);
      long ki = hu_strmap_intern(&P.names, name, &added);
      if (ki < 0) PL_ERR(HC_ERR_NOMEM, "out of memory");
      if (added) {
        if (hu_grow((void **)&P.ns, &P.ncap, P.nn + 1, sizeof *P.ns)) PL_ERR(HC_ERR_NOMEM, "out of memory");
        P.ns[P.nn++] = (pl_name){.name = hu_strmap_str(&P.names, (size_t)ki),
                                 .m = (size_t)mi,
                                 .group = -1,
                                 .first = nd.first,
                                 .last = nd.last};
        if (push(&M->names, &M->nn, &M->ncap, (size_t)ki)) PL_ERR(HC_ERR_NOMEM, "out of memory");
      }
      if (g >= 0) {
        pl_group *G = &P.gs[g];
        size_t j = 0;
        while (j < G->nm && G->m[j] != (size_t)mi)
          j++;
        if (j == G->nm && push(&G->m, &G->nm, &G->cap, (size_t)mi)) PL_ERR(HC_ERR_NOMEM, "out of memory");
        if (P.ns[ki].group < 0) P.ns[ki].group = g;
      } else {
        P.ns[ki].lone = 1;
      }
    }
    if (acc_named && nlevels != 1) {
      char who[200];
      snprintf(who, sizeof who, q->group ? "group '%s'" : "the counters requested alone%s",
               q->group ? q->group : "");
      if (!nlevels)
        PL_ERR(
            HC_ERR_IMPOSSIBLE,
            "%s: accumulator '%s' without a LEVEL counter: it sums the LEVEL counter planned right before it "
            "in its pass; ask for the LEVEL counter (or its _ACCUM counter) instead",
            who, acc_named);
      PL_ERR(
          HC_ERR_IMPOSSIBLE,
          "%s: accumulator '%s' would be shared by %zu LEVEL counters (%s, %s%s): an accumulator serves one "
          "LEVEL counter per pass; ask for each LEVEL counter (or its _ACCUM counter) instead",
          who, acc_named, nlevels, levels[0], levels[1], nlevels > 2 ? ", ..." : "");
    }
  }
  /* what each measurement takes; one that can never fit a pass */
  if (!(P.charge = calloc((P.nm ? P.nm : 1) * P.w, sizeof *P.charge))) PL_ERR(HC_ERR_NOMEM, "out of memory");
  for (size_t m = 0; m < P.nm; m++) {
    make_charge(&P, m);
    unsigned *zero = calloc(P.w, sizeof *zero);
    int ok = zero && fits(&P, zero, &P.charge[m * P.w]);
    free(zero);
    if (!ok)
      PL_ERR(HC_ERR_IMPOSSIBLE, "counter '%s'%s%s needs more registers than a pass of %s has", P.ms[m].base,
             P.ms[m].acc ? " with its accumulator " : "", P.ms[m].acc ? P.ms[m].acc : "", dev);
  }
  for (int s = 0; s < 3; s++) {
    pl_item *items;
    size_t ni;
    if (make_items(&P, s, &items, &ni)) {
      items_free(items, ni);
      PL_ERR(HC_ERR_NOMEM, "out of memory");
    }
    if (pack(&P, items, ni, &R[s])) PL_ERR(HC_ERR_NOMEM, "out of memory");
  }
  /* fewest passes, then fewest split groups, then fewest repeated counters; ties: the earlier strategy */
  int k = 0;
  for (int s = 1; s < 3; s++)
    if (R[s].npasses < R[k].npasses ||
        (R[s].npasses == R[k].npasses &&
         (R[s].nsplit < R[k].nsplit || (R[s].nsplit == R[k].nsplit && R[s].nrepeat < R[k].nrepeat))))
      k = s;
  st = build_plan(&P, &R[k], out);
  if (st != HC_OK) snprintf(err, sizeof err, "out of memory");
out:
  if (st != HC_OK) *out = hc_plan_failed(err);
  for (int s = 0; s < 3; s++) {
    if (R[s].items) items_free(R[s].items, R[s].ni);
    free(R[s].in);
  }
  planner_free(&P);
  return st;
}

/* ---- the plan string ---- */

char *hc_plan_format(const hc_plan *p) {
  if (!p) return NULL;
  size_t len = 1;
  for (size_t i = 0; i < p->ncounters; i++) {
    if (!p->names[i][0] || strpbrk(p->names[i], ",; \t\n")) return NULL;
    len += strlen(p->names[i]) + 1;
  }
  char *s = malloc(len), *at = s;
  if (!s) return NULL;
  for (size_t i = 0; i < p->ncounters; i++) {
    if (i) *at++ = p->pass[i] != p->pass[i - 1] ? ';' : ',';
    size_t l = strlen(p->names[i]);
    memcpy(at, p->names[i], l);
    at += l;
  }
  *at = 0;
  return s;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

hc_status hc_plan_parse(const char *s, hc_plan **out) {
  if (!s || !out) return HC_ERR_INVALID;
  *out = NULL;
  size_t n = 1, len = strlen(s);
  for (const char *c = s; *c; c++)
    n += *c == ',' || *c == ';';
  plan_impl *q = plan_alloc(n, 0, len + 2);
  if (!q) return HC_ERR_NOMEM;
  char *at = q->arena, *empty = q->arena + len + 1;
  *empty = 0;
  memcpy(at, s, len + 1);
  unsigned pass = 1;
  size_t k = 0;
  hc_status st = HC_OK;
  for (char *c = at;;) {
    size_t w = strcspn(c, ",;");
    char end = c[w], *b = c, *e = c + w;
    while (b < e && is_blank(*b))
      b++;
    while (e > b && is_blank(e[-1]))
      e--;
    *e = 0;
    if (b == e) {
      st = HC_ERR_PARSE; /* an empty name or an empty pass */
      break;
    }
    for (char *x = b; x < e && st == HC_OK; x++)
      if (is_blank(*x)) st = HC_ERR_PARSE;
    for (size_t j = 0; j < k && st == HC_OK; j++)
      if (q->pub.pass[j] == pass && strcmp(q->pub.names[j], b) == 0) st = HC_ERR_PARSE; /* twice in a pass */
    if (st != HC_OK) break;
    q->pub.names[k] = b;
    q->pub.blocks[k] = empty;
    q->pub.pass[k++] = pass;
    if (!end) break;
    if (end == ';') pass++;
    c += w + 1;
  }
  if (st != HC_OK) {
    hc_plan_free(&q->pub);
    return st;
  }
  q->pub.ncounters = k;
  q->pub.npasses = pass;
  *out = &q->pub;
  return HC_OK;
}

size_t hc_plan_lower_bound(const hc_plan *p, const hc_limits *lim) {
  if (!p || !p->ncounters) return 0;
  if (p->lower_bound) return p->lower_bound; /* hc_plan_make's, over the measurements it planned */
  size_t lb = 1;
  if (!lim) return lb;
  if (lim->max_per_pass) {
    size_t t = (p->ncounters + lim->max_per_pass - 1) / lim->max_per_pass;
    if (t > lb) lb = t;
  }
  for (size_t b = 0; b < lim->nblocks; b++) {
    unsigned m = lim->blocks[b].max;
    if (m == 0 || m == HC_UNLIMITED) continue;
    size_t c = 0;
    for (size_t i = 0; i < p->ncounters; i++)
      c += strcmp(p->blocks[i], lim->blocks[b].block) == 0;
    size_t t = (c + m - 1) / m;
    if (t > lb) lb = t;
  }
  return lb;
}
