/* Parquet reader helpers: names of codecs, encodings and physical types for messages, and page
 * decompression (UNCOMPRESSED, SNAPPY, GZIP, ZSTD), each bounded by the size the page header declares. */
/* SPDX-License-Identifier: MIT */
#include "parquet_internal.h"

#include <snappy-c.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

const char *pq_codec_name(int64_t codec) {
  static const char *n[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return codec >= 0 && codec < 8 ? n[codec] : "unknown";
}

int pq_codec_supported(int64_t codec) {
  return codec == PQ_CODEC_UNCOMPRESSED || codec == PQ_CODEC_SNAPPY || codec == PQ_CODEC_GZIP ||
         codec == PQ_CODEC_ZSTD;
}

const char *pq_encoding_name(int64_t enc) {
  static const char *n[] = {
      "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
      "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
      "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  return enc >= 0 && enc < 10 ? n[enc] : "unknown";
}

const char *pq_phys_name(int64_t t) {
  static const char *n[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                            "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return t >= 0 && t < 8 ? n[t] : "unknown";
}

static int gzip_inflate(const unsigned char *src, size_t n, unsigned char *dst, size_t un, char *err,
                        size_t errlen) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) { /* gzip or zlib header, detected */
    snprintf(err, errlen, "gzip: cannot start the decoder");
    return -1;
  }
  z.next_in = (unsigned char *)src;
  z.avail_in = (uInt)n;
  z.next_out = dst;
  z.avail_out = (uInt)un;
  int rc;
  for (;;) { /* a page may hold several gzip members */
    rc = inflate(&z, Z_FINISH);
    if (rc != Z_STREAM_END) { /* out of room (more than declared), input cut short, or bad data */
      if (rc != Z_MEM_ERROR) rc = Z_DATA_ERROR;
      break;
    }
    if (!z.avail_in) break;
    if (inflateReset(&z) != Z_OK) {
      rc = Z_DATA_ERROR;
      break;
    }
  }
  size_t done = un - z.avail_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    snprintf(err, errlen, "gzip: %s",
             rc == Z_DATA_ERROR ? "bad or cut-short data, or more than declared" : "decoding failed");
    return -1;
  }
  if (done != un) {
    snprintf(err, errlen, "page decompresses to %zu bytes, its header says %zu", done, un);
    return -1;
  }
  return 0;
}

int pq_decompress(int codec, void *zstd_dctx, const unsigned char *src, size_t n, unsigned char *dst,
                  size_t un, char *err, size_t errlen) {
  switch (codec) {
  case PQ_CODEC_UNCOMPRESSED:
    if (n != un) {
      snprintf(err, errlen, "uncompressed page with two sizes (%zu and %zu bytes)", n, un);
      return -1;
    }
    if (un) memcpy(dst, src, un);
    return 0;
  case PQ_CODEC_SNAPPY: {
    size_t len;
    if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK) {
      snprintf(err, errlen, "snappy: bad length header");
      return -1;
    }
    if (len != un) {
      snprintf(err, errlen, "page decompresses to %zu bytes, its header says %zu", len, un);
      return -1;
    }
    if (snappy_uncompress((const char *)src, n, (char *)dst, &len) != SNAPPY_OK || len != un) {
      snprintf(err, errlen, "snappy: bad data");
      return -1;
    }
    return 0;
  }
  case PQ_CODEC_GZIP:
    if (un > UINT32_MAX || n > UINT32_MAX) {
      snprintf(err, errlen, "gzip page too large");
      return -1;
    }
    return gzip_inflate(src, n, dst, un, err, errlen);
  case PQ_CODEC_ZSTD: {
    unsigned long long fs = ZSTD_getFrameContentSize(src, n); /* of the first frame */
    if (fs == ZSTD_CONTENTSIZE_ERROR) {
      snprintf(err, errlen, "bad zstd frame");
      return -1;
    }
    if (fs != ZSTD_CONTENTSIZE_UNKNOWN && fs > (unsigned long long)un) {
      snprintf(err, errlen, "page decompresses to %llu bytes, its header says %zu", fs, un);
      return -1;
    }
    size_t z = ZSTD_decompressDCtx(zstd_dctx, dst, un, src, n);
    if (ZSTD_isError(z)) {
      snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(z));
      return -1;
    }
    if (z != un) {
      snprintf(err, errlen, "page decompresses to %zu bytes, its header says %zu", z, un);
      return -1;
    }
    return 0;
  }
  }
  snprintf(err, errlen,
           "compression codec %s (%d) is not supported (this build reads UNCOMPRESSED, SNAPPY, "
           "GZIP and ZSTD)",
           pq_codec_name(codec), codec);
  return -1;
}
