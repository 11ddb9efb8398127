/* Tests of the "log" format: round trips, update rules, many threads, crash and damage recovery,
 * losses on a full disk, foreign files. Uses tests/check.h; runs plain and under the sanitizers. */
/* SPDX-License-Identifier: MIT */
#include "fmt_log.h"

#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[64];

static char *path_of(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", g_dir, name);
  return p;
}

static int exists(const char *p) { return access(p, F_OK) == 0; }
static size_t file_size(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 ? (size_t)sb.st_size : 0;
}

static size_t dir_entries(void) {
  DIR *d = opendir(g_dir);
  size_t n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

static unsigned char *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(sz > 0 ? (size_t)sz : 1);
  *n = fread(b, 1, (size_t)sz, f);
  fclose(f);
  return b;
}

static void spit(const char *p, const void *b, size_t n) {
  FILE *f = fopen(p, "wb");
  if (!f) return;
  if (n) fwrite(b, 1, n, f);
  fclose(f);
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* Compare two full rows column by column (doubles bit for bit); prints the first difference. */
static int row_eq(hp_table t, const void *a, const void *b) {
  const hp_table_desc *d = hp_table_describe(t);
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    const char *x = (const char *)a + c->offset, *y = (const char *)b + c->offset;
    int same;
    if (c->type == HP_COL_STR) {
      const char *s1, *s2;
      memcpy(&s1, x, sizeof s1);
      memcpy(&s2, y, sizeof s2);
      same = strcmp(s1 ? s1 : "", s2 ? s2 : "") == 0; /* a string written as NULL reads as "" */
    } else {
      same = memcmp(x, y, c->type == HP_COL_U32 || c->type == HP_COL_I32 ? 4 : 8) == 0;
    }
    if (!same) {
      fprintf(stderr, "  %s.%s differs\n", d->name, c->name);
      return 0;
    }
  }
  return 1;
}

static hp_store *open_read(const char *p) {
  hp_store *s = NULL;
  hp_status st = hp_store_open(p, "log", HP_READ, &s);
  CHECK_OK(st, s);
  if (st != HP_OK) {
    hp_store_close(s);
    return NULL;
  }
  return s;
}

static uint64_t count(hp_store *s, hp_table t) {
  uint64_t n = 0;
  CHECK_OK(hp_store_count(s, t, &n), s);
  return n;
}

/* The dispatch row `id` of the tests (expect_rows checks rows like it). */
static hp_dispatch dispatch_row(uint64_t id) {
  return (hp_dispatch){.size = sizeof(hp_dispatch),
                       .id = id,
                       .dispatch_id = id * 3,
                       .process_id = 1,
                       .kernel_id = id % 7 + 1,
                       .grid = {(uint32_t)id, 2, 3},
                       .start_ns = (int64_t)id * 1000,
                       .end_ns = (int64_t)id * 1000 + 500};
}

static uint64_t write_dispatch(hp_store *s, uint64_t id) {
  hp_dispatch d = dispatch_row(id);
  return hp_write_dispatch(s, &d) == HP_OK;
}

/* ---- round trip of every table ---- */
static double dbl_bits(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}

static void test_round_trip(void) {
  const char *p = path_of("rt.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  const char *u8 = "ñandú – 速度 – 𝄞 – \"quoted\" \\ tab\t";
  hp_node nodes[] = {{sizeof(hp_node), 1, "host-ü", "mid-0123", "Linux", "6.1.0", "#1 SMP", "x86_64"},
                     {sizeof(hp_node), UINT64_MAX, u8, "", "", "", "", ""}};
  hp_process procs[] = {
      {sizeof(hp_process), 1, 1, 4242, 1, -1, INT64_MIN, INT64_MAX, "./app --x=ü 'a b'", 0, 0, 0, NULL, 0, 0,
       0},
      {sizeof(hp_process), 2, UINT64_MAX, -7, 0, 12, -1, 0, "", UINT64_MAX, 0, 0, NULL, 0, 0, 0}};
  hp_thread threads[] = {{sizeof(hp_thread), 1, 1, 4242, 5, 6, "main"},
                         {sizeof(hp_thread), 9, 2, -1, 0, 0, u8}};
  hp_agent agents[] = {{sizeof(hp_agent), 1, 1, HP_AGENT_GPU, 0, "AMD", "gfx942", "Instinct MI300X", "ROCm 6",
                        304, 2100, INT64_MAX, 65536, 64},
                       {sizeof(hp_agent), 2, 1, -5, INT32_MIN, "", u8, "", "", -1, 0, 0, 0, 0}};
  hp_queue queues[] = {{sizeof(hp_queue), 1, 1, 1, "q0"}, {sizeof(hp_queue), 2, 2, 2, u8}};
  hp_code_object cos[] = {{sizeof(hp_code_object), 1, 1, 1, "file:///x.hsaco#offset=0", 0x7f0000000000ull,
                           4096, "", 0, "", "", ""},
                          {sizeof(hp_code_object), 3, 0, 0, "", UINT64_MAX, UINT64_MAX, "", 0, "", "", ""}};
  hp_kernel_symbol ks[] = {
      {sizeof(hp_kernel_symbol), 1, 1, "_Z4axpyPfS_f", "axpy(float*, float*, float)", 16, -32, NULL, 0},
      {sizeof(hp_kernel_symbol), 2, 0, u8, u8, INT64_MIN, INT64_MAX, NULL, 0}};
  hp_dispatch ds[] = {{.size = sizeof(hp_dispatch),
                       .id = 1,
                       .dispatch_id = 77,
                       .process_id = 1,
                       .thread_id = 1,
                       .agent_id = 1,
                       .queue_id = 1,
                       .kernel_id = 1,
                       .grid = {1024, 1, 1},
                       .workgroup = {64, 1, 1},
                       .private_size = 0,
                       .group_size = 128,
                       .start_ns = 1000,
                       .end_ns = 2000,
                       .enqueue_ns = 900,
                       .passes = 3,
                       .bytes_accessible = 1 << 20,
                       .bytes_restored = 2 << 20,
                       .cold = 1,
                       .region_id = 2},
                      {.size = sizeof(hp_dispatch),
                       .id = UINT64_MAX,
                       .dispatch_id = UINT64_MAX,
                       .process_id = 2,
                       .thread_id = 9,
                       .agent_id = 2,
                       .queue_id = 2,
                       .kernel_id = 2,
                       .grid = {UINT32_MAX, UINT32_MAX, 7},
                       .workgroup = {0, 0, UINT32_MAX},
                       .private_size = -1,
                       .group_size = INT64_MIN,
                       .start_ns = INT64_MAX,
                       .end_ns = -5,
                       .enqueue_ns = 0,
                       .passes = UINT32_MAX,
                       .bytes_accessible = UINT64_MAX,
                       .bytes_restored = 0,
                       .cold = UINT32_MAX,
                       .region_id = UINT64_MAX}};
  hp_counter_info cis[] = {{sizeof(hp_counter_info), 1, 1, "SQ_WAVES", "waves launched", "SQ", "waves", ""},
                           {sizeof(hp_counter_info), 2, 0, u8, u8, "sw", "%", "100 * A / B"}};
  hp_counter_value cvs[] = {
      {sizeof(hp_counter_value), 1, 1, 1, 0, 3.141592653589793, 0},
      {sizeof(hp_counter_value), UINT64_MAX, 2, UINT32_MAX, 1, -0.0, 0},
      {sizeof(hp_counter_value), 1, 2, 2, 0, dbl_bits(0x7ff8dead0000beefull), 0}, /* NaN with a payload */
      {sizeof(hp_counter_value), 1, 2, 3, 0, 4.9e-324, 0},                        /* smallest denormal */
      {sizeof(hp_counter_value), 1, 2, 4, 0, -INFINITY, 0},
      {sizeof(hp_counter_value), 1, 2, 5, 0, 1.7976931348623157e308, 0},
  };
  hp_region regs[] = {{sizeof(hp_region), 1, 1, 1, "init", "app", 10, 20},
                      {sizeof(hp_region), 2, 2, 9, u8, "", INT64_MIN, -1}};
  hp_metadata metas[] = {{sizeof(hp_metadata), "tool_version", "0.1.0"}, {sizeof(hp_metadata), "ü-key", u8}};
  const void *rows[HP_TABLE_COUNT] = {nodes, procs, threads, agents, queues, cos,
                                      ks,    ds,    cis,     cvs,    regs,   metas};
  size_t nrows[HP_TABLE_COUNT] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 6, 2, 2};
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    for (size_t i = 0; i < nrows[t]; i++)
      CHECK_OK(hp_write(s, (hp_table)t, (const char *)rows[t] + i * d->row_size), s);
  }
  CHECK(!exists(p));
  CHECK_OK(hp_store_close(s), NULL);
  CHECK(exists(p));

  hp_store *r = NULL;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &r), r); /* detected */
  CHECK_STR(hp_store_format(r), "log");
  CHECK_STR(hp_store_schema_version(r), "1");
  CHECK(hp_store_damage(r, NULL) == HP_OK);
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    const hp_table_desc *d = hp_table_describe((hp_table)t);
    CHECK_EQ_U64(count(r, (hp_table)t), nrows[t]);
    hp_cursor *c = NULL;
    CHECK_OK(hp_cursor_open(r, (hp_table)t, &c), r);
    unsigned char row[512];
    size_t i = 0;
    *(uint32_t *)(void *)row = (uint32_t)d->row_size;
    hp_status st;
    while ((st = hp_cursor_next(c, row)) == HP_OK) {
      CHECK_MSG(i < nrows[t] && row_eq((hp_table)t, row, (const char *)rows[t] + i * d->row_size),
                "%s row %zu", d->name, i);
      i++;
    }
    CHECK(st == HP_END);
    CHECK_EQ_U64(i, nrows[t]);
    hp_cursor_close(c);
  }
  CHECK_STR(hp_store_metadata(r, "ü-key"), u8);
  /* an older, smaller struct reads the fields it has */
  struct {
    uint32_t size;
    uint64_t id;
    uint64_t node_id;
  } small = {sizeof small, 0, 0};
  hp_cursor *c = NULL;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_PROCESS, &c), r);
  CHECK(hp_cursor_next(c, &small) == HP_OK && small.id == 1 && small.node_id == 1);
  hp_cursor_close(c);
  hp_store_close(r);
}

/* ---- update rules: the last row written per id (metadata: per key) wins, wherever it lies in the file ----
 */
static hp_store *g_upd;

static void *upd_thread(void *arg) {
  (void)arg;
  write_dispatch(g_upd, 100); /* this thread's writer takes the second chunk */
  hp_process p = {.size = sizeof p, .id = 1, .pid = 10, .start_ns = 5, .command = "first"};
  hp_write_process(g_upd, &p);
  hp_write_metadata(g_upd, "mode", "first");
  return NULL; /* its block is committed at thread exit */
}

