/* Tests of the Parquet reader's decoders (parquet_codec.c, parquet_decode.c, parquet_rle.c's take of a whole
 * run): DELTA_BINARY_PACKED streams
 * from an independent encoder (every bit width 0..64, wrapping deltas, several blocks, the end position),
 * bad DELTA headers and cut streams refused, page decompression of every codec checked against the
 * declared size, INT96 timestamps, and the names used in messages. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "parquet_internal.h"

#include <snappy-c.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* ---- an independent DELTA_BINARY_PACKED encoder (block of 128 values, 4 miniblocks of 32) ---- */
static size_t put_uvar(unsigned char *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (unsigned char)v;
  return n;
}
static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static size_t delta_encode(const uint64_t *v, size_t n, unsigned char *out) {
  size_t o = 0;
  o += put_uvar(out + o, 128);
  o += put_uvar(out + o, 4);
  o += put_uvar(out + o, n);
  o += put_uvar(out + o, zz(n ? (int64_t)v[0] : 0));
  for (size_t b = 1; b < n; b += 128) {
    size_t m = n - b < 128 ? n - b : 128;
    uint64_t d[128];
    int64_t min = INT64_MAX;
    for (size_t i = 0; i < m; i++) {
      d[i] = v[b + i] - v[b + i - 1];
      if ((int64_t)d[i] < min) min = (int64_t)d[i];
    }
    o += put_uvar(out + o, zz(min));
    unsigned char *bws = out + o;
    o += 4;
    for (int k = 0; k < 4; k++) {
      bws[k] = 0;
      if ((size_t)k * 32 >= m) continue; /* unused miniblocks of the last block: width byte only */
      int bw = 0;
      for (size_t i = (size_t)k * 32; i < m && i < (size_t)k * 32 + 32; i++) {
        uint64_t x = d[i] - (uint64_t)min;
        int w = 0;
        while (w < 64 && (x >> w))
          w++;
        if (w > bw) bw = w;
      }
      bws[k] = (unsigned char)bw;
      memset(out + o, 0, (size_t)bw * 4);
      for (size_t j = 0; j < 32; j++) { /* padded to 32 values */
        size_t i = (size_t)k * 32 + j;
        uint64_t x = i < m ? d[i] - (uint64_t)min : 0;
        for (int bit = 0; bit < bw; bit++)
          if (x >> bit & 1)
            out[o + (j * (size_t)bw + (size_t)bit) / 8] |= (unsigned char)(1u << ((j * bw + bit) % 8));
      }
      o += (size_t)bw * 4;
    }
  }
  return o;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void check_roundtrip(const uint64_t *v, size_t n, const char *what) {
  static unsigned char enc[1 << 20];
  size_t len = delta_encode(v, n, enc);
  enc[len] = 0xAB; /* a byte after the stream: pq_delta_end must stop before it */
  pq_delta d;
  CHECK_MSG(pq_delta_init(&d, enc, enc + len + 1) == 0, "%s: header", what);
  const unsigned char *end = pq_delta_end(&d);
  CHECK_MSG(end == enc + len, "%s: end at %td of %zu", what, end ? end - enc : -1, len);
  uint64_t out[300];
  size_t got = 0, bad = 0;
  while (got < n) {
    size_t k = pq_delta_get(&d, out, n - got < 77 ? n - got : 77); /* odd batch sizes */
    if (!k) break;
    for (size_t i = 0; i < k; i++)
      bad += out[i] != v[got + i];
    got += k;
  }
  CHECK_MSG(got == n && bad == 0 && !d.err, "%s: %zu of %zu values, %zu wrong", what, got, n, bad);
  CHECK_MSG(pq_delta_get(&d, out, 1) == 0, "%s: a value past the count", what);
}

static void test_delta(void) {
  uint64_t v[1000];
  /* constant (bit width 0), counting, random of each width, extremes (64-bit wrapping deltas) */
  for (size_t i = 0; i < 1000; i++)
    v[i] = 42;
  check_roundtrip(v, 1000, "constant");
  for (size_t i = 0; i < 1000; i++)
    v[i] = 1000000 + i * 3;
  check_roundtrip(v, 1000, "counting");
  for (int w = 1; w <= 64; w++) {
    for (size_t i = 0; i < 300; i++)
      v[i] = w == 64 ? next_rand() : next_rand() & (((uint64_t)1 << w) - 1);
    char what[32];
    snprintf(what, sizeof what, "random %d bits", w);
    check_roundtrip(v, 300, what);
  }
  uint64_t ext[] = {0, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, 1, UINT64_MAX, (uint64_t)INT64_MIN, 0};
  check_roundtrip(ext, 7, "extremes");
  check_roundtrip(v, 1, "one value");
  check_roundtrip(v, 129, "one block and one value");
  check_roundtrip(v, 0, "empty");
  /* INT32 values wrap in their low half: decoded 64-bit words agree there */
  uint64_t i32[] = {(uint32_t)INT32_MAX, (uint32_t)INT32_MIN, 5, (uint32_t)-7};
  check_roundtrip(i32, 4, "int32 words");

  /* bad headers */
  unsigned char h[32];
  pq_delta d;
  size_t o = put_uvar(h, 100); /* block size not a multiple of 128 */
  o += put_uvar(h + o, 4);
  o += put_uvar(h + o, 10);
  o += put_uvar(h + o, 0);
  CHECK(pq_delta_init(&d, h, h + o) != 0);
  o = put_uvar(h, 128); /* 3 miniblocks: 128/3 is not whole */
  o += put_uvar(h + o, 3);
  o += put_uvar(h + o, 10);
  o += put_uvar(h + o, 0);
  CHECK(pq_delta_init(&d, h, h + o) != 0);
  o = put_uvar(h, (uint64_t)1 << 40); /* a huge block */
  o += put_uvar(h + o, 4);
  o += put_uvar(h + o, 10);
  o += put_uvar(h + o, 0);
  CHECK(pq_delta_init(&d, h, h + o) != 0);
  CHECK(pq_delta_init(&d, h, h + 2) != 0); /* cut header */
  /* bit width 65 */
  static unsigned char s[4096];
  for (size_t i = 0; i < 40; i++)
    v[i] = i * i;
  size_t len = delta_encode(v, 40, s);
  size_t bw_at = 5 + 1; /* header: 128 (2 bytes), 4, 40, zz(0); the block's min delta (1 byte) */
  s[bw_at] = 65;
  CHECK(pq_delta_init(&d, s, s + len) == 0);
  uint64_t out[64];
  CHECK(pq_delta_end(&d) == NULL);
  CHECK(pq_delta_get(&d, out, 40) == 1 && d.err); /* the first value, then the bad width */
  /* a stream cut inside a miniblock: fewer values and an error, never a read past the end */
  len = delta_encode(v, 40, s);
  CHECK(pq_delta_init(&d, s, s + len - 30) == 0);
  CHECK(pq_delta_get(&d, out, 40) < 40 && d.err);
  CHECK(pq_delta_init(&d, s, s + len - 30) == 0 && pq_delta_end(&d) == NULL);
  /* a count larger than the data */
  o = put_uvar(h, 128);
  o += put_uvar(h + o, 4);
  o += put_uvar(h + o, 1000000);
  o += put_uvar(h + o, 0);
  CHECK(pq_delta_init(&d, h, h + o) == 0);
  CHECK(pq_delta_get(&d, out, 64) == 1 && d.err);
}

/* ---- codecs ---- */
static void test_codecs(void) {
  char err[200];
  unsigned char src[5000], comp[8000], dst[6000];
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (unsigned char)(i % 17 == 0 ? next_rand() : i / 100);
  ZSTD_DCtx *z = ZSTD_createDCtx();
  /* uncompressed */
  CHECK(pq_decompress(PQ_CODEC_UNCOMPRESSED, z, src, 100, dst, 100, err, sizeof err) == 0 &&
        !memcmp(src, dst, 100));
  CHECK(pq_decompress(PQ_CODEC_UNCOMPRESSED, z, src, 100, dst, 99, err, sizeof err) != 0 &&
        strstr(err, "two sizes"));
  /* snappy: the exact size, then a header that declares another size, then damage */
  size_t cn = sizeof comp;
  CHECK(snappy_compress((const char *)src, sizeof src, (char *)comp, &cn) == SNAPPY_OK);
  CHECK(pq_decompress(PQ_CODEC_SNAPPY, z, comp, cn, dst, sizeof src, err, sizeof err) == 0 &&
        !memcmp(src, dst, sizeof src));
  CHECK_MSG(pq_decompress(PQ_CODEC_SNAPPY, z, comp, cn, dst, sizeof src - 1, err, sizeof err) != 0 &&
                strstr(err, "its header says"),
            "%s", err);
  CHECK(pq_decompress(PQ_CODEC_SNAPPY, z, comp, cn / 2, dst, sizeof src, err, sizeof err) != 0);
  /* gzip: one member, two members, a declared size too small or too large, cut */
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  CHECK(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  zs.next_in = src;
  zs.avail_in = sizeof src;
  zs.next_out = comp;
  zs.avail_out = sizeof comp;
  CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  size_t gn = sizeof comp - zs.avail_out;
  deflateEnd(&zs);
  CHECK(pq_decompress(PQ_CODEC_GZIP, z, comp, gn, dst, sizeof src, err, sizeof err) == 0 &&
        !memcmp(src, dst, sizeof src));
  CHECK(pq_decompress(PQ_CODEC_GZIP, z, comp, gn, dst, sizeof src - 1, err, sizeof err) != 0);
  CHECK_MSG(pq_decompress(PQ_CODEC_GZIP, z, comp, gn, dst, sizeof src + 10, err, sizeof err) != 0 &&
                strstr(err, "its header says"),
            "%s", err);
  CHECK(pq_decompress(PQ_CODEC_GZIP, z, comp, gn - 10, dst, sizeof src, err, sizeof err) != 0);
  static unsigned char two[16000];
  memcpy(two, comp, gn);
  memcpy(two + gn, comp, gn);
  static unsigned char big[12000];
  CHECK(pq_decompress(PQ_CODEC_GZIP, z, two, 2 * gn, big, 2 * sizeof src, err, sizeof err) == 0 &&
        !memcmp(big, src, sizeof src) && !memcmp(big + sizeof src, src, sizeof src));
  /* zstd */
  size_t zn = ZSTD_compress(comp, sizeof comp, src, sizeof src, 3);
  CHECK(!ZSTD_isError(zn));
  CHECK(pq_decompress(PQ_CODEC_ZSTD, z, comp, zn, dst, sizeof src, err, sizeof err) == 0 &&
        !memcmp(src, dst, sizeof src));
  CHECK(pq_decompress(PQ_CODEC_ZSTD, z, comp, zn, dst, sizeof src - 1, err, sizeof err) != 0);
  /* codecs this build does not read are named */
  CHECK(pq_decompress(7, z, comp, zn, dst, sizeof src, err, sizeof err) != 0 && strstr(err, "LZ4_RAW"));
  CHECK(pq_decompress(4, z, comp, zn, dst, sizeof src, err, sizeof err) != 0 && strstr(err, "BROTLI"));
  CHECK(pq_codec_supported(PQ_CODEC_SNAPPY) && pq_codec_supported(PQ_CODEC_GZIP) && !pq_codec_supported(5));
  ZSTD_freeDCtx(z);
}

static void test_names_and_int96(void) {
  CHECK_STR(pq_codec_name(1), "SNAPPY");
  CHECK_STR(pq_codec_name(99), "unknown");
  CHECK_STR(pq_codec_name(-1), "unknown");
  CHECK_STR(pq_encoding_name(PQ_ENC_DELTA_BINARY_PACKED), "DELTA_BINARY_PACKED");
  CHECK_STR(pq_encoding_name(PQ_ENC_BYTE_STREAM_SPLIT), "BYTE_STREAM_SPLIT");
  CHECK_STR(pq_encoding_name(10), "unknown");
  CHECK_STR(pq_phys_name(PQ_INT96), "INT96");
  unsigned char b[12] = {0};
  b[0] = 123; /* 1970-01-01T00:00:00.000000123 */
  uint32_t jd = 2440588;
  memcpy(b + 8, &jd, 4);
  CHECK(pq_int96_ns(b) == 123);
  jd = 2451545; /* 2000-01-01 */
  memcpy(b + 8, &jd, 4);
  b[0] = 0;
  CHECK(pq_int96_ns(b) == 946684800LL * 1000000000LL);
}

/* pq_rle_take_run: n values inside one RLE run of the wanted value are taken; otherwise nothing is consumed
 * and pq_rle_batch reads on as if it had not been asked. Hand-encoded, bit width 1: RLE 10 x 1, one
 * bit-packed group (0,1,0,0,1,1,0,1), RLE 4 x 0. */
static void test_rle_take_run(void) {
  static const unsigned char s[] = {10 << 1, 1, (1 << 1) | 1, 0xB2, 4 << 1, 0};
  const uint32_t all[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0};
  pq_rle_dec d;
  uint32_t out[32];
  pq_rle_init(&d, s, s + sizeof s, 1);
  CHECK_EQ_U64(pq_rle_take_run(&d, 1, 4), 4);
  CHECK_EQ_U64(pq_rle_take_run(&d, 0, 2), 0); /* a run of 1s: not taken */
  CHECK_EQ_U64(pq_rle_take_run(&d, 1, 7), 0); /* 6 left in it */
  CHECK_EQ_U64(pq_rle_take_run(&d, 1, 6), 6);
  CHECK_EQ_U64(pq_rle_take_run(&d, 1, 1), 0); /* the bit-packed group is next */
  CHECK_EQ_U64(pq_rle_batch(&d, out, 8), 8);
  CHECK(memcmp(out, all + 10, 8 * sizeof *out) == 0);
  CHECK_EQ_U64(pq_rle_take_run(&d, 0, 4), 4);
  CHECK_EQ_U64(pq_rle_take_run(&d, 0, 1), 0); /* the end */
  CHECK_EQ_U64(pq_rle_batch(&d, out, 1), 0);
  /* refused takes consume nothing: the whole stream still reads back value by value */
  pq_rle_init(&d, s, s + sizeof s, 1);
  size_t got = 0;
  for (size_t i = 0; i < 22; i++) {
    CHECK_EQ_U64(pq_rle_take_run(&d, all[i] ^ 1, 1), 0);
    CHECK_EQ_U64(pq_rle_take_run(&d, all[i], 23), 0);
    got += pq_rle_batch(&d, out + got, 1);
  }
  CHECK_EQ_U64(got, 22);
  CHECK(memcmp(out, all, sizeof all) == 0);
  /* a header cut short: refused, and the batch meets the same damage */
  static const unsigned char cut[] = {0x80};
  pq_rle_init(&d, cut, cut + sizeof cut, 1);
  CHECK_EQ_U64(pq_rle_take_run(&d, 1, 1), 0);
  CHECK_EQ_U64(pq_rle_batch(&d, out, 1), 0);
}

int main(void) {
  test_rle_take_run();
  test_delta();
  test_codecs();
  test_names_and_int96();
  return check_report("test_parquet_decode");
}
