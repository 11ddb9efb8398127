/* Parquet helper: the RLE / bit-packed hybrid encoding (Encodings.md) of dictionary indices and
 * definition levels. The encoder picks RLE runs for 8 or more equal values and bit-packs the rest in groups
 * of 8; the decoder is bounded by its input and never trusts a run length. */
/* SPDX-License-Identifier: MIT */
#include "parquet_internal.h"

#include <string.h>

/* ---- encoder ---- */
/* One bit-packed run of the n values at v, padded with zeros to whole groups of 8 (only the last run
 * of a page may be padded: its value count says where the values end). */
static void put_packed(hu_buf *b, const uint32_t *v, size_t n, int bw) {
  size_t groups = (n + 7) / 8;
  hu_buf_varint(b, (uint64_t)groups << 1 | 1);
  if (hu_buf_reserve(b, groups * (size_t)bw)) return;
  uint64_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < groups * 8; i++) {
    acc |= (uint64_t)(i < n ? v[i] : 0) << bits;
    bits += bw;
    while (bits >= 8) {
      b->p[b->n++] = (unsigned char)acc;
      acc >>= 8;
      bits -= 8;
    }
  }
}

static void put_run(hu_buf *b, uint32_t value, size_t count, int bw) {
  hu_buf_varint(b, (uint64_t)count << 1);
  for (int i = 0; i < (bw + 7) / 8; i++)
    hu_buf_byte(b, (value >> (8 * i)) & 0xff);
}

void pq_rle_encode(hu_buf *b, const uint32_t *v, size_t n, int bw) {
  size_t lit = 0; /* start of the pending literals v[lit..i) */
  size_t i = 0;
  while (i < n) {
    size_t r = 1;
    while (i + r < n && v[i + r] == v[i])
      r++;
    if (r < 8) {
      i += r;
      continue;
    }
    /* complete the pending literals to whole groups with values of this run, then the run */
    size_t fill = (8 - (i - lit) % 8) % 8;
    i += fill;
    r -= fill;
    if (i > lit) put_packed(b, v + lit, i - lit, bw);
    put_run(b, v[i], r, bw);
    i += r;
    lit = i;
  }
  if (lit < n) put_packed(b, v + lit, n - lit, bw);
}

/* ---- decoder ---- */
void pq_rle_init(pq_rle_dec *d, const unsigned char *p, const unsigned char *end, int bw) {
  memset(d, 0, sizeof *d);
  d->p = p;
  d->end = end;
  d->bw = bw;
}

/* Unpack the next group of 8 values of the current bit-packed run; a short last group reads as zeros. */
static int unpack_group(pq_rle_dec *d) {
  size_t need = (size_t)d->bw;
  size_t have = (size_t)(d->end - d->p);
  if (have == 0 && need) return -1;
  unsigned char g[32] = {0};
  size_t take = have < need ? have : need;
  memcpy(g, d->p, take);
  d->p += take;
  uint64_t mask = d->bw == 32 ? 0xffffffffu : ((uint64_t)1 << d->bw) - 1;
  for (int k = 0; k < 8; k++) {
    size_t bit = (size_t)k * (size_t)d->bw;
    uint64_t w = 0;
    for (size_t j = 0; j < 5 && bit / 8 + j < 32; j++)
      w |= (uint64_t)g[bit / 8 + j] << (8 * j);
    d->buf[k] = (uint32_t)((w >> (bit % 8)) & mask);
  }
  d->buf_i = 0;
  d->buf_n = 8;
  return 0;
}

/* The next run's header (no values left before it): an RLE run's value and count, or a bit-packed size. */
static int run_header(pq_rle_dec *d) {
  uint64_t h;
  if (!hu_varint_get(&d->p, d->end, &h)) return -1;
  if (h & 1) {
    uint64_t groups = h >> 1;
    if (groups == 0 || groups > ((uint64_t)1 << 40)) return -1;
    d->bp_left = groups * 8;
    return 0;
  }
  uint64_t count = h >> 1;
  if (count == 0 || count > UINT32_MAX) return -1;
  int nb = (d->bw + 7) / 8;
  if (d->end - d->p < nb) return -1;
  uint32_t v = 0;
  for (int i = 0; i < nb; i++)
    v |= (uint32_t)d->p[i] << (8 * i);
  d->p += nb;
  if (d->bw < 32 && (v >> d->bw)) return -1;
  d->rle_val = v;
  d->rle_left = (uint32_t)count;
  return 0;
}

int pq_rle_next(pq_rle_dec *d, uint32_t *out) {
  for (;;) {
    if (d->buf_i < d->buf_n) {
      *out = d->buf[d->buf_i++];
      return 0;
    }
    if (d->rle_left) {
      d->rle_left--;
      *out = d->rle_val;
      return 0;
    }
    if (d->bp_left) {
      d->bp_left -= 8;
      if (unpack_group(d)) return -1;
      continue;
    }
    if (run_header(d)) return -1;
  }
}

size_t pq_rle_take_run(pq_rle_dec *d, uint32_t want, size_t n) {
  if (d->buf_i < d->buf_n || d->bp_left) return 0;
  if (!d->rle_left) {
    const unsigned char *at = d->p;
    if (run_header(d)) {
      d->p = at; /* as it was: pq_rle_batch meets the same damage */
      d->bp_left = 0;
      d->rle_left = 0;
      return 0;
    }
  }
  if (d->bp_left || d->rle_val != want || d->rle_left < n) return 0;
  d->rle_left -= (uint32_t)n;
  return n;
}

size_t pq_rle_batch(pq_rle_dec *d, uint32_t *out, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (d->buf_i < d->buf_n) {
      out[got++] = d->buf[d->buf_i++];
      continue;
    }
    if (d->rle_left) {
      size_t k = n - got < d->rle_left ? n - got : d->rle_left;
      for (size_t i = 0; i < k; i++)
        out[got + i] = d->rle_val;
      got += k;
      d->rle_left -= (uint32_t)k;
      continue;
    }
    uint32_t v;
    if (pq_rle_next(d, &v)) break; /* reads the next run header (or unpacks a group) */
    out[got++] = v;
  }
  return got;
}