static void test_update(void) {
  hp_log_set_defaults(65536, 256);
  const char *p = path_of("upd.log");
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &g_upd), g_upd);
  write_dispatch(g_upd, 1); /* the main thread's writer takes the first chunk */
  pthread_t th;
  pthread_create(&th, NULL, upd_thread, NULL);
  pthread_join(th, NULL);
  /* written later but stored earlier in the file (first chunk) */
  hp_process q = {.size = sizeof q, .id = 1, .pid = 10, .start_ns = 5, .end_ns = 99, .command = "second"};
  CHECK_OK(hp_write_process(g_upd, &q), g_upd);
  hp_process other = {.size = sizeof other, .id = 2, .pid = 11, .command = "other"};
  CHECK_OK(hp_write_process(g_upd, &other), g_upd);
  CHECK_OK(hp_write_metadata(g_upd, "mode", "second"), g_upd);
  hp_thread t1 = {.size = sizeof t1, .id = 5, .name = "a"}, t2 = {.size = sizeof t2, .id = 5, .name = "b"};
  hp_write_thread(g_upd, &t1);
  hp_write_thread(g_upd, &t2);
  CHECK_OK(hp_store_close(g_upd), NULL);
  hp_log_set_defaults(1 << 20, 16 << 10);

  hp_store *r = open_read(p);
  if (!r) return;
  CHECK_EQ_U64(count(r, HP_TABLE_PROCESS), 2);
  CHECK_EQ_U64(count(r, HP_TABLE_THREAD), 1);
  CHECK_EQ_U64(count(r, HP_TABLE_METADATA), 1);
  CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 2);
  hp_cursor *c;
  hp_process row = {.size = sizeof row};
  CHECK_OK(hp_cursor_open(r, HP_TABLE_PROCESS, &c), r);
  CHECK(hp_cursor_next(c, &row) == HP_OK);
  CHECK_EQ_U64(row.id, 1);
  CHECK_EQ_U64(row.end_ns, 99);
  CHECK_STR(row.command, "second");
  CHECK(hp_cursor_next(c, &row) == HP_OK);
  CHECK_EQ_U64(row.id, 2);
  CHECK(hp_cursor_next(c, &row) == HP_END);
  hp_cursor_close(c);
  hp_thread tr = {.size = sizeof tr};
  CHECK_OK(hp_cursor_open(r, HP_TABLE_THREAD, &c), r);
  CHECK(hp_cursor_next(c, &tr) == HP_OK);
  CHECK_STR(tr.name, "b");
  hp_cursor_close(c);
  CHECK_STR(hp_store_metadata(r, "mode"), "second");
  hp_store_close(r);
}

/* ---- 16 threads × 100k rows ---- */
#define NTHREADS 16
#define NPER 100000
static hp_store *g_mt;

static void *mt_thread(void *arg) {
  uint64_t t = (uint64_t)(uintptr_t)arg;
  hp_thread th = {.size = sizeof th, .id = t + 1, .process_id = 1, .tid = (int64_t)t, .name = "worker"};
  int ok = hp_write_thread(g_mt, &th) == HP_OK;
  for (uint64_t i = 0; i < NPER; i++) {
    hp_counter_value v = {.size = sizeof v,
                          .dispatch_id = t + 1,
                          .counter_id = i,
                          .pass = (uint32_t)t,
                          .imputed = (uint32_t)(i & 1),
                          .value = (double)i * 0.25};
    ok &= hp_write_counter_value(g_mt, &v) == HP_OK;
    if (i % 1000 == 0) ok &= write_dispatch(g_mt, t * NPER + i + 1);
  }
  return (void *)(uintptr_t)ok;
}

static void test_threads(void) {
  const char *p = path_of("mt.log");
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &g_mt), g_mt);
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++)
    pthread_create(&th[i], NULL, mt_thread, (void *)(uintptr_t)i);
  for (int i = 0; i < NTHREADS; i++) {
    void *ok;
    pthread_join(th[i], &ok);
    CHECK(ok == (void *)1);
  }
  uint64_t lost = 1;
  CHECK(hp_log_lost(g_mt, &lost) == HP_OK && lost == 0);
  CHECK_OK(hp_store_close(g_mt), NULL);

  hp_store *r = open_read(p);
  if (!r) return;
  CHECK(hp_store_damage(r, NULL) == HP_OK);
  CHECK_EQ_U64(count(r, HP_TABLE_COUNTER_VALUE), (uint64_t)NTHREADS * NPER);
  CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), (uint64_t)NTHREADS * (NPER / 1000));
  CHECK_EQ_U64(count(r, HP_TABLE_THREAD), NTHREADS);
  unsigned char *seen = calloc((size_t)NTHREADS * NPER, 1);
  int64_t last[NTHREADS];
  for (int i = 0; i < NTHREADS; i++)
    last[i] = -1;
  uint64_t bad = 0, n = 0;
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_COUNTER_VALUE, &c), r);
  hp_counter_value v = {.size = sizeof v};
  while (hp_cursor_next(c, &v) == HP_OK) {
    n++;
    uint64_t t = v.dispatch_id - 1, i = v.counter_id;
    if (t >= NTHREADS || i >= NPER || v.pass != t || v.imputed != (i & 1) || v.value != (double)i * 0.25 ||
        seen[t * NPER + i] || (int64_t)i <= last[t]) {
      bad++;
      continue;
    }
    seen[t * NPER + i] = 1;
    last[t] = (int64_t)i; /* one thread's rows come in the order written */
  }
  hp_cursor_close(c);
  CHECK_EQ_U64(bad, 0);
  CHECK_EQ_U64(n, (uint64_t)NTHREADS * NPER);
  free(seen);
  hp_store_close(r);
}

/* ---- HP_CREATE leaves nothing behind; HP_CREATE_LIVE is readable at once ---- */
static void test_create_modes(void) {
  size_t before = dir_entries();
  const char *p = path_of("tmp.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  for (int i = 1; i <= 100; i++)
    write_dispatch(s, (uint64_t)i);
  CHECK_OK(hp_log_flush(s), s);
  CHECK(!exists(p));
  hp_store_abort(s);
  CHECK(!exists(p));
  CHECK_EQ_U64(dir_entries(), before);

  const char *lp = path_of("live.log");
  CHECK_OK(hp_store_open(lp, "log", HP_CREATE_LIVE, &s), s);
  CHECK(exists(lp));
  hp_store *r = open_read(lp); /* empty but valid */
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 0);
    CHECK(hp_store_damage(r, NULL) == HP_OK);
    hp_store_close(r);
  }
  for (int i = 1; i <= 100; i++)
    write_dispatch(s, (uint64_t)i);
  r = open_read(lp); /* nothing committed yet */
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 0);
    hp_store_close(r);
  }
  CHECK_OK(hp_log_flush(s), s);
  r = open_read(lp);
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 100);
    CHECK(hp_store_damage(r, NULL) == HP_OK);
    hp_store_close(r);
  }
  for (int i = 101; i <= 150; i++)
    write_dispatch(s, (uint64_t)i);
  CHECK_OK(hp_log_flush_all(s), s);
  r = open_read(lp);
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 150);
    hp_store_close(r);
  }
  CHECK_OK(hp_store_close(s), NULL);
  r = open_read(lp);
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 150);
    hp_store_close(r);
  }
  /* a live log never replaces a file (two collectors with one pid in different PID namespaces sharing a
   * folder): refused, naming it, the old one intact and no temporary left */
  size_t old_size = file_size(lp);
  CHECK(hp_store_open(lp, "log", HP_CREATE_LIVE, &s) == HP_ERR_IO);
  CHECK(strstr(hp_store_error(s), "exists") != NULL);
  hp_store_abort(s);
  CHECK_EQ_U64(file_size(lp), old_size);
  CHECK_EQ_U64(dir_entries(), before + 1);
  CHECK(unlink(lp) == 0);
  /* abort of a live log removes it */
  CHECK_OK(hp_store_open(lp, "log", HP_CREATE_LIVE, &s), s);
  write_dispatch(s, 1);
  hp_store_abort(s);
  CHECK(!exists(lp));
  CHECK_EQ_U64(dir_entries(), before + 0);
  /* a directory that does not exist */
  CHECK(hp_store_open(path_of("no/such/dir.log"), "log", HP_CREATE, &s) != HP_OK);
  CHECK(strstr(hp_store_error(s), "no/such/dir.log") != NULL);
  hp_store_close(s);
}

/* ---- damage: truncation at every byte of a block, flipped bytes ---- */
typedef struct blkinfo {
  size_t off, end; /* header offset, end of payload */
  uint32_t count;
  uint64_t before; /* rows in earlier blocks */
} blkinfo;

/* Walk the blocks of a log's first chunks as docs/formats/log.md describes them; chunk trailers (a block
 * whose one record is of type 66) are not listed: they hold no rows. */
static size_t list_blocks(const unsigned char *b, size_t n, blkinfo *out, size_t max) {
  size_t hs = le32(b + 16), cs = (size_t)le32(b + 24), k = 0;
  uint64_t rows = 0;
  for (size_t c = hs; c < n; c += cs) {
    for (size_t pos = c; pos + 16 <= c + cs && pos + 16 <= n && le32(b + pos) == 0x4B4C4248u && k < max;) {
      size_t len = le32(b + pos + 4);
      if (b[pos + 16] != 66) {
        out[k] = (blkinfo){pos, pos + 16 + len, le32(b + pos + 8), rows};
        rows += out[k].count;
        k++;
      }
      pos = (pos + 16 + len + 7) & ~(size_t)7;
    }
  }
  return k;
}

/* Open `p`, expect damage `st` at `off` (or none), and exactly dispatch ids 1..n when ids == NULL, else
 * those. */
