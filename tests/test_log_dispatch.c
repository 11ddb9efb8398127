/* The collector's batch path for dispatch rows (hp_log_write_dispatches, dispatch batch records) reads back
 * exactly the rows the generic hp_write_dispatch stores: random rows (zeros, negatives, huge values) both
 * ways, and edge batches (every column at its extremes, n = 1, 32, more than a chunk holds, older row
 * layouts in the middle). Its region append (hp_log_write_region) writes exactly the generic bytes, with
 * names of every length from empty to larger than a block. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "fmt_log.h"
#include "hubprof/hub.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 20000

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A value of one of several magnitudes: 0, small, large, negative, extreme. */
static uint64_t pick(uint64_t *s) {
  switch (rnd(s) % 6) {
  case 0: return 0;
  case 1: return rnd(s) % 128;
  case 2: return rnd(s) % 100000;
  case 3: return rnd(s);
  case 4: return (uint64_t) - (int64_t)(rnd(s) % 1000000);
  default: return UINT64_MAX - rnd(s) % 3;
  }
}

static void fill(hp_dispatch *d, uint64_t i, uint64_t *s) {
  *d = (hp_dispatch){.size = sizeof *d,
                     .id = i + 1,
                     .dispatch_id = pick(s),
                     .process_id = pick(s),
                     .thread_id = pick(s),
                     .agent_id = pick(s),
                     .queue_id = pick(s),
                     .kernel_id = pick(s),
                     .grid = {(uint32_t)pick(s), (uint32_t)pick(s), (uint32_t)pick(s)},
                     .workgroup = {(uint32_t)pick(s), (uint32_t)pick(s), (uint32_t)pick(s)},
                     .private_size = (int64_t)pick(s),
                     .group_size = (int64_t)pick(s),
                     .start_ns = (int64_t)pick(s),
                     .end_ns = (int64_t)pick(s),
                     .enqueue_ns = (int64_t)pick(s),
                     .passes = (uint32_t)pick(s),
                     .bytes_accessible = pick(s),
                     .bytes_restored = pick(s),
                     .cold = (uint32_t)pick(s),
                     .region_id = pick(s)};
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)len);
  *n = b && fread(b, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
  fclose(f);
  return b;
}

/* Both logs' records after their headers are the same bytes. */
static void same_records(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  unsigned char *ba = slurp(a, &na), *bb = slurp(b, &nb);
  CHECK(ba && bb && na == nb && na > 4096);
  if (ba && bb && na == nb && na > 4096)
    CHECK_MSG(memcmp(ba + 4096, bb + 4096, na - 4096) == 0, "records differ");
  free(ba);
  free(bb);
}

#define NR 5000
static void regions(const char *tmp) {
  char a[256], b[256];
  snprintf(a, sizeof a, "%s/hubprof-reg-a-%d.log", tmp, (int)getpid());
  snprintf(b, sizeof b, "%s/hubprof-reg-b-%d.log", tmp, (int)getpid());
  hp_store *sa, *sb;
  CHECK_OK(hp_store_open(a, "log", HP_CREATE, &sa), sa);
  CHECK_OK(hp_store_open(b, "log", HP_CREATE, &sb), sb);
  static char text[20000];
  for (size_t i = 0; i + 2 < sizeof text; i += 3) /* "é" and an ASCII letter: valid UTF-8 at every cut of 3 */
    text[i] = (char)0xC3, text[i + 1] = (char)0xA9, text[i + 2] = (char)('a' + i % 26);
  static hp_region rows[NR];
  static char *names[NR];
  uint64_t seed = 0xD1B54A32D192ED03ULL;
  for (size_t i = 0; i < NR; i++) {
    size_t len = 3 * (rnd(&seed) % 4 == 0 ? rnd(&seed) % 6000 : rnd(&seed) % 20);
    names[i] = malloc(len + 1);
    memcpy(names[i], text, len);
    names[i][len] = 0;
    rows[i] = (hp_region){.size = sizeof rows[i],
                          .id = pick(&seed),
                          .process_id = pick(&seed),
                          .thread_id = pick(&seed),
                          .name = names[i],
                          .category = i % 3 ? "hubprof" : "",
                          .start_ns = (int64_t)pick(&seed),
                          .end_ns = (int64_t)pick(&seed)};
    CHECK_OK(hp_write_region(sa, &rows[i]), sa);
    CHECK_OK(hp_log_write_region(sb, &rows[i], len, strlen(rows[i].category)), sb);
  }
  CHECK_OK(hp_store_close(sa), (hp_store *)NULL);
  CHECK_OK(hp_store_close(sb), (hp_store *)NULL);
  same_records(a, b);
  hp_store *r;
  CHECK_OK(hp_store_open(b, NULL, HP_READ, &r), r);
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_REGION, &c), r);
  hp_region g = {.size = sizeof g};
  size_t i = 0, same = 0;
  while (hp_cursor_next(c, &g) == HP_OK && i < NR) {
    const hp_region *w = &rows[i++];
    same += g.id == w->id && g.process_id == w->process_id && g.thread_id == w->thread_id &&
            !strcmp(g.name, w->name) && !strcmp(g.category, w->category) && g.start_ns == w->start_ns &&
            g.end_ns == w->end_ns;
  }
  CHECK_EQ_U64(i, NR);
  CHECK_EQ_U64(same, NR);
  hp_cursor_close(c);
  hp_store_close(r);
  for (i = 0; i < NR; i++)
    free(names[i]);
  unlink(a);
  unlink(b);
}

