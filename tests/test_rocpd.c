/* End-to-end test of the rocpd format: every table written with distinctive values, read back exactly
 * (auto-detected), ROCm's views queried with SQLite directly, passes never summed, and bad files refused. */
/* SPDX-License-Identifier: MIT */
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
    {sizeof(hp_process), 1, 1, 4242, 1, -1, -5000, 900000000, "./app --size 1024 'x y'", 0, 0, 0, NULL, 0, 0,
     0},
    {sizeof(hp_process), 2, 7, 77, -3, 0, 123, 0, "", 18446744073709551615ull, 0, 0, NULL, 0, 0, 0},
    {sizeof(hp_process), 3, 7, 78, 77, 12, INT64_MIN, INT64_MAX, "mpirun -n 2 \"./a b\"", 3, 0, 0, NULL, 0, 0,
     0},
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
    {sizeof(hp_code_object), 1, 1, 2, "file:///tmp/k.co#offset=0&size=4096", 0xffff800000001000ull, 4096, "",
     0, "", "", ""},
    {sizeof(hp_code_object), 2, 1, 1, "memory://4242#offset=0x7f00", 0x7f0000000000ull,
     18446744073709551615ull, "", 0, "", "", ""},
    {sizeof(hp_code_object), 3, 2, 0, "", 0, 0, "", 0, "", "", ""},
};
static hp_kernel_symbol kernels[] = {
    {sizeof(hp_kernel_symbol), 1, 1, "_Z4vaddPfS_S_", "vadd", 0, 1024, NULL, 0},
    {sizeof(hp_kernel_symbol), 2, 2, "mm_kernel", "", 16, 0, NULL, 0},
    {sizeof(hp_kernel_symbol), 3, 0, "q\"k'", "display \"x\"", -1, -2, NULL, 0},
};
/* durations: vadd 2000 + 4000 + 1000, mm_kernel (display "") 6000 + 3000 */
static hp_dispatch disps[] = {
    {.size = sizeof(hp_dispatch),
     .id = 0xffffffffffffff00ull,
     .dispatch_id = 18446744073709551614ull,
     .process_id = 2,
     .thread_id = 5,
     .agent_id = 3,
     .queue_id = 2,
     .kernel_id = 2,
     .grid = {1, 2, 3},
     .workgroup = {0, 0, 0},
     .private_size = 0,
     .group_size = 0,
     .start_ns = 20000,
     .end_ns = 23000,
     .enqueue_ns = 19000,
     .passes = 1,
     .bytes_accessible = 0,
     .bytes_restored = 0,
     .cold = 0},
    {.size = sizeof(hp_dispatch),
     .id = 1,
     .dispatch_id = 1,
     .process_id = 1,
     .thread_id = 1,
     .agent_id = 2,
     .queue_id = 1,
     .kernel_id = 1,
     .grid = {1024, 1, 1},
     .workgroup = {64, 1, 1},
     .private_size = 0,
     .group_size = 256,
     .start_ns = 1000,
     .end_ns = 3000,
     .enqueue_ns = 900,
     .passes = 1,
     .bytes_accessible = 0,
     .bytes_restored = 0,
     .cold = 1},
    {.size = sizeof(hp_dispatch),
     .id = 2,
     .dispatch_id = 2,
     .process_id = 1,
     .thread_id = 2,
     .agent_id = 2,
     .queue_id = 1,
     .kernel_id = 1,
     .grid = {4096, 2, 1},
     .workgroup = {256, 2, 1},
     .private_size = 32,
     .group_size = 0,
     .start_ns = 5000,
     .end_ns = 9000,
     .enqueue_ns = 4900,
     .passes = 2,
     .bytes_accessible = 1 << 20,
     .bytes_restored = 0,
     .cold = 0,
     .region_id = 2},
    {.size = sizeof(hp_dispatch),
     .id = 3,
     .dispatch_id = 3,
     .process_id = 1,
     .thread_id = 1,
     .agent_id = 2,
     .queue_id = 1,
     .kernel_id = 2,
     .grid = {4294967295u, 7, 9},
     .workgroup = {1024, 1, 1},
     .private_size = -8,
     .group_size = -16,
     .start_ns = 10000,
     .end_ns = 16000,
     .enqueue_ns = 9999,
     .passes = 3,
     .bytes_accessible = 18446744073709551615ull,
     .bytes_restored = 18446744073709551615ull,
     .cold = 1,
     .region_id = 9},
    {.size = sizeof(hp_dispatch),
     .id = (1ull << 62),
     .dispatch_id = 99,
     .process_id = 1,
     .thread_id = 0,
     .agent_id = 0,
     .queue_id = 0,
     .kernel_id = 1,
     .grid = {1, 1, 1},
     .workgroup = {1, 1, 1},
     .private_size = 0,
     .group_size = 0,
     .start_ns = 17000,
     .end_ns = 18000,
     .enqueue_ns = 0,
     .passes = 0,
     .bytes_accessible = 0,
     .bytes_restored = 0,
     .cold = 0,
     .region_id = 18446744073709551615ull},
};
static hp_counter_info counters[] = {
    {sizeof(hp_counter_info), 10, 2, "SQ_WAVES", "Count number of waves sent to SQs.", "SQ", "waves", ""},
    {sizeof(hp_counter_info), 11, 2, "SQ_INSTS", "instructions, \"all\"", "SQ", "", ""},
    {sizeof(hp_counter_info), 12, 0, "GRBM_COUNT", "", "GRBM", "cycles", ""},
    {sizeof(hp_counter_info), 13, 2, "TA_BUSY", "", "TA", "", ""},
    {sizeof(hp_counter_info), 14, 1, "task-clock", "perf sw", "sw", "ns", "SQ_WAVES * 2 / GRBM_COUNT"},
};
static hp_counter_value values[] = {
    {sizeof(hp_counter_value), 1, 10, 0, 0, 7.5, 0},
    {sizeof(hp_counter_value), 3, 10, 1, 0, 512, 0},
    {sizeof(hp_counter_value), 3, 11, 2, 0, 1e300, 0},
    {sizeof(hp_counter_value), 3, 12, 3, 0, -0.0, 0},
    {sizeof(hp_counter_value), 3, 13, 1, 0, 100, 0},
    {sizeof(hp_counter_value), 3, 13, 2, 0, 101, 0},
    {sizeof(hp_counter_value), 3, 13, 3, 1, 102, 0},
    {sizeof(hp_counter_value), 2, 14, 4294967295u, 4294967295u, -123.456e-300, 0},
    {sizeof(hp_counter_value), 2, 12, 1, 0, 5e-324, 0},
    {sizeof(hp_counter_value), 2, 11, 1, 0, INFINITY, 0},
    {sizeof(hp_counter_value), 2, 10, 2, 0, 0, 0},
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

/* ---- the big tables built as pages: the same rows as SQLite would store them, any number of them ---- */

/* FNV-1a over every column of every row of a query, as "type:value" (quote()d), and the row count. */
static uint64_t q_hash(sqlite3 *db, const char *sql, uint64_t *rows) {
  sqlite3_stmt *st;
  uint64_t h = 1469598103934665603ull;
  *rows = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "sql error: %s\n  in %s\n", sqlite3_errmsg(db), sql);
    return 0;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    (*rows)++;
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *t = sqlite3_column_text(st, i);
      for (const unsigned char *p = t ? t : (const unsigned char *)"<null>"; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
      h = (h ^ '|') * 1099511628211ull;
    }
  }
  sqlite3_finalize(st);
  return h;
}

