/* Parquet table writer: buffers one row group of one hub table column by column, then encodes each
 * column chunk (dictionary page + RLE_DICTIONARY data pages when that is smaller, PLAIN otherwise; NULLs of
 * nullable columns as definition levels), compresses every page with ZSTD, and writes the footer (Thrift
 * FileMetaData, with the dataset schema of parquet_schema.c) when a file is closed. Files go to
 * <store>/<table>/part-NNNNN.parquet. Memory: one row group per table. Files roll over after a number of row
 * groups or bytes.
 * Sections: state · buffering rows · dictionary · statistics · pages · row groups · footer · files. */
/* SPDX-License-Identifier: MIT */
#include "parquet_fmt.h"
#include "parquet_internal.h"

#include "../common/hu_hash.h"
#include "../common/hu_io.h"
#include "../common/hu_json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PAGE_BYTES (1u << 20) /* plain-encoded bytes per data page, about */
#define PAGE_ROWS (1u << 20)  /* values per data page at most */
#define DICT_BYTES (1u << 20) /* plain-encoded bytes of a dictionary at most */
#define STAT_MAX_LEN 128      /* longer string min/max are left out of the statistics */

/* ---- state ---- */
typedef struct pq_cmeta {
  uint64_t dict_off;        /* offset of the dictionary page, 0 when none */
  uint64_t data_off;        /* offset of the first data page */
  uint64_t uncomp, comp;    /* total sizes of the pages, headers included */
  uint64_t nvals;           /* values */
  uint32_t data_pages;      /* data pages written */
  int dict;                 /* dictionary-encoded */
  int has_minmax;           /* min/max present */
  unsigned char *min, *max; /* plain-encoded min/max (strings without length), malloc'd */
  size_t minn, maxn;
  uint64_t nan_count;  /* doubles only */
  uint64_t null_count; /* NULLs (nullable columns) */
} pq_cmeta;

typedef struct pq_rgmeta {
  uint64_t rows;
  uint64_t offset;       /* first byte of its first column chunk */
  uint64_t uncomp, comp; /* totals over its column chunks */
  pq_cmeta *c;           /* one per column */
} pq_rgmeta;

struct pq_twriter {
  hp_store *s;     /* for error messages */
  const char *dir; /* the store's temporary directory (owned by the store) */
  hp_table t;
  const hp_table_desc *d;
  const pq_colspec *spec[PQ_MAX_COLUMNS]; /* how each column is stored */
  pq_limits lim;
  /* the row group being buffered */
  uint64_t **val;  /* per column: values (integers widened, doubles as bits) or string offsets */
  uint32_t **slen; /* per string column: string lengths */
  hu_buf *str;     /* per column: string bytes (string columns only) */
  size_t rows, cap;
  uint64_t raw; /* buffered bytes, about */
  /* small tables: a row written again with the same key (first column) replaces the earlier one */
  int small;      /* every table but dispatch, counter_value and region; held whole until commit */
  uint32_t *keys; /* hash table of buffered rows by key (row + 1, 0 = empty) */
  size_t keycap;
  /* the file being written */
  int fd;                  /* -1 when none is open */
  char fname[PQ_NAME_MAX]; /* its name, relative to the store: <table>[/<partition>]/part-NNNNN.parquet */
  char part[96];           /* the Hive partition folder of the rows being buffered ("node=1/process=2"), "" */
  uint64_t fpos;           /* bytes written to it */
  uint64_t frows;          /* rows in it */
  pq_rgmeta *rgs;          /* its row groups */
  size_t nrg, caprg;
  unsigned file_no;    /* number of the next file to start, 0-based */
  uint32_t footer_crc; /* of the footer just written */
  /* files closed so far */
  pq_file_entry *files;
  size_t nfiles, capfiles;
  /* scratch, reused between chunks */
  ZSTD_CCtx *cctx;
  hu_buf plain, comp, chunk;
  uint32_t *idx;  /* dictionary index of each row */
  uint32_t *dent; /* dictionary entry k = row dent[k] */
  uint32_t *ht;   /* hash table of dictionary entries (k + 1, 0 = empty) */
  size_t htcap, idxcap, dentcap;
  uint32_t *nn;   /* rows whose value is not NULL, of a nullable column */
  uint32_t *defs; /* definition level of each row (0 NULL, 1 value) */
  size_t nncap;
};

static hp_status oom(pq_twriter *w) {
  return hp_set_error(w->s, HP_ERR_NOMEM, "%s: out of memory", w->d->name);
}

hp_status pq_twriter_new(hp_store *s, const char *dir, hp_table t, const pq_limits *lim, pq_twriter **out) {
  *out = NULL;
  pq_twriter *w = calloc(1, sizeof *w);
  if (!w) return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  w->s = s;
  w->dir = dir;
  w->t = t;
  w->d = hp_table_describe(t);
  if (w->d->ncolumns > PQ_MAX_COLUMNS) {
    free(w);
    return hp_set_error(s, HP_ERR_INVALID, "%s: too many columns", hp_table_describe(t)->name);
  }
  for (size_t c = 0; c < w->d->ncolumns; c++)
    w->spec[c] = pq_colspec_of(t, c);
  w->lim = *lim;
  w->fd = -1;
  w->small = !hp_table_streamed(t);
  w->val = calloc(w->d->ncolumns, sizeof *w->val);
  w->slen = calloc(w->d->ncolumns, sizeof *w->slen);
  w->str = calloc(w->d->ncolumns, sizeof *w->str);
  w->cctx = ZSTD_createCCtx();
  if (!w->val || !w->slen || !w->str || !w->cctx) {
    pq_twriter_free(w);
    return hp_set_error(s, HP_ERR_NOMEM, "out of memory");
  }
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, lim->zstd_level);
  ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1); /* every page carries a checksum */
  *out = w;
  return HP_OK;
}