/* Every dispatch row of log p equals rows[0..n) in order; the count agrees. */
static void same_rows(const char *p, const hp_dispatch *rows, size_t n) {
  hp_store *r;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &r), r);
  uint64_t cnt = 0;
  CHECK_OK(hp_store_count(r, HP_TABLE_DISPATCH, &cnt), r);
  CHECK_EQ_U64(cnt, n);
  CHECK(hp_store_damage(r, NULL) == HP_OK);
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
  hp_dispatch d = {.size = sizeof d};
  size_t i = 0, same = 0;
  while (hp_cursor_next(c, &d) == HP_OK) {
    if (i < n) same += memcmp(&d, &rows[i], sizeof d) == 0;
    i++;
  }
  CHECK_EQ_U64(i, n);
  CHECK_EQ_U64(same, n);
  hp_cursor_close(c);
  hp_store_close(r);
}

/* rows[0..n) through hp_log_write_dispatches in batches of `batch` rows, into a new log at p. */
static void write_batches(const char *p, const hp_dispatch *rows, size_t n, size_t batch) {
  hp_store *s;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  size_t written = 0;
  for (size_t i = 0; i < n; i += batch) {
    size_t k = n - i < batch ? n - i : batch, w = 0;
    CHECK_OK(hp_log_write_dispatches(s, rows + i, k, &w), s);
    written += w;
  }
  CHECK_EQ_U64(written, n);
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
}

/* A row whose every column is at an extreme (INT64_MIN/MAX times, UINT64_MAX ids, UINT32_MAX sizes), and its
 * neighbours going the other way: every delta as large as it gets, negative and positive. */
static void extreme(hp_dispatch *d, int hi) {
  uint64_t u = hi ? UINT64_MAX : 1;
  uint32_t w = hi ? UINT32_MAX : 1;
  int64_t t = hi ? INT64_MAX : INT64_MIN;
  *d = (hp_dispatch){.size = sizeof *d,
                     .id = u,
                     .dispatch_id = u,
                     .process_id = u,
                     .thread_id = u,
                     .agent_id = u,
                     .queue_id = u,
                     .kernel_id = u,
                     .grid = {w, w, w},
                     .workgroup = {w, w, w},
                     .private_size = t,
                     .group_size = t,
                     .start_ns = t,
                     .end_ns = t,
                     .enqueue_ns = t,
                     .passes = w,
                     .bytes_accessible = u,
                     .bytes_restored = u,
                     .cold = w,
                     .region_id = u};
}

/* Log a (type-8 records) and log b (batch records) merged into `format` give the same stores: every table's
 * count and every dispatch row. */
static void merged_same(const char *a, const char *b, const char *format, const char *tmp) {
  char out[2][256];
  const char *in[2] = {a, b};
  hp_store *o[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    snprintf(out[k], sizeof out[k], "%s/hubprof-disp-m%d-%d.%s", tmp, k, (int)getpid(),
             strcmp(format, "rocpd") ? "parquet" : "db");
    hp_store *i, *w;
    CHECK_OK(hp_store_open(in[k], NULL, HP_READ, &i), i);
    CHECK_OK(hp_store_open(out[k], format, HP_CREATE, &w), w);
    hp_merge_stats st = {.size = sizeof st};
    CHECK_OK(hp_merge(w, &i, 1, &st), w);
    CHECK_OK(hp_store_close(w), (hp_store *)NULL);
    hp_store_close(i);
    CHECK_OK(hp_store_open(out[k], NULL, HP_READ, &o[k]), o[k]);
  }
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    uint64_t n0 = 0, n1 = 0;
    hp_store_count(o[0], (hp_table)t, &n0);
    hp_store_count(o[1], (hp_table)t, &n1);
    CHECK_EQ_U64(n0, n1);
  }
  hp_cursor *c0, *c1;
  CHECK_OK(hp_cursor_open(o[0], HP_TABLE_DISPATCH, &c0), o[0]);
  CHECK_OK(hp_cursor_open(o[1], HP_TABLE_DISPATCH, &c1), o[1]);
  hp_dispatch d0 = {.size = sizeof d0}, d1 = {.size = sizeof d1};
  size_t n = 0, same = 0;
  while (hp_cursor_next(c0, &d0) == HP_OK) {
    same += hp_cursor_next(c1, &d1) == HP_OK && memcmp(&d0, &d1, sizeof d0) == 0;
    n++;
  }
  CHECK(hp_cursor_next(c1, &d1) == HP_END);
  CHECK_MSG(n > 0 && same == n, "%s: %zu of %zu rows the same", format, same, n);
  hp_cursor_close(c0);
  hp_cursor_close(c1);
  for (int k = 0; k < 2; k++) {
    hp_store_close(o[k]);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out[k]);
    CHECK(system(cmd) == 0);
  }
}