static void expect_rows(const char *p, hp_status st, uint64_t off, uint64_t n, const unsigned char *ids,
                        const char *what) {
  hp_store *r = NULL;
  hp_status o = hp_store_open(p, "log", HP_READ, &r);
  CHECK_MSG(o == HP_OK, "%s: open: %s", what, hp_store_error(r));
  if (o != HP_OK) {
    hp_store_close(r);
    return;
  }
  uint64_t doff = 0;
  hp_status d = hp_store_damage(r, &doff);
  CHECK_MSG(d == st, "%s: damage %d, want %d (%s)", what, (int)d, (int)st, hp_store_error(r));
  if (st != HP_OK) {
    CHECK_MSG(doff == off, "%s: damage at %llu, want %llu", what, (unsigned long long)doff,
              (unsigned long long)off);
    CHECK_MSG(strstr(hp_store_error(r), "blocks recovered") && strstr(hp_store_error(r), p), "%s: %s", what,
              hp_store_error(r));
  }
  uint64_t cnt = 0;
  hp_store_count(r, HP_TABLE_DISPATCH, &cnt);
  CHECK_MSG(cnt == n, "%s: %llu rows, want %llu", what, (unsigned long long)cnt, (unsigned long long)n);
  hp_cursor *c;
  hp_dispatch row = {.size = sizeof row};
  uint64_t k = 0, prev = 0, badrow = 0;
  hp_cursor_open(r, HP_TABLE_DISPATCH, &c);
  while (hp_cursor_next(c, &row) == HP_OK) {
    k++;
    int want = ids ? (row.id > prev && ids[row.id]) : row.id == k;
    if (!want || row.dispatch_id != row.id * 3 || row.grid[0] != (uint32_t)row.id) badrow++;
    prev = row.id;
  }
  hp_cursor_close(c);
  CHECK_MSG(k == n && badrow == 0, "%s: cursor gave %llu rows, %llu wrong", what, (unsigned long long)k,
            (unsigned long long)badrow);
  hp_store_close(r);
}

static void test_damage(void) {
  hp_log_set_defaults(65536, 256);
  const char *p = path_of("dmg.log");
  hp_store *s = NULL;
  const uint64_t N = 12000; /* several chunks of small blocks */
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  for (uint64_t i = 1; i <= N; i++)
    write_dispatch(s, i);
  CHECK_OK(hp_store_close(s), NULL);
  hp_log_set_defaults(1 << 20, 16 << 10);
  size_t n = 0;
  unsigned char *b = slurp(p, &n);
  static blkinfo bl[20000];
  size_t nb = list_blocks(b, n, bl, 20000);
  uint64_t total = nb ? bl[nb - 1].before + bl[nb - 1].count : 0;
  CHECK_EQ_U64(total, N);
  CHECK(nb > 100 && n > 4096 + 2 * 65536);
  expect_rows(p, HP_OK, 0, N, NULL, "intact");
  const char *q = path_of("cut.log");
  /* every cut inside the last block (small: committed at close) and inside the full block before it */
  blkinfo *L = &bl[nb - 1];
  for (size_t k = nb - 2; k < nb; k++) {
    blkinfo *B = &bl[k];
    if (k == nb - 2) {
      spit(q, b, B->end); /* as if the writer died before committing the last block */
      expect_rows(q, HP_ERR_TRUNCATED, B->end, B->before + B->count, NULL, "cut after a block");
    }
    for (size_t cut = B->off; cut < B->end; cut++) {
      spit(q, b, cut);
      char what[64];
      snprintf(what, sizeof what, "cut at %zu (block at %zu)", cut, B->off);
      expect_rows(q, HP_ERR_TRUNCATED, B->off, B->before, NULL, what);
    }
  }
  /* cuts in earlier blocks, first chunk and a middle one */
  size_t picks[] = {0, 1, nb / 3, nb / 2, nb - 2};
  for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++) {
    blkinfo *B = &bl[picks[k]];
    size_t cuts[] = {B->off + 1, B->off + 9, B->off + 16, (B->off + B->end) / 2, B->end - 1};
    for (size_t j = 0; j < 5; j++) {
      spit(q, b, cuts[j]);
      char what[64];
      snprintf(what, sizeof what, "cut at %zu (block %zu)", cuts[j], picks[k]);
      expect_rows(q, HP_ERR_TRUNCATED, B->off, B->before, NULL, what);
    }
  }
  /* cut after the last block, in the unused tail of its chunk: all rows, the cut reported */
  size_t tail = (L->end + 7 + 100) & ~(size_t)7;
  spit(q, b, tail);
  expect_rows(q, HP_ERR_TRUNCATED, tail, N, NULL, "cut in tail");
  /* cut exactly at a chunk boundary: the closing record counts the chunks and rows (version 3), so the
   * missing ones are named, with the dispatches they held */
  spit(q, b, 4096 + 65536);
  size_t in_first = 0;
  for (size_t k = 0; k < nb && bl[k].off < 4096 + 65536; k++)
    in_first += bl[k].count;
  expect_rows(q, HP_ERR_CORRUPT, 4096 + 65536, in_first, NULL, "cut at chunk end");
  {
    hp_store *r = open_read(q);
    char want[96];
    snprintf(want, sizeof want, "lost %llu of %llu dispatch rows", (unsigned long long)(N - in_first),
             (unsigned long long)N);
    CHECK_MSG(r && strstr(hp_store_error(r), "chunks missing (sequence 1, 2") &&
                  strstr(hp_store_error(r), want),
              "cut at chunk end: %s", r ? hp_store_error(r) : "");
    hp_store_close(r);
  }
  /* the same without its closing record (a writer killed): read as it is, with a note, no damage */
  unsigned char closing[1024];
  memcpy(closing, b + 512, sizeof closing);
  memset(b + 512, 0, sizeof closing);
  spit(q, b, 4096 + 65536);
  expect_rows(q, HP_OK, 0, in_first, NULL, "cut at chunk end, not closed");
  {
    hp_store *r = open_read(q);
    CHECK_MSG(r && strstr(hp_store_note(r), "no closing record"), "not closed: note '%s'",
              r ? hp_store_note(r) : "");
    hp_store_close(r);
  }
  memcpy(b + 512, closing, sizeof closing);
  /* cuts inside the header */
  size_t hcuts[] = {5, 8, 23, 100, 4095};
  for (size_t k = 0; k < 5; k++) {
    spit(q, b, hcuts[k]);
    hp_store *r = NULL;
    CHECK_MSG(hp_store_open(q, "log", HP_READ, &r) == HP_ERR_TRUNCATED, "header cut at %zu: %s", hcuts[k],
              hp_store_error(r));
    CHECK(strstr(hp_store_error(r), q) != NULL);
    hp_store_close(r);
  }

  /* flipped bytes: payload, length, magic, record count of a middle block; later chunks still read */
  unsigned char *ids = malloc(N + 1);
  size_t mids[] = {nb / 4, nb / 2, 3};
  size_t where[] = {0, 4, 0, 8}; /* payload byte (relative to payload), length, magic, count */
  for (size_t k = 0; k < 4; k++) {
    blkinfo *B = &bl[mids[k % 3]];
    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    size_t at = k == 0 ? B->off + 16 + (B->end - B->off - 16) / 2 : B->off + where[k];
    c[at] ^= k == 1 ? 0x40 : 0x01;
    spit(q, c, n);
    memset(ids, 1, N + 1);
    for (uint64_t i = B->before + 1; i <= B->before + B->count; i++)
      ids[i] = 0;
    char what[64];
    snprintf(what, sizeof what, "flip at %zu (block at %zu)", at, B->off);
    expect_rows(q, HP_ERR_CORRUPT, B->off, N - B->count, ids, what);
    free(c);
  }
  /* a block header that reads as zeros (a lost write-back), and a whole block of zeros: the blocks after
   * it in the same chunk are still read, and the damage is reported with what was skipped */
  for (size_t k = 0; k < 4; k++) {
    blkinfo *B = &bl[k < 2 ? nb / 4 : 0];
    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    memset(c + B->off, 0, k % 2 ? B->end - B->off : 16);
    spit(q, c, n);
    memset(ids, 1, N + 1);
    for (uint64_t i = B->before + 1; i <= B->before + B->count; i++)
      ids[i] = 0;
    char what[64];
    snprintf(what, sizeof what, "zeroed %s at %zu", k % 2 ? "block" : "header", B->off);
    expect_rows(q, HP_ERR_CORRUPT, B->off, N - B->count, ids, what);
    hp_store *r = open_read(q);
    if (r) {
      CHECK_MSG(strstr(hp_store_error(r), "zeroed block header") && strstr(hp_store_error(r), "damaged: ") &&
                    strstr(hp_store_error(r), "3 damaged places,"),
                "%s: %s", what, hp_store_error(r));
      hp_store_close(r);
    }
    free(c);
  }
  /* a flipped header byte makes the header invalid */
  {
    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    c[30] ^= 1;
    spit(q, c, n);
    hp_store *r = NULL;
    CHECK(hp_store_open(q, "log", HP_READ, &r) == HP_ERR_CORRUPT);
    hp_store_close(r);
    free(c);
  }
  free(ids);
  free(b);
}

/* ---- hand-made blocks: unknown record types, missing and extra columns ---- */
/* A fresh 64 KiB-chunk log made at p: its header at the start of a zeroed buffer of header + one chunk. */
static unsigned char *blank_log(const char *p) {
  hp_store *s = NULL;
  hp_log_set_defaults(65536, 0);
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  CHECK_OK(hp_store_close(s), NULL);
  hp_log_set_defaults(1 << 20, 0);
  size_t n = 0;
  unsigned char *h = slurp(p, &n), *f = calloc(4096 + 65536, 1);
  CHECK(n == 4096);
  memcpy(f, h, 4096);
  memset(f + 512, 0, 1024); /* no closing record: blocks of a writer that did not close the log */
  free(h);
  return f;
}

static void test_forward_compat(void) {
  const char *p = path_of("fc.log");
  unsigned char *f = blank_log(p);
  unsigned char *pl = f + 4096 + 16, *q = pl;
  *q++ = 99; /* unknown type, skipped by its length */
  *q++ = 3;
  *q++ = 1;
  *q++ = 2;
  *q++ = 3;
  *q++ = 8; /* dispatch with two columns: id 5, dispatch_id 15 */
  *q++ = 2;
  *q++ = 5;
  *q++ = 15;
  *q++ = 8; /* dispatch with all 21 columns plus two unknown trailing ones */
  unsigned char *lp = q++;
  unsigned char *st = q;
  *q++ = 6;
  *q++ = 18;
  for (int i = 2; i < 21; i++)
    *q++ = i == 7 ? 6 : 0; /* grid_x 6 */
  *q++ = 0x81;             /* an extra varint column */
  *q++ = 0x01;
  *q++ = 0x7f;
  *lp = (unsigned char)(q - st);
  *q++ = 12; /* metadata with a non-minimal length varint */
  *q++ = 0x85;
  *q++ = 0x00;
  *q++ = 1; /* seq */
  *q++ = 1;
  *q++ = 'k';
  *q++ = 1;
  *q++ = 'v';
  uint32_t len = (uint32_t)(q - pl);
  unsigned char *bh = f + 4096;
  put32(bh + 4, len);
  put32(bh + 8, 4);
  put32(bh + 12, hp_crc32c(hp_crc32c(0, bh + 4, 8), pl, len));
  put32(bh, 0x4B4C4248u);
  /* a second block whose header was written but not its magic: a crash before commit, not damage */
  unsigned char *b2 = f + 4096 + ((16 + len + 7) & ~7u);
  put32(b2 + 4, 3);
  put32(b2 + 8, 1);
  spit(p, f, 4096 + 65536);
  free(f);
  hp_store *r = open_read(p);
  if (!r) return;
  CHECK_MSG(hp_store_damage(r, NULL) == HP_OK, "%s", hp_store_error(r));
  CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 2);
  hp_cursor *c;
  hp_dispatch d = {.size = sizeof d};
  CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
  CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 5 && d.dispatch_id == 15 && d.process_id == 0 &&
        d.grid[0] == 0);
  CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 6 && d.dispatch_id == 18 && d.grid[0] == 6 &&
        d.bytes_restored == 0);
  CHECK(hp_cursor_next(c, &d) == HP_END);
  hp_cursor_close(c);
  CHECK(hp_store_metadata(r, "k") && strcmp(hp_store_metadata(r, "k"), "v") == 0);
  hp_store_close(r);
}

