/* Parquet value decoders beyond PLAIN and dictionaries (Encodings.md): DELTA_BINARY_PACKED (also the
 * lengths of DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY), and the conversions of INT96 timestamps. Every
 * decoder is bounded by its input: header values are checked (block sizes, bit widths <= 64, counts) and
 * a miniblock is read only when its bytes are there. */
/* SPDX-License-Identifier: MIT */
#include "parquet_internal.h"

#include <string.h>

/* ---- DELTA_BINARY_PACKED ---- */
#define DELTA_MAX_BLOCK (1u << 16) /* values per block at most (writers use 128..1024) */

static int uvar(pq_delta *d, uint64_t *v) { return hu_varint_get(&d->p, d->end, v) ? 0 : -1; }

int pq_delta_init(pq_delta *d, const unsigned char *p, const unsigned char *end) {
  memset(d, 0, sizeof *d);
  d->p = p;
  d->end = end;
  uint64_t bs, nm, total, first;
  if (uvar(d, &bs) || uvar(d, &nm) || uvar(d, &total) || uvar(d, &first)) return -1;
  if (bs == 0 || bs % 128 || bs > DELTA_MAX_BLOCK || nm == 0 || bs % nm || (bs / nm) % 32) return -1;
  d->block = bs;
  d->nmini = nm;
  d->vpm = bs / nm;
  d->left = total;
  d->last = hu_unzigzag(first);
  d->first = total > 0;
  d->mini_i = nm; /* a block header comes first */
  return 0;
}

/* Start the next miniblock (reading a block header first when the block is done). */
static int next_mini(pq_delta *d) {
  if (d->mini_i >= d->nmini) {
    uint64_t md;
    if (uvar(d, &md)) return -1;
    d->min_delta = (uint64_t)hu_unzigzag(md);
    if ((uint64_t)(d->end - d->p) < d->nmini) return -1;
    d->bws = d->p;
    d->p += d->nmini;
    d->mini_i = 0;
  }
  int bw = d->bws[d->mini_i++];
  if (bw > 64) return -1;
  uint64_t need = d->left < d->vpm ? d->left : d->vpm; /* values this miniblock must give */
  uint64_t full = d->vpm * (uint64_t)bw / 8, used = (need * (uint64_t)bw + 7) / 8;
  uint64_t have = (uint64_t)(d->end - d->p);
  if (used > have) return -1;
  d->mp = d->p;
  d->mbw = bw;
  d->bit = 0;
  d->mini_left = need;
  d->p += full < have ? full : have; /* the last miniblock should be padded; accept it cut after its values */
  return 0;
}

static uint64_t get_bits(const unsigned char *p, uint64_t bit, int bw) {
  if (!bw) return 0;
  const unsigned char *q = p + (bit >> 3);
  int sh = (int)(bit & 7), got = 0;
  uint64_t v = 0;
  while (got < bw) {
    v |= (uint64_t)(*q++ >> sh) << got;
    got += 8 - sh;
    sh = 0;
  }
  return bw < 64 ? v & (((uint64_t)1 << bw) - 1) : v;
}

size_t pq_delta_get(pq_delta *d, uint64_t *out, size_t n) {
  size_t got = 0;
  while (got < n && d->left) {
    if (d->first) {
      d->first = 0;
      d->left--;
      out[got++] = d->last;
      continue;
    }
    if (!d->mini_left && next_mini(d)) {
      d->err = 1;
      break;
    }
    d->last += d->min_delta + get_bits(d->mp, d->bit, d->mbw);
    d->bit += (uint64_t)d->mbw;
    d->mini_left--;
    d->left--;
    out[got++] = d->last;
  }
  return got;
}

const unsigned char *pq_delta_end(const pq_delta *d0) {
  pq_delta d = *d0;
  if (d.first && d.left) {
    d.first = 0;
    d.left--;
  }
  if (d.mini_left) {
    d.left = d.left > d.mini_left ? d.left - d.mini_left : 0;
    d.mini_left = 0;
  }
  while (d.left) {
    if (next_mini(&d)) return NULL;
    d.left -= d.mini_left;
    d.mini_left = 0;
  }
  /* the bit widths of a last block's unused miniblocks are present, their bodies are not */
  return d.p;
}

/* ---- INT96 timestamps: 8 bytes of nanoseconds in the day, 4 bytes of Julian day (little-endian) ---- */
int64_t pq_int96_ns(const unsigned char *p) {
  uint64_t ns = 0;
  uint32_t jd = 0;
  for (int i = 0; i < 8; i++)
    ns |= (uint64_t)p[i] << (8 * i);
  for (int i = 0; i < 4; i++)
    jd |= (uint32_t)p[8 + i] << (8 * i);
  return (int64_t)(((uint64_t)jd - 2440588u) * 86400000000000ull + ns); /* 2440588: 1970-01-01 */
}