static void free_rgs(pq_twriter *w) {
  for (size_t i = 0; i < w->nrg; i++) {
    for (size_t c = 0; c < w->d->ncolumns; c++) {
      free(w->rgs[i].c[c].min);
      free(w->rgs[i].c[c].max);
    }
    free(w->rgs[i].c);
  }
  free(w->rgs);
  w->rgs = NULL;
  w->nrg = w->caprg = 0;
}

void pq_twriter_free(pq_twriter *w) {
  if (!w) return;
  if (w->fd >= 0) close(w->fd);
  for (size_t c = 0; w->val && c < w->d->ncolumns; c++)
    free(w->val[c]);
  for (size_t c = 0; w->slen && c < w->d->ncolumns; c++)
    free(w->slen[c]);
  free(w->slen);
  free(w->keys);
  for (size_t c = 0; w->str && c < w->d->ncolumns; c++)
    hu_buf_free(&w->str[c]);
  free(w->val);
  free(w->str);
  free_rgs(w);
  free(w->files);
  ZSTD_freeCCtx(w->cctx);
  hu_buf_free(&w->plain);
  hu_buf_free(&w->comp);
  hu_buf_free(&w->chunk);
  free(w->idx);
  free(w->dent);
  free(w->ht);
  free(w->nn);
  free(w->defs);
  free(w);
}

/* ---- buffering rows ---- */
static hp_status flush_rowgroup(pq_twriter *w);
static hp_status finish_file(pq_twriter *w);

/* String i of column c (length in *n). */
static const unsigned char *str_at(const pq_twriter *w, size_t c, size_t i, size_t *n) {
  static const unsigned char none[1];
  *n = w->slen[c][i];
  return w->str[c].p ? w->str[c].p + w->val[c][i] : none; /* no bytes yet: every string is empty */
}

/* Key (first column) of a row struct, and of buffered row i. */
static uint64_t row_key_hash(const pq_twriter *w, const void *row) {
  const hp_column *k = &w->d->columns[0];
  const char *p = (const char *)row + k->offset;
  if (k->type == HP_COL_STR) {
    const char *sv = *(const char *const *)p;
    return hu_hash_bytes((const unsigned char *)sv, strlen(sv));
  }
  uint64_t v;
  memcpy(&v, p, 8);
  return hu_mix64(v);
}

static int same_key(const pq_twriter *w, const void *row, size_t i) {
  const hp_column *k = &w->d->columns[0];
  const char *p = (const char *)row + k->offset;
  if (k->type == HP_COL_STR) {
    const char *sv = *(const char *const *)p;
    size_t n;
    const unsigned char *b = str_at(w, 0, i, &n);
    return strlen(sv) == n && memcmp(sv, b, n) == 0;
  }
  uint64_t v;
  memcpy(&v, p, 8);
  return w->val[0][i] == v;
}

static uint64_t buffered_key_hash(const pq_twriter *w, size_t i) {
  if (w->d->columns[0].type == HP_COL_STR) {
    size_t n;
    const unsigned char *b = str_at(w, 0, i, &n);
    return hu_hash_bytes(b, n);
  }
  return hu_mix64(w->val[0][i]);
}

/* Slot of the row's key in w->keys: holding the buffered row (value - 1), or empty. */
static size_t key_slot(const pq_twriter *w, const void *row, uint64_t h) {
  size_t mask = w->keycap - 1, slot = (size_t)h & mask;
  while (w->keys[slot] && !same_key(w, row, w->keys[slot] - 1))
    slot = (slot + 1) & mask;
  return slot;
}

static int keys_grow(pq_twriter *w) {
  size_t cap = w->keycap ? w->keycap * 2 : 1024;
  uint32_t *k = calloc(cap, sizeof *k);
  if (!k) return -1;
  free(w->keys);
  w->keys = k;
  w->keycap = cap;
  for (size_t i = 0; i < w->rows; i++) {
    size_t slot = (size_t)buffered_key_hash(w, i) & (cap - 1);
    while (k[slot])
      slot = (slot + 1) & (cap - 1);
    k[slot] = (uint32_t)i + 1;
  }
  return 0;
}

