/* The sample tables (pc_sample, counter_sample) and code bytes (code_blob) through every format: bytes
 * back bit for bit and checked by hash, damage refused, merge remaps sample ids and keeps each hash once,
 * and stores of the schema before these tables (fixtures written by that code) still open. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "hubprof/hub.h"

#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

static char dir[] = "/tmp/hubprof-samples-XXXXXX";
static unsigned char blob[60000]; /* three chunks of code_blob */

/* The stall reason and sample count of sample k of each dispatch: none (a CPU sample), two CUPTI names, and a
 * count without a reason; NULL is written as "". */
static const char *const reason[4] = {NULL, "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                      "smsp__pcsamp_warps_issue_stalled_barrier", ""};
static const uint64_t count[4] = {0, 7, 1, 3};

static void write_process(hp_store *s, int pid, char *hash) {
  hp_node n = {.size = sizeof n, .id = 1, .hostname = "h", .machine_id = "m"};
  hp_write_node(s, &n);
  hp_process p = {.size = sizeof p, .id = 1, .node_id = 1, .pid = pid, .start_ns = pid, .command = "app"};
  hp_write_process(s, &p);
  hp_thread th = {.size = sizeof th, .id = 2, .process_id = 1, .tid = pid + 1, .name = "worker"};
  hp_write_thread(s, &th);
  CHECK(hp_write_code_bytes(s, blob, sizeof blob, hash) == HP_OK);
  hp_code_object co = {.size = sizeof co,
                       .id = 4,
                       .process_id = 1,
                       .uri = "program://1",
                       .hash = hash,
                       .code_size = sizeof blob,
                       .build_options = "-g -cl-opt-disable",
                       .source = "kernel void k(global float *a) { a[0] = 1; }",
                       .ir_hash = "00ff"};
  hp_write_code_object(s, &co);
  hp_counter_info ci = {.size = sizeof ci, .id = 6, .name = "task-clock", .unit = "ns"};
  hp_write_counter_info(s, &ci);
  for (int d = 1; d <= 3; d++) {
    hp_dispatch di = {.size = sizeof di,
                      .id = (uint64_t)d,
                      .dispatch_id = (uint64_t)d,
                      .process_id = 1,
                      .thread_id = 2,
                      .start_ns = 1000 * d,
                      .end_ns = 1000 * d + 900};
    hp_write_dispatch(s, &di);
    for (int k = 0; k < 4; k++) {
      hp_pc_sample ps = {sizeof ps,
                         (uint64_t)(d * 10 + k),
                         (uint64_t)d,
                         4,
                         (uint64_t)(0x1000 + 4 * k + d),
                         1000 * d + 100 * k,
                         2,
                         250000,
                         reason[k],
                         count[k]};
      CHECK(hp_write_pc_sample(s, &ps) == HP_OK);
      hp_counter_sample cs = {sizeof cs, (uint64_t)(d * 10 + k), (uint64_t)d,
                              6,         1000 * d + 100 * k,     k == 0 ? -0.0 : 100.0 * k};
      CHECK(hp_write_counter_sample(s, &cs) == HP_OK);
    }
  }
}

static char *make(const char *format, const char *name, int pid, char *hash) {
  static char path[8][256];
  static int next;
  char *p = path[next++ % 8];
  snprintf(p, sizeof path[0], "%s/%s", dir, name);
  hp_store *s;
  hp_status st = hp_store_open(p, format, HP_CREATE, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) return p;
  write_process(s, pid, hash);
  st = hp_store_close(s);
  CHECK_MSG(st == HP_OK, "%s: close: %s", format, hp_status_str(st));
  return p;
}

static void check_store(const char *format, const char *path, uint64_t nproc, const char *hash) {
  hp_store *s;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_abort(s);
    return;
  }
  void *bytes = NULL;
  size_t n = 0;
  st = hp_read_code_bytes(s, hash, &bytes, &n);
  CHECK_MSG(st == HP_OK, "%s: read code bytes: %d %s", format, (int)st, hp_store_error(s));
  CHECK_MSG(n == sizeof blob && bytes && memcmp(bytes, blob, n) == 0, "%s: code bytes differ (%zu)", format,
            n);
  free(bytes);
  CHECK(hp_read_code_bytes(s, "00", &bytes, &n) == HP_ERR_NOT_FOUND);
  uint64_t c = 0;
  hp_store_count(s, HP_TABLE_CODE_BLOB, &c);
  CHECK_MSG(c == 3, "%s: %" PRIu64 " code_blob rows (each hash once)", format, c);
  hp_store_count(s, HP_TABLE_PC_SAMPLE, &c);
  CHECK_MSG(c == 12 * nproc, "%s: %" PRIu64 " pc samples", format, c);
  /* every sample names a dispatch of its own thread, whose window holds its time */
  hp_cursor *cur;
  int64_t start[8] = {0}, end[8] = {0};
  uint64_t thread[8] = {0};
  CHECK(hp_cursor_open(s, HP_TABLE_DISPATCH, &cur) == HP_OK);
  hp_dispatch d = {.size = sizeof d};
  while (hp_cursor_next(cur, &d) == HP_OK)
    if (d.id < 8) start[d.id] = d.start_ns, end[d.id] = d.end_ns, thread[d.id] = d.thread_id;
  hp_cursor_close(cur);
  CHECK(hp_cursor_open(s, HP_TABLE_PC_SAMPLE, &cur) == HP_OK);
  hp_pc_sample ps = {.size = sizeof ps};
  int good = 0, rows = 0;
  while (hp_cursor_next(cur, &ps) == HP_OK) {
    rows++;
    good += ps.dispatch_id && ps.dispatch_id < 8 && ps.timestamp_ns >= start[ps.dispatch_id] &&
            ps.timestamp_ns <= end[ps.dispatch_id] && ps.thread_id == thread[ps.dispatch_id] &&
            ps.weight == 250000 && ps.code_object_id && (ps.offset & ~(uint64_t)0xff) == 0x1000;
    int k = (int)(ps.offset - 0x1000) / 4; /* the sample's k (offsets 0x1000 + 4k + dispatch) */
    CHECK_MSG(k >= 0 && k < 4 && ps.stall_reason && !strcmp(ps.stall_reason, reason[k] ? reason[k] : "") &&
                  ps.samples == count[k],
              "%s: sample %d: stall reason '%s', %" PRIu64 " samples", format, k,
              ps.stall_reason ? ps.stall_reason : "(null)", ps.samples);
  }
  hp_cursor_close(cur);
  CHECK_MSG(good == rows && rows, "%s: %d of %d samples consistent", format, good, rows);
  CHECK(hp_cursor_open(s, HP_TABLE_COUNTER_SAMPLE, &cur) == HP_OK);
  hp_counter_sample cs = {.size = sizeof cs};
  int negzero = 0;
  rows = 0;
  while (hp_cursor_next(cur, &cs) == HP_OK) {
    rows++;
    negzero += cs.value == 0 && signbit(cs.value);
  }
  hp_cursor_close(cur);
  CHECK_MSG(rows == 12 * (int)nproc && negzero == 3 * (int)nproc, "%s: %d counter samples, %d -0.0", format,
            rows, negzero);
  CHECK(hp_cursor_open(s, HP_TABLE_CODE_OBJECT, &cur) == HP_OK);
  hp_code_object co = {.size = sizeof co};
  CHECK(hp_cursor_next(cur, &co) == HP_OK);
  CHECK_MSG(!strcmp(co.hash, hash) && co.code_size == sizeof blob &&
                !strcmp(co.build_options, "-g -cl-opt-disable") && !strncmp(co.source, "kernel void k", 13) &&
                co.ir_hash && !strcmp(co.ir_hash, "00ff"),
            "%s: code object columns", format);
  hp_cursor_close(cur);
  hp_store_close(s);
}

