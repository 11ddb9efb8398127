/* rocpd format internals: what the rocpd_*.c files share (types of the writer state, the page builder and
 * the helpers, the schema text, cross-file functions). Only src/hub/rocpd_*.c and fmt_rocpd.c include this.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ROCPD_INTERNAL_H
#define HUBPROF_ROCPD_INTERNAL_H

#include "../common/hu_buf.h"
#include "../common/hu_map.h"
#include "hub_internal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define RP_SCHEMA_VERSION "3.0.4"
#define RP_WRITER_TAG "hubprof_format" /* metadata tag marking a file written by hubprof */
#define RP_KEY_ESCAPE "hubprof.key:"   /* prefix for user keys that would collide with format tags */
#define RP_SUFFIX_LEN 37               /* "_" + uuid with '-' replaced by '_' */
#define RP_PLACEHOLDER "{\"hubprof_placeholder\":1}"

typedef struct jw {
  hu_buf *b;
  int n; /* members written */
} jw;

/* ---- id -> two values (a, b): an hu_idmap from the id to an index into a pair array (small tables:
 * processes, agents, code objects); id 0, which hu_idmap does not store, has its own slot ---- */
typedef struct rp_pairs {
  hu_idmap idx;
  int64_t (*ab)[2];
  size_t n, cap;
  int has0;
  int64_t ab0[2];
} rp_pairs;

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
  RT_HP_COUNTER_SAMPLE, /* hubprof's own tables, beside ROCm's (docs/formats/rocpd.md, "Samples") */
  RT_HP_CODE_BLOB,
  RT_HP_CEILING, /* hubprof_ceiling: a device's measured peaks (hubprof roofline) */
  RT_COUNT
};

enum { BT_DISPATCH, BT_EVENT, BT_EVENT_INDEX, BT_PMC, BT_COUNT };
#define BT_MAXDEPTH 16
#define BT_MAXCELL 128 /* largest interior cell: 4-byte child + an index key (our keys are two integers) */
#define BT_WBUF (1u << 20) /* bytes of pages per write */
#define BT_NBUF 4          /* write buffers: one filled by the builder while the others are written */

/* One value of a record. */
typedef struct rv {
  unsigned char kind; /* RV_NULL, RV_INT, RV_REAL (bits in i), RV_TEXT (s, n) */
  uint32_t n;
  int64_t i;
  const char *s;
} rv;
enum { RV_NULL, RV_INT, RV_REAL, RV_TEXT, RV_BLOB };

