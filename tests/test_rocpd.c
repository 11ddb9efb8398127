/* End-to-end test of the rocpd format: every table written with distinctive values, read back exactly
 * (auto-detected), ROCm's views queried with SQLite directly, passes never summed, and bad files refused. */
#include "hubprof/hub.h"

#include "check.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char dir[1024];

static const char *path_in(const char *name) {
  static char buf[4][1400];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static int exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

/* Files in the test directory whose name contains `part` (temporaries are ".<name>.tmp.<pid>.<n>"). */
static int files_with(const char *part) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, part)) n++;
  if (d) closedir(d);
  return n;
}

/* ---- the data: several rows per table, distinctive values ---- */
static const char *const weird = "it's \"quoted\" \\ back\tslash\nnewline, ünïcødé ✓ 🚀";

static hp_node nodes[] = {
    {sizeof(hp_node), 1, "node-a", "0123456789abcdef0123456789abcdef", "Linux", "6.1.0-18-amd64", "#1 SMP",
     "x86_64"},
    {sizeof(hp_node), 7, "nöde-'b'", "", "Linux", "", "", "aarch64"},
};
static hp_process procs[] = {
    {sizeof(hp_process), 1, 1, 4242, 1, -1, -5000, 900000000, "./app --size 1024 'x y'", 0},
    {sizeof(hp_process), 2, 7, 77, -3, 0, 123, 0, "", 18446744073709551615ull},
    {sizeof(hp_process), 3, 7, 78, 77, 12, INT64_MIN, INT64_MAX, "mpirun -n 2 \"./a b\"", 3},
};
static hp_thread threads[] = {
    {sizeof(hp_thread), 1, 1, 4242, -7, 8, "main"},
    {sizeof(hp_thread), 2, 1, 4243, 100, 0, "pocl-worker ✓"},
    {sizeof(hp_thread), 5, 2, 80, 0, 0, ""},
};
static hp_agent agents[] = {
    {sizeof(hp_agent), 1, 1, HP_AGENT_CPU, 0, "AuthenticAMD", "cpu-haswell", "AMD EPYC",
     "OpenCL 3.0 PoCL 3.1", 2, 3000, 8000000000, 65536, 8},
    {sizeof(hp_agent), 2, 1, HP_AGENT_GPU, 1, "AMD", "gfx942", "MI300X", "", 304, 2100, 206158430208, 65536,
     64},
    {sizeof(hp_agent), 3, 7, HP_AGENT_ACCEL, -2, "", "", "", NULL, 0, 0, 0, 0, 0},
    {sizeof(hp_agent), 4, 7, 99, 5, "v", "n", "p", NULL, -1, -2, -3, -4, -5},
};
static hp_queue queues[] = {
    {sizeof(hp_queue), 1, 1, 2, "Queue 0"},
    {sizeof(hp_queue), 2, 2, 0, ""},
};
static hp_code_object codes[] = {
    {sizeof(hp_code_object), 1, 1, 2, "file:///tmp/k.co#offset=0&size=4096", 0xffff800000001000ull, 4096},
    {sizeof(hp_code_object), 2, 1, 1, "memory://4242#offset=0x7f00", 0x7f0000000000ull,
     18446744073709551615ull},
    {sizeof(hp_code_object), 3, 2, 0, "", 0, 0},
};
static hp_kernel_symbol kernels[] = {
    {sizeof(hp_kernel_symbol), 1, 1, "_Z4vaddPfS_S_", "vadd", 0, 1024},
    {sizeof(hp_kernel_symbol), 2, 2, "mm_kernel", "", 16, 0},
    {sizeof(hp_kernel_symbol), 3, 0, "q\"k'", "display \"x\"", -1, -2},
};
/* durations: vadd 2000 + 4000 + 1000, mm_kernel (display "") 6000 + 3000 */
static hp_dispatch disps[] = {
    {sizeof(hp_dispatch),
     0xffffffffffffff00ull,
     18446744073709551614ull,
     2,
     5,
     3,
     2,
     2,
     {1, 2, 3},
     {0, 0, 0},
     0,
     0,
     20000,
     23000,
     19000,
     1,
     0,
     0},
    {sizeof(hp_dispatch), 1, 1, 1, 1, 2, 1, 1, {1024, 1, 1}, {64, 1, 1}, 0, 256, 1000, 3000, 900, 1, 0, 0},
    {sizeof(hp_dispatch),
     2,
     2,
     1,
     2,
     2,
     1,
     1,
     {4096, 2, 1},
     {256, 2, 1},
     32,
     0,
     5000,
     9000,
     4900,
     2,
     1 << 20,
     0},
    {sizeof(hp_dispatch),
     3,
     3,
     1,
     1,
     2,
     1,
     2,
     {4294967295u, 7, 9},
     {1024, 1, 1},
     -8,
     -16,
     10000,
     16000,
     9999,
     3,
     18446744073709551615ull,
     18446744073709551615ull},
    {sizeof(hp_dispatch),
     (1ull << 62),
     99,
     1,
     0,
     0,
     0,
     1,
     {1, 1, 1},
     {1, 1, 1},
     0,
     0,
     17000,
     18000,
     0,
     0,
     0,
     0},
};
static hp_counter_info counters[] = {
    {sizeof(hp_counter_info), 10, 2, "SQ_WAVES", "Count number of waves sent to SQs.", "SQ", "waves", ""},
    {sizeof(hp_counter_info), 11, 2, "SQ_INSTS", "instructions, \"all\"", "SQ", "", ""},
    {sizeof(hp_counter_info), 12, 0, "GRBM_COUNT", "", "GRBM", "cycles", ""},
    {sizeof(hp_counter_info), 13, 2, "TA_BUSY", "", "TA", "", ""},
    {sizeof(hp_counter_info), 14, 1, "task-clock", "perf sw", "sw", "ns", "SQ_WAVES * 2 / GRBM_COUNT"},
};
static hp_counter_value values[] = {
    {sizeof(hp_counter_value), 1, 10, 0, 0, 7.5},
    {sizeof(hp_counter_value), 3, 10, 1, 0, 512},
    {sizeof(hp_counter_value), 3, 11, 2, 0, 1e300},
    {sizeof(hp_counter_value), 3, 12, 3, 0, -0.0},
    {sizeof(hp_counter_value), 3, 13, 1, 0, 100},
    {sizeof(hp_counter_value), 3, 13, 2, 0, 101},
    {sizeof(hp_counter_value), 3, 13, 3, 1, 102},
    {sizeof(hp_counter_value), 2, 14, 4294967295u, 4294967295u, -123.456e-300},
    {sizeof(hp_counter_value), 2, 12, 1, 0, 5e-324},
    {sizeof(hp_counter_value), 2, 11, 1, 0, INFINITY},
    {sizeof(hp_counter_value), 2, 10, 2, 0, 0},
};
static hp_region regions[] = {
    {sizeof(hp_region), 1, 1, 1, "setup", "roctx", 100, 200},
    {sizeof(hp_region), 2, 1, 2, "setup", "marker \"core\"", -50, -40},
    {sizeof(hp_region), 9, 0, 0, "", "", 0, 0},
};
static const char *const meta[][2] = {
    {"tool_version", "0.1.0"},
    {"mode", "kernel-replay"},
    {"schema_version", "hubprof 1"},
    {"hubprof.key:odd", "escaped"},
    {"guid", "user guid"},
    {"pass_plan", "[[\"SQ_WAVES\"],[\"SQ_INSTS\"]]"},
    {"empty", ""},
};

