/* Parquet table reader: checks a file's magic and footer (Thrift FileMetaData) against its size and the
 * hub table it should hold, then streams rows: one row group at a time, one page per column at a time,
 * decoding PLAIN and RLE_DICTIONARY pages (ZSTD or uncompressed, REQUIRED or OPTIONAL flat columns).
 * Nothing read from a file is trusted: every offset, length and count is bounded before use.
 * Sections: footer · column readers · pages · cursor. */
/* SPDX-License-Identifier: MIT */
#include "parquet_fmt.h"
#include "parquet_internal.h"

#include "../common/hu_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* ---- footer ---- */
typedef struct leaf {
  const unsigned char *name; /* not NUL-terminated */
  size_t namelen;
  int type;       /* physical type, -1 when absent */
  int repetition; /* PQ_REQUIRED, PQ_OPTIONAL, PQ_REPEATED; -1 when absent */
  int hubcol;     /* index of the hub column it fills, -1 when none */
} leaf;

typedef struct footer_ctx {
  const hp_table_desc *d;
  char *err;
  size_t errlen;
  uint64_t data_end; /* first byte of the footer: column chunks end before it */
  leaf *leaves;
  size_t nleaves;
  int colleaf[64]; /* leaf of each hub column, -1 when the file lacks it */
  hp_status st;
} footer_ctx;