static void edges(const char *tmp) {
  char p[256];
  snprintf(p, sizeof p, "%s/hubprof-disp-e-%d.log", tmp, (int)getpid());
  static hp_dispatch rows[40000];
  for (size_t i = 0; i < 64; i++)
    extreme(&rows[i], (int)(i % 2));
  rows[5].start_ns = 0; /* a zero between extremes */
  rows[6].enqueue_ns = -1;
  rows[7] = (hp_dispatch){.size = sizeof rows[7]}; /* an all-zero row */
  for (size_t b = 1; b <= 64; b++) {               /* every batch size; n = 1 and 32 among them */
    write_batches(p, rows, 64, b);
    same_rows(p, rows, 64);
  }
  /* a harvest as the collector makes it: ids +1, times growing a little; 40000 rows in one call, more than
   * a 1 MiB chunk holds as the largest rows would */
  for (size_t i = 0; i < 40000; i++)
    rows[i] = (hp_dispatch){.size = sizeof rows[i],
                            .id = i + 1,
                            .dispatch_id = i + 1,
                            .process_id = 7,
                            .thread_id = 9,
                            .agent_id = 2,
                            .queue_id = 3,
                            .kernel_id = 1 + i % 3,
                            .grid = {1024, 1, 1},
                            .workgroup = {64, 1, 1},
                            .start_ns = 1700000000000000000 + (int64_t)i * 5000,
                            .end_ns = 1700000000000000000 + (int64_t)i * 5000 + 2100,
                            .enqueue_ns = 1700000000000000000 + (int64_t)i * 5000 - 300,
                            .passes = 1};
  write_batches(p, rows, 40000, 40000);
  same_rows(p, rows, 40000);
  char q[256]; /* the same rows as type-8 records, with a process row each: merged, the same stores */
  snprintf(q, sizeof q, "%s/hubprof-disp-q-%d.log", tmp, (int)getpid());
  hp_store *s;
  hp_process pr;
  hp_row_init(HP_TABLE_PROCESS, &pr);
  pr.id = 7, pr.pid = 4242, pr.command = "app";
  for (int k = 0; k < 2; k++) {
    CHECK_OK(hp_store_open(k ? p : q, "log", HP_CREATE, &s), s);
    CHECK_OK(hp_write_process(s, &pr), s);
    size_t w = 0;
    for (size_t i = 0; i < 40000; i++)
      if (!k) CHECK_OK(hp_write_dispatch(s, &rows[i]), s);
    if (k) CHECK_OK(hp_log_write_dispatches(s, rows, 40000, &w), s);
    CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  }
  merged_same(q, p, "rocpd", tmp);
  merged_same(q, p, "parquet", tmp);
  unlink(q);
  struct stat st;
  CHECK(stat(p, &st) == 0 && st.st_size > 4096);
  /* rows of an older, shorter layout in the middle of a batch: imported by hp_write, in order */
  hp_dispatch old[5];
  for (size_t i = 0; i < 5; i++) {
    old[i] = rows[i];
    old[i].region_id = 99;
    if (i % 2) old[i].size = (uint32_t)offsetof(hp_dispatch, region_id); /* region_id unknown to it */
  }
  write_batches(p, old, 5, 5);
  for (size_t i = 0; i < 5; i++) /* what a reader gets: the full layout, region_id 0 where it was unknown */
    if (i % 2) old[i].size = sizeof old[i], old[i].region_id = 0;
  same_rows(p, old, 5);
  unlink(p);
}

int main(void) {
  char a[256], b[256];
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(a, sizeof a, "%s/hubprof-disp-a-%d.log", tmp, (int)getpid());
  snprintf(b, sizeof b, "%s/hubprof-disp-b-%d.log", tmp, (int)getpid());
  hp_store *sa;
  CHECK_OK(hp_store_open(a, "log", HP_CREATE, &sa), sa);
  static hp_dispatch rows[N];
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  for (uint64_t i = 0; i < N; i++)
    fill(&rows[i], i, &seed);
  for (size_t i = 0; i < N; i++)
    CHECK_OK(hp_write_dispatch(sa, &rows[i]), sa);
  CHECK_OK(hp_store_close(sa), (hp_store *)NULL);
  write_batches(b, rows, N, 37); /* batches of odd sizes, as a harvest makes them */
  same_rows(a, rows, N);         /* the old encoding and the batch records: the same rows */
  same_rows(b, rows, N);
  unlink(a);
  unlink(b);
  edges(tmp);
  regions(tmp);
  return check_report("test_log_dispatch");
}
