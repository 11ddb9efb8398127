/* libFuzzer target for the Parquet reader: the input becomes one table file inside a store directory
 * (first byte: which table, and whether the manifest states the file's size), or with a first byte 0xff
 * the manifest itself; the store must open or fail cleanly, and every table must count and walk without a
 * crash, leak or hang. */
/* SPDX-License-Identifier: MIT */
#include "fuzz_walk.h"
#include "hub_internal.h"
#include "parquet_fmt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile size_t g_sink;

static void walk(hp_store *s) {
  unsigned char row[512];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    uint64_t n = 0, k = 0;
    hp_status st;
    hp_store_count(s, (hp_table)t, &n);
    for (int pass = 0; pass < 2; pass++) {
      if (!fuzz_walk(s, (hp_table)t, pass, row, &k, &st, &g_sink)) continue;
      if (st == HP_END && k != n) abort(); /* a cursor that ends cleanly gives every counted row */
      if (k > n) abort();
    }
  }
  /* columnar reads of every other column, in small batches: they skip what they leave out */
  static uint64_t buf[64][5];
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    uint64_t n = 0, k = 0;
    hp_store_count(s, (hp_table)t, &n);
    hp_cursor *c = NULL;
    if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) continue;
    void *cols[64] = {0};
    for (size_t i = 0; i < d->ncolumns; i++)
      if (i % 2 == (size_t)t % 2) cols[i] = buf[i];
    size_t got;
    hp_status st;
    while ((st = hp_parquet_cursor_next_batch(c, cols, 5, &got)) == HP_OK) {
      if (got == 0 || got > 5) abort();
      k += got;
      for (size_t i = 0; i < d->ncolumns; i++)
        if (cols[i] && d->columns[i].type == HP_COL_STR)
          for (size_t r = 0; r < got; r++)
            g_sink += strlen(((const char **)cols[i])[r]);
    }
    hp_cursor_close(c);
    if ((st == HP_END && k != n) || k > n) abort();
  }
  g_sink += hp_store_metadata(s, "schema_version") != NULL;
  uint64_t off = 0;
  g_sink += (size_t)hp_store_damage(s, &off) + (size_t)off;
}

static char dir[64]; /* the store directory, removed at exit */

static void cleanup(void) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    char p[160];
    snprintf(p, sizeof p, "%s/%s.parquet", dir, hp_table_describe((hp_table)t)->name);
    unlink(p);
  }
  char m[160];
  snprintf(m, sizeof m, "%s/_hubprof.json", dir);
  unlink(m);
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/fuzz_parquet.%ld", (long)getpid());
    mkdir(dir, 0777);
    atexit(cleanup);
  }
  if (!size) return 0;
  if (data[0] == 0xff) { /* the rest is the manifest, over whatever table files the directory holds */
    char manifest[160];
    snprintf(manifest, sizeof manifest, "%s/_hubprof.json", dir);
    FILE *fp = fopen(manifest, "wb");
    if (!fp) return 0;
    fwrite(data + 1, 1, size - 1, fp);
    fclose(fp);
    hp_store *s = NULL;
    if (hp_store_open(dir, "parquet", HP_READ, &s) == HP_OK) walk(s);
    g_sink += strlen(hp_store_error(s));
    hp_store_close(s);
    return 0;
  }
  hp_table t = (hp_table)((data[0] & 0x7f) % HP_TABLE_COUNT);
  const char *name = hp_table_describe(t)->name;
  char file[160], manifest[160];
  snprintf(file, sizeof file, "%s/%s.parquet", dir, name);
  snprintf(manifest, sizeof manifest, "%s/_hubprof.json", dir);
  FILE *fp = fopen(file, "wb");
  if (!fp) return 0;
  fwrite(data + 1, 1, size - 1, fp);
  fclose(fp);
  fp = fopen(manifest, "w");
  if (!fp) return 0;
  fprintf(fp,
          "{\"format\": \"hubprof-parquet\", \"version\": 1, \"tables\": [{\"name\": \"%s\", \"files\": "
          "[{\"path\": \"%s.parquet\"",
          name, name);
  if (data[0] & 0x80) fprintf(fp, ", \"bytes\": %zu", size - 1);
  fprintf(fp, "}]}]}\n");
  fclose(fp);
  hp_store *s = NULL;
  if (hp_store_open(dir, NULL, HP_READ, &s) == HP_OK) walk(s);
  g_sink += strlen(hp_store_error(s));
  hp_store_close(s);
  return 0; /* the file stays: manifest inputs find table files to read */
}
