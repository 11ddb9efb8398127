/* rocpd format: a profile as ONE SQLite file in ROCm's rocpd 3.x layout (uuid-suffixed tables, base-name
 * views, data and summary views), readable by ROCm's tools and any SQLite client; the mapping is in
 * docs/formats/rocpd.md. Sections: utilities (buffers, JSON, maps) · schema text · b-tree pages (the big
 * tables written as SQLite pages directly) · state · writing · reading · ops.
 */
#include "hub_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RP_SCHEMA_VERSION "3.0.4"
#define RP_WRITER_TAG "hubprof_format" /* metadata tag marking a file written by hubprof */
#define RP_KEY_ESCAPE "hubprof.key:"   /* prefix for user keys that would collide with format tags */
#define RP_SUFFIX_LEN 37               /* "_" + uuid with '-' replaced by '_' */
#define RP_PLACEHOLDER "{\"hubprof_placeholder\":1}"

/* ================================ utilities ================================ */

/* Growable byte buffer; `p` stays NUL-terminated after every append that succeeded. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
  int oom; /* an allocation failed: content is incomplete */
} sbuf;

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

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (sb_reserve(b, n)) return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_u64(sbuf *b, uint64_t v) {
  char tmp[24];
  size_t i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  sb_put(b, tmp + i, sizeof tmp - i);
}

static void sb_i64(sbuf *b, int64_t v) {
  if (v < 0) {
    sb_put(b, "-", 1);
    sb_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    sb_u64(b, (uint64_t)v);
  }
}

static void sb_reset(sbuf *b) {
  b->n = 0;
  b->oom = 0;
  if (b->p) b->p[0] = 0;
}

static void sb_free(sbuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* Append `s` with every '@name' replaced by the quoted physical table "rocpd_name<suffix>". */
static void sb_expand(sbuf *b, const char *s, const char *suffix) {
  while (*s) {
    const char *at = strchr(s, '@');
    if (!at) {
      sb_puts(b, s);
      return;
    }
    sb_put(b, s, (size_t)(at - s));
    const char *e = at + 1;
    while ((*e >= 'a' && *e <= 'z') || *e == '_')
      e++;
    sb_puts(b, "\"rocpd_");
    sb_put(b, at + 1, (size_t)(e - at - 1));
    sb_puts(b, suffix);
    sb_puts(b, "\"");
    s = e;
  }
}

/* ---- JSON: a flat object of numbers and strings written by us; a tolerant top-level reader ---- */

typedef struct jw {
  sbuf *b;
  int n; /* members written */
} jw;

static void jw_begin(jw *w, sbuf *b) {
  w->b = b;
  w->n = 0;
  sb_reset(b);
  sb_put(b, "{", 1);
}

static void jw_key(jw *w, const char *key) {
  if (w->n++) sb_put(w->b, ",", 1);
  sb_put(w->b, "\"", 1);
  sb_puts(w->b, key);
  sb_put(w->b, "\":", 2);
}

static void jw_i64(jw *w, const char *key, int64_t v) {
  jw_key(w, key);
  sb_i64(w->b, v);
}

static void jw_u64(jw *w, const char *key, uint64_t v) {
  jw_key(w, key);
  sb_u64(w->b, v);
}

static void jw_str(jw *w, const char *key, const char *s) {
  static const char hex[] = "0123456789abcdef";
  jw_key(w, key);
  sb_put(w->b, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    sb_put(w->b, run, (size_t)(s - run));
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
    sb_put(w->b, esc, n);
    run = s + 1;
  }
  sb_put(w->b, run, (size_t)(s - run));
  sb_put(w->b, "\"", 1);
}

/* Finish; returns the text, or "{}" when nothing was written. */
static const char *jw_end(jw *w) {
  if (!w->n) return "{}";
  sb_put(w->b, "}", 1);
  return w->b->oom ? "{}" : w->b->p;
}

typedef struct jspan {
  const char *p; /* value text: for a string, its content between the quotes (still escaped) */
  size_t n;
  int is_str;
} jspan;

static size_t js_ws(const char *s, size_t n, size_t i) {
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
    i++;
  return i;
}

/* Index just past the closing quote of the string whose opening quote is at i (n when unterminated). */
static size_t js_string_end(const char *s, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (s[i] == '\\')
      i++;
    else if (s[i] == '"')
      return i + 1;
  }
  return n;
}

static int js_num_end(char c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == 0;
}

/* Find the members keys[0..nk) of the top-level object in s[0..n) in one pass (nested values are skipped;
 * the first of equal keys counts). Returns a bit per key found, with its value span in out[]; 0 also for
 * malformed text (members before the damage still count). */
static unsigned json_find_n(const char *s, size_t n, const char *const *keys, int nk, jspan *out) {
  if (!s) return 0;
  size_t klen[8];
  if (nk > 8) nk = 8;
  for (int k = 0; k < nk; k++)
    klen[k] = strlen(keys[k]);
  unsigned found = 0, all = (1u << nk) - 1;
  size_t i = js_ws(s, n, 0);
  if (i >= n || s[i] != '{') return 0;
  i++;
  while (found != all) {
    i = js_ws(s, n, i);
    if (i >= n || s[i] != '"') return found;
    size_t ks = i + 1, ke = js_string_end(s, n, i);
    if (ke >= n) return found;
    int match = -1;
    for (int k = 0; k < nk && match < 0; k++)
      if (!(found >> k & 1) && ke - 1 - ks == klen[k] && memcmp(s + ks, keys[k], klen[k]) == 0) match = k;
    i = js_ws(s, n, ke);
    if (i >= n || s[i] != ':') return found;
    i = js_ws(s, n, i + 1);
    if (i >= n) return found;
    size_t vs = i, ve;
    int is_str = 0;
    if (s[i] == '"') {
      ve = js_string_end(s, n, i);
      if (ve > n || s[ve - 1] != '"' || ve - 1 == vs) return found;
      is_str = 1;
    } else if (s[i] == '{' || s[i] == '[') {
      size_t depth = 0;
      for (ve = i; ve < n; ve++) {
        if (s[ve] == '"') {
          ve = js_string_end(s, n, ve) - 1;
        } else if (s[ve] == '{' || s[ve] == '[') {
          depth++;
        } else if (s[ve] == '}' || s[ve] == ']') {
          if (--depth == 0) break;
        }
      }
      if (ve >= n) return found;
      ve++;
    } else {
      for (ve = i; ve < n && !js_num_end(s[ve]); ve++) {
      }
    }
    if (match >= 0) {
      out[match].is_str = is_str;
      out[match].p = s + vs + is_str;
      out[match].n = ve - vs - 2 * (size_t)is_str;
      found |= 1u << match;
    }
    i = js_ws(s, n, ve);
    if (i >= n || s[i] != ',') return found;
    i++;
  }
  return found;
}

/* Find the member `key` of the top-level object in s[0..n); nested values are skipped.
 * Returns 1 and the value span when found, 0 otherwise (also for malformed text). */
static int json_find(const char *s, size_t n, const char *key, jspan *out) {
  return json_find_n(s, n, &key, 1, out) != 0;
}

/* A number value as text in tmp; 0 when it is not one. */
static int span_num(const jspan *v, char *tmp, size_t tmpsz) {
  if (v->is_str || v->n == 0 || v->n >= tmpsz) return 0;
  memcpy(tmp, v->p, v->n);
  tmp[v->n] = 0;
  return 1;
}

static int64_t d2i64(double d) {
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (int64_t)d;
  return 0;
}

static uint64_t d2u64(double d) {
  if (d >= 0 && d < 18446744073709551616.0) return (uint64_t)d;
  return (uint64_t)d2i64(d);
}

/* A number member's value as int64 / uint64; `def` when absent or not a number. */
static int64_t span_i64(const jspan *v, int found, int64_t def) {
  char tmp[48], *end;
  if (!found || !span_num(v, tmp, sizeof tmp)) return def;
  /* the common case, an optional '-' and up to 18 digits, without the C library */
  size_t k = tmp[0] == '-';
  if (v->n > k && v->n - k < 19) {
    int64_t x = 0;
    size_t j = k;
    while (j < v->n && tmp[j] >= '0' && tmp[j] <= '9')
      x = x * 10 + (tmp[j++] - '0');
    if (j == v->n) return k ? -x : x;
  }
  errno = 0;
  long long x = strtoll(tmp, &end, 10);
  if (*end || errno) return d2i64(strtod(tmp, NULL));
  return (int64_t)x;
}

static uint64_t span_u64(const jspan *v, int found, uint64_t def) {
  char tmp[48], *end;
  if (!found || !span_num(v, tmp, sizeof tmp)) return def;
  /* the common case, digits only, without the C library */
  if (v->n < 20) {
    uint64_t x = 0;
    size_t k = 0;
    while (k < v->n && tmp[k] >= '0' && tmp[k] <= '9')
      x = x * 10 + (uint64_t)(tmp[k++] - '0');
    if (k == v->n) return x;
  }
  errno = 0;
  if (tmp[0] == '-') return (uint64_t)span_i64(v, 1, 0);
  unsigned long long x = strtoull(tmp, &end, 10);
  if (*end || errno) return d2u64(strtod(tmp, NULL));
  return (uint64_t)x;
}

static int64_t json_i64(const char *s, size_t n, const char *key, int64_t def) {
  jspan v;
  return span_i64(&v, json_find(s, n, key, &v), def);
}

static uint64_t json_u64(const char *s, size_t n, const char *key, uint64_t def) {
  jspan v;
  return span_u64(&v, json_find(s, n, key, &v), def);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int read_u16hex(const char *p, size_t n, size_t i, unsigned *out) {
  if (i + 4 > n) return 0;
  unsigned v = 0;
  for (size_t k = 0; k < 4; k++) {
    int h = hexval(p[i + k]);
    if (h < 0) return 0;
    v = v * 16 + (unsigned)h;
  }
  *out = v;
  return 1;
}

static void sb_utf8(sbuf *b, unsigned cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xc0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xe0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  sb_put(b, u, n);
}

/* Append the unescaped content of a JSON string span (NUL bytes from \u0000 end the C string early). */
static void sb_unescape(sbuf *b, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != '\\' || i + 1 >= n) {
      sb_put(b, p + i, 1);
      continue;
    }
    char c = p[++i];
    unsigned cp;
    switch (c) {
    case 'b': sb_put(b, "\b", 1); break;
    case 'f': sb_put(b, "\f", 1); break;
    case 'n': sb_put(b, "\n", 1); break;
    case 'r': sb_put(b, "\r", 1); break;
    case 't': sb_put(b, "\t", 1); break;
    case 'u':
      if (!read_u16hex(p, n, i + 1, &cp)) {
        sb_put(b, "\\u", 2);
        break;
      }
      i += 4;
      if (cp >= 0xd800 && cp < 0xdc00 && i + 2 < n && p[i + 1] == '\\' && p[i + 2] == 'u') {
        unsigned lo;
        if (read_u16hex(p, n, i + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          i += 6;
        }
      }
      sb_utf8(b, cp);
      break;
    default: sb_put(b, &c, 1); break;
    }
  }
}

/* ---- u64 -> (a, b) map, open addressing (small tables: processes, agents, code objects) ---- */
typedef struct umap_slot {
  uint64_t key;
  int64_t a, b;
  int used;
} umap_slot;

typedef struct umap {
  umap_slot *s;
  size_t cap, n;
} umap;

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static umap_slot *umap_get(const umap *m, uint64_t key) {
  if (!m->cap) return NULL;
  for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->s[i].used) return NULL;
    if (m->s[i].key == key) return &m->s[i];
  }
}

static int umap_put(umap *m, uint64_t key, int64_t a, int64_t b) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    umap_slot *s = calloc(cap, sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->s[i].used) continue;
      size_t j = mix64(m->s[i].key) & (cap - 1);
      while (s[j].used)
        j = (j + 1) & (cap - 1);
      s[j] = m->s[i];
    }
    free(m->s);
    m->s = s;
    m->cap = cap;
  }
  size_t i = mix64(key) & (m->cap - 1);
  while (m->s[i].used && m->s[i].key != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->s[i].used) m->n++;
  m->s[i] = (umap_slot){key, a, b, 1};
  return 0;
}

/* ---- string interner for rocpd_string: string -> id ---- */
typedef struct istr {
  char *s;
  size_t len;
  uint64_t hash;
  int64_t id;
} istr;

typedef struct interner {
  istr *t;
  size_t cap, n;
} interner;

