/* The hub's interface to the layer above its storage (src/hub/hub_layer.h, what src/assembly/ may use):
 * the row-id span a format offers for split reads (rocpd yes; log, Parquet and stores being created no), the
 * store's mode, and a failure recorded with its whole message (the first one of a created store stays, and
 * closing then drops the file; a read store takes the message and stays readable). */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"
#include "hub_layer.h"

#include "../src/common/hu_dir.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NDISP 300

static char dir[512];

/* A store of `format` with one process and NDISP dispatches, ids 5 .. NDISP + 4; 0 when written. */
static int make_store(const char *path, const char *format) {
  hp_store *s = NULL;
  if (hp_store_open(path, format, HP_CREATE, &s) != HP_OK) return -1;
  hp_process pr = {.size = sizeof pr, .id = 1, .pid = 42, .rank = -1, .start_ns = 1};
  int bad = hp_write_process(s, &pr) != HP_OK;
  for (uint64_t i = 0; i < NDISP && !bad; i++) {
    hp_dispatch d = {.size = sizeof d,
                     .id = 5 + i,
                     .process_id = 1,
                     .kernel_id = 1,
                     .start_ns = 1000 + (int64_t)i,
                     .end_ns = 1500 + (int64_t)i};
    bad = hp_write_dispatch(s, &d) != HP_OK;
  }
  if (bad) {
    hp_store_abort(s);
    return -1;
  }
  return hp_store_close(s) == HP_OK ? 0 : -1;
}

static void check_row_span(void) {
  static const char *const formats[] = {"rocpd", "log", "parquet"};
  for (int f = 0; f < 3; f++) {
    char path[600];
    snprintf(path, sizeof path, "%s/span.%s", dir, formats[f]);
    CHECK_MSG(make_store(path, formats[f]) == 0, "%s", formats[f]);
    hp_store *s = NULL;
    CHECK(hp_store_open(path, formats[f], HP_READ, &s) == HP_OK);
    if (!s) continue;
    CHECK(hp_store_mode(s) == HP_READ);
    int64_t lo = -7, hi = -7;
    hp_status st = hp_store_row_span(s, HP_TABLE_DISPATCH, &lo, &hi);
    if (f == 0) { /* rocpd cuts its dispatch table by id ranges */
      CHECK_OK(st, s);
      CHECK_MSG(lo == 5 && hi == NDISP + 4, "rocpd span %lld..%lld", (long long)lo, (long long)hi);
      CHECK(hp_store_row_span(s, HP_TABLE_PROCESS, &lo, &hi) == HP_ERR_UNSUPPORTED); /* small table: no */
    } else { /* the log cannot split; Parquet splits by row groups, not by ids */
      CHECK_MSG(st == HP_ERR_UNSUPPORTED, "%s: status %d", formats[f], (int)st);
    }
    hp_store_close(s);
    hu_dir_remove(path, 4);
  }
  char path[600];
  snprintf(path, sizeof path, "%s/created.db", dir);
  hp_store *c = NULL;
  CHECK(hp_store_open(path, "rocpd", HP_CREATE, &c) == HP_OK);
  if (!c) return;
  int64_t lo, hi;
  CHECK(hp_store_mode(c) == HP_CREATE);
  CHECK(hp_store_row_span(c, HP_TABLE_DISPATCH, &lo, &hi) == HP_ERR_UNSUPPORTED); /* nothing to read yet */
  hp_store_abort(c);
}

static void check_fail(void) {
  /* a store being created: the first failure stays, with its message, and closing drops the file */
  char path[600];
  snprintf(path, sizeof path, "%s/failed.db", dir);
  hp_store *c = NULL;
  CHECK(hp_store_open(path, "rocpd", HP_CREATE, &c) == HP_OK);
  if (!c) return;
  CHECK(hp_store_fail(c, HP_OK, "x: not a failure") == 0);
  CHECK(hp_store_fail(c, HP_ERR_CANCELLED, "in.db: cancelled after 4096 rows") == 1);
  CHECK(hp_store_fail(c, HP_ERR_NOMEM, "later: out of memory") == 0);
  CHECK(hp_store_fail(c, HP_ERR_IO, NULL) == 0);
  CHECK_STR(hp_store_error(c), "in.db: cancelled after 4096 rows");
  hp_process pr = {.size = sizeof pr, .id = 1, .pid = 1, .rank = -1};
  CHECK(hp_write_process(c, &pr) == HP_ERR_CANCELLED); /* a failed store takes no more rows */
  CHECK(hp_store_close(c) == HP_ERR_CANCELLED);
  CHECK(access(path, F_OK) != 0);

  /* without a message: the status alone, the message left as it is */
  CHECK(hp_store_open(path, "log", HP_CREATE, &c) == HP_OK);
  if (!c) return;
  CHECK(hp_store_fail(c, HP_ERR_IO, NULL) == 1);
  CHECK_STR(hp_store_error(c), "");
  CHECK(hp_store_close(c) == HP_ERR_IO);
  CHECK(access(path, F_OK) != 0);

  /* a read store: takes the message (a read-ahead thread's failure, as the input's own) and stays readable */
  CHECK(make_store(path, "rocpd") == 0);
  hp_store *s = NULL;
  CHECK(hp_store_open(path, NULL, HP_READ, &s) == HP_OK);
  if (!s) return;
  CHECK(hp_store_fail(s, HP_ERR_CORRUPT, "failed.db: dispatch rows: more rows than ids in a range") == 1);
  CHECK_STR(hp_store_error(s), "failed.db: dispatch rows: more rows than ids in a range");
  uint64_t n = 0;
  CHECK_OK(hp_store_count(s, HP_TABLE_DISPATCH, &n), s);
  CHECK_EQ_U64(n, NDISP);
  CHECK(hp_store_close(s) == HP_OK);
  unlink(path);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/hub_layer.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror(dir);
    return 1;
  }
  check_row_span();
  check_fail();
  hu_dir_remove(dir, 4);
  return check_report("test_hub_layer");
}