/* ---- a crafted log full of false block headers opens in linear time ---- */
static void test_resync_bound(void) {
  const char *p = path_of("fake.log");
  hp_store *s = NULL;
  hp_log_set_defaults(65536, 0);
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  CHECK_OK(hp_store_close(s), NULL);
  hp_log_set_defaults(1 << 20, 0);
  size_t n = 0, chunks = 256, size = 4096 + chunks * 65536;
  unsigned char *h = slurp(p, &n), *f = calloc(size, 1);
  memcpy(f, h, 4096);
  free(h);
  for (size_t pos = 4096; pos + 16 <= size; pos += 8) {
    put32(f + pos, 0x4B4C4248u);
    put32(f + pos + 4, (uint32_t)(65536 - 16 - (pos - 4096) % 65536)); /* fits the chunk, CRC wrong */
  }
  spit(p, f, size);
  free(f);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  hp_store *r = open_read(p);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  CHECK_MSG(secs < 2, "open took %.1f s", secs); /* unbounded: about 7 s */
  if (r) {
    CHECK(hp_store_damage(r, NULL) == HP_ERR_CORRUPT);
    hp_store_close(r);
  }
}

/* ---- the encoding example of docs/formats/log.md ---- */
static void test_doc_example(void) {
  const char *p = path_of("ex.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  hp_counter_value v = {.size = sizeof v, .dispatch_id = 300, .counter_id = 2, .pass = 1, .value = 1.5};
  CHECK_OK(hp_write_counter_value(s, &v), s);
  CHECK_OK(hp_store_close(s), NULL);
  size_t n = 0;
  unsigned char *b = slurp(p, &n);
  static const unsigned char want[] = {0x0a, 0x0d, 0xac, 0x02, 0x02, 0x01, 0x00, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f};
  CHECK(n > 4096 + 16 + sizeof want);
  if (n > 4096 + 16 + sizeof want) {
    CHECK(memcmp(b, "HUBPLOG", 8) == 0 && le32(b + 8) == 3 && le32(b + 12) == 2 && le32(b + 16) == 4096);
    CHECK(le32(b + 128) == hp_crc32c(0, b, 128));
    const unsigned char *h = b + 4096;
    CHECK(le32(h) == 0x4B4C4248u && le32(h + 4) == sizeof want && le32(h + 8) == 1);
    CHECK(le32(h + 12) == hp_crc32c(hp_crc32c(0, h + 4, 8), h + 16, sizeof want));
    CHECK(memcmp(h + 16, want, sizeof want) == 0);
    CHECK(h[32 + 16] == 66); /* the next block (align8) is the chunk's trailer */
  }
  free(b);
}

/* ---- dispatch batch records: the example of docs/formats/log.md, crafted records, torn batches ---- */
/* Dispatch rows of the records in [p, end): 1 per dispatch record, the count of a batch record (type 65). */
static uint64_t payload_rows(const unsigned char *p, const unsigned char *end) {
  uint64_t rows = 0;
  while (p < end) {
    unsigned type = *p++, len = *p & 0x7f;
    if (*p++ & 0x80) len |= (unsigned)*p++ << 7;
    rows += type == 8 ? 1 : type == 65 ? p[0] : 0;
    p += len;
  }
  return rows;
}

/* A block holding the payload pl[0..len) with `count` records as the first block of a 64 KiB-chunk log at
 * p (the header taken from a fresh log). */
static void craft_log(const char *p, const unsigned char *pl, uint32_t len, uint32_t count) {
  unsigned char *f = blank_log(p);
  unsigned char *bh = f + 4096;
  memcpy(bh + 16, pl, len);
  put32(bh + 4, len);
  put32(bh + 8, count);
  put32(bh + 12, hp_crc32c(hp_crc32c(0, bh + 4, 8), bh + 16, len));
  put32(bh, 0x4B4C4248u);
  spit(p, f, 4096 + 65536);
  free(f);
}

static void test_batch(void) {
  /* the worked example: two rows of one harvest */
  const char *p = path_of("batch.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  hp_dispatch two[2] = {{.size = sizeof(hp_dispatch),
                         .id = 1,
                         .dispatch_id = 1,
                         .process_id = 1,
                         .thread_id = 1,
                         .agent_id = 1,
                         .queue_id = 1,
                         .kernel_id = 1,
                         .grid = {64, 1, 1},
                         .workgroup = {8, 1, 1},
                         .start_ns = 1000,
                         .end_ns = 1500,
                         .enqueue_ns = 900,
                         .passes = 1}};
  two[1] = two[0];
  two[1].id = two[1].dispatch_id = 2;
  two[1].start_ns = 2000, two[1].end_ns = 2600, two[1].enqueue_ns = 1900;
  size_t w = 0;
  CHECK_OK(hp_log_write_dispatches(s, two, 2, &w), s);
  CHECK_EQ_U64(w, 2);
  CHECK_OK(hp_store_close(s), NULL);
  size_t n = 0;
  unsigned char *b = slurp(p, &n);
  static const unsigned char want[] = {
      0x41, 0xa6, 0x00, 0x02,                                                       /* type, length, rows */
      0xff, 0xbf, 0x9e, 0x00, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x80, 0x01, /* row 1 */
      0x02, 0x02, 0x10, 0x02, 0x02, 0xd0, 0x0f, 0xb8, 0x17, 0x88, 0x0e, 0x02, 0x83,
      0x80, 0x8e, 0x00, 0x02, 0x02, 0xd0, 0x0f, 0x98, 0x11, 0xd0, 0x0f}; /* row 2 */
  CHECK(n > 4096 + 16 + sizeof want);
  if (n > 4096 + 16 + sizeof want) {
    const unsigned char *h = b + 4096;
    CHECK(le32(h + 4) == sizeof want && le32(h + 8) == 1);
    CHECK(memcmp(h + 16, want, sizeof want) == 0);
  }
  free(b);
  hp_store *r = open_read(p);
  if (r) {
    hp_cursor *c;
    hp_dispatch d = {.size = sizeof d};
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 2);
    CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
    CHECK(hp_cursor_next(c, &d) == HP_OK && memcmp(&d, &two[0], sizeof d) == 0);
    CHECK(hp_cursor_next(c, &d) == HP_OK && memcmp(&d, &two[1], sizeof d) == 0);
    CHECK(hp_cursor_next(c, &d) == HP_END);
    hp_cursor_close(c);
    hp_store_close(r);
  }

  /* crafted: a column this reader does not know (bit 36), padded mask bytes, a cut last row, trailing bytes
   */
  static const unsigned char pl[] = {
      65,   14,   3,                                 /* batch of 3 rows */
      0x83, 0x80, 0x80, 0x80, 0x80, 0x02, 10, 30, 7, /* id 5, dispatch_id 15, column 36 += -4 (dropped) */
      0x01, 2,                                       /* id 6, the rest unchanged */
      0x03, 2,                                       /* id 7, dispatch_id: cut (the record ends) */
      65,   2,    3,    0x01,                        /* 3 rows in 1 byte left: malformed, no rows */
      65,   3,    1,    0x00, 0x55};                 /* 1 row, unchanged (all zero), a trailing byte */
  const char *pc = path_of("bcraft.log");
  craft_log(pc, pl, sizeof pl, 3);
  r = open_read(pc);
  if (r) {
    uint64_t off = 0;
    CHECK(hp_store_damage(r, &off) == HP_ERR_CORRUPT && off == 4096 + 16 + 16);
    CHECK_MSG(strstr(hp_store_error(r), "malformed dispatch batch"), "%s", hp_store_error(r));
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 4);
    hp_cursor *c;
    hp_dispatch d = {.size = sizeof d};
    CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
    CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 5 && d.dispatch_id == 15 && d.process_id == 0);
    CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 6 && d.dispatch_id == 15);
    CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 7 && d.dispatch_id == 15);
    CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 0 && d.dispatch_id == 0);
    CHECK(hp_cursor_next(c, &d) == HP_END);
    hp_cursor_close(c);
    hp_store_close(r);
  }

  /* torn batches: small blocks of batch records, cut at every byte of the last two blocks; a byte changed
   * inside a record: the block CRC rejects that block, the others are read */
  hp_log_set_defaults(65536, 4096);
  const uint64_t N = 3000;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  hp_dispatch rows[8];
  for (uint64_t i = 1; i <= N; i += 8) {
    size_t k = N + 1 - i < 8 ? (size_t)(N + 1 - i) : 8;
    for (size_t j = 0; j < k; j++)
      rows[j] = dispatch_row(i + j);
    CHECK_OK(hp_log_write_dispatches(s, rows, k, &w), s);
  }
  CHECK_OK(hp_store_close(s), NULL);
  hp_log_set_defaults(1 << 20, 16 << 10);
  b = slurp(p, &n);
  static blkinfo bl[2000];
  size_t nb = list_blocks(b, n, bl, 2000);
  uint64_t before = 0;
  for (size_t k = 0; k < nb; k++) { /* rows, not records, before each block */
    bl[k].before = before;
    before += payload_rows(b + bl[k].off + 16, b + bl[k].end);
  }
  CHECK_EQ_U64(before, N);
  CHECK(nb > 10);
  expect_rows(p, HP_OK, 0, N, NULL, "batches intact");
  const char *q = path_of("bcut.log");
  for (size_t k = nb - 2; k < nb; k++)
    for (size_t cut = bl[k].off; cut < bl[k].end; cut++) {
      spit(q, b, cut);
      char what[64];
      snprintf(what, sizeof what, "batch cut at %zu (block at %zu)", cut, bl[k].off);
      expect_rows(q, HP_ERR_TRUNCATED, bl[k].off, bl[k].before, NULL, what);
    }
  blkinfo *B = &bl[nb / 2];
  unsigned char *f = malloc(n);
  memcpy(f, b, n);
  f[B->off + 16 + 9] ^= 0x04; /* inside the first row of the block's batch */
  spit(q, f, n);
  static unsigned char ids[3001];
  for (uint64_t i = 1; i <= N; i++)
    ids[i] = i <= B->before || i > bl[nb / 2 + 1].before;
  expect_rows(q, HP_ERR_CORRUPT, B->off, N - (bl[nb / 2 + 1].before - B->before), ids, "batch byte flipped");
  free(f);
  free(b);
}