static uint64_t fnv1a(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

/* Id of `s`, or 0 with *added set when it is new (the caller then stores it with the id it gets);
 * -1 on allocation failure. */
static int64_t intern(interner *in, const char *s, int64_t next_id, int *added) {
  size_t len = strlen(s);
  uint64_t h = fnv1a(s, len, 0xcbf29ce484222325ull);
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

static void interner_free(interner *in) {
  for (size_t i = 0; i < in->cap; i++)
    free(in->t[i].s);
  free(in->t);
  memset(in, 0, sizeof *in);
}

/* ================================ schema text ================================ */

/* The rocpd base tables (rocpd_<name>), in creation order. */
enum {
  RT_METADATA,
  RT_STRING,
  RT_NODE,
  RT_PROCESS,
  RT_THREAD,
  RT_AGENT,
  RT_QUEUE,
  RT_STREAM,
  RT_PMC,
  RT_CODE_OBJECT,
  RT_KERNEL_SYMBOL,
  RT_TRACK,
  RT_EVENT,
  RT_ARG,
  RT_PMC_EVENT,
  RT_REGION,
  RT_SAMPLE,
  RT_KERNEL_DISPATCH,
  RT_MEMORY_COPY,
  RT_MEMORY_ALLOCATE,
  RT_GRAPH_LAUNCH,
  RT_COUNT
};

static const char *const rt_name[RT_COUNT] = {
    "metadata",
    "string",
    "info_node",
    "info_process",
    "info_thread",
    "info_agent",
    "info_queue",
    "info_stream",
    "info_pmc",
    "info_code_object",
    "info_kernel_symbol",
    "track",
    "event",
    "arg",
    "pmc_event",
    "region",
    "sample",
    "kernel_dispatch",
    "memory_copy",
    "memory_allocate",
    "graph_launch",
};

#define EXT ", extdata JSONB NOT NULL DEFAULT '{}'"
#define NODE_PID "nid INTEGER NOT NULL, pid INTEGER NOT NULL"

/* Columns after "id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '<guid>'" (metadata: after id only).
 * Column names are rocpd's (schema 3.0.4); relations (nid, pid, tid, agent_id, ... are row ids of the info
 * tables) are not declared as SQL foreign keys, since hub references may be 0 ("none"). */
static const char *const rt_cols[RT_COUNT] = {
    [RT_METADATA] = "tag TEXT NOT NULL, value TEXT NOT NULL",
    [RT_STRING] = "string TEXT NOT NULL UNIQUE",
    [RT_NODE] =
        "hash BIGINT NOT NULL, machine_id TEXT NOT NULL, system_name TEXT, hostname TEXT, release TEXT, "
        "version TEXT, hardware_name TEXT, domain_name TEXT",
    [RT_PROCESS] =
        "nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, fini BIGINT, start "
        "BIGINT, \"end\" BIGINT, command TEXT, environment JSONB NOT NULL DEFAULT '{}'" EXT,
    [RT_THREAD] =
        "nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT, start "
        "BIGINT, \"end\" BIGINT" EXT,
    [RT_AGENT] =
        NODE_PID ", type TEXT CHECK (type IN ('CPU', 'GPU', 'NIC')), absolute_index INTEGER, logical_index "
                 "INTEGER, type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, vendor_name TEXT, "
                 "product_name TEXT, user_name TEXT" EXT,
    [RT_QUEUE] = NODE_PID ", name TEXT" EXT,
    [RT_STREAM] = NODE_PID ", name TEXT" EXT,
    [RT_PMC] = NODE_PID
    ", agent_id INTEGER, target_arch TEXT CHECK (target_arch IN ('CPU', 'GPU', 'NIC')), event_code "
    "INT, instance_id INTEGER, name TEXT NOT NULL, symbol TEXT NOT NULL, description TEXT, "
    "long_description TEXT DEFAULT '', component TEXT, units TEXT DEFAULT '', value_type TEXT CHECK "
    "(value_type IN ('ABS', 'ACCUM', 'RELATIVE')), block TEXT, expression TEXT, is_constant INTEGER, "
    "is_derived INTEGER, spm_support INTEGER" EXT,
    [RT_CODE_OBJECT] =
        NODE_PID ", agent_id INTEGER, uri TEXT, load_base BIGINT, load_size BIGINT, load_delta BIGINT, "
                 "storage_type TEXT CHECK (storage_type IN ('FILE', 'MEMORY'))" EXT,
    [RT_KERNEL_SYMBOL] = NODE_PID
    ", code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT, kernel_object INTEGER, "
    "kernarg_segment_size INTEGER, kernarg_segment_alignment INTEGER, group_segment_size INTEGER, "
    "private_segment_size INTEGER, sgpr_count INTEGER, arch_vgpr_count INTEGER, accum_vgpr_count "
    "INTEGER" EXT,
    [RT_TRACK] = "nid INTEGER NOT NULL, pid INTEGER, tid INTEGER, name_id INTEGER" EXT,
    [RT_EVENT] = "category_id INTEGER, stack_id INTEGER, parent_stack_id INTEGER, correlation_id INTEGER, "
                 "call_stack JSONB NOT NULL DEFAULT '{}', line_info JSONB NOT NULL DEFAULT '{}'" EXT,
    [RT_ARG] =
        "event_id INTEGER NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL, "
        "value TEXT" EXT,
    [RT_PMC_EVENT] =
        "event_id INTEGER, sample_id INTEGER, pmc_id INTEGER NOT NULL, value REAL DEFAULT 0.0, xcc "
        "INTEGER, shader_engine INTEGER, instance INTEGER, extdata JSONB DEFAULT '{}'",
    [RT_REGION] = NODE_PID
    ", tid INTEGER NOT NULL, start BIGINT NOT NULL, \"end\" BIGINT NOT NULL, name_id INTEGER NOT "
    "NULL, event_id INTEGER" EXT,
    [RT_SAMPLE] = "track_id INTEGER NOT NULL, timestamp BIGINT NOT NULL, event_id INTEGER" EXT,
    [RT_KERNEL_DISPATCH] = NODE_PID
    ", tid INTEGER, agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT "
    "NULL, queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, start BIGINT NOT NULL, \"end\" "
    "BIGINT NOT NULL, private_segment_size INTEGER, group_segment_size INTEGER, workgroup_size_x "
    "INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL, "
    "grid_size_x INTEGER NOT NULL, grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL, "
    "graph_exec_id INTEGER NOT NULL DEFAULT 0, graph_node_id INTEGER NOT NULL DEFAULT 0, "
    "region_name_id INTEGER, event_id INTEGER" EXT,
    [RT_MEMORY_COPY] = NODE_PID
    ", tid INTEGER, start BIGINT NOT NULL, \"end\" BIGINT NOT NULL, name_id INTEGER NOT NULL, "
    "dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER, size "
    "INTEGER NOT NULL, queue_id INTEGER, stream_id INTEGER, graph_exec_id INTEGER NOT NULL DEFAULT 0, "
    "graph_node_id INTEGER NOT NULL DEFAULT 0, region_name_id INTEGER, event_id INTEGER" EXT,
    [RT_MEMORY_ALLOCATE] = NODE_PID
    ", tid INTEGER, agent_id INTEGER, type TEXT CHECK (type IN ('ALLOC', 'FREE', 'REALLOC', "
    "'RECLAIM')), level TEXT CHECK (level IN ('REAL', 'VIRTUAL', 'SCRATCH')), start BIGINT NOT NULL, "
    "\"end\" BIGINT NOT NULL, address INTEGER, size INTEGER NOT NULL, queue_id INTEGER, stream_id "
    "INTEGER, event_id INTEGER" EXT,
    [RT_GRAPH_LAUNCH] = NODE_PID
    ", tid INTEGER, agent_id INTEGER, queue_id INTEGER, start BIGINT NOT NULL, \"end\" BIGINT NOT "
    "NULL, graph_exec_id INTEGER NOT NULL, kernel_dispatch_count INTEGER NOT NULL DEFAULT 0, event_id "
    "INTEGER" EXT,
};

/* Views over the base-name views, with rocprofv3's view and column names (our own SQL). Every counter
 * value keeps its pass: counters_collection groups by dispatch, counter AND pass (extdata.pass). */
static const char rp_views_sql[] =
    "CREATE VIEW processes AS SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS "
    "system_release, N.version AS system_version, P.guid, P.ppid, P.pid, P.init, P.start, P.\"end\", P.fini, "
    "P.command FROM rocpd_info_process P JOIN rocpd_info_node N ON N.id = P.nid AND N.guid = P.guid;\n"
    "CREATE VIEW threads AS SELECT N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS "
    "system_release, N.version AS system_version, P.guid, P.ppid, P.pid, T.tid, T.start, T.\"end\", T.name "
    "FROM "
    "rocpd_info_thread T JOIN rocpd_info_process P ON P.id = T.pid AND P.guid = T.guid JOIN rocpd_info_node "
    "N ON "
    "N.id = T.nid AND N.guid = T.guid;\n"
    "CREATE VIEW code_objects AS SELECT C.id, C.guid, C.nid, P.pid, A.absolute_index AS agent_abs_index, "
    "C.uri, "
    "C.load_base, C.load_size, C.load_delta, C.storage_type AS storage_type_str FROM rocpd_info_code_object "
    "C "
    "JOIN rocpd_info_agent A ON A.id = C.agent_id AND A.guid = C.guid JOIN rocpd_info_process P ON P.id = "
    "C.pid "
    "AND P.guid = C.guid;\n"
    "CREATE VIEW kernel_symbols AS SELECT S.id, S.guid, S.nid, P.pid, S.code_object_id, S.kernel_name, "
    "S.display_name, S.kernel_object, S.kernarg_segment_size, S.kernarg_segment_alignment, "
    "S.group_segment_size, "
    "S.private_segment_size, S.sgpr_count, S.arch_vgpr_count, S.accum_vgpr_count FROM "
    "rocpd_info_kernel_symbol "
    "S JOIN rocpd_info_process P ON P.id = S.pid AND P.guid = S.guid;\n"
    "CREATE VIEW regions AS SELECT R.id, R.guid, (SELECT string FROM rocpd_string WHERE id = E.category_id "
    "AND "
    "guid = E.guid) AS category, S.string AS name, R.nid, P.pid, T.tid, R.start, R.\"end\", R.\"end\" - "
    "R.start "
    "AS duration, R.event_id, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id, E.extdata, "
    "E.call_stack, E.line_info FROM rocpd_region R JOIN rocpd_event E ON E.id = R.event_id AND E.guid = "
    "R.guid "
    "JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid JOIN rocpd_info_process P ON P.id = R.pid "
    "AND "
    "P.guid = R.guid JOIN rocpd_info_thread T ON T.id = R.tid AND T.guid = R.guid;\n"
    "CREATE VIEW kernels AS SELECT K.id, K.guid, T.tid, (SELECT string FROM rocpd_string WHERE id = "
    "E.category_id AND guid = E.guid) AS category, R.string AS region, S.display_name AS name, K.nid, P.pid, "
    "A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index, A.type_index AS "
    "agent_type_index, "
    "A.type AS agent_type, S.code_object_id, K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id, Q.name AS "
    "queue, ST.name AS stream, K.start, K.\"end\", K.\"end\" - K.start AS duration, K.grid_size_x AS grid_x, "
    "K.grid_size_y AS grid_y, K.grid_size_z AS grid_z, K.workgroup_size_x AS workgroup_x, K.workgroup_size_y "
    "AS "
    "workgroup_y, K.workgroup_size_z AS workgroup_z, K.group_segment_size AS lds_size, "
    "K.private_segment_size AS "
    "scratch_size, S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count, S.group_segment_size "
    "AS "
    "static_lds_size, S.private_segment_size AS static_scratch_size, E.stack_id, E.parent_stack_id, "
    "E.correlation_id AS corr_id FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON E.id = K.event_id AND "
    "E.guid "
    "= K.guid JOIN rocpd_string R ON R.id = K.region_name_id AND R.guid = K.guid JOIN "
    "rocpd_info_kernel_symbol S "
    "ON S.id = K.kernel_id AND S.guid = K.guid JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = "
    "K.guid "
    "JOIN rocpd_info_queue Q ON Q.id = K.queue_id AND Q.guid = K.guid JOIN rocpd_info_process P ON P.id = "
    "K.pid "
    "AND P.guid = K.guid JOIN rocpd_info_thread T ON T.id = K.tid AND T.guid = K.guid LEFT JOIN "
    "rocpd_info_stream ST ON ST.id = K.stream_id AND ST.guid = K.guid;\n"
    "CREATE VIEW pmc_info AS SELECT I.id, I.guid, I.nid, P.pid, A.absolute_index AS agent_abs_index, "
    "I.is_constant, I.is_derived, I.name, I.description, I.block, I.expression FROM rocpd_info_pmc I JOIN "
    "rocpd_info_agent A ON A.id = I.agent_id AND A.guid = I.guid JOIN rocpd_info_process P ON P.id = I.pid "
    "AND "
    "P.guid = I.guid;\n"
    "CREATE VIEW pmc_events AS SELECT V.id, V.guid, V.pmc_id, E.id AS event_id, (SELECT string FROM "
    "rocpd_string WHERE id = E.category_id AND guid = E.guid) AS category, (SELECT display_name FROM "
    "rocpd_info_kernel_symbol WHERE id = K.kernel_id AND guid = K.guid) AS name, K.nid, P.pid, "
    "K.dispatch_id, "
    "K.start, K.\"end\", K.\"end\" - K.start AS duration, I.name AS counter_name, V.value AS counter_value, "
    "COALESCE(json_extract(V.extdata, '$.pass'), 0) AS replay_pass FROM rocpd_pmc_event V JOIN "
    "rocpd_info_pmc I "
    "ON I.id = V.pmc_id AND I.guid = V.guid JOIN rocpd_event E ON E.id = V.event_id AND E.guid = V.guid JOIN "
    "rocpd_kernel_dispatch K ON K.event_id = V.event_id AND K.guid = V.guid JOIN rocpd_info_process P ON "
    "P.id = "
    "K.pid AND P.guid = K.guid;\n"
    "CREATE VIEW counters_collection AS SELECT MIN(V.id) AS id, V.guid, K.dispatch_id, K.kernel_id, E.id AS "
    "event_id, E.correlation_id, E.stack_id, E.parent_stack_id, P.pid, T.tid, K.agent_id, A.absolute_index "
    "AS "
    "agent_abs_index, A.logical_index AS agent_log_index, A.type_index AS agent_type_index, A.type AS "
    "agent_type, K.queue_id, K.grid_size_x, K.grid_size_y, K.grid_size_z, K.grid_size_x * K.grid_size_y * "
    "K.grid_size_z AS grid_size, S.display_name AS kernel_name, (SELECT string FROM rocpd_string WHERE id = "
    "K.region_name_id AND guid = K.guid) AS kernel_region, K.workgroup_size_x, K.workgroup_size_y, "
    "K.workgroup_size_z, K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z AS workgroup_size, "
    "K.group_segment_size AS lds_block_size, K.private_segment_size AS scratch_size, S.arch_vgpr_count AS "
    "vgpr_count, S.accum_vgpr_count, S.sgpr_count, I.name AS counter_name, I.symbol AS counter_symbol, "
    "I.component, I.description, I.block, I.expression, I.value_type, I.id AS counter_id, SUM(V.value) AS "
    "value, K.start, K.\"end\", I.is_constant, I.is_derived, K.\"end\" - K.start AS duration, (SELECT string "
    "FROM rocpd_string WHERE id = E.category_id AND guid = E.guid) AS category, K.nid, E.extdata, "
    "S.code_object_id, COALESCE(json_extract(V.extdata, '$.pass'), 0) AS replay_pass, "
    "MAX(COALESCE(json_extract(V.extdata, '$.imputed'), 0)) AS imputed FROM rocpd_pmc_event V JOIN "
    "rocpd_info_pmc I ON I.id = V.pmc_id AND I.guid = V.guid JOIN rocpd_event E ON E.id = V.event_id AND "
    "E.guid "
    "= V.guid JOIN rocpd_kernel_dispatch K ON K.event_id = V.event_id AND K.guid = V.guid JOIN "
    "rocpd_info_agent "
    "A ON A.id = K.agent_id AND A.guid = K.guid JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND "
    "S.guid = K.guid JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid JOIN rocpd_info_thread T "
    "ON "
    "T.id = K.tid AND T.guid = K.guid WHERE V.sample_id IS NULL GROUP BY V.guid, K.id, V.pmc_id, "
    "replay_pass;\n"
    "CREATE VIEW top_kernels AS SELECT S.display_name AS name, COUNT(*) AS total_calls, TOTAL(K.\"end\" - "
    "K.start) / 1000.0 AS total_duration, AVG(K.\"end\" - K.start) / 1000.0 AS average, 100.0 * "
    "TOTAL(K.\"end\" "
    "- K.start) / NULLIF((SELECT TOTAL(\"end\" - start) FROM rocpd_kernel_dispatch), 0) AS percentage FROM "
    "rocpd_kernel_dispatch K JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid GROUP "
    "BY "
    "S.display_name ORDER BY total_duration DESC;\n"
    "CREATE VIEW busy AS SELECT U.agent_id, A.type, U.GpuTime, W.WallTime, U.GpuTime * 1.0 / "
    "NULLIF(W.WallTime, "
    "0) AS Busy FROM (SELECT agent_id, guid, TOTAL(\"end\" - start) AS GpuTime FROM (SELECT agent_id, guid, "
    "start, \"end\" FROM rocpd_kernel_dispatch UNION ALL SELECT dst_agent_id, guid, start, \"end\" FROM "
    "rocpd_memory_copy) GROUP BY agent_id, guid) U JOIN (SELECT MAX(\"end\") - MIN(start) AS WallTime FROM "
    "(SELECT start, \"end\" FROM rocpd_kernel_dispatch UNION ALL SELECT start, \"end\" FROM "
    "rocpd_memory_copy)) "
    "W JOIN rocpd_info_agent A ON A.id = U.agent_id AND A.guid = U.guid;\n"
    "CREATE VIEW top AS SELECT name, COUNT(*) AS total_calls, TOTAL(duration) / 1000.0 AS total_duration, "
    "AVG(duration) / 1000.0 AS average, 100.0 * TOTAL(duration) / NULLIF((SELECT TOTAL(d) FROM (SELECT "
    "\"end\" - "
    "start AS d FROM rocpd_kernel_dispatch UNION ALL SELECT \"end\" - start FROM rocpd_memory_copy UNION ALL "
    "SELECT \"end\" - start FROM rocpd_region)), 0) AS percentage FROM (SELECT S.display_name AS name, "
    "K.\"end\" "
    "- K.start AS duration FROM rocpd_kernel_dispatch K JOIN rocpd_info_kernel_symbol S ON S.id = "
    "K.kernel_id "
    "AND S.guid = K.guid UNION ALL SELECT N.string, M.\"end\" - M.start FROM rocpd_memory_copy M JOIN "
    "rocpd_string N ON N.id = M.name_id AND N.guid = M.guid UNION ALL SELECT N.string, R.\"end\" - R.start "
    "FROM "
    "rocpd_region R JOIN rocpd_string N ON N.id = R.name_id AND N.guid = R.guid) GROUP BY name ORDER BY "
    "total_duration DESC;\n";

/* Metadata tags owned by the format, never returned as user metadata. */
static int reserved_tag(const char *t) {
  return strcmp(t, "schema_version") == 0 || strcmp(t, "uuid") == 0 || strcmp(t, "guid") == 0 ||
         strcmp(t, RP_WRITER_TAG) == 0;
}

/* SQLite result code -> hub status. */
static hp_status rc_status(int rc) {
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

/* ================================ b-tree pages ================================ */
/* The big tables (kernel_dispatch, event, the event_id index, pmc_event) get many rows, written in id order.
 * Instead of inserting them one at a time through SQLite, the writer encodes each row as an SQLite record and
 * builds the b-tree pages itself, bottom up, the way SQLite's own CREATE INDEX and the transfer optimisation
 * of INSERT … SELECT fill a tree; the pages go to an unnamed temporary file. At commit they are appended to
 * the database and each tree's root replaces the empty root page SQLite made for the table
 * (https://sqlite.org/fileformat2.html: records, b-tree pages, the database header). Rows out of id order
 * end this: the trees so far are spliced in and later rows go through SQLite. */

enum { BT_DISPATCH, BT_EVENT, BT_EVENT_INDEX, BT_PMC, BT_COUNT };
#define BT_MAXDEPTH 16
#define BT_MAXCELL 128 /* largest interior cell: 4-byte child + an index key (our keys are two integers) */
#define BT_WBUF (1u << 20) /* bytes of pages per write */
#define BT_NBUF 4          /* write buffers: one filled by the builder while the others are written */

static void put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int varint_len(uint64_t v) {
  int n = 1;
  if (v >> 56) return 9;
  while (v >>= 7)
    n++;
  return n;
}

/* SQLite's varint: big-endian 7-bit groups, high bit = more; the 9th byte holds 8 bits. */
static int put_varint(unsigned char *p, uint64_t v) {
  if (v <= 0x7f) {
    p[0] = (unsigned char)v;
    return 1;
  }
  if (v >> 56) {
    p[8] = (unsigned char)v;
    v >>= 8;
    for (int i = 7; i >= 0; i--) {
      p[i] = (unsigned char)((v & 0x7f) | 0x80);
      v >>= 7;
    }
    return 9;
  }
  int n = varint_len(v);
  for (int i = n - 1; i >= 0; i--) {
    p[i] = (unsigned char)((v & 0x7f) | (i == n - 1 ? 0 : 0x80));
    v >>= 7;
  }
  return n;
}

static int get_varint(const unsigned char *p, uint64_t *v) {
  uint64_t x = 0;
  for (int i = 0; i < 8; i++) {
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  *v = (x << 8) | p[8];
  return 9;
}

/* One value of a record. */
typedef struct rv {
  unsigned char kind; /* RV_NULL, RV_INT, RV_REAL (bits in i), RV_TEXT (s, n) */
  uint32_t n;
  int64_t i;
  const char *s;
} rv;
enum { RV_NULL, RV_INT, RV_REAL, RV_TEXT };

#define RV_I(v) ((rv){RV_INT, 0, (int64_t)(v), NULL})
#define RV_NIL ((rv){RV_NULL, 0, 0, NULL})

static const unsigned char int_size[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};

/* Serial type by the number of significant bits of an integer's magnitude (0..64). */
static const unsigned char type_by_bits[65] = {
    1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6};

/* One integer of a record: its serial type at *ph (advanced), its bytes at pb; returns the end of them.
 * pb must have 8 bytes of room (the store is a whole word). */
static inline unsigned char *put_int(unsigned char **ph, unsigned char *pb, int64_t i) {
  if ((uint64_t)i <= 1) {
    *(*ph)++ = (unsigned char)(8 + i);
    return pb;
  }
  uint64_t u = i < 0 ? ~(uint64_t)i : (uint64_t)i;
  unsigned t = type_by_bits[64 - __builtin_clzll(u | 1)];
  int size = int_size[t];
  *(*ph)++ = (unsigned char)t;
  uint64_t be = __builtin_bswap64((uint64_t)i << (64 - 8 * size));
  memcpy(pb, &be, 8);
  return pb + size;
}

/* Encode values as an SQLite record into out (big enough: rec_max); returns its length. The header is
 * the serial types (one byte each but for texts of 58 bytes or more), then the values. */
static size_t rec_encode(unsigned char *out, const rv *v, int n) {
  size_t hdr = (size_t)n;
  for (int k = 0; k < n; k++)
    if (v[k].kind == RV_TEXT && v[k].n > 57) hdr += (size_t)varint_len((uint64_t)v[k].n * 2 + 13) - 1;
  size_t h = hdr + 1;
  while ((size_t)varint_len(h) + hdr != h)
    h = hdr + (size_t)varint_len(h);
  unsigned char *ph = out + put_varint(out, h), *pb = out + h;
  for (int k = 0; k < n; k++) {
    switch (v[k].kind) {
    case RV_INT: pb = put_int(&ph, pb, v[k].i); break;
    case RV_REAL: { /* the IEEE bits, big-endian */
      uint64_t be = __builtin_bswap64((uint64_t)v[k].i);
      *ph++ = 7;
      memcpy(pb, &be, 8);
      pb += 8;
      break;
    }
    case RV_TEXT:
      ph += put_varint(ph, (uint64_t)v[k].n * 2 + 13);
      memcpy(pb, v[k].s, v[k].n);
      pb += v[k].n;
      break;
    default: *ph++ = 0; break;
    }
  }
  return (size_t)(pb - out);
}

/* Most bytes rec_encode writes for n values whose texts total `text` bytes. */
static size_t rec_max(int n, size_t text) { return 9 + (size_t)n * 9 + (size_t)n * 8 + text; }

/* ---- pages: cells packed from the end of the page down, pointers after the header in key order ---- */
typedef struct bpage {
  unsigned char *p; /* page size bytes */
  int n;            /* cells */
  int top;          /* start of the cell content area */
} bpage;

typedef struct btb {
  int index; /* an index b-tree, else a table b-tree */
  int depth; /* levels in use: lv[0] is the leaf being filled, lv[1..] interior pages being filled */
  bpage lv[BT_MAXDEPTH];
  uint64_t rows;
  int64_t last; /* table: rowid of the last row */
} btb;

/* The pages' temporary file and what the splice needs to know of it. The file is written with O_DIRECT
 * where it can be, by a writer thread, from BT_NBUF buffers in turn: the pages skip the page cache (filling
 * fresh page cache costs more than the disk here) and the disk works while the rows are encoded. */
typedef struct bulk {
  int fd;                      /* unnamed temporary file, -1 when none */
  uint32_t psz;                /* page size */
  uint32_t npages;             /* pages written (and buffered) so far */
  unsigned char *buf[BT_NBUF]; /* page-aligned */
  int cur;                     /* buffer being filled */
  size_t wn;                   /* bytes in it */
  uint32_t *interior; /* page numbers (0-based, in the file) of interior pages: their child pointers move */
  size_t ninterior, capinterior;
  int err; /* errno of a failed write, or -1 for another failure */
  /* the writer thread: buffer i is queued while len[i] != 0 */
  pthread_t thr;
  int sync_on, thr_on, quit, werr; /* sync_on: mu and cv made */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t len[BT_NBUF];
  off_t off[BT_NBUF];
  int head; /* next buffer to write */
  btb t[BT_COUNT];
} bulk;

static int bt_hdr(int level) { return level ? 12 : 8; }
static int bt_type(const btb *t, int level) { return t->index ? (level ? 2 : 10) : (level ? 5 : 13); }

static int bk_pwrite_all(int fd, const unsigned char *p, size_t n, off_t at) {
  while (n) {
    ssize_t w = pwrite(fd, p, n, at);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL) { /* a file system that opens with O_DIRECT but refuses the writes */
      int fl = fcntl(fd, F_GETFL);
      if (fl != -1 && (fl & O_DIRECT) && fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0) continue;
    }
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= (size_t)w;
    at += w;
  }
  return 0;
}

static void *bk_writer(void *arg) {
  bulk *b = arg;
  pthread_mutex_lock(&b->mu);
  for (;;) {
    while (!b->len[b->head] && !b->quit)
      pthread_cond_wait(&b->cv, &b->mu);
    if (!b->len[b->head]) break;
    int i = b->head;
    pthread_mutex_unlock(&b->mu);
    int e = b->werr ? 0 : bk_pwrite_all(b->fd, b->buf[i], b->len[i], b->off[i]);
    pthread_mutex_lock(&b->mu);
    if (e && !b->werr) b->werr = e;
    b->len[i] = 0;
    b->head = (i + 1) % BT_NBUF;
    pthread_cond_broadcast(&b->cv);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

/* Hand the buffer being filled to the writer (or write it here without one) and take the next one. */
static int bk_submit(bulk *b) {
  if (!b->wn || b->err) return b->err;
  off_t at = ((off_t)b->npages - (off_t)(b->wn / b->psz)) * b->psz;
  if (!b->thr_on) {
    b->err = bk_pwrite_all(b->fd, b->buf[0], b->wn, at);
    b->wn = 0;
    return b->err;
  }
  pthread_mutex_lock(&b->mu);
  b->len[b->cur] = b->wn;
  b->off[b->cur] = at;
  b->cur = (b->cur + 1) % BT_NBUF;
  pthread_cond_broadcast(&b->cv);
  while (b->len[b->cur])
    pthread_cond_wait(&b->cv, &b->mu);
  if (b->werr) b->err = b->werr;
  pthread_mutex_unlock(&b->mu);
  b->wn = 0;
  return b->err;
}

/* Write what is buffered and wait until every write is done; ends the writer thread. */
static int bk_flush(bulk *b) {
  if (!b->err) bk_submit(b);
  if (b->thr_on) {
    pthread_mutex_lock(&b->mu);
    b->quit = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thr, NULL);
    b->thr_on = 0;
    if (b->werr && !b->err) b->err = b->werr;
  }
  return b->err;
}

/* Finish the header of page pg at `level` of t (right child for interior pages) and zero its free gap. */
static void bt_seal(const bulk *b, const btb *t, bpage *pg, int level, uint32_t right) {
  unsigned char *p = pg->p;
  int hdr = bt_hdr(level);
  p[0] = (unsigned char)bt_type(t, level);
  p[1] = p[2] = 0;
  p[3] = (unsigned char)(pg->n >> 8);
  p[4] = (unsigned char)pg->n;
  p[5] = (unsigned char)(pg->top >> 8); /* 65536 is written as 0 */
  p[6] = (unsigned char)pg->top;
  p[7] = 0;
  if (level) put_be32(p + 8, right);
  memset(p + hdr + 2 * pg->n, 0, (size_t)(pg->top - hdr - 2 * pg->n));
}

/* Append a sealed page to the file; *no gets its number there (0-based). */
static int bk_emit(bulk *b, const unsigned char *page, int interior, uint32_t *no) {
  if (b->err) return -1;
  if (b->npages >= 0x7ffffff0u) {
    b->err = EFBIG;
    return -1;
  }
  if (interior) {
    if (b->ninterior == b->capinterior) {
      size_t cap = b->capinterior ? 2 * b->capinterior : 64;
      uint32_t *v = realloc(b->interior, cap * sizeof *v);
      if (!v) {
        b->err = ENOMEM;
        return -1;
      }
      b->interior = v;
      b->capinterior = cap;
    }
    b->interior[b->ninterior++] = b->npages;
  }
  if (b->wn + b->psz > BT_WBUF && bk_submit(b)) return -1;
  memcpy(b->buf[b->cur] + b->wn, page, b->psz);
  b->wn += b->psz;
  *no = b->npages++;
  return 0;
}

static void bt_reset(const bulk *b, bpage *pg) {
  pg->n = 0;
  pg->top = (int)b->psz;
}

/* Room for a cell of len bytes (and its pointer) at `level`; returns where to write it. */
static unsigned char *bt_add(bpage *pg, int level, int len) {
  pg->top -= len;
  int at = bt_hdr(level) + 2 * pg->n++;
  pg->p[at] = (unsigned char)(pg->top >> 8);
  pg->p[at + 1] = (unsigned char)pg->top;
  return pg->p + pg->top;
}

static int bt_fits(const bpage *pg, int level, int len) {
  return pg->top - bt_hdr(level) - 2 * pg->n >= len + 2;
}

/* Length of the cell at the lowest address (the one added last). */
static int bt_last_len(const btb *t, const bpage *pg, int level) {
  const unsigned char *c = pg->p + pg->top;
  uint64_t v;
  if (level == 0) { /* index leaf: payload size, payload */
    int k = get_varint(c, &v);
    return k + (int)v;
  }
  int k = get_varint(c + 4, &v);
  return 4 + k + (t->index ? (int)v : 0);
}

static int bt_level(bulk *b, btb *t, int level) {
  if (level >= BT_MAXDEPTH) return -1;
  if (level < t->depth) return 0;
  bpage *pg = &t->lv[level];
  if (!pg->p && !(pg->p = malloc(b->psz))) return -1;
  bt_reset(b, pg);
  t->depth = level + 1;
  return 0;
}

/* Add (child, key) to the interior page being filled at `level`: key = the rowid varint (table) or the
 * payload size and payload (index) that separates child from what follows. A full page keeps its last
 * cell's child as its right child and passes that cell's key up, so every page gets at least one cell. */
static int bt_push(bulk *b, btb *t, int level, uint32_t child, const unsigned char *key, int klen) {
  if (bt_level(b, t, level)) {
    if (!b->err) b->err = -1;
    return -1;
  }
  bpage *pg = &t->lv[level];
  if (!bt_fits(pg, level, 4 + klen)) {
    unsigned char last[BT_MAXCELL];
    int ll = bt_last_len(t, pg, level);
    if (pg->n < 2 || ll > (int)sizeof last) {
      b->err = -1;
      return -1;
    }
    memcpy(last, pg->p + pg->top, (size_t)ll);
    pg->top += ll;
    pg->n--;
    bt_seal(b, t, pg, level, get_be32(last));
    uint32_t no;
    if (bk_emit(b, pg->p, 1, &no)) return -1;
    bt_reset(b, pg);
    if (bt_push(b, t, level + 1, no, last + 4, ll - 4)) return -1;
  }
  unsigned char *c = bt_add(pg, level, 4 + klen);
  put_be32(c, child);
  memcpy(c + 4, key, (size_t)klen);
  return 0;
}

/* Append a row (rowid above every earlier one) to a table b-tree. */
static int bt_row(bulk *b, btb *t, int64_t rowid, const unsigned char *rec, size_t plen) {
  int len = varint_len(plen) + varint_len((uint64_t)rowid) + (int)plen;
  if (plen > b->psz - 35) { /* would need overflow pages: never for the tables built here */
    b->err = -1;
    return -1;
  }
  if (bt_level(b, t, 0)) {
    b->err = ENOMEM;
    return -1;
  }
  bpage *pg = &t->lv[0];
  if (!bt_fits(pg, 0, len)) {
    bt_seal(b, t, pg, 0, 0);
    uint32_t no;
    if (bk_emit(b, pg->p, 0, &no)) return -1;
    bt_reset(b, pg);
    unsigned char key[9];
    if (bt_push(b, t, 1, no, key, put_varint(key, (uint64_t)t->last))) return -1;
  }
  unsigned char *c = bt_add(pg, 0, len);
  c += put_varint(c, plen);
  c += put_varint(c, (uint64_t)rowid);
  memcpy(c, rec, plen);
  t->last = rowid;
  t->rows++;
  return 0;
}

/* Append a key (above every earlier one) to an index b-tree. A full leaf gives its last key to the
 * parent as the divider, so no leaf is ever left empty. */
static int bt_key(bulk *b, btb *t, const unsigned char *rec, size_t plen) {
  int len = varint_len(plen) + (int)plen;
  if (len > BT_MAXCELL - 4 || plen > ((b->psz - 12) * 64 / 255) - 23) {
    b->err = -1;
    return -1;
  }
  if (bt_level(b, t, 0)) {
    b->err = ENOMEM;
    return -1;
  }
  bpage *pg = &t->lv[0];
  if (!bt_fits(pg, 0, len)) {
    unsigned char last[BT_MAXCELL];
    int ll = bt_last_len(t, pg, 0);
    if (pg->n < 2 || ll > (int)sizeof last) {
      b->err = -1;
      return -1;
    }
    memcpy(last, pg->p + pg->top, (size_t)ll);
    pg->top += ll;
    pg->n--;
    bt_seal(b, t, pg, 0, 0);
    uint32_t no;
    if (bk_emit(b, pg->p, 0, &no)) return -1;
    bt_reset(b, pg);
    if (bt_push(b, t, 1, no, last, ll)) return -1;
  }
  unsigned char *c = bt_add(pg, 0, len);
  c += put_varint(c, plen);
  memcpy(c, rec, plen);
  t->rows++;
  return 0;
}

/* Write out every page being filled but the root, which stays in lv[depth - 1] for the splice. */
static int bt_finish(bulk *b, btb *t) {
  uint32_t child = 0;
  for (int level = 0; level < t->depth; level++) {
    bpage *pg = &t->lv[level];
    bt_seal(b, t, pg, level, child);
    if (level + 1 == t->depth) return 0;
    if (bk_emit(b, pg->p, level > 0, &child)) return -1;
  }
  return 0;
}

/* Child pointers of an interior page, numbers in the page file, to page numbers in the database: + base,
 * and page `from` (the lock-byte page's place, when the pages cover it) is at `to` instead. */
static void bt_rebase(unsigned char *p, uint32_t base, uint32_t from, uint32_t to) {
  if (p[0] != 2 && p[0] != 5) return;
  int n = p[3] << 8 | p[4];
  uint32_t c = get_be32(p + 8);
  put_be32(p + 8, (c == from ? to : c) + base);
  for (int i = 0; i < n; i++) {
    int off = p[12 + 2 * i] << 8 | p[13 + 2 * i];
    c = get_be32(p + off);
    put_be32(p + off, (c == from ? to : c) + base);
  }
}

static void bulk_free(bulk *b) {
  if (b->thr_on) { /* abandoned while writing: let the writer finish, ignore its result */
    b->wn = 0;
    bk_flush(b);
  }
  if (b->sync_on) {
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    b->sync_on = 0;
  }
  if (b->buf[0] && b->fd >= 0) close(b->fd); /* a bulk that never started has no file (fd may read 0) */
  b->fd = -1;
  for (int i = 0; i < BT_NBUF; i++) {
    free(b->buf[i]);
    b->buf[i] = NULL;
  }
  free(b->interior);
  b->interior = NULL;
  for (int i = 0; i < BT_COUNT; i++)
    for (int k = 0; k < BT_MAXDEPTH; k++) {
      free(b->t[i].lv[k].p);
      b->t[i].lv[k].p = NULL;
    }
}

/* Copy n bytes from fd `in` at offset `from` to `out` at offset `at` (in the kernel when it can). */
static int copy_range(int in, off_t from, int out, off_t at, uint64_t n) {
  off_t src = from, dst = at;
  while (n) {
    ssize_t k = copy_file_range(in, &src, out, &dst, n > (1u << 30) ? (1u << 30) : (size_t)n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n -= (uint64_t)k;
  }
  if (!n) return 0;
  unsigned char *buf = malloc(1u << 20);
  if (!buf) return ENOMEM;
  int e = 0;
  while (n && !e) {
    size_t want = n > (1u << 20) ? (1u << 20) : (size_t)n;
    ssize_t k = pread(in, buf, want, src);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      e = k < 0 ? errno : EIO;
      break;
    }
    for (ssize_t done = 0; done < k && !e;) {
      ssize_t w = pwrite(out, buf + done, (size_t)(k - done), dst);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        e = w < 0 ? errno : EIO;
      else {
        done += w;
        dst += w;
      }
    }
    src += k;
    n -= (uint64_t)k;
  }
  free(buf);
  return e;
}

/* ================================ state ================================ */

/* One prepared insert per hub table plus the helpers rows need. */
enum { WS_STRING = HP_TABLE_COUNT, WS_META_UPDATE, WS_COUNT };

typedef struct rp_state {
  sqlite3 *db;
  /* writing */
  char *tmp;     /* temporary file until commit (created here, O_EXCL) */
  dev_t tmp_dev; /* its identity, checked once SQLite has opened it */
  ino_t tmp_ino;
  char suffix[RP_SUFFIX_LEN + 1]; /* "_<uuid with underscores>" */
  char guid[37];                  /* dashed uuid */
  sqlite3_stmt *ins[WS_COUNT];
  sbuf js;    /* extdata being written */
  umap proc;  /* process id -> (node id, ppid) */
  umap agent; /* agent id -> (node id, type) */
  umap code;  /* code object id -> (process id, -) */
  interner strings;
  int64_t next_string;
  int64_t next_pmc;                    /* rocpd_pmc_event ids */
  int64_t str_empty, str_dispatch_cat; /* ids of "" and "KERNEL_DISPATCH" */
  uint64_t regions;                    /* region rows written */
  uint64_t dispatches;      /* dispatch rows written through SQLite (their events come at commit) */
  bulk bk;                  /* big tables built as pages (b-tree pages section) ... */
  int bulk_on;              /* ... while rows come in id order */
  unsigned char *rec;       /* a record being encoded */
  unsigned char evrec[128]; /* the record of every dispatch's rocpd_event row (its id apart) */
  size_t evlen;
  uint32_t last_pass, last_imputed; /* counter value extdata cache: these values ... */
  char last_ext[64];                /* ... give this text */
  unsigned need0;                   /* tables needing a placeholder row with id 0 (bit per hp_table) */
  int counters_no_agent;            /* a counter_info row has agent_id 0 */
  uint64_t last_proc;               /* cache of the last process looked up */
  int64_t last_nid;
  /* reading */
  int own;               /* written by hubprof: id 0 rows are placeholders, keys may be escaped */
  char *obj[RT_COUNT];   /* object read for each base table (view or table), NULL when absent */
  pthread_mutex_t rlock; /* the connection has no mutex of its own: one lock per row instead of one per
                          * SQLite call (cursors of one store may still be used from several threads) */
  int rlock_on;
  _Atomic uint64_t ops; /* SQLite VM work done by the current statement (hang guard) ... */
  uint64_t budget;      /* ... and the most it may do */
} rp_state;

/* A read cursor: the statement stepping and the buffer holding the current row's strings. */
typedef struct rp_cursor {
  sqlite3_stmt *st;
  sbuf arena;
} rp_cursor;

static void free_state(rp_state *r) {
  for (int i = 0; i < WS_COUNT; i++)
    sqlite3_finalize(r->ins[i]);
  if (r->db) sqlite3_close_v2(r->db);
  free(r->tmp);
  bulk_free(&r->bk);
  free(r->rec);
  sb_free(&r->js);
  free(r->proc.s);
  free(r->agent.s);
  free(r->code.s);
  interner_free(&r->strings);
  for (int i = 0; i < RT_COUNT; i++)
    free(r->obj[i]);
  if (r->rlock_on) pthread_mutex_destroy(&r->rlock);
  free(r);
}

/* ================================ writing ================================ */

static hp_status sql_fail(hp_store *s, int rc, const char *what) {
  rp_state *r = s->impl;
  const char *msg = r && r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_FULL) return hp_set_error(s, HP_ERR_IO, "%s: disk full (%s)", what, msg);
  return hp_set_error(s, rc_status(rc), "%s: %s", what, msg);
}

static hp_status exec_sql(hp_store *s, const char *sql, const char *what) {
  rp_state *r = s->impl;
  int rc = sqlite3_exec(r->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? HP_OK : sql_fail(s, rc, what);
}

static void make_uuid(char guid[37], char suffix[RP_SUFFIX_LEN + 1]) {
  unsigned char u[16];
  size_t got = 0;
  while (got < sizeof u) {
    ssize_t k = getrandom(u + got, sizeof u - got, 0);
    if (k <= 0) break;
    got += (size_t)k;
  }
  if (got < sizeof u) { /* no entropy source: time, pid and address still make collisions unlikely */
    uint64_t a = mix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32)), b = mix64(a ^ (uintptr_t)guid);
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

/* The insert statements, by hub table; '@name' is expanded to the physical table. */
static const char *const ins_sql[WS_COUNT] = {
    [HP_TABLE_NODE] =
        "INSERT OR REPLACE INTO @info_node(id, hash, machine_id, system_name, hostname, release, version, "
        "hardware_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    [HP_TABLE_PROCESS] =
        "INSERT OR REPLACE INTO @info_process(id, nid, ppid, pid, init, fini, start, \"end\", command, "
        "extdata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5, ?6, ?7, ?8)",
    [HP_TABLE_THREAD] =
        "INSERT OR REPLACE INTO @info_thread(id, nid, ppid, pid, tid, name, start, \"end\") VALUES (?, ?, ?, "
        "?, ?, ?, ?, ?)",
    [HP_TABLE_AGENT] =
        "INSERT OR REPLACE INTO @info_agent(id, nid, pid, type, absolute_index, logical_index, type_index, "
        "name, vendor_name, product_name, extdata) VALUES (?1, ?2, 0, ?3, ?4, ?4, ?4, ?5, ?6, ?7, "
        "?8)",
    [HP_TABLE_QUEUE] =
        "INSERT OR REPLACE INTO @info_queue(id, nid, pid, name, extdata) VALUES (?, ?, ?, ?, ?)",
    [HP_TABLE_CODE_OBJECT] =
        "INSERT OR REPLACE INTO @info_code_object(id, nid, pid, agent_id, uri, load_base, load_size, "
        "load_delta, storage_type) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)",
    [HP_TABLE_KERNEL_SYMBOL] =
        "INSERT OR REPLACE INTO @info_kernel_symbol(id, nid, pid, code_object_id, kernel_name, "
        "display_name, group_segment_size, private_segment_size, extdata) VALUES (?, ?, ?, "
        "?, ?, ?, ?, ?, ?)",
    [HP_TABLE_DISPATCH] =
        "INSERT INTO @kernel_dispatch(id, nid, pid, tid, agent_id, kernel_id, dispatch_id, "
        "queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, "
        "workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, "
        "grid_size_z, region_name_id, event_id, extdata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
        "?8, 0, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?1, ?20)",
    [HP_TABLE_COUNTER_INFO] =
        "INSERT OR REPLACE INTO @info_pmc(id, nid, pid, agent_id, target_arch, name, symbol, "
        "description, units, value_type, block, expression, is_constant, is_derived, "
        "spm_support) VALUES (?1, ?2, 0, ?3, ?4, ?5, ?5, ?6, ?7, 'ABS', ?8, ?9, 0, ?10, 0)",
    [HP_TABLE_COUNTER_VALUE] =
        "INSERT INTO @pmc_event(id, event_id, pmc_id, value, extdata) VALUES (?, ?, ?, "
        "?, ?)",
    [HP_TABLE_REGION] =
        "INSERT INTO @region(id, nid, pid, tid, start, \"end\", name_id, event_id) VALUES (?, ?, "
        "?, ?, ?, ?, ?, ?)",
    [HP_TABLE_METADATA] = "INSERT INTO @metadata(tag, value) VALUES (?, ?)",
    [WS_STRING] = "INSERT INTO @string(id, string) VALUES (?, ?)",
    [WS_META_UPDATE] = "UPDATE @metadata SET value = ?2 WHERE tag = ?1",
};

static hp_status step_reset(hp_store *s, sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE) return HP_OK;
  return sql_fail(s, rc, what);
}

/* Id of string `str` in rocpd_string, inserting it when new (0 on failure, message set). */
static int64_t string_id(hp_store *s, const char *str) {
  rp_state *r = s->impl;
  int added;
  int64_t id = intern(&r->strings, str, r->next_string, &added);
  if (id < 0) {
    hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    return 0;
  }
  if (!added) return id;
  r->next_string++;
  sqlite3_stmt *st = r->ins[WS_STRING];
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, str, -1, SQLITE_STATIC);
  return step_reset(s, st, "cannot write a string") == HP_OK ? id : 0;
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }

/* Node of process `pid` (0 when not written yet). */
static int64_t proc_node(rp_state *r, uint64_t pid) {
  if (pid == r->last_proc && pid) return r->last_nid;
  umap_slot *p = umap_get(&r->proc, pid);
  r->last_proc = pid;
  r->last_nid = p ? p->a : 0;
  return r->last_nid;
}

static const char *agent_type_text(int32_t t) {
  return t == HP_AGENT_CPU ? "CPU" : t == HP_AGENT_GPU ? "GPU" : NULL;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *t) {
  if (t)
    sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, i);
}

#define NEED0(t) (1u << (t))

/* A dispatch's extdata, as jw writes it ({"enqueue_ns":…,"passes":…,…}, keys of default values left out),
 * without the general writer: it is made for every dispatch. */
#define DISPATCH_EXT_MAX 192
static char *ext_num(char *p, const char *key, size_t klen, uint64_t v, int neg) {
  if (p[-1] != '{') *p++ = ',';
  *p++ = '"';
  memcpy(p, key, klen);
  p += klen;
  *p++ = '"';
  *p++ = ':';
  if (neg) {
    *p++ = '-';
    v = (uint64_t)0 - v;
  }
  char tmp[20];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n)
    *p++ = tmp[--n];
  return p;
}