#define RV_I(v) ((rv){RV_INT, 0, (int64_t)(v), NULL})
#define RV_NIL ((rv){RV_NULL, 0, 0, NULL})

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
  hu_buf js;                           /* extdata being written */
  rp_pairs proc;                       /* process id -> (node id, ppid) */
  rp_pairs agent;                      /* agent id -> (node id, type) */
  rp_pairs code;                       /* code object id -> (process id, -) */
  hu_strmap strings;                   /* rocpd_string rows: the id of string i is i + 1 */
  int64_t next_pmc;                    /* rocpd_pmc_event ids */
  int64_t str_empty, str_dispatch_cat; /* ids of "" and "KERNEL_DISPATCH" */
  uint64_t regions;                    /* region rows written */
  uint64_t dispatches;      /* dispatch rows written through SQLite (their events come at commit) */
  bulk bk;                  /* big tables built as pages (b-tree pages section) ... */
  int bulk_on;              /* ... while rows come in id order */
  unsigned char *rec;       /* a record being encoded */
  unsigned char evrec[128]; /* the record of every dispatch's rocpd_event row (its id apart) */
  size_t evlen;
  unsigned need0;        /* tables needing a placeholder row with id 0 (bit per hp_table) */
  int counters_no_agent; /* a counter_info row has agent_id 0 */
  uint64_t last_proc;    /* cache of the last process looked up */
  int64_t last_nid;
  /* reading */
  int own;               /* written by hubprof: id 0 rows are placeholders, keys may be escaped */
  int ext_c;             /* dispatch rows: extdata read raw after the columns and its keys parsed in C
                            (hubprof's own files: a flat JSON object), not by json_extract per key and row */
  char *obj[RT_COUNT];   /* object read for each base table (view or table), NULL when absent */
  pthread_mutex_t rlock; /* the connection has no mutex of its own: one lock per row instead of one per
                          * SQLite call (cursors of one store may still be used from several threads) */
  int rlock_on;
  _Atomic uint64_t ops; /* SQLite VM work done by the current statement (hang guard) ... */
  uint64_t budget;      /* ... and the most it may do */
  uint64_t max_text;    /* the longest string or blob SQLite may make for this file (SQLITE_LIMIT_LENGTH) */
  struct rp_bounds *bounds; /* the reader's byte and time bounds and its private VFS (rocpd_read.c) */
  uint64_t samples;         /* pc_sample rows written (each gets a rocpd_event at commit) */
  /* dispatch rows read straight from the table's pages (rocpd_btree.c), planned once (rocpd_read.c) */
  int pg_plan;       /* 0 not looked at yet, 1 possible, -1 not */
  uint32_t pg_root;  /* the table's root page */
  int8_t pg_src[64]; /* each hub dispatch column's record field; -1 none (0, or an extdata key), -2
                      * the rowid */
  int pg_ext;        /* the record field of extdata */
  int span_known;    /* rp_id_span's answer for the dispatch table, asked once (the file is read-only) */
  int64_t span_lo, span_hi;
} rp_state;

#define RP_MAX_COLS 28 /* most columns of a hub table, plus the extra ones a reader takes */

/* A read cursor: the statement stepping and the buffer holding the current row's strings. */
/* Counter values' extdata decoded by SQLite's JSON functions, remembered per distinct text: a store has a
 * handful of them ({"pass":1}, {"pass":2}, …) over millions of rows. */
#define RP_EXT_MEMO 8
typedef struct rp_ext_memo {
  char *text; /* malloc'd extdata text, NULL = empty slot */
  size_t n;
  uint32_t pass, imputed;
  uint64_t region_id; /* a region's host part (extdata region_id) */
  int has_bits;
  uint64_t bits;
} rp_ext_memo;

typedef struct rp_cursor {
  sqlite3_stmt *st;
  hu_buf arena;
  sqlite3_stmt *ext;             /* counter values: decodes one extdata text */
  rp_ext_memo memo[RP_EXT_MEMO]; /* … and its answers, replaced round robin */
  unsigned memo_next;
  uint64_t text, rows; /* bytes of row text and rows handed out so far (the reader's budgets) */
  uint64_t want;       /* hub columns the statement reads (bit i: column i; rp_cursor_columns), others 0 */
  uint64_t stepped;    /* rows the statement has stepped over */
  uint8_t col[RP_MAX_COLS]; /* the hub column of each column of the statement (rocpd_read.c, plan_cols) */
  size_t ncol;
  int extpos; /* the statement's column of the raw extdata whose keys ext_keys reads, -1 none */
  int ranged; /* a part's cursor (rp_cursor_part): only the ids in range[0]..range[1] */
  int64_t range[2];
  struct rp_btree *bt; /* dispatch rows read from the pages (rocpd_btree.c); NULL: through the statement */
  int64_t bt_last;     /* the rowid of the last row read from them, INT64_MIN none */
  hu_buf bt_ext;       /* the row's extdata text, NUL-terminated (a long one) */
  uint64_t bt_want;    /* the columns bt_col was made for (want) */
  int bt_ncol;
  struct rp_btcol {
    int8_t src;          /* record field, -2 the rowid */
    uint8_t type;        /* hp_col_type */
    uint16_t off;        /* in the row */
  } bt_col[RP_MAX_COLS]; /* the columns read from the record (rocpd_read.c, pages_next) */
  size_t bt_key;         /* ext_keys_text: the key looked for first (the keys come in the same order) */
} rp_cursor;
#define RP_ALL_COLS UINT64_MAX

