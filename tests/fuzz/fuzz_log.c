/* libFuzzer target for the log reader: any bytes as a log file must open or fail cleanly, and every table
 * must count and walk without a crash, leak or hang. The first byte picks how the input becomes a file. */
/* SPDX-License-Identifier: MIT */
#include "fuzz_walk.h"
#include "hub_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Layout constants of docs/formats/log.md. */
#define HDR 4096u
#define CHUNK 65536u
#define BLK_MAGIC 0x4B4C4248u

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* A valid header for 64 KiB chunks, so the fuzzer starts at the blocks. */
static void make_header(unsigned char *h) {
  memset(h, 0, HDR);
  memcpy(h, "HUBPLOG\0", 8);
  put32(h + 8, 1);
  put32(h + 12, 1);
  put32(h + 16, HDR);
  put32(h + 24, CHUNK);
  put32(h + 32, 16384);
  put32(h + 36, 16);
  put32(h + 128, hp_crc32c(0, h, 128));
}

/* Make the checksum of every block the reader would find right, so the records get decoded. */
static void fix_crcs(unsigned char *f, size_t n) {
  for (size_t c = HDR; c < n; c += CHUNK) {
    for (size_t pos = c; pos + 16 <= c + CHUNK && pos + 16 <= n;) {
      if (le32(f + pos) != BLK_MAGIC) break;
      uint32_t len = le32(f + pos + 4);
      if (len > c + CHUNK - pos - 16 || pos + 16 + len > n) break;
      put32(f + pos + 12, hp_crc32c(hp_crc32c(0, f + pos + 4, 8), f + pos + 16, len));
      pos = (pos + 16 + len + 7) & ~(size_t)7;
    }
  }
}

static volatile size_t g_sink;

static void walk(hp_store *s) {
  unsigned char row[512];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    uint64_t n = 0, k = 0;
    hp_status st;
    hp_store_count(s, (hp_table)t, &n);
    for (int pass = 0; pass < 2; pass++)
      if (fuzz_walk(s, (hp_table)t, pass, row, &k, &st, &g_sink) && k != n)
        abort(); /* count and cursor must agree */
  }
  g_sink += hp_store_metadata(s, "schema_version") != NULL;
  uint64_t off = 0;
  g_sink += (size_t)hp_store_damage(s, &off) + (size_t)off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_log.%ld.log", (long)getpid());
  int mode = size ? data[0] % 3 : 0;
  size_t n = mode == 0 ? size : HDR + size - 1;
  unsigned char *f = malloc(n ? n : 1);
  if (!f) return 0;
  if (mode == 0) {
    if (size) memcpy(f, data, size);
  } else {
    make_header(f);
    memcpy(f + HDR, data + 1, size - 1);
    if (mode == 2) fix_crcs(f, n);
  }
  FILE *fp = fopen(path, "wb");
  if (fp) {
    if (n) fwrite(f, 1, n, fp);
    fclose(fp);
    hp_store *s = NULL;
    if (hp_store_open(path, "log", HP_READ, &s) == HP_OK) walk(s);
    g_sink += strlen(hp_store_error(s));
    hp_store_close(s);
    unlink(path);
  }
  free(f);
  return 0;
}
