/* check_profile: reads a profile store (any format, through the hub) and checks what every profile must hold
 * — each dispatch once with a unique dispatch id, every counter value tagged with a pass that the plan gives
 * its counter, no value twice, a dispatch's `passes` equal to the passes it has values for — and prints one
 * line of facts for tests/replay/test_replay.sh. It never writes. usage: check_profile STORE output: "bad:
 * ..." per violation, then mode=M replay=R plan=P dispatches=N kernels=K passes=P:N[,P:N] values=V
 * accessible=A restored=R bad=B (passes: how many dispatches have each `passes`; accessible/restored:
 * dispatches with bytes > 0) */
#include "hubprof/hub.h"

#include <inttypes.h>
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
  uint64_t id, dispatch_id, process_id;
  uint32_t passes;
  uint64_t accessible, restored;
  int64_t start, end; /* device times (pass 1) */
  uint32_t pass_mask; /* passes seen among its values */
  uint32_t nvalues;
} drow;

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
                      .passes = r.passes,
                      .accessible = r.bytes_accessible,
                      .restored = r.bytes_restored,
                      .start = r.start_ns,
                      .end = r.end_ns};
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
  uint64_t nvalues = 0;
  hp_counter_value v = {.size = sizeof v};
  typedef struct seen {
    uint64_t dispatch, counter;
    uint32_t pass;
  } seen;
  size_t nseen = 0, capseen = 4096;
  seen *sv = malloc(capseen * sizeof *sv);
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &cur) == HP_OK) {
    while (sv && hp_cursor_next(cur, &v) == HP_OK) {
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
        BAD("dispatch %" PRIu64 ": counter %" PRIu64 " measured in pass %u, the plan puts it in pass %u",
            v.dispatch_id, v.counter_id, v.pass, info_pass[v.counter_id]);
      x->pass_mask |= 1u << (v.pass - 1);
      x->nvalues++;
      if (nseen == capseen) sv = realloc(sv, (capseen *= 2) * sizeof *sv);
      if (sv) sv[nseen++] = (seen){v.dispatch_id, v.counter_id, v.pass};
    }
    hp_cursor_close(cur);
  }
  for (size_t i = 0; sv && i < nseen;
       i++) /* the same (dispatch, counter, pass) twice: summed by mistake later */
    for (size_t j = i + 1; j < nseen && j < i + 256; j++)
      if (sv[i].dispatch == sv[j].dispatch && sv[i].counter == sv[j].counter && sv[i].pass == sv[j].pass)
        BAD("dispatch %" PRIu64 " counter %" PRIu64 " pass %u twice", sv[i].dispatch, sv[i].counter,
            sv[i].pass);
  free(sv);
  /* passes per dispatch = the passes it has values for */
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
  uint64_t kernels = 0;
  hp_store_count(s, HP_TABLE_KERNEL_SYMBOL, &kernels);
  printf("mode=%s replay=%s plan=%s dispatches=%zu kernels=%" PRIu64 " passes=", mode ? mode : "",
         replay ? replay : "", plan ? plan : "", n, kernels);
  int first = 1;
  for (int p = 0; p <= 32; p++)
    if (hist[p]) {
      printf("%s%d:%" PRIu64, first ? "" : ",", p, hist[p]);
      first = 0;
    }
  printf(" values=%" PRIu64 " accessible=%" PRIu64 " restored=%" PRIu64 " unprofiled=%" PRIu64 " bad=%d\n",
         nvalues, acc, rest, unprofiled, nbad);
  free(d);
  hp_store_close(s);
  return nbad ? 1 : 0;
}