/* Connection settings of the writer: one transaction, no journal, no syncs (commit syncs the file once). */
#define RP_WRITE_PRAGMAS                                                                                     \
  "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; PRAGMA "                  \
  "temp_store=MEMORY; "                                                                                      \
  "PRAGMA cache_size=-32768;"

/* ---- rocpd_util.c ---- */
static inline void rp_buf_reset(hu_buf *b) { /* empty again, keeping the allocation */
  b->n = 0;
  b->oom = 0;
}
void rp_buf_expand(hu_buf *b, const char *s, const char *suffix);
void rp_jw_begin(jw *w, hu_buf *b);
void rp_jw_i64(jw *w, const char *key, int64_t v);
/* v in decimal ("%" PRId64 without printf, two digits a step: extdata makes some per dispatch) at out, which
 * has room for 20 bytes; returns the length written (no NUL). */
static inline size_t rp_i64_dec(char *out, int64_t v) {
  static const char pairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  size_t n = 0;
  if (v < 0) out[n++] = '-';
  static const uint64_t p10[20] = {1ull,
                                   10ull,
                                   100ull,
                                   1000ull,
                                   10000ull,
                                   100000ull,
                                   1000000ull,
                                   10000000ull,
                                   100000000ull,
                                   1000000000ull,
                                   10000000000ull,
                                   100000000000ull,
                                   1000000000000ull,
                                   10000000000000ull,
                                   100000000000000ull,
                                   1000000000000000ull,
                                   10000000000000000ull,
                                   100000000000000000ull,
                                   1000000000000000000ull,
                                   10000000000000000000ull};
  /* digits (log10 from the bit length, no loop), then written from the last one back: no copy of a variable
   * length */
  size_t t = (size_t)(((64 - __builtin_clzll(u | 1)) * 1233) >> 12);
  size_t len = t + 1 - ((u | 1) < p10[t]); /* u | 1: 0 has one digit */
  char *p = out + n + len;
  while (u >= 100) {
    p -= 2;
    memcpy(p, pairs + 2 * (u % 100), 2);
    u /= 100;
  }
  if (u >= 10) {
    p -= 2;
    memcpy(p, pairs + 2 * u, 2);
  } else {
    *--p = (char)('0' + u);
  }
  return n + len;
}
void rp_jw_u64(jw *w, const char *key, uint64_t v);
void rp_jw_str(jw *w, const char *key, const char *s);
const char *rp_jw_end(jw *w);
int64_t rp_d2i64(double d);
uint64_t rp_d2u64(double d);
int rp_hexval(char c);
const int64_t *rp_pairs_get(const rp_pairs *m, uint64_t key); /* {a, b}, or NULL */
int rp_pairs_put(rp_pairs *m, uint64_t key, int64_t a, int64_t b);
void rp_pairs_free(rp_pairs *m);
hp_status rp_rc_status(int rc);
void rp_make_uuid(char guid[37], char suffix[RP_SUFFIX_LEN + 1]);
int64_t rp_proc_node(rp_state *r, uint64_t pid); /* node of process pid (0: not written yet) */

/* ---- rocpd_schema.c ---- */
extern const char *const rp_read_expr[HP_TABLE_COUNT][RP_MAX_COLS];
extern const char *const rp_write_map[HP_TABLE_COUNT][RP_MAX_COLS];
extern const char *const rp_write_extra[HP_TABLE_COUNT];
extern const int rp_table_base[HP_TABLE_COUNT];
extern const char *const rp_rt_name[RT_COUNT];
extern const char *const rp_rt_cols[RT_COUNT];
extern const char rp_views_sql[];
int rp_reserved_tag(const char *t);
extern const char *const rp_ins_sql[WS_COUNT];

