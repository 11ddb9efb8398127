/* The "log" format, shared by its writer (fmt_log_write.c) and reader (fmt_log_read.c): the layout's
 * constants and the per-table column programs derived from the generic descriptions (docs/formats/log.md). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_FMT_LOG_INTERNAL_H
#define HUBPROF_FMT_LOG_INTERNAL_H

#include "fmt_log.h"

#include <stddef.h>
#include <stdint.h>

/* ---- layout ---- */
#define LOG_MAGIC "HUBPLOG\0"
#define LOG_VERSION                                                                                          \
  3u /* 2: dispatch batch records, which a version-1 reader would skip (lose); 3: chunk trailers             \
      * and the closing record, which a version-2 reader ignores (so it may read the file) */
#define LOG_MIN_READER 2u
#define LOG_HEADER_SIZE 4096u
#define HDR_CRC_OFF 128u      /* header CRC-32C of bytes [0, 128) */
#define HDR_FIXED 132u        /* bytes of the header this version defines */
#define BLK_MAGIC 0x4B4C4248u /* "HBLK" as little-endian bytes */
#define BLK_HDR 16u           /* u32 magic, u32 payload length, u32 records, u32 crc32c */
#define REC_LOST 64u          /* record type of a LOST record; tables are 1 + hp_table */
#define LOST_REC_MAX 22u      /* type, length, two varints */
#define REC_DBATCH 65u   /* record type of a dispatch batch: rows delta-encoded against the previous one */
#define DBATCH_MAX 64u   /* rows in one dispatch batch record at most (a record stays under 16 KiB) */
#define LOST_RESERVE 64u /* chunk tail kept free for one LOST block */
#define REC_CHUNK                                                                                            \
  66u /* record type of a chunk trailer (the one record of the last block of a closed chunk) */
/* The trailer's fields: seq, chunk index, blocks, records, CRC-32C of the blocks' CRCs, table count, rows per
 * table; all varints. Kept free at the end of every chunk, after the LOST reserve. */
#define TRAILER_MAX (1u + 2u + 6u * 10u + 10u * HP_TABLE_SLOTS)
#define TRAILER_RESERVE ((BLK_HDR + TRAILER_MAX + 7u) & ~7u)
/* The closing record: in the header page at CLOSE_OFF, written once when the writer closes the log (commit).
 * Fields at these offsets from CLOSE_OFF; rows[ntables] at CLOSE_ROWS, then a CRC-32C of all before it. */
#define CLOSE_OFF 512u
#define CLOSE_MAGIC "HPLCLOSE"
#define CLOSE_NTABLES 12u /* u32 */
#define CLOSE_CHUNKS 16u  /* u64: chunks closed with a trailer (their sequence numbers are 0 .. chunks-1) */
#define CLOSE_BLOCKS 24u  /* u64: blocks in them, trailers not counted */
#define CLOSE_RECORDS 32u /* u64: records in those blocks */
#define CLOSE_LOST 40u    /* u64: records the writer lost (also in LOST records) */
#define CLOSE_TIME 48u    /* u64: CLOCK_REALTIME when closed */
#define CLOSE_ROWS 56u    /* u64 per table: rows written (small-table rows counted each time written) */
#define CLOSE_SIZE(n) (CLOSE_ROWS + 8u * (n) + 4u)
_Static_assert(HP_TABLE_COUNT <= HP_TABLE_SLOTS,
               "a trailer and the closing record hold HP_TABLE_SLOTS tables");
#define MIN_CHUNK (64u << 10)
#define MAX_CHUNK (1u << 30)
#define MAX_COLS 32
#define SPARE_MAX 16 /* chunks made ready ahead of need (hp_log_prepare) */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* ---- encoding: little-endian words, LEB128 varints, zigzag (src/common/hu_varint.h) ---- */
static inline uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }
static inline unsigned char *align8p(unsigned char *p) { return (unsigned char *)align8((uintptr_t)p); }

/* ---- table info: derived once from the generic descriptions ---- */
/* Column kinds of the encoder: bit 0 = signed (zigzag), bit 1 = 64 bits; then doubles and strings. */
enum { K_U32 = 0, K_I32 = 1, K_U64 = 2, K_I64 = 3, K_F64 = 4, K_STR = 5 };

typedef struct col_op {
  uint16_t off; /* offset in the row struct */
  uint8_t kind; /* K_* */
} col_op;

typedef struct tinfo {
  const hp_table_desc *d;
  size_t bound;   /* largest payload without string bytes (seq, varints, doubles, string lengths) */
  int small;      /* rows replace earlier rows with the same key; the payload starts with a sequence */
  unsigned nstr;  /* string columns */
  unsigned ncols; /* columns encoded */
  size_t stroff[MAX_COLS]; /* offsets of the string columns in the row */
  col_op ops[MAX_COLS];    /* the columns, compact, in description order */
} tinfo;

extern tinfo hp_log_ti[HP_TABLE_COUNT]; /* filled by hp_log_ti_init */
/* Derive the column programs once (thread-safe; every entry point of the format calls it first). */
void hp_log_ti_init(void);

/* The format's operations, one file each side (the reader's in fmt_log_read.c, the writer's in
 * fmt_log_write.c): hp_log_probe, hp_log_open_read, ... hp_log_cursor_close (hub_internal.h), and
 * park/resume. */
HP_FORMAT_DECLARE(hp_log)

/* The launch file beside the log at log_path (fmt_log_launch_read.c; docs/formats/log.md, "The launch file"):
 * *rows (malloc'd, NULL when none) and *n get a dispatch row for every entry [tail, head) of its rings, each
 * dispatch id once (0 never), as a dispatch launched whose end is unknown (no device times, passes 0). None
 * when the file is absent, or its writer still lives (it holds a write lock on the file's first byte). why
 * (may be NULL) gets what was not read and why ("" when all was). HP_OK, or HP_ERR_NOMEM (no rows). */
hp_status hp_log_launch_read(const char *log_path, hp_dispatch **rows, size_t *n, char *why, size_t whylen);
hp_fmt_park_fn hp_log_park;
hp_fmt_resume_fn hp_log_resume;

/* The launch file of log s being written (fmt_log_launch.c), released at its commit or abort: remove (the
 * log is closed, or gone) unlinks it when this process made it; a forked child's copy only closes it. */
void hp_log_launch_close(const hp_store *s, int remove);

#endif