/* Random rows through hp_log_write_dispatches read back equal: each column changes now and then (by small,
 * large and negative steps), the ids and times nearly always, batches of 1-100 rows (split at 64 and at
 * block ends); the rows given carry garbage in their padding, which must not matter. */
static uint64_t xs(uint64_t *x) { /* splitmix64 */
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint64_t step(uint64_t *x, unsigned pct) {
  uint64_t r = xs(x);
  if (r % 100 >= pct) return 0;
  switch (r >> 8 & 3) {
  case 0: return 1;
  case 1: return (r >> 16) % 300000;
  case 2: return (uint64_t)0 - (r >> 16) % 5000;
  default: return r >> 20;
  }
}
static void test_batch_random(void) {
  const char *p = path_of("brandom.log");
  enum { N = 6000 };
  hp_dispatch *want = calloc(N, sizeof *want), *give = malloc(N * sizeof *give);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  hp_dispatch r = {.size = sizeof r};
  for (size_t i = 0; i < N; i++) {
    unsigned rare = i % 1000 < 500 ? 3 : 40; /* stretches of quiet rows and of busy ones */
    r.id += 1 + step(&x, 5);
    r.dispatch_id += 1 + step(&x, 5);
    r.process_id += step(&x, rare);
    r.thread_id += step(&x, rare);
    r.agent_id += step(&x, rare);
    r.queue_id += step(&x, rare);
    r.kernel_id += step(&x, 20);
    for (int d = 0; d < 3; d++) {
      r.grid[d] += (uint32_t)step(&x, rare);
      r.workgroup[d] += (uint32_t)step(&x, rare);
    }
    r.private_size += (int64_t)step(&x, rare);
    r.group_size += (int64_t)step(&x, rare);
    r.start_ns += (int64_t)step(&x, 95);
    r.end_ns += (int64_t)step(&x, 95);
    r.enqueue_ns += (int64_t)step(&x, 95);
    r.passes += (uint32_t)step(&x, rare);
    r.bytes_accessible += step(&x, rare);
    r.bytes_restored += step(&x, rare);
    r.cold ^= (uint32_t)(step(&x, rare) & 1);
    r.region_id += step(&x, rare);
    r.correlation_id += step(&x, rare); /* CUDA's columns (issue 25) */
    r.graph_id += step(&x, rare);
    memcpy(&want[i], &r, sizeof r); /* r's padding is zero: it was zero-initialised and only fields change */
    memset(&give[i], 0xa5 ^ (int)(i & 0xff), sizeof give[i]);
    give[i].size = r.size, give[i].id = r.id, give[i].dispatch_id = r.dispatch_id;
    give[i].process_id = r.process_id, give[i].thread_id = r.thread_id, give[i].agent_id = r.agent_id;
    give[i].queue_id = r.queue_id, give[i].kernel_id = r.kernel_id;
    memcpy(give[i].grid, r.grid, sizeof r.grid);
    memcpy(give[i].workgroup, r.workgroup, sizeof r.workgroup);
    give[i].private_size = r.private_size, give[i].group_size = r.group_size;
    give[i].start_ns = r.start_ns, give[i].end_ns = r.end_ns, give[i].enqueue_ns = r.enqueue_ns;
    give[i].passes = r.passes, give[i].bytes_accessible = r.bytes_accessible;
    give[i].bytes_restored = r.bytes_restored, give[i].cold = r.cold, give[i].region_id = r.region_id;
    give[i].correlation_id = r.correlation_id, give[i].graph_id = r.graph_id;
  }
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  size_t total = 0;
  for (size_t i = 0; i < N;) {
    size_t k = 1 + xs(&x) % 100, w = 0;
    if (k > N - i) k = N - i;
    CHECK_OK(hp_log_write_dispatches(s, give + i, k, &w), s);
    total += w;
    i += k;
  }
  CHECK_EQ_U64(total, N);
  CHECK_OK(hp_store_close(s), NULL);
  hp_store *rd = open_read(p);
  if (rd) {
    hp_cursor *c;
    hp_dispatch d = {.size = sizeof d};
    size_t i = 0, bad = 0;
    CHECK_OK(hp_cursor_open(rd, HP_TABLE_DISPATCH, &c), rd);
    while (hp_cursor_next(c, &d) == HP_OK) {
      if (i >= N || memcmp(&d, &want[i], sizeof d) != 0) {
        if (!bad++) fprintf(stderr, "  row %zu read back differs\n", i);
      }
      i++;
    }
    CHECK_EQ_U64(i, N);
    CHECK_EQ_U64(bad, 0);
    hp_cursor_close(c);
    hp_store_close(rd);
  }
  free(want);
  free(give);
}

/* ---- crashes: a child writes a live log and dies; every flushed row survives ---- */
static hp_store *g_crash;
static void *crash_thread(void *arg) {
  (void)arg;
  for (uint64_t i = 0; i < 50; i++)
    write_dispatch(g_crash, 100000 + i);
  return NULL; /* committed at thread exit */
}

static void crash_child(const char *p, int how) {
  if (hp_store_open(p, "log", HP_CREATE_LIVE, &g_crash) != HP_OK) _exit(3);
  hp_process pr = {.size = sizeof pr, .id = 1, .pid = getpid(), .command = "crash"};
  hp_write_process(g_crash, &pr);
  pthread_t th;
  pthread_create(&th, NULL, crash_thread, NULL);
  pthread_join(th, NULL);
  for (uint64_t i = 1; i <= 5000; i++)
    write_dispatch(g_crash, i);
  hp_log_flush(g_crash);
  for (uint64_t i = 5001; i <= 5010; i++)
    write_dispatch(g_crash, i); /* never committed */
  if (how == SIGKILL) kill(getpid(), SIGKILL);
  if (how == SIGABRT) abort();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(SIGSEGV, &sa, NULL);
  raise(SIGSEGV);
  _exit(4);
}

static void test_crash(void) {
  int sigs[] = {SIGKILL, SIGABRT, SIGSEGV};
  for (int k = 0; k < 3; k++) {
    char name[32];
    snprintf(name, sizeof name, "crash%d.log", k);
    const char *p = path_of(name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) crash_child(p, sigs[k]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k], "child status %#x", status);
    hp_store *r = open_read(p);
    if (!r) continue;
    CHECK_MSG(hp_store_damage(r, NULL) == HP_OK, "%s", hp_store_error(r));
    CHECK_EQ_U64(count(r, HP_TABLE_PROCESS), 1);
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 5050);
    hp_cursor *c;
    hp_dispatch d = {.size = sizeof d};
    uint64_t main_rows = 0, thread_rows = 0, bad = 0;
    hp_cursor_open(r, HP_TABLE_DISPATCH, &c);
    while (hp_cursor_next(c, &d) == HP_OK) {
      if (d.id >= 100000 && d.id < 100050)
        thread_rows++;
      else if (d.id == main_rows + 1)
        main_rows++;
      else
        bad++;
    }
    hp_cursor_close(c);
    CHECK_EQ_U64(main_rows, 5000);
    CHECK_EQ_U64(thread_rows, 50);
    CHECK_EQ_U64(bad, 0);
    hp_store_close(r);
  }
}

/* ---- losses: a full disk (file size limit) turns into LOST counts, never a crash ---- */
static void test_full_disk(void) {
  const char *p = path_of("full.log");
  const uint64_t N = 40000;
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    hp_log_set_defaults(65536, 1024);
    struct rlimit rl = {4096 + 3 * 65536, 4096 + 3 * 65536};
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &rl);
    hp_store *s;
    if (hp_store_open(p, "log", HP_CREATE_LIVE, &s) != HP_OK) _exit(3);
    hp_process pr = {.size = sizeof pr, .id = 1, .pid = getpid(), .lost_records = 7};
    hp_write_process(s, &pr);
    uint64_t failed = 0, lost = 0;
    int e = errno = 12345;
    for (uint64_t i = 0; i < N; i++) {
      hp_counter_value v = {.size = sizeof v, .dispatch_id = i + 1, .counter_id = 1, .pass = 1, .value = 1.5};
      failed += hp_write_counter_value(s, &v) != HP_OK;
    }
    hp_log_lost(s, &lost);
    int errno_kept = errno == e;
    int st = hp_store_close(s);
    uint64_t msg[3] = {failed, lost, (uint64_t)errno_kept};
    if (write(fds[1], msg, sizeof msg) != sizeof msg) _exit(5);
    _exit(st == HP_OK ? 0 : 4);
  }
  close(fds[1]);
  uint64_t msg[3] = {0, 0, 0};
  CHECK(read(fds[0], msg, sizeof msg) == sizeof msg);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
  CHECK(msg[0] > 0 && msg[0] == msg[1]);
  CHECK(msg[2] == 1);
  hp_store *r = open_read(p);
  if (!r) return;
  CHECK(hp_store_damage(r, NULL) == HP_OK);
  uint64_t stored = count(r, HP_TABLE_COUNTER_VALUE);
  hp_cursor *c;
  hp_process pr = {.size = sizeof pr};
  hp_cursor_open(r, HP_TABLE_PROCESS, &c);
  CHECK(hp_cursor_next(c, &pr) == HP_OK);
  hp_cursor_close(c);
  CHECK_MSG(stored + pr.lost_records - 7 == N, "stored %llu + lost %llu != %llu", (unsigned long long)stored,
            (unsigned long long)(pr.lost_records - 7), (unsigned long long)N);
  CHECK_EQ_U64(pr.lost_records - 7, msg[1]);
  CHECK(stored > 10000 && stored < N);
  hp_store_close(r);
}

/* ---- explicit LOST records, rows too large, threads that come and go ---- */
static hp_store *g_short;
static void *short_thread(void *arg) {
  write_dispatch(g_short, (uint64_t)(uintptr_t)arg);
  return NULL;
}