static const void *row_at(hp_table t, size_t i) {
  switch (t) {
  case HP_TABLE_NODE: return &nodes[i];
  case HP_TABLE_PROCESS: return &procs[i];
  case HP_TABLE_THREAD: return &threads[i];
  case HP_TABLE_AGENT: return &agents[i];
  case HP_TABLE_QUEUE: return &queues[i];
  case HP_TABLE_CODE_OBJECT: return &codes[i];
  case HP_TABLE_KERNEL_SYMBOL: return &kernels[i];
  case HP_TABLE_DISPATCH: return &disps[i];
  case HP_TABLE_COUNTER_INFO: return &counters[i];
  case HP_TABLE_COUNTER_VALUE: return &values[i];
  case HP_TABLE_REGION: return &regions[i];
  default: return NULL;
  }
}

static size_t rows_of(hp_table t) {
  static const size_t n[HP_TABLE_COUNT] = {N(nodes),   N(procs), N(threads),  N(agents), N(queues),  N(codes),
                                           N(kernels), N(disps), N(counters), N(values), N(regions), N(meta)};
  return n[t];
}

/* Every column of the row equal, strings by content, doubles by their bits. */
static int same_row(hp_table t, const void *a, const void *b, char *why, size_t whylen) {
  const hp_table_desc *d = hp_table_describe(t);
  for (size_t i = 0; i < d->ncolumns; i++) {
    const hp_column *c = &d->columns[i];
    const char *pa = (const char *)a + c->offset, *pb = (const char *)b + c->offset;
    int eq = 1;
    switch (c->type) {
    case HP_COL_U32:
    case HP_COL_I32: eq = memcmp(pa, pb, 4) == 0; break;
    case HP_COL_U64:
    case HP_COL_I64:
    case HP_COL_F64: eq = memcmp(pa, pb, 8) == 0; break;
    case HP_COL_STR: {
      const char *sa = *(const char *const *)pa, *sb = *(const char *const *)pb;
      eq = strcmp(sa ? sa : "", sb ? sb : "") == 0;
      break;
    }
    }
    if (!eq) {
      snprintf(why, whylen, "%s.%s differs", d->name, c->name);
      return 0;
    }
  }
  return 1;
}

