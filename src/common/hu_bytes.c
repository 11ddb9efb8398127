/* SHA-256 and base64 for the code bytes a store keeps (hu_bytes.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_bytes.h"

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned r) { return (x >> r) | (x << (32 - r)); }

static void block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] =
        (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void hu_sha256_init(hu_sha256 *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->n = 0;
}

void hu_sha256_update(hu_sha256 *c, const void *data, size_t n) {
  const unsigned char *p = data;
  size_t have = (size_t)(c->n % 64);
  c->n += n;
  if (have) {
    size_t take = 64 - have < n ? 64 - have : n;
    memcpy(c->b + have, p, take);
    p += take;
    n -= take;
    if (have + take < 64) return;
    block(c->h, c->b);
  }
  for (; n >= 64; p += 64, n -= 64)
    block(c->h, p);
  memcpy(c->b, p, n);
}

void hu_sha256_final(hu_sha256 *c, unsigned char out[32]) {
  uint64_t bits = c->n * 8;
  size_t have = (size_t)(c->n % 64);
  c->b[have++] = 0x80;
  if (have > 56) {
    memset(c->b + have, 0, 64 - have);
    block(c->h, c->b);
    have = 0;
  }
  memset(c->b + have, 0, 56 - have);
  for (int i = 0; i < 8; i++)
    c->b[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
  block(c->h, c->b);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (unsigned char)(c->h[i] >> (24 - 8 * j));
}

void hu_sha256_hex(const void *p, size_t n, char out[65]) {
  static const char hx[] = "0123456789abcdef";
  hu_sha256 c;
  unsigned char d[32];
  hu_sha256_init(&c);
  hu_sha256_update(&c, p, n);
  hu_sha256_final(&c, d);
  for (int i = 0; i < 32; i++) {
    out[2 * i] = hx[d[i] >> 4];
    out[2 * i + 1] = hx[d[i] & 15];
  }
  out[64] = 0;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t hu_base64_encode(const void *data, size_t n, char *out) {
  const unsigned char *p = data;
  char *o = out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v =
        (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    *o++ = B64[v >> 18];
    *o++ = B64[(v >> 12) & 63];
    *o++ = i + 1 < n ? B64[(v >> 6) & 63] : '=';
    *o++ = i + 2 < n ? B64[v & 63] : '=';
  }
  *o = 0;
  return (size_t)(o - out);
}

static int b64val(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

long hu_base64_decode(const char *text, size_t len, unsigned char *out) {
  const unsigned char *t = (const unsigned char *)text;
  if (len % 4) return -1;
  long n = 0;
  for (size_t i = 0; i < len; i += 4) {
    int last = i + 4 == len;
    int pad = last ? (t[i + 3] == '=') + (t[i + 2] == '=') : 0;
    if (pad == 1 && t[i + 2] == '=') return -1; /* "x=y=" */
    uint32_t v = 0;
    for (int j = 0; j < 4 - pad; j++) {
      int x = b64val(t[i + j]);
      if (x < 0) return -1;
      v |= (uint32_t)x << (18 - 6 * j);
    }
    out[n++] = (unsigned char)(v >> 16);
    if (pad < 2) out[n++] = (unsigned char)(v >> 8);
    if (pad < 1) out[n++] = (unsigned char)v;
  }
  return n;
}