/* ---- rocpd_pages.c ---- */
void rp_bulk_free(bulk *b);
void rp_bulk_start(hp_store *s);
hp_status rp_bulk_dispatch(hp_store *s, const hp_dispatch *d, const char *ext, size_t extlen);
hp_status rp_bulk_counter_value(hp_store *s, const hp_counter_value *cv, const char *ext);
hp_status rp_bulk_flush(hp_store *s);

/* ---- rocpd_sql.c ---- */
hp_status rp_sql_fail(hp_store *s, int rc, const char *what);
hp_status rp_exec_sql(hp_store *s, const char *sql, const char *what);
hp_status rp_prepare_inserts(hp_store *s);
void rp_finalize_inserts(rp_state *r);

/* ---- the format's operations (fmt_rocpd.c's table) ---- */
/* rp_probe, rp_open_read, rp_create, ... rp_cursor_close (hub_internal.h): the writer's in rocpd_write.c
 * (create, write, commit, abort), the reader's in rocpd_read.c, with the optional ones below. */
HP_FORMAT_DECLARE(rp)
hp_fmt_cursor_columns_fn rp_cursor_columns;
hp_fmt_cursor_part_fn rp_cursor_part;

/* ---- rocpd_write.c ---- */
void rp_free_state(rp_state *r);

/* ---- rocpd_read.c ---- */
/* The smallest and largest id of table t's rows in a file written by hubprof (the dispatch table): HP_OK (lo
 * > hi when it has none), HP_ERR_UNSUPPORTED for another table or file, or a read error. */
hp_status rp_id_span(hp_store *s, hp_table t, int64_t *lo, int64_t *hi);

/* ---- rocpd_btree.c ---- */
/* A table b-tree of the file at `path` read from its pages, from root page `root`: NULL when the file is not
 * one this reads (not UTF-8, a WAL file, a bad root) or out of memory. rp_bt_seek: to the first row whose
 * rowid is at least lo (0, or -1); rp_bt_next: the next row's rowid, its record (in the reader's buffers
 * until the next call) and where its first nmax values lie in f, *nv the values the record holds: 1, 0 at the
 * end, -1 for anything unexpected (damage, a loop): read the rest another way. */
typedef struct rp_btree rp_btree;
/* A value of a record: `type` its serial type when below 12 (0 NULL, 1-6 integers, 7 a real, 8 and 9 the
 * integers 0 and 1), RP_F_BLOB or RP_F_TEXT; its len bytes at off from the record's start. */
typedef struct rp_field {
  uint32_t off, len;
  uint8_t type;
} rp_field;
enum { RP_F_BLOB = 12, RP_F_TEXT = 13 };
rp_btree *rp_bt_open(const char *path, uint32_t root);
int rp_bt_seek(rp_btree *b, int64_t lo);
int rp_bt_next(rp_btree *b, int64_t *rowid, const unsigned char **rec, rp_field *f, int nmax, int *nv);
void rp_bt_close(rp_btree *b);
/* The integer (serial types 1-6, 8, 9) or the real's bits (7) of a value at p. */
static inline int64_t rp_field_int(const unsigned char *p, unsigned type) {
  uint64_t x;
  switch (type) {
  case 1: return (int8_t)p[0];
  case 2: return (int16_t)(uint16_t)((unsigned)p[0] << 8 | p[1]);
  case 3: return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8) >> 8;
  case 4: return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
  case 5:
    x = (uint64_t)(int64_t)(int16_t)(uint16_t)((unsigned)p[0] << 8 | p[1]) << 32;
    return (int64_t)(x | (uint32_t)p[2] << 24 | (uint32_t)p[3] << 16 | (uint32_t)p[4] << 8 | p[5]);
  case 6:
  case 7: memcpy(&x, p, 8); return (int64_t)__builtin_bswap64(x);
  case 9: return 1;
  default: return 0;
  }
}
#endif