static void write_all(hp_store *s) {
  /* small tables (all but dispatch, counter_value, region) and metadata keys: a row written again with
   * the same key replaces the earlier one in its place, as the collector rewrites a process at exit */
  hp_process early = procs[0];
  early.end_ns = 0;
  early.command = "(starting)";
  CHECK_OK(hp_write_process(s, &early), s);
  hp_agent a = agents[1];
  a.name = "old name";
  CHECK_OK(hp_write_agent(s, &a), s);
  CHECK_OK(hp_write_metadata(s, meta[0][0], "first value"), s);
  for (int t = 0; t < HP_TABLE_METADATA; t++)
    for (size_t i = 0; i < rows_of((hp_table)t); i++)
      CHECK_OK(hp_write(s, (hp_table)t, row_at((hp_table)t, i)), s);
  for (size_t i = 0; i < N(meta); i++)
    CHECK_OK(hp_write_metadata(s, meta[i][0], meta[i][1]), s);
}

static void check_roundtrip(const char *p) {
  hp_store *s;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &s), s);
  if (!s) return;
  CHECK_STR(hp_store_format(s), "rocpd");
  CHECK_STR(hp_store_schema_version(s), "3.0.4");
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    uint64_t n = 0;
    CHECK_OK(hp_store_count(s, (hp_table)t, &n), s);
    CHECK_MSG(n == rows_of((hp_table)t), "table %s: %llu rows, wrote %zu",
              hp_table_describe((hp_table)t)->name, (unsigned long long)n, rows_of((hp_table)t));
    hp_cursor *c;
    CHECK_OK(hp_cursor_open(s, (hp_table)t, &c), s);
    if (!c) continue;
    union {
      hp_dispatch d;
      hp_agent a;
      char any[256];
    } row;
    size_t i = 0;
    hp_status st;
    for (;;) {
      memset(&row, 0xa5, sizeof row);
      *(uint32_t *)&row = (uint32_t)hp_table_describe((hp_table)t)->row_size;
      if ((st = hp_cursor_next(c, &row)) != HP_OK) break;
      char why[128] = "";
      if (t == HP_TABLE_METADATA) {
        const hp_metadata *m = (const hp_metadata *)&row;
        CHECK_MSG(i < N(meta) && strcmp(m->key, meta[i][0]) == 0 && strcmp(m->value, meta[i][1]) == 0,
                  "metadata row %zu: '%s' = '%s'", i, m->key, m->value);
      } else {
        CHECK_MSG(i < rows_of((hp_table)t) &&
                      same_row((hp_table)t, row_at((hp_table)t, i), &row, why, sizeof why),
                  "row %zu: %s", i, why);
      }
      i++;
    }
    CHECK_MSG(st == HP_END, "cursor ended with %d: %s", (int)st, hp_store_error(s));
    CHECK_EQ_U64(i, rows_of((hp_table)t));
    hp_cursor_close(c);
  }
  CHECK(hp_store_metadata(s, "schema_version") &&
        strcmp(hp_store_metadata(s, "schema_version"), "hubprof 1") == 0);
  CHECK(hp_store_metadata(s, "uuid") == NULL);
  CHECK(hp_store_metadata(s, "hubprof.key:odd") &&
        strcmp(hp_store_metadata(s, "hubprof.key:odd"), "escaped") == 0);
  CHECK(hp_store_damage(s, NULL) == HP_OK);
  /* an older caller's smaller struct still reads */
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(s, HP_TABLE_DISPATCH, &c), s);
  struct {
    uint32_t size;
    uint64_t id;
  } small = {sizeof small, 0};
  CHECK(c && hp_cursor_next(c, &small) == HP_OK && small.id == disps[0].id);
  hp_cursor_close(c);
  CHECK(hp_write_dispatch(s, &disps[0]) == HP_ERR_UNSUPPORTED);
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
}

