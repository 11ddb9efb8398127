/* Byte encodings shared by the formats: little-endian words, LEB128 varints (unsigned, 7 bits a byte, low
 * group first, as Parquet's Thrift compact protocol and the hub's log use), zigzag for signed values.
 * Inline and allocation-free: the log encoder's hot path uses them. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_VARINT_H
#define HUBPROF_HU_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HU_VARINT_MAX 10  /* bytes of the longest varint (a 64-bit value) */
#define HU_VARINT_ROOM 10 /* bytes hu_varint_put may write: keep this much room at p */

static inline uint32_t hu_get_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t hu_get_le64(const unsigned char *p) {
  return hu_get_le32(p) | (uint64_t)hu_get_le32(p + 4) << 32;
}
static inline void hu_put_le32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}
static inline void hu_put_le64(unsigned char *p, uint64_t v) {
  hu_put_le32(p, (uint32_t)v);
  hu_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* v as a varint at p; returns the byte after it. Below 2^56 on little-endian machines it is one 8-byte
 * store whose bytes past the varint are zeros, so the caller keeps HU_VARINT_ROOM bytes of room at p. */
static inline unsigned char *hu_varint_put(unsigned char *p, uint64_t v) {
  if (v < 0x80) {
    *p = (unsigned char)v;
    return p + 1;
  }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (v < (1ull << 56)) {
    unsigned n = (unsigned)(70 - __builtin_clzll(v)) / 7;
    uint64_t x = (v & 0x7f) | (v << 1 & 0x7f00) | (v << 2 & 0x7f0000) | (v << 3 & 0x7f000000) |
                 (v << 4 & 0x7f00000000) | (v << 5 & 0x7f0000000000) | (v << 6 & 0x7f000000000000) |
                 (v << 7 & 0x7f00000000000000);
    x |= 0x8080808080808080ull >> (8 * (9 - n)); /* continuation bits of all bytes but the last */
    memcpy(p, &x, 8);
    return p + n;
  }
#endif
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* v in exactly n bytes (n at least its varint size): non-minimal LEB128, which every reader accepts. */
static inline void hu_varint_put_n(unsigned char *p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i + 1 < n; i++) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p = (unsigned char)v;
}

/* Bytes of v's (minimal) varint: 1 to 10. */
static inline unsigned hu_varint_len(uint64_t v) {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Read a varint from *pp, never past end: 1 with *out set and *pp advanced, or 0 when it is cut short or
 * longer than 10 bytes (*pp unchanged). Bits past the 64th are dropped. */
static inline int hu_varint_get(const unsigned char **pp, const unsigned char *end, uint64_t *out) {
  const unsigned char *p = *pp;
  uint64_t v = 0;
  for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
    unsigned char b = *p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *pp = p;
      *out = v;
      return 1;
    }
  }
  return 0;
}

/* n bytes from src to dst, without a call into libc for the short strings of a hot path (4 to 16 bytes: two
 * overlapping loads and stores); longer or shorter ones by memcpy. */
static inline void hu_copy_short(void *dst, const void *src, size_t n) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else {
    memcpy(d, s, n);
  }
}

static inline uint64_t hu_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t hu_unzigzag(uint64_t u) { return (int64_t)((u >> 1) ^ (~(u & 1) + 1)); }

#endif