hp_status pq_twriter_add(pq_twriter *w, const void *row) {
  const hp_table_desc *d = w->d;
  size_t at = w->rows, slot = 0;
  if (w->small) {
    if (w->rows >= UINT32_MAX - 1) return hp_set_error(w->s, HP_ERR_INVALID, "%s: too many rows", d->name);
    if (2 * (w->rows + 1) > w->keycap && keys_grow(w)) return oom(w);
    slot = key_slot(w, row, row_key_hash(w, row));
    if (w->keys[slot]) at = w->keys[slot] - 1; /* written again: replaces the earlier row in place */
  }
  if (at == w->rows && w->rows == w->cap) {
    size_t nc = w->cap ? w->cap * 2 : 1024;
    if (!w->small && nc > w->lim.rg_rows) nc = (size_t)w->lim.rg_rows;
    for (size_t c = 0; c < d->ncolumns; c++) {
      uint64_t *v = realloc(w->val[c], nc * sizeof *v);
      if (!v) return oom(w);
      w->val[c] = v;
      if (d->columns[c].type != HP_COL_STR) continue;
      uint32_t *l = realloc(w->slen[c], nc * sizeof *l);
      if (!l) return oom(w);
      w->slen[c] = l;
    }
    w->cap = nc;
  }
  for (size_t c = 0; c < d->ncolumns; c++) {
    const hp_column *col = &d->columns[c];
    const char *p = (const char *)row + col->offset;
    uint64_t v = 0;
    switch (col->type) {
    case HP_COL_U32: v = *(const uint32_t *)p; break;
    case HP_COL_I32: v = (uint64_t)(int64_t) * (const int32_t *)p; break;
    case HP_COL_U64:
    case HP_COL_I64:
    case HP_COL_F64: memcpy(&v, p, 8); break;
    case HP_COL_STR: {
      const char *sv = *(const char *const *)p;
      size_t len = strlen(sv);
      if (len > INT32_MAX / 2)
        return hp_set_error(w->s, HP_ERR_INVALID, "%s: string of %zu bytes in column %s is too long", d->name,
                            len, col->name);
      v = w->str[c].n;
      hu_buf_put(&w->str[c], sv, len);
      if (w->str[c].oom) return oom(w);
      w->slen[c][at] = (uint32_t)len;
      w->raw += len;
      break;
    }
    }
    w->val[c][at] = v;
  }
  w->raw += 8 * d->ncolumns;
  if (at < w->rows) return HP_OK;
  w->rows++;
  if (w->small) {
    w->keys[slot] = (uint32_t)w->rows;
    return HP_OK; /* flushed at commit, in one row group */
  }
  if (w->rows >= w->lim.rg_rows || w->raw >= w->lim.rg_bytes) return flush_rowgroup(w);
  return HP_OK;
}

/* ---- dictionary ---- */
/* Dictionary-encode column c of the buffered rows rows[0..n) (0..n when rows is NULL) when it pays: fills
 * w->idx (per position) and w->dent (rows) and returns the number of entries, or 0 when plain encoding is
 * better (too many distinct values), -1 out of memory. */