/* A chunk whose text is changed: the bytes are refused (hash or base64), never returned. */
static void damaged(void) {
  char p[256], hash[65];
  snprintf(p, sizeof p, "%s/damaged.db", dir);
  hp_store *s;
  CHECK(hp_store_open(p, "rocpd", HP_CREATE, &s) == HP_OK);
  CHECK(hp_write_code_bytes(s, blob, 100, hash) == HP_OK);
  char text[200];
  memset(text, 'A', 136);
  text[136] = 0;
  hp_code_blob b = {sizeof b, 9, "feedface", 0, 100, text}; /* bytes that do not have this hash */
  hp_write(s, HP_TABLE_CODE_BLOB, &b);
  hp_code_blob bad = {sizeof bad, 10, "cafe", 0, 3, "!!!!"}; /* not base64 */
  hp_write(s, HP_TABLE_CODE_BLOB, &bad);
  CHECK(hp_store_close(s) == HP_OK);
  CHECK(hp_store_open(p, NULL, HP_READ, &s) == HP_OK);
  void *out = NULL;
  size_t n = 0;
  CHECK(hp_read_code_bytes(s, hash, &out, &n) == HP_OK && n == 100 && !memcmp(out, blob, 100));
  free(out);
  out = (void *)1;
  CHECK(hp_read_code_bytes(s, "feedface", &out, &n) == HP_ERR_CORRUPT && out == NULL);
  CHECK(hp_read_code_bytes(s, "cafe", &out, &n) == HP_ERR_CORRUPT && out == NULL);
  hp_store_close(s);
}