/* ---- the views, as ROCm's tools and a user with sqlite3 see them ---- */
static double q_double(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  double v = NAN;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "sql error: %s\n  in %s\n", sqlite3_errmsg(db), sql);
    return v;
  }
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
    v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  return v;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * (fabs(b) + 1); }

static void check_views(const char *p) {
  sqlite3 *db;
  CHECK(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  /* layout: physical rocpd_<name>_<uuid> tables with a guid column, base-name views, metadata rows */
  static const char *const tables[] = {
      "string",     "info_node",       "info_process", "info_thread",      "info_agent",
      "info_queue", "info_stream",     "info_pmc",     "info_code_object", "info_kernel_symbol",
      "track",      "event",           "arg",          "pmc_event",        "region",
      "sample",     "kernel_dispatch", "memory_copy",  "memory_allocate",
  };
  sqlite3_stmt *st;
  char sql[512];
  CHECK(sqlite3_prepare_v2(db, "SELECT value FROM rocpd_metadata WHERE tag = 'uuid'", -1, &st, NULL) ==
        SQLITE_OK);
  char uuid[64] = "";
  if (sqlite3_step(st) == SQLITE_ROW)
    snprintf(uuid, sizeof uuid, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  CHECK_MSG(strlen(uuid) == 37 && uuid[0] == '_', "uuid '%s'", uuid);
  char guid[64] = "";
  CHECK(sqlite3_prepare_v2(db, "SELECT value FROM rocpd_metadata WHERE tag = 'guid'", -1, &st, NULL) ==
        SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW)
    snprintf(guid, sizeof guid, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  CHECK_MSG(strlen(guid) == 36 && guid[8] == '-' && guid[14] == '4', "guid '%s'", guid);
  CHECK(near(
      q_double(db, "SELECT COUNT(*) FROM rocpd_metadata WHERE tag = 'schema_version' AND value = '3.0.4'"),
      1));
  for (size_t i = 0; i < N(tables); i++) {
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'rocpd_%s%s'", tables[i],
             uuid);
    CHECK_MSG(near(q_double(db, sql), 1), "no physical table rocpd_%s%s", tables[i], uuid);
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM pragma_table_info('rocpd_%s') WHERE name = 'guid'",
             tables[i]);
    CHECK_MSG(near(q_double(db, sql), 1), "view rocpd_%s has no guid column", tables[i]);
  }
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM rocpd_kernel_dispatch WHERE guid = '%s'", guid);
  CHECK(near(q_double(db, sql), N(disps)));
  snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM rocpd_pmc_event WHERE guid <> '%s'", guid);
  CHECK(near(q_double(db, sql), 0));
  /* one kernel_dispatch row (and one event) per dispatch, every dispatch in `kernels` despite "none" refs */
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM kernels"), N(disps)));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM kernels WHERE region = ''"), N(disps)));
  CHECK(near(q_double(db, "SELECT duration FROM kernels WHERE dispatch_id = 3"), 6000));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM regions"), N(regions)));
  CHECK(near(
      q_double(db, "SELECT COUNT(*) FROM regions WHERE category = 'marker \"core\"' AND name = 'setup'"), 1));
  /* top_kernels: vadd 3 calls 7000 ns, mm_kernel (stored with its name as display name) 2 calls 9000 ns */
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM top_kernels"), 2));
  CHECK(near(q_double(db, "SELECT total_calls FROM top_kernels WHERE name = 'vadd'"), 3));
  CHECK(near(q_double(db, "SELECT total_duration FROM top_kernels WHERE name = 'vadd'"), 7.0));
  CHECK(near(q_double(db, "SELECT average FROM top_kernels WHERE name = 'vadd'"), 7.0 / 3));
  CHECK(near(q_double(db, "SELECT percentage FROM top_kernels WHERE name = 'vadd'"), 43.75));
  CHECK(near(q_double(db, "SELECT total_calls FROM top_kernels WHERE name = 'mm_kernel'"), 2));
  CHECK(near(q_double(db, "SELECT total_duration FROM top_kernels WHERE name = 'mm_kernel'"), 9.0));
  CHECK(near(q_double(db, "SELECT percentage FROM top_kernels WHERE name = 'mm_kernel'"), 56.25));
  CHECK(sqlite3_prepare_v2(db, "SELECT name FROM top_kernels LIMIT 1", -1, &st, NULL) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "mm_kernel") == 0);
  sqlite3_finalize(st);
  /* counters_collection: dispatch 3 measured 3 counters in 3 passes and TA_BUSY in every pass */
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM counters_collection WHERE dispatch_id = 3"), 6));
  CHECK(near(
      q_double(db,
               "SELECT value FROM counters_collection WHERE dispatch_id = 3 AND counter_name = 'SQ_WAVES'"),
      512));
  CHECK(near(q_double(db,
                      "SELECT replay_pass FROM counters_collection WHERE dispatch_id = 3 AND counter_name = "
                      "'SQ_WAVES'"),
             1));
  CHECK(
      q_double(db,
               "SELECT value FROM counters_collection WHERE dispatch_id = 3 AND counter_name = 'SQ_INSTS'") ==
      1e300);
  CHECK(near(q_double(db,
                      "SELECT replay_pass FROM counters_collection WHERE dispatch_id = 3 AND counter_name = "
                      "'SQ_INSTS'"),
             2));
  CHECK(near(q_double(db, "SELECT value FROM counters_collection WHERE dispatch_id = 3 AND counter_name = "
                          "'GRBM_COUNT'"),
             0));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM counters_collection WHERE dispatch_id = 3 AND counter_name = "
                          "'TA_BUSY'"),
             3));
  CHECK(
      near(q_double(db, "SELECT MIN(value) FROM counters_collection WHERE dispatch_id = 3 AND counter_name = "
                        "'TA_BUSY'"),
           100));
  CHECK(
      near(q_double(db, "SELECT MAX(value) FROM counters_collection WHERE dispatch_id = 3 AND counter_name = "
                        "'TA_BUSY'"),
           102));
  CHECK(near(q_double(db, "SELECT SUM(imputed) FROM counters_collection WHERE dispatch_id = 3"), 1));
  CHECK(near(q_double(db, "SELECT value FROM counters_collection WHERE dispatch_id = 1"), 7.5));
  CHECK(near(q_double(db, "SELECT replay_pass FROM counters_collection WHERE dispatch_id = 1"), 0));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM pmc_events"), N(values)));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM processes WHERE pid <> 0"), N(procs)));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM threads WHERE tid <> 0"), N(threads)));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM pmc_info"), N(counters)));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM top"), 2 + 2)); /* 2 kernels, region names "setup" and "" */
  CHECK(!isnan(q_double(db, "SELECT COUNT(*) FROM busy")));
  CHECK(!isnan(q_double(db, "SELECT COUNT(*) FROM code_objects")));
  CHECK(!isnan(q_double(db, "SELECT COUNT(*) FROM kernel_symbols")));
  sqlite3_close(db);
}