static long build_dict(pq_twriter *w, size_t c, const uint32_t *rows, size_t n) {
  const hp_column *col = &w->d->columns[c];
  size_t maxent = n / 4;
  int is_str = col->type == HP_COL_STR;
  if (!is_str && maxent > DICT_BYTES / pq_col_width(col->type)) maxent = DICT_BYTES / pq_col_width(col->type);
  if (maxent < 1) return 0;
  size_t cap = 16;
  while (cap < 2 * maxent)
    cap *= 2;
  if (cap > w->htcap) {
    uint32_t *ht = realloc(w->ht, cap * sizeof *ht);
    if (!ht) return -1;
    w->ht = ht;
    w->htcap = cap;
  }
  if (n > w->idxcap) {
    uint32_t *idx = realloc(w->idx, n * sizeof *idx);
    if (!idx) return -1;
    w->idx = idx;
    w->idxcap = n;
  }
  if (maxent > w->dentcap) {
    uint32_t *dent = realloc(w->dent, maxent * sizeof *dent);
    if (!dent) return -1;
    w->dent = dent;
    w->dentcap = maxent;
  }
  memset(w->ht, 0, cap * sizeof *w->ht);
  size_t mask = cap - 1, nd = 0;
  uint64_t dbytes = 0;
  const uint64_t *v = w->val[c];
  for (size_t k = 0; k < n; k++) {
    size_t i = rows ? rows[k] : k;
    const unsigned char *sp = NULL;
    size_t sn = 0;
    uint64_t h;
    if (is_str) {
      sp = str_at(w, c, i, &sn);
      h = hu_hash_bytes(sp, sn);
    } else {
      h = hu_mix64(v[i]);
    }
    size_t slot = (size_t)h & mask;
    for (;;) {
      uint32_t e = w->ht[slot];
      if (!e) break;
      size_t r = w->dent[e - 1];
      if (is_str) {
        size_t rn;
        const unsigned char *rp = str_at(w, c, r, &rn);
        if (rn == sn && memcmp(rp, sp, sn) == 0) break;
      } else if (v[r] == v[i]) {
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (!w->ht[slot]) {
      if (nd == maxent) return 0;
      dbytes += is_str ? 4 + sn : pq_col_width(col->type);
      if (dbytes > DICT_BYTES) return 0;
      w->dent[nd] = (uint32_t)i;
      w->ht[slot] = (uint32_t)++nd;
    }
    w->idx[k] = w->ht[slot] - 1;
  }
  return (long)nd;
}

/* ---- statistics ---- */
/* Is value of row a < row b in the order of the column's physical type (signed integers, bytes)? */
static int less(const pq_twriter *w, size_t c, size_t a, size_t b) {
  const uint64_t *v = w->val[c];
  if (w->spec[c]->phys == PQ_INT32) return (int32_t)(uint32_t)v[a] < (int32_t)(uint32_t)v[b];
  if (w->spec[c]->phys == PQ_BOOLEAN) return (v[a] != 0) < (v[b] != 0);
  switch (w->d->columns[c].type) {
  case HP_COL_U32:
  case HP_COL_U64:
  case HP_COL_I32:
  case HP_COL_I64: return (int64_t)v[a] < (int64_t)v[b];
  case HP_COL_F64: {
    double x, y;
    memcpy(&x, &v[a], 8);
    memcpy(&y, &v[b], 8);
    return x < y;
  }
  case HP_COL_STR: {
    size_t an, bn;
    const unsigned char *ap = str_at(w, c, a, &an), *bp = str_at(w, c, b, &bn);
    int r = memcmp(ap, bp, an < bn ? an : bn);
    return r < 0 || (r == 0 && an < bn);
  }
  }
  return 0;
}

static unsigned char *plain_value(const pq_twriter *w, size_t c, size_t i, size_t *n) {
  const hp_column *col = &w->d->columns[c];
  const unsigned char *src;
  unsigned char tmp[8];
  if (col->type == HP_COL_STR) {
    src = str_at(w, c, i, n);
  } else if (w->spec[c]->phys == PQ_BOOLEAN) {
    *n = 1;
    tmp[0] = w->val[c][i] != 0;
    src = tmp;
  } else {
    *n = pq_col_width(col->type);
    for (size_t k = 0; k < *n; k++)
      tmp[k] = (unsigned char)(w->val[c][i] >> (8 * k));
    src = tmp;
  }
  unsigned char *p = malloc(*n ? *n : 1);
  if (p && *n) memcpy(p, src, *n);
  return p;
}

/* Min and max over the rows rows[0..n) (or 0..n when rows is NULL) of column c; `entries` when rows are
 * dictionary entries (NaNs are then counted over every row). */
static int column_stats(pq_twriter *w, size_t c, const uint32_t *rows, size_t n, int entries, pq_cmeta *m) {
  const hp_column *col = &w->d->columns[c];
  size_t lo = SIZE_MAX, hi = SIZE_MAX;
  /* integers (1: INT32, signed; 2: 64-bit, signed): compared inline, in less()'s order, ties keeping the
   * first row; a call of less() per row and bound was most of the statistics' time */
  int ints = w->spec[c]->phys == PQ_INT32                         ? 1
             : w->spec[c]->phys == PQ_BOOLEAN                     ? 0
             : col->type == HP_COL_STR || col->type == HP_COL_F64 ? 0
                                                                  : 2;
  if (ints && n) {
    const uint64_t *v = w->val[c];
    lo = hi = rows ? rows[0] : 0;
    int64_t lx = ints == 1 ? (int32_t)(uint32_t)v[lo] : (int64_t)v[lo], hx = lx;
    for (size_t k = 1; k < n; k++) {
      size_t i = rows ? rows[k] : k;
      int64_t x = ints == 1 ? (int32_t)(uint32_t)v[i] : (int64_t)v[i];
      if (x < lx) lo = i, lx = x;
      if (hx < x) hi = i, hx = x;
    }
  }
  for (size_t k = 0; !ints && k < n; k++) {
    size_t i = rows ? rows[k] : k;
    if (col->type == HP_COL_F64) {
      double x;
      memcpy(&x, &w->val[c][i], 8);
      if (x != x) {
        m->nan_count++;
        continue;
      }
    }
    if (lo == SIZE_MAX || less(w, c, i, lo)) lo = i;
    if (hi == SIZE_MAX || less(w, c, hi, i)) hi = i;
  }
  if (lo == SIZE_MAX) return 0; /* no rows, or only NaNs */
  if (entries && col->type == HP_COL_F64) {
    /* nan_count counted dictionary entries: count rows instead */
    m->nan_count = 0;
    for (size_t i = 0; i < w->rows; i++) {
      double x;
      memcpy(&x, &w->val[c][i], 8);
      if (x != x) m->nan_count++;
    }
  }
  m->min = plain_value(w, c, lo, &m->minn);
  m->max = plain_value(w, c, hi, &m->maxn);
  if (!m->min || !m->max) return -1;
  if (col->type == HP_COL_STR && (m->minn > STAT_MAX_LEN || m->maxn > STAT_MAX_LEN)) {
    free(m->min);
    free(m->max);
    m->min = m->max = NULL;
    return 0;
  }
  if (col->type == HP_COL_F64) { /* the spec's rule for zeros: min -0.0, max +0.0 */
    double x;
    memcpy(&x, m->min, 8);
    if (x == 0) m->min[7] |= 0x80;
    memcpy(&x, m->max, 8);
    if (x == 0) m->max[7] &= 0x7f;
  }
  m->has_minmax = 1;
  return 0;
}

/* ---- pages ---- */
static void plain_put(pq_twriter *w, hu_buf *b, size_t c, size_t i) {
  const hp_column *col = &w->d->columns[c];
  switch (col->type) {
  case HP_COL_U32:
  case HP_COL_I32: hu_buf_le32(b, (uint32_t)w->val[c][i]); break;
  case HP_COL_U64:
  case HP_COL_I64:
  case HP_COL_F64: hu_buf_le64(b, w->val[c][i]); break;
  case HP_COL_STR: {
    size_t n;
    const unsigned char *p = str_at(w, c, i, &n);
    hu_buf_le32(b, (uint32_t)n);
    hu_buf_put(b, p, n);
    break;
  }
  }
}

/* Compress w->plain and append header + page to w->chunk. `dict` selects a dictionary page header. */
static hp_status put_page(pq_twriter *w, pq_cmeta *m, int dict, uint32_t nvals, int encoding) {
  if (w->plain.oom) return oom(w);
  if (w->plain.n > INT32_MAX)
    return hp_set_error(w->s, HP_ERR_INVALID, "%s: page of %zu bytes is too large", w->d->name, w->plain.n);
  w->comp.n = 0;
  size_t bound = ZSTD_compressBound(w->plain.n);
  if (hu_buf_reserve(&w->comp, bound)) return oom(w);
  size_t z = ZSTD_compress2(w->cctx, w->comp.p, bound, w->plain.p, w->plain.n);
  if (ZSTD_isError(z)) return hp_set_error(w->s, HP_ERR_IO, "%s: zstd: %s", w->d->name, ZSTD_getErrorName(z));
  if (z > INT32_MAX) return hp_set_error(w->s, HP_ERR_INVALID, "%s: page too large", w->d->name);
  size_t h0 = w->chunk.n;
  tc_writer tw;
  tc_init(&tw, &w->chunk);
  tc_i32(&tw, 1, dict ? PQ_PAGE_DICTIONARY : PQ_PAGE_DATA);
  tc_i32(&tw, 2, (int32_t)w->plain.n);
  tc_i32(&tw, 3, (int32_t)z);
  if (dict) {
    tc_struct_begin(&tw, 7);
    tc_i32(&tw, 1, (int32_t)nvals);
    tc_i32(&tw, 2, PQ_ENC_PLAIN);
    tc_struct_end(&tw);
  } else {
    tc_struct_begin(&tw, 5);
    tc_i32(&tw, 1, (int32_t)nvals);
    tc_i32(&tw, 2, encoding);
    tc_i32(&tw, 3, PQ_ENC_RLE);
    tc_i32(&tw, 4, PQ_ENC_RLE);
    tc_struct_end(&tw);
    m->data_pages++;
  }
  tc_stop(&tw);
  size_t hlen = w->chunk.n - h0;
  hu_buf_put(&w->chunk, w->comp.p, z);
  if (w->chunk.oom) return oom(w);
  m->uncomp += hlen + w->plain.n;
  m->comp += hlen + z;
  return HP_OK;
}

static size_t plain_size(const pq_twriter *w, size_t c, size_t i) {
  if (w->d->columns[c].type != HP_COL_STR) return pq_col_width(w->d->columns[c].type);
  size_t n;
  str_at(w, c, i, &n);
  return 4 + n;
}

static int bit_width(uint32_t maxv) {
  int b = 1; /* at least 1: some readers dislike a width of 0 */
  while (b < 32 && (maxv >> b))
    b++;
  return b;
}

/* Is buffered row i of column c unknown (NULL in the file)? Only for nullable columns. */
static int is_null(const pq_twriter *w, size_t c, size_t i) {
  if (w->d->columns[c].type == HP_COL_STR) return w->slen[c][i] == 0;
  if (w->d->columns[c].type == HP_COL_U32) return (uint32_t)w->val[c][i] == (uint32_t)w->spec[c]->null_value;
  return w->val[c][i] == (uint64_t)w->spec[c]->null_value;
}

/* Fill w->defs and w->nn for column c; returns the rows with a value, (size_t)-1 out of memory. */
static size_t nonnull_rows(pq_twriter *w, size_t c) {
  size_t n = w->rows, k = 0;
  if (n > w->nncap) {
    uint32_t *nn = realloc(w->nn, n * sizeof *nn);
    if (!nn) return (size_t)-1;
    w->nn = nn;
    uint32_t *defs = realloc(w->defs, n * sizeof *defs);
    if (!defs) return (size_t)-1;
    w->defs = defs;
    w->nncap = n;
  }
  for (size_t i = 0; i < n; i++) {
    w->defs[i] = !is_null(w, c, i);
    if (w->defs[i]) w->nn[k++] = (uint32_t)i;
  }
  return k;
}

/* Encode column c of the buffered rows into w->chunk; fill m (offsets relative to the chunk start). Values
 * of a nullable column equal to its null value are NULLs: a definition level 0 and no value. */
static hp_status encode_chunk(pq_twriter *w, size_t c, pq_cmeta *m) {
  size_t n = w->rows, nv = n;
  const pq_colspec *sp = w->spec[c];
  int boolean = sp->phys == PQ_BOOLEAN;
  const uint32_t *nn = NULL; /* rows with a value; NULL: every row */
  hp_status st;
  w->chunk.n = 0;
  memset(m, 0, sizeof *m);
  m->nvals = n;
  if (sp->nullable) {
    nv = nonnull_rows(w, c);
    if (nv == (size_t)-1) return oom(w);
    nn = w->nn;
    m->null_count = n - nv;
  }
  long nd = boolean ? 0 : build_dict(w, c, nn, nv);
  if (nd < 0) return oom(w);
  if (nd > 0) {
    m->dict = 1;
    w->plain.n = 0;
    for (long k = 0; k < nd; k++)
      plain_put(w, &w->plain, c, w->dent[k]);
    if ((st = put_page(w, m, 1, (uint32_t)nd, PQ_ENC_PLAIN)) != HP_OK) return st;
    m->data_off = w->chunk.n;
    if (column_stats(w, c, w->dent, (size_t)nd, 1, m)) return oom(w);
  } else {
    if (column_stats(w, c, nn, nv, 0, m)) return oom(w);
  }
  int bw = m->dict ? bit_width((uint32_t)(nd - 1)) : 0;
  size_t i = 0, k = 0; /* next row, and its position among the rows with a value */
  while (i < n) {
    size_t j = i, k2 = k, bytes = 0;
    while (j < n && j - i < PAGE_ROWS && bytes < PAGE_BYTES) {
      if (!nn || (k2 < nv && nn[k2] == j)) {
        bytes += plain_size(w, c, j);
        k2++;
      } else {
        bytes++;
      }
      j++;
    }
    w->plain.n = 0;
    if (nn) { /* definition levels: RLE hybrid of bit width 1 after its 4-byte length */
      size_t at = w->plain.n;
      hu_buf_le32(&w->plain, 0);
      pq_rle_encode(&w->plain, w->defs + i, j - i, 1);
      if (w->plain.oom) return oom(w);
      uint32_t len = (uint32_t)(w->plain.n - at - 4);
      for (int b = 0; b < 4; b++)
        w->plain.p[at + (size_t)b] = (unsigned char)(len >> (8 * b));
    }
    if (m->dict) {
      hu_buf_byte(&w->plain, (unsigned)bw);
      pq_rle_encode(&w->plain, w->idx + k, k2 - k, bw);
    } else if (boolean) { /* PLAIN booleans: bit-packed, least significant bit first */
      unsigned acc = 0;
      for (size_t q = k; q < k2; q++) {
        size_t r = nn ? nn[q] : q;
        acc |= (unsigned)(w->val[c][r] != 0) << ((q - k) % 8);
        if ((q - k) % 8 == 7 || q + 1 == k2) {
          hu_buf_byte(&w->plain, acc);
          acc = 0;
        }
      }
    } else {
      for (size_t q = k; q < k2; q++)
        plain_put(w, &w->plain, c, nn ? nn[q] : q);
    }
    if ((st = put_page(w, m, 0, (uint32_t)(j - i), m->dict ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN)) != HP_OK)
      return st;
    i = j;
    k = k2;
  }
  return HP_OK;
}

/* ---- files ---- */
static hp_status write_all(pq_twriter *w, const void *p, size_t n) {
  if (hu_write_all(w->fd, p, n))
    return hp_set_error(w->s, HP_ERR_IO, "%s: cannot write: %s", w->fname, strerror(errno));
  w->fpos += n;
  return HP_OK;
}

/* Create the folder dir/rel and the folders of rel above it (rel: "<table>" or "<table>/k=v/k=v"). */
static hp_status make_folders(pq_twriter *w, const char *rel) {
  char path[4096];
  size_t base = (size_t)snprintf(path, sizeof path, "%s/", w->dir);
  if (base + strlen(rel) >= sizeof path) return hp_set_error(w->s, HP_ERR_INVALID, "%s: path too long", rel);
  strcpy(path + base, rel);
  for (char *c = path + base;; c++) {
    if (*c != '/' && *c) continue;
    char end = *c;
    *c = 0;
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
      return hp_set_error(w->s, HP_ERR_IO, "%s: cannot create: %s", path + base, strerror(errno));
    *c = end;
    if (!end) return HP_OK;
  }
}

void pq_twriter_first_file(pq_twriter *w, unsigned first) { w->file_no = first; }

hp_status pq_twriter_partition(pq_twriter *w, const char *part) {
  if (strcmp(part, w->part) == 0) return HP_OK;
  if (strlen(part) >= sizeof w->part)
    return hp_set_error(w->s, HP_ERR_INVALID, "%s: partition too long", part);
  hp_status st = flush_rowgroup(w); /* the rows buffered so far belong to the old partition's file */
  if (st == HP_OK) st = finish_file(w);
  if (st == HP_OK) snprintf(w->part, sizeof w->part, "%s", part);
  return st;
}

static hp_status open_file(pq_twriter *w) {
  char path[4096];
  char folder[PQ_NAME_MAX];
  if (snprintf(folder, sizeof folder, "%s%s%s", w->d->name, w->part[0] ? "/" : "", w->part) >=
      (int)sizeof folder)
    return hp_set_error(w->s, HP_ERR_INVALID, "%s: partition too long", w->part);
  hp_status st = make_folders(w, folder);
  if (st != HP_OK) return st;
  if (snprintf(w->fname, sizeof w->fname, "%s/part-%05u.parquet", folder, w->file_no++) >=
      (int)sizeof w->fname)
    return hp_set_error(w->s, HP_ERR_INVALID, "%s: partition too long", w->part);
  snprintf(path, sizeof path, "%s/%s", w->dir, w->fname);
  w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (w->fd < 0) return hp_set_error(w->s, HP_ERR_IO, "%s: cannot create: %s", w->fname, strerror(errno));
  w->fpos = 0;
  w->frows = 0;
  return write_all(w, "PAR1", 4);
}

/* ---- row groups ---- */
static hp_status flush_rowgroup(pq_twriter *w) {
  if (!w->rows) return HP_OK;
  hp_status st;
  if (w->fd < 0 && (st = open_file(w)) != HP_OK) return st;
  if (w->nrg == w->caprg) {
    size_t nc = w->caprg ? w->caprg * 2 : 8;
    pq_rgmeta *r = realloc(w->rgs, nc * sizeof *r);
    if (!r) return oom(w);
    w->rgs = r;
    w->caprg = nc;
  }
  pq_rgmeta *rg = &w->rgs[w->nrg];
  memset(rg, 0, sizeof *rg);
  rg->c = calloc(w->d->ncolumns, sizeof *rg->c);
  if (!rg->c) return oom(w);
  w->nrg++;
  rg->rows = w->rows;
  rg->offset = w->fpos;
  for (size_t c = 0; c < w->d->ncolumns; c++) {
    pq_cmeta *m = &rg->c[c];
    if ((st = encode_chunk(w, c, m)) != HP_OK) return st;
    uint64_t start = w->fpos;
    if ((st = write_all(w, w->chunk.p, w->chunk.n)) != HP_OK) return st;
    if (m->dict) m->dict_off = start;
    m->data_off += start;
    rg->uncomp += m->uncomp;
    rg->comp += m->comp;
  }
  w->frows += w->rows;
  w->rows = 0;
  w->raw = 0;
  if (w->keys) memset(w->keys, 0, w->keycap * sizeof *w->keys);
  for (size_t c = 0; c < w->d->ncolumns; c++)
    w->str[c].n = 0;
  if (w->nrg >= w->lim.file_rgs || w->fpos >= w->lim.file_bytes) return finish_file(w);
  return HP_OK;
}

/* ---- footer ---- */
static void write_schema_leaf(tc_writer *tw, const hp_column *col, const pq_colspec *sp) {
  tc_elem_struct_begin(tw);
  tc_i32(tw, 1, sp->phys);
  tc_i32(tw, 3, sp->nullable ? PQ_OPTIONAL : PQ_REQUIRED);
  tc_binary(tw, 4, sp->name, strlen(sp->name));
  if (col->type == HP_COL_STR) {
    tc_i32(tw, 6, PQ_CT_UTF8);
    tc_struct_begin(tw, 10); /* LogicalType */
    tc_struct_begin(tw, 1);  /* STRING */
    tc_struct_end(tw);
    tc_struct_end(tw);
  } /* INT32 and INT64 are signed numbers as they are; times are INT64 nanoseconds of a monotonic clock,
       not TIMESTAMP (docs/formats/parquet.md says why); BOOLEAN and DOUBLE need no annotation */
  tc_struct_end(tw);
}

static void write_chunk_meta(tc_writer *tw, const hp_column *col, const pq_colspec *sp, const pq_cmeta *m) {
  tc_elem_struct_begin(tw); /* ColumnChunk */
  tc_i64(tw, 2, 0);         /* file_offset: deprecated, 0 */
  tc_struct_begin(tw, 3);   /* ColumnMetaData */
  tc_i32(tw, 1, sp->phys);
  if (m->dict) {
    tc_list_begin(tw, 2, TC_I32, 3);
    tc_elem_i32(tw, PQ_ENC_PLAIN);
    tc_elem_i32(tw, PQ_ENC_RLE);
    tc_elem_i32(tw, PQ_ENC_RLE_DICTIONARY);
  } else {
    tc_list_begin(tw, 2, TC_I32, 2);
    tc_elem_i32(tw, PQ_ENC_PLAIN);
    tc_elem_i32(tw, PQ_ENC_RLE);
  }
  tc_list_begin(tw, 3, TC_BINARY, 1);
  tc_elem_binary(tw, sp->name, strlen(sp->name));
  tc_i32(tw, 4, PQ_CODEC_ZSTD);
  tc_i64(tw, 5, (int64_t)m->nvals);
  tc_i64(tw, 6, (int64_t)m->uncomp);
  tc_i64(tw, 7, (int64_t)m->comp);
  tc_i64(tw, 9, (int64_t)m->data_off);
  if (m->dict) tc_i64(tw, 11, (int64_t)m->dict_off);
  tc_struct_begin(tw, 12); /* Statistics */
  tc_i64(tw, 3, (int64_t)m->null_count);
  if (m->has_minmax) {
    tc_binary(tw, 5, m->max, m->maxn);
    tc_binary(tw, 6, m->min, m->minn);
  }
  if (col->type == HP_COL_F64) tc_i64(tw, 9, (int64_t)m->nan_count);
  tc_struct_end(tw);
  tc_list_begin(tw, 13, TC_STRUCT, m->dict ? 2 : 1); /* encoding_stats */
  if (m->dict) {
    tc_elem_struct_begin(tw);
    tc_i32(tw, 1, PQ_PAGE_DICTIONARY);
    tc_i32(tw, 2, PQ_ENC_PLAIN);
    tc_i32(tw, 3, 1);
    tc_struct_end(tw);
  }
  tc_elem_struct_begin(tw);
  tc_i32(tw, 1, PQ_PAGE_DATA);
  tc_i32(tw, 2, m->dict ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN);
  tc_i32(tw, 3, (int32_t)m->data_pages);
  tc_struct_end(tw);
  tc_struct_end(tw); /* ColumnMetaData */
  tc_struct_end(tw); /* ColumnChunk */
}

static void kv(tc_writer *tw, const char *k, const char *v) {
  tc_elem_struct_begin(tw);
  tc_binary(tw, 1, k, strlen(k));
  tc_binary(tw, 2, v, strlen(v));
  tc_struct_end(tw);
}

/* The columns' units, descriptions and NULL rules as JSON in w->comp (NUL-terminated), for the key
 * "hubprof.columns": {"<column>": {"unit": "ns", "description": "...", "null": 0, "flag": false,
 * "hub_name": "..."}, ...}.
 * Returns -1 out of memory. */
static int columns_json(pq_twriter *w) {
  hu_buf *b = &w->comp;
  b->n = 0;
  hu_buf_byte(b, '{');
  for (size_t c = 0; c < w->d->ncolumns; c++) {
    const pq_colspec *sp = w->spec[c];
    hu_buf_str(b, c ? ", " : "");
    hu_json_put_str(b, sp->name);
    hu_buf_str(b, ": {\"unit\": ");
    if (sp->unit)
      hu_json_put_str(b, sp->unit);
    else
      hu_buf_str(b, "null");
    hu_buf_str(b, ", \"description\": ");
    hu_json_put_str(b, sp->desc);
    hu_buf_str(b, ", \"null\": ");
    if (!sp->nullable)
      hu_buf_str(b, "null");
    else if (w->d->columns[c].type == HP_COL_STR)
      hu_buf_str(b, "\"\"");
    else
      hu_buf_printf(b, "%lld", (long long)sp->null_value);
    hu_buf_str(b, sp->phys == PQ_BOOLEAN ? ", \"flag\": true" : ", \"flag\": false");
    hu_buf_str(b, ", \"hub_name\": ");
    hu_json_put_str(b, w->d->columns[c].name);
    hu_buf_byte(b, '}');
  }
  hu_buf_str(b, "}");
  hu_buf_byte(b, 0);
  return b->oom ? -1 : 0;
}

static hp_status write_footer(pq_twriter *w) {
  const hp_table_desc *d = w->d;
  hu_buf *b = &w->chunk;
  b->n = 0;
  tc_writer tw;
  tc_init(&tw, b);
  tc_i32(&tw, 1, 2); /* version */
  tc_list_begin(&tw, 2, TC_STRUCT, d->ncolumns + 1);
  tc_elem_struct_begin(&tw);
  tc_binary(&tw, 4, "schema", 6);
  tc_i32(&tw, 5, (int32_t)d->ncolumns);
  tc_struct_end(&tw);
  for (size_t c = 0; c < d->ncolumns; c++)
    write_schema_leaf(&tw, &d->columns[c], w->spec[c]);
  tc_i64(&tw, 3, (int64_t)w->frows);
  tc_list_begin(&tw, 4, TC_STRUCT, w->nrg);
  for (size_t r = 0; r < w->nrg; r++) {
    const pq_rgmeta *rg = &w->rgs[r];
    tc_elem_struct_begin(&tw);
    tc_list_begin(&tw, 1, TC_STRUCT, d->ncolumns);
    for (size_t c = 0; c < d->ncolumns; c++)
      write_chunk_meta(&tw, &d->columns[c], w->spec[c], &rg->c[c]);
    tc_i64(&tw, 2, (int64_t)rg->uncomp);
    tc_i64(&tw, 3, (int64_t)rg->rows);
    tc_i64(&tw, 5, (int64_t)rg->offset);
    tc_i64(&tw, 6, (int64_t)rg->comp);
    tc_struct_end(&tw);
  }
  tc_list_begin(&tw, 5, TC_STRUCT, 4); /* key_value_metadata */
  kv(&tw, "hubprof.table", d->name);
  kv(&tw, "hubprof.schema_version", PQ_SCHEMA_VERSION);
  kv(&tw, "hubprof.time_unit", "ns");
  if (columns_json(w)) return oom(w);
  kv(&tw, "hubprof.columns", (const char *)w->comp.p);
  char by[96];
  snprintf(by, sizeof by, "hubprof version %s (build hubprof)", hp_version());
  tc_binary(&tw, 6, by, strlen(by));
  tc_list_begin(&tw, 7, TC_STRUCT, d->ncolumns); /* column_orders: TypeDefinedOrder for each */
  for (size_t c = 0; c < d->ncolumns; c++) {
    tc_elem_struct_begin(&tw);
    tc_struct_begin(&tw, 1);
    tc_struct_end(&tw);
    tc_struct_end(&tw);
  }
  tc_stop(&tw);
  if (b->oom) return oom(w);
  if (b->n > UINT32_MAX) return hp_set_error(w->s, HP_ERR_INVALID, "%s: footer too large", w->fname);
  uint32_t len = (uint32_t)b->n;
  hu_buf_le32(b, len);
  hu_buf_put(b, "PAR1", 4);
  if (b->oom) return oom(w);
  w->footer_crc = hp_crc32c(0, b->p, b->n);
  return write_all(w, b->p, b->n);
}

/* Close the open file: footer, sync, record it. */
static hp_status finish_file(pq_twriter *w) {
  if (w->fd < 0) return HP_OK;
  hp_status st = write_footer(w);
  if (st == HP_OK && fsync(w->fd) != 0)
    st = hp_set_error(w->s, HP_ERR_IO, "%s: cannot sync: %s", w->fname, strerror(errno));
  if (close(w->fd) != 0 && st == HP_OK)
    st = hp_set_error(w->s, HP_ERR_IO, "%s: cannot close: %s", w->fname, strerror(errno));
  w->fd = -1;
  if (st != HP_OK) return st;
  if (w->nfiles == w->capfiles) {
    size_t nc = w->capfiles ? w->capfiles * 2 : 4;
    pq_file_entry *f = realloc(w->files, nc * sizeof *f);
    if (!f) return oom(w);
    w->files = f;
    w->capfiles = nc;
  }
  pq_file_entry *e = &w->files[w->nfiles++];
  snprintf(e->name, sizeof e->name, "%s", w->fname);
  e->rows = w->frows;
  e->bytes = w->fpos;
  e->footer_crc = w->footer_crc;
  free_rgs(w);
  return HP_OK;
}

hp_status pq_twriter_finish(pq_twriter *w, const pq_file_entry **files, size_t *n) {
  hp_status st = flush_rowgroup(w);
  if (st == HP_OK && w->fd < 0 && w->nfiles == 0) st = open_file(w); /* an empty table: a file without rows */
  if (st == HP_OK) st = finish_file(w);
  if (st != HP_OK) return st;
  *files = w->files;
  *n = w->nfiles;
  return HP_OK;
}