static void test_lost_and_pool(void) {
  const char *p = path_of("lost.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE_LIVE, &s), s);
  hp_process p1 = {.size = sizeof p1, .id = 1}, p7 = {.size = sizeof p7, .id = 7, .lost_records = 100};
  hp_write_process(s, &p1);
  hp_write_process(s, &p7);
  CHECK_OK(hp_log_write_lost(s, 7, 5), s);
  CHECK_OK(hp_log_write_lost(s, 0, 3), s);  /* the last process written */
  CHECK_OK(hp_log_write_lost(s, 99, 2), s); /* unknown: process 1 */
  /* a row larger than a chunk is refused and counted */
  size_t big = (1u << 20) + 10;
  char *str = malloc(big + 1);
  memset(str, 'x', big);
  str[big] = 0;
  hp_region reg = {.size = sizeof reg, .id = 1, .name = str};
  CHECK(hp_write_region(s, &reg) == HP_ERR_INVALID);
  str[100000] = 0; /* larger than a block, smaller than a chunk */
  reg.id = 2;
  CHECK_OK(hp_write_region(s, &reg), s);
  uint64_t lost = 0;
  CHECK(hp_log_lost(s, &lost) == HP_OK && lost == 1);
  /* 200 short-lived threads share writers: the file does not grow by a chunk per thread */
  g_short = s;
  for (uintptr_t i = 1; i <= 200; i++) {
    pthread_t th;
    pthread_create(&th, NULL, short_thread, (void *)i);
    pthread_join(th, NULL);
  }
  hp_store *r = open_read(p); /* rows of exited threads are committed at their exit */
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 200);
    CHECK_EQ_U64(count(r, HP_TABLE_REGION), 0); /* still in the main thread's open block */
    hp_store_close(r);
  }
  struct stat st;
  CHECK(stat(p, &st) == 0 && st.st_size <= 4096 + 3 * (1 << 20));
  CHECK_OK(hp_store_close(s), NULL);
  r = open_read(p);
  if (!r) return;
  hp_cursor *c;
  hp_process row = {.size = sizeof row};
  uint64_t l1 = 0, l7 = 0;
  hp_cursor_open(r, HP_TABLE_PROCESS, &c);
  while (hp_cursor_next(c, &row) == HP_OK) {
    if (row.id == 1) l1 = row.lost_records;
    if (row.id == 7) l7 = row.lost_records;
  }
  hp_cursor_close(c);
  CHECK_EQ_U64(l7, 100 + 5 + 3 + 1); /* the refused row counts against the last process written */
  CHECK_EQ_U64(l1, 2);               /* from the unknown process 99 */
  hp_region rr = {.size = sizeof rr};
  hp_cursor_open(r, HP_TABLE_REGION, &c);
  CHECK(hp_cursor_next(c, &rr) == HP_OK && strlen(rr.name) == 100000);
  hp_cursor_close(c);
  hp_store_close(r);
  free(str);
}

/* ---- one thread, many stores; a store closed and another opened at the same address ---- */
static void test_many_stores(void) {
  enum { NS = 7 };
  hp_store *s[NS];
  for (int round = 0; round < 3; round++) {
    for (int k = 0; k < NS; k++) {
      char name[32];
      snprintf(name, sizeof name, "many%d.log", k);
      CHECK_OK(hp_store_open(path_of(name), "log", HP_CREATE, &s[k]), s[k]);
    }
    for (uint64_t i = 1; i <= 1000; i++)
      for (int k = 0; k < NS; k++)
        write_dispatch(s[k], i * NS + (uint64_t)k);
    if (round == 0) { /* every store flushes this thread's rows, cached or not */
      for (int k = 0; k < NS; k++)
        CHECK_OK(hp_log_flush(s[k]), s[k]);
      for (int k = 0; k < NS; k++) {
        char name[32];
        snprintf(name, sizeof name, ".many%d.log", k);
        DIR *d = opendir(g_dir);
        struct dirent *e;
        uint64_t rows = 0;
        while (d && (e = readdir(d)) != NULL) {
          if (strncmp(e->d_name, name, strlen(name)) != 0) continue; /* the temporary file */
          hp_store *r = open_read(path_of(e->d_name));
          if (r) rows = count(r, HP_TABLE_DISPATCH);
          hp_store_close(r);
        }
        if (d) closedir(d);
        CHECK_EQ_U64(rows, 1000);
      }
    }
    for (int k = 0; k < NS; k++)
      CHECK_OK(hp_store_close(s[k]), NULL);
    for (int k = 0; k < NS; k++) {
      char name[32];
      snprintf(name, sizeof name, "many%d.log", k);
      hp_store *r = open_read(path_of(name));
      if (!r) continue;
      hp_cursor *c;
      hp_dispatch d = {.size = sizeof d};
      uint64_t n = 0, bad = 0;
      hp_cursor_open(r, HP_TABLE_DISPATCH, &c);
      while (hp_cursor_next(c, &d) == HP_OK)
        bad += d.id != ++n * NS + (uint64_t)k;
      hp_cursor_close(c);
      CHECK_EQ_U64(n, 1000);
      CHECK_EQ_U64(bad, 0);
      hp_store_close(r);
    }
  }
}