static size_t dispatch_ext(char *buf, const hp_dispatch *d) {
  char *p = buf;
  *p++ = '{';
  /* rocpd's dispatch_id is the row id (unique in the file); the collector's id when it differs */
  if (d->dispatch_id != d->id) p = ext_num(p, "dispatch_id", 11, d->dispatch_id, 0);
  if (d->enqueue_ns) p = ext_num(p, "enqueue_ns", 10, (uint64_t)d->enqueue_ns, d->enqueue_ns < 0);
  if (d->passes) p = ext_num(p, "passes", 6, d->passes, 0);
  if (d->bytes_accessible) p = ext_num(p, "bytes_accessible", 16, d->bytes_accessible, 0);
  if (d->bytes_restored) p = ext_num(p, "bytes_restored", 14, d->bytes_restored, 0);
  *p++ = '}';
  *p = 0;
  return (size_t)(p - buf);
}

static hp_status bulk_dispatch(hp_store *s, const hp_dispatch *d, const char *ext, size_t extlen);
static hp_status bulk_counter_value(hp_store *s, const hp_counter_value *cv, const char *ext);
static hp_status bulk_flush(hp_store *s);

static hp_status rp_write(hp_store *s, hp_table t, const void *row) {
  rp_state *r = s->impl;
  sqlite3_stmt *st = r->ins[t];
  jw w;
  switch (t) {
  case HP_TABLE_NODE: {
    const hp_node *n = row;
    uint64_t h = fnv1a(n->hostname, strlen(n->hostname), 0xcbf29ce484222325ull);
    h = fnv1a(n->machine_id, strlen(n->machine_id) + 1, h);
    bind_u64(st, 1, n->id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)(h & INT64_MAX));
    sqlite3_bind_text(st, 3, n->machine_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, n->system_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, n->hostname, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, n->release, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, n->version, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, n->machine, -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a node");
  }
  case HP_TABLE_PROCESS: {
    const hp_process *p = row;
    if (umap_put(&r->proc, p->id, (int64_t)p->node_id, p->ppid))
      return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    r->last_proc = 0;
    if (!p->node_id) r->need0 |= NEED0(HP_TABLE_NODE);
    jw_begin(&w, &r->js);
    if (p->rank != -1) jw_i64(&w, "rank", p->rank);
    if (p->lost_records) jw_u64(&w, "lost_records", p->lost_records);
    bind_u64(st, 1, p->id);
    bind_u64(st, 2, p->node_id);
    sqlite3_bind_int64(st, 3, p->ppid);
    sqlite3_bind_int64(st, 4, p->pid);
    sqlite3_bind_int64(st, 5, p->start_ns);
    sqlite3_bind_int64(st, 6, p->end_ns);
    sqlite3_bind_text(st, 7, p->command, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, jw_end(&w), -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a process");
  }
  case HP_TABLE_THREAD: {
    const hp_thread *th = row;
    umap_slot *p = umap_get(&r->proc, th->process_id);
    if (!th->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!p || !p->a) r->need0 |= NEED0(HP_TABLE_NODE);
    bind_u64(st, 1, th->id);
    sqlite3_bind_int64(st, 2, p ? p->a : 0);
    sqlite3_bind_int64(st, 3, p ? p->b : 0);
    bind_u64(st, 4, th->process_id);
    sqlite3_bind_int64(st, 5, th->tid);
    sqlite3_bind_text(st, 6, th->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, th->start_ns);
    sqlite3_bind_int64(st, 8, th->end_ns);
    return step_reset(s, st, "cannot write a thread");
  }
  case HP_TABLE_AGENT: {
    const hp_agent *a = row;
    if (umap_put(&r->agent, a->id, (int64_t)a->node_id, a->type))
      return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    jw_begin(&w, &r->js);
    if (a->type != HP_AGENT_UNKNOWN && !agent_type_text(a->type)) jw_i64(&w, "type", a->type);
    if (*a->runtime) jw_str(&w, "runtime", a->runtime);
    if (a->compute_units) jw_i64(&w, "compute_units", a->compute_units);
    if (a->max_clock_mhz) jw_i64(&w, "max_clock_mhz", a->max_clock_mhz);
    if (a->global_mem_bytes) jw_i64(&w, "global_mem_bytes", a->global_mem_bytes);
    if (a->local_mem_bytes) jw_i64(&w, "local_mem_bytes", a->local_mem_bytes);
    if (a->wave_size) jw_i64(&w, "wave_size", a->wave_size);
    bind_u64(st, 1, a->id);
    bind_u64(st, 2, a->node_id);
    bind_text_or_null(st, 3, agent_type_text(a->type));
    sqlite3_bind_int64(st, 4, a->device_index);
    sqlite3_bind_text(st, 5, a->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, a->vendor, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, a->product_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, jw_end(&w), -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write an agent");
  }
  case HP_TABLE_QUEUE: {
    const hp_queue *q = row;
    if (!q->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    jw_begin(&w, &r->js);
    if (q->agent_id) jw_u64(&w, "agent_id", q->agent_id);
    bind_u64(st, 1, q->id);
    sqlite3_bind_int64(st, 2, proc_node(r, q->process_id));
    bind_u64(st, 3, q->process_id);
    sqlite3_bind_text(st, 4, q->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, jw_end(&w), -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a queue");
  }
  case HP_TABLE_CODE_OBJECT: {
    const hp_code_object *c = row;
    if (umap_put(&r->code, c->id, (int64_t)c->process_id, 0))
      return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    const char *kind = strncmp(c->uri, "file://", 7) == 0     ? "FILE"
                       : strncmp(c->uri, "memory://", 9) == 0 ? "MEMORY"
                                                              : NULL;
    bind_u64(st, 1, c->id);
    sqlite3_bind_int64(st, 2, proc_node(r, c->process_id));
    bind_u64(st, 3, c->process_id);
    bind_u64(st, 4, c->agent_id);
    sqlite3_bind_text(st, 5, c->uri, -1, SQLITE_STATIC);
    bind_u64(st, 6, c->load_base);
    bind_u64(st, 7, c->load_size);
    bind_text_or_null(st, 8, kind);
    return step_reset(s, st, "cannot write a code object");
  }
  case HP_TABLE_KERNEL_SYMBOL: {
    const hp_kernel_symbol *k = row;
    umap_slot *c = umap_get(&r->code, k->code_object_id);
    uint64_t pid = c ? (uint64_t)c->a : 0;
    /* ROCm's views show display_name: an empty one is stored as the name, and remembered in extdata */
    jw_begin(&w, &r->js);
    if (!*k->display_name) jw_str(&w, "display_name", "");
    bind_u64(st, 1, k->id);
    sqlite3_bind_int64(st, 2, proc_node(r, pid));
    bind_u64(st, 3, pid);
    bind_u64(st, 4, k->code_object_id);
    sqlite3_bind_text(st, 5, k->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, *k->display_name ? k->display_name : k->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, k->group_size);
    sqlite3_bind_int64(st, 8, k->private_size);
    sqlite3_bind_text(st, 9, jw_end(&w), -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a kernel symbol");
  }
  case HP_TABLE_DISPATCH: {
    const hp_dispatch *d = row;
    if (!d->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!d->thread_id) r->need0 |= NEED0(HP_TABLE_THREAD);
    if (!d->agent_id) r->need0 |= NEED0(HP_TABLE_AGENT);
    if (!d->queue_id) r->need0 |= NEED0(HP_TABLE_QUEUE);
    if (!d->kernel_id) r->need0 |= NEED0(HP_TABLE_KERNEL_SYMBOL);
    char ext[DISPATCH_EXT_MAX];
    size_t extlen = dispatch_ext(ext, d);
    if (r->bulk_on) {
      const btb *kd = &r->bk.t[BT_DISPATCH];
      if (!kd->rows || (int64_t)d->id > kd->last) return bulk_dispatch(s, d, ext, extlen);
      /* out of id order: the pages built so far go in, this and later rows through SQLite */
      hp_status e = bulk_flush(s);
      if (e != HP_OK) return e;
      st = r->ins[t];
    }
    r->dispatches++; /* its rocpd_event row is written at commit, in one statement */
    bind_u64(st, 1, d->id);
    sqlite3_bind_int64(st, 2, proc_node(r, d->process_id));
    bind_u64(st, 3, d->process_id);
    bind_u64(st, 4, d->thread_id);
    bind_u64(st, 5, d->agent_id);
    bind_u64(st, 6, d->kernel_id);
    bind_u64(st, 7, d->id); /* rocpd dispatch_id: unique in the file (extdata keeps the collector's) */
    bind_u64(st, 8, d->queue_id);
    sqlite3_bind_int64(st, 9, d->start_ns);
    sqlite3_bind_int64(st, 10, d->end_ns);
    sqlite3_bind_int64(st, 11, d->private_size);
    sqlite3_bind_int64(st, 12, d->group_size);
    for (int i = 0; i < 3; i++) {
      sqlite3_bind_int64(st, 13 + i, d->workgroup[i]);
      sqlite3_bind_int64(st, 16 + i, d->grid[i]);
    }
    sqlite3_bind_int64(st, 19, r->str_empty);
    sqlite3_bind_text(st, 20, ext, -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a dispatch");
  }
  case HP_TABLE_COUNTER_INFO: {
    const hp_counter_info *ci = row;
    umap_slot *a = umap_get(&r->agent, ci->agent_id);
    /* pid 0 and agent_id 0 ("no particular agent") get a real process and agent at commit */
    r->counters_no_agent |= ci->agent_id == 0;
    bind_u64(st, 1, ci->id);
    sqlite3_bind_int64(st, 2, a ? a->a : 0);
    bind_u64(st, 3, ci->agent_id);
    bind_text_or_null(st, 4, a ? agent_type_text((int32_t)a->b) : NULL);
    sqlite3_bind_text(st, 5, ci->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, ci->description, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, ci->unit, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, ci->block, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, ci->expression, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 10, *ci->expression != 0);
    return step_reset(s, st, "cannot write a counter");
  }
  case HP_TABLE_COUNTER_VALUE: {
    const hp_counter_value *v = row;
    /* SQLite stores -0.0 as 0 and NaN as NULL: those keep their exact bits in extdata */
    int special = isnan(v->value) || (v->value == 0 && signbit(v->value));
    const char *ext = "{}";
    if (special) {
      uint64_t bits;
      memcpy(&bits, &v->value, sizeof bits);
      jw_begin(&w, &r->js);
      if (v->pass) jw_u64(&w, "pass", v->pass);
      if (v->imputed) jw_u64(&w, "imputed", v->imputed);
      jw_u64(&w, "value_bits", bits);
      ext = jw_end(&w);
    } else if (v->pass || v->imputed) {
      if (v->pass != r->last_pass || v->imputed != r->last_imputed || !r->last_ext[0]) {
        jw_begin(&w, &r->js);
        if (v->pass) jw_u64(&w, "pass", v->pass);
        if (v->imputed) jw_u64(&w, "imputed", v->imputed);
        snprintf(r->last_ext, sizeof r->last_ext, "%s", jw_end(&w));
        r->last_pass = v->pass;
        r->last_imputed = v->imputed;
      }
      ext = r->last_ext;
    }
    if (r->bulk_on) return bulk_counter_value(s, v, ext);
    sqlite3_bind_int64(st, 1, ++r->next_pmc);
    bind_u64(st, 2, v->dispatch_id);
    bind_u64(st, 3, v->counter_id);
    if (isnan(v->value))
      sqlite3_bind_null(st, 4);
    else
      sqlite3_bind_double(st, 4, v->value == 0 ? 0.0 : v->value);
    sqlite3_bind_text(st, 5, ext, -1, SQLITE_STATIC);
    return step_reset(s, st, "cannot write a counter value");
  }
  case HP_TABLE_REGION: {
    const hp_region *g = row;
    if (!g->process_id) r->need0 |= NEED0(HP_TABLE_PROCESS);
    if (!g->thread_id) r->need0 |= NEED0(HP_TABLE_THREAD);
    int64_t name = string_id(s, g->name), cat = name ? string_id(s, g->category) : 0;
    if (!name || !cat) return s->first_error;
    bind_u64(st, 1, g->id);
    sqlite3_bind_int64(st, 2, proc_node(r, g->process_id));
    bind_u64(st, 3, g->process_id);
    bind_u64(st, 4, g->thread_id);
    sqlite3_bind_int64(st, 5, g->start_ns);
    sqlite3_bind_int64(st, 6, g->end_ns);
    sqlite3_bind_int64(st, 7, name);
    sqlite3_bind_int64(st, 8, cat); /* the category's string id until commit gives the region its event */
    hp_status e = step_reset(s, st, "cannot write a region");
    if (e == HP_OK) r->regions++;
    return e;
  }
  case HP_TABLE_METADATA: {
    const hp_metadata *m = row;
    sbuf key = {0};
    const char *tag = m->key;
    if (reserved_tag(m->key) || strncmp(m->key, RP_KEY_ESCAPE, strlen(RP_KEY_ESCAPE)) == 0) {
      sb_puts(&key, RP_KEY_ESCAPE);
      sb_puts(&key, m->key);
      if (key.oom) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
      tag = key.p;
    }
    /* a key written again replaces its value, in place */
    sqlite3_stmt *up = r->ins[WS_META_UPDATE];
    sqlite3_bind_text(up, 1, tag, -1, SQLITE_STATIC);
    sqlite3_bind_text(up, 2, m->value, -1, SQLITE_STATIC);
    hp_status e = step_reset(s, up, "cannot write metadata");
    if (e == HP_OK && sqlite3_changes(r->db) == 0) {
      sqlite3_bind_text(st, 1, tag, -1, SQLITE_STATIC);
      sqlite3_bind_text(st, 2, m->value, -1, SQLITE_STATIC);
      e = step_reset(s, st, "cannot write metadata");
    }
    sb_free(&key);
    return e;
  }
  case HP_TABLE_COUNT: break;
  }
  return hp_set_error(s, HP_ERR_INVALID, "unknown table %d", (int)t);
}

/* Connection settings of the writer: one transaction, no journal, no syncs (commit syncs the file once). */
#define RP_WRITE_PRAGMAS                                                                                     \
  "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA "                  \
  "temp_store=MEMORY; "                                                                                      \
  "PRAGMA cache_size=-32768;"

static hp_status prepare_inserts(hp_store *s) {
  rp_state *r = s->impl;
  sbuf sql = {0};
  hp_status st = HP_OK;
  for (int i = 0; st == HP_OK && i < WS_COUNT; i++) {
    sb_reset(&sql);
    sb_expand(&sql, ins_sql[i], r->suffix);
    int rc = sql.oom ? SQLITE_NOMEM
                     : sqlite3_prepare_v3(r->db, sql.p, -1, SQLITE_PREPARE_PERSISTENT, &r->ins[i], NULL);
    if (rc != SQLITE_OK) st = sql_fail(s, rc, "cannot prepare an insert");
  }
  sb_free(&sql);
  return st;
}

static void finalize_inserts(rp_state *r) {
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
}

static hp_status bulk_fail(hp_store *s) {
  rp_state *r = s->impl;
  int e = r->bk.err;
  if (e == ENOMEM) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  if (e > 0) return hp_set_error(s, HP_ERR_IO, "cannot write the pages of %s: %s", r->tmp, strerror(e));
  return hp_set_error(s, HP_ERR_CONSTRAINT, "cannot build the pages of %s: a row does not fit the layout",
                      r->tmp);
}

/* Start building the big tables as pages: needs the page size, a temporary file beside the output and the
 * string ids of rocpd_event rows. Without them rows simply go through SQLite. */
static void bulk_start(hp_store *s) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  sqlite3_stmt *st = NULL;
  const char *env = getenv("HUBPROF_ROCPD_PAGES"); /* "0": every row through SQLite (docs/formats/rocpd.md) */
  if (env && strcmp(env, "0") == 0) return;
  if (sqlite3_prepare_v2(r->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    b->psz = (uint32_t)sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (b->psz < 4096 || b->psz > 65536 || (b->psz & (b->psz - 1))) return;
  char *dir = strdup(r->tmp);
  int ok = dir != NULL && (r->rec = malloc(4096)) != NULL;
  for (int i = 0; ok && i < BT_NBUF; i++)
    ok = posix_memalign((void **)&b->buf[i], 4096, BT_WBUF) == 0;
  int fd = -1;
  if (ok) {
    char *slash = strrchr(dir, '/');
    if (slash)
      slash[slash == dir] = 0;
    else
      strcpy(dir, ".");
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_DIRECT, 0600);
    if (fd < 0) fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* no O_TMPFILE here: a named file, unlinked at once */
      char *tmpl = malloc(strlen(r->tmp) + 8);
      if (tmpl) {
        sprintf(tmpl, "%s.XXXXXX", r->tmp);
        fd = mkostemp(tmpl, O_CLOEXEC);
        if (fd >= 0) unlink(tmpl);
        free(tmpl);
      }
    }
  }
  free(dir);
  if (fd < 0) {
    bulk_free(b);
    return;
  }
  b->fd = fd;
  if (pthread_mutex_init(&b->mu, NULL) == 0) {
    if (pthread_cond_init(&b->cv, NULL) == 0) {
      b->sync_on = 1;
      b->thr_on = pthread_create(&b->thr, NULL, bk_writer, b) == 0;
    } else {
      pthread_mutex_destroy(&b->mu);
    }
  }
  b->t[BT_EVENT_INDEX].index = 1;
  /* every dispatch's event: guid, category KERNEL_DISPATCH, no stacks, '{}' JSON columns */
  rv ev[9] = {RV_NIL,
              {RV_TEXT, 36, 0, r->guid},
              RV_I(r->str_dispatch_cat),
              RV_NIL,
              RV_NIL,
              RV_NIL,
              {RV_TEXT, 2, 0, "{}"},
              {RV_TEXT, 2, 0, "{}"},
              {RV_TEXT, 2, 0, "{}"}};
  r->evlen = rec_encode(r->evrec, ev, 9);
  r->bulk_on = 1;
}

/* A dispatch as a kernel_dispatch record (the columns of the table, in order: id as NULL since it is the
 * rowid, guid, 22 integers, extdata), its rocpd_event row and its event_id index key. */
static hp_status bulk_dispatch(hp_store *s, const hp_dispatch *d, const char *ext, size_t extlen) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  int64_t id = (int64_t)d->id;
  const int64_t v[22] = {proc_node(r, d->process_id),
                         (int64_t)d->process_id,
                         (int64_t)d->thread_id,
                         (int64_t)d->agent_id,
                         (int64_t)d->kernel_id,
                         id, /* dispatch_id: the row id, unique in the file */
                         (int64_t)d->queue_id,
                         0, /* stream_id */
                         d->start_ns,
                         d->end_ns,
                         d->private_size,
                         d->group_size,
                         d->workgroup[0],
                         d->workgroup[1],
                         d->workgroup[2],
                         d->grid[0],
                         d->grid[1],
                         d->grid[2],
                         0, /* graph_exec_id */
                         0, /* graph_node_id */
                         r->str_empty,
                         id}; /* event_id */
  uint64_t et = (uint64_t)extlen * 2 + 13;
  size_t hl = 3 + 22 + (size_t)varint_len(et); /* < 128: one byte */
  unsigned char *rec = r->rec, *ph = rec, *pb = rec + hl;
  *ph++ = (unsigned char)hl;
  *ph++ = 0;           /* id: NULL, the rowid */
  *ph++ = 36 * 2 + 13; /* guid: text of 36 bytes */
  memcpy(pb, r->guid, 36);
  pb += 36;
  for (int k = 0; k < 22; k++)
    pb = put_int(&ph, pb, v[k]);
  put_varint(ph, et);
  memcpy(pb, ext, extlen);
  pb += extlen;
  unsigned char key[24], *kh = key + 1, *kb = key + 3;
  key[0] = 3;
  kb = put_int(&kh, kb, id);
  kb = put_int(&kh, kb, id);
  if (bt_row(b, &b->t[BT_DISPATCH], id, rec, (size_t)(pb - rec)) ||
      bt_row(b, &b->t[BT_EVENT], id, r->evrec, r->evlen) ||
      bt_key(b, &b->t[BT_EVENT_INDEX], key, (size_t)(kb - key)))
    return bulk_fail(s);
  return HP_OK;
}

static hp_status bulk_counter_value(hp_store *s, const hp_counter_value *cv, const char *ext) {
  rp_state *r = s->impl;
  size_t extlen = strlen(ext);
  if (rec_max(10, 36 + extlen) > 4096)
    return hp_set_error(s, HP_ERR_INVALID, "counter value extdata too long");
  rv val = RV_NIL;
  if (!isnan(cv->value)) {
    double x = cv->value == 0 ? 0.0 : cv->value;
    val.kind = RV_REAL;
    memcpy(&val.i, &x, sizeof x);
  }
  rv v[10] = {RV_NIL,
              {RV_TEXT, 36, 0, r->guid},
              RV_I(cv->dispatch_id),
              RV_NIL,
              RV_I(cv->counter_id),
              val,
              RV_NIL,
              RV_NIL,
              RV_NIL,
              {RV_TEXT, (uint32_t)extlen, 0, ext}};
  size_t n = rec_encode(r->rec, v, 10);
  if (bt_row(&r->bk, &r->bk.t[BT_PMC], ++r->next_pmc, r->rec, n)) return bulk_fail(s);
  return HP_OK;
}

/* Put the finished trees into the closed database file: their pages after its last page, each root in place
 * of the empty root page SQLite made, and the header's page count and change counter updated. Where the
 * file system can insert a range at the start of a file (ext4, XFS), the database's pages go in front of the
 * page file, which then replaces the database: the big part is never copied. Otherwise the pages are
 * copied after the database's. */
static hp_status bulk_splice(hp_store *s, const uint32_t root[BT_COUNT]) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  int fd = open(r->tmp, O_RDWR | O_CLOEXEC);
  unsigned char h[100], *pg = malloc(b->psz);
  struct stat sb;
  if (fd < 0 || !pg || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || fstat(fd, &sb) != 0) {
    int e = pg ? errno : ENOMEM;
    if (fd >= 0) close(fd);
    free(pg);
    return hp_set_error(s, HP_ERR_IO, "cannot reopen %s: %s", r->tmp, strerror(e));
  }
  uint32_t psz = (uint32_t)h[16] << 8 | h[17], n = get_be32(h + 28);
  if (psz == 1) psz = 65536;
  hp_status st = HP_OK;
  /* what the pages were built for: this page size, no reserved bytes, file format 4 (serial types 8 and 9),
   * UTF-8, no auto-vacuum, and a page count in the header that is valid */
  if (psz != b->psz || h[20] != 0 || get_be32(h + 44) != 4 || get_be32(h + 56) != 1 ||
      get_be32(h + 52) != 0 || get_be32(h + 24) != get_be32(h + 92) ||
      (uint64_t)sb.st_size != (uint64_t)n * psz || (uint64_t)n + b->npages >= 0x7ffffff0u)
    st = hp_set_error(s, HP_ERR_IO, "cannot add pages to %s: unexpected database header", r->tmp);
  int e = 0, db = fd, moved = 0;
  int fl = fcntl(b->fd, F_GETFL);
  if (fl != -1 && (fl & O_DIRECT)) fcntl(b->fd, F_SETFL, fl & ~O_DIRECT); /* small, unaligned writes follow */
  if (st == HP_OK && b->npages) {
    if (fallocate(b->fd, FALLOC_FL_INSERT_RANGE, 0, (off_t)n * psz) == 0) {
      e = copy_range(fd, 0, b->fd, 0, (uint64_t)n * psz);
      if (!e && fchmod(b->fd, sb.st_mode & 07777) != 0) e = errno;
      db = b->fd;
      moved = 1;
    } else {
      e = copy_range(b->fd, 0, fd, (off_t)n * psz, (uint64_t)b->npages * psz);
    }
  }
  /* SQLite never uses the page holding the lock bytes at 1 GiB: when the pages cover it, the page there
   * moves to the end and the place is zeroed */
  uint32_t lock = (uint32_t)(0x40000000u / psz) + 1, from = UINT32_MAX, to = 0, total = b->npages;
  if (st == HP_OK && !e && lock > n && lock - n - 1 < b->npages) {
    from = lock - n - 1;
    to = total++;
    if (pread(db, pg, psz, ((off_t)n + from) * psz) != (ssize_t)psz ||
        pwrite(db, pg, psz, ((off_t)n + to) * psz) != (ssize_t)psz)
      e = errno ? errno : EIO;
    memset(pg, 0, psz);
    if (!e && pwrite(db, pg, psz, ((off_t)n + from) * psz) != (ssize_t)psz) e = errno ? errno : EIO;
  }
  for (size_t i = 0; st == HP_OK && !e && i < b->ninterior; i++) {
    off_t at = ((off_t)n + (b->interior[i] == from ? to : b->interior[i])) * psz;
    if (pread(db, pg, psz, at) != (ssize_t)psz) {
      e = errno ? errno : EIO;
      break;
    }
    bt_rebase(pg, n + 1, from, to);
    if (pwrite(db, pg, psz, at) != (ssize_t)psz) e = errno ? errno : EIO;
  }
  for (int t = 0; st == HP_OK && !e && t < BT_COUNT; t++) {
    btb *tr = &b->t[t];
    if (!tr->rows) continue;
    off_t at = ((off_t)root[t] - 1) * psz;
    int type = bt_type(tr, 0);
    if (root[t] < 2 || root[t] > n || pread(db, pg, psz, at) != (ssize_t)psz || pg[0] != type || pg[3] ||
        pg[4]) {
      st =
          hp_set_error(s, HP_ERR_IO, "cannot add pages to %s: the root page of a table is not empty", r->tmp);
      break;
    }
    unsigned char *rp = tr->lv[tr->depth - 1].p;
    bt_rebase(rp, n + 1, from, to);
    if (pwrite(db, rp, psz, at) != (ssize_t)psz) e = errno ? errno : EIO;
  }
  if (st == HP_OK && !e) {
    uint32_t change = get_be32(h + 24) + 1;
    put_be32(h + 24, change);
    put_be32(h + 92, change);
    put_be32(h + 28, n + total);
    if (pwrite(db, h, sizeof h, 0) != (ssize_t)sizeof h) e = errno ? errno : EIO;
  }
  if (st == HP_OK && !e && moved) {
    /* the page file is the database now: give it the temporary name (a link to an unnamed file through
     * /proc), or else copy it over the old one */
    char proc[64], *tmp2 = malloc(strlen(r->tmp) + 8);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", b->fd);
    if (!tmp2) {
      e = ENOMEM;
    } else {
      sprintf(tmp2, "%s.pages", r->tmp);
      unlink(tmp2);
      if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp2, AT_SYMLINK_FOLLOW) == 0) {
        if (rename(tmp2, r->tmp) != 0) {
          e = errno;
          unlink(tmp2);
        }
      } else {
        e = copy_range(b->fd, 0, fd, 0, ((uint64_t)n + total) * psz);
      }
      free(tmp2);
    }
  }
  if (close(fd) != 0 && !e) e = errno;
  free(pg);
  if (st == HP_OK && e) st = hp_set_error(s, HP_ERR_IO, "cannot add pages to %s: %s", r->tmp, strerror(e));
  return st;
}

/* End building pages: finish the trees, close SQLite, splice them in, reopen. Later rows go through SQLite.
 */
static hp_status bulk_flush(hp_store *s) {
  rp_state *r = s->impl;
  bulk *b = &r->bk;
  if (!r->bulk_on) return HP_OK;
  r->bulk_on = 0;
  int any = 0;
  for (int t = 0; t < BT_COUNT; t++)
    if (b->t[t].rows) {
      any = 1;
      if (bt_finish(b, &b->t[t])) return bulk_fail(s);
    }
  if (!any) {
    bulk_free(b);
    return HP_OK;
  }
  if (bk_flush(b)) return bulk_fail(s);
  /* the root pages SQLite gave the (still empty) tables and the index */
  static const char *const names[BT_COUNT] = {"rocpd_kernel_dispatch%s", "rocpd_event%s",
                                              "rocpd_kernel_dispatch%s_event_id", "rocpd_pmc_event%s"};
  uint32_t root[BT_COUNT] = {0};
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(r->db, "SELECT rootpage FROM sqlite_master WHERE name = ?1", -1, &q, NULL);
  for (int t = 0; rc == SQLITE_OK && t < BT_COUNT; t++) {
    char name[128];
    snprintf(name, sizeof name, names[t], r->suffix);
    sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q) == SQLITE_ROW) root[t] = (uint32_t)sqlite3_column_int64(q, 0);
    rc = sqlite3_reset(q);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_OK) return sql_fail(s, rc, "cannot find the root pages");
  hp_status st = exec_sql(s, "COMMIT", "cannot write the database");
  if (st != HP_OK) return st;
  finalize_inserts(r);
  rc = sqlite3_close(r->db);
  r->db = NULL;
  if (rc != SQLITE_OK) return hp_set_error(s, HP_ERR_IO, "cannot close %s: %s", r->tmp, sqlite3_errstr(rc));
  st = bulk_splice(s, root);
  bulk_free(b);
  if (st != HP_OK) return st;
  rc = sqlite3_open_v2(r->tmp, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    return hp_set_error(s, HP_ERR_IO, "cannot reopen %s: %s", r->tmp,
                        r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
  st = exec_sql(s, RP_WRITE_PRAGMAS " BEGIN;", "cannot configure the database");
  return st == HP_OK ? prepare_inserts(s) : st;
}

/* Create the temporary database file beside the output: a name no one can guess (hp_temp_path plus random
 * bits), made with O_CREAT | O_EXCL | O_NOFOLLOW, so a file or link planted there is never followed or
 * replaced (issue #16: a predictable name opened without O_EXCL let a symlink race redirect root's merge).
 * r->tmp is set only once the file is ours: abort removes only what was created here. */
static hp_status create_temp(hp_store *s) {
  rp_state *r = s->impl;
  for (int attempt = 0; attempt < 16; attempt++) {
    char *base = hp_temp_path(s->path);
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd)
      rnd = mix64((uint64_t)time(NULL) ^ (uintptr_t)base ^ ((uint64_t)attempt << 56));
    char *name = base ? malloc(strlen(base) + 24) : NULL;
    if (!name) {
      free(base);
      return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
    }
    sprintf(name, "%s.%016" PRIx64, base, rnd);
    free(base);
    int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      struct stat sb;
      int ok = fstat(fd, &sb) == 0;
      close(fd);
      if (!ok) {
        int e = errno;
        unlink(name);
        free(name);
        return hp_set_error(s, HP_ERR_IO, "cannot create a temporary file beside the output: %s",
                            strerror(e));
      }
      r->tmp = name;
      r->tmp_dev = sb.st_dev;
      r->tmp_ino = sb.st_ino;
      return HP_OK;
    }
    int e = errno;
    if (e != EEXIST) {
      hp_status st = hp_set_error(s, HP_ERR_IO, "cannot create %s: %s", name, strerror(e));
      free(name);
      return st;
    }
    free(name);
  }
  return hp_set_error(s, HP_ERR_IO, "cannot create a temporary file beside the output: every name taken");
}

