/* Extras of the "log" format beyond hp_format_ops: flushes, loss records and tuning, for the collector
 * and tests. Every function returns HP_ERR_UNSUPPORTED for a store that is not a log being written. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_FMT_LOG_H
#define HUBPROF_FMT_LOG_H

#include "hub_internal.h"

#include <stddef.h>

/* Append a LOST record: `count` records of process `process_id` (0 = the log's process) were lost. */
hp_status hp_log_write_lost(hp_store *s, uint64_t process_id, uint64_t count);

/* Append n dispatch rows: the records hp_write_dispatch would append, byte for byte, through an encoder
 * unrolled for this one table and with the thread's writer looked up once (the collector's harvest).
 * Returns HP_OK, or the first failure (the rows that failed are counted as lost, the others written);
 * *written (may be NULL) gets the number written. A store that is not a log being written goes through
 * hp_write_dispatch row by row. */
hp_status hp_log_write_dispatches(hp_store *s, const hp_dispatch *rows, size_t n, size_t *written);

/* Append one region row whose name and category are valid UTF-8 of the given lengths (the collector's,
 * made by hpc_region_name): the record hp_write_region would append, byte for byte, without its checks
 * and copies (the region hot path). A store that is not a log being written goes through hp_write_region. */
hp_status hp_log_write_region(hp_store *s, const hp_region *r, size_t name_len, size_t cat_len);

/* Make chunks ready ahead of need, off the append path (the collector's background harvester, each period):
 * allocated, mapped and their pages faulted in, so that a writer that fills its chunk takes one of them
 * instead of allocating, mapping and faulting on its own (a writer takes one only when it gets the store's
 * lock without waiting). Keeps one more than the writers took since the last call (1 to 16); chunks
 * never used read as zeros (nothing committed) and are given back at close. Call it from one thread at a
 * time while the store is open. HP_ERR_IO: no space (and no more tries: the writers' own path reports it). */
hp_status hp_log_prepare(hp_store *s);

/* Commit the calling thread's open block, so that its rows survive a crash of the process. */
hp_status hp_log_flush(hp_store *s);

/* Commit every thread's open block (close does this). Call it only while no other thread is writing
 * to the store: the append path takes no lock. */
hp_status hp_log_flush_all(hp_store *s);

/* errno of the last failure to extend a log being written (ENOSPC: the disk is full), 0 when none or when
 * the store is not such a log. The append path sets no message (it runs inside the application); callers
 * that report, such as the merge, name the file with it. */
int hp_log_write_errno(hp_store *s);

/* Records this store could not write so far (no disk space, no memory, rows too large). */
hp_status hp_log_lost(hp_store *s, uint64_t *n);

/* Chunk size (a power of two, 64 KiB to 1 GiB) and target block payload size (64 bytes to a quarter of
 * a chunk) of logs created from now on in this process; 0 keeps the current value. Defaults 1 MiB, 16 KiB. */
hp_status hp_log_set_defaults(uint64_t chunk_size, uint32_t block_target);

/* ---- the launch file: dispatches launched and not yet in the log, kept across the writer's death ----------
 * Beside a log being written (its path + HP_LAUNCH_SUFFIX), made at the first ring: per collector thread one
 * ring of the dispatches it launched whose rows are not (all) in the log yet, in file-backed shared memory,
 * so that a process killed before it could harvest them still leaves them on record. A reader of a log
 * without a closing record whose writer is gone (it held a write lock on the file's first byte while it
 * lived) reads entries [tail, head) of every ring and keeps those whose dispatch id the log lacks, as
 * dispatches without device times and with passes 0: launched, end unknown (docs/formats/log.md). */
#define HP_LAUNCH_SUFFIX ".launch"
#define HP_LAUNCH_MAGIC "HPLAUNCH"
#define HP_LAUNCH_RING_MAGIC "HPLRING"
#define HP_LAUNCH_VERSION 1u
#define HP_LAUNCH_PAGE                                                                                       \
  4096u /* the file header and each ring's header take one page; areas are page-aligned */
/* File header (offset 0, little-endian): magic[8], u32 version, u32 entry size, u64 offset of the ring
 * made last (0: none; each ring names the one before it: `prev`), i64 pid of the writer. */
#define HP_LAUNCH_H_VERSION 8u
#define HP_LAUNCH_H_ENTRY 12u
#define HP_LAUNCH_H_LAST 16u
#define HP_LAUNCH_H_PID 24u

/* A ring's header: the first bytes of its page (the rest of the page is the writer's own, never read).
 * The writer's own state may embed it (the collector's hpc_thread does: head and tail are its fast path's
 * words), so the fields it stores on the enqueue path come first. */