static const char *phys_name(int t) {
  static const char *n[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                            "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return t >= 0 && t < 8 ? n[t] : "unknown";
}

static int bad(footer_ctx *x, hp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(footer_ctx *x, hp_status st, const char *fmt, ...) {
  if (x->st == HP_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, x->errlen, fmt, ap);
    va_end(ap);
    x->st = st;
  }
  return -1;
}

static int parse_schema(footer_ctx *x, tc_reader *r) {
  int et;
  size_t n;
  tc_read_list(r, &et, &n);
  if (r->err || et != TC_STRUCT || n < 1) return bad(x, HP_ERR_CORRUPT, "bad metadata: bad schema list");
  x->leaves = calloc(n, sizeof *x->leaves);
  if (!x->leaves) return bad(x, HP_ERR_NOMEM, "out of memory");
  int64_t root_children = -1;
  for (size_t i = 0; i < n; i++) {
    leaf lf = {NULL, 0, -1, -1, -1};
    int64_t children = -1;
    int16_t last = 0, id;
    int ft;
    int has_name = 0;
    while (tc_field(r, &last, &ft, &id)) {
      if (id == 1 && ft == TC_I32)
        lf.type = (int)tc_read_int(r, ft);
      else if (id == 3 && ft == TC_I32)
        lf.repetition = (int)tc_read_int(r, ft);
      else if (id == 4 && ft == TC_BINARY) {
        tc_read_binary(r, &lf.name, &lf.namelen);
        has_name = 1;
      } else if (id == 5 && ft == TC_I32)
        children = tc_read_int(r, ft);
      else
        tc_skip(r, ft);
    }
    if (r->err) return bad(x, HP_ERR_CORRUPT, "bad metadata: bad schema element %zu", i);
    if (!has_name) return bad(x, HP_ERR_CORRUPT, "bad metadata: schema element %zu has no name", i);
    if (i == 0) {
      root_children = children;
      if (children < 0 || (uint64_t)children != n - 1)
        return bad(x, HP_ERR_UNSUPPORTED,
                   "nested schema (root has %lld children of %zu elements) is not supported",
                   (long long)children, n - 1);
      continue;
    }
    if (children > 0 || lf.type < 0)
      return bad(x, HP_ERR_UNSUPPORTED, "nested column '%.*s' is not supported",
                 (int)(lf.namelen > 64 ? 64 : lf.namelen), (const char *)lf.name);
    x->leaves[x->nleaves++] = lf;
  }
  (void)root_children;
  /* map hub columns to leaves by name: the dataset name (parquet_schema.c), else the store version 1 name */
  for (size_t c = 0; c < x->d->ncolumns; c++) {
    const pq_colspec *sp = pq_colspec_of(x->d->table, c);
    x->colleaf[c] = -1;
    for (int pass = 0; pass < 2 && x->colleaf[c] < 0; pass++)
      for (size_t j = 0; j < x->nleaves; j++) {
        leaf *lf = &x->leaves[j];
        const char *want = pass ? sp->legacy_name : sp->name;
        size_t cl = strlen(want);
        if (lf->namelen != cl || memcmp(lf->name, want, cl) != 0) continue;
        if (x->colleaf[c] >= 0)
          return bad(x, HP_ERR_CORRUPT, "bad metadata: column '%s' appears twice", want);
        if (lf->type != sp->phys && lf->type != sp->legacy_phys)
          return bad(x, HP_ERR_CORRUPT, "column '%s' has type %s, expected %s", want, phys_name(lf->type),
                     phys_name(sp->phys));
        if (lf->repetition != PQ_REQUIRED && lf->repetition != PQ_OPTIONAL)
          return bad(x, HP_ERR_UNSUPPORTED, "column '%s' is repeated, which is not supported", want);
        x->colleaf[c] = (int)j;
        lf->hubcol = (int)c;
      }
  }
  return 0;
}

typedef struct chunk_meta {
  int64_t type, codec, num_values, comp, data_off, dict_off;
  int has_meta, has_path;
} chunk_meta;

static void parse_column_meta(tc_reader *r, chunk_meta *m) {
  int16_t last = 0, id;
  int ft;
  while (tc_field(r, &last, &ft, &id)) {
    int isint = ft == TC_I32 || ft == TC_I64;
    if (id == 1 && isint)
      m->type = tc_read_int(r, ft);
    else if (id == 4 && isint)
      m->codec = tc_read_int(r, ft);
    else if (id == 5 && isint)
      m->num_values = tc_read_int(r, ft);
    else if (id == 7 && isint)
      m->comp = tc_read_int(r, ft);
    else if (id == 9 && isint)
      m->data_off = tc_read_int(r, ft);
    else if (id == 11 && isint)
      m->dict_off = tc_read_int(r, ft);
    else
      tc_skip(r, ft);
  }
}

static int parse_rowgroup(footer_ctx *x, tc_reader *r, size_t ri, pq_rowgroup *rg) {
  const hp_table_desc *d = x->d;
  rg->cols = calloc(d->ncolumns, sizeof *rg->cols);
  if (!rg->cols) return bad(x, HP_ERR_NOMEM, "out of memory");
  int16_t last = 0, id;
  int ft, has_cols = 0, has_rows = 0;
  int64_t rows = 0;
  chunk_meta *cm = NULL;
  while (tc_field(r, &last, &ft, &id)) {
    if (id == 1 && ft == TC_LIST) {
      int et;
      size_t n;
      tc_read_list(r, &et, &n);
      if (r->err || et != TC_STRUCT || n != x->nleaves || has_cols) {
        free(cm);
        return bad(x, HP_ERR_CORRUPT, "bad metadata: row group %zu has a bad column list", ri);
      }
      has_cols = 1;
      cm = calloc(n ? n : 1, sizeof *cm);
      if (!cm) return bad(x, HP_ERR_NOMEM, "out of memory");
      for (size_t j = 0; j < n && !r->err; j++) {
        int16_t l2 = 0, id2;
        int ft2;
        chunk_meta *m = &cm[j];
        m->type = m->codec = m->num_values = m->comp = m->data_off = m->dict_off = -1;
        while (tc_field(r, &l2, &ft2, &id2)) {
          if (id2 == 3 && ft2 == TC_STRUCT) {
            parse_column_meta(r, m);
            m->has_meta = 1;
          } else if (id2 == 1 && ft2 == TC_BINARY) {
            m->has_path = 1;
            tc_skip(r, ft2);
          } else {
            tc_skip(r, ft2);
          }
        }
      }
    } else if (id == 3 && (ft == TC_I64 || ft == TC_I32)) {
      rows = tc_read_int(r, ft);
      has_rows = 1;
    } else {
      tc_skip(r, ft);
    }
  }
  if (r->err || !has_cols || !has_rows || rows < 0) {
    free(cm);
    return bad(x, HP_ERR_CORRUPT, "bad metadata: row group %zu is malformed", ri);
  }
  rg->rows = (uint64_t)rows;
  for (size_t c = 0; c < d->ncolumns && rows > 0; c++) { /* chunks of an empty row group are never read */
    pq_chunk *ch = &rg->cols[c];
    int j = x->colleaf[c];
    if (j < 0) continue;
    chunk_meta *m = &cm[j];
    const char *cn = d->columns[c].name;
    int rc = 0;
    if (!m->has_meta)
      rc = bad(x, HP_ERR_CORRUPT, "bad metadata: row group %zu, column '%s' has no metadata", ri, cn);
    else if (m->has_path)
      rc = bad(x, HP_ERR_UNSUPPORTED, "row group %zu, column '%s' is stored in another file", ri, cn);
    else if (m->type != x->leaves[j].type)
      rc =
          bad(x, HP_ERR_CORRUPT, "bad metadata: row group %zu, column '%s' has type %lld, the schema says %d",
              ri, cn, (long long)m->type, x->leaves[j].type);
    else if (m->codec != PQ_CODEC_ZSTD && m->codec != PQ_CODEC_UNCOMPRESSED)
      rc = bad(x, HP_ERR_UNSUPPORTED,
               "column '%s' uses compression codec %lld (this build reads ZSTD and none)", cn,
               (long long)m->codec);
    else if (m->num_values != rows)
      rc = bad(x, HP_ERR_CORRUPT, "bad metadata: row group %zu, column '%s' has %lld values for %lld rows",
               ri, cn, (long long)m->num_values, (long long)rows);
    if (rc) {
      free(cm);
      return -1;
    }
    int64_t start = m->data_off;
    if (m->dict_off > 0 && m->dict_off < start) start = m->dict_off;
    int64_t comp = m->comp;
    if (start < 4 || comp <= 0 || (uint64_t)start > x->data_end ||
        (uint64_t)comp > x->data_end - (uint64_t)start) {
      free(cm);
      return bad(x, HP_ERR_CORRUPT,
                 "bad metadata: row group %zu, column '%s' lies outside the file (offset %lld, %lld bytes)",
                 ri, cn, (long long)start, (long long)comp);
    }
    ch->start = (uint64_t)start;
    ch->len = (uint64_t)m->comp;
    ch->num_values = (uint64_t)rows;
    ch->codec = (int)m->codec;
    ch->optional = x->leaves[j].repetition == PQ_OPTIONAL;
    ch->present = 1;
    ch->boolean = x->leaves[j].type == PQ_BOOLEAN;
  }
  free(cm);
  return 0;
}

static int parse_filemeta(footer_ctx *x, const unsigned char *buf, size_t n, uint64_t size, pq_rfile *f) {
  tc_reader r = {buf, buf + n, 0};
  const unsigned char *schema = NULL, *rgs = NULL;
  int64_t num_rows = -1;
  int16_t last = 0, id;
  int ft;
  while (tc_field(&r, &last, &ft, &id)) {
    if (id == 2 && ft == TC_LIST)
      schema = r.p;
    else if (id == 4 && ft == TC_LIST)
      rgs = r.p;
    if (id == 3 && (ft == TC_I64 || ft == TC_I32))
      num_rows = tc_read_int(&r, ft);
    else
      tc_skip(&r, ft);
  }
  if (r.err)
    return bad(x, HP_ERR_CORRUPT, "bad metadata: Thrift decoding failed at byte %zu of %zu",
               (size_t)(r.p - buf), n);
  if (!schema || !rgs || num_rows < 0)
    return bad(x, HP_ERR_CORRUPT, "bad metadata: schema, rows or row groups missing");
  if ((uint64_t)num_rows / PQ_MAX_ROWS_PER_BYTE > size)
    return bad(x, HP_ERR_CORRUPT, "bad metadata: %lld rows is implausible for %llu bytes",
               (long long)num_rows, (unsigned long long)size);
  r.p = schema;
  if (parse_schema(x, &r)) return -1;
  r.p = rgs;
  int et;
  size_t nrg;
  tc_read_list(&r, &et, &nrg);
  if (r.err || (nrg && et != TC_STRUCT)) return bad(x, HP_ERR_CORRUPT, "bad metadata: bad row group list");
  f->rg = calloc(nrg ? nrg : 1, sizeof *f->rg);
  if (!f->rg) return bad(x, HP_ERR_NOMEM, "out of memory");
  uint64_t total = 0;
  for (size_t i = 0; i < nrg; i++) {
    f->nrg = i + 1;
    if (parse_rowgroup(x, &r, i, &f->rg[i])) return -1;
    total += f->rg[i].rows;
    if (total > (uint64_t)num_rows) break;
  }
  if (total != (uint64_t)num_rows)
    return bad(x, HP_ERR_CORRUPT, "bad metadata: row groups hold %llu rows, the file says %lld",
               (unsigned long long)total, (long long)num_rows);
  f->rows = (uint64_t)num_rows;
  return 0;
}

hp_status pq_read_footer(int fd, uint64_t size, const hp_table_desc *d, const uint32_t *crc, pq_rfile *f,
                         char *err, size_t errlen, uint64_t *offset) {
  *offset = 0;
  unsigned char head[4], tail[8];
  if (size < 12) {
    snprintf(err, errlen, "too short for a Parquet file (%llu bytes)", (unsigned long long)size);
    return HP_ERR_TRUNCATED;
  }
  if (hu_pread_all(fd, head, 4, 0) || hu_pread_all(fd, tail, 8, size - 8)) {
    snprintf(err, errlen, "cannot read: %s", strerror(errno));
    return HP_ERR_IO;
  }
  if (memcmp(head, "PAR1", 4) != 0) {
    snprintf(err, errlen, "bad magic at the start (not a Parquet file)");
    return HP_ERR_CORRUPT;
  }
  if (memcmp(tail + 4, "PAR1", 4) != 0) {
    *offset = size - 4;
    snprintf(err, errlen, "bad magic at the end (truncated or not a Parquet file)");
    return HP_ERR_CORRUPT;
  }
  uint32_t len =
      (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
  if (len == 0 || len > size - 12 || len > PQ_MAX_FOOTER) {
    *offset = size - 8;
    snprintf(err, errlen, "bad footer length %u (file is %llu bytes)", len, (unsigned long long)size);
    return HP_ERR_CORRUPT;
  }
  unsigned char *buf = malloc(len);
  if (!buf) {
    snprintf(err, errlen, "out of memory");
    return HP_ERR_NOMEM;
  }
  uint64_t fstart = size - 8 - len;
  if (hu_pread_all(fd, buf, len, fstart)) {
    free(buf);
    snprintf(err, errlen, "cannot read: %s", strerror(errno));
    return HP_ERR_IO;
  }
  if (crc && hp_crc32c(hp_crc32c(0, buf, len), tail, 8) != *crc) {
    free(buf);
    *offset = fstart;
    snprintf(err, errlen, "footer checksum mismatch (the metadata is damaged)");
    return HP_ERR_CORRUPT;
  }
  footer_ctx x = {0};
  x.d = d;
  x.err = err;
  x.errlen = errlen;
  x.data_end = fstart;
  if (d->ncolumns > sizeof x.colleaf / sizeof x.colleaf[0]) {
    free(buf);
    snprintf(err, errlen, "too many columns");
    return HP_ERR_INVALID;
  }
  parse_filemeta(&x, buf, len, size, f);
  free(buf);
  free(x.leaves);
  if (x.st != HP_OK) {
    *offset = fstart;
    for (size_t i = 0; i < f->nrg; i++)
      free(f->rg[i].cols);
    free(f->rg);
    f->rg = NULL;
    f->nrg = 0;
    return x.st;
  }
  f->size = size;
  f->ok = 1;
  return HP_OK;
}

void pq_rfile_free(pq_rfile *f) {
  for (size_t i = 0; i < f->nrg; i++)
    free(f->rg[i].cols);
  free(f->rg);
  free(f->name);
  free(f->path);
  memset(f, 0, sizeof *f);
}

/* ---- column readers ---- */
#define PQ_BATCH 256 /* values decoded at once per column */

enum { K_ABSENT, K_STR, K_W4, K_W8 }; /* how a column's value goes into the row */

typedef struct colrd {
  /* hot: read for every value */
  uint32_t bi, bn; /* next and count in b (below) */
  uint32_t off;    /* offset of the column in the row struct */
  uint32_t kind;   /* K_* */
  uint64_t skip;   /* values to pass over before the next one is returned (columns a batch left out) */
  const hp_column *col;
  const pq_chunk *ch;
  const unsigned char *p, *end; /* pages not yet read */
  const unsigned char *base;    /* start of the file's mapping, for offsets in messages */
  uint64_t chunk_left;          /* values left in the chunk */
  uint32_t page_left;           /* values left in the page */
  int dict_enc;                 /* the page holds dictionary indices (1) or RLE/bit-packed booleans (2) */
  uint64_t nullv;               /* what a NULL reads as (pq_colspec.null_value) */
  unsigned char *vp, *vend;     /* plain values of the page */
  pq_rle_dec idx, def;
  unsigned char *pbuf; /* the page, decompressed */
  size_t pcap;
  unsigned char *dbuf; /* the dictionary page, decompressed */
  size_t dcap;
  uint64_t *dv;    /* dictionary values (fixed width) */
  const char **ds; /* dictionary values (strings) */
  size_t dvcap, dscap;
  uint32_t nd; /* dictionary entries */
  int has_dict;
  int data_seen; /* a data page was read */
  /* decoded values not yet returned: a batch never spans two pages, so strings stay in place */
  union {
    uint64_t v[PQ_BATCH];    /* fixed width (4-byte values zero-extended) */
    const char *s[PQ_BATCH]; /* strings */
  } b;
  uint32_t ib[PQ_BATCH]; /* dictionary indices of a batch */
} colrd;

struct pq_rcursor {
  hp_store *s;
  const hp_table_desc *d;
  pq_rfile *files;
  size_t nfiles;
  size_t fi;          /* current file (nfiles before the first) */
  size_t rgi;         /* current row group */
  uint64_t rg_left;   /* rows left in it */
  unsigned char *map; /* mapping of the current file */
  size_t mapsz;
  colrd *cr; /* one per hub column */
  ZSTD_DCtx *dctx;
  hp_status failed; /* sticky error */
  hu_buf arena;     /* strings of the last batch */
  char msg[256];
};

static hp_status fail(pq_rcursor *c, const colrd *r, hp_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static hp_status fail(pq_rcursor *c, const colrd *r, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  va_end(ap);
  const pq_rfile *f = &c->files[c->fi];
  uint64_t off = r && r->base ? (uint64_t)(r->p - r->base) : 0;
  hp_set_damage(c->s, st, off, "%s: row group %zu, column %s: %s", f->name, c->rgi, r ? r->col->name : "?",
                c->msg);
  hp_set_error(c->s, st, "%s: row group %zu, column %s: %s", f->name, c->rgi, r ? r->col->name : "?", c->msg);
  c->failed = st;
  return st;
}

static int grow(unsigned char **p, size_t *cap, size_t n) {
  if (n <= *cap && *p) return 0;
  size_t nc = n ? n : 1;
  unsigned char *q = realloc(*p, nc);
  if (!q) return -1;
  *p = q;
  *cap = nc;
  return 0;
}

/* ---- pages ---- */
static uint64_t load_le(const unsigned char *p, size_t w) {
  uint64_t v = 0;
  for (size_t i = 0; i < w; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Decode the dictionary page held in r->dbuf[0..n) of nv entries. */
static hp_status decode_dict(pq_rcursor *c, colrd *r, size_t n, int64_t nv) {
  if (nv < 0) return fail(c, r, HP_ERR_CORRUPT, "negative dictionary size");
  if (r->col->type == HP_COL_STR) {
    if ((uint64_t)nv > n / 4)
      return fail(c, r, HP_ERR_CORRUPT, "dictionary of %lld entries in %zu bytes", (long long)nv, n);
    if ((size_t)nv > r->dscap) {
      const char **ds = realloc(r->ds, (size_t)nv * sizeof *ds);
      if (!ds) return fail(c, r, HP_ERR_NOMEM, "out of memory");
      r->ds = ds;
      r->dscap = (size_t)nv;
    }
    unsigned char *q = r->dbuf, *end = r->dbuf + n;
    for (int64_t k = 0; k < nv; k++) {
      if (end - q < 4) return fail(c, r, HP_ERR_CORRUPT, "dictionary ends early");
      uint32_t len = (uint32_t)load_le(q, 4);
      if (len > (size_t)(end - q) - 4)
        return fail(c, r, HP_ERR_CORRUPT, "dictionary string runs past the page");
      memmove(q, q + 4, len); /* in place: NUL-terminate where the length was */
      q[len] = 0;
      r->ds[k] = (const char *)q;
      q += 4 + len;
    }
  } else {
    size_t w = pq_col_width(r->col->type);
    if ((uint64_t)nv > n / w)
      return fail(c, r, HP_ERR_CORRUPT, "dictionary of %lld entries in %zu bytes", (long long)nv, n);
    if ((size_t)nv > r->dvcap) {
      uint64_t *dv = realloc(r->dv, (size_t)nv * sizeof *dv);
      if (!dv) return fail(c, r, HP_ERR_NOMEM, "out of memory");
      r->dv = dv;
      r->dvcap = (size_t)nv;
    }
    for (int64_t k = 0; k < nv; k++)
      r->dv[k] = load_le(r->dbuf + (size_t)k * w, w);
  }
  r->nd = (uint32_t)nv;
  r->has_dict = 1;
  return HP_OK;
}

/* Read page headers until a data page with values is loaded. */
static hp_status load_page(pq_rcursor *c, colrd *r) {
  for (;;) {
    if (r->p >= r->end)
      return fail(c, r, HP_ERR_CORRUPT, "pages end %llu values early", (unsigned long long)r->chunk_left);
    tc_reader tr = {r->p, r->end, 0};
    int64_t type = -1, usize = -1, csize = -1, nv = -1, enc = -1, dle = PQ_ENC_RLE;
    int16_t last = 0, id;
    int ft;
    while (tc_field(&tr, &last, &ft, &id)) {
      int isint = ft == TC_I32 || ft == TC_I64;
      if (id == 1 && isint)
        type = tc_read_int(&tr, ft);
      else if (id == 2 && isint)
        usize = tc_read_int(&tr, ft);
      else if (id == 3 && isint)
        csize = tc_read_int(&tr, ft);
      else if ((id == 5 || id == 7) && ft == TC_STRUCT) {
        int16_t l2 = 0, id2;
        int ft2;
        while (tc_field(&tr, &l2, &ft2, &id2)) {
          int isint2 = ft2 == TC_I32 || ft2 == TC_I64;
          if (id2 == 1 && isint2)
            nv = tc_read_int(&tr, ft2);
          else if (id2 == 2 && isint2)
            enc = tc_read_int(&tr, ft2);
          else if (id2 == 3 && isint2 && id == 5)
            dle = tc_read_int(&tr, ft2);
          else
            tc_skip(&tr, ft2);
        }
      } else {
        tc_skip(&tr, ft);
      }
    }
    if (tr.err || type < 0 || usize < 0 || csize < 0) return fail(c, r, HP_ERR_CORRUPT, "bad page header");
    if ((uint64_t)csize > (uint64_t)(r->end - tr.p))
      return fail(c, r, HP_ERR_CORRUPT, "page runs past its column chunk");
    if (usize > PQ_MAX_PAGE)
      return fail(c, r, HP_ERR_CORRUPT, "page of %lld bytes is too large", (long long)usize);
    const unsigned char *src = tr.p;
    if (type == PQ_PAGE_DATA_V2) return fail(c, r, HP_ERR_UNSUPPORTED, "data page v2 is not supported");
    if (type != PQ_PAGE_DATA && type != PQ_PAGE_DICTIONARY) { /* index pages and unknown ones: skip */
      r->p = src + csize;
      continue;
    }
    if (nv < 0) return fail(c, r, HP_ERR_CORRUPT, "page header without its value count");
    if (type == PQ_PAGE_DATA && (uint64_t)nv <= r->skip && (uint64_t)nv <= r->chunk_left) {
      r->p = src + csize; /* every value of it is passed over: never decompressed */
      r->skip -= (uint64_t)nv;
      r->chunk_left -= (uint64_t)nv;
      r->data_seen = 1;
      continue;
    }
    int dict = type == PQ_PAGE_DICTIONARY;
    if (dict && (r->has_dict || r->data_seen)) return fail(c, r, HP_ERR_CORRUPT, "misplaced dictionary page");
    unsigned char **dst = dict ? &r->dbuf : &r->pbuf;
    size_t *cap = dict ? &r->dcap : &r->pcap;
    if (r->ch->codec == PQ_CODEC_ZSTD) {
      unsigned long long fs = ZSTD_getFrameContentSize(src, (size_t)csize); /* of the first frame */
      if (fs == ZSTD_CONTENTSIZE_ERROR) return fail(c, r, HP_ERR_CORRUPT, "bad zstd frame");
      if (fs != ZSTD_CONTENTSIZE_UNKNOWN && fs > (unsigned long long)usize)
        return fail(c, r, HP_ERR_CORRUPT, "page decompresses to %llu bytes, its header says %lld", fs,
                    (long long)usize);
      if (grow(dst, cap, (size_t)usize)) return fail(c, r, HP_ERR_NOMEM, "out of memory");
      size_t z = ZSTD_decompressDCtx(c->dctx, *dst, (size_t)usize, src, (size_t)csize);
      if (ZSTD_isError(z)) return fail(c, r, HP_ERR_CORRUPT, "zstd: %s", ZSTD_getErrorName(z));
      if (z != (size_t)usize)
        return fail(c, r, HP_ERR_CORRUPT, "page decompresses to %zu bytes, its header says %lld", z,
                    (long long)usize);
    } else {
      if (csize != usize) return fail(c, r, HP_ERR_CORRUPT, "uncompressed page with two sizes");
      if (grow(dst, cap, (size_t)usize)) return fail(c, r, HP_ERR_NOMEM, "out of memory");
      if (usize) memcpy(*dst, src, (size_t)usize);
    }
    r->p = src + csize;
    if (dict) {
      if (enc != PQ_ENC_PLAIN && enc != PQ_ENC_PLAIN_DICTIONARY)
        return fail(c, r, HP_ERR_UNSUPPORTED, "dictionary page encoding %lld is not supported",
                    (long long)enc);
      hp_status st = decode_dict(c, r, (size_t)usize, nv);
      if (st != HP_OK) return st;
      continue;
    }
    r->data_seen = 1;
    if ((uint64_t)nv > r->chunk_left)
      return fail(c, r, HP_ERR_CORRUPT, "page holds %lld values, only %llu are left", (long long)nv,
                  (unsigned long long)r->chunk_left);
    if (nv == 0) continue;
    unsigned char *q = r->pbuf, *qend = r->pbuf + usize;
    if (r->ch->optional) {
      if (dle != PQ_ENC_RLE)
        return fail(c, r, HP_ERR_UNSUPPORTED, "definition level encoding %lld is not supported",
                    (long long)dle);
      if (qend - q < 4) return fail(c, r, HP_ERR_CORRUPT, "page too short for its definition levels");
      uint32_t len = (uint32_t)load_le(q, 4);
      if (len > (size_t)(qend - q) - 4)
        return fail(c, r, HP_ERR_CORRUPT, "definition levels run past the page");
      pq_rle_init(&r->def, q + 4, q + 4 + len, 1);
      q += 4 + len;
    }
    if (r->ch->boolean && (enc == PQ_ENC_PLAIN || enc == PQ_ENC_RLE)) { /* bit width 1 */
      if (enc == PQ_ENC_RLE) { /* RLE hybrid after its 4-byte length */
        if (qend - q < 4) return fail(c, r, HP_ERR_CORRUPT, "page too short for its boolean runs");
        uint32_t len = (uint32_t)load_le(q, 4);
        if (len > (size_t)(qend - q) - 4) return fail(c, r, HP_ERR_CORRUPT, "boolean runs run past the page");
        pq_rle_init(&r->idx, q + 4, q + 4 + len, 1);
      } else { /* PLAIN: one bit-packed run without a header */
        pq_rle_init(&r->idx, q, qend, 1);
        r->idx.bp_left = ((uint64_t)nv + 7) / 8 * 8;
      }
      r->dict_enc = 2;
    } else if (enc == PQ_ENC_PLAIN) {
      r->dict_enc = 0;
      r->vp = q;
      r->vend = qend;
    } else if (enc == PQ_ENC_RLE_DICTIONARY || enc == PQ_ENC_PLAIN_DICTIONARY) {
      if (!r->has_dict) return fail(c, r, HP_ERR_CORRUPT, "dictionary-encoded page without a dictionary");
      if (q >= qend) return fail(c, r, HP_ERR_CORRUPT, "page too short for its bit width");
      int bw = *q++;
      if (bw > 32) return fail(c, r, HP_ERR_CORRUPT, "bad bit width %d", bw);
      pq_rle_init(&r->idx, q, qend, bw);
      r->dict_enc = 1;
    } else {
      return fail(c, r, HP_ERR_UNSUPPORTED, "encoding %lld is not supported (PLAIN and RLE_DICTIONARY are)",
                  (long long)enc);
    }
    r->page_left = (uint32_t)nv;
    return HP_OK;
  }
}

static hp_status plain_string(pq_rcursor *c, colrd *r, const char **out) {
  if (r->vend - r->vp < 4) return fail(c, r, HP_ERR_CORRUPT, "values end early");
  uint32_t len = (uint32_t)load_le(r->vp, 4);
  if (len > (size_t)(r->vend - r->vp) - 4) return fail(c, r, HP_ERR_CORRUPT, "string runs past the page");
  memmove(r->vp, r->vp + 4, len); /* in place: NUL-terminate where the length was */
  r->vp[len] = 0;
  *out = (const char *)r->vp;
  r->vp += 4 + len;
  return HP_OK;
}

/* One value of an OPTIONAL column (definition level first; a null reads as 0 or ""). */
static hp_status one_optional(pq_rcursor *c, colrd *r, uint32_t i) {
  int str = r->col->type == HP_COL_STR;
  uint32_t lvl;
  if (pq_rle_next(&r->def, &lvl)) return fail(c, r, HP_ERR_CORRUPT, "definition levels end early");
  if (lvl == 0) {
    if (str)
      r->b.s[i] = "";
    else
      r->b.v[i] = r->nullv;
    return HP_OK;
  }
  if (r->dict_enc) {
    uint32_t k;
    if (pq_rle_next(&r->idx, &k)) return fail(c, r, HP_ERR_CORRUPT, "dictionary indices end early");
    if (r->dict_enc == 2) {
      r->b.v[i] = k;
      return HP_OK;
    }
    if (k >= r->nd) return fail(c, r, HP_ERR_CORRUPT, "dictionary index %u out of %u entries", k, r->nd);
    if (str)
      r->b.s[i] = r->ds[k];
    else
      r->b.v[i] = r->dv[k];
    return HP_OK;
  }
  if (str) return plain_string(c, r, &r->b.s[i]);
  size_t w = pq_col_width(r->col->type);
  if ((size_t)(r->vend - r->vp) < w) return fail(c, r, HP_ERR_CORRUPT, "values end early");
  r->b.v[i] = load_le(r->vp, w);
  r->vp += w;
  return HP_OK;
}

/* Decode the next values of a column, up to a batch and never past its page. */
static hp_status refill(pq_rcursor *c, colrd *r) {
  if (!r->page_left) {
    hp_status st = load_page(c, r);
    if (st != HP_OK) return st;
  }
  uint32_t k = r->page_left < PQ_BATCH ? r->page_left : PQ_BATCH;
  int str = r->col->type == HP_COL_STR;
  if (r->ch->optional) {
    for (uint32_t i = 0; i < k; i++) {
      hp_status st = one_optional(c, r, i);
      if (st != HP_OK) return st;
    }
  } else if (r->dict_enc) {
    if (pq_rle_batch(&r->idx, r->ib, k) != k)
      return fail(c, r, HP_ERR_CORRUPT, "dictionary indices end early");
    for (uint32_t i = 0; i < k && r->dict_enc == 2; i++)
      r->b.v[i] = r->ib[i];
    for (uint32_t i = 0; i < k && r->dict_enc == 1; i++) {
      uint32_t x = r->ib[i];
      if (x >= r->nd) return fail(c, r, HP_ERR_CORRUPT, "dictionary index %u out of %u entries", x, r->nd);
      if (str)
        r->b.s[i] = r->ds[x];
      else
        r->b.v[i] = r->dv[x];
    }
  } else if (str) {
    for (uint32_t i = 0; i < k; i++) {
      hp_status st = plain_string(c, r, &r->b.s[i]);
      if (st != HP_OK) return st;
    }
  } else {
    size_t w = pq_col_width(r->col->type);
    if ((size_t)(r->vend - r->vp) / w < k) return fail(c, r, HP_ERR_CORRUPT, "values end early");
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (w == 8) {
      memcpy(r->b.v, r->vp, (size_t)k * 8);
    } else {
      for (uint32_t i = 0; i < k; i++) {
        uint32_t x;
        memcpy(&x, r->vp + 4 * (size_t)i, 4);
        r->b.v[i] = x;
      }
    }
#else
    for (uint32_t i = 0; i < k; i++)
      r->b.v[i] = load_le(r->vp + w * i, w);
#endif
    r->vp += w * k;
  }
  r->page_left -= k;
  r->chunk_left -= k;
  r->bi = 0;
  r->bn = k;
  return HP_OK;
}

/* Pass over the column's pending skip: decoded values first, then whole pages, then part of a page. */
static hp_status apply_skip(pq_rcursor *c, colrd *r) {
  while (r->skip) {
    if (r->bi < r->bn) {
      uint64_t t = r->bn - r->bi < r->skip ? r->bn - r->bi : r->skip;
      r->bi += (uint32_t)t;
      r->skip -= t;
      continue;
    }
    if (!r->page_left) {
      hp_status st = load_page(c, r); /* skips the pages it can; may use up the skip */
      if (st != HP_OK) return st;
      continue;
    }
    hp_status st = refill(c, r);
    if (st != HP_OK) return st;
  }
  return HP_OK;
}

static void put_zero(const hp_column *col, char *dst) {
  switch (col->type) {
  case HP_COL_U32:
  case HP_COL_I32: memset(dst, 0, 4); break;
  case HP_COL_U64:
  case HP_COL_I64:
  case HP_COL_F64: memset(dst, 0, 8); break;
  case HP_COL_STR: *(const char **)dst = ""; break;
  }
}

/* ---- cursor ---- */
hp_status pq_rcursor_open(hp_store *s, const hp_table_desc *d, pq_rfile *files, size_t nfiles,
                          pq_rcursor **out) {
  *out = NULL;
  pq_rcursor *c = calloc(1, sizeof *c);
  if (!c) return HP_ERR_NOMEM;
  c->s = s;
  c->d = d;
  c->files = files;
  c->nfiles = nfiles;
  c->fi = nfiles;
  c->cr = calloc(d->ncolumns, sizeof *c->cr);
  c->dctx = ZSTD_createDCtx();
  if (!c->cr || !c->dctx) {
    pq_rcursor_close(c);
    return HP_ERR_NOMEM;
  }
  for (size_t i = 0; i < d->ncolumns; i++) {
    c->cr[i].col = &d->columns[i];
    c->cr[i].off = (uint32_t)d->columns[i].offset;
    const pq_colspec *sp = pq_colspec_of(d->table, i);
    c->cr[i].nullv = sp ? (uint64_t)sp->null_value : 0;
  }
  *out = c;
  return HP_OK;
}

static void unmap(pq_rcursor *c) {
  if (c->map) munmap(c->map, c->mapsz);
  c->map = NULL;
  c->mapsz = 0;
}

void pq_rcursor_close(pq_rcursor *c) {
  if (!c) return;
  unmap(c);
  for (size_t i = 0; c->cr && i < c->d->ncolumns; i++) {
    free(c->cr[i].pbuf);
    free(c->cr[i].dbuf);
    free(c->cr[i].dv);
    free(c->cr[i].ds);
  }
  free(c->cr);
  hu_buf_free(&c->arena);
  ZSTD_freeDCtx(c->dctx);
  free(c);
}

static hp_status map_file(pq_rcursor *c) {
  pq_rfile *f = &c->files[c->fi];
  int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return hp_set_error(c->s, HP_ERR_IO, "%s: cannot open: %s", f->name, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != f->size) {
    close(fd);
    return hp_set_error(c->s, HP_ERR_CORRUPT, "%s: changed since the store was opened", f->name);
  }
  void *m = mmap(NULL, (size_t)f->size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return hp_set_error(c->s, HP_ERR_IO, "%s: cannot map: %s", f->name, strerror(errno));
  c->map = m;
  c->mapsz = (size_t)f->size;
  return HP_OK;
}

/* Move to the next row group with rows; HP_END after the last. */
static hp_status next_rowgroup(pq_rcursor *c) {
  for (;;) {
    if (c->map && c->rgi + 1 < c->files[c->fi].nrg) {
      c->rgi++;
    } else {
      unmap(c);
      c->fi = c->fi == c->nfiles ? 0 : c->fi + 1;
      while (c->fi < c->nfiles && !c->files[c->fi].ok)
        c->fi++;
      if (c->fi >= c->nfiles) {
        c->fi = c->nfiles - (c->nfiles > 0); /* stay on a valid index for messages */
        c->failed = HP_END;
        return HP_END;
      }
      hp_status st = map_file(c);
      if (st != HP_OK) {
        c->failed = st;
        return st;
      }
      c->rgi = 0;
      if (!c->files[c->fi].nrg) continue;
    }
    const pq_rowgroup *rg = &c->files[c->fi].rg[c->rgi];
    for (size_t i = 0; i < c->d->ncolumns; i++) {
      colrd *r = &c->cr[i];
      r->ch = &rg->cols[i];
      r->base = c->map;
      r->p = c->map + r->ch->start;
      r->end = r->p + r->ch->len;
      r->chunk_left = r->ch->num_values;
      r->page_left = 0;
      r->has_dict = 0;
      r->data_seen = 0;
      r->nd = 0;
      r->dict_enc = 0;
      r->bi = r->bn = 0;
      r->skip = 0;
      r->kind = !r->ch->present                   ? K_ABSENT
                : r->col->type == HP_COL_STR      ? K_STR
                : pq_col_width(r->col->type) == 4 ? K_W4
                                                  : K_W8;
    }
    c->rg_left = rg->rows;
    if (c->rg_left) return HP_OK;
  }
}

hp_status pq_rcursor_next(pq_rcursor *c, void *row) {
  if (c->failed != HP_OK) return c->failed;
  if (!c->rg_left) {
    hp_status st = next_rowgroup(c);
    if (st != HP_OK) return st;
  }
  colrd *r = c->cr, *end = c->cr + c->d->ncolumns;
  for (; r < end; r++) {
    char *dst = (char *)row + r->off;
    if (r->kind == K_ABSENT) {
      put_zero(r->col, dst);
      continue;
    }
    if (r->skip) {
      hp_status st = apply_skip(c, r);
      if (st != HP_OK) return st;
    }
    if (r->bi == r->bn) {
      hp_status st = refill(c, r);
      if (st != HP_OK) return st;
    }
    uint32_t k = r->bi++;
    if (r->kind == K_W8) {
      memcpy(dst, &r->b.v[k], 8);
    } else if (r->kind == K_W4) {
      uint32_t x = (uint32_t)r->b.v[k];
      memcpy(dst, &x, 4);
    } else {
      memcpy(dst, &r->b.s[k], sizeof(const char *));
    }
  }
  c->rg_left--;
  return HP_OK;
}

/* Copy n values of column r into out (the column's C type) from position `at`. */
static hp_status batch_column(pq_rcursor *c, colrd *r, char *out, size_t at, size_t n) {
  if (r->kind == K_ABSENT) {
    if (r->col->type == HP_COL_STR) {
      for (size_t i = 0; i < n; i++) /* "" (an arena offset is fixed up at the end) */
        ((uintptr_t *)out)[at + i] = UINTPTR_MAX;
    } else {
      size_t w = pq_col_width(r->col->type);
      memset(out + w * at, 0, w * n);
    }
    return HP_OK;
  }
  if (r->skip) {
    hp_status st = apply_skip(c, r);
    if (st != HP_OK) return st;
  }
  while (n) {
    if (r->bi == r->bn) {
      hp_status st = refill(c, r);
      if (st != HP_OK) return st;
    }
    size_t t = r->bn - r->bi < n ? r->bn - r->bi : n;
    if (r->kind == K_W8) {
      memcpy(out + 8 * at, &r->b.v[r->bi], 8 * t);
    } else if (r->kind == K_W4) {
      for (size_t i = 0; i < t; i++) {
        uint32_t x = (uint32_t)r->b.v[r->bi + i];
        memcpy(out + 4 * (at + i), &x, 4);
      }
    } else { /* strings are copied: a later page of this batch may reuse the page buffer */
      for (size_t i = 0; i < t; i++) {
        const char *str = r->b.s[r->bi + i];
        ((uintptr_t *)out)[at + i] = c->arena.n;
        hu_buf_put(&c->arena, str, strlen(str) + 1);
      }
      if (c->arena.oom) return fail(c, r, HP_ERR_NOMEM, "out of memory");
    }
    r->bi += (uint32_t)t;
    at += t;
    n -= t;
  }
  return HP_OK;
}

hp_status pq_rcursor_next_batch(pq_rcursor *c, void *const *cols, size_t max, size_t *n) {
  *n = 0;
  if (c->failed != HP_OK) return c->failed;
  c->arena.n = 0;
  size_t done = 0;
  hp_status st = HP_OK;
  while (done < max) {
    if (!c->rg_left) {
      st = next_rowgroup(c);
      if (st != HP_OK) break;
    }
    size_t k = max - done < c->rg_left ? max - done : (size_t)c->rg_left;
    for (size_t i = 0; i < c->d->ncolumns && st == HP_OK; i++) {
      colrd *r = &c->cr[i];
      if (!cols[i]) {
        if (r->kind != K_ABSENT) r->skip += k; /* passed over lazily; dropped at the row group's end */
        continue;
      }
      st = batch_column(c, r, cols[i], done, k);
    }
    if (st != HP_OK) break;
    c->rg_left -= k;
    done += k;
  }
  for (size_t i = 0; i < c->d->ncolumns; i++) /* string offsets become pointers into the final arena */
    if (cols[i] && c->d->columns[i].type == HP_COL_STR)
      for (size_t r = 0; r < done; r++) {
        uintptr_t o = ((uintptr_t *)cols[i])[r];
        ((const char **)cols[i])[r] = o == UINTPTR_MAX ? "" : (const char *)c->arena.p + o;
      }
  *n = done;
  if (st == HP_END) return done ? HP_OK : HP_END;
  return st;
}
