/* Hash maps used across hubprof: an id map (64-bit id -> 64-bit value, e.g. a row id to its index) and a
 * string interner (each distinct string gets a dense index, in first-appearance order, and one owned copy).
 * Open addressing, linear probing, at most half full; the hash is hu_hash.h's. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_MAP_H
#define HUBPROF_HU_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Key 0 is never stored (ids of present rows are never 0): put ignores it, get finds nothing. */
typedef struct hu_idmap {
  uint64_t *keys; /* 0 = empty slot */
  uint64_t *vals;
  size_t cap, n; /* slots (a power of two), keys stored; invariant 2n <= cap (asserted in debug builds) */
} hu_idmap;

/* Set k's value (replacing an earlier one): 0, or -1 when out of memory (the map is unchanged). */
int hu_idmap_put(hu_idmap *m, uint64_t k, uint64_t v);
/* 1 with *v set when k is in the map, else 0 (v may be NULL). */
int hu_idmap_get(const hu_idmap *m, uint64_t k, uint64_t *v);
void hu_idmap_free(hu_idmap *m);

typedef struct hu_strmap {
  char **strs;    /* index -> the owned copy */
  size_t n, capn; /* strings, capacity of strs */
  uint32_t *slot; /* index + 1, 0 = empty */
  size_t cap;     /* slots (a power of two) */
} hu_strmap;

/* Index of s, added (copied) when new: *added tells which (may be NULL). -1 when out of memory. */
long hu_strmap_intern(hu_strmap *m, const char *s, int *added);
/* Index of s, or -1 when absent. */
long hu_strmap_find(const hu_strmap *m, const char *s);
/* The owned copy of string i (valid until hu_strmap_free; never moves). */
static inline const char *hu_strmap_str(const hu_strmap *m, size_t i) { return i < m->n ? m->strs[i] : NULL; }
void hu_strmap_free(hu_strmap *m);

#endif