/* ---- fork: the child must leave the parent's log alone ---- */
static void test_fork(void) {
  const char *p = path_of("fork.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  for (uint64_t i = 1; i <= 100; i++)
    write_dispatch(s, i);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int ok = !write_dispatch(s, 999999) && hp_log_flush(s) == HP_ERR_UNSUPPORTED;
    ok &= hp_store_close(s) != HP_OK;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (uint64_t i = 101; i <= 200; i++)
    write_dispatch(s, i);
  CHECK_OK(hp_store_close(s), NULL);
  expect_rows(p, HP_OK, 0, 200, NULL, "after fork");
}

/* ---- foreign and broken files ---- */
static void expect_open_error(const char *p, const char *format, hp_status want, const char *text) {
  hp_store *r = NULL;
  hp_status st = hp_store_open(p, format, HP_READ, &r);
  CHECK_MSG(st == want, "%s: status %d, want %d: %s", p, (int)st, (int)want, hp_store_error(r));
  CHECK_MSG(strstr(hp_store_error(r), p) != NULL, "error does not name the file: %s", hp_store_error(r));
  if (text) CHECK_MSG(strstr(hp_store_error(r), text) != NULL, "'%s' lacks '%s'", hp_store_error(r), text);
  hp_store_close(r);
}

static void test_foreign(void) {
  const char *txt = path_of("notes.txt");
  spit(txt, "hello, this is not a log\n", 25);
  expect_open_error(txt, "log", HP_ERR_FORMAT, "not a hubprof log");
  expect_open_error(txt, NULL, HP_ERR_FORMAT, NULL);
  const char *empty = path_of("empty.log");
  spit(empty, "", 0);
  expect_open_error(empty, "log", HP_ERR_FORMAT, "empty");
  expect_open_error(empty, NULL, HP_ERR_FORMAT, NULL);
  unsigned char sq[8192];
  memset(sq, 0, sizeof sq);
  memcpy(sq, "SQLite format 3", 16);
  const char *db = path_of("x.db");
  spit(db, sq, sizeof sq);
  expect_open_error(db, "log", HP_ERR_FORMAT, "not a hubprof log");
  expect_open_error(path_of("missing.log"), "log", HP_ERR_NOT_FOUND, NULL);
  expect_open_error(g_dir, "log", HP_ERR_FORMAT, NULL);

  const char *p = path_of("ver.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  write_dispatch(s, 1);
  CHECK_OK(hp_store_close(s), NULL);
  size_t n;
  unsigned char *b = slurp(p, &n);
  b[12] = 4; /* min_reader_version 4 */
  spit(p, b, n);
  expect_open_error(p, "log", HP_ERR_VERSION, "version");
  expect_open_error(p, NULL, HP_ERR_VERSION, "version");
  b[12] = 2;
  b[24] = 1; /* chunk size no longer a power of two (and the header checksum wrong) */
  spit(p, b, n);
  expect_open_error(p, "log", HP_ERR_CORRUPT, NULL);
  free(b);
  /* writing a read store, reading a write store */
  CHECK(hp_log_flush(NULL) == HP_ERR_UNSUPPORTED);
  CHECK(hp_log_set_defaults(1000, 0) == HP_ERR_INVALID);
  CHECK(hp_log_set_defaults(65536, 65536) == HP_ERR_INVALID);
}

/* ---- hostile sizes: a 50 GiB sparse log reads in time proportional to its data; a zeroed block header
 * in a sparse log still resynchronises ---- */
static void test_sparse(void) {
  const char *p = path_of("sparse.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  for (uint64_t i = 1; i <= 100; i++)
    write_dispatch(s, i);
  CHECK_OK(hp_store_close(s), NULL);
  CHECK(truncate(p, (off_t)50 << 30) == 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  hp_store *r = open_read(p);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  CHECK_MSG(secs < 5, "opening a 50 GiB sparse log took %.1f s", secs); /* every page read: over 60 s */
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 100);
    CHECK(hp_store_damage(r, NULL) == HP_OK);
    hp_store_close(r);
  }
  unlink(p);
}

/* ---- a log cut by another process while it is read: a clean error, not SIGBUS ---- */
static void test_shrink(void) {
  const char *p = path_of("shrink.log");
  hp_log_set_defaults(65536, 0);
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  for (uint64_t i = 1; i <= 20000; i++)
    write_dispatch(s, i);
  CHECK_OK(hp_store_close(s), NULL);
  hp_log_set_defaults(1 << 20, 16 << 10);
  hp_store *r = open_read(p);
  if (!r) return;
  CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 20000);
  CHECK(truncate(p, 4096 + 65536) == 0); /* only the first chunk is left */
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
  hp_dispatch row = {.size = sizeof row};
  uint64_t k = 0;
  hp_status st;
  while ((st = hp_cursor_next(c, &row)) == HP_OK)
    k++;
  CHECK_MSG(st == HP_ERR_IO && k > 0 && k < 20000, "status %d after %llu rows", (int)st,
            (unsigned long long)k);
  CHECK_MSG(strstr(hp_store_error(r), "shrank") && strstr(hp_store_error(r), p), "%s", hp_store_error(r));
  hp_cursor_close(c);
  CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r); /* a new cursor: the same error, at once */
  CHECK(hp_cursor_next(c, &row) == HP_ERR_IO);
  hp_cursor_close(c);
  hp_store_close(r);
  /* a SIGBUS elsewhere still ends the process as before: checked in a child */
  pid_t pid = fork();
  if (pid == 0) {
    raise(SIGBUS);
    _exit(0);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  /* ended by it, or by the handler that was there before ours (a sanitizer's reports and exits) */
  CHECK_MSG(WIFSIGNALED(ws) ? WTERMSIG(ws) == SIGBUS || WTERMSIG(ws) == SIGABRT : WEXITSTATUS(ws) != 0,
            "a foreign SIGBUS: status %#x", ws);
}

/* ---- LOST counts that add up past 2^64 saturate, never wrap to 0 ---- */
static void test_lost_wrap(void) {
  const char *p = path_of("lostwrap.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  hp_process p1 = {.size = sizeof p1, .id = 1, .pid = 5};
  hp_write_process(s, &p1);
  CHECK_OK(hp_log_write_lost(s, 1, 1ull << 63), s);
  CHECK_OK(hp_log_write_lost(s, 1, 1ull << 63), s);
  CHECK_OK(hp_store_close(s), NULL);
  hp_store *r = open_read(p);
  if (!r) return;
  hp_cursor *c;
  hp_process row = {.size = sizeof row};
  CHECK_OK(hp_cursor_open(r, HP_TABLE_PROCESS, &c), r);
  CHECK(hp_cursor_next(c, &row) == HP_OK && row.lost_records == UINT64_MAX);
  hp_cursor_close(c);
  hp_store_close(r);
}

/* ---- the launch file (docs/formats/log.md, "The launch file"): dispatches a killed writer had launched and
 * not yet put in its log, read beside a log without closing record whose writer is gone ---- */
static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* A ring header at off of b: entries at ents, 2^k of them, [tail, head). */
static void launch_ring(unsigned char *b, size_t off, size_t ents, unsigned k, uint64_t head, uint64_t tail,
                        uint64_t thread, uint64_t cal_seq, int64_t cal_stamp, int64_t cal_ns, double rate,
                        uint64_t prev) {
  unsigned char *r = b + off;
  uint64_t rb;
  memcpy(&rb, &rate, 8);
  put64(r + HP_LAUNCH_R_HEAD, head);
  put64(r + HP_LAUNCH_R_TAIL, tail);
  put64(r + HP_LAUNCH_R_GEOM, ents | k);
  put64(r + HP_LAUNCH_R_THREAD, thread);
  put64(r + HP_LAUNCH_R_CAL_SEQ, cal_seq);
  put64(r + HP_LAUNCH_R_CAL_STAMP, (uint64_t)cal_stamp);
  put64(r + HP_LAUNCH_R_CAL_NS, (uint64_t)cal_ns);
  put64(r + HP_LAUNCH_R_CAL_RATE, rb);
  put64(r + HP_LAUNCH_R_PREV, prev);
  memcpy(r + HP_LAUNCH_R_MAGIC, HP_LAUNCH_RING_MAGIC, 8);
}

/* Entry `slot` of the ring whose entries are at ents: dispatch id, flags; the other fields from the id. */
static void launch_entry(unsigned char *b, size_t ents, unsigned slot, uint64_t id, uint32_t flags) {
  unsigned char *e = b + ents + (size_t)slot * HP_LAUNCH_ENTRY;
  memset(e, 0xAB, 8); /* the writer's own bytes */
  put64(e + HP_LAUNCH_E_DISPATCH, id);
  put32(e + HP_LAUNCH_E_KERNEL, (uint32_t)id % 7 + 1);
  put32(e + HP_LAUNCH_E_QUEUE, 2);
  put32(e + HP_LAUNCH_E_AGENT, 3);
  put32(e + HP_LAUNCH_E_FLAGS, flags);
  for (int i = 0; i < 3; i++) {
    put32(e + HP_LAUNCH_E_GRID + 4 * i, (uint32_t)id + (uint32_t)i);
    put32(e + HP_LAUNCH_E_WG + 4 * i, 64u >> i);
  }
  put64(e + HP_LAUNCH_E_ENQUEUE, 1000 + 2 * id); /* 2 stamp units per ns from stamp 1000 */
  put64(e + HP_LAUNCH_E_REGION, id == 100 ? 77 : 0);
}

enum {
  LF_A = 4096,
  LF_A_ENTS = 8192,
  LF_B = 12288,
  LF_B_ENTS = 16384,
  LF_C = 20480,
  LF_C_ENTS = 24576,
  LF_SIZE = 24576 + 16 * 72
};

/* The test's launch file: ring C (made last: thread 8, calibration being rewritten) holds 101, 200 (cold),
 * id 0 and 102; ring B (head - tail over its capacity) is skipped; ring A (thread 7) holds, across its end,
 * 100, 101 again, 4 (a row id of the log) and 9 (a dispatch id of the log). */
static unsigned char *launch_file(void) {
  unsigned char *b = calloc(1, LF_SIZE);
  memcpy(b, HP_LAUNCH_MAGIC, 8);
  put32(b + HP_LAUNCH_H_VERSION, HP_LAUNCH_VERSION);
  put32(b + HP_LAUNCH_H_ENTRY, HP_LAUNCH_ENTRY);
  put64(b + HP_LAUNCH_H_LAST, LF_C);
  put64(b + HP_LAUNCH_H_PID, 424242);
  launch_ring(b, LF_A, LF_A_ENTS, 4, 18, 14, 7, 2, 1000, 5000000000, 2.0, 0);
  launch_entry(b, LF_A_ENTS, 14, 100, 0);
  launch_entry(b, LF_A_ENTS, 15, 101, 0);
  launch_entry(b, LF_A_ENTS, 0, 4, 0);
  launch_entry(b, LF_A_ENTS, 1, 9, 0);
  launch_entry(b, LF_A_ENTS, 2, 300, 0); /* past head: not launched */
  launch_ring(b, LF_B, LF_B_ENTS, 4, 100, 10, 9, 0, 0, 0, 1.0, LF_A);
  launch_entry(b, LF_B_ENTS, 10, 400, 0);
  launch_ring(b, LF_C, LF_C_ENTS, 4, 4, 0, 8, 3, 1000, 5000000000, 2.0, LF_B);
  launch_entry(b, LF_C_ENTS, 0, 101, 0);
  launch_entry(b, LF_C_ENTS, 1, 200, 2);
  launch_entry(b, LF_C_ENTS, 2, 0, 0);
  launch_entry(b, LF_C_ENTS, 3, 102, 0);
  return b;
}

/* A log of dispatch rows 1..5 (dispatch ids 3, 6, ... 15), closed or as a killed writer leaves it. */
static void launch_log(const char *p, int closed) {
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  for (uint64_t i = 1; i <= 5; i++)
    write_dispatch(s, i);
  CHECK_OK(hp_store_close(s), NULL);
  if (closed) return;
  size_t n = 0;
  unsigned char *b = slurp(p, &n);
  memset(b + 512, 0, 1024); /* the closing record removed */
  spit(p, b, n);
  free(b);
}

/* The dispatch rows of log p, 1..5 first, and the launch file's after them: their count, rows in got[]. */
static size_t launch_rows_of(const char *p, hp_dispatch *got, size_t max, char *note, size_t nl) {
  hp_store *r = open_read(p);
  if (!r) return 0;
  snprintf(note, nl, "%s", hp_store_note(r));
  uint64_t total = count(r, HP_TABLE_DISPATCH);
  hp_cursor *c = NULL;
  size_t n = 0, k = 0;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
  hp_dispatch d = {.size = sizeof d};
  while (c && hp_cursor_next(c, &d) == HP_OK) {
    if (k++ < 5)
      CHECK_MSG(d.id == k && d.passes == 0 && d.end_ns == (int64_t)k * 1000 + 500, "row %zu: id %llu", k,
                (unsigned long long)d.id);
    else if (n < max)
      got[n++] = d;
  }
  hp_cursor_close(c);
  CHECK_EQ_U64(total, k);
  CHECK_MSG(hp_store_damage(r, NULL) == HP_OK, "%s", hp_store_error(r));
  hp_store_close(r);
  return k - 5;
}

static const hp_dispatch *launch_find(const hp_dispatch *v, size_t n, uint64_t id) {
  for (size_t i = 0; i < n; i++)
    if (v[i].id == id) return &v[i];
  return NULL;
}

/* The writer's side, end to end: a child writes a log (rows 1..3, committed) and two launch rings (16
 * entries) through hp_log_launch_ring, doubles one across its end (hp_log_launch_grow), records a calibration
 * and dies by SIGKILL; the parent reads the log with the rings' pending entries that the log lacks. A child
 * that commits instead leaves no launch file. */
static void launch_put(void *e, unsigned k, uint64_t i, uint64_t id, int64_t stamp) {
  unsigned char *x = (unsigned char *)e + (i & ((1u << k) - 1)) * HP_LAUNCH_ENTRY;
  memset(x, 0, HP_LAUNCH_ENTRY);
  memcpy(x + HP_LAUNCH_E_DISPATCH, &id, 8);
  uint32_t one = 1, g[3] = {64, 1, 1};
  memcpy(x + HP_LAUNCH_E_KERNEL, &one, 4);
  memcpy(x + HP_LAUNCH_E_QUEUE, &one, 4);
  memcpy(x + HP_LAUNCH_E_AGENT, &one, 4);
  memcpy(x + HP_LAUNCH_E_GRID, g, sizeof g);
  memcpy(x + HP_LAUNCH_E_ENQUEUE, &stamp, 8);
}

static void launch_child(const char *p, int commit) {
  hp_store *s = NULL;
  if (hp_store_open(p, "log", HP_CREATE_LIVE, &s) != HP_OK) _exit(2);
  for (uint64_t i = 1; i <= 3; i++)
    write_dispatch(s, i);
  hp_log_flush(s);
  hp_launch_ring *a = NULL, *b = NULL;
  void *ea = NULL, *eb = NULL;
  if (hp_log_launch_ring(s, 4, &a, &ea) != HP_OK || hp_log_launch_ring(s, 4, &b, &eb) != HP_OK || !a->own ||
      !b->own)
    _exit(3);
  atomic_store(&a->thread_id, 7);
  for (uint64_t i = 10; i < 26; i++) /* ring A full, across its end: 50..65, the first harvested (tail 11) */
    launch_put(ea, 4, i, 40 + i, 1000 + 1000 * (int64_t)(i - 10));
  atomic_store(&a->head, 26);
  atomic_store(&a->tail, 11);
  if (hp_log_launch_grow(s, a, &ea) != 0 || (atomic_load(&a->geom) & 63) != 5) _exit(4);
  for (uint64_t i = 26; i < 29; i++) /* 66..68 in the doubled ring */
    launch_put(ea, 5, i, 40 + i, 1000 + 1000 * (int64_t)(i - 10));
  atomic_store(&a->head, 29);
  hp_log_launch_calibrate(a, 1000, 5000000000, 2.0);
  launch_put(eb, 4, 0, 2, 0); /* already in the log (its row id): dropped */
  launch_put(eb, 4, 1, 90, 0);
  atomic_store(&b->head, 2);
  if (commit) _exit(hp_store_close(s) == HP_OK ? 0 : 5);
  raise(SIGKILL);
  _exit(6);
}

static void test_launch_writer(void) {
  const char *p = path_of("launchw.log");
  char lp[4096];
  snprintf(lp, sizeof lp, "%s%s", p, HP_LAUNCH_SUFFIX);
  for (int commit = 0; commit < 2; commit++) {
    unlink(p);
    unlink(lp);
    pid_t pid = fork();
    if (pid == 0) launch_child(p, commit);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(commit ? WIFEXITED(st) && WEXITSTATUS(st) == 0 : WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
              "child status %d", st);
    CHECK_MSG(access(lp, F_OK) == (commit ? -1 : 0), "launch file %s after %s", lp,
              commit ? "a commit" : "a kill");
    hp_store *r = open_read(p);
    if (!r) continue;
    hp_cursor *c = NULL;
    uint64_t ids = 0, n = 0, recovered = 0;
    CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
    hp_dispatch d = {.size = sizeof d};
    while (c && hp_cursor_next(c, &d) == HP_OK) {
      n++;
      if (d.id < 50) continue;
      recovered++;
      ids += d.id;
      CHECK_MSG(!d.start_ns && !d.end_ns && !d.passes && d.grid[0] == 64 && d.kernel_id == 1,
                "row %llu not as launched", (unsigned long long)d.id);
      if (d.id == 68) /* stamp 19000: 5 s + (19000 - 1000) / 2 */
        CHECK_MSG(d.enqueue_ns == 5000009000 && d.thread_id == 7, "68: enqueue %lld thread %llu",
                  (long long)d.enqueue_ns, (unsigned long long)d.thread_id);
    }
    hp_cursor_close(c);
    CHECK_EQ_U64(n, commit ? 3 : 3 + 19);
    CHECK_EQ_U64(recovered, commit ? 0 : 19);
    CHECK_EQ_U64(ids, commit ? 0 : (51 + 68) * 18 / 2 + 90);
    CHECK_MSG(commit || strstr(hp_store_note(r), "19 dispatches launched"), "note '%s'", hp_store_note(r));
    hp_store_close(r);
  }
  unlink(p);
  unlink(lp);
}

static void test_launch(void) {
  const char *p = path_of("launch.log"), *lp = path_of("launch.log.launch");
  launch_log(p, 0);
  hp_dispatch got[16];
  char note[512];
  /* no launch file: the log's rows alone */
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 0);
  CHECK_MSG(!strstr(note, "launch file"), "note '%s'", note);
  unsigned char *lf = launch_file();
  spit(lp, lf, LF_SIZE);
  size_t n = launch_rows_of(p, got, 16, note, sizeof note);
  CHECK_EQ_U64(n, 4);
  uint64_t want[] = {101, 200, 102, 100}; /* ring C's, then ring A's */
  for (size_t i = 0; i < 4 && i < n; i++)
    CHECK_EQ_U64(got[i].id, want[i]);
  const hp_dispatch *a = launch_find(got, n, 100), *c = launch_find(got, n, 200),
                    *x = launch_find(got, n, 101);
  CHECK(a && c && x);
  if (a) {
    CHECK(a->dispatch_id == 100 && a->process_id == 1 && a->thread_id == 7 && a->kernel_id == 100 % 7 + 1 &&
          a->queue_id == 2 && a->agent_id == 3 && a->region_id == 77);
    CHECK(a->grid[0] == 100 && a->grid[2] == 102 && a->workgroup[0] == 64 && a->workgroup[2] == 16);
    CHECK(a->start_ns == 0 && a->end_ns == 0 && a->passes == 0 && a->cold == 0);
    CHECK_MSG(a->enqueue_ns == 5000000000 + 100, "enqueue %lld",
              (long long)a->enqueue_ns); /* (stamp-1000)/2 */
  }
  if (c) CHECK(c->cold == 1 && c->thread_id == 8 && c->enqueue_ns == 0 && c->region_id == 0);
  if (x)
    CHECK_MSG(x->thread_id == 8, "101 taken from ring C (read first), not A: thread %llu",
              (unsigned long long)x->thread_id);
  CHECK_MSG(strstr(note, "no closing record") &&
                strstr(note,
                       "; 4 dispatches launched and not yet harvested when it stopped are read from its "
                       "launch file, their end unknown") &&
                strstr(note, "ring at byte 12288 skipped (head 100, tail 10, capacity 16)"),
            "note '%s'", note);
  /* parked and resumed unchanged: the rows kept */
  hp_store *r = open_read(p);
  if (r) {
    CHECK(hp_store_park(r) == 1);
    CHECK_OK(hp_store_resume(r), r);
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 9);
    hp_store_close(r);
  }
  /* a writer alive (another process holds the write lock on byte 0): nothing read from the file */
  int ready[2], go[2];
  CHECK(pipe(ready) == 0 && pipe(go) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(lp, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    char ch = fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 ? 'y' : 'n';
    if (write(ready[1], &ch, 1) != 1) _exit(3);
    if (read(go[0], &ch, 1) < 0) _exit(4);
    _exit(0);
  }
  char ch = 0;
  CHECK(read(ready[0], &ch, 1) == 1 && ch == 'y');
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 0);
  CHECK_MSG(!strstr(note, "launch file"), "writer alive: note '%s'", note);
  CHECK(write(go[1], "x", 1) == 1);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(ready[0]);
  close(ready[1]);
  close(go[0]);
  close(go[1]);
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 4); /* the lock gone with its process */
  /* the writer is this very process: nothing read, and its lock not dropped (no descriptor opened, closed) */
  int wfd = open(lp, O_RDWR);
  struct flock wl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  CHECK(wfd >= 0 && fcntl(wfd, F_SETLK, &wl) == 0);
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 0);
  fflush(NULL);
  if ((pid = fork()) == 0) { /* another process still sees the lock */
    int fd = open(lp, O_RDONLY);
    struct flock q = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    _exit(fd >= 0 && fcntl(fd, F_GETLK, &q) == 0 && q.l_type == F_WRLCK ? 0 : 1);
  }
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer's lock was dropped by its own reader");
  close(wfd);
  /* rings in a cycle (A names C as the one before it): each read once, the cycle told */
  put64(lf + LF_A + HP_LAUNCH_R_PREV, LF_C);
  spit(lp, lf, LF_SIZE);
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 4);
  CHECK_MSG(strstr(note, "rings in a cycle at byte 20480"), "note '%s'", note);
  /* a ring outside the file, then no launch file at all (bad magic): the log's rows alone */
  put64(lf + LF_A + HP_LAUNCH_R_PREV, LF_SIZE + 4096);
  spit(lp, lf, LF_SIZE);
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 4);
  CHECK_MSG(strstr(note, "out of the file"), "note '%s'", note);
  lf[0] = 'X';
  spit(lp, lf, LF_SIZE);
  CHECK_EQ_U64(launch_rows_of(p, got, 16, note, sizeof note), 0);
  CHECK_MSG(strstr(note, "launch file not read (bad magic)"), "note '%s'", note);
  lf[0] = 'H';
  /* a closed log: its launch file is not looked at */
  const char *q = path_of("launch_closed.log");
  launch_log(q, 1);
  spit(path_of("launch_closed.log.launch"), lf, LF_SIZE);
  CHECK_EQ_U64(launch_rows_of(q, got, 16, note, sizeof note), 0);
  CHECK_MSG(!*note, "closed: note '%s'", note);
  free(lf);
}