static hp_status rp_create(hp_store *s) {
  rp_state *r = calloc(1, sizeof *r);
  if (!r) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  s->impl = r;
  s->schema_version = strdup(RP_SCHEMA_VERSION);
  if (!s->schema_version) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  hp_status st = create_temp(s);
  if (st != HP_OK) return st;
  int rc = sqlite3_open_v2(r->tmp, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                           NULL);
  struct stat a;
  if (rc == SQLITE_OK && (stat(r->tmp, &a) != 0 || a.st_dev != r->tmp_dev || a.st_ino != r->tmp_ino))
    return hp_set_error(s, HP_ERR_IO, "cannot create %s: the file was replaced while being opened", r->tmp);
  if (rc != SQLITE_OK)
    return hp_set_error(s, HP_ERR_IO, "cannot create %s: %s", r->tmp,
                        r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
  make_uuid(r->guid, r->suffix);
  st = exec_sql(s, "PRAGMA auto_vacuum=NONE; PRAGMA page_size=8192; " RP_WRITE_PRAGMAS,
                "cannot configure the database");
  if (st != HP_OK) return st;
  sbuf sql = {0};
  sb_puts(&sql, "BEGIN;\n");
  for (int i = 0; i < RT_COUNT; i++) {
    sb_puts(&sql, "CREATE TABLE \"rocpd_");
    sb_puts(&sql, rt_name[i]);
    sb_puts(&sql, r->suffix);
    sb_puts(&sql, "\" (id INTEGER PRIMARY KEY, ");
    if (i != RT_METADATA) {
      sb_puts(&sql, "guid TEXT NOT NULL DEFAULT '");
      sb_puts(&sql, r->guid);
      sb_puts(&sql, "', ");
    }
    sb_expand(&sql, rt_cols[i], r->suffix);
    sb_puts(&sql, ");\n");
  }
  /* the index the views join on (K.event_id = V.event_id), filled with the table */
  sb_puts(&sql, "CREATE INDEX \"rocpd_kernel_dispatch");
  sb_puts(&sql, r->suffix);
  sb_expand(&sql, "_event_id\" ON @kernel_dispatch(event_id);\n", r->suffix);
  /* the format's own metadata rows come first */
  sb_expand(&sql,
            "INSERT INTO @metadata(tag, value) VALUES ('schema_version', '" RP_SCHEMA_VERSION
            "'), ('uuid', '",
            r->suffix);
  sb_puts(&sql, r->suffix);
  sb_puts(&sql, "'), ('guid', '");
  sb_puts(&sql, r->guid);
  sb_puts(&sql, "'), ('" RP_WRITER_TAG "', 'hubprof ");
  sb_puts(&sql, hp_version());
  sb_puts(&sql, "');\n");
  if (sql.oom) {
    sb_free(&sql);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  st = exec_sql(s, sql.p, "cannot create the rocpd tables");
  sb_free(&sql);
  if (st == HP_OK) st = prepare_inserts(s);
  if (st != HP_OK) return st;
  r->next_string = 1;
  r->str_empty = string_id(s, "");
  r->str_dispatch_cat = r->str_empty ? string_id(s, "KERNEL_DISPATCH") : 0;
  if (!r->str_dispatch_cat) return s->first_error;
  bulk_start(s);
  return HP_OK;
}

/* Regions get their rocpd_event rows (which carry the category) once every dispatch event id is known:
 * ids after the largest event id, or before the smallest when that would overflow. */
static hp_status finish_regions(hp_store *s) {
  rp_state *r = s->impl;
  if (!r->regions) return HP_OK;
  sbuf q = {0};
  sb_expand(&q, "SELECT MIN(id), MAX(id) FROM @event", r->suffix);
  sqlite3_stmt *st = NULL;
  int rc = q.oom ? SQLITE_NOMEM : sqlite3_prepare_v2(r->db, q.p, -1, &st, NULL);
  int64_t lo = 0, hi = 0;
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    lo = sqlite3_column_int64(st, 0);
    hi = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  uint64_t n = r->regions;
  int64_t base;
  if (hi <= 0 || (uint64_t)(INT64_MAX - hi) >= n)
    base = hi > 0 ? hi : 0;
  else if (lo > INT64_MIN + 1 && (uint64_t)lo - (uint64_t)INT64_MIN - 1 > n)
    base = lo - (int64_t)n - 1;
  else {
    sb_free(&q);
    return hp_set_error(s, HP_ERR_CONSTRAINT, "no free rocpd_event ids left for %" PRIu64 " regions", n);
  }
  sb_reset(&q);
  char num[32];
  snprintf(num, sizeof num, "%" PRId64, base);
  sb_expand(&q, "INSERT INTO @event(id, category_id) SELECT ", r->suffix);
  sb_puts(&q, num);
  sb_expand(&q,
            " + ROW_NUMBER() OVER (ORDER BY id), event_id FROM @region ORDER BY id;\n"
            "UPDATE @region SET event_id = m.eid FROM (SELECT id AS rid, ",
            r->suffix);
  sb_puts(&q, num);
  sb_expand(&q, " + ROW_NUMBER() OVER (ORDER BY id) AS eid FROM @region) AS m WHERE m.rid = @region.id;\n",
            r->suffix);
  hp_status e =
      q.oom ? hp_set_error(s, HP_ERR_NOMEM, "out of memory") : exec_sql(s, q.p, "cannot write region events");
  sb_free(&q);
  return e;
}

static hp_status rp_commit(hp_store *s) {
  rp_state *r = s->impl;
  sbuf q = {0};
  hp_status st = bulk_flush(s);
  if (st == HP_OK && r->dispatches) { /* one rocpd_event per dispatch, with the dispatch's id (those built
                                       * as pages have theirs) */
    char cat[32];
    snprintf(cat, sizeof cat, "%" PRId64, r->str_dispatch_cat);
    sb_expand(&q, "INSERT OR IGNORE INTO @event(id, category_id) SELECT id, ", r->suffix);
    sb_puts(&q, cat);
    sb_expand(&q, " FROM @kernel_dispatch ORDER BY id", r->suffix);
    st = q.oom ? hp_set_error(s, HP_ERR_NOMEM, "out of memory")
               : exec_sql(s, q.p, "cannot write dispatch events");
    sb_reset(&q);
  }
  if (st == HP_OK) st = finish_regions(s);
  if (st != HP_OK) {
    sb_free(&q);
    return st;
  }
  unsigned need = r->need0;
  /* ROCm's pmc_info joins a counter's agent and process: a counter of no particular agent names the first
   * agent in rocpd (extdata.agent_id = 0 keeps the hub's value) and every counter the first process */
  if (r->counters_no_agent)
    sb_expand(&q,
              "UPDATE @info_pmc SET agent_id = a.id, nid = a.nid, target_arch = a.type, extdata = "
              "json_set(extdata, '$.agent_id', 0) FROM (SELECT id, nid, type FROM @info_agent WHERE id <> 0 "
              "ORDER BY id LIMIT 1) AS a WHERE @info_pmc.agent_id = 0;\n",
              r->suffix);
  sb_expand(&q,
            "UPDATE @info_pmc SET pid = p.id FROM (SELECT id FROM @info_process WHERE id <> 0 ORDER BY id "
            "LIMIT 1) AS p WHERE @info_pmc.pid = 0;\n",
            r->suffix);
  /* placeholder rows with id 0 so that ROCm's INNER JOIN views show rows whose references are "none" */
  static const struct {
    hp_table t;
    const char *sql;
  } ph[] = {
      {HP_TABLE_NODE, "INSERT OR IGNORE INTO @info_node(id, hash, machine_id) VALUES (0, 0, '')"},
      {HP_TABLE_PROCESS,
       "INSERT OR IGNORE INTO @info_process(id, nid, pid, command, extdata) VALUES (0, 0, 0, '', "
       "'" RP_PLACEHOLDER "')"},
      {HP_TABLE_THREAD,
       "INSERT OR IGNORE INTO @info_thread(id, nid, pid, tid, name, extdata) VALUES (0, 0, 0, 0, "
       "'', '" RP_PLACEHOLDER "')"},
      {HP_TABLE_AGENT,
       "INSERT OR IGNORE INTO @info_agent(id, nid, pid, name, extdata) VALUES (0, 0, 0, '', '" RP_PLACEHOLDER
       "')"},
      {HP_TABLE_QUEUE,
       "INSERT OR IGNORE INTO @info_queue(id, nid, pid, name, extdata) VALUES (0, 0, 0, '', '" RP_PLACEHOLDER
       "')"},
      {HP_TABLE_KERNEL_SYMBOL,
       "INSERT OR IGNORE INTO @info_kernel_symbol(id, nid, pid, code_object_id, kernel_name, "
       "display_name, extdata) VALUES (0, 0, 0, 0, '', '', '" RP_PLACEHOLDER "')"},
  };
  for (size_t i = 0; i < sizeof ph / sizeof ph[0]; i++) {
    if (!(need & NEED0(ph[i].t))) continue;
    sb_expand(&q, ph[i].sql, r->suffix);
    sb_puts(&q, ";\n");
  }
  /* base-name views, the data and summary views */
  for (int i = 0; i < RT_COUNT; i++) {
    sb_puts(&q, "CREATE VIEW \"rocpd_");
    sb_puts(&q, rt_name[i]);
    sb_puts(&q, "\" AS SELECT * FROM \"rocpd_");
    sb_puts(&q, rt_name[i]);
    sb_puts(&q, r->suffix);
    sb_puts(&q, "\";\n");
  }
  sb_puts(&q, rp_views_sql);
  sb_puts(&q, "COMMIT;\n");
  st =
      q.oom ? hp_set_error(s, HP_ERR_NOMEM, "out of memory") : exec_sql(s, q.p, "cannot finish the database");
  sb_free(&q);
  if (st != HP_OK) return st;
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
  int rc = sqlite3_close(r->db);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(r->db);
    r->db = NULL;
    return hp_set_error(s, HP_ERR_IO, "cannot close %s: %s", r->tmp, sqlite3_errstr(rc));
  }
  r->db = NULL;
  /* synchronous=OFF wrote without syncing: make the file durable before it takes the final name */
  int fd = open(r->tmp, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    return hp_set_error(s, HP_ERR_IO, "cannot sync %s: %s", r->tmp, strerror(e));
  }
  close(fd);
  if (rename(r->tmp, s->path) != 0)
    return hp_set_error(s, HP_ERR_IO, "cannot rename %s: %s", r->tmp, strerror(errno));
  free_state(r);
  s->impl = NULL;
  return HP_OK;
}

static void rp_abort(hp_store *s) {
  rp_state *r = s->impl;
  if (!r) return;
  for (int i = 0; i < WS_COUNT; i++) {
    sqlite3_finalize(r->ins[i]);
    r->ins[i] = NULL;
  }
  if (r->db) sqlite3_close_v2(r->db);
  r->db = NULL;
  if (r->tmp) unlink(r->tmp);
  free_state(r);
  s->impl = NULL;
}

/* ================================ reading ================================ */

static const unsigned char sqlite_magic[16] = "SQLite format 3";

/* 1 when the schema names a rocpd_* object, 0 when it does not, -1 when the schema cannot be read. */
static int has_rocpd_tables(sqlite3 *db) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name LIKE 'rocpd^_%' ESCAPE '^' LIMIT 1", -1,
                         &st, NULL) != SQLITE_OK)
    return -1;
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* An SQLite file with rocpd tables; also a damaged SQLite file whose schema cannot be read, so that the
 * rocpd reader (hubprof's only SQLite format) explains the damage instead of "unknown format". */
static int rp_probe(const char *path, const unsigned char *head, size_t n) {
  if (n < 16 || memcmp(head, sqlite_magic, 16) != 0) return 0;
  if (n < 100) return 1;
  sqlite3 *db = NULL;
  int found = -1;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) found = has_rocpd_tables(db);
  sqlite3_close(db);
  return found != 0;
}

