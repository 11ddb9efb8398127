/* Internals shared by the Parquet format's files (fmt_parquet.c, parquet_write.c, parquet_read.c,
 * parquet_thrift.c, parquet_rle.c): the Thrift compact protocol, the RLE/bit-packed hybrid, and the table
 * writer and reader (byte buffers and the manifest's JSON come from src/common). Only these files include
 * it. Sections: constants of the spec · Thrift compact · RLE hybrid · writer · reader. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_PARQUET_INTERNAL_H
#define HUBPROF_PARQUET_INTERNAL_H

#include "hub_internal.h"

#include "../common/hu_buf.h"
#include "../common/hu_json.h"
#include "../common/hu_varint.h"

#include <stddef.h>
#include <stdint.h>

/* ---- constants of parquet.thrift (apache/parquet-format) ---- */
enum {
  PQ_BOOLEAN = 0,
  PQ_INT32 = 1,
  PQ_INT64 = 2,
  PQ_INT96 = 3,
  PQ_FLOAT = 4,
  PQ_DOUBLE = 5,
  PQ_BYTE_ARRAY = 6
};
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
enum { PQ_CT_UTF8 = 0, PQ_CT_UINT_32 = 13, PQ_CT_UINT_64 = 14 };
enum { PQ_ENC_PLAIN = 0, PQ_ENC_PLAIN_DICTIONARY = 2, PQ_ENC_RLE = 3, PQ_ENC_RLE_DICTIONARY = 8 };
enum { PQ_CODEC_UNCOMPRESSED = 0, PQ_CODEC_SNAPPY = 1, PQ_CODEC_GZIP = 2, PQ_CODEC_ZSTD = 6 };
enum {
  PQ_ENC_BIT_PACKED = 4,
  PQ_ENC_DELTA_BINARY_PACKED = 5,
  PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
  PQ_ENC_DELTA_BYTE_ARRAY = 7,
  PQ_ENC_BYTE_STREAM_SPLIT = 9
};
/* converted types (the older annotation) the reader looks at */
enum { PQ_CT_DECIMAL = 5, PQ_CT_TIMESTAMP_MILLIS = 9, PQ_CT_TIMESTAMP_MICROS = 10, PQ_CT_UINT_8 = 11 };
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICTIONARY = 2, PQ_PAGE_DATA_V2 = 3 };

/* Store layout: the manifest's name and magic, the store layout version this build writes and reads. */
#define PQ_MANIFEST "_hubprof.json"
#define PQ_MAGIC "hubprof-parquet"
#define PQ_STORE_VERSION 2      /* 2: a folder per table; 1: flat <table>.parquet files */
#define PQ_SCHEMA_VERSION "1.1" /* 1.1: pc_sample, counter_sample, code_blob, code_object columns */

/* Limits of the reader: anything larger is taken as damage, never allocated. */
#define PQ_MAX_MANIFEST (16u << 20) /* manifest bytes */
#define PQ_MAX_FOOTER (64u << 20)   /* Thrift FileMetaData bytes */
#define PQ_MAX_PAGE (256u << 20)    /* one page, uncompressed */
#define PQ_MAX_ROWS_PER_BYTE 1024   /* rows a file may claim per byte of its size */
#define PQ_MAX_THRIFT_DEPTH 32      /* nesting of Thrift structs and lists */

/* The Parquet physical type of a hub column type, and its value's width in bytes (4 or 8; strings 8). */
static inline int pq_phys_type(hp_col_type ty) {
  switch (ty) {
  case HP_COL_U32:
  case HP_COL_I32: return PQ_INT32;
  case HP_COL_U64:
  case HP_COL_I64: return PQ_INT64;
  case HP_COL_F64: return PQ_DOUBLE;
  case HP_COL_STR: return PQ_BYTE_ARRAY;
  }
  return -1;
}
static inline size_t pq_col_width(hp_col_type ty) { return ty == HP_COL_U32 || ty == HP_COL_I32 ? 4 : 8; }

/* ---- Thrift compact protocol ---- */
enum {
  TC_STOP = 0,
  TC_TRUE = 1,
  TC_FALSE = 2,
  TC_I8 = 3,
  TC_I16 = 4,
  TC_I32 = 5,
  TC_I64 = 6,
  TC_DOUBLE = 7,
  TC_BINARY = 8,
  TC_LIST = 9,
  TC_SET = 10,
  TC_MAP = 11,
  TC_STRUCT = 12,
};

/* Writer: fields of nested structs; each level remembers its last field id (ids are delta-coded). */
typedef struct tc_writer {
  hu_buf *b;                         /* output */
  int depth;                         /* current struct nesting, 0 = top-level struct */
  int16_t last[PQ_MAX_THRIFT_DEPTH]; /* last field id written at each depth */
} tc_writer;