/* ---- failures: nothing left behind, clear messages ---- */
static void check_abort_and_failures(void) {
  const char *p = path_in("aborted.db");
  hp_store *s;
  CHECK_OK(hp_store_open(p, "rocpd", HP_CREATE, &s), s);
  write_all(s);
  CHECK(!exists(p));
  CHECK(files_with("aborted.db.tmp") == 1);
  hp_store_abort(s);
  CHECK(!exists(p));
  CHECK(files_with("aborted.db") == 0);

  /* a duplicate id fails the write, and close leaves nothing */
  p = path_in("dup.db");
  CHECK_OK(hp_store_open(p, "rocpd", HP_CREATE, &s), s);
  CHECK_OK(hp_write_dispatch(s, &disps[1]), s);
  hp_status st = hp_write_dispatch(s, &disps[1]);
  CHECK(st == HP_ERR_CONSTRAINT);
  CHECK(strstr(hp_store_error(s), p) != NULL && strstr(hp_store_error(s), "dispatch") != NULL);
  CHECK(hp_store_close(s) == HP_ERR_CONSTRAINT);
  CHECK(!exists(p));
  CHECK(files_with("dup.db") == 0);

  /* a directory that does not exist: create fails with a message, nothing crashes */
  st = hp_store_open(path_in("no/such/dir/x.db"), "rocpd", HP_CREATE, &s);
  CHECK(st == HP_ERR_IO);
  CHECK(strstr(hp_store_error(s), "x.db") != NULL);
  hp_store_close(s);
}

