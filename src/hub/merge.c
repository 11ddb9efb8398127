/* Merge of N stores into one through the public row API: ids remapped, small tables de-duplicated,
 * big tables (dispatch, counter_value, region) streamed with an id offset so memory stays bounded.
 * Sections: hash maps · per-table merge rules · the merge loop. Knows no format. */
#include "hub_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- hash maps: u64 → u64 (ids of one input) and bytes → u64 (de-duplication keys) ---- */
typedef struct idmap {
  uint64_t *keys, *vals; /* key 0 = empty slot (ids are never 0) */
  size_t cap, n;
} idmap;

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

static int idmap_put(idmap *m, uint64_t k, uint64_t v) {
  if (2 * (m->n + 1) > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    uint64_t *nk = calloc(nc, sizeof *nk), *nv = calloc(nc, sizeof *nv);
    if (!nk || !nv) {
      free(nk);
      free(nv);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = mix64(m->keys[i]) & (nc - 1);
      while (nk[j])
        j = (j + 1) & (nc - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = nc;
  }
  size_t j = mix64(k) & (m->cap - 1);
  while (m->keys[j] && m->keys[j] != k)
    j = (j + 1) & (m->cap - 1);
  if (!m->keys[j]) m->n++;
  m->keys[j] = k;
  m->vals[j] = v;
  return 0;
}

static uint64_t idmap_get(const idmap *m, uint64_t k) {
  if (!m->cap || !k) return 0;
  size_t j = mix64(k) & (m->cap - 1);
  while (m->keys[j]) {
    if (m->keys[j] == k) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return 0;
}

static void idmap_clear(idmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

typedef struct keymap {
  char **keys; /* each: 8-byte length then bytes */
  uint64_t *vals;
  size_t cap, n;
} keymap;

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
  return h;
}

static size_t key_len(const char *k) {
  size_t n;
  memcpy(&n, k, sizeof n);
  return n;
}

/* Find key (bytes k, n); returns its slot (empty or matching). */
static size_t keymap_slot(const keymap *m, const char *k, size_t n) {
  size_t j = hash_bytes(k, n) & (m->cap - 1);
  while (m->keys[j] && !(key_len(m->keys[j]) == n && memcmp(m->keys[j] + sizeof n, k, n) == 0))
    j = (j + 1) & (m->cap - 1);
  return j;
}

static uint64_t keymap_get(const keymap *m, const char *k, size_t n) {
  if (!m->cap) return 0;
  size_t j = keymap_slot(m, k, n);
  return m->keys[j] ? m->vals[j] : 0;
}

static int keymap_put(keymap *m, const char *k, size_t n, uint64_t v) {
  if (2 * (m->n + 1) > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    keymap g = {calloc(nc, sizeof(char *)), calloc(nc, sizeof(uint64_t)), nc, 0};
    if (!g.keys || !g.vals) {
      free(g.keys);
      free(g.vals);
      return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = keymap_slot(&g, m->keys[i] + sizeof(size_t), key_len(m->keys[i]));
      g.keys[j] = m->keys[i];
      g.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    g.n = m->n;
    *m = g;
  }
  size_t j = keymap_slot(m, k, n);
  if (!m->keys[j]) {
    char *copy = malloc(sizeof n + n);
    if (!copy) return -1;
    memcpy(copy, &n, sizeof n);
    memcpy(copy + sizeof n, k, n);
    m->keys[j] = copy;
    m->n++;
  }
  m->vals[j] = v;
  return 0;
}

static void keymap_clear(keymap *m) {
  for (size_t i = 0; i < m->cap; i++)
    free(m->keys[i]);
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* A growable byte buffer for building keys. */
typedef struct buf {
  char *p;
  size_t n, cap;
} buf;

static int buf_add(buf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->n + n)
      nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np) return -1;
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
  return 0;
}

/* ---- per-table merge rules ---- */
/* Columns that identify a row for de-duplication, NULL-terminated; empty = never de-duplicated.
 * Processes stay apart unless node, pid and start time are all equal (the same process seen twice). */
static const char *const dedup_node[] = {"hostname", "machine_id", NULL};
static const char *const dedup_process[] = {"node_id", "pid", "start_ns", NULL};
static const char *const dedup_thread[] = {"process_id", "tid", NULL};
static const char *const dedup_agent[] = {"node_id", "type", "device_index", "vendor", "name", NULL};
static const char *const dedup_code_object[] = {"process_id", "agent_id", "uri", "load_base", NULL};
static const char *const dedup_kernel[] = {"name", "display_name", "private_size", "group_size", NULL};
static const char *const dedup_counter[] = {"agent_id", "name", NULL};
static const char *const dedup_metadata[] = {"key", NULL};
static const char *const no_dedup[] = {NULL};

static const char *const *const dedup_cols[HP_TABLE_COUNT] = {
    [HP_TABLE_NODE] = dedup_node,
    [HP_TABLE_PROCESS] = dedup_process,
    [HP_TABLE_THREAD] = dedup_thread,
    [HP_TABLE_AGENT] = dedup_agent,
    [HP_TABLE_QUEUE] = no_dedup,
    [HP_TABLE_CODE_OBJECT] = dedup_code_object,
    [HP_TABLE_KERNEL_SYMBOL] = dedup_kernel,
    [HP_TABLE_DISPATCH] = no_dedup,
    [HP_TABLE_COUNTER_INFO] = dedup_counter,
    [HP_TABLE_COUNTER_VALUE] = no_dedup,
    [HP_TABLE_REGION] = no_dedup,
    [HP_TABLE_METADATA] = dedup_metadata,
};

/* Big tables: ids shifted by an offset per input instead of a map, so memory does not grow with them. */
static int is_streamed(hp_table t) {
  return t == HP_TABLE_DISPATCH || t == HP_TABLE_REGION || t == HP_TABLE_COUNTER_VALUE;
}

typedef struct merger {
  hp_store *out;
  idmap ids[HP_TABLE_COUNT];        /* this input's id → output id (small tables) */
  keymap dedup[HP_TABLE_COUNT];     /* identity key → output id (all inputs) */
  uint64_t next_id[HP_TABLE_COUNT]; /* next output id for small tables */
  uint64_t base[HP_TABLE_COUNT];    /* id offset of this input for streamed tables */
  uint64_t max_id[HP_TABLE_COUNT];  /* highest output id written for streamed tables */
  buf key;
} merger;

static uint64_t *u64_at(void *row, const hp_column *c) { return (uint64_t *)((char *)row + c->offset); }

/* Output id for a reference to table `ref` holding input id v; 0 when the input has no such row. */
static uint64_t remap_ref(merger *m, hp_table ref, uint64_t v) {
  if (!v) return 0;
  if (is_streamed(ref)) return v + m->base[ref];
  return idmap_get(&m->ids[ref], v);
}

static int build_key(merger *m, hp_table t, const void *row) {
  const hp_table_desc *d = hp_table_describe(t);
  m->key.n = 0;
  for (const char *const *k = dedup_cols[t]; *k; k++) {
    for (size_t i = 0; i < d->ncolumns; i++) {
      const hp_column *c = &d->columns[i];
      if (strcmp(c->name, *k) != 0) continue;
      const char *p = (const char *)row + c->offset;
      int rc;
      if (c->type == HP_COL_STR) {
        const char *str = *(const char *const *)p;
        rc = buf_add(&m->key, str, strlen(str) + 1);
      } else {
        size_t w = (c->type == HP_COL_U32 || c->type == HP_COL_I32) ? 4 : 8;
        rc = buf_add(&m->key, p, w);
      }
      if (rc) return -1;
    }
  }
  return 0;
}

static hp_status fail_from(merger *m, hp_store *in, hp_status st) {
  hp_store *out = m->out;
  if (in && hp_store_error(in)[0])
    snprintf(out->error, sizeof out->error, "%s", hp_store_error(in));
  else
    snprintf(out->error, sizeof out->error, "%s: %s", in ? hp_store_path(in) : out->path, hp_status_str(st));
  return st;
}

static hp_status merge_table(merger *m, hp_store *in, hp_table t, hp_merge_stats *stats) {
  const hp_table_desc *d = hp_table_describe(t);
  hp_table refs[64]; /* table each column refers to, looked up once per table, not per row */
  for (size_t i = 0; i < d->ncolumns && i < 64; i++)
    refs[i] = d->columns[i].ref ? hp_table_from_name(d->columns[i].ref) : HP_TABLE_COUNT;
  hp_cursor *c;
  hp_status st = hp_cursor_open(in, t, &c);
  if (st != HP_OK) return fail_from(m, in, st);
  union {
    hp_dispatch d;
    hp_agent a;
    char any[256];
  } row;
  int has_id = strcmp(d->columns[0].name, "id") == 0;
  for (;;) {
    hp_row_init(t, &row);
    st = hp_cursor_next(c, &row);
    if (st == HP_END) {
      st = HP_OK;
      break;
    }
    if (st != HP_OK) {
      fail_from(m, in, st);
      break;
    }
    if (stats) stats->rows_in[t]++;
    /* remap every reference column */
    for (size_t i = 0; i < d->ncolumns; i++) {
      if (refs[i] == HP_TABLE_COUNT) continue;
      uint64_t *p = u64_at(&row, &d->columns[i]);
      *p = remap_ref(m, refs[i], *p);
    }
    uint64_t in_id = has_id ? *u64_at(&row, &d->columns[0]) : 0;
    if (is_streamed(t)) {
      if (has_id) {
        uint64_t out_id = in_id + m->base[t];
        *u64_at(&row, &d->columns[0]) = out_id;
        if (out_id > m->max_id[t]) m->max_id[t] = out_id;
      }
    } else {
      uint64_t found = 0;
      if (dedup_cols[t][0]) {
        if (build_key(m, t, &row)) {
          st = HP_ERR_NOMEM;
          break;
        }
        found = keymap_get(&m->dedup[t], m->key.p, m->key.n);
      }
      if (found) { /* the same row is already in the output: map to it, write nothing */
        if (has_id && idmap_put(&m->ids[t], in_id, found)) st = HP_ERR_NOMEM;
        if (st != HP_OK) break;
        continue;
      }
      uint64_t out_id = ++m->next_id[t];
      if (has_id) {
        *u64_at(&row, &d->columns[0]) = out_id;
        if (idmap_put(&m->ids[t], in_id, out_id)) {
          st = HP_ERR_NOMEM;
          break;
        }
      }
      if (dedup_cols[t][0] && keymap_put(&m->dedup[t], m->key.p, m->key.n, out_id)) {
        st = HP_ERR_NOMEM;
        break;
      }
    }
    st = hp_write(m->out, t, &row);
    if (st != HP_OK) break; /* the output's message is already set */
    if (stats) stats->rows_out[t]++;
  }
  hp_cursor_close(c);
  if (st == HP_ERR_NOMEM) hp_set_error(m->out, st, "out of memory while merging %s", hp_store_path(in));
  return st;
}

/* ---- the merge loop ---- */
hp_status hp_merge(hp_store *out, hp_store *const *in, size_t n, hp_merge_stats *stats) {
  if (!out || (n && !in) || out->mode == HP_READ) return HP_ERR_INVALID;
  if (stats) {
    memset(stats, 0, sizeof *stats);
    stats->size = sizeof *stats;
  }
  merger *m = calloc(1, sizeof *m);
  if (!m) return HP_ERR_NOMEM;
  m->out = out;
  hp_status st = HP_OK;
  for (size_t i = 0; i < n && st == HP_OK; i++) {
    if (!in[i] || in[i]->mode != HP_READ) {
      st = HP_ERR_INVALID;
      break;
    }
    if (stats) {
      stats->inputs++;
      if (hp_store_damage(in[i], NULL) != HP_OK) stats->damaged_inputs++;
    }
    for (int t = 0; t < HP_TABLE_COUNT; t++) {
      idmap_clear(&m->ids[t]);
      m->base[t] = m->max_id[t];
    }
    for (int t = 0; t < HP_TABLE_COUNT && st == HP_OK; t++)
      st = merge_table(m, in[i], (hp_table)t, stats);
  }
  for (int t = 0; t < HP_TABLE_COUNT; t++) {
    idmap_clear(&m->ids[t]);
    keymap_clear(&m->dedup[t]);
  }
  free(m->key.p);
  free(m);
  if (st != HP_OK && out->first_error == HP_OK) out->first_error = st;
  return st;
}