typedef struct hp_launch_ring {
  _Atomic uint64_t head; /* entries [tail, head), indices taken modulo the capacity, are launched and not */
  _Atomic uint64_t tail; /* known to be in the log */
  _Atomic uint64_t geom; /* the entries' file offset (page-aligned) | log2(capacity) in the low 6 bits */
  _Atomic uint64_t thread_id; /* thread row of the ring's owner (the log's process) */
  /* The stamp calibration of the entries' enqueue times: ns = cal_ns + (stamp - cal_stamp) / cal_rate.
   * cal_seq is odd while it is being rewritten (a reader then takes none: enqueue times 0). */
  _Atomic uint64_t cal_seq;
  int64_t cal_stamp, cal_ns;
  double cal_rate; /* stamp units per ns (1 when stamps are ns) */
  uint64_t prev;   /* file offset of the ring header made before this one, 0 none */
  char magic[8];   /* HP_LAUNCH_RING_MAGIC */
  uint64_t own;    /* the writer's: 1 file-backed, 0 in memory only (then no file holds it) */
} hp_launch_ring;
/* The same fields as file offsets from the ring's header (what a reader decodes, little-endian). */
#define HP_LAUNCH_R_HEAD 0u
#define HP_LAUNCH_R_TAIL 8u
#define HP_LAUNCH_R_GEOM 16u
#define HP_LAUNCH_R_THREAD 24u
#define HP_LAUNCH_R_CAL_SEQ 32u
#define HP_LAUNCH_R_CAL_STAMP 40u
#define HP_LAUNCH_R_CAL_NS 48u
#define HP_LAUNCH_R_CAL_RATE 56u /* IEEE-754 double */
#define HP_LAUNCH_R_PREV 64u
#define HP_LAUNCH_R_MAGIC 72u
_Static_assert(offsetof(hp_launch_ring, tail) == HP_LAUNCH_R_TAIL &&
                   offsetof(hp_launch_ring, geom) == HP_LAUNCH_R_GEOM &&
                   offsetof(hp_launch_ring, thread_id) == HP_LAUNCH_R_THREAD &&
                   offsetof(hp_launch_ring, cal_seq) == HP_LAUNCH_R_CAL_SEQ &&
                   offsetof(hp_launch_ring, cal_stamp) == HP_LAUNCH_R_CAL_STAMP &&
                   offsetof(hp_launch_ring, cal_ns) == HP_LAUNCH_R_CAL_NS &&
                   offsetof(hp_launch_ring, cal_rate) == HP_LAUNCH_R_CAL_RATE &&
                   offsetof(hp_launch_ring, prev) == HP_LAUNCH_R_PREV &&
                   offsetof(hp_launch_ring, magic) == HP_LAUNCH_R_MAGIC,
               "hp_launch_ring is the ring header's layout (docs/formats/log.md)");

/* One entry: HP_LAUNCH_ENTRY bytes, the collector's hpc_pending (little-endian, as on x86-64 and arm64). */
#define HP_LAUNCH_ENTRY 72u
#define HP_LAUNCH_E_DISPATCH 8u /* u64 dispatch id (the row id); bytes 0..7 are the writer's own */
#define HP_LAUNCH_E_KERNEL 16u  /* u32 kernel_symbol id */
#define HP_LAUNCH_E_QUEUE 20u   /* u32 queue id */
#define HP_LAUNCH_E_AGENT 24u   /* u32 agent id */
#define HP_LAUNCH_E_FLAGS 28u   /* u32: bit 1 = hp_dispatch.cold (its kernel's first dispatch) */
#define HP_LAUNCH_E_GRID 32u    /* u32[3] */
#define HP_LAUNCH_E_WG 44u      /* u32[3] */
#define HP_LAUNCH_E_ENQUEUE 56u /* i64 stamp of the enqueue (cal_* convert it) */
#define HP_LAUNCH_E_REGION 64u  /* u64 region id, 0 none */

/* A new ring of 2^log2cap entries for the calling process: in the launch file of log s (made at the first
 * call, its first byte write-locked while the process lives), or in memory only when s is NULL, not a log
 * being written, or the file cannot be made or extended (then nothing survives a crash: as before the file).
 * *ring: its header, zeroed but for the format's fields (HP_LAUNCH_PAGE bytes: the rest is the caller's);
 * *entries: the entries. HP_ERR_NOMEM when not even memory could be had. Not on a fast path (a lock). */
hp_status hp_log_launch_ring(hp_store *s, unsigned log2cap, hp_launch_ring **ring, void **entries);
/* Double ring r's capacity: new entries mapped (in the file when r is), [tail, head) copied to their new
 * places, the new geometry published in one store, the old entries unmapped; *entries in: the old, out: the
 * new. The caller holds off every other user of the ring. -1 when no room could be had (nothing changed). */
int hp_log_launch_grow(hp_store *s, hp_launch_ring *r, void **entries);
/* Record in r the calibration of the stamps its entries hold (the ring's user, under its own exclusion). */
void hp_log_launch_calibrate(hp_launch_ring *r, int64_t stamp, int64_t ns, double rate);
/* Unmap ring r and its entries from this process (a forked child drops its parent's; the file is left). */
void hp_log_launch_unmap(hp_launch_ring *r, void *entries);

#endif
