/* counter_table: a store's counter values per kernel and counter, for comparing hubprof's CUDA counters with
 * Nsight Compute's (tests/device/cuda.sh, item 2). usage: counter_table STORE   prints one line per (kernel,
 * counter): "value KERNEL COUNTER MEDIAN N PASS" (KERNEL: the mangled name; MEDIAN over the kernel's N
 * dispatches; PASS: the pass of its first value), then "dispatches D with_values V"; exit 1 with one line
 * when STORE cannot be read. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
  uint64_t kernel, counter;
  double *v;
  size_t n, cap;
  uint32_t pass;
} item;

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* id -> name tables */
typedef struct names {
  uint64_t *id;
  char **name;
  size_t n;
} names;
static const char *name_of(const names *t, uint64_t id) {
  for (size_t i = 0; i < t->n; i++)
    if (t->id[i] == id) return t->name[i];
  return "(unknown)";
}
static void name_add(names *t, uint64_t id, const char *name) {
  t->id = realloc(t->id, (t->n + 1) * sizeof *t->id);
  t->name = realloc(t->name, (t->n + 1) * sizeof *t->name);
  if (!t->id || !t->name) exit(1);
  t->id[t->n] = id;
  t->name[t->n++] = strdup(name);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: counter_table STORE\n");
    return 2;
  }
  hp_store *s = NULL;
  if (hp_store_open(argv[1], NULL, HP_READ, &s) != HP_OK) {
    fprintf(stderr, "counter_table: %s\n", s ? hp_store_error(s) : argv[1]);
    hp_store_close(s);
    return 1;
  }
  names ks = {0}, cs = {0};
  hp_cursor *c;
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) == HP_OK) {
    while (hp_cursor_next(c, &k) == HP_OK)
      name_add(&ks, k.id, k.name);
    hp_cursor_close(c);
  }
  hp_counter_info ci = {.size = sizeof ci};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_INFO, &c) == HP_OK) {
    while (hp_cursor_next(c, &ci) == HP_OK)
      name_add(&cs, ci.id, ci.name);
    hp_cursor_close(c);
  }
  /* dispatch row id -> kernel */
  names dk = {0};
  uint64_t nd = 0;
  hp_dispatch d = {.size = sizeof d};
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    while (hp_cursor_next(c, &d) == HP_OK) {
      char b[32];
      snprintf(b, sizeof b, "%" PRIu64, d.kernel_id);
      name_add(&dk, d.id, b);
      nd++;
    }
    hp_cursor_close(c);
  }
  item *it = NULL;
  size_t ni = 0;
  names seen = {0};
  hp_counter_value v = {.size = sizeof v};
  if (hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c) == HP_OK) {
    while (hp_cursor_next(c, &v) == HP_OK) {
      if (!v.dispatch_id) continue;
      uint64_t kid = strtoull(name_of(&dk, v.dispatch_id), NULL, 10);
      if (strcmp(name_of(&seen, v.dispatch_id), "(unknown)") == 0) name_add(&seen, v.dispatch_id, "");
      size_t i = 0;
      while (i < ni && (it[i].kernel != kid || it[i].counter != v.counter_id))
        i++;
      if (i == ni) {
        it = realloc(it, (ni + 1) * sizeof *it);
        if (!it) return 1;
        it[ni++] = (item){.kernel = kid, .counter = v.counter_id, .pass = v.pass};
      }
      if (it[i].n == it[i].cap) {
        it[i].cap = it[i].cap ? 2 * it[i].cap : 8;
        it[i].v = realloc(it[i].v, it[i].cap * sizeof *it[i].v);
        if (!it[i].v) return 1;
      }
      it[i].v[it[i].n++] = v.value;
    }
    hp_cursor_close(c);
  }
  for (size_t i = 0; i < ni; i++) {
    qsort(it[i].v, it[i].n, sizeof *it[i].v, cmp);
    double med = it[i].n % 2 ? it[i].v[it[i].n / 2] : (it[i].v[it[i].n / 2 - 1] + it[i].v[it[i].n / 2]) / 2;
    printf("value %s %s %.17g %zu %u\n", name_of(&ks, it[i].kernel), name_of(&cs, it[i].counter), med,
           it[i].n, it[i].pass);
  }
  printf("dispatches %" PRIu64 " with_values %zu\n", nd, seen.n);
  hp_store_close(s);
  return 0;
}
