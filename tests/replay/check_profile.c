/* check_profile: reads a profile store (any format, through the hub) and checks what every profile must hold
 * — each dispatch once with a unique dispatch id, every value tagged with a pass the plan gives its counter,
 * no value twice, a dispatch's `passes` equal to the passes it has measured values for — and prints one line
 * of facts for test_replay.sh and test_multiplex.sh. It never writes. Multiplexing (replay=multiplex),
 * recomputed independently: per key (process + kernel, + sizes with policy launch) the i-th measured dispatch
 * measured pass (i mod N)+1 only; a complete key has each dispatch's other counters imputed (the counter's
 * pass) with the median of the warm measured values (the key's first, cold dispatch out unless it alone
 * measured it); the cold dispatch's pass-1 readings are replaced by that median where warm ones exist
 * (imputed, checked, counted for its rotation, listed in metadata multiplex_cold_raw); other keys have no
 * imputed value and are listed in multiplex_incomplete. usage: check_profile STORE. Output: "bad: ..." per
 * violation, then mode=M replay=R plan=P dispatches=N kernels=K passes=P:N[,P:N] values=V accessible=A
 * restored=R unprofiled=U imputed=I measured=M keys=K incomplete=J replaced=C bad=B (passes: dispatches per
 * `passes`; accessible/restored: dispatches with bytes > 0; replaced: cold readings replaced by the warm
 * median) */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nbad;
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    if (nbad++ < 20) {                                                                                       \
      printf("bad: " __VA_ARGS__);                                                                           \
      putchar('\n');                                                                                         \
    }                                                                                                        \
  } while (0)

typedef struct drow {
  uint64_t id, dispatch_id, process_id, kernel_id;
  uint32_t grid[3], wg[3];
  uint32_t passes;
  uint64_t accessible, restored;
  int64_t start, end; /* device times (pass 1) */
  uint32_t pass_mask; /* passes seen among its measured values */
  uint32_t nvalues;   /* measured values */
  uint32_t nimputed;  /* imputed values (not counting replaced ones) */
  uint32_t cold;      /* hp_dispatch.cold: its key's first dispatch under multiplexing */
  size_t key;         /* multiplexing: its key */
} drow;

typedef struct vrow { /* one counter value */
  size_t d;           /* index of its dispatch in d[] (sorted by id) */
  uint64_t counter;
  uint32_t pass, imputed;
  double value;
} vrow;

static double dabs(double x) { return x < 0 ? -x : x; } /* (the checker links no libm) */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmp_dispatch_id(const void *a, const void *b) {
  const drow *x = *(drow *const *)a, *y = *(drow *const *)b;
  return x->dispatch_id < y->dispatch_id ? -1 : x->dispatch_id > y->dispatch_id;
}

