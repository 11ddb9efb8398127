/* Hashing for hash tables (never stored in files): a 64-bit finaliser to spread integer keys over the
 * slots, and FNV-1a over bytes and strings. Inline: the log writer's and reader's tables use them. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_HASH_H
#define HUBPROF_HU_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HU_FNV_BASIS 0xcbf29ce484222325ull /* FNV-1a 64-bit offset basis */
#define HU_FNV_PRIME 0x100000001b3ull

/* Bijective mix of all 64 bits into all 64 bits (the MurmurHash3 finaliser): low bits fit for masks. */
static inline uint64_t hu_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

/* FNV-1a over n bytes, continuing from h (HU_FNV_BASIS to start). */
static inline uint64_t hu_fnv1a(const void *p, size_t n, uint64_t h) {
  const unsigned char *s = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * HU_FNV_PRIME;
  return h;
}

/* Hash of a NUL-terminated string, mixed so that its low bits serve as a slot index. */
static inline uint64_t hu_hash_str(const char *s) {
  uint64_t h = HU_FNV_BASIS;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * HU_FNV_PRIME;
  return hu_mix64(h);
}

/* The same for n bytes: hu_hash_bytes(s, strlen(s)) == hu_hash_str(s). */
static inline uint64_t hu_hash_bytes(const void *p, size_t n) {
  return hu_mix64(hu_fnv1a(p, n, HU_FNV_BASIS));
}

#endif
