/* The pass planner: packs requested counters into the fewest passes a device's limits allow (a total
 * per pass and per-block limits), keeping the counters of one group (a metric's ratio partners) in one
 * pass where they fit; and the one-line plan string the CLI hands to the collector (HUBPROF_PLAN).
 *
 * Method: distinct counters (a counter requested twice is measured once); groups sharing a counter
 * joined into one unit; a unit too big for one pass cut into pieces that each fit; then first-fit
 * decreasing over the units under three orders (size, tightness against the limits, scarcity of the
 * blocks they use), keeping the plan with the fewest passes. Every tie breaks on request order, so the
 * same input always gives the same plan. */
/* SPDX-License-Identifier: MIT */
#include "counters.h"

#include "../common/hu_buf.h"
#include "../common/hu_map.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pl_counter {
  const char *name, *block;
  long b;      /* index into the limits' blocks, -1 when the limits name no block */
  long group;  /* first named group requesting it, -1 for none */
  size_t pass; /* 0-based, after packing */
} pl_counter;

typedef struct pl_group {
  const char *name;
  size_t *c; /* distinct counters, request order */
  size_t nc, cap;
} pl_group;

typedef struct pl_item {
  size_t *c; /* counters of this unit or piece */
  size_t nc, cap;
  unsigned *cnt; /* per block, then the total at [nb] */
  size_t first;  /* smallest counter index: the request-order key */
} pl_item;

typedef struct planner {
  const hc_limits *lim;
  size_t nb;      /* blocks in the limits */
  unsigned total; /* per pass, 0 = unlimited */
  pl_counter *cs; /* distinct counters, first-appearance order */
  size_t n, ncap;
  hu_strmap names; /* counter name -> index into cs */
  pl_group *gs;    /* named groups */
  size_t ng;
  pl_item *items;
  size_t ni, icap;
  char *err;
  size_t errlen;
} planner;

/* Index of counter `name`, added when new; (size_t)-1 when out of memory. */
static size_t pl_intern(planner *P, const char *name, int *added) {
  long i = hu_strmap_intern(&P->names, name, added);
  if (i < 0) return (size_t)-1;
  if (!*added) return (size_t)i;
  if (hu_grow((void **)&P->cs, &P->ncap, P->n + 1, sizeof *P->cs)) return (size_t)-1;
  P->cs[P->n] = (pl_counter){.name = name, .b = -1, .group = -1};
  return P->n++;
}

static int push(size_t **v, size_t *n, size_t *cap, size_t x) {
  if (hu_grow((void **)v, cap, *n + 1, sizeof **v)) return -1;
  (*v)[(*n)++] = x;
  return 0;
}

static unsigned block_max(const planner *P, size_t b) {
  return b < P->nb ? P->lim->blocks[b].max : (P->total ? P->total : HC_UNLIMITED);
}

/* Do counts `add` fit on top of counts `have` (both nb+1 long)? */
static int fits(const planner *P, const unsigned *have, const unsigned *add) {
  for (size_t b = 0; b <= P->nb; b++) {
    unsigned m = block_max(P, b);
    if (add[b] && m != HC_UNLIMITED && have[b] + add[b] > m) return 0;
  }
  return 1;
}

static void count_one(const planner *P, unsigned *cnt, size_t c) {
  if (P->cs[c].b >= 0) cnt[P->cs[c].b]++;
  cnt[P->nb]++;
}

static pl_item *new_item(planner *P) {
  if (P->ni == P->icap) {
    size_t nc = P->icap ? 2 * P->icap : 16;
    pl_item *nv = realloc(P->items, nc * sizeof *nv);
    if (!nv) return NULL;
    P->items = nv;
    P->icap = nc;
  }
  pl_item *it = &P->items[P->ni];
  memset(it, 0, sizeof *it);
  if (!(it->cnt = calloc(P->nb + 1, sizeof *it->cnt))) return NULL;
  it->first = SIZE_MAX;
  P->ni++;
  return it;
}

