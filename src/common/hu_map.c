/* Id map and string interner (hu_map.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_map.h"

#include "hu_hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- id map ---- */

static int idmap_grow(hu_idmap *m) {
  if (m->cap > SIZE_MAX / 2 / sizeof *m->keys) return -1;
  size_t nc = m->cap ? m->cap * 2 : 64;
  uint64_t *nk = calloc(nc, sizeof *nk), *nv = malloc(nc * sizeof *nv);
  if (!nk || !nv) {
    free(nk);
    free(nv);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = (size_t)hu_mix64(m->keys[i]) & (nc - 1);
    while (nk[j])
      j = (j + 1) & (nc - 1);
    nk[j] = m->keys[i];
    nv[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = nk;
  m->vals = nv;
  m->cap = nc;
  return 0;
}

/* The map's invariant (hu_map.h): slots a power of two (or none), at most half of them used. */
#define MAP_OK(m) (((m)->cap & ((m)->cap - 1)) == 0 && 2 * (m)->n <= (m)->cap)

int hu_idmap_put(hu_idmap *m, uint64_t k, uint64_t v) {
  assert(MAP_OK(m));
  if (!k) return 0;
  if (2 * (m->n + 1) > m->cap && idmap_grow(m)) return -1;
  assert(2 * (m->n + 1) <= m->cap); /* room for one more after growth: the probe below ends */
  size_t j = (size_t)hu_mix64(k) & (m->cap - 1);
  while (m->keys[j] && m->keys[j] != k)
    j = (j + 1) & (m->cap - 1);
  if (!m->keys[j]) m->n++;
  m->keys[j] = k;
  m->vals[j] = v;
  return 0;
}

int hu_idmap_get(const hu_idmap *m, uint64_t k, uint64_t *v) {
  assert(MAP_OK(m));
  if (!k || !m->cap) return 0;
  for (size_t j = (size_t)hu_mix64(k) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == k) {
      if (v) *v = m->vals[j];
      return 1;
    }
  return 0;
}

void hu_idmap_free(hu_idmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- string interner ---- */

static size_t str_slot(const hu_strmap *m, const char *s) {
  size_t j = (size_t)hu_hash_str(s) & (m->cap - 1);
  while (m->slot[j] && strcmp(m->strs[m->slot[j] - 1], s) != 0)
    j = (j + 1) & (m->cap - 1);
  return j;
}

long hu_strmap_find(const hu_strmap *m, const char *s) {
  if (!m->cap) return -1;
  size_t j = str_slot(m, s);
  return m->slot[j] ? (long)m->slot[j] - 1 : -1;
}

long hu_strmap_intern(hu_strmap *m, const char *s, int *added) {
  assert(MAP_OK(m) && m->n <= m->capn);
  if (added) *added = 0;
  if (m->n >= UINT32_MAX - 1) return -1;
  if (2 * (m->n + 1) > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    uint32_t *ns = calloc(nc, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < m->n; i++) {
      size_t j = (size_t)hu_hash_str(m->strs[i]) & (nc - 1);
      while (ns[j])
        j = (j + 1) & (nc - 1);
      ns[j] = (uint32_t)(i + 1);
    }
    free(m->slot);
    m->slot = ns;
    m->cap = nc;
  }
  assert(2 * (m->n + 1) <= m->cap);
  size_t j = str_slot(m, s);
  if (m->slot[j]) return (long)m->slot[j] - 1;
  if (m->n == m->capn) {
    size_t nc = m->capn ? m->capn * 2 : 16;
    char **v = realloc(m->strs, nc * sizeof *v);
    if (!v) return -1;
    m->strs = v;
    m->capn = nc;
  }
  char *c = strdup(s);
  if (!c) return -1;
  m->strs[m->n] = c;
  m->slot[j] = (uint32_t)(m->n + 1);
  if (added) *added = 1;
  return (long)m->n++;
}

void hu_strmap_free(hu_strmap *m) {
  for (size_t i = 0; i < m->n; i++)
    free(m->strs[i]);
  free(m->strs);
  free(m->slot);
  memset(m, 0, sizeof *m);
}
