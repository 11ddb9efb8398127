/* Parquet table reader: checks a file's magic and footer (Thrift FileMetaData) against its size and the
 * hub table it should hold, then streams rows: one row group at a time, one page per column at a time,
 * decoding data pages v1 and v2 (codecs and encodings: docs/formats/parquet.md, "Reading Parquet written by
 * other tools") of flat REQUIRED or OPTIONAL columns, a NULL reading as the column's "unknown", and
 * converting the file's physical and logical types to the hub column's type.
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
  int type;          /* physical type, -1 when absent */
  int repetition;    /* PQ_REQUIRED, PQ_OPTIONAL, PQ_REPEATED; -1 when absent */
  int hubcol;        /* index of the hub column it fills, -1 when none */
  int converted;     /* converted type, -1 when absent */
  int is_unsigned;   /* INTEGER(signed=false) or UINT_* */
  int decimal;       /* DECIMAL (not read) */
  uint32_t ts_scale; /* TIMESTAMP: nanoseconds per unit, 0 when not a timestamp */
} leaf;

typedef struct footer_ctx {
  const hp_table_desc *d;
  pq_rfile *f;       /* its err gets the problem */
  uint64_t data_end; /* first byte of the footer: column chunks end before it */
  leaf *leaves;
  size_t nleaves;
  int colleaf[64]; /* leaf of each hub column, -1 when the file lacks it */
  hp_status st;
} footer_ctx;

static const char *phys_name(int t) { return pq_phys_name(t); }

/* LogicalType (a union): INTEGER's signedness, TIMESTAMP's unit, DECIMAL; the rest is skipped. */
static void parse_logical(tc_reader *r, leaf *lf) {
  int16_t last = 0, id;
  int ft;
  while (tc_field(r, &last, &ft, &id)) {
    if (id == 10 && ft == TC_STRUCT) { /* INTEGER {1: bitWidth, 2: isSigned} */
      int16_t l2 = 0, id2;
      int ft2;
      while (tc_field(r, &l2, &ft2, &id2))
        if (id2 == 2 && (ft2 == TC_TRUE || ft2 == TC_FALSE))
          lf->is_unsigned = ft2 == TC_FALSE;
        else
          tc_skip(r, ft2);
    } else if (id == 8 && ft == TC_STRUCT) { /* TIMESTAMP {1: isAdjustedToUTC, 2: unit} */
      int16_t l2 = 0, id2;
      int ft2;
      while (tc_field(r, &l2, &ft2, &id2)) {
        if (id2 == 2 && ft2 == TC_STRUCT) { /* TimeUnit {1: MILLIS, 2: MICROS, 3: NANOS} */
          int16_t l3 = 0, id3;
          int ft3;
          while (tc_field(r, &l3, &ft3, &id3)) {
            if (id3 >= 1 && id3 <= 3) lf->ts_scale = id3 == 1 ? 1000000u : id3 == 2 ? 1000u : 1u;
            tc_skip(r, ft3);
          }
        } else {
          tc_skip(r, ft2);
        }
      }
    } else {
      if (id == 5) lf->decimal = 1;
      tc_skip(r, ft);
    }
  }
}

/* The file's physical type can be read into a hub column of type ty. */
static int convertible(hp_col_type ty, int phys) {
  if (ty == HP_COL_STR) return phys == PQ_BYTE_ARRAY;
  if (ty == HP_COL_F64) return phys == PQ_INT32 || phys == PQ_INT64 || phys == PQ_FLOAT || phys == PQ_DOUBLE;
  return phys == PQ_BOOLEAN || phys == PQ_INT32 || phys == PQ_INT64 || phys == PQ_INT96 || phys == PQ_FLOAT ||
         phys == PQ_DOUBLE;
}

static const char *hub_type_name(hp_col_type ty) {
  return ty == HP_COL_STR ? "a string" : ty == HP_COL_F64 ? "a floating-point number" : "an integer";
}