/* Progress handler: interrupts a statement that does far more work than the file's size allows
 * (a hostile or looping schema must not hang a reader). */
static int work_guard(void *arg) {
  rp_state *r = arg;
  return atomic_fetch_add_explicit(&r->ops, 1000, memory_order_relaxed) + 1000 > r->budget;
}

static void guard_reset(rp_state *r) { atomic_store_explicit(&r->ops, 0, memory_order_relaxed); }

static hp_status read_fail(hp_store *s, int rc, const char *what) {
  rp_state *r = s->impl;
  if ((rc & 0xff) == SQLITE_INTERRUPT)
    return hp_set_error(s, HP_ERR_CORRUPT,
                        "%s: gave up after too much work for the file's size (damaged schema?)", what);
  return hp_set_error(s, rc_status(rc), "%s: %s", what, r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
}

/* Is `name` rocpd_<base>_<uuid with underscores>? */
static int is_uuid_table(const char *name, const char *base) {
  size_t bl = strlen(base);
  if (strncmp(name, "rocpd_", 6) != 0 || strncmp(name + 6, base, bl) != 0) return 0;
  const char *u = name + 6 + bl;
  if (strlen(u) != RP_SUFFIX_LEN || u[0] != '_') return 0;
  for (int i = 1; i < RP_SUFFIX_LEN; i++) {
    int sep = i == 9 || i == 14 || i == 19 || i == 24;
    if (sep ? u[i] != '_' : hexval(u[i]) < 0) return 0;
  }
  return 1;
}

/* Find the object to read for each base table: the base-name view (or table) when present, else the
 * first uuid-suffixed table. Returns how many were found, or -1 with the message set. */
static int resolve_tables(hp_store *s) {
  rp_state *r = s->impl;
  sqlite3_stmt *st;
  guard_reset(r);
  int rc = sqlite3_prepare_v2(
      r->db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name", -1, &st, NULL);
  if (rc != SQLITE_OK) {
    read_fail(s, rc, "cannot read the schema");
    return -1;
  }
  int found = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    if (!name) continue;
    for (int i = 0; i < RT_COUNT; i++) {
      int exact = strncmp(name, "rocpd_", 6) == 0 && strcmp(name + 6, rt_name[i]) == 0;
      if (!exact && (r->obj[i] || !is_uuid_table(name, rt_name[i]))) continue;
      if (!r->obj[i]) found++;
      free(r->obj[i]);
      r->obj[i] = strdup(name);
      if (!r->obj[i]) {
        sqlite3_finalize(st);
        hp_set_error(s, HP_ERR_NOMEM, "out of memory");
        return -1;
      }
    }
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    read_fail(s, rc, "cannot read the schema");
    return -1;
  }
  return found;
}

/* First value of metadata tag `tag` (malloc'd), or NULL. */
static char *meta_value(rp_state *r, const char *tag) {
  if (!r->obj[RT_METADATA]) return NULL;
  char *q =
      sqlite3_mprintf("SELECT value FROM \"%w\" WHERE tag = ?1 ORDER BY id LIMIT 1", r->obj[RT_METADATA]);
  sqlite3_stmt *st = NULL;
  char *v = NULL;
  guard_reset(r);
  if (q && sqlite3_prepare_v2(r->db, q, -1, &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, tag, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(st, 0);
      v = strdup(t ? t : "");
    }
  }
  sqlite3_finalize(st);
  sqlite3_free(q);
  return v;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks before SQLite sees the file: it exists, is an SQLite database, and is as long as its header says. */
static hp_status check_file(hp_store *s, uint64_t *bytes) {
  struct stat sb;
  if (stat(s->path, &sb) != 0) {
    if (errno == ENOENT) return hp_set_error(s, HP_ERR_NOT_FOUND, "no such file or directory");
    return hp_set_error(s, HP_ERR_IO, "cannot access: %s", strerror(errno));
  }
  if (S_ISDIR(sb.st_mode)) return hp_set_error(s, HP_ERR_FORMAT, "is a directory, not a rocpd database");
  if (sb.st_size == 0) return hp_set_error(s, HP_ERR_FORMAT, "empty file, not a rocpd database");
  unsigned char h[100];
  int fd = open(s->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hp_set_error(s, HP_ERR_IO, "cannot open: %s", strerror(errno));
  ssize_t got = read(fd, h, sizeof h);
  close(fd);
  if (got < 0) return hp_set_error(s, HP_ERR_IO, "cannot read: %s", strerror(errno));
  if ((size_t)got < 16 || memcmp(h, sqlite_magic, 16) != 0)
    return hp_set_error(s, HP_ERR_FORMAT, "not an SQLite database, so not a rocpd file");
  if (got < (ssize_t)sizeof h)
    return hp_set_error(s, HP_ERR_TRUNCATED, "truncated SQLite database: %lld bytes, shorter than its header",
                        (long long)sb.st_size);
  uint32_t psz = (uint32_t)h[16] << 8 | h[17];
  if (psz == 1) psz = 65536;
  if (psz < 512 || (psz & (psz - 1)))
    return hp_set_error(s, HP_ERR_CORRUPT, "database disk image is malformed (page size %u)", psz);
  uint32_t npages = be32(h + 28);
  /* the work a reader may do grows with the bytes really stored: a sparse or padded file (or a tiny page
   * size) must not buy a crafted schema hours of work */
  uint64_t stored = (uint64_t)sb.st_blocks * 512;
  if (stored > (uint64_t)sb.st_size) stored = (uint64_t)sb.st_size;
  if (npages && be32(h + 24) == be32(h + 92) && (uint64_t)npages * psz < stored)
    stored = (uint64_t)npages * psz;
  *bytes = stored;
  if (npages && be32(h + 24) == be32(h + 92)) { /* the in-header size is valid */
    uint64_t want = (uint64_t)npages * psz;
    if ((uint64_t)sb.st_size < want)
      return hp_set_error(s, HP_ERR_TRUNCATED, "truncated SQLite database: %lld of %llu bytes",
                          (long long)sb.st_size, (unsigned long long)want);
  }
  return HP_OK;
}

static hp_status rp_open_read(hp_store *s) {
  uint64_t bytes = 0;
  hp_status st = check_file(s, &bytes);
  if (st != HP_OK) return st;
  rp_state *r = calloc(1, sizeof *r);
  if (!r) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  s->impl = r;
  r->budget = 20000000ull + bytes * 200ull; /* SQLite steps: ~1.6 M per 8 KiB page of data */
  /* cursors of one store may be used from several threads: every use of the connection after this
   * function holds rlock (recursive: a count prepares its query) */
  pthread_mutexattr_t ma;
  if (pthread_mutexattr_init(&ma) != 0) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  r->rlock_on = pthread_mutex_init(&r->rlock, &ma) == 0;
  pthread_mutexattr_destroy(&ma);
  if (!r->rlock_on) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  int rc = sqlite3_open_v2(s->path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK) return read_fail(s, rc, "cannot open");
  sqlite3_db_config(r->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config(r->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_progress_handler(r->db, 1000, work_guard, r);
  sqlite3_exec(r->db, "PRAGMA cell_size_check=ON", NULL, NULL, NULL);
  int found = resolve_tables(s);
  if (found < 0) return s->first_error != HP_OK ? s->first_error : HP_ERR_CORRUPT;
  if (found == 0) return hp_set_error(s, HP_ERR_FORMAT, "SQLite database without rocpd tables");
  char *ver = meta_value(r, "schema_version");
  char *writer = meta_value(r, RP_WRITER_TAG);
  r->own = writer != NULL;
  free(writer);
  s->schema_version = ver ? ver : strdup("");
  if (!s->schema_version) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  long major = ver ? strtol(ver, NULL, 10) : 3;
  if (ver && *ver && major != 3)
    return hp_set_error(s, HP_ERR_VERSION, "rocpd schema %s is not supported (this build reads 3.x)", ver);
  if (!r->obj[RT_KERNEL_DISPATCH] && !r->obj[RT_PMC] && !r->obj[RT_PROCESS])
    return hp_set_error(s, HP_ERR_VERSION,
                        "rocpd tables of an older layout (rocpd 1/2, rocmProfileData), not 3.x");
  return HP_OK;
}

static void rp_close_read(hp_store *s) {
  if (s->impl) free_state(s->impl);
  s->impl = NULL;
}

/* Column names of object `obj` (PRAGMA table_info also works for views). */
typedef struct colset {
  char **name;
  size_t n;
} colset;

static void colset_free(colset *c) {
  for (size_t i = 0; i < c->n; i++)
    free(c->name[i]);
  free(c->name);
  memset(c, 0, sizeof *c);
}

static int colset_load(rp_state *r, const char *obj, colset *c) {
  memset(c, 0, sizeof *c);
  if (!obj) return 0;
  char *q = sqlite3_mprintf("PRAGMA table_info(\"%w\")", obj);
  sqlite3_stmt *st = NULL;
  guard_reset(r);
  int rc = q ? sqlite3_prepare_v2(r->db, q, -1, &st, NULL) : SQLITE_NOMEM;
  sqlite3_free(q);
  if (rc != SQLITE_OK) return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *n = (const char *)sqlite3_column_text(st, 1);
    char **nn = realloc(c->name, (c->n + 1) * sizeof *nn);
    if (!nn) {
      rc = SQLITE_NOMEM;
      break;
    }
    c->name = nn;
    c->name[c->n] = strdup(n ? n : "");
    if (!c->name[c->n]) {
      rc = SQLITE_NOMEM;
      break;
    }
    c->n++;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int colset_has(const colset *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (sqlite3_stricmp(c->name[i], name) == 0) return 1;
  return 0;
}

/* Append "alias.col" when the column exists, else "NULL" (older or foreign files). */
static void sb_col(sbuf *q, const colset *c, const char *alias, const char *col) {
  if (q->n && q->p[q->n - 1] != '(' && q->p[q->n - 1] != ' ') sb_puts(q, ", ");
  if (!colset_has(c, col)) {
    sb_puts(q, "NULL");
    return;
  }
  sb_puts(q, alias);
  sb_puts(q, ".\"");
  sb_puts(q, col);
  sb_puts(q, "\"");
}

static void sb_obj(sbuf *q, const char *obj, const char *alias) {
  char *t = sqlite3_mprintf(" \"%w\" AS %s", obj, alias);
  if (t)
    sb_puts(q, t);
  else
    q->oom = 1;
  sqlite3_free(t);
}

/* Columns read per hub table, in the order the row fillers take them. */
static const char *const cols_node[] = {"id",      "hostname", "machine_id",    "system_name",
                                        "release", "version",  "hardware_name", NULL};
static const char *const cols_process[] = {"id",      "nid",     "pid",  "ppid", "start", "end",
                                           "command", "extdata", "init", "fini", NULL};
static const char *const cols_thread[] = {"id", "pid", "tid", "start", "end", "name", NULL};
static const char *const cols_agent[] = {
    "id", "nid", "type", "logical_index", "vendor_name", "name", "product_name", "extdata", NULL};
static const char *const cols_queue[] = {"id", "pid", "name", "extdata", NULL};
static const char *const cols_code[] = {"id", "pid", "agent_id", "uri", "load_base", "load_size", NULL};
static const char *const cols_kernel[] = {"id",
                                          "code_object_id",
                                          "kernel_name",
                                          "display_name",
                                          "private_segment_size",
                                          "group_segment_size",
                                          "extdata",
                                          NULL};
static const char *const cols_dispatch[] = {"id",
                                            "dispatch_id",
                                            "pid",
                                            "tid",
                                            "agent_id",
                                            "queue_id",
                                            "kernel_id",
                                            "grid_size_x",
                                            "grid_size_y",
                                            "grid_size_z",
                                            "workgroup_size_x",
                                            "workgroup_size_y",
                                            "workgroup_size_z",
                                            "private_segment_size",
                                            "group_segment_size",
                                            "start",
                                            "end",
                                            "extdata",
                                            NULL};
static const char *const cols_pmc[] = {"id",    "agent_id",   "name",    "description", "block",
                                       "units", "expression", "extdata", NULL};
static const char *const cols_region[] = {"id", "pid", "tid", "start", "end", NULL};

/* Build the SELECT (or COUNT when count != 0) for hub table t. Returns 0, or -1 when the table is absent
 * (read as empty), or an SQLite error code. */
static int build_query(rp_state *r, hp_table t, int count, sbuf *q) {
  static const int base[HP_TABLE_COUNT] = {
      [HP_TABLE_NODE] = RT_NODE,
      [HP_TABLE_PROCESS] = RT_PROCESS,
      [HP_TABLE_THREAD] = RT_THREAD,
      [HP_TABLE_AGENT] = RT_AGENT,
      [HP_TABLE_QUEUE] = RT_QUEUE,
      [HP_TABLE_CODE_OBJECT] = RT_CODE_OBJECT,
      [HP_TABLE_KERNEL_SYMBOL] = RT_KERNEL_SYMBOL,
      [HP_TABLE_DISPATCH] = RT_KERNEL_DISPATCH,
      [HP_TABLE_COUNTER_INFO] = RT_PMC,
      [HP_TABLE_COUNTER_VALUE] = RT_PMC_EVENT,
      [HP_TABLE_REGION] = RT_REGION,
      [HP_TABLE_METADATA] = RT_METADATA,
  };
  static const char *const *const cols[HP_TABLE_COUNT] = {
      [HP_TABLE_NODE] = cols_node,
      [HP_TABLE_PROCESS] = cols_process,
      [HP_TABLE_THREAD] = cols_thread,
      [HP_TABLE_AGENT] = cols_agent,
      [HP_TABLE_QUEUE] = cols_queue,
      [HP_TABLE_CODE_OBJECT] = cols_code,
      [HP_TABLE_KERNEL_SYMBOL] = cols_kernel,
      [HP_TABLE_DISPATCH] = cols_dispatch,
      [HP_TABLE_COUNTER_INFO] = cols_pmc,
      [HP_TABLE_REGION] = cols_region,
  };
  const char *obj = r->obj[base[t]];
  if (!obj) return -1;
  colset c, k = {0};
  int rc = colset_load(r, obj, &c);
  if (rc != SQLITE_OK) return rc;
  if (!colset_has(&c, "id") && t != HP_TABLE_COUNTER_VALUE) {
    colset_free(&c);
    return -1; /* not a table we can read */
  }
  sb_puts(q, "SELECT ");
  if (count) sb_puts(q, "COUNT(*)");
  switch (t) {
  case HP_TABLE_METADATA:
    if (!count) sb_puts(q, "tag, value");
    sb_puts(q, " FROM");
    sb_obj(q, obj, "M");
    sb_puts(q, " WHERE tag NOT IN ('schema_version', 'uuid', 'guid', '" RP_WRITER_TAG "') ORDER BY id");
    break;
  case HP_TABLE_COUNTER_VALUE: {
    /* own files: the event id is the dispatch id; others: the dispatch whose event_id it is */
    int join = !r->own && r->obj[RT_KERNEL_DISPATCH];
    if (join && (rc = colset_load(r, r->obj[RT_KERNEL_DISPATCH], &k)) != SQLITE_OK) break;
    join = join && colset_has(&k, "id") && colset_has(&k, "event_id") && colset_has(&c, "event_id");
    if (!count) {
      if (join)
        sb_puts(q, "K.\"id\"");
      else
        sb_col(q, &c, "V", "event_id");
      sb_col(q, &c, "V", "pmc_id");
      sb_col(q, &c, "V", "value");
      sb_col(q, &c, "V", "extdata");
      if (join)
        sb_col(q, &k, "K", "replay_pass");
      else
        sb_puts(q, ", NULL");
    }
    sb_puts(q, " FROM");
    sb_obj(q, obj, "V");
    if (!count && join) {
      sb_puts(q, " LEFT JOIN");
      sb_obj(q, r->obj[RT_KERNEL_DISPATCH], "K");
      sb_puts(q, " ON K.\"event_id\" = V.\"event_id\"");
    }
    if (colset_has(&c, "sample_id")) sb_puts(q, " WHERE V.\"sample_id\" IS NULL");
    if (!count && colset_has(&c, "id")) sb_puts(q, " ORDER BY V.\"id\"");
    break;
  }
  case HP_TABLE_REGION:
    if (!count) {
      for (const char *const *p = cols[t]; *p; p++)
        sb_col(q, &c, "R", *p);
      /* name and category strings through rocpd_string (category via the region's event) */
      int has_s = r->obj[RT_STRING] != NULL, has_e = r->obj[RT_EVENT] != NULL;
      sb_puts(q, has_s && colset_has(&c, "name_id") ? ", S.\"string\"" : ", NULL");
      sb_puts(q, has_s && has_e && colset_has(&c, "event_id") ? ", C.\"string\"" : ", NULL");
      sb_puts(q, " FROM");
      sb_obj(q, obj, "R");
      if (has_s && colset_has(&c, "name_id")) {
        sb_puts(q, " LEFT JOIN");
        sb_obj(q, r->obj[RT_STRING], "S");
        sb_puts(q, " ON S.\"id\" = R.\"name_id\"");
      }
      if (has_s && has_e && colset_has(&c, "event_id")) {
        sb_puts(q, " LEFT JOIN");
        sb_obj(q, r->obj[RT_EVENT], "E");
        sb_puts(q, " ON E.\"id\" = R.\"event_id\" LEFT JOIN");
        sb_obj(q, r->obj[RT_STRING], "C");
        sb_puts(q, " ON C.\"id\" = E.\"category_id\"");
      }
    } else {
      sb_puts(q, " FROM");
      sb_obj(q, obj, "R");
    }
    if (r->own) sb_puts(q, " WHERE R.\"id\" <> 0");
    if (!count) sb_puts(q, " ORDER BY R.\"id\"");
    break;
  default:
    if (!count)
      for (const char *const *p = cols[t]; *p; p++)
        sb_col(q, &c, "T", *p);
    sb_puts(q, " FROM");
    sb_obj(q, obj, "T");
    if (r->own) sb_puts(q, " WHERE T.\"id\" <> 0"); /* id 0 rows are placeholders for "none" */
    if (!count) sb_puts(q, " ORDER BY T.\"id\"");
    break;
  }
  colset_free(&c);
  colset_free(&k);
  if (rc == SQLITE_OK && q->oom) rc = SQLITE_NOMEM;
  return rc;
}

static hp_status prepare_query_locked(hp_store *s, hp_table t, int count, sqlite3_stmt **out) {
  rp_state *r = s->impl;
  const hp_table_desc *d = hp_table_describe(t);
  sbuf q = {0};
  *out = NULL;
  int rc = build_query(r, t, count, &q);
  if (rc == -1) {
    sb_free(&q);
    return HP_END; /* absent: no rows */
  }
  char what[96];
  snprintf(what, sizeof what, "cannot read %s rows", d->name);
  if (rc == SQLITE_OK) {
    guard_reset(r);
    rc = sqlite3_prepare_v2(r->db, q.p, -1, out, NULL);
  }
  sb_free(&q);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(*out);
    *out = NULL;
    return read_fail(s, rc, what);
  }
  return HP_OK;
}

static hp_status prepare_query(hp_store *s, hp_table t, int count, sqlite3_stmt **out) {
  rp_state *r = s->impl;
  pthread_mutex_lock(&r->rlock);
  hp_status e = prepare_query_locked(s, t, count, out);
  pthread_mutex_unlock(&r->rlock);
  return e;
}

static hp_status rp_count(hp_store *s, hp_table t, uint64_t *n) {
  rp_state *r = s->impl;
  sqlite3_stmt *st;
  *n = 0;
  pthread_mutex_lock(&r->rlock);
  hp_status e = prepare_query_locked(s, t, 1, &st);
  if (e == HP_OK) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *n = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) {
      char what[96];
      snprintf(what, sizeof what, "cannot count %s rows", hp_table_describe(t)->name);
      e = read_fail(s, rc, what);
    }
  } else if (e == HP_END) {
    e = HP_OK;
  }
  pthread_mutex_unlock(&r->rlock);
  return e;
}

static hp_status rp_cursor_open(hp_cursor *c) {
  rp_cursor *k = calloc(1, sizeof *k);
  if (!k) return hp_set_error(c->store, HP_ERR_NOMEM, "out of memory");
  hp_status e = prepare_query(c->store, c->table, 0, &k->st);
  if (e != HP_OK && e != HP_END) {
    free(k);
    return e;
  }
  c->impl = k; /* k->st NULL: the table is absent, the cursor has no rows */
  return HP_OK;
}

static void rp_cursor_close(hp_cursor *c) {
  rp_cursor *k = c->impl;
  if (!k) return;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  sqlite3_finalize(k->st);
  pthread_mutex_unlock(&r->rlock);
  sb_free(&k->arena);
  free(k);
  c->impl = NULL;
}

/* ---- column readers tolerant of whatever type a foreign or damaged file holds ---- */
static int64_t col_i64(sqlite3_stmt *st, int i) {
  sqlite3_value *v = sqlite3_column_value(st, i);
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER: return sqlite3_value_int64(v);
  case SQLITE_FLOAT: return d2i64(sqlite3_value_double(v));
  case SQLITE_TEXT: return sqlite3_value_int64(v);
  default: return 0;
  }
}

static uint64_t col_u64(sqlite3_stmt *st, int i) {
  sqlite3_value *v = sqlite3_column_value(st, i);
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER: return (uint64_t)sqlite3_value_int64(v);
  case SQLITE_FLOAT: return d2u64(sqlite3_value_double(v));
  case SQLITE_TEXT: return (uint64_t)sqlite3_value_int64(v);
  default: return 0;
  }
}

/* Strings of the current row live in the cursor's arena; pointers are fixed once the row is complete. */
typedef struct strfix {
  const char **dst;
  size_t off;
} strfix;

typedef struct rowstr {
  rp_cursor *k;
  strfix fix[12];
  int n;
} rowstr;

static void rs_begin(rowstr *rs, rp_cursor *k) {
  rs->k = k;
  rs->n = 0;
  sb_reset(&k->arena);
}

static void rs_add(rowstr *rs, const char **dst, const char *p, size_t n, int unescape) {
  sbuf *a = &rs->k->arena;
  size_t off = a->n;
  if (unescape)
    sb_unescape(a, p, n);
  else
    sb_put(a, p, n);
  sb_put(a, "", 1);
  if (rs->n < (int)(sizeof rs->fix / sizeof rs->fix[0])) rs->fix[rs->n++] = (strfix){dst, off};
}

static void rs_col(rowstr *rs, const char **dst, sqlite3_stmt *st, int i) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  rs_add(rs, dst, t ? t : "", t ? (size_t)sqlite3_column_bytes(st, i) : 0, 0);
}

