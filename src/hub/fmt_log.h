/* Extras of the "log" format beyond hp_format_ops: flushes, loss records and tuning, for the collector
 * and tests. Every function returns HP_ERR_UNSUPPORTED for a store that is not a log being written. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_FMT_LOG_H
#define HUBPROF_FMT_LOG_H

#include "hub_internal.h"

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

#endif
