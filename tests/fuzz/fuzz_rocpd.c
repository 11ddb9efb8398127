/* libFuzzer target for the rocpd reader: the input becomes a file opened with hp_store_open(..., "rocpd",
 * HP_READ); every table is counted and every cursor walked. It must never crash, leak or hang.
 * Input byte 0 picks the mode: even = the bytes after it are the file (the seeds under
 * tests/fuzz/seeds/rocpd/, made by gen_rocpd_seeds.py: hostile views, zeroed pages, huge sizes); odd = byte
 * patches (and maybe a cut) applied to a valid rocpd file made once at start, so mutations reach deep into
 * real rocpd structure. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The valid rocpd image patched in odd mode: made once by LLVMFuzzerInitialize, read-only afterwards. */
static unsigned char *base_image;
static size_t base_len;

static void make_base(void) {
  char path[] = "/tmp/fuzz_rocpd_base_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  close(fd);
  unlink(path);
  hp_store *s;
  if (hp_store_open(path, "rocpd", HP_CREATE, &s) != HP_OK) {
    hp_store_abort(s);
    return;
  }
  hp_node n = {sizeof n, 1, "host", "machine", "Linux", "6.1", "#1", "x86_64"};
  hp_process p = {sizeof p, 1, 1, 100, 1, 3, 5, 900, "./app \"x\"", 2, -1, -1, "", 0, -1, -1};
  hp_thread t = {sizeof t, 1, 1, 100, 5, 900, "main"};
  hp_agent a = {
      .size = sizeof a, .id = 1, .node_id = 1, .type = HP_AGENT_GPU, .name = "gfx942", .runtime = "r\n"};
  hp_queue q = {sizeof q, 1, 1, 1, "q"};
  hp_code_object co = {sizeof co, 1, 1, 1, "file:///k.co", 4096, 8192, "", 0, "", "", ""};
  hp_kernel_symbol k = {sizeof k, 1, 1, "kern", "", 4, 8, "", 0};
  hp_counter_info ci = {.size = sizeof ci, .id = 1, .agent_id = 1, .name = "SQ_WAVES", .block = "SQ"};
  hp_write_node(s, &n);
  hp_write_process(s, &p);
  hp_write_thread(s, &t);
  hp_write_agent(s, &a);
  hp_write_queue(s, &q);
  hp_write_code_object(s, &co);
  hp_write_kernel_symbol(s, &k);
  hp_write_counter_info(s, &ci);
  for (uint64_t i = 1; i <= 40; i++) {
    hp_dispatch d = {.size = sizeof d,
                     .id = i,
                     .dispatch_id = i,
                     .process_id = 1,
                     .thread_id = i % 2,
                     .agent_id = 1,
                     .queue_id = 1,
                     .kernel_id = 1,
                     .grid = {64, 1, 1},
                     .start_ns = (int64_t)i * 10,
                     .end_ns = (int64_t)i * 10 + 5,
                     .passes = 2,
                     .bytes_accessible = i << 60};
    hp_write_dispatch(s, &d);
    hp_counter_value v = {sizeof v, i, 1, 1 + (uint32_t)(i % 3), 0, i % 5 ? 1.5 * (double)i : -0.0, 0};
    hp_write_counter_value(s, &v);
  }
  hp_region r = {sizeof r, 1, 1, 1, "init", "roctx", 1, 2};
  hp_write_region(s, &r);
  hp_write_metadata(s, "mode", "kernel-replay");
  hp_write_metadata(s, "uuid", "user");
  if (hp_store_close(s) != HP_OK) return;
  FILE *f = fopen(path, "rb");
  if (f && fseek(f, 0, SEEK_END) == 0) {
    long len = ftell(f);
    if (len > 0 && fseek(f, 0, SEEK_SET) == 0 && (base_image = malloc((size_t)len)) != NULL)
      base_len = fread(base_image, 1, (size_t)len, f);
  }
  if (f) fclose(f);
  unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  make_base();
  return 0;
}

static void read_everything(const char *path) {
  hp_store *s = NULL;
  if (hp_store_open(path, "rocpd", HP_READ, &s) == HP_OK) {
    (void)hp_store_schema_version(s);
    (void)hp_store_metadata(s, "mode");
    for (int t = 0; t < HP_TABLE_COUNT; t++) {
      uint64_t n;
      (void)hp_store_count(s, (hp_table)t, &n);
      hp_cursor *c = NULL;
      if (hp_cursor_open(s, (hp_table)t, &c) != HP_OK) continue;
      union {
        hp_dispatch d;
        hp_agent a;
        char any[256];
      } row;
      for (int k = 0; k < 100000; k++) {
        memset(&row, 0, sizeof row);
        *(uint32_t *)&row = (uint32_t)hp_table_describe((hp_table)t)->row_size;
        if (hp_cursor_next(c, &row) != HP_OK) break;
        /* touch every string so ASan sees a dangling or unterminated one */
        const hp_table_desc *d = hp_table_describe((hp_table)t);
        for (size_t i = 0; i < d->ncolumns; i++)
          if (d->columns[i].type == HP_COL_STR)
            (void)strlen(*(const char **)(row.any + d->columns[i].offset));
      }
      hp_cursor_close(c);
    }
  }
  (void)hp_store_error(s);
  hp_store_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[] = "/tmp/fuzz_rocpd_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 0;
  if (size > 0 && (data[0] & 1) && base_image) {
    /* odd mode: 5-byte records (offset LE32 modulo the image, byte); bit 1 also cuts the file */
    unsigned char *img = malloc(base_len);
    if (img) {
      memcpy(img, base_image, base_len);
      size_t len = base_len;
      for (size_t i = 1; i + 5 <= size; i += 5) {
        uint32_t off = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16 |
                       (uint32_t)data[i + 3] << 24;
        img[off % base_len] = data[i + 4];
      }
      if ((data[0] & 2) && size >= 5)
        len = ((size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16) % (base_len + 1);
      if (write(fd, img, len) != (ssize_t)len) len = 0;
      free(img);
    }
  } else if (size > 1 && write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
    size = 0;
  }
  close(fd);
  read_everything(path);
  unlink(path);
  return 0;
}
