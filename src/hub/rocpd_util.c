/* rocpd format, shared helpers: table-name expansion, the extdata JSON writer (reading uses SQLite's JSON
 * functions), the id -> pair map, uuids and SQLite status mapping. Buffers, hashing, string escaping and the
 * maps underneath come from src/common. */
/* SPDX-License-Identifier: MIT */
#include "rocpd_internal.h"

#include "../common/hu_hash.h"
#include "../common/hu_json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Append `s` with every '@name' replaced by the quoted physical table "rocpd_name<suffix>". */
void rp_buf_expand(hu_buf *b, const char *s, const char *suffix) {
  while (*s) {
    const char *at = strchr(s, '@');
    if (!at) {
      hu_buf_str(b, s);
      return;
    }
    hu_buf_put(b, s, (size_t)(at - s));
    const char *e = at + 1;
    while ((*e >= 'a' && *e <= 'z') || *e == '_')
      e++;
    hu_buf_str(b, "\"rocpd_");
    hu_buf_put(b, at + 1, (size_t)(e - at - 1));
    hu_buf_str(b, suffix);
    hu_buf_str(b, "\"");
    s = e;
  }
}

void rp_jw_begin(jw *w, hu_buf *b) {
  w->b = b;
  w->n = 0;
  rp_buf_reset(b);
  hu_buf_byte(b, '{');
}

static void jw_key(jw *w, const char *key) {
  if (w->n++) hu_buf_byte(w->b, ',');
  hu_json_put_str(w->b, key);
  hu_buf_byte(w->b, ':');
}

void rp_jw_i64(jw *w, const char *key, int64_t v) {
  jw_key(w, key);
  char tmp[24];
  hu_buf_put(w->b, tmp, rp_i64_dec(tmp, v));
}

/* A uint64_t as the int64_t with the same bits (as in the table columns): SQLite's JSON functions read
 * every value of 64 bits back exactly (a decimal above INT64_MAX would come back as a REAL). */
void rp_jw_u64(jw *w, const char *key, uint64_t v) {
  jw_key(w, key);
  hu_buf_printf(w->b, "%" PRId64, (int64_t)v);
}

void rp_jw_str(jw *w, const char *key, const char *s) {
  jw_key(w, key);
  hu_json_put_str(w->b, s);
}

/* Finish; returns the text, or "{}" when nothing was written. */
const char *rp_jw_end(jw *w) {
  if (!w->n) return "{}";
  hu_buf_byte(w->b, '}');
  const char *t = hu_buf_cstr(w->b);
  return t ? t : "{}";
}

int64_t rp_d2i64(double d) {
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (int64_t)d;
  return 0;
}

uint64_t rp_d2u64(double d) {
  if (d >= 0 && d < 18446744073709551616.0) return (uint64_t)d;
  return (uint64_t)rp_d2i64(d);
}

int rp_hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const int64_t *rp_pairs_get(const rp_pairs *m, uint64_t key) {
  uint64_t i;
  if (!key) return m->has0 ? m->ab0 : NULL;
  return hu_idmap_get(&m->idx, key, &i) ? m->ab[i] : NULL;
}

/* Set key's pair (replacing an earlier one): 0, or -1 when out of memory. */
int rp_pairs_put(rp_pairs *m, uint64_t key, int64_t a, int64_t b) {
  uint64_t i;
  int64_t *p = key ? NULL : m->ab0;
  if (key && hu_idmap_get(&m->idx, key, &i)) p = m->ab[i];
  if (!p) {
    if (hu_grow((void **)&m->ab, &m->cap, m->n + 1, sizeof *m->ab) || hu_idmap_put(&m->idx, key, m->n))
      return -1;
    p = m->ab[m->n++];
  }
  m->has0 |= !key;
  p[0] = a;
  p[1] = b;
  return 0;
}

void rp_pairs_free(rp_pairs *m) {
  hu_idmap_free(&m->idx);
  free(m->ab);
  memset(m, 0, sizeof *m);
}

/* SQLite result code -> hub status. */
/* Node of process `pid` (0 when not written yet). */
int64_t rp_proc_node(rp_state *r, uint64_t pid) {
  if (pid == r->last_proc && pid) return r->last_nid;
  const int64_t *p = rp_pairs_get(&r->proc, pid);
  r->last_proc = pid;
  r->last_nid = p ? p[0] : 0;
  return r->last_nid;
}

hp_status rp_rc_status(int rc) {
  switch (rc & 0xff) {
  case SQLITE_OK:
  case SQLITE_DONE:
  case SQLITE_ROW: return HP_OK;
  case SQLITE_NOMEM: return HP_ERR_NOMEM;
  case SQLITE_CORRUPT:
  case SQLITE_INTERRUPT: return HP_ERR_CORRUPT;
  case SQLITE_NOTADB:
  case SQLITE_FORMAT: return HP_ERR_FORMAT;
  case SQLITE_CONSTRAINT: return HP_ERR_CONSTRAINT;
  case SQLITE_ERROR:
  case SQLITE_SCHEMA:
  case SQLITE_MISMATCH:
  case SQLITE_RANGE: return HP_ERR_CORRUPT;
  default: return HP_ERR_IO;
  }
}

void rp_make_uuid(char guid[37], char suffix[RP_SUFFIX_LEN + 1]) {
  unsigned char u[16];
  size_t got = 0;
  while (got < sizeof u) {
    ssize_t k = getrandom(u + got, sizeof u - got, 0);
    if (k <= 0) break;
    got += (size_t)k;
  }
  if (got < sizeof u) { /* no entropy source: time, pid and address still make collisions unlikely */
    uint64_t a = hu_mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32)),
             b = hu_mix64(a ^ (uintptr_t)guid);
    memcpy(u, &a, 8);
    memcpy(u + 8, &b, 8);
  }
  u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
  u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  static const char hex[] = "0123456789abcdef";
  size_t k = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) guid[k++] = '-';
    guid[k++] = hex[u[i] >> 4];
    guid[k++] = hex[u[i] & 15];
  }
  guid[k] = 0;
  suffix[0] = '_';
  for (size_t i = 0; i <= k; i++)
    suffix[i + 1] = guid[i] == '-' ? '_' : guid[i];
}