static char *q_first(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  char *v = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
  sqlite3_finalize(st);
  return v;
}

/* PRAGMA integrity_check says "ok" (tree structure, key order, every index entry, NOT NULL, free pages). */
static void check_integrity(const char *p) {
  sqlite3 *db;
  CHECK(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  char *r = q_first(db, "PRAGMA integrity_check");
  CHECK_MSG(r && strcmp(r, "ok") == 0, "%s: integrity_check: %s", p, r ? r : "(no answer)");
  free(r);
  sqlite3_close(db);
}

/* Every column but guid of the big tables (and the index, walked in its own order), hashed. */
static void big_table_hashes(const char *p, uint64_t h[4], uint64_t n[4]) {
  static const char *const tables[3] = {"rocpd_kernel_dispatch", "rocpd_event", "rocpd_pmc_event"};
  sqlite3 *db;
  CHECK(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  for (int t = 0; t < 3; t++) {
    char q[256];
    snprintf(q, sizeof q,
             "SELECT group_concat('typeof(\"' || name || '\"), quote(\"' || name || '\")', ', ') FROM "
             "pragma_table_info('%s') WHERE name <> 'guid'",
             tables[t]);
    char *cols = q_first(db, q);
    char *sql = sqlite3_mprintf("SELECT %s FROM %s ORDER BY id", cols ? cols : "NULL", tables[t]);
    h[t] = q_hash(db, sql, &n[t]);
    sqlite3_free(sql);
    free(cols);
  }
  char *idx = q_first(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%event_id'");
  char *tbl =
      q_first(db, "SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name LIKE '%event_id'");
  char *sql = sqlite3_mprintf("SELECT event_id, id FROM \"%w\" INDEXED BY \"%w\" ORDER BY event_id",
                              tbl ? tbl : "", idx ? idx : "");
  h[3] = q_hash(db, sql, &n[3]);
  sqlite3_free(sql);
  free(idx);
  free(tbl);
  sqlite3_close(db);
}

/* Integers of every width SQLite stores (0 and 1 take no bytes, then 1, 2, 3, 4, 6 and 8 bytes). */
static const int64_t edge_ints[] = {0,
                                    1,
                                    -1,
                                    2,
                                    127,
                                    128,
                                    -128,
                                    -129,
                                    32767,
                                    32768,
                                    -32769,
                                    8388607,
                                    8388608,
                                    -8388609,
                                    2147483647,
                                    2147483648,
                                    -2147483649,
                                    140737488355327,
                                    140737488355328,
                                    -140737488355329,
                                    INT64_MAX,
                                    INT64_MIN};
static const double edge_doubles[] = {7.5, 0.0, 1e300, 5e-324, -123.456e-300, 100, -3, 0.1};

/* Row i of n, ids increasing (as signed 64-bit integers: from below 0 to above it). */
static hp_dispatch bulk_row(uint64_t i, uint64_t n) {
  size_t k = N(edge_ints);
  int64_t id = -4000000000000000000ll + (int64_t)(i * (8000000000000000000ull / n)) + 1;
  if (id == 0) id = 1;
  hp_dispatch d = {.size = sizeof d,
                   .id = (uint64_t)id,
                   .dispatch_id = (uint64_t)edge_ints[i % k],
                   .process_id = i % 5 ? 1 : 0,
                   .thread_id = i % 7 ? 1 : 0,
                   .agent_id = 1,
                   .queue_id = i % 3 ? 1 : 0,
                   .kernel_id = 1,
                   .grid = {(uint32_t)edge_ints[(i + 1) % k], (uint32_t)i, 4294967295u},
                   .workgroup = {64, (uint32_t)(i % 2), 0},
                   .private_size = edge_ints[(i + 2) % k],
                   .group_size = edge_ints[(i + 3) % k],
                   .start_ns = edge_ints[(i + 4) % k],
                   .end_ns = edge_ints[(i + 5) % k],
                   .enqueue_ns = i % 4 ? edge_ints[(i + 6) % k] : 0,
                   .passes = (uint32_t)(i % 3),
                   .bytes_accessible = i % 5 ? (uint64_t)edge_ints[(i + 7) % k] : 0,
                   .bytes_restored = i % 11 == 0 ? UINT64_MAX : 0,
                   .cold = i % 7 == 0};
  return d;
}

static hp_counter_value bulk_value(const hp_dispatch *d, uint64_t i, int c) {
  hp_counter_value v = {.size = sizeof v,
                        .dispatch_id = d->id,
                        .counter_id = (uint64_t)c + 1,
                        .pass = (uint32_t)((i + (uint64_t)c) % 4),
                        .imputed = (uint32_t)(i % 9 == 0),
                        .value = edge_doubles[(i + (uint64_t)c) % N(edge_doubles)] * (double)(i % 13)};
  if (i % 17 == 0) v.value = c ? -0.0 : NAN;
  if (i % 19 == 0) v.value = c ? INFINITY : -INFINITY;
  return v;
}

static void write_refs(hp_store *s) {
  hp_node node = {sizeof node, 1, "host", "m", "Linux", "6", "#1", "x86_64"};
  hp_process pr = {.size = sizeof pr,
                   .id = 1,
                   .node_id = 1,
                   .pid = 42,
                   .ppid = 1,
                   .rank = -1,
                   .start_ns = 10,
                   .end_ns = 20,
                   .command = "./app"};
  hp_thread th = {sizeof th, 1, 1, 42, 10, 20, "main"};
  hp_agent ag = {.size = sizeof ag, .id = 1, .node_id = 1, .type = HP_AGENT_GPU, .name = "gpu"};
  hp_queue q = {sizeof q, 1, 1, 1, "q"};
  hp_code_object co = {sizeof co, 1, 1, 1, "file:///k.so", 0, 0, "", 0, "", "", ""};
  hp_kernel_symbol ks = {
      .size = sizeof ks, .id = 1, .code_object_id = 1, .name = "k", .display_name = "kern"};
  CHECK_OK(hp_write_node(s, &node), s);
  CHECK_OK(hp_write_process(s, &pr), s);
  CHECK_OK(hp_write_thread(s, &th), s);
  CHECK_OK(hp_write_agent(s, &ag), s);
  CHECK_OK(hp_write_queue(s, &q), s);
  CHECK_OK(hp_write_code_object(s, &co), s);
  CHECK_OK(hp_write_kernel_symbol(s, &ks), s);
  for (uint64_t c = 1; c <= 2; c++) {
    hp_counter_info ci = {sizeof ci, c, 1, c == 1 ? "A" : "B", "", "SQ", "", ""};
    CHECK_OK(hp_write_counter_info(s, &ci), s);
  }
}

/* n dispatches in id order, a value each, then 100 more in descending order (out of order) with values. */
static hp_status write_deep(hp_store *w, uint64_t n) {
  write_refs(w);
  hp_status st = HP_OK;
  for (uint64_t k = 1; k <= n && st == HP_OK; k++) {
    hp_dispatch dd = {.size = sizeof dd,
                      .id = k,
                      .dispatch_id = k,
                      .process_id = 1,
                      .thread_id = 1,
                      .agent_id = 1,
                      .queue_id = 1,
                      .kernel_id = 1,
                      .start_ns = (int64_t)k * 10,
                      .end_ns = (int64_t)k * 10 + 5,
                      .passes = 1};
    st = hp_write_dispatch(w, &dd);
    hp_counter_value cv = {
        .size = sizeof cv, .dispatch_id = k, .counter_id = 1, .pass = 1, .value = (double)k};
    if (st == HP_OK) st = hp_write_counter_value(w, &cv);
  }
  for (uint64_t k = n + 100; k > n && st == HP_OK; k--) {
    hp_dispatch dd = {.size = sizeof dd,
                      .id = k,
                      .dispatch_id = k,
                      .process_id = 1,
                      .thread_id = 1,
                      .agent_id = 1,
                      .queue_id = 1,
                      .kernel_id = 1,
                      .passes = 1};
    st = hp_write_dispatch(w, &dd);
    hp_counter_value cv = {
        .size = sizeof cv, .dispatch_id = k, .counter_id = 2, .pass = 1, .value = (double)k};
    if (st == HP_OK) st = hp_write_counter_value(w, &cv);
  }
  return st;
}

/* n dispatches with `nv` values each: in id order (built as pages), or in reverse order (the first row built
 * as pages, then everything through SQLite). */
static void write_bulk(const char *p, uint64_t n, int nv, int reverse) {
  hp_store *s;
  CHECK_OK(hp_store_open(p, "rocpd", HP_CREATE, &s), s);
  write_refs(s);
  hp_status st = HP_OK;
  for (uint64_t k = 0; k < n && st == HP_OK; k++) {
    uint64_t i = reverse ? n - 1 - k : k;
    hp_dispatch d = bulk_row(i, n);
    st = hp_write_dispatch(s, &d);
  }
  for (uint64_t i = 0; i < n && st == HP_OK; i++)
    for (int c = 0; c < nv && st == HP_OK; c++) {
      hp_dispatch d = bulk_row(i, n);
      hp_counter_value v = bulk_value(&d, i, c);
      st = hp_write_counter_value(s, &v);
    }
  CHECK_OK(st, s);
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
}

static void check_bulk(void) {
  /* the same rows stored by SQLite and built as pages read back the same, to the type of every value */
  const char *a = path_in("bulk.db"), *b = path_in("sqlite.db");
  write_bulk(a, 10000, 2, 0);
  write_bulk(b, 10000, 2, 1);
  check_integrity(a);
  check_integrity(b);
  uint64_t ha[4], na[4], hb[4], nb[4];
  big_table_hashes(a, ha, na);
  big_table_hashes(b, hb, nb);
  static const char *const what[4] = {"kernel_dispatch", "event", "pmc_event", "event_id index"};
  for (int t = 0; t < 4; t++)
    CHECK_MSG(ha[t] == hb[t] && na[t] == nb[t], "%s: pages and SQLite differ (%llu and %llu rows)", what[t],
              (unsigned long long)na[t], (unsigned long long)nb[t]);
  CHECK_EQ_U64(na[0], 10000);
  CHECK_EQ_U64(na[2], 20000);
  /* the pages built but not spliceable at commit (the test hook fails the check of the database header,
   * as another SQLite version would): their rows go in through SQLite, with the same result */
  const char *c0 = path_in("nosplice.db");
  setenv("HUBPROF_ROCPD_TEST_NO_SPLICE", "1", 1);
  write_bulk(c0, 10000, 2, 0);
  unsetenv("HUBPROF_ROCPD_TEST_NO_SPLICE");
  check_integrity(c0);
  uint64_t hc[4], nc[4];
  big_table_hashes(c0, hc, nc);
  for (int t = 0; t < 4; t++)
    CHECK_MSG(hc[t] == hb[t] && nc[t] == nb[t],
              "%s: SQLite after the pages and SQLite differ (%llu and %llu rows)", what[t],
              (unsigned long long)nc[t], (unsigned long long)nb[t]);
  /* every field reads back through the hub */
  hp_store *s;
  CHECK_OK(hp_store_open(a, NULL, HP_READ, &s), s);
  hp_cursor *c = NULL;
  CHECK_OK(hp_cursor_open(s, HP_TABLE_DISPATCH, &c), s);
  uint64_t i = 0, bad = 0;
  hp_dispatch d = {.size = sizeof d};
  while (c && hp_cursor_next(c, &d) == HP_OK) {
    hp_dispatch want = bulk_row(i++, 10000);
    char why[128];
    if (!same_row(HP_TABLE_DISPATCH, &want, &d, why, sizeof why) && bad++ < 3) fprintf(stderr, "%s\n", why);
  }
  hp_cursor_close(c);
  CHECK_EQ_U64(i, 10000);
  CHECK_EQ_U64(bad, 0);
  CHECK_OK(hp_cursor_open(s, HP_TABLE_COUNTER_VALUE, &c), s);
  i = bad = 0;
  hp_counter_value v = {.size = sizeof v};
  while (c && hp_cursor_next(c, &v) == HP_OK) {
    hp_dispatch dd = bulk_row(i / 2, 10000);
    hp_counter_value want = bulk_value(&dd, i / 2, (int)(i % 2));
    i++;
    char why[128];
    if (!same_row(HP_TABLE_COUNTER_VALUE, &want, &v, why, sizeof why) && bad++ < 3)
      fprintf(stderr, "%s\n", why);
  }
  hp_cursor_close(c);
  CHECK_EQ_U64(i, 20000);
  CHECK_EQ_U64(bad, 0);
  hp_store_close(s);
  sqlite3 *db;
  CHECK(sqlite3_open_v2(a, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM kernels"), 10000));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM pmc_events"), 20000));
  CHECK(near(q_double(db, "SELECT total_calls FROM top_kernels"), 10000));
  sqlite3_close(db);

  /* deep trees (three levels of kernel_dispatch, event, pmc_event and the index), then rows out of order:
   * what was built goes in, later rows go through SQLite; a row built as a page is still a duplicate */
  const char *deep = path_in("deep.db");
  hp_store *w;
  CHECK_OK(hp_store_open(deep, "rocpd", HP_CREATE, &w), w);
  CHECK_OK(write_deep(w, 60000), w);
  hp_dispatch dup = {.size = sizeof dup, .id = 77, .dispatch_id = 77, .process_id = 1};
  CHECK(hp_write_dispatch(w, &dup) == HP_ERR_CONSTRAINT);
  hp_store_abort(w);
  CHECK(!exists(deep));
  /* the same with trees of several levels and rows out of order (the pages end part way): the rows read
   * back from the page file go in before the later ones */
  {
    uint64_t hd[2][4], nd[2][4];
    for (int k = 0; k < 2; k++) {
      const char *p = path_in(k ? "deep_nosplice.db" : "deep_spliced.db");
      if (k) setenv("HUBPROF_ROCPD_TEST_NO_SPLICE", "1", 1);
      CHECK_OK(hp_store_open(p, "rocpd", HP_CREATE, &w), w);
      CHECK_OK(write_deep(w, 60000), w);
      CHECK_OK(hp_store_close(w), (hp_store *)NULL);
      unsetenv("HUBPROF_ROCPD_TEST_NO_SPLICE");
      check_integrity(p);
      big_table_hashes(p, hd[k], nd[k]);
    }
    CHECK_EQ_U64(nd[1][0], 60100);
    for (int t = 0; t < 4; t++)
      CHECK_MSG(hd[0][t] == hd[1][t] && nd[0][t] == nd[1][t], "deep %s: spliced and not differ", what[t]);
  }
  uint64_t ndeep = 450000;
  CHECK_OK(hp_store_open(deep, "rocpd", HP_CREATE, &w), w);
  hp_status st = write_deep(w, ndeep);
  hp_region rg = {sizeof rg, 1, 1, 1, "phase", "user", 5, 50};
  CHECK_OK(hp_write_region(w, &rg), w);
  CHECK_OK(st, w);
  CHECK_OK(hp_store_close(w), (hp_store *)NULL);
  check_integrity(deep);
  CHECK(sqlite3_open_v2(deep, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM kernels"), (double)ndeep + 100));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM rocpd_event"), (double)ndeep + 100 + 1)); /* + the region's */
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM pmc_events"), (double)ndeep + 100));
  CHECK(
      near(q_double(db, "SELECT COUNT(*) FROM rocpd_pmc_event V JOIN rocpd_kernel_dispatch K ON K.event_id = "
                        "V.event_id WHERE V.value = K.dispatch_id"),
           (double)ndeep + 100));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM regions"), 1));
  /* three levels in every big tree (when this SQLite has the dbstat table to tell) */
  double depth = q_double(db, "SELECT MIN(m) FROM (SELECT MAX(length(path)) AS m FROM dbstat WHERE name LIKE "
                              "'rocpd_kernel_dispatch%' OR name LIKE 'rocpd_event%' OR name LIKE "
                              "'rocpd_pmc_event%' GROUP BY name)");
  CHECK_MSG(isnan(depth) || depth >= 9, "depth path %g", depth);
  CHECK(near(q_double(db, "SELECT SUM(dispatch_id = id AND event_id = id) FROM rocpd_kernel_dispatch"),
             (double)ndeep + 100));
  sqlite3_close(db);

  /* a file system without range insertion (tmpfs): the pages are copied after the database's */
  if (access("/dev/shm", W_OK) == 0) {
    char shm[128];
    snprintf(shm, sizeof shm, "/dev/shm/test_rocpd.%d.db", (int)getpid());
    write_bulk(shm, 5000, 1, 0);
    check_integrity(shm);
    uint64_t hs[4], ns[4];
    big_table_hashes(shm, hs, ns);
    CHECK_EQ_U64(ns[0], 5000);
    CHECK_EQ_U64(ns[2], 5000);
    unlink(shm);
  }

  /* no rows at all */
  const char *empty = path_in("empty.db");
  CHECK_OK(hp_store_open(empty, "rocpd", HP_CREATE, &w), w);
  CHECK_OK(hp_store_close(w), (hp_store *)NULL);
  check_integrity(empty);
  CHECK(files_with(".tmp.") == 0);
}

/* Merge: the dispatches of a per-process log come out of id order (a collector's threads take ids in blocks
 * of 64 and their rows interleave); the merge renumbers them in read order and every counter value still
 * belongs to its dispatch. */
static void check_merge_order(void) {
  const char *in[2] = {path_in("threads.log"), path_in("shuffled.log")};
  for (int f = 0; f < 2; f++) {
    hp_store *s;
    CHECK_OK(hp_store_open(in[f], "log", HP_CREATE, &s), s);
    write_refs(s);
    if (f) { /* another process than the first log's (the same process twice is merged once) */
      hp_process pr = {.size = sizeof pr,
                       .id = 1,
                       .node_id = 1,
                       .pid = 43,
                       .ppid = 1,
                       .rank = -1,
                       .start_ns = 10,
                       .end_ns = 20,
                       .command = "./app"};
      CHECK_OK(hp_write_process(s, &pr), s);
    }
    uint64_t n = f ? 3000 : 2048, ids[3000];
    for (uint64_t k = 0; k < n; k++) {
      if (!f) { /* two threads, blocks of 64, rows of both threads in turns of 10 */
        uint64_t turn = k / 10, thread = turn % 2, j = (turn / 2) * 10 + k % 10;
        ids[k] = (j / 64) * 128 + thread * 64 + j % 64 + 1;
      } else {
        ids[k] = 5 * k + 3;
      }
    }
    if (f)
      for (uint64_t k = n - 1; k > 0; k--) { /* shuffled */
        uint64_t j = (k * 2654435761u) % (k + 1), t = ids[k];
        ids[k] = ids[j];
        ids[j] = t;
      }
    for (uint64_t k = 0; k < n; k++) {
      hp_dispatch d = {.size = sizeof d,
                       .id = ids[k],
                       .dispatch_id = ids[k],
                       .process_id = 1,
                       .thread_id = 1,
                       .agent_id = 1,
                       .queue_id = 1,
                       .kernel_id = 1,
                       .passes = 1};
      CHECK_OK(hp_write_dispatch(s, &d), s);
    }
    for (uint64_t k = n; k-- > 0;)
      for (int c = 1; c <= 2; c++) {
        hp_counter_value v = {.size = sizeof v,
                              .dispatch_id = ids[k],
                              .counter_id = (uint64_t)c,
                              .pass = 1,
                              .value = (double)(ids[k] * 10 + (uint64_t)c)};
        CHECK_OK(hp_write_counter_value(s, &v), s);
      }
    CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  }
  const char *out = path_in("merged.db");
  hp_store *src[2] = {NULL, NULL}, *o;
  for (int f = 0; f < 2; f++)
    CHECK_OK(hp_store_open(in[f], NULL, HP_READ, &src[f]), src[f]);
  CHECK_OK(hp_store_open(out, "rocpd", HP_CREATE, &o), o);
  hp_merge_stats ms = {.size = sizeof ms};
  CHECK_OK(hp_merge(o, src, 2, &ms), o);
  CHECK_OK(hp_store_close(o), (hp_store *)NULL);
  for (int f = 0; f < 2; f++)
    hp_store_close(src[f]);
  CHECK_EQ_U64(ms.rows_out[HP_TABLE_DISPATCH], 2048 + 3000);
  CHECK_EQ_U64(ms.rows_out[HP_TABLE_COUNTER_VALUE], 2 * (2048 + 3000));
  check_integrity(out);
  sqlite3 *db;
  CHECK(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  CHECK(near(q_double(db, "SELECT COUNT(DISTINCT id) FROM rocpd_kernel_dispatch"), 5048));
  CHECK(near(q_double(db, "SELECT MAX(id) - MIN(id) FROM rocpd_kernel_dispatch"), 5047));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM rocpd_pmc_event V JOIN rocpd_kernel_dispatch K ON K.id = "
                          "V.event_id WHERE V.value = COALESCE(json_extract(K.extdata, '$.dispatch_id'), "
                          "K.dispatch_id) * 10 + "
                          "V.pmc_id"),
             2 * 5048));
  /* rocpd's dispatch_id is unique in the file (ROCm's views group by guid and dispatch_id) */
  CHECK(near(q_double(db, "SELECT COUNT(DISTINCT guid || ':' || dispatch_id) FROM rocpd_kernel_dispatch"),
             5048));
  CHECK(near(q_double(db, "SELECT COUNT(*) FROM counters_collection"), 2 * 5048));
  sqlite3_close(db);
}