static int bad(footer_ctx *x, hp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(footer_ctx *x, hp_status st, const char *fmt, ...) {
  if (x->st == HP_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->f->err, sizeof x->f->err, fmt, ap);
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
    leaf lf = {NULL, 0, -1, -1, -1, -1, 0, 0, 0};
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
      else if (id == 6 && ft == TC_I32)
        lf.converted = (int)tc_read_int(r, ft);
      else if (id == 10 && ft == TC_STRUCT)
        parse_logical(r, &lf);
      else
        tc_skip(r, ft);
    }
    if (lf.converted >= PQ_CT_UINT_8 && lf.converted <= PQ_CT_UINT_64) lf.is_unsigned = 1;
    if (lf.converted == PQ_CT_DECIMAL) lf.decimal = 1;
    if (!lf.ts_scale && lf.converted == PQ_CT_TIMESTAMP_MILLIS) lf.ts_scale = 1000000u;
    if (!lf.ts_scale && lf.converted == PQ_CT_TIMESTAMP_MICROS) lf.ts_scale = 1000u;
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
    const hp_column *col = &x->d->columns[c];
    x->colleaf[c] = -1;
    for (int pass = 0; pass < 2 && x->colleaf[c] < 0; pass++)
      for (size_t j = 0; j < x->nleaves; j++) {
        leaf *lf = &x->leaves[j];
        const char *want = pass ? sp->legacy_name : sp->name;
        size_t cl = strlen(want);
        if (lf->namelen != cl || memcmp(lf->name, want, cl) != 0) continue;
        if (x->colleaf[c] >= 0)
          return bad(x, HP_ERR_CORRUPT, "bad metadata: column '%s' appears twice", want);
        if (!convertible(col->type, lf->type))
          return bad(x, HP_ERR_UNSUPPORTED, "column '%s' has type %s, which cannot hold %s (expected %s)",
                     want, phys_name(lf->type), hub_type_name(col->type), phys_name(sp->phys));
        if (lf->decimal)
          return bad(x, HP_ERR_UNSUPPORTED,
                     "column '%s' is a DECIMAL, which is not supported (write it as %s)", want,
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
  int64_t nulls;                  /* statistics: null_count, -1 unknown */
  const unsigned char *min, *max; /* min_value and max_value (plain encoded), NULL unknown */
  size_t minn, maxn;
} chunk_meta;

/* Statistics (parquet.thrift): null_count and min_value / max_value (the deprecated min / max are left: their
 * order is not defined for every type). */
static void parse_stats(tc_reader *r, chunk_meta *m) {
  int16_t last = 0, id;
  int ft;
  while (tc_field(r, &last, &ft, &id)) {
    if (id == 3 && (ft == TC_I64 || ft == TC_I32))
      m->nulls = tc_read_int(r, ft);
    else if (id == 5 && ft == TC_BINARY)
      tc_read_binary(r, &m->max, &m->maxn);
    else if (id == 6 && ft == TC_BINARY)
      tc_read_binary(r, &m->min, &m->minn);
    else
      tc_skip(r, ft);
  }
}

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
    else if (id == 12 && ft == TC_STRUCT)
      parse_stats(r, m);
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
        m->type = m->codec = m->num_values = m->comp = m->data_off = m->dict_off = m->nulls = -1;
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
    else if (!pq_codec_supported(m->codec))
      rc =
          bad(x, HP_ERR_UNSUPPORTED,
              "column '%s' uses compression codec %s (%lld); this build reads UNCOMPRESSED, SNAPPY, GZIP and "
              "ZSTD",
              cn, pq_codec_name(m->codec), (long long)m->codec);
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
    ch->phys = x->leaves[j].type;
    ch->is_unsigned = x->leaves[j].is_unsigned;
    ch->ts_scale = x->leaves[j].ts_scale > 1 ? x->leaves[j].ts_scale : 0;
    /* the range of the values as read, for hp_cursor_filter: integers of the hub column's own width whose
     * statistics give min and max, both >= 0 (signed and unsigned orders then agree), no NULL possible */
    size_t w = pq_col_width(d->columns[c].type);
    if (d->columns[c].type != HP_COL_STR && d->columns[c].type != HP_COL_F64 &&
        ch->phys == pq_phys_type(d->columns[c].type) && !ch->ts_scale && m->min && m->max && m->minn == w &&
        m->maxn == w && (!ch->optional || m->nulls == 0)) {
      int64_t lo = 0, hi = 0;
      for (size_t b = 0; b < w; b++) {
        lo |= (int64_t)((uint64_t)m->min[b] << (8 * b));
        hi |= (int64_t)((uint64_t)m->max[b] << (8 * b));
      }
      if (w == 4) lo = (int32_t)(uint32_t)lo, hi = (int32_t)(uint32_t)hi;
      if (lo >= 0 && hi >= lo) {
        ch->has_range = 1;
        ch->min = lo;
        ch->max = hi;
      }
    }
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

/* The problem on the file; returns st. */
static hp_status file_err(pq_rfile *f, hp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static hp_status file_err(pq_rfile *f, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->err, sizeof f->err, fmt, ap);
  va_end(ap);
  return st;
}

hp_status pq_read_footer(int fd, uint64_t size, const hp_table_desc *d, const uint32_t *crc, pq_rfile *f,
                         uint64_t *offset) {
  *offset = 0;
  f->err[0] = 0;
  unsigned char head[4], tail[8];
  if (size < 12)
    return file_err(f, HP_ERR_TRUNCATED, "too short for a Parquet file (%llu bytes)",
                    (unsigned long long)size);
  if (hu_pread_all(fd, head, 4, 0) || hu_pread_all(fd, tail, 8, size - 8))
    return file_err(f, HP_ERR_IO, "cannot read: %s", strerror(errno));
  if (memcmp(head, "PAR1", 4) != 0)
    return file_err(f, HP_ERR_CORRUPT, "bad magic at the start (not a Parquet file)");
  if (memcmp(tail + 4, "PAR1", 4) != 0) {
    *offset = size - 4;
    return file_err(f, HP_ERR_CORRUPT, "bad magic at the end (truncated or not a Parquet file)");
  }
  uint32_t len =
      (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
  if (len == 0 || len > size - 12 || len > PQ_MAX_FOOTER) {
    *offset = size - 8;
    return file_err(f, HP_ERR_CORRUPT, "bad footer length %u (file is %llu bytes)", len,
                    (unsigned long long)size);
  }
  unsigned char *buf = malloc(len);
  if (!buf) return file_err(f, HP_ERR_NOMEM, "out of memory");
  uint64_t fstart = size - 8 - len;
  if (hu_pread_all(fd, buf, len, fstart)) {
    free(buf);
    return file_err(f, HP_ERR_IO, "cannot read: %s", strerror(errno));
  }
  if (crc && hp_crc32c(hp_crc32c(0, buf, len), tail, 8) != *crc) {
    free(buf);
    *offset = fstart;
    return file_err(f, HP_ERR_CORRUPT, "footer checksum mismatch (the metadata is damaged)");
  }
  footer_ctx x = {0};
  x.d = d;
  x.f = f;
  x.data_end = fstart;
  if (d->ncolumns > sizeof x.colleaf / sizeof x.colleaf[0]) {
    free(buf);
    return file_err(f, HP_ERR_INVALID, "too many columns");
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
#define PQ_BATCH 256                      /* values decoded at once per column */
#define PQ_MAX_STRINGS (2u * PQ_MAX_PAGE) /* bytes of strings the DELTA_* encodings may build per page */

enum { K_ABSENT, K_STR, K_W4, K_W8 }; /* how a column's value goes into the row */
/* how the values of the current page are encoded */
enum { E_PLAIN, E_DICT, E_RLE, E_DELTA, E_DLBA, E_DBA, E_BSS };

/* Strings built for one page (DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY): blocks that never move. */
typedef struct sblock {
  struct sblock *next;
  size_t cap, n;
  char data[];
} sblock;

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
  int enc;                      /* E_* of the page */
  int fast;                     /* the file's type is the hub column's: values need no conversion */
  int levels;                   /* the page has definition levels */
  uint64_t nullv;               /* what a NULL reads as (numbers) */
  unsigned char *vp, *vend;     /* values of the page (PLAIN, BYTE_STREAM_SPLIT, bytes of DELTA_* strings) */
  uint64_t bit;                 /* next bit of PLAIN booleans */
  uint64_t bss_n, bss_i;        /* BYTE_STREAM_SPLIT: values in each stream, next value */
  pq_rle_dec idx, def;          /* dictionary indices (or RLE booleans), definition levels */
  pq_delta dl, dl2;             /* DELTA_*: values or (prefix) lengths; suffix lengths */
  const char *prev;             /* DELTA_BYTE_ARRAY: the previous value */
  size_t prevlen;
  sblock *sb; /* strings of the page, freed at the next page */
  size_t sb_total;
  unsigned char *pbuf; /* the page, decompressed */
  size_t pcap;
  unsigned char *dbuf; /* the dictionary page, decompressed */
  size_t dcap;
  uint64_t *dv;    /* dictionary values (fixed width, converted) */
  const char **ds; /* dictionary values (strings) */
  size_t dvcap, dscap;
  uint32_t nd; /* dictionary entries */
  int has_dict;
  int data_seen; /* a data page was read */
  /* decoded values not yet returned: a batch never spans two pages, so strings stay in place */
  union {
    uint64_t v[PQ_BATCH];    /* fixed width (4-byte values in the low half) */
    const char *s[PQ_BATCH]; /* strings */
  } b;
  uint32_t ib[PQ_BATCH];    /* dictionary indices of a batch */
  uint32_t lv[PQ_BATCH];    /* definition levels of a batch */
  uint64_t lens[PQ_BATCH];  /* DELTA_* string lengths (prefix lengths) of a batch */
  uint64_t lens2[PQ_BATCH]; /* DELTA_BYTE_ARRAY suffix lengths of a batch */
} colrd;

struct pq_rcursor {
  hp_store *s;
  const hp_table_desc *d;
  pq_rfile *files;
  size_t nfiles;
  size_t fi;       /* current file (nfiles before the first) */
  size_t rgi;      /* current row group */
  uint64_t gbase;  /* row groups of the readable files before file fi */
  uint64_t g0, g1; /* row groups read: [g0, g1) of the readable files' (pq_rcursor_range) */
  int (*keep)(void *, const hp_col_range *); /* hp_cursor_filter: a row group is read when it says 1 */
  void *keep_ctx;
  hp_col_range *ranges; /* per column, for keep */
  int rg_set;           /* the current row group was read (its pages may be resident) */
  uint64_t rg_left;     /* rows left in it */
  unsigned char *map;   /* mapping of the current file */
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

static void sb_free(colrd *r) {
  while (r->sb) {
    sblock *n = r->sb->next;
    free(r->sb);
    r->sb = n;
  }
  r->sb_total = 0;
}

/* n bytes for a string of the page that stay in place until the next page. */
static hp_status sb_alloc(pq_rcursor *c, colrd *r, size_t n, char **out) {
  if (r->sb && r->sb->cap - r->sb->n >= n) {
    *out = r->sb->data + r->sb->n;
    r->sb->n += n;
    return HP_OK;
  }
  if (n > PQ_MAX_STRINGS - r->sb_total)
    return fail(c, r, HP_ERR_CORRUPT, "strings of one page grow past %u bytes", PQ_MAX_STRINGS);
  size_t cap = n > 65536 ? n : 65536;
  sblock *b = malloc(sizeof *b + cap);
  if (!b) return fail(c, r, HP_ERR_NOMEM, "out of memory");
  b->next = r->sb;
  b->cap = cap;
  b->n = n;
  r->sb = b;
  r->sb_total += cap;
  *out = b->data;
  return HP_OK;
}

/* ---- values ---- */
static uint64_t load_le(const unsigned char *p, size_t w) {
  uint64_t v = 0;
  for (size_t i = 0; i < w; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Bytes of one value of a fixed-width physical type (0: booleans, bits; BYTE_ARRAY). */
static size_t phys_width(int phys) {
  switch (phys) {
  case PQ_INT32:
  case PQ_FLOAT: return 4;
  case PQ_INT64:
  case PQ_DOUBLE: return 8;
  case PQ_INT96: return 12;
  }
  return 0;
}

/* One value of the file's physical type as a raw word: integers sign-extended (zero-extended when
 * unsigned), FLOAT widened to a DOUBLE's bits, INT96 as nanoseconds. */
static uint64_t raw_value(const pq_chunk *ch, const unsigned char *p) {
  switch (ch->phys) {
  case PQ_INT32: {
    uint32_t x = (uint32_t)load_le(p, 4);
    return ch->is_unsigned ? x : (uint64_t)(int64_t)(int32_t)x;
  }
  case PQ_FLOAT: {
    float f;
    uint32_t x = (uint32_t)load_le(p, 4);
    memcpy(&f, &x, 4);
    double d = f;
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
  }
  case PQ_INT96: return (uint64_t)pq_int96_ns(p);
  default: return load_le(p, 8);
  }
}

/* Raw words (raw_value) to the hub column's representation, in place. */
static hp_status to_hub(pq_rcursor *c, colrd *r, uint64_t *v, size_t n) {
  int dbl = r->ch->phys == PQ_FLOAT || r->ch->phys == PQ_DOUBLE;
  if (r->col->type == HP_COL_F64) {
    if (dbl) return HP_OK;
    for (size_t i = 0; i < n; i++) {
      double d = r->ch->is_unsigned && r->ch->phys == PQ_INT64 ? (double)v[i] : (double)(int64_t)v[i];
      memcpy(&v[i], &d, 8);
    }
    return HP_OK;
  }
  if (dbl) { /* a whole number written as a float (pandas turns integers with NULLs into float64) */
    for (size_t i = 0; i < n; i++) {
      double d;
      memcpy(&d, &v[i], 8);
      if (d >= 0 && d < 18446744073709551616.0 && (double)(uint64_t)d == d)
        v[i] = (uint64_t)d;
      else if (d < 0 && d >= -9223372036854775808.0 && (double)(int64_t)d == d)
        v[i] = (uint64_t)(int64_t)d;
      else
        return fail(c, r, HP_ERR_CORRUPT, "value %g is not an integer", d);
    }
    return HP_OK;
  }
  if (r->ch->ts_scale) /* TIMESTAMP in ms or us: the hub's times are nanoseconds */
    for (size_t i = 0; i < n; i++) {
      int64_t ns;
      if (__builtin_mul_overflow((int64_t)v[i], (int64_t)r->ch->ts_scale, &ns))
        return fail(c, r, HP_ERR_CORRUPT, "timestamp %lld is out of range in nanoseconds", (long long)v[i]);
      v[i] = (uint64_t)ns;
    }
  return HP_OK;
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
    size_t w = phys_width(r->ch->phys);
    if (!w)
      return fail(c, r, HP_ERR_UNSUPPORTED, "a dictionary of %s values is not supported",
                  pq_phys_name(r->ch->phys));
    if ((uint64_t)nv > n / w)
      return fail(c, r, HP_ERR_CORRUPT, "dictionary of %lld entries in %zu bytes", (long long)nv, n);
    if ((size_t)nv > r->dvcap) {
      uint64_t *dv = realloc(r->dv, (size_t)nv * sizeof *dv);
      if (!dv) return fail(c, r, HP_ERR_NOMEM, "out of memory");
      r->dv = dv;
      r->dvcap = (size_t)nv;
    }
    for (int64_t k = 0; k < nv; k++)
      r->dv[k] = raw_value(r->ch, r->dbuf + (size_t)k * w);
    if (!r->fast) {
      hp_status st = to_hub(c, r, r->dv, (size_t)nv);
      if (st != HP_OK) return st;
    }
  }
  r->nd = (uint32_t)nv;
  r->has_dict = 1;
  return HP_OK;
}

/* ---- pages ---- */
/* Set up the value decoder of a data page whose values are [q, qend). */
static hp_status start_values(pq_rcursor *c, colrd *r, int64_t enc, unsigned char *q, unsigned char *qend) {
  int phys = r->ch->phys;
  r->vp = q;
  r->vend = qend;
  r->bit = 0;
  switch (enc) {
  case PQ_ENC_PLAIN: r->enc = E_PLAIN; return HP_OK;
  case PQ_ENC_PLAIN_DICTIONARY:
  case PQ_ENC_RLE_DICTIONARY: {
    if (!r->has_dict) return fail(c, r, HP_ERR_CORRUPT, "dictionary-encoded page without a dictionary");
    if (q >= qend) return fail(c, r, HP_ERR_CORRUPT, "page too short for its bit width");
    int bw = *q++;
    if (bw > 32) return fail(c, r, HP_ERR_CORRUPT, "bad bit width %d", bw);
    pq_rle_init(&r->idx, q, qend, bw);
    r->enc = E_DICT;
    return HP_OK;
  }
  case PQ_ENC_RLE:
    if (phys != PQ_BOOLEAN) break;
    if (qend - q < 4) return fail(c, r, HP_ERR_CORRUPT, "page too short for its RLE length");
    if (load_le(q, 4) > (uint64_t)(qend - q) - 4)
      return fail(c, r, HP_ERR_CORRUPT, "RLE values run past the page");
    pq_rle_init(&r->idx, q + 4, q + 4 + load_le(q, 4), 1);
    r->enc = E_RLE;
    return HP_OK;
  case PQ_ENC_DELTA_BINARY_PACKED:
    if (phys != PQ_INT32 && phys != PQ_INT64) break;
    if (pq_delta_init(&r->dl, q, qend)) return fail(c, r, HP_ERR_CORRUPT, "bad DELTA_BINARY_PACKED header");
    r->enc = E_DELTA;
    return HP_OK;
  case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
  case PQ_ENC_DELTA_BYTE_ARRAY: {
    if (phys != PQ_BYTE_ARRAY) break;
    const unsigned char *e;
    if (pq_delta_init(&r->dl, q, qend) || !(e = pq_delta_end(&r->dl)))
      return fail(c, r, HP_ERR_CORRUPT, "bad %s lengths", pq_encoding_name(enc));
    if (enc == PQ_ENC_DELTA_BYTE_ARRAY) {
      if (pq_delta_init(&r->dl2, e, qend) || !(e = pq_delta_end(&r->dl2)))
        return fail(c, r, HP_ERR_CORRUPT, "bad DELTA_BYTE_ARRAY suffix lengths");
      r->prev = "";
      r->prevlen = 0;
    }
    r->vp = q + (e - q);
    r->enc = enc == PQ_ENC_DELTA_BYTE_ARRAY ? E_DBA : E_DLBA;
    return HP_OK;
  }
  case PQ_ENC_BYTE_STREAM_SPLIT: {
    size_t w = phys_width(phys);
    if (!w || phys == PQ_INT96) break;
    if ((size_t)(qend - q) % w)
      return fail(c, r, HP_ERR_CORRUPT, "BYTE_STREAM_SPLIT page of %zu bytes for %zu-byte values",
                  (size_t)(qend - q), w);
    r->bss_n = (uint64_t)(qend - q) / w;
    r->bss_i = 0;
    r->enc = E_BSS;
    return HP_OK;
  }
  default:
    return fail(c, r, HP_ERR_UNSUPPORTED,
                "encoding %s (%lld) is not supported (PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY, RLE, "
                "DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT are)",
                pq_encoding_name(enc), (long long)enc);
  }
  return fail(c, r, HP_ERR_UNSUPPORTED, "encoding %s is not supported for %s values", pq_encoding_name(enc),
              pq_phys_name(phys));
}

/* The integer fields ids[0..n) of a nested page header struct into *dst[..]; field 7, a boolean, into
 * *flag when flag is not NULL; the rest skipped. */
static void header_ints(tc_reader *tr, const int16_t *ids, int64_t *const *dst, size_t n, int *flag) {
  int16_t last = 0, id;
  int ft;
  while (tc_field(tr, &last, &ft, &id)) {
    size_t k = 0;
    while (k < n && ids[k] != id)
      k++;
    if (k < n && (ft == TC_I32 || ft == TC_I64))
      *dst[k] = tc_read_int(tr, ft);
    else if (flag && id == 7 && (ft == TC_TRUE || ft == TC_FALSE))
      *flag = ft == TC_TRUE;
    else
      tc_skip(tr, ft);
  }
}

/* Read page headers until a data page with values is loaded. */
static hp_status load_page(pq_rcursor *c, colrd *r) {
  for (;;) {
    if (r->p >= r->end)
      return fail(c, r, HP_ERR_CORRUPT, "pages end %llu values early", (unsigned long long)r->chunk_left);
    tc_reader tr = {r->p, r->end, 0};
    int64_t type = -1, usize = -1, csize = -1, nv = -1, enc = -1, dle = PQ_ENC_RLE;
    int64_t dlen = 0, rlen = 0; /* v2: bytes of definition and repetition levels */
    int compressed = 1;         /* v2: the values are compressed */
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
      else if (id == 5 && ft == TC_STRUCT) { /* DataPageHeader */
        static const int16_t ids[] = {1, 2, 3};
        int64_t *const dst[] = {&nv, &enc, &dle};
        header_ints(&tr, ids, dst, 3, NULL);
      } else if (id == 7 && ft == TC_STRUCT) { /* DictionaryPageHeader */
        static const int16_t ids[] = {1, 2};
        int64_t *const dst[] = {&nv, &enc};
        header_ints(&tr, ids, dst, 2, NULL);
      } else if (id == 8 && ft == TC_STRUCT) { /* DataPageHeaderV2 (field 7: is_compressed) */
        static const int16_t ids[] = {1, 4, 5, 6};
        int64_t *const dst[] = {&nv, &enc, &dlen, &rlen};
        header_ints(&tr, ids, dst, 4, &compressed);
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
    int v2 = type == PQ_PAGE_DATA_V2, data = type == PQ_PAGE_DATA || v2;
    if (!data && type != PQ_PAGE_DICTIONARY) { /* index pages and unknown ones: skip */
      r->p = src + csize;
      continue;
    }
    if (nv < 0) return fail(c, r, HP_ERR_CORRUPT, "page header without its value count");
    if (data && (uint64_t)nv <= r->skip && (uint64_t)nv <= r->chunk_left) {
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
    if (grow(dst, cap, (size_t)usize)) return fail(c, r, HP_ERR_NOMEM, "out of memory");
    size_t lvl = 0; /* v2: levels stored uncompressed before the values */
    if (v2) {
      if (rlen != 0)
        return fail(c, r, HP_ERR_UNSUPPORTED, "repetition levels (a nested column) are not supported");
      if (dlen < 0 || dlen > csize || dlen > usize)
        return fail(c, r, HP_ERR_CORRUPT, "definition levels of %lld bytes in a page of %lld",
                    (long long)dlen, (long long)csize);
      lvl = (size_t)dlen;
      if (lvl) memcpy(*dst, src, lvl);
    }
    char err[160];
    if (pq_decompress(v2 && !compressed ? PQ_CODEC_UNCOMPRESSED : r->ch->codec, c->dctx, src + lvl,
                      (size_t)csize - lvl, *dst + lvl, (size_t)usize - lvl, err, sizeof err))
      return fail(c, r, HP_ERR_CORRUPT, "%s", err);
    sb_free(r); /* strings of the previous page */
    r->p = src + csize;
    if (dict) {
      if (enc != PQ_ENC_PLAIN && enc != PQ_ENC_PLAIN_DICTIONARY)
        return fail(c, r, HP_ERR_UNSUPPORTED, "dictionary page encoding %s (%lld) is not supported",
                    pq_encoding_name(enc), (long long)enc);
      hp_status st = decode_dict(c, r, (size_t)usize, nv);
      if (st != HP_OK) return st;
      continue;
    }
    r->data_seen = 1;
    if ((uint64_t)nv > r->chunk_left || nv > INT32_MAX)
      return fail(c, r, HP_ERR_CORRUPT, "page holds %lld values, only %llu are left", (long long)nv,
                  (unsigned long long)r->chunk_left);
    if (nv == 0) continue;
    unsigned char *q = r->pbuf, *qend = r->pbuf + usize;
    r->levels = 0;
    if (r->ch->optional && v2) {
      r->levels = lvl > 0; /* no levels: no NULL in the page */
      pq_rle_init(&r->def, q, q + lvl, 1);
      q += lvl;
    } else if (r->ch->optional) {
      if (dle != PQ_ENC_RLE)
        return fail(c, r, HP_ERR_UNSUPPORTED, "definition level encoding %s (%lld) is not supported",
                    pq_encoding_name(dle), (long long)dle);
      if (qend - q < 4) return fail(c, r, HP_ERR_CORRUPT, "page too short for its definition levels");
      uint32_t len = (uint32_t)load_le(q, 4);
      if (len > (size_t)(qend - q) - 4)
        return fail(c, r, HP_ERR_CORRUPT, "definition levels run past the page");
      pq_rle_init(&r->def, q + 4, q + 4 + len, 1);
      r->levels = 1;
      q += 4 + len;
    } else if (lvl) {
      return fail(c, r, HP_ERR_CORRUPT, "definition levels in a required column");
    }
    hp_status st = start_values(c, r, enc, q, qend);
    if (st != HP_OK) return st;
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

/* m strings of a DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY page into r->b.s. */
static hp_status delta_strings(pq_rcursor *c, colrd *r, uint32_t m) {
  int dba = r->enc == E_DBA;
  if (pq_delta_get(&r->dl, r->lens, m) != m || (dba && pq_delta_get(&r->dl2, r->lens2, m) != m))
    return fail(c, r, HP_ERR_CORRUPT, "string lengths end early");
  for (uint32_t i = 0; i < m; i++) {
    int64_t pre = dba ? (int32_t)r->lens[i] : 0, suf = (int32_t)(dba ? r->lens2[i] : r->lens[i]);
    if (pre < 0 || (uint64_t)pre > r->prevlen || suf < 0 || suf > r->vend - r->vp)
      return fail(c, r, HP_ERR_CORRUPT, "bad string length (prefix %lld, length %lld)", (long long)pre,
                  (long long)suf);
    char *s = NULL;
    hp_status st = sb_alloc(c, r, (size_t)(pre + suf + 1), &s);
    if (st != HP_OK) return st;
    if (pre) memcpy(s, r->prev, (size_t)pre);
    memcpy(s + pre, r->vp, (size_t)suf);
    s[pre + suf] = 0;
    r->vp += suf;
    r->b.s[i] = s;
    if (dba) {
      r->prev = s;
      r->prevlen = (size_t)(pre + suf);
    }
  }
  return HP_OK;
}

/* Decode the next m non-NULL values of the page into r->b (the hub column's representation). */
static hp_status decode_values(pq_rcursor *c, colrd *r, uint32_t m) {
  int str = r->col->type == HP_COL_STR;
  uint64_t *v = r->b.v;
  switch (r->enc) {
  case E_DICT:
    if (pq_rle_batch(&r->idx, r->ib, m) != m)
      return fail(c, r, HP_ERR_CORRUPT, "dictionary indices end early");
    for (uint32_t i = 0; i < m; i++) {
      uint32_t x = r->ib[i];
      if (x >= r->nd) return fail(c, r, HP_ERR_CORRUPT, "dictionary index %u out of %u entries", x, r->nd);
      if (str)
        r->b.s[i] = r->ds[x];
      else
        v[i] = r->dv[x];
    }
    return HP_OK; /* dictionaries are converted when read */
  case E_DLBA:
  case E_DBA: return delta_strings(c, r, m);
  case E_RLE:
    if (pq_rle_batch(&r->idx, r->ib, m) != m) return fail(c, r, HP_ERR_CORRUPT, "RLE values end early");
    for (uint32_t i = 0; i < m; i++)
      v[i] = r->ib[i];
    break;
  case E_DELTA:
    if (pq_delta_get(&r->dl, v, m) != m)
      return fail(c, r, HP_ERR_CORRUPT, "DELTA_BINARY_PACKED values end early");
    if (r->ch->phys == PQ_INT32)
      for (uint32_t i = 0; i < m; i++)
        v[i] = r->ch->is_unsigned ? (uint32_t)v[i] : (uint64_t)(int64_t)(int32_t)(uint32_t)v[i];
    break;
  case E_BSS: {
    size_t w = phys_width(r->ch->phys);
    if (r->bss_n - r->bss_i < m) return fail(c, r, HP_ERR_CORRUPT, "values end early");
    for (uint32_t i = 0; i < m; i++, r->bss_i++) {
      unsigned char one[8];
      for (size_t j = 0; j < w; j++)
        one[j] = r->vp[j * r->bss_n + r->bss_i];
      v[i] = raw_value(r->ch, one);
    }
    break;
  }
  default: /* E_PLAIN */
    if (str) {
      for (uint32_t i = 0; i < m; i++) {
        hp_status st = plain_string(c, r, &r->b.s[i]);
        if (st != HP_OK) return st;
      }
      return HP_OK;
    }
    if (r->ch->phys == PQ_BOOLEAN) {
      if (((uint64_t)(r->vend - r->vp) * 8 - r->bit) < m)
        return fail(c, r, HP_ERR_CORRUPT, "values end early");
      for (uint32_t i = 0; i < m; i++, r->bit++)
        v[i] = r->vp[r->bit >> 3] >> (r->bit & 7) & 1;
      break;
    }
    size_t w = phys_width(r->ch->phys);
    if ((size_t)(r->vend - r->vp) / w < m) return fail(c, r, HP_ERR_CORRUPT, "values end early");
    if (r->fast) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      if (w == 8) {
        memcpy(v, r->vp, (size_t)m * 8);
      } else {
        for (uint32_t i = 0; i < m; i++) {
          uint32_t x;
          memcpy(&x, r->vp + 4 * (size_t)i, 4);
          v[i] = x;
        }
      }
#else
      for (uint32_t i = 0; i < m; i++)
        v[i] = load_le(r->vp + w * i, w);
#endif
      r->vp += w * m;
      return HP_OK;
    }
    for (uint32_t i = 0; i < m; i++)
      v[i] = raw_value(r->ch, r->vp + w * i);
    r->vp += w * m;
    break;
  }
  return r->fast ? HP_OK : to_hub(c, r, v, m);
}

/* Decode the next values of a column, up to a batch and never past its page. */
static hp_status refill(pq_rcursor *c, colrd *r) {
  if (!r->page_left) {
    hp_status st = load_page(c, r);
    if (st != HP_OK) return st;
  }
  uint32_t k = r->page_left < PQ_BATCH ? r->page_left : PQ_BATCH, m = k;
  if (r->levels && pq_rle_take_run(&r->def, 1, k) != k) { /* OPTIONAL: level 1 = a value, 0 = NULL */
    /* (a batch inside one run of 1s, a column without NULLs, takes the k values without spreading levels) */
    if (pq_rle_batch(&r->def, r->lv, k) != k)
      return fail(c, r, HP_ERR_CORRUPT, "definition levels end early");
    m = 0;
    for (uint32_t i = 0; i < k; i++) {
      if (r->lv[i] > 1) return fail(c, r, HP_ERR_CORRUPT, "definition level %u in a flat column", r->lv[i]);
      m += r->lv[i];
    }
  }
  hp_status st = decode_values(c, r, m);
  if (st != HP_OK) return st;
  if (m < k) { /* spread the values over the batch, NULLs reading as the column's "unknown" */
    if (r->col->type == HP_COL_STR) {
      for (uint32_t i = k; i-- > 0;)
        r->b.s[i] = r->lv[i] ? r->b.s[--m] : "";
    } else {
      for (uint32_t i = k; i-- > 0;)
        r->b.v[i] = r->lv[i] ? r->b.v[--m] : r->nullv;
    }
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

/* A column the file lacks reads as the column's "unknown" (pq_colspec.null_value), like a NULL. */
static void put_zero(const colrd *r, char *dst) {
  switch (r->col->type) {
  case HP_COL_U32:
  case HP_COL_I32: {
    uint32_t x = (uint32_t)r->nullv;
    memcpy(dst, &x, 4);
    break;
  }
  case HP_COL_U64:
  case HP_COL_I64:
  case HP_COL_F64: memcpy(dst, &r->nullv, 8); break;
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
  c->g1 = UINT64_MAX;
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
    c->cr[i].nullv = sp && d->columns[i].type != HP_COL_F64 ? (uint64_t)sp->null_value : 0;
  }
  *out = c;
  return HP_OK;
}

static void unmap(pq_rcursor *c) {
  c->rg_set = 0;
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
    sb_free(&c->cr[i]);
  }
  free(c->cr);
  free(c->ranges);
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

hp_status pq_rcursor_filter(pq_rcursor *c, int (*keep)(void *, const hp_col_range *), void *ctx) {
  if (!c->ranges && !(c->ranges = calloc(c->d->ncolumns, sizeof *c->ranges))) return HP_ERR_NOMEM;
  c->keep = keep;
  c->keep_ctx = ctx;
  return HP_OK;
}

void pq_rcursor_range(pq_rcursor *c, uint64_t g0, uint64_t g1) {
  c->g0 = g0;
  c->g1 = g1;
}

static uint64_t readable_rgs(const pq_rfile *f) { return f->ok ? f->nrg : 0; }

/* The pages of row group rgi of the mapped file given back (MADV_DONTNEED: the page cache keeps them): the
 * reader's resident memory is then the row group being read, not the part of the file read so far. */
static void release_rowgroup(pq_rcursor *c, size_t rgi) {
  const pq_rowgroup *rg = &c->files[c->fi].rg[rgi];
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < c->d->ncolumns; i++)
    if (rg->cols[i].present) {
      if (rg->cols[i].start < lo) lo = rg->cols[i].start;
      if (rg->cols[i].start + rg->cols[i].len > hi) hi = rg->cols[i].start + rg->cols[i].len;
    }
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  lo = lo / page * page;
  hi = hi < c->mapsz ? hi / page * page : c->mapsz; /* a page shared with the next group stays */
  if (lo < hi) madvise(c->map + lo, (size_t)(hi - lo), MADV_DONTNEED);
}

/* Move to the next row group with rows (of the range); HP_END after the last. */
static hp_status next_rowgroup(pq_rcursor *c) {
  for (;;) {
    if (c->map && c->rgi + 1 < c->files[c->fi].nrg) {
      if (c->rg_set) release_rowgroup(c, c->rgi);
      c->rgi++;
    } else {
      unmap(c);
      if (c->fi == c->nfiles) {
        c->fi = 0;
        c->gbase = 0;
      } else {
        c->gbase += readable_rgs(&c->files[c->fi]);
        c->fi++;
      }
      /* files without readable row groups, or whose row groups all lie before the range, are not opened */
      while (c->fi < c->nfiles && (!c->files[c->fi].ok || c->gbase + c->files[c->fi].nrg <= c->g0)) {
        c->gbase += readable_rgs(&c->files[c->fi]);
        c->fi++;
      }
      if (c->fi >= c->nfiles || c->gbase >= c->g1) {
        c->fi = c->nfiles - (c->nfiles > 0); /* stay on a valid index for messages */
        c->failed = HP_END;
        return HP_END;
      }
      hp_status st = map_file(c);
      if (st != HP_OK) {
        c->failed = st;
        return st;
      }
      c->rgi = c->g0 > c->gbase ? (size_t)(c->g0 - c->gbase) : 0;
    }
    if (c->gbase + c->rgi >= c->g1) { /* past the range */
      unmap(c);
      c->failed = HP_END;
      return HP_END;
    }
    const pq_rowgroup *rg = &c->files[c->fi].rg[c->rgi];
    if (c->keep && rg->rows) { /* the caller's verdict on the group's statistics */
      for (size_t i = 0; i < c->d->ncolumns; i++)
        c->ranges[i] = (hp_col_range){rg->cols[i].has_range, rg->cols[i].min, rg->cols[i].max};
      if (!c->keep(c->keep_ctx, c->ranges)) continue;
    }
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
      r->enc = E_PLAIN;
      r->bi = r->bn = 0;
      r->skip = 0;
      r->levels = 0;
      r->fast = r->ch->phys == pq_phys_type(r->col->type) && !r->ch->ts_scale;
      sb_free(r);
      r->kind = !r->ch->present                   ? K_ABSENT
                : r->col->type == HP_COL_STR      ? K_STR
                : pq_col_width(r->col->type) == 4 ? K_W4
                                                  : K_W8;
    }
    c->rg_left = rg->rows;
    c->rg_set = 1;
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
      put_zero(r, dst);
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
      for (size_t i = 0; i < n; i++)
        put_zero(r, out + w * (at + i));
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