static int item_add(planner *P, pl_item *it, size_t c) {
  if (push(&it->c, &it->nc, &it->cap, c)) return -1;
  count_one(P, it->cnt, c);
  if (c < it->first) it->first = c;
  return 0;
}

/* ---- units: groups that share counters, joined ---- */

static size_t uf_find(size_t *up, size_t x) {
  while (up[x] != x)
    x = up[x] = up[up[x]];
  return x;
}

static int by_group_size(const void *a, const void *b, void *ctx) {
  const pl_group *gs = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (gs[x].nc != gs[y].nc) return gs[x].nc > gs[y].nc ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* Cut an oversized unit (`nuc` counters, groups `ug`) into pieces that each fit one pass: groups largest
 * first, each whole into the piece that already holds its counters or the first with room, else counter
 * by counter into the first piece with room. */
static int cut_unit(planner *P, size_t nuc, size_t *ug, size_t nug, long *piece_of) {
  size_t first_piece = P->ni;
  unsigned *add = calloc(P->nb + 1, sizeof *add);
  size_t *fresh = malloc((nuc ? nuc : 1) * sizeof *fresh);
  unsigned *zero = calloc(P->nb + 1, sizeof *zero);
  int rc = (!add || !fresh || !zero) ? -1 : 0;
  qsort_r(ug, nug, sizeof *ug, by_group_size, P->gs);
  /* the unit's lone counters (requested alone and in a group) are already in a group; groups cover all */
  for (size_t gi = 0; rc == 0 && gi < nug; gi++) {
    const pl_group *g = &P->gs[ug[gi]];
    size_t nf = 0;
    long home = -2; /* the one piece holding its placed counters, -1 none yet, -3 several */
    memset(add, 0, (P->nb + 1) * sizeof *add);
    for (size_t k = 0; k < g->nc; k++) {
      long pc = piece_of[g->c[k]];
      if (pc < 0) {
        fresh[nf++] = g->c[k];
        count_one(P, add, g->c[k]);
      } else if (home == -2 || home == pc) {
        home = pc;
      } else {
        home = -3;
      }
    }
    if (!nf) continue;
    long to = -1;
    if (home >= 0) {
      if (fits(P, P->items[home].cnt, add)) to = home;
    } else if (home == -2) {
      for (size_t p = first_piece; p < P->ni && to < 0; p++)
        if (fits(P, P->items[p].cnt, add)) to = (long)p;
      if (to < 0 && fits(P, zero, add)) {
        if (!new_item(P)) rc = -1;
        to = (long)P->ni - 1;
      }
    }
    for (size_t k = 0; rc == 0 && k < nf; k++) {
      long dst = to;
      if (dst < 0) { /* counter by counter */
        unsigned one[65] = {0};
        count_one(P, one, fresh[k]);
        for (size_t p = first_piece; p < P->ni && dst < 0; p++)
          if (fits(P, P->items[p].cnt, one)) dst = (long)p;
        if (dst < 0) {
          if (!new_item(P)) {
            rc = -1;
            break;
          }
          dst = (long)P->ni - 1;
        }
      }
      if (item_add(P, &P->items[dst], fresh[k])) rc = -1;
      piece_of[fresh[k]] = dst;
    }
  }
  free(add);
  free(fresh);
  free(zero);
  return rc;
}

static int make_items(planner *P) {
  size_t *up = malloc((P->n ? P->n : 1) * sizeof *up);
  long *piece_of = malloc((P->n ? P->n : 1) * sizeof *piece_of);
  size_t *uc = malloc((P->n ? P->n : 1) * sizeof *uc), *ug = malloc((P->ng ? P->ng : 1) * sizeof *ug);
  unsigned *cnt = calloc(P->nb + 1, sizeof *cnt), *zero = calloc(P->nb + 1, sizeof *zero);
  unsigned char *done = calloc(P->n ? P->n : 1, 1);
  int rc = (!up || !piece_of || !uc || !ug || !cnt || !zero || !done) ? -1 : 0;
  for (size_t i = 0; rc == 0 && i < P->n; i++) {
    up[i] = i;
    piece_of[i] = -1;
  }
  for (size_t g = 0; rc == 0 && g < P->ng; g++)
    for (size_t k = 1; k < P->gs[g].nc; k++) {
      size_t a = uf_find(up, P->gs[g].c[0]), b = uf_find(up, P->gs[g].c[k]);
      if (a != b) up[a > b ? a : b] = a < b ? a : b; /* the root is the earliest counter */
    }
  /* one unit per root, in the order of its first counter */
  for (size_t i = 0; rc == 0 && i < P->n; i++) {
    if (done[i]) continue;
    size_t root = uf_find(up, i), nuc = 0, nug = 0;
    memset(cnt, 0, (P->nb + 1) * sizeof *cnt);
    for (size_t j = i; j < P->n; j++)
      if (!done[j] && uf_find(up, j) == root) {
        uc[nuc++] = j;
        done[j] = 1;
        count_one(P, cnt, j);
      }
    if (fits(P, zero, cnt)) {
      pl_item *it = new_item(P);
      for (size_t k = 0; it && k < nuc && rc == 0; k++)
        rc = item_add(P, it, uc[k]);
      if (!it) rc = -1;
      continue;
    }
    for (size_t g = 0; g < P->ng; g++)
      if (uf_find(up, P->gs[g].c[0]) == root) ug[nug++] = g;
    rc = cut_unit(P, nuc, ug, nug, piece_of);
  }
  free(up);
  free(piece_of);
  free(uc);
  free(ug);
  free(cnt);
  free(zero);
  free(done);
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

/* Pack the items in `order`; pass_of[item] set; returns the number of passes or (size_t)-1. */
static size_t first_fit(planner *P, const pl_key *order, size_t *pass_of) {
  size_t np = 0, cap = 0;
  unsigned *passes = NULL; /* np * (nb+1) */
  size_t w = P->nb + 1;
  for (size_t i = 0; i < P->ni; i++) {
    const pl_item *it = &P->items[order[i].item];
    size_t p = 0;
    while (p < np && !fits(P, &passes[p * w], it->cnt))
      p++;
    if (p == np) {
      if (np == cap) {
        size_t nc = cap ? 2 * cap : 8;
        unsigned *nv = realloc(passes, nc * w * sizeof *nv);
        if (!nv) {
          free(passes);
          return (size_t)-1;
        }
        passes = nv;
        cap = nc;
      }
      memset(&passes[np * w], 0, w * sizeof *passes);
      np++;
    }
    for (size_t b = 0; b < w; b++)
      passes[p * w + b] += it->cnt[b];
    pass_of[order[i].item] = p;
  }
  free(passes);
  return np;
}

static int pack(planner *P) {
  size_t w = P->nb + 1;
  double *demand = calloc(w, sizeof *demand);
  pl_key *keys = malloc((P->ni ? P->ni : 1) * sizeof *keys);
  size_t *pass_of = malloc((P->ni ? P->ni : 1) * sizeof *pass_of);
  size_t *best = malloc((P->ni ? P->ni : 1) * sizeof *best), best_np = SIZE_MAX;
  int rc = (!demand || !keys || !pass_of || !best) ? -1 : 0;
  for (size_t i = 0; rc == 0 && i < P->ni; i++)
    for (size_t b = 0; b < w; b++)
      demand[b] += P->items[i].cnt[b];
  for (int order = 0; rc == 0 && order < 3; order++) {
    for (size_t i = 0; i < P->ni; i++) {
      const pl_item *it = &P->items[i];
      double tight = 0, scarce = 0;
      for (size_t b = 0; b < w; b++) {
        unsigned m = block_max(P, b);
        if (!it->cnt[b] || m == HC_UNLIMITED) continue;
        if ((double)it->cnt[b] / m > tight) tight = (double)it->cnt[b] / m;
        if (demand[b] / m > scarce) scarce = demand[b] / m;
      }
      double size = (double)it->nc;
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
    qsort(keys, P->ni, sizeof *keys, by_key);
    size_t np = first_fit(P, keys, pass_of);
    if (np == (size_t)-1) {
      rc = -1;
    } else if (np < best_np) {
      best_np = np;
      memcpy(best, pass_of, P->ni * sizeof *best);
    }
  }
  for (size_t i = 0; rc == 0 && i < P->ni; i++)
    for (size_t k = 0; k < P->items[i].nc; k++)
      P->cs[P->items[i].c[k]].pass = best[i];
  free(demand);
  free(keys);
  free(pass_of);
  free(best);
  return rc;
}

/* ---- the plan object ---- */

typedef struct plan_impl {
  hc_plan pub;
  char *arena;
} plan_impl;

static plan_impl *plan_alloc(size_t n, size_t nsplit, size_t arena) {
  plan_impl *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  q->pub.names = calloc(n ? n : 1, sizeof *q->pub.names);
  q->pub.blocks = calloc(n ? n : 1, sizeof *q->pub.blocks);
  q->pub.groups = calloc(n ? n : 1, sizeof *q->pub.groups);
  q->pub.pass = calloc(n ? n : 1, sizeof *q->pub.pass);
  q->pub.split_groups = calloc(nsplit + 1, sizeof *q->pub.split_groups);
  q->arena = malloc(arena ? arena : 1);
  if (!q->pub.names || !q->pub.blocks || !q->pub.groups || !q->pub.pass || !q->pub.split_groups ||
      !q->arena) {
    hc_plan_free(&q->pub);
    return NULL;
  }
  return q;
}

void hc_plan_free(hc_plan *p) {
  if (!p) return;
  plan_impl *q = (plan_impl *)p;
  free(p->names);
  free(p->blocks);
  free(p->groups);
  free(p->pass);
  free(p->split_groups);
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

static int by_pass_then_order(const void *a, const void *b, void *ctx) {
  const pl_counter *cs = ctx;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (cs[x].pass != cs[y].pass) return cs[x].pass < cs[y].pass ? -1 : 1;
  return x < y ? -1 : x > y;
}

static hc_status build_plan(planner *P, hc_plan **out) {
  /* split groups: named groups whose counters span passes, in request order */
  size_t nsplit = 0, arena = 0;
  unsigned char *split = calloc(P->ng ? P->ng : 1, 1);
  size_t *order = malloc((P->n ? P->n : 1) * sizeof *order);
  if (!split || !order) {
    free(split);
    free(order);
    return HC_ERR_NOMEM;
  }
  for (size_t g = 0; g < P->ng; g++) {
    for (size_t k = 1; k < P->gs[g].nc && !split[g]; k++)
      split[g] = P->cs[P->gs[g].c[k]].pass != P->cs[P->gs[g].c[0]].pass;
    if (split[g]) nsplit++;
    arena += strlen(P->gs[g].name) + 1;
  }
  for (size_t i = 0; i < P->n; i++) {
    arena += strlen(P->cs[i].name) + strlen(P->cs[i].block) + 2;
    order[i] = i;
  }
  plan_impl *q = plan_alloc(P->n, nsplit, arena);
  if (!q) {
    free(split);
    free(order);
    return HC_ERR_NOMEM;
  }
  char *at = q->arena;
  const char **gname = malloc((P->ng ? P->ng : 1) * sizeof *gname);
  if (!gname) {
    free(split);
    free(order);
    hc_plan_free(&q->pub);
    return HC_ERR_NOMEM;
  }
  for (size_t g = 0, s = 0; g < P->ng; g++) {
    gname[g] = arena_put(&at, P->gs[g].name);
    if (split[g]) q->pub.split_groups[s++] = (char *)gname[g];
  }
  qsort_r(order, P->n, sizeof *order, by_pass_then_order, P->cs);
  size_t np = 0;
  for (size_t i = 0; i < P->n; i++) {
    const pl_counter *c = &P->cs[order[i]];
    q->pub.names[i] = arena_put(&at, c->name);
    q->pub.blocks[i] = arena_put(&at, c->block);
    q->pub.groups[i] = c->group >= 0 ? gname[c->group] : NULL;
    q->pub.pass[i] = (unsigned)c->pass + 1;
    if (c->pass + 1 > np) np = c->pass + 1;
  }
  q->pub.ncounters = P->n;
  q->pub.npasses = np;
  free(gname);
  free(split);
  free(order);
  *out = &q->pub;
  return HC_OK;
}

static void planner_free(planner *P) {
  free(P->cs);
  hu_strmap_free(&P->names);
  for (size_t g = 0; g < P->ng; g++)
    free(P->gs[g].c);
  free(P->gs);
  for (size_t i = 0; i < P->ni; i++) {
    free(P->items[i].c);
    free(P->items[i].cnt);
  }
  free(P->items);
}

#define PL_ERR(st_, ...)                                                                                     \
  do {                                                                                                       \
    snprintf(err, errlen, __VA_ARGS__);                                                                      \
    st = (st_);                                                                                              \
    goto out;                                                                                                \
  } while (0)

hc_status hc_plan_make(const hc_request *req, size_t nreq, const hc_limits *lim,
                       const char *(*block_of)(const char *counter, void *ctx), void *ctx, hc_plan **out,
                       char *err, size_t errlen) {
  char dummy[8];
  if (!err || !errlen) {
    err = dummy;
    errlen = sizeof dummy;
  }
  err[0] = 0;
  if (!out || (nreq && !req)) return HC_ERR_INVALID;
  *out = NULL;
  static const hc_limits none; /* no limits at all */
  if (!lim) lim = &none;
  if (!block_of && lim->nblocks) {
    snprintf(err, errlen, "block_of is needed when the limits name blocks");
    return HC_ERR_INVALID;
  }
  hc_status st = HC_OK;
  planner P = {.lim = lim, .nb = lim->nblocks, .total = lim->max_per_pass, .err = err, .errlen = errlen};
  if (P.nb > sizeof lim->blocks / sizeof lim->blocks[0])
    PL_ERR(HC_ERR_INVALID, "limits with %zu blocks", P.nb);
  const char *dev = lim->device[0] ? lim->device : "this device";
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
    for (size_t k = 0; k < q->ncounters; k++) {
      const char *name = q->counters[k];
      if (!name || !*name) PL_ERR(HC_ERR_INVALID, "request %zu: empty counter name", r + 1);
      int added;
      size_t c = pl_intern(&P, name, &added);
      if (c == (size_t)-1) PL_ERR(HC_ERR_NOMEM, "out of memory");
      if (added) {
        const char *b = block_of ? block_of(name, ctx) : "";
        if (!b) PL_ERR(HC_ERR_UNKNOWN, "unknown counter '%s'", name);
        P.cs[c].block = b;
        if (P.nb) {
          size_t i = 0;
          while (i < P.nb && strcmp(lim->blocks[i].block, b))
            i++;
          if (i == P.nb)
            PL_ERR(HC_ERR_IMPOSSIBLE,
                   "counter '%s' is in block '%s', for which %s has no limit (cannot be measured)", name, b,
                   dev);
          if (lim->blocks[i].max == 0)
            PL_ERR(HC_ERR_IMPOSSIBLE,
                   "counter '%s' cannot be measured: block '%s' allows 0 counters per pass on %s", name, b,
                   dev);
          P.cs[c].b = (long)i;
        }
      }
      if (g >= 0) {
        pl_group *G = &P.gs[g];
        size_t j = 0;
        while (j < G->nc && G->c[j] != c)
          j++;
        if (j == G->nc && push(&G->c, &G->nc, &G->cap, c)) PL_ERR(HC_ERR_NOMEM, "out of memory");
        if (P.cs[c].group < 0) P.cs[c].group = g;
      }
    }
  }
  if (make_items(&P) || pack(&P)) PL_ERR(HC_ERR_NOMEM, "out of memory");
  st = build_plan(&P, out);
  if (st != HC_OK) snprintf(err, errlen, "out of memory");
out:
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
      if (strcmp(q->pub.names[j], b) == 0) st = HC_ERR_PARSE; /* named twice */
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
