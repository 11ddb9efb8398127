/* rocpd format, the writer's SQL statements: the prepared INSERT of every table (a mapped table's built from
 * rp_write_map, the others from rp_ins_sql), running SQL, and a failed statement's error. The writer
 * (rocpd_write.c) and the page writer (rocpd_pages.c) both use them. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include <stdio.h>
#include <string.h>

hp_status rp_sql_fail(hp_store *s, int rc, const char *what) {
  rp_state *r = s->impl;
  const char *msg = r && r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_FULL) return hp_set_error(s, HP_ERR_IO, "%s: disk full (%s)", what, msg);
  return hp_set_error(s, rp_rc_status(rc), "%s: %s", what, msg);
}

hp_status rp_exec_sql(hp_store *s, const char *sql, const char *what) {
  rp_state *r = s->impl;
  int rc = sqlite3_exec(r->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? HP_OK : rp_sql_fail(s, rc, what);
}

/* The INSERT of a table written column by column (rp_write_map): the mapped columns (a hub column's
 * parameter repeated for each of its rocpd columns), the derived ones (rp_write_extra), then extdata. */
static void mapped_insert(hu_buf *q, hp_table t, const char *suffix) {
  const hp_table_desc *d = hp_table_describe(t);
  hu_buf vals = {0};
  char num[16], col[64];
  int p = 0, ext = 0;
  /* the small tables replace a row written again (same id); the big ones and regions insert, as ever */
  int big = t == HP_TABLE_DISPATCH || t == HP_TABLE_COUNTER_VALUE || t == HP_TABLE_REGION ||
            t == HP_TABLE_MEMORY_COPY;
  hu_buf_str(q, big ? "INSERT INTO \"rocpd_" : "INSERT OR REPLACE INTO \"rocpd_");
  hu_buf_str(q, rp_rt_name[rp_table_base[t]]);
  hu_buf_str(q, suffix);
  hu_buf_str(q, "\"(");
  for (size_t i = 0; i < d->ncolumns; i++) {
    const char *m = rp_write_map[t][i];
    if (*m == '$' || *m == '%') ext = 1; /* extdata keys; a real's "<column>_bits" */
    if (!*m || *m == '$') continue;
    m += *m == '?' || *m == '#' || *m == '%'; /* 0 as NULL, a string id, a real: the columns are the same */
    snprintf(num, sizeof num, "?%d", ++p);
    for (const char *c = m; *c;) { /* "a,b": each column takes the same parameter */
      size_t n = strcspn(c, ",");
      snprintf(col, sizeof col, "\"%.*s\"", (int)n, c);
      if (vals.n) {
        hu_buf_str(q, ", ");
        hu_buf_str(&vals, ", ");
      }
      hu_buf_str(q, col);
      hu_buf_str(&vals, num);
      c += n + (c[n] == ',');
    }
  }
  for (const char *c = rp_write_extra[t]; c && *c;) {
    size_t n = strcspn(c, ",");
    snprintf(col, sizeof col, ", \"%.*s\"", (int)n, c);
    snprintf(num, sizeof num, ", ?%d", ++p);
    hu_buf_str(q, col);
    hu_buf_str(&vals, num);
    c += n + (c[n] == ',');
    c += strspn(c, " ");
  }
  if (ext || t == HP_TABLE_AGENT || t == HP_TABLE_KERNEL_SYMBOL) { /* those two put derived keys there */
    snprintf(num, sizeof num, ", ?%d", ++p);
    hu_buf_str(q, ", \"extdata\"");
    hu_buf_str(&vals, num);
  }
  hu_buf_str(q, ") VALUES (");
  hu_buf_put(q, vals.p, vals.n);
  hu_buf_str(q, ")");
  q->oom |= vals.oom;
  hu_buf_free(&vals);
}

hp_status rp_prepare_inserts(hp_store *s) {
  rp_state *r = s->impl;
  hu_buf sql = {0};
  hp_status st = HP_OK;
  for (int i = 0; st == HP_OK && i < WS_COUNT; i++) {
    rp_buf_reset(&sql);
    if (i < HP_TABLE_COUNT && rp_write_map[i][0])
      mapped_insert(&sql, (hp_table)i, r->suffix);
    else
      rp_buf_expand(&sql, rp_ins_sql[i], r->suffix);
    int rc = !hu_buf_cstr(&sql) ? SQLITE_NOMEM
                                : sqlite3_prepare_v3(r->db, (const char *)sql.p, -1,
                                                     SQLITE_PREPARE_PERSISTENT, &r->ins[i], NULL);
    if (rc != SQLITE_OK) st = rp_sql_fail(s, rc, "cannot prepare an insert");
  }
  hu_buf_free(&sql);
  return st;
}

void rp_finalize_inserts(rp_state *r) {
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
}