void tc_init(tc_writer *w, hu_buf *b);
void tc_i32(tc_writer *w, int16_t id, int32_t v);
void tc_i64(tc_writer *w, int16_t id, int64_t v);
void tc_binary(tc_writer *w, int16_t id, const void *p, size_t n);
void tc_struct_begin(tc_writer *w, int16_t id); /* a struct-valued field */
void tc_struct_end(tc_writer *w);               /* stop byte, back to the outer struct */
void tc_list_begin(tc_writer *w, int16_t id, int elem_type, size_t n);
void tc_elem_i32(tc_writer *w, int32_t v);
void tc_elem_binary(tc_writer *w, const void *p, size_t n);
void tc_elem_struct_begin(tc_writer *w); /* a struct element of a list; end with tc_struct_end */
void tc_stop(tc_writer *w);              /* end of the top-level struct */

/* Reader over [p, end): every read is bounded; `err` is sticky and every later read then yields 0. */
typedef struct tc_reader {
  const unsigned char *p;   /* next byte */
  const unsigned char *end; /* one past the last byte */
  int err;                  /* malformed or past the end */
} tc_reader;

/* Next field header of the struct being read: returns 0 at its stop byte (or on error), else 1 with
 * *type and *id; *last is the struct's last field id (start with 0). For TC_TRUE/TC_FALSE the value is
 * in the type. */
int tc_field(tc_reader *r, int16_t *last, int *type, int16_t *id);
int64_t tc_read_int(tc_reader *r, int type); /* an i8/i16/i32/i64 of that wire type */
void tc_read_binary(tc_reader *r, const unsigned char **p, size_t *n);
/* List header: element type and count (bounded by the bytes left). */
void tc_read_list(tc_reader *r, int *elem_type, size_t *n);
/* Skip a value of the given type (nested values bounded by PQ_MAX_THRIFT_DEPTH). */
void tc_skip(tc_reader *r, int type);

/* ---- RLE / bit-packed hybrid (Encodings.md), for dictionary indices and definition levels ---- */
void pq_rle_encode(hu_buf *b, const uint32_t *v, size_t n, int bit_width);

typedef struct pq_rle_dec {
  const unsigned char *p, *end; /* encoded runs left */
  int bw;                       /* bit width, 0..32 */
  uint32_t rle_left;            /* values left in the current RLE run */
  uint32_t rle_val;             /* its value */
  uint64_t bp_left;             /* values left in the current bit-packed run (after buf) */
  uint32_t buf[8];              /* one unpacked group of a bit-packed run */
  int buf_i, buf_n;             /* next and count in buf */
} pq_rle_dec;

void pq_rle_init(pq_rle_dec *d, const unsigned char *p, const unsigned char *end, int bit_width);
int pq_rle_next(pq_rle_dec *d, uint32_t *out);               /* 0 ok, -1 no more data or malformed */
size_t pq_rle_batch(pq_rle_dec *d, uint32_t *out, size_t n); /* up to n values; fewer: data ended or bad */
/* The next n values when they all lie in one RLE run of value `want`: consumed, n returned. Otherwise 0 and
 * nothing consumed (a run's header may have been read; pq_rle_batch goes on from there). */
size_t pq_rle_take_run(pq_rle_dec *d, uint32_t want, size_t n);

/* ---- writer (parquet_write.c): one per table, buffering at most one row group ---- */
typedef struct pq_limits {
  uint64_t rg_rows;    /* rows per row group at most */
  uint64_t rg_bytes;   /* buffered value bytes per row group at most */
  uint32_t file_rgs;   /* row groups per file at most */
  uint64_t file_bytes; /* bytes per file at most (a new file starts after the row group crossing it) */
  int zstd_level;
} pq_limits;

typedef struct pq_twriter pq_twriter;
/* A file's name relative to the store: <table>/node=N/process=N/part-NNNNN.parquet at most. */
#define PQ_NAME_MAX 160
typedef struct pq_file_entry {
  char name[PQ_NAME_MAX]; /* file name inside the store directory */
  uint64_t rows;          /* rows in the file */
  uint64_t bytes;         /* file size */
  uint32_t footer_crc;    /* CRC-32C of the file's last footer length + 8 bytes (metadata, length, magic) */
} pq_file_entry;

hp_status pq_twriter_new(hp_store *s, const char *dir, hp_table t, const pq_limits *lim, pq_twriter **out);
hp_status pq_twriter_add(pq_twriter *w, const void *row);
/* Rows added from now on go to the Hive partition folder `part` ("node=1/process=2"; "" = the table's own
 * folder): when it differs from the current one, the buffered rows are written and the open file closed.
 * Meant for streamed tables (a small table is held whole until the end). */
hp_status pq_twriter_partition(pq_twriter *w, const char *part);
/* Number the writer's files from `first` on (an append: after the files a store already has). */
void pq_twriter_first_file(pq_twriter *w, unsigned first);
/* Flush and close the last file (an empty file when the table has no rows); then *files and *n describe
 * the files, <table>/part-00000.parquet, … (owned by the writer). */
hp_status pq_twriter_finish(pq_twriter *w, const pq_file_entry **files, size_t *n);
void pq_twriter_free(pq_twriter *w); /* closes an open file; removes nothing */