/* Stores written by the code before these tables (tests/fixtures/schema1.*, written by
 * tests/fixtures/make_schema1.c built against that code) open, read their rows, and have no samples. */
static void older(const char *srcdir) {
  static const char *const names[] = {"schema1.log", "schema1.db", "schema1.parquet"};
  for (size_t i = 0; i < 3; i++) {
    char p[512];
    snprintf(p, sizeof p, "%s/tests/fixtures/%s", srcdir, names[i]);
    hp_store *s;
    hp_status st = hp_store_open(p, NULL, HP_READ, &s);
    CHECK_MSG(st == HP_OK, "%s: %s", names[i], s ? hp_store_error(s) : "");
    if (st != HP_OK) {
      hp_store_abort(s);
      continue;
    }
    uint64_t nd = 0, nco = 0, nps = 0, ncs = 0, ncb = 0;
    hp_store_count(s, HP_TABLE_DISPATCH, &nd);
    hp_store_count(s, HP_TABLE_CODE_OBJECT, &nco);
    CHECK(hp_store_count(s, HP_TABLE_PC_SAMPLE, &nps) == HP_OK);
    CHECK(hp_store_count(s, HP_TABLE_COUNTER_SAMPLE, &ncs) == HP_OK);
    CHECK(hp_store_count(s, HP_TABLE_CODE_BLOB, &ncb) == HP_OK);
    CHECK_MSG(nd == 3 && nco == 1 && !nps && !ncs && !ncb,
              "%s: %" PRIu64 " dispatches, %" PRIu64 " code objects", names[i], nd, nco);
    hp_cursor *c;
    CHECK(hp_cursor_open(s, HP_TABLE_CODE_OBJECT, &c) == HP_OK);
    hp_code_object co = {.size = sizeof co};
    CHECK(hp_cursor_next(c, &co) == HP_OK && !strcmp(co.uri, "program://old") && !*co.hash && !co.code_size &&
          !*co.source && (!co.ir_hash || !*co.ir_hash)); /* no ir_hash column: "" */
    hp_cursor_close(c);
    CHECK(hp_cursor_open(s, HP_TABLE_PC_SAMPLE, &c) == HP_OK);
    hp_pc_sample ps = {.size = sizeof ps};
    CHECK(hp_cursor_next(c, &ps) == HP_END);
    hp_cursor_close(c);
    hp_store_close(s);
  }
}

static int rm(const char *p, const struct stat *sb, int flag, struct FTW *f) {
  (void)sb, (void)flag, (void)f;
  return remove(p);
}

int main(int argc, char **argv) {
  if (!mkdtemp(dir)) return 1;
  for (size_t i = 0; i < sizeof blob; i++)
    blob[i] = (unsigned char)(i * 2654435761u >> 13);
  static const char *const formats[] = {"log", "rocpd", "parquet"};
  char *paths[3][2];
  char hash[65];
  for (int f = 0; f < 3; f++) {
    char name[64];
    for (int k = 0; k < 2; k++) {
      snprintf(name, sizeof name, "p%d.%s", k, formats[f]);
      paths[f][k] = make(formats[f], name, 100 + k, hash);
    }
    check_store(formats[f], paths[f][0], 1, hash);
  }
  /* merge: two processes (ids collide in the inputs), one copy of the bytes, samples on their dispatches */
  for (int f = 0; f < 3; f++) {
    char out[256];
    snprintf(out, sizeof out, "%s/merged-%s", dir, formats[f]);
    hp_store *o, *in[2];
    CHECK(hp_store_open(out, formats[f], HP_CREATE, &o) == HP_OK);
    for (int k = 0; k < 2; k++)
      CHECK(hp_store_open(paths[(f + 1) % 3][k], NULL, HP_READ, &in[k]) == HP_OK);
    hp_merge_stats ms = {.size = sizeof ms};
    CHECK_OK(hp_merge(o, in, 2, &ms), o);
    CHECK(ms.rows_out[HP_TABLE_PC_SAMPLE] == 24 && ms.rows_in[HP_TABLE_CODE_BLOB] == 6 &&
          ms.rows_out[HP_TABLE_CODE_BLOB] == 3);
    for (int k = 0; k < 2; k++)
      hp_store_close(in[k]);
    CHECK(hp_store_close(o) == HP_OK);
    check_store(formats[f], out, 2, hash);
  }
  damaged();
  older(argc > 1 ? argv[1] : ".");
  nftw(dir, rm, 16, FTW_DEPTH | FTW_PHYS);
  printf("test_samples: %d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