/* Every row of every rocpd table and view of a and b, guid apart, has the same values of the same types. */
static void check_same_rows(const char *a, const char *b) {
  sqlite3 *da, *db;
  CHECK(sqlite3_open_v2(a, &da, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  CHECK(sqlite3_open_v2(b, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  static const char *const objs[] = {"rocpd_string",
                                     "rocpd_info_node",
                                     "rocpd_info_process",
                                     "rocpd_info_thread",
                                     "rocpd_info_agent",
                                     "rocpd_info_queue",
                                     "rocpd_info_pmc",
                                     "rocpd_info_code_object",
                                     "rocpd_info_kernel_symbol",
                                     "rocpd_event",
                                     "rocpd_pmc_event",
                                     "rocpd_region",
                                     "rocpd_kernel_dispatch",
                                     "kernels",
                                     "top_kernels",
                                     "counters_collection",
                                     "pmc_events",
                                     "processes",
                                     "regions"};
  for (size_t o = 0; o < sizeof objs / sizeof objs[0]; o++) {
    char q[200];
    snprintf(q, sizeof q, "SELECT * FROM %s ORDER BY 1, 2", objs[o]);
    sqlite3_stmt *sa = NULL, *sb = NULL;
    CHECK(sqlite3_prepare_v2(da, q, -1, &sa, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(db, q, -1, &sb, NULL) == SQLITE_OK);
    if (!sa || !sb) continue;
    uint64_t rows = 0, diff = 0;
    for (;;) {
      int ra = sqlite3_step(sa), rb = sqlite3_step(sb);
      CHECK(ra == rb);
      if (ra != SQLITE_ROW || rb != SQLITE_ROW) break;
      rows++;
      for (int c = 0; c < sqlite3_column_count(sa); c++) {
        if (strcmp(sqlite3_column_name(sa, c), "guid") == 0) continue;
        int ta = sqlite3_column_type(sa, c);
        const void *va = sqlite3_column_blob(sa, c), *vb = sqlite3_column_blob(sb, c);
        int na = sqlite3_column_bytes(sa, c), nb = sqlite3_column_bytes(sb, c);
        if (ta != sqlite3_column_type(sb, c) || na != nb || (na && memcmp(va, vb, (size_t)na) != 0)) diff++;
      }
    }
    CHECK(diff == 0);
    if (diff) fprintf(stderr, "  %s: %" PRIu64 " values differ in %" PRIu64 " rows\n", objs[o], diff, rows);
    sqlite3_finalize(sa);
    sqlite3_finalize(sb);
  }
  sqlite3_close(da);
  sqlite3_close(db);
}

/* The temporary file is made fresh beside the output (O_EXCL): links planted under the names an older
 * writer would have used (.<base>.tmp.<pid>.<n>) are neither followed nor removed, and the store is made. */
static void check_temp_planted(void) {
  char victim[1400], out[1400], name[1500];
  snprintf(victim, sizeof victim, "%s", path_in("victim.txt"));
  snprintf(out, sizeof out, "%s", path_in("planted.db"));
  FILE *f = fopen(victim, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("keep me", f);
  fclose(f);
  for (int n = 0; n < 256; n++) {
    snprintf(name, sizeof name, "%s/.planted.db.tmp.%ld.%d", dir, (long)getpid(), n);
    CHECK(symlink(victim, name) == 0);
  }
  hp_store *s;
  CHECK_OK(hp_store_open(out, "rocpd", HP_CREATE, &s), s);
  write_all(s);
  CHECK(files_with(".planted.db.tmp.") == 257); /* the links and the writer's own file */
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  CHECK(files_with(".planted.db.tmp.") == 256);
  struct stat sb;
  CHECK(stat(victim, &sb) == 0 && sb.st_size == 7);
  check_roundtrip(out);
  for (int n = 0; n < 256; n++) {
    snprintf(name, sizeof name, "%s/.planted.db.tmp.%ld.%d", dir, (long)getpid(), n);
    CHECK(unlink(name) == 0);
  }
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
    CHECK_MSG(hp_write_dispatch(s, &d) == HP_OK, "%s", hp_store_error(s));
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
  /* the same rows through plain SQLite (no page writer): identical tables and views */
  char plain[1400];
  snprintf(plain, sizeof plain, "%s", path_in("nopages.db"));
  setenv("HUBPROF_ROCPD_PAGES", "0", 1);
  CHECK_OK(hp_store_open(plain, NULL, HP_CREATE, &s), s);
  write_all(s);
  CHECK_OK(hp_store_close(s), (hp_store *)NULL);
  unsetenv("HUBPROF_ROCPD_PAGES");
  check_roundtrip(plain);
  check_views(plain);
  check_same_rows(exact, plain);
  check_temp_planted();
  check_abort_and_failures();
  check_bad_files(p);
  check_foreign();
  check_bulk();
  check_merge_order();

  /* clean up */
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..") != 0)) unlink(path_in(e->d_name));
  if (d) closedir(d);
  rmdir(dir);
  return check_report("test_rocpd");
}