static hp_status rs_end(rowstr *rs, hp_store *s) {
  sbuf *a = &rs->k->arena;
  if (a->oom) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  for (int i = 0; i < rs->n; i++)
    *rs->fix[i].dst = a->p + rs->fix[i].off;
  return HP_OK;
}

/* The extdata text of column i (never NULL) and its length. */
static const char *col_json(sqlite3_stmt *st, int i, size_t *n) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  *n = t ? (size_t)sqlite3_column_bytes(st, i) : 0;
  return t ? t : "";
}

static int32_t agent_type_from_text(const char *t) {
  if (!t) return HP_AGENT_UNKNOWN;
  if (strcmp(t, "CPU") == 0) return HP_AGENT_CPU;
  if (strcmp(t, "GPU") == 0) return HP_AGENT_GPU;
  if (strcmp(t, "NIC") == 0) return HP_AGENT_ACCEL;
  return HP_AGENT_UNKNOWN;
}

static hp_status fill_row(hp_cursor *c, sqlite3_stmt *st, void *row) {
  rp_cursor *k = c->impl;
  rp_state *r = c->store->impl;
  rowstr rs;
  rs_begin(&rs, k);
  size_t jn;
  const char *js;
  switch (c->table) {
  case HP_TABLE_NODE: {
    hp_node *n = row;
    n->id = col_u64(st, 0);
    rs_col(&rs, &n->hostname, st, 1);
    rs_col(&rs, &n->machine_id, st, 2);
    rs_col(&rs, &n->system_name, st, 3);
    rs_col(&rs, &n->release, st, 4);
    rs_col(&rs, &n->version, st, 5);
    rs_col(&rs, &n->machine, st, 6);
    break;
  }
  case HP_TABLE_PROCESS: {
    hp_process *p = row;
    p->id = col_u64(st, 0);
    p->node_id = col_u64(st, 1);
    p->pid = col_i64(st, 2);
    p->ppid = col_i64(st, 3);
    p->start_ns = sqlite3_column_type(st, 4) == SQLITE_NULL ? col_i64(st, 8) : col_i64(st, 4);
    p->end_ns = sqlite3_column_type(st, 5) == SQLITE_NULL ? col_i64(st, 9) : col_i64(st, 5);
    rs_col(&rs, &p->command, st, 6);
    js = col_json(st, 7, &jn);
    p->rank = json_i64(js, jn, "rank", -1);
    p->lost_records = json_u64(js, jn, "lost_records", 0);
    break;
  }
  case HP_TABLE_THREAD: {
    hp_thread *th = row;
    th->id = col_u64(st, 0);
    th->process_id = col_u64(st, 1);
    th->tid = col_i64(st, 2);
    th->start_ns = col_i64(st, 3);
    th->end_ns = col_i64(st, 4);
    rs_col(&rs, &th->name, st, 5);
    break;
  }
  case HP_TABLE_AGENT: {
    hp_agent *a = row;
    a->id = col_u64(st, 0);
    a->node_id = col_u64(st, 1);
    js = col_json(st, 7, &jn);
    a->type =
        (int32_t)json_i64(js, jn, "type", agent_type_from_text((const char *)sqlite3_column_text(st, 2)));
    a->device_index = (int32_t)col_i64(st, 3);
    rs_col(&rs, &a->vendor, st, 4);
    rs_col(&rs, &a->name, st, 5);
    rs_col(&rs, &a->product_name, st, 6);
    js = col_json(st, 7, &jn); /* again: reading column 2 as text may have moved it */
    jspan v;
    if (json_find(js, jn, "runtime", &v) && v.is_str) rs_add(&rs, &a->runtime, v.p, v.n, 1);
    /* ours, else what rocprofv3 keeps in extdata */
    a->compute_units = json_i64(js, jn, "compute_units", json_i64(js, jn, "cu_count", 0));
    a->max_clock_mhz = json_i64(js, jn, "max_clock_mhz", json_i64(js, jn, "max_engine_clk_fcompute", 0));
    a->global_mem_bytes = json_i64(js, jn, "global_mem_bytes", 0);
    a->local_mem_bytes = json_i64(js, jn, "local_mem_bytes", json_i64(js, jn, "lds_size_in_kb", 0) * 1024);
    a->wave_size = json_i64(js, jn, "wave_size", json_i64(js, jn, "wave_front_size", 0));
    break;
  }
  case HP_TABLE_QUEUE: {
    hp_queue *q = row;
    q->id = col_u64(st, 0);
    q->process_id = col_u64(st, 1);
    rs_col(&rs, &q->name, st, 2);
    js = col_json(st, 3, &jn);
    q->agent_id = json_u64(js, jn, "agent_id", 0);
    break;
  }
  case HP_TABLE_CODE_OBJECT: {
    hp_code_object *co = row;
    co->id = col_u64(st, 0);
    co->process_id = col_u64(st, 1);
    co->agent_id = col_u64(st, 2);
    rs_col(&rs, &co->uri, st, 3);
    co->load_base = col_u64(st, 4);
    co->load_size = col_u64(st, 5);
    break;
  }
  case HP_TABLE_KERNEL_SYMBOL: {
    hp_kernel_symbol *ks = row;
    ks->id = col_u64(st, 0);
    ks->code_object_id = col_u64(st, 1);
    rs_col(&rs, &ks->name, st, 2);
    ks->private_size = col_i64(st, 4);
    ks->group_size = col_i64(st, 5);
    js = col_json(st, 6, &jn);
    jspan v;
    if (json_find(js, jn, "display_name", &v) && v.is_str)
      rs_add(&rs, &ks->display_name, v.p, v.n, 1);
    else
      rs_col(&rs, &ks->display_name, st, 3);
    break;
  }
  case HP_TABLE_DISPATCH: {
    hp_dispatch *d = row;
    d->id = col_u64(st, 0);
    d->dispatch_id = col_u64(st, 1);
    d->process_id = col_u64(st, 2);
    d->thread_id = col_u64(st, 3);
    d->agent_id = col_u64(st, 4);
    d->queue_id = col_u64(st, 5);
    d->kernel_id = col_u64(st, 6);
    for (int i = 0; i < 3; i++) {
      d->grid[i] = (uint32_t)col_u64(st, 7 + i);
      d->workgroup[i] = (uint32_t)col_u64(st, 10 + i);
    }
    d->private_size = col_i64(st, 13);
    d->group_size = col_i64(st, 14);
    d->start_ns = col_i64(st, 15);
    d->end_ns = col_i64(st, 16);
    js = col_json(st, 17, &jn);
    static const char *const dk[5] = {"enqueue_ns", "passes", "bytes_accessible", "bytes_restored",
                                      "dispatch_id"};
    jspan sp[5] = {{0}};
    unsigned f = jn > 2 ? json_find_n(js, jn, dk, 5, sp) : 0;
    if (r->own) d->dispatch_id = span_u64(&sp[4], f & 16, d->dispatch_id); /* the collector's id */
    d->enqueue_ns = span_i64(&sp[0], f & 1, 0);
    d->passes = (uint32_t)span_u64(&sp[1], f & 2, 0);
    d->bytes_accessible = span_u64(&sp[2], f & 4, 0);
    d->bytes_restored = span_u64(&sp[3], f & 8, 0);
    break;
  }
  case HP_TABLE_COUNTER_INFO: {
    hp_counter_info *ci = row;
    ci->id = col_u64(st, 0);
    ci->agent_id = col_u64(st, 1);
    if (r->own) { /* a counter of no particular agent names one in rocpd: extdata keeps 0 */
      js = col_json(st, 7, &jn);
      ci->agent_id = json_u64(js, jn, "agent_id", ci->agent_id);
    }
    rs_col(&rs, &ci->name, st, 2);
    rs_col(&rs, &ci->description, st, 3);
    rs_col(&rs, &ci->block, st, 4);
    rs_col(&rs, &ci->unit, st, 5);
    rs_col(&rs, &ci->expression, st, 6);
    break;
  }
  case HP_TABLE_COUNTER_VALUE: {
    hp_counter_value *v = row;
    v->dispatch_id = col_u64(st, 0);
    v->counter_id = col_u64(st, 1);
    v->value = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
    js = col_json(st, 3, &jn);
    static const char *const vk[3] = {"pass", "imputed", "value_bits"};
    jspan sp[3] = {{0}};
    char tmp[48];
    unsigned f = jn > 2 ? json_find_n(js, jn, vk, 3, sp) : 0;
    uint64_t pass = span_u64(&sp[0], f & 1, 0);
    if (!pass && sqlite3_column_type(st, 4) != SQLITE_NULL)
      pass = col_u64(st, 4) + 1; /* rocprofv3: 0-based */
    v->pass = (uint32_t)pass;
    v->imputed = (uint32_t)span_u64(&sp[1], f & 2, 0);
    if ((f & 4) && span_num(&sp[2], tmp, sizeof tmp)) {
      uint64_t bits = span_u64(&sp[2], 1, 0);
      memcpy(&v->value, &bits, sizeof bits);
    }
    break;
  }
  case HP_TABLE_REGION: {
    hp_region *g = row;
    g->id = col_u64(st, 0);
    g->process_id = col_u64(st, 1);
    g->thread_id = col_u64(st, 2);
    g->start_ns = col_i64(st, 3);
    g->end_ns = col_i64(st, 4);
    rs_col(&rs, &g->name, st, 5);
    rs_col(&rs, &g->category, st, 6);
    break;
  }
  case HP_TABLE_METADATA: {
    hp_metadata *m = row;
    const char *tag = (const char *)sqlite3_column_text(st, 0);
    size_t tl = tag ? (size_t)sqlite3_column_bytes(st, 0) : 0, el = strlen(RP_KEY_ESCAPE);
    if (r->own && tag && tl > el && strncmp(tag, RP_KEY_ESCAPE, el) == 0)
      rs_add(&rs, &m->key, tag + el, tl - el, 0);
    else
      rs_add(&rs, &m->key, tag ? tag : "", tl, 0);
    rs_col(&rs, &m->value, st, 1);
    break;
  }
  case HP_TABLE_COUNT: break;
  }
  return rs_end(&rs, c->store);
}