static void write_file(const char *p, const void *data, size_t n) {
  FILE *f = fopen(p, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

static unsigned char *read_file(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)sz);
  *n = b ? fread(b, 1, (size_t)sz, f) : 0;
  fclose(f);
  return b;
}

/* Walk every table; returns the first error (HP_OK when all rows read). */
static hp_status walk(hp_store *s) {
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    uint64_t n;
    hp_status st = hp_store_count(s, (hp_table)t, &n);
    if (st != HP_OK) return st;
    hp_cursor *c;
    if ((st = hp_cursor_open(s, (hp_table)t, &c)) != HP_OK) return st;
    char row[256];
    *(uint32_t *)row = sizeof row;
    while ((st = hp_cursor_next(c, row)) == HP_OK) {
    }
    hp_cursor_close(c);
    if (st != HP_END) return st;
  }
  return HP_OK;
}

static void check_bad_files(const char *good) {
  char expect[8400];
  hp_store *s;
  /* a plain SQLite database */
  const char *p = path_in("plain.db");
  sqlite3 *db;
  CHECK(sqlite3_open(p, &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "CREATE TABLE foo(a, b); INSERT INTO foo VALUES (1, 'x');", NULL, NULL, NULL) ==
        SQLITE_OK);
  sqlite3_close(db);
  CHECK(hp_store_open(p, "rocpd", HP_READ, &s) == HP_ERR_FORMAT);
  snprintf(expect, sizeof expect, "%s: SQLite database without rocpd tables", p);
  CHECK_STR(hp_store_error(s), expect);
  hp_store_close(s);
  CHECK(hp_store_open(p, NULL, HP_READ, &s) == HP_ERR_FORMAT);
  CHECK(strstr(hp_store_error(s), p) != NULL);
  hp_store_close(s);

  /* truncated rocpd file */
  size_t n;
  unsigned char *b = read_file(good, &n);
  CHECK(b && n > 16384);
  if (!b) return;
  p = path_in("truncated.db");
  write_file(p, b, n / 2);
  CHECK(hp_store_open(p, "rocpd", HP_READ, &s) == HP_ERR_TRUNCATED);
  CHECK(strstr(hp_store_error(s), p) == hp_store_error(s) && strstr(hp_store_error(s), "truncated") != NULL);
  hp_store_close(s);
  CHECK(hp_store_open(p, NULL, HP_READ, &s) == HP_ERR_TRUNCATED);
  hp_store_close(s);
  write_file(p, b, 50); /* shorter than the SQLite header */
  CHECK(hp_store_open(p, "rocpd", HP_READ, &s) == HP_ERR_TRUNCATED);
  hp_store_close(s);

  /* garbage after a valid header, and pages overwritten in the middle: errors name the file, no crash */
  p = path_in("garbage.db");
  unsigned char *g = malloc(n);
  CHECK(g != NULL);
  if (g) {
    memcpy(g, b, 100);
    for (size_t i = 100; i < n; i++)
      g[i] = (unsigned char)(i * 2654435761u >> 13);
    write_file(p, g, n);
    hp_status st = hp_store_open(p, "rocpd", HP_READ, &s);
    if (st == HP_OK) st = walk(s);
    CHECK(st == HP_ERR_CORRUPT || st == HP_ERR_FORMAT);
    CHECK(strstr(hp_store_error(s), p) == hp_store_error(s));
    hp_store_close(s);
    int damaged = 0;
    for (size_t off = 8192; off + 4096 <= n; off += 8192) {
      memcpy(g, b, n);
      memset(g + off, 0x5a, 4096);
      write_file(p, g, n);
      st = hp_store_open(p, "rocpd", HP_READ, &s);
      if (st == HP_OK) st = walk(s);
      if (st != HP_OK) {
        damaged++;
        CHECK_MSG(st == HP_ERR_CORRUPT && strstr(hp_store_error(s), p) == hp_store_error(s), "%d: %s",
                  (int)st, hp_store_error(s));
      }
      hp_store_close(s);
    }
    CHECK(damaged > 0);
    free(g);
  }
  free(b);

  /* not SQLite at all, empty, missing */
  p = path_in("text.db");
  write_file(p, "hello, this is not a database\n", 30);
  CHECK(hp_store_open(p, "rocpd", HP_READ, &s) == HP_ERR_FORMAT);
  CHECK(strstr(hp_store_error(s), "not an SQLite database") != NULL);
  hp_store_close(s);
  write_file(p, "", 0);
  CHECK(hp_store_open(p, "rocpd", HP_READ, &s) == HP_ERR_FORMAT);
  hp_store_close(s);
  CHECK(hp_store_open(path_in("missing.db"), "rocpd", HP_READ, &s) == HP_ERR_NOT_FOUND);
  hp_store_close(s);
}