static int cmp_id(const void *a, const void *b) {
  const drow *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: check_profile STORE\n");
    return 2;
  }
  hp_store *s = NULL;
  hp_status st = hp_store_open(argv[1], NULL, HP_READ, &s);
  if (st != HP_OK) {
    printf("bad: %s: %s\n", argv[1], s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
    hp_store_close(s);
    return 1;
  }
  const char *mode = hp_store_metadata(s, "mode"), *replay = hp_store_metadata(s, "replay"),
             *plan = hp_store_metadata(s, "pass_plan");
  if (!mode || strcmp(mode, "profile") != 0) BAD("metadata mode is %s", mode ? mode : "(none)");
  if (!replay) BAD("no replay metadata");
  if (!plan) BAD("no pass_plan metadata");
  /* plan: counter name -> pass */
  char names[64][64];
  unsigned plan_pass[64];
  size_t nplan = 0;
  if (plan) {
    unsigned pass = 1;
    const char *c = plan;
    while (*c && nplan < 64) {
      size_t w = strcspn(c, ",;");
      snprintf(names[nplan], sizeof names[nplan], "%.*s", (int)w, c);
      plan_pass[nplan++] = pass;
      c += w;
      if (*c == ';') pass++;
      if (*c) c++;
    }
  }
  /* counter infos: id -> plan pass */
  unsigned info_pass[1024] = {0};
  hp_cursor *cur = NULL;
  hp_counter_info ci = {.size = sizeof ci};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_INFO, &cur) == HP_OK) {
    while (hp_cursor_next(cur, &ci) == HP_OK) {
      if (ci.id >= 1024) {
        BAD("counter_info id %" PRIu64 " too large for the checker", ci.id);
        continue;
      }
      for (size_t i = 0; i < nplan; i++)
        if (strcmp(names[i], ci.name) == 0) info_pass[ci.id] = plan_pass[i];
      if (!info_pass[ci.id]) BAD("counter '%s' is not in the plan '%s'", ci.name, plan ? plan : "");
    }
    hp_cursor_close(cur);
  }
  /* dispatches */
  size_t n = 0, cap = 1024;
  drow *d = malloc(cap * sizeof *d);
  hp_dispatch r = {.size = sizeof r};
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &cur) == HP_OK) {
    while (d && hp_cursor_next(cur, &r) == HP_OK) {
      if (n == cap) d = realloc(d, (cap *= 2) * sizeof *d);
      if (!d) break;
      d[n++] = (drow){.id = r.id,
                      .dispatch_id = r.dispatch_id,
                      .process_id = r.process_id,
                      .kernel_id = r.kernel_id,
                      .grid = {r.grid[0], r.grid[1], r.grid[2]},
                      .wg = {r.workgroup[0], r.workgroup[1], r.workgroup[2]},
                      .passes = r.passes,
                      .accessible = r.bytes_accessible,
                      .restored = r.bytes_restored,
                      .start = r.start_ns,
                      .end = r.end_ns,
                      .cold = r.cold};
    }
    hp_cursor_close(cur);
  }
  if (!d) {
    printf("bad: out of memory\n");
    return 1;
  }
  qsort(d, n, sizeof *d, cmp_id);
  for (size_t i = 1; i < n; i++)
    if (d[i].id == d[i - 1].id) BAD("dispatch row %" PRIu64 " twice", d[i].id);
  /* one dispatch id per dispatch of a process (the same for every pass: one row, never a row per pass) */
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n && j < i + 64; j++)
      if (d[i].process_id == d[j].process_id && d[i].dispatch_id == d[j].dispatch_id)
        BAD("dispatch id %" PRIu64 " on two rows (%" PRIu64 ", %" PRIu64 ")", d[i].dispatch_id, d[i].id,
            d[j].id);
  /* values */
  uint64_t nvalues = 0, nimputed = 0, nmeasured = 0, nreplaced = 0;
  int muxed = replay && strcmp(replay, "multiplex") == 0;
  hp_counter_value v = {.size = sizeof v};
  size_t nv = 0, capv = 4096;
  vrow *vals = malloc(capv * sizeof *vals);
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &cur) == HP_OK) {
    while (vals && hp_cursor_next(cur, &v) == HP_OK) {
      nvalues++;
      drow key = {.id = v.dispatch_id};
      drow *x = bsearch(&key, d, n, sizeof *d, cmp_id);
      if (!x) {
        BAD("value for dispatch row %" PRIu64 " that does not exist", v.dispatch_id);
        continue;
      }
      if (v.pass < 1 || v.pass > 32) {
        BAD("value of dispatch %" PRIu64 " without a pass (%u)", v.dispatch_id, v.pass);
        continue;
      }
      if (v.counter_id < 1024 && info_pass[v.counter_id] && info_pass[v.counter_id] != v.pass)
        BAD("dispatch %" PRIu64 ": counter %" PRIu64 " %s in pass %u, the plan puts it in pass %u",
            v.dispatch_id, v.counter_id, v.imputed ? "imputed" : "measured", v.pass, info_pass[v.counter_id]);
      if (v.imputed && muxed && x->cold && v.pass == 1) { /* a cold reading replaced by the warm median */
        x->pass_mask |= 1u;
        x->nvalues++;
        nimputed++;
        nreplaced++;
      } else if (v.imputed) {
        x->nimputed++;
        nimputed++;
      } else {
        x->pass_mask |= 1u << (v.pass - 1);
        x->nvalues++;
        nmeasured++;
      }
      if (nv == capv) vals = realloc(vals, (capv *= 2) * sizeof *vals);
      if (vals)
        vals[nv++] = (vrow){.d = (size_t)(x - d),
                            .counter = v.counter_id,
                            .pass = v.pass,
                            .imputed = v.imputed,
                            .value = v.value};
    }
    hp_cursor_close(cur);
  }
  if (!vals) {
    printf("bad: out of memory\n");
    return 1;
  }
  /* the same (dispatch, counter, pass) twice: summed by mistake later (measured and imputed alike) */
  for (size_t i = 0; i < nv; i++)
    for (size_t j = i + 1; j < nv && j < i + 256; j++)
      if (vals[i].d == vals[j].d && vals[i].counter == vals[j].counter && vals[i].pass == vals[j].pass)
        BAD("dispatch %" PRIu64 " counter %" PRIu64 " pass %u twice", d[vals[i].d].id, vals[i].counter,
            vals[i].pass);
  /* passes per dispatch = the passes it has measured values for */
  uint64_t hist[33] = {0}, acc = 0, rest = 0, unprofiled = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned got = (unsigned)__builtin_popcount(d[i].pass_mask);
    if (!d[i].nvalues && d[i].passes == 1 && !d[i].restored) { /* ran once, unprofiled: no values */
      unprofiled++;
      continue;
    }
    if (!d[i].start || d[i].end < d[i].start)
      BAD("dispatch %" PRIu64 ": device times %" PRId64 "..%" PRId64, d[i].id, d[i].start, d[i].end);
    if (d[i].passes != got)
      BAD("dispatch %" PRIu64 ": passes=%u but values of %u passes", d[i].id, d[i].passes, got);
    hist[d[i].passes < 32 ? d[i].passes : 32]++;
    acc += d[i].accessible > 0;
    rest += d[i].restored > 0;
  }
  /* iteration multiplexing, recomputed */
  int mux = muxed;
  uint64_t nkeys = 0, nincomplete = 0;
  if (!mux && nimputed) BAD("%" PRIu64 " imputed values in a store without multiplexing", nimputed);
  if (mux) {
    const char *policy = hp_store_metadata(s, "multiplex_policy"),
               *inc = hp_store_metadata(s, "multiplex_incomplete");
    if (!policy || (strcmp(policy, "kernel") && strcmp(policy, "launch")))
      BAD("multiplex_policy is %s", policy ? policy : "(none)");
    if (!inc || inc[0] != '[') BAD("multiplex_incomplete is %s", inc ? inc : "(none)");
    int launch = policy && strcmp(policy, "launch") == 0;
    unsigned npasses = nplan ? plan_pass[nplan - 1] : 0;
    /* kernel names, for the metadata's list */
    static char knames[1024][128];
    hp_kernel_symbol ks = {.size = sizeof ks};
    if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &cur) == HP_OK) {
      while (hp_cursor_next(cur, &ks) == HP_OK)
        if (ks.id < 1024) snprintf(knames[ks.id], sizeof knames[ks.id], "%s", ks.name);
      hp_cursor_close(cur);
    }
    /* keys: first dispatch with the same process, kernel (and sizes); dispatches in id order are in
       dispatch_id order within a process */
    size_t *first = malloc((n ? n : 1) * sizeof *first), nk = 0;
    drow **order = malloc((n ? n : 1) * sizeof *order);
    if (!first || !order) {
      printf("bad: out of memory\n");
      return 1;
    }
    for (size_t i = 0; i < n; i++) {
      size_t k = 0;
      for (; k < nk; k++) {
        const drow *a = &d[first[k]], *b = &d[i];
        if (a->process_id == b->process_id && a->kernel_id == b->kernel_id &&
            (!launch || (!memcmp(a->grid, b->grid, sizeof a->grid) && !memcmp(a->wg, b->wg, sizeof a->wg))))
          break;
      }
      if (k == nk) first[nk++] = i;
      d[i].key = k;
    }
    nkeys = nk;
    for (size_t k = 0; k < nk; k++) {
      /* rotation: the i-th measured dispatch of the key in dispatch id order (the order the collector
         measured them in, whatever the thread; rows need not be in that order) measured pass (i mod N) + 1 */
      size_t nm = 0;
      for (size_t i = 0; i < n; i++)
        if (d[i].key == k && d[i].nvalues) order[nm++] = &d[i];
      qsort(order, nm, sizeof *order, cmp_dispatch_id);
      for (size_t i = 0; i < nm; i++)
        if (order[i]->pass_mask != 1u << (i % npasses))
          BAD("dispatch %" PRIu64
              " (measured dispatch %zu of kernel %s): measured passes 0x%x, want only pass %zu",
              order[i]->id, i + 1, knames[order[i]->kernel_id < 1024 ? order[i]->kernel_id : 0],
              order[i]->pass_mask, i % npasses + 1);
      /* the key's cold dispatch: its first by dispatch id (rows of several threads need not be in that order)
       */
      size_t cold = first[k];
      for (size_t i = 0; i < n; i++)
        if (d[i].key == k && d[i].dispatch_id < d[cold].dispatch_id) cold = i;
      /* per counter: sum and count of measured values */
      double sum[1024] = {0};
      uint64_t cnt[1024] = {0};
      for (size_t j = 0; j < nv; j++)
        if (d[vals[j].d].key == k && !vals[j].imputed && vals[j].counter < 1024) {
          sum[vals[j].counter] += vals[j].value;
          cnt[vals[j].counter]++;
        }
      int complete = 1;
      for (uint64_t c = 0; c < 1024; c++)
        if (info_pass[c] && !cnt[c]) complete = 0;
      const char *name = knames[d[first[k]].kernel_id < 1024 ? d[first[k]].kernel_id : 0];
      if (!complete) {
        nincomplete++;
        char pat[200];
        snprintf(pat, sizeof pat, "\"kernel\":\"%s\"", name);
        if (!inc || !strstr(inc, pat)) BAD("kernel %s: incomplete but not in multiplex_incomplete", name);
      }
      for (size_t j = 0; j < nv; j++) {
        const vrow *x = &vals[j];
        if (d[x->d].key != k || !x->imputed) continue;
        if (!complete) {
          BAD("dispatch %" PRIu64 " of kernel %s (incomplete coverage) has an imputed value", d[x->d].id,
              name);
          continue;
        }
        /* the median of the measured values of the key's warm dispatches (all but its first), or the
           first's value when only it measured the counter */
        double *w = malloc((nv ? nv : 1) * sizeof *w), mean = NAN;
        size_t nw = 0;
        for (size_t t = 0; w && t < nv; t++)
          if (d[vals[t].d].key == k && !vals[t].imputed && vals[t].counter == x->counter && vals[t].d != cold)
            w[nw++] = vals[t].value;
        for (size_t t = 0; w && !nw && t < nv; t++)
          if (vals[t].d == cold && !vals[t].imputed && vals[t].counter == x->counter) w[nw++] = vals[t].value;
        if (nw) {
          qsort(w, nw, sizeof *w, cmp_double);
          mean = nw % 2 ? w[nw / 2] : (w[nw / 2 - 1] + w[nw / 2]) / 2;
        }
        free(w);
        if (!(dabs(x->value - mean) <= 1e-9 * (dabs(mean) > 1.0 ? dabs(mean) : 1.0)))
          BAD("dispatch %" PRIu64 " counter %" PRIu64
              ": imputed %.17g, the median of the key's warm measured values is "
              "%.17g",
              d[x->d].id, x->counter, x->value, mean);
      }
      /* complete: every dispatch holds every counter once, measured or imputed */
      for (size_t i = 0; complete && i < n; i++)
        if (d[i].key == k && d[i].nvalues + d[i].nimputed != nplan)
          BAD("dispatch %" PRIu64 " of kernel %s: %u measured + %u imputed values, the plan has %zu counters",
              d[i].id, name, d[i].nvalues, d[i].nimputed, nplan);
    }
    /* the metadata lists exactly the incomplete keys */
    uint64_t listed = 0;
    for (const char *p = inc; p && (p = strstr(p, "\"kernel\":")); p++)
      listed++;
    if (listed != nincomplete)
      BAD("multiplex_incomplete lists %" PRIu64 " keys, %" PRIu64 " are incomplete", listed, nincomplete);
    /* ... and multiplex_cold_raw exactly the replaced readings */
    const char *raw = hp_store_metadata(s, "multiplex_cold_raw");
    uint64_t nraw = 0;
    for (const char *p = raw; p && (p = strstr(p, "\"raw\":")); p++)
      nraw++;
    if (!raw || raw[0] != '[' || nraw != nreplaced)
      BAD("multiplex_cold_raw lists %" PRIu64 " readings, %" PRIu64 " are replaced: %.200s", nraw, nreplaced,
          raw ? raw : "(none)");
    free(first);
    free(order);
  }
  uint64_t kernels = 0;
  hp_store_count(s, HP_TABLE_KERNEL_SYMBOL, &kernels);
  printf("mode=%s replay=%s plan=%s dispatches=%zu kernels=%" PRIu64 " passes=", mode ? mode : "",
         replay ? replay : "", plan ? plan : "", n, kernels);
  int firstp = 1;
  for (int p = 0; p <= 32; p++)
    if (hist[p]) {
      printf("%s%d:%" PRIu64, firstp ? "" : ",", p, hist[p]);
      firstp = 0;
    }
  printf(" values=%" PRIu64 " accessible=%" PRIu64 " restored=%" PRIu64 " unprofiled=%" PRIu64
         " imputed=%" PRIu64 " measured=%" PRIu64 " keys=%" PRIu64 " incomplete=%" PRIu64 " replaced=%" PRIu64
         " bad=%d\n",
         nvalues, acc, rest, unprofiled, nimputed, nmeasured, nkeys, nincomplete, nreplaced, nbad);
  free(vals);
  free(d);
  hp_store_close(s);
  return nbad ? 1 : 0;
}