static void cleanup(void) {
  DIR *d = opendir(g_dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(path_of(e->d_name));
  if (d) closedir(d);
  rmdir(g_dir);
}

/* ---- chunks made ready ahead of need (hp_log_prepare): the writer takes them without faulting on their
 * pages; the unused ones read as nothing committed, after a clean close and after SIGKILL ---- */
static long thread_minflt(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_minflt;
}

static void prepare_child(const char *p) {
  hp_store *s = NULL;
  if (hp_store_open(p, "log", HP_CREATE_LIVE, &s) != HP_OK) _exit(3);
  for (uint64_t i = 1; i <= 5000; i++) {
    if (i % 500 == 1) hp_log_prepare(s);
    write_dispatch(s, i);
  }
  hp_log_prepare(s); /* spares left over at the kill */
  hp_log_flush(s);
  kill(getpid(), SIGKILL);
  _exit(4);
}

static void test_prepare(void) {
  hp_log_set_defaults(65536, 256);
  const char *p = path_of("prepare.log");
  hp_store *s = NULL;
  CHECK_OK(hp_store_open(p, "log", HP_CREATE, &s), s);
  CHECK(hp_log_prepare(s) == HP_OK);
  write_dispatch(s, 1); /* the first chunk: the prepared one */
  long f0 = thread_minflt();
  for (uint64_t i = 2; i <= 1000; i++) /* ~40 KiB: 10 pages of the same chunk */
    write_dispatch(s, i);
  long faults = thread_minflt() - f0;
  CHECK_MSG(faults <= 2, "%ld page faults writing 10 pages of a prepared chunk", faults);
  for (uint64_t i = 1001; i <= 20000; i++) { /* through ~12 chunks, refilled as a harvester would */
    if (i % 1000 == 0) CHECK(hp_log_prepare(s) == HP_OK);
    write_dispatch(s, i);
  }
  CHECK(hp_log_prepare(s) == HP_OK); /* unused at close: given back */
  CHECK_OK(hp_store_close(s), NULL);
  hp_store *r = open_read(p);
  if (r) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 20000);
    CHECK_MSG(hp_store_damage(r, NULL) == HP_OK, "%s", hp_store_error(r));
    hp_store_close(r);
  }
  const char *pk = path_of("prepare_kill.log");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) prepare_child(pk);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %#x", status);
  if ((r = open_read(pk)) != NULL) {
    CHECK_EQ_U64(count(r, HP_TABLE_DISPATCH), 5000);
    CHECK_MSG(hp_store_damage(r, NULL) == HP_OK, "%s", hp_store_error(r));
    hp_store_close(r);
  }
  hp_log_set_defaults(1 << 20, 16 << 10);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/test_log.XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) return 2;
  struct {
    const char *name;
    void (*fn)(void);
  } tests[] = {{"round_trip", test_round_trip},
               {"update", test_update},
               {"threads", test_threads},
               {"create_modes", test_create_modes},
               {"damage", test_damage},
               {"forward_compat", test_forward_compat},
               {"doc_example", test_doc_example},
               {"batch", test_batch},
               {"batch_random", test_batch_random},
               {"resync_bound", test_resync_bound},
               {"crash", test_crash},
               {"full_disk", test_full_disk},
               {"lost_and_pool", test_lost_and_pool},
               {"many_stores", test_many_stores},
               {"fork", test_fork},
               {"foreign", test_foreign},
               {"sparse", test_sparse},
               {"shrink", test_shrink},
               {"lost_wrap", test_lost_wrap},
               {"prepare", test_prepare},
               {"launch", test_launch},
               {"launch-writer", test_launch_writer}};
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!only || strcmp(only, tests[i].name) == 0) tests[i].fn();
  cleanup();
  return check_report("test_log");
}