/* ---- reader (parquet_read.c) ---- */
typedef struct pq_chunk {
  uint64_t start;      /* first byte of the column chunk (dictionary or first data page) */
  uint64_t len;        /* total compressed bytes of its pages */
  uint64_t num_values; /* values (= rows: the schema is flat) */
  int codec;           /* PQ_CODEC_* */
  int optional;        /* OPTIONAL column: definition levels precede the values */
  int present;         /* the column exists in the file (else every row gets 0 / "") */
  int phys;            /* physical type in the file (PQ_INT32, ...), converted to the hub column's type */
  int is_unsigned;     /* INT32 annotated unsigned: zero-extended */
  uint32_t ts_scale;   /* TIMESTAMP in MILLIS (1000000) or MICROS (1000): times this gives nanoseconds */
  int has_range;       /* every value as read lies in [min, max] (statistics; integer columns) */
  int64_t min, max;
} pq_chunk;

typedef struct pq_rowgroup {
  uint64_t rows;
  pq_chunk *cols; /* one per column of the hub table, in its description's order */
} pq_rowgroup;

typedef struct pq_rfile {
  char *name;    /* file name in the store */
  char *path;    /* full path */
  uint64_t size; /* bytes */
  uint64_t rows; /* rows by its footer */
  size_t nrg;    /* row groups */
  pq_rowgroup *rg;
  int ok;        /* the footer was read and checked: rows are readable */
  char err[200]; /* why pq_read_footer failed (without the file name), "" */
} pq_rfile;

/* Read and check the footer of the open file fd (size bytes) for table d; with crc not NULL, the footer's
 * CRC-32C (as pq_file_entry.footer_crc) must equal *crc. On failure returns the status, with the problem in
 * f->err (without the file name) and *offset the byte where it was found. */
hp_status pq_read_footer(int fd, uint64_t size, const hp_table_desc *d, const uint32_t *crc, pq_rfile *f,
                         uint64_t *offset);
void pq_rfile_free(pq_rfile *f);

typedef struct pq_rcursor pq_rcursor;
/* A cursor over the readable files of one table, in order. */
hp_status pq_rcursor_open(hp_store *s, const hp_table_desc *d, pq_rfile *files, size_t nfiles,
                          pq_rcursor **out);
/* Only the row groups [g0, g1) of the cursor's readable files, counted in order over all of them (before the
 * first read). */
void pq_rcursor_range(pq_rcursor *c, uint64_t g0, uint64_t g1);
/* Read only the row groups keep() says 1 of (hp_cursor_filter). */
hp_status pq_rcursor_filter(pq_rcursor *c, int (*keep)(void *, const hp_col_range *), void *ctx);
hp_status pq_rcursor_next(pq_rcursor *c, void *row);
/* Columnar read with the contract of hp_cursor_next_batch; columns left out (NULL) are not decoded, and
 * their pages not decompressed when wholly passed over. */
hp_status pq_rcursor_next_batch(pq_rcursor *c, void *const *cols, size_t max, size_t *n);
void pq_rcursor_close(pq_rcursor *c);

/* ---- reader helpers (parquet_codec.c, parquet_decode.c) ---- */
const char *pq_codec_name(int64_t codec);    /* "SNAPPY"; "unknown" */
int pq_codec_supported(int64_t codec);       /* this build decompresses it */
const char *pq_encoding_name(int64_t enc);   /* "DELTA_BINARY_PACKED"; "unknown" */
const char *pq_phys_name(int64_t phys_type); /* "INT64"; "unknown" */
/* Decompress one page of n bytes at src into exactly un bytes at dst (zstd_dctx: a ZSTD_DCtx *); -1 with a
 * problem in err when the data is bad or its size is not un. */
int pq_decompress(int codec, void *zstd_dctx, const unsigned char *src, size_t n, unsigned char *dst,
                  size_t un, char *err, size_t errlen);

/* DELTA_BINARY_PACKED decoder over [p, end): values as 64-bit words (INT32 values wrap in their low half). */
typedef struct pq_delta {
  const unsigned char *p, *end; /* next block or miniblock */
  uint64_t block, nmini, vpm;   /* values per block, miniblocks per block, values per miniblock */
  uint64_t left;                /* values not yet returned */
  uint64_t last, min_delta;     /* previous value; the block's minimum delta */
  const unsigned char *bws;     /* bit widths of the block's miniblocks */
  uint64_t mini_i;              /* next miniblock of the block */
  const unsigned char *mp;      /* current miniblock */
  uint64_t bit, mini_left;      /* next bit in it, values left in it */
  int mbw, first, err;          /* its bit width; the first value is pending; malformed */
} pq_delta;
int pq_delta_init(pq_delta *d, const unsigned char *p, const unsigned char *end); /* -1: bad header */
size_t pq_delta_get(pq_delta *d, uint64_t *out, size_t n); /* up to n values; fewer: ended or bad (err) */
const unsigned char *pq_delta_end(const pq_delta *d); /* first byte after the encoded values, NULL if bad */
int64_t pq_int96_ns(const unsigned char *p);          /* an INT96 timestamp as nanoseconds since 1970 */

#endif