static hp_status rp_cursor_next(hp_cursor *c, void *row) {
  rp_cursor *k = c->impl;
  if (!k || !k->st) return HP_END;
  uint32_t size = *(uint32_t *)row;
  hp_row_init(c->table, row);
  *(uint32_t *)row = size;
  rp_state *r = c->store->impl;
  pthread_mutex_lock(&r->rlock);
  int rc = sqlite3_step(k->st);
  hp_status e;
  if (rc == SQLITE_ROW) {
    e = fill_row(c, k->st, row);
  } else if (rc == SQLITE_DONE) {
    e = HP_END;
  } else {
    char what[96];
    snprintf(what, sizeof what, "cannot read %s rows", hp_table_describe(c->table)->name);
    e = read_fail(c->store, rc, what);
  }
  pthread_mutex_unlock(&r->rlock);
  return e;
}

/* ================================ ops ================================ */

const hp_format_ops hp_fmt_rocpd = {
    .size = sizeof(hp_format_ops),
    .name = "rocpd",
    .flags = 0,
    .probe = rp_probe,
    .open_read = rp_open_read,
    .create = rp_create,
    .write = rp_write,
    .commit = rp_commit,
    .abort = rp_abort,
    .close_read = rp_close_read,
    .count = rp_count,
    .cursor_open = rp_cursor_open,
    .cursor_next = rp_cursor_next,
    .cursor_close = rp_cursor_close,
};
