/* The values table of CUDA counters (prov_cuda_range.h): a launch's evaluated ranges, from its call's end to
 * its kernel records, keyed by correlation id. No CUPTI call: tests/cuda/test_cuda_range.c drives it alone.
 */
/* SPDX-License-Identifier: MIT */
#include "prov_cuda_range.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct rv_slot {
  _Atomic uint64_t key;   /* (corr << 16 | k) + 1; 0 while empty or being written */
  _Atomic uint32_t taken; /* slot of k = 0: ranges of its launch taken so far */
  uint32_t n, passes;     /* values; CUPTI passes of the configuration */
  const uint64_t *ids;    /* counter_info ids of the values */
  const uint32_t *pass;   /* hubprof's pass of each value */
  double *vals;           /* nmax entries */
} rv_slot;

struct hpc_cu_rv {
  rv_slot *slot;
  double *vals;
  size_t mask, nmax;
};

hpc_cu_rv *hpc_cu_rv_new(unsigned bits, size_t nmax) {
  hpc_cu_rv *t = calloc(1, sizeof *t);
  size_t n = (size_t)1 << bits;
  if (!t || !nmax || !(t->slot = calloc(n, sizeof *t->slot)) ||
      !(t->vals = calloc(n * nmax, sizeof *t->vals))) {
    hpc_cu_rv_free(t);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    t->slot[i].vals = t->vals + i * nmax;
  t->mask = n - 1;
  t->nmax = nmax;
  return t;
}

void hpc_cu_rv_free(hpc_cu_rv *t) {
  if (!t) return;
  free(t->slot);
  free(t->vals);
  free(t);
}

static uint64_t key_of(uint32_t corr, uint32_t k) { return ((uint64_t)corr << 16 | (k & 0xffffu)) + 1; }
static rv_slot *slot_of(hpc_cu_rv *t, uint64_t key) {
  return &t->slot[(size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & t->mask];
}

void hpc_cu_rv_put(hpc_cu_rv *t, uint32_t corr, uint32_t k, const double *vals, const uint64_t *ids,
                   const uint32_t *pass, size_t n, uint32_t passes) {
  if (!t || !corr || k > 0xffffu) return;
  uint64_t key = key_of(corr, k);
  rv_slot *s = slot_of(t, key);
  if (n > t->nmax) n = t->nmax;
  atomic_store_explicit(&s->key, 0, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  memcpy(s->vals, vals, n * sizeof *vals);
  s->n = (uint32_t)n;
  s->passes = passes;
  s->ids = ids;
  s->pass = pass;
  if (k == 0) atomic_store_explicit(&s->taken, 0, memory_order_relaxed);
  atomic_store_explicit(&s->key, key, memory_order_release);
}

size_t hpc_cu_rv_take(hpc_cu_rv *t, uint32_t corr, uint64_t dispatch_row, hp_counter_value *out, size_t max,
                      uint32_t *passes) {
  *passes = 0;
  if (!t || !corr) return 0;
  rv_slot *first = slot_of(t, key_of(corr, 0));
  if (atomic_load_explicit(&first->key, memory_order_acquire) != key_of(corr, 0)) return 0;
  uint32_t k = atomic_fetch_add_explicit(&first->taken, 1, memory_order_relaxed);
  uint64_t key = key_of(corr, k);
  rv_slot *s = slot_of(t, key);
  if (atomic_load_explicit(&s->key, memory_order_acquire) != key) return 0;
  size_t n = s->n < max ? s->n : max;
  for (size_t i = 0; i < n; i++)
    out[i] = (hp_counter_value){.size = sizeof *out,
                                .dispatch_id = dispatch_row,
                                .counter_id = s->ids[i],
                                .pass = s->pass[i],
                                .value = s->vals[i]};
  uint32_t p = s->passes;
  atomic_thread_fence(memory_order_acquire);
  if (atomic_load_explicit(&s->key, memory_order_relaxed) != key) return 0; /* rewritten while copied */
  *passes = p;
  return n;
}
