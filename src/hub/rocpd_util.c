/* rocpd format, shared helpers: growing buffers, the extdata JSON writer (reading uses SQLite's JSON
 * functions), an id map, the rocpd_string interner, uuids and SQLite status mapping. */
#include "rocpd_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static int sb_reserve(sbuf *b, size_t extra) {
  if (b->oom) return -1;
  if (b->n + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      b->oom = 1;
      return -1;
    }
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void rp_sb_put(sbuf *b, const char *s, size_t n) {
  if (sb_reserve(b, n)) return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

void rp_sb_puts(sbuf *b, const char *s) { rp_sb_put(b, s, strlen(s)); }

static void sb_u64(sbuf *b, uint64_t v) {
  char tmp[24];
  size_t i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  rp_sb_put(b, tmp + i, sizeof tmp - i);
}

static void sb_i64(sbuf *b, int64_t v) {
  if (v < 0) {
    rp_sb_put(b, "-", 1);
    sb_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    sb_u64(b, (uint64_t)v);
  }
}

void rp_sb_reset(sbuf *b) {
  b->n = 0;
  b->oom = 0;
  if (b->p) b->p[0] = 0;
}

void rp_sb_free(sbuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* Append `s` with every '@name' replaced by the quoted physical table "rocpd_name<suffix>". */
void rp_sb_expand(sbuf *b, const char *s, const char *suffix) {
  while (*s) {
    const char *at = strchr(s, '@');
    if (!at) {
      rp_sb_puts(b, s);
      return;
    }
    rp_sb_put(b, s, (size_t)(at - s));
    const char *e = at + 1;
    while ((*e >= 'a' && *e <= 'z') || *e == '_')
      e++;
    rp_sb_puts(b, "\"rocpd_");
    rp_sb_put(b, at + 1, (size_t)(e - at - 1));
    rp_sb_puts(b, suffix);
    rp_sb_puts(b, "\"");
    s = e;
  }
}

void rp_jw_begin(jw *w, sbuf *b) {
  w->b = b;
  w->n = 0;
  rp_sb_reset(b);
  rp_sb_put(b, "{", 1);
}

static void jw_key(jw *w, const char *key) {
  if (w->n++) rp_sb_put(w->b, ",", 1);
  rp_sb_put(w->b, "\"", 1);
  rp_sb_puts(w->b, key);
  rp_sb_put(w->b, "\":", 2);
}

void rp_jw_i64(jw *w, const char *key, int64_t v) {
  jw_key(w, key);
  sb_i64(w->b, v);
}

/* A uint64_t as the int64_t with the same bits (as in the table columns): SQLite's JSON functions read
 * every value of 64 bits back exactly (a decimal above INT64_MAX would come back as a REAL). */
void rp_jw_u64(jw *w, const char *key, uint64_t v) {
  jw_key(w, key);
  sb_i64(w->b, (int64_t)v);
}

void rp_jw_str(jw *w, const char *key, const char *s) {
  static const char hex[] = "0123456789abcdef";
  jw_key(w, key);
  rp_sb_put(w->b, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    rp_sb_put(w->b, run, (size_t)(s - run));
    char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
    size_t n = 2;
    if (c < 0x20) {
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      n = 6;
    }
    rp_sb_put(w->b, esc, n);
    run = s + 1;
  }
  rp_sb_put(w->b, run, (size_t)(s - run));
  rp_sb_put(w->b, "\"", 1);
}

/* Finish; returns the text, or "{}" when nothing was written. */
const char *rp_jw_end(jw *w) {
  if (!w->n) return "{}";
  rp_sb_put(w->b, "}", 1);
  return w->b->oom ? "{}" : w->b->p;
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

uint64_t rp_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

umap_slot *rp_umap_get(const umap *m, uint64_t key) {
  if (!m->cap) return NULL;
  for (size_t i = rp_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->s[i].used) return NULL;
    if (m->s[i].key == key) return &m->s[i];
  }
}

int rp_umap_put(umap *m, uint64_t key, int64_t a, int64_t b) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    umap_slot *s = calloc(cap, sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->s[i].used) continue;
      size_t j = rp_mix64(m->s[i].key) & (cap - 1);
      while (s[j].used)
        j = (j + 1) & (cap - 1);
      s[j] = m->s[i];
    }
    free(m->s);
    m->s = s;
    m->cap = cap;
  }
  size_t i = rp_mix64(key) & (m->cap - 1);
  while (m->s[i].used && m->s[i].key != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->s[i].used) m->n++;
  m->s[i] = (umap_slot){key, a, b, 1};
  return 0;
}

uint64_t rp_fnv1a(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

/* Id of `s`, or 0 with *added set when it is new (the caller then stores it with the id it gets);
 * -1 on allocation failure. */
int64_t rp_intern(interner *in, const char *s, int64_t next_id, int *added) {
  size_t len = strlen(s);
  uint64_t h = rp_fnv1a(s, len, 0xcbf29ce484222325ull);
  *added = 0;
  if ((in->n + 1) * 2 > in->cap) {
    size_t cap = in->cap ? in->cap * 2 : 64;
    istr *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < in->cap; i++) {
      if (!in->t[i].s) continue;
      size_t j = in->t[i].hash & (cap - 1);
      while (t[j].s)
        j = (j + 1) & (cap - 1);
      t[j] = in->t[i];
    }
    free(in->t);
    in->t = t;
    in->cap = cap;
  }
  size_t i = h & (in->cap - 1);
  for (; in->t[i].s; i = (i + 1) & (in->cap - 1))
    if (in->t[i].hash == h && in->t[i].len == len && memcmp(in->t[i].s, s, len) == 0) return in->t[i].id;
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, s, len + 1);
  in->t[i] = (istr){copy, len, h, next_id};
  in->n++;
  *added = 1;
  return next_id;
}

void rp_interner_free(interner *in) {
  for (size_t i = 0; i < in->cap; i++)
    free(in->t[i].s);
  free(in->t);
  memset(in, 0, sizeof *in);
}

/* SQLite result code -> hub status. */
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
    uint64_t a = rp_mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32)),
             b = rp_mix64(a ^ (uintptr_t)guid);
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