/* A file laid out as rocprofv3 writes it (ids are OS pids/tids, event ids apart from dispatch ids,
 * extdata of its own) reads best-effort: references kept, unknown fields 0 or "". */
static void check_foreign(void) {
  const char *p = path_in("rocprofv3.db");
  sqlite3 *db;
  CHECK(sqlite3_open(p, &db) == SQLITE_OK);
  const char *u = "_0190e3f4_5a6b_7c8d_9eaf_0123456789ab";
  char *sql = sqlite3_mprintf(
      "CREATE TABLE rocpd_metadata%s(id INTEGER PRIMARY KEY, tag TEXT, value TEXT);"
      "INSERT INTO rocpd_metadata%s(tag, value) VALUES ('schema_version', '3.0.3'), ('uuid', '%s'), ('note', "
      "'x');"
      "CREATE TABLE rocpd_string%s(id INTEGER PRIMARY KEY, guid TEXT, string TEXT);"
      "INSERT INTO rocpd_string%s VALUES (1, 'g', ''), (2, 'g', 'KERNEL_DISPATCH');"
      "CREATE TABLE rocpd_info_process%s(id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, ppid INTEGER, pid "
      "INTEGER, "
      "init BIGINT, fini BIGINT, start BIGINT, \"end\" BIGINT, command TEXT, extdata JSONB);"
      "INSERT INTO rocpd_info_process%s VALUES (4242, 'g', 99, 1, 4242, 10, 20, NULL, NULL, './a', "
      "'{\"config\":{\"rank\":5}}');"
      "CREATE TABLE rocpd_info_agent%s(id INTEGER PRIMARY KEY, guid TEXT, nid INTEGER, pid INTEGER, type "
      "TEXT, "
      "logical_index INTEGER, name TEXT, vendor_name TEXT, product_name TEXT, extdata JSONB);"
      "INSERT INTO rocpd_info_agent%s VALUES (2, 'g', 99, 4242, 'GPU', 1, 'gfx90a', 'AMD', 'MI210', "
      "'{\"cu_count\":104,\"wave_front_size\":64,\"lds_size_in_kb\":64,\"name\":\"x\"}');"
      "CREATE TABLE rocpd_kernel_dispatch%s(id INTEGER PRIMARY KEY, guid TEXT, pid INTEGER, tid INTEGER, "
      "agent_id INTEGER, kernel_id INTEGER, dispatch_id INTEGER, queue_id INTEGER, start BIGINT, \"end\" "
      "BIGINT, "
      "grid_size_x INTEGER, event_id INTEGER, extdata JSONB);"
      "INSERT INTO rocpd_kernel_dispatch%s VALUES (1, 'g', 4242, 4243, 2, 5, 1, 0, 100, 200, 64, 11, '{}'), "
      "(2, 'g', 4242, 4243, 2, 5, 2, 0, 300, 400, 1e20, 12, NULL);"
      "CREATE TABLE rocpd_pmc_event%s(id INTEGER PRIMARY KEY, guid TEXT, event_id INTEGER, sample_id "
      "INTEGER, "
      "pmc_id INTEGER, value REAL, extdata JSONB);"
      "INSERT INTO rocpd_pmc_event%s VALUES (1, 'g', 12, NULL, 7, 3.5, '{}'), (2, 'g', 11, NULL, 7, 1.25, "
      "NULL), "
      "(3, 'g', 11, 5, 7, 9.0, NULL);"
      "CREATE VIEW rocpd_kernel_dispatch AS SELECT * FROM rocpd_kernel_dispatch%s;",
      u, u, u, u, u, u, u, u, u, u, u, u, u, u);
  CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
  sqlite3_free(sql);
  sqlite3_close(db);
  hp_store *s;
  CHECK_OK(hp_store_open(p, NULL, HP_READ, &s), s);
  if (!s) return;
  CHECK_STR(hp_store_schema_version(s), "3.0.3");
  CHECK(hp_store_metadata(s, "note") && strcmp(hp_store_metadata(s, "note"), "x") == 0);
  hp_cursor *c;
  hp_process pr = {.size = sizeof pr};
  CHECK_OK(hp_cursor_open(s, HP_TABLE_PROCESS, &c), s);
  CHECK(hp_cursor_next(c, &pr) == HP_OK && pr.id == 4242 && pr.pid == 4242 && pr.node_id == 99 &&
        pr.rank == -1 && pr.start_ns == 10 && pr.end_ns == 20 && strcmp(pr.command, "./a") == 0);
  hp_cursor_close(c);
  hp_agent ag = {.size = sizeof ag};
  CHECK_OK(hp_cursor_open(s, HP_TABLE_AGENT, &c), s);
  CHECK(hp_cursor_next(c, &ag) == HP_OK && ag.id == 2 && ag.type == HP_AGENT_GPU && ag.compute_units == 104 &&
        ag.wave_size == 64 && ag.local_mem_bytes == 65536 && strcmp(ag.runtime, "") == 0 &&
        strcmp(ag.product_name, "MI210") == 0);
  hp_cursor_close(c);
  hp_dispatch d = {.size = sizeof d};
  CHECK_OK(hp_cursor_open(s, HP_TABLE_DISPATCH, &c), s);
  CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 1 && d.thread_id == 4243 && d.grid[0] == 64 &&
        d.grid[1] == 0 && d.workgroup[0] == 0 && d.passes == 0);
  CHECK(hp_cursor_next(c, &d) == HP_OK && d.id == 2 && d.start_ns == 300);
  CHECK(hp_cursor_next(c, &d) == HP_END);
  hp_cursor_close(c);
  uint64_t n = 9;
  CHECK_OK(hp_store_count(s, HP_TABLE_COUNTER_VALUE, &n), s);
  CHECK_EQ_U64(n, 2); /* the SPM row (sample_id set) is not a per-dispatch value */
  CHECK_OK(hp_store_count(s, HP_TABLE_REGION, &n), s);
  CHECK_EQ_U64(n, 0);
  hp_counter_value v = {.size = sizeof v};
  CHECK_OK(hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c), s);
  CHECK(hp_cursor_next(c, &v) == HP_OK && v.dispatch_id == 2 && v.counter_id == 7 && v.value == 3.5 &&
        v.pass == 0);
  CHECK(hp_cursor_next(c, &v) == HP_OK && v.dispatch_id == 1 && v.value == 1.25);
  CHECK(hp_cursor_next(c, &v) == HP_END);
  hp_cursor_close(c);
  CHECK(walk(s) == HP_OK);
  hp_store_close(s);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/test_rocpd.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  agents[2].runtime = weird;
  threads[2].name = weird;
  kernels[2].name = weird;
  nodes[1].version = weird;
  regions[0].category = weird;
  counters[3].description = weird;
  values[10].value = NAN;

  char p[1400], exact[1400];
  snprintf(p, sizeof p, "%s", path_in("profile.db"));
  snprintf(exact, sizeof exact, "%s", path_in("exact.db"));
  hp_store *s;
  CHECK_OK(hp_store_open(p, "rocpd", HP_CREATE, &s), s);
  CHECK_STR(hp_store_schema_version(s), "3.0.4");
  write_all(s);
  /* bulk rows so the file spans many pages (for the truncation and damage checks) */
  for (uint64_t i = 0; i < 3000; i++) {
    hp_dispatch d = disps[1];
    d.id = 1000 + i;
    d.dispatch_id = 1000 + i;
    d.start_ns = 0;
    d.end_ns = 0;
    CHECK(hp_write_dispatch(s, &d) == HP_OK);
  }
  CHECK(!exists(p));
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  CHECK(exists(p));
  CHECK(files_with(".tmp.") == 0);

  /* the round trip needs exactly the rows above: write a second store without the bulk rows */
  CHECK_OK(hp_store_open(exact, NULL, HP_CREATE, &s), s);
  write_all(s);
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  check_roundtrip(exact);
  check_views(exact);
  check_abort_and_failures();
  check_bad_files(p);
  check_foreign();

  /* clean up */
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..") != 0)) unlink(path_in(e->d_name));
  if (d) closedir(d);
  rmdir(dir);
  return check_report("test_rocpd");
}
