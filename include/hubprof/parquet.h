/* hubprof Parquet datasets: what only the Parquet format offers beyond the generic hub (hub.h): Hive
 * partitions of the per-process tables, and appending new part files to an existing dataset. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_PARQUET_H
#define HUBPROF_PARQUET_H

#include "hubprof/export.h"
#include "hubprof/hub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Parquet datasets: Hive partitions ---------------------------------------------------------- */
#define HP_PARTITION_NODE 1u    /* node=<node id> folders */
#define HP_PARTITION_PROCESS 2u /* process=<process id> folders */
/* Partition the per-process tables (dispatch, counter_value, region, pc_sample, counter_sample) of a
 * Parquet store being created: their files go to <table>/node=N/process=P/part-NNNNN.parquet (ids of the
 * node and process tables; 0 when unknown). Call after hp_store_open(HP_CREATE) and before writing rows of
 * those tables; keys 0 turns it off. HP_ERR_INVALID for another format, a store opened to read, or too late.
 */
HP_API hp_status hp_parquet_set_partition(hp_store *s, unsigned keys);
/* Make the Parquet store being created (HP_CREATE at the path of an existing store of this build's layout) an
 * append to that store: merge the store itself as the first input, then the new ones. Its own rows of the
 * per-process tables are not written again (its part files stay byte for byte, new processes go to new part
 * files, partitioned as the store is); the small tables are rewritten; the manifest is replaced by one
 * rename at commit. New rows whose ids are not above the store's own fail the write. Call before writing.
 */
HP_API hp_status hp_parquet_set_append(hp_store *s);

#ifdef __cplusplus
}
#endif
#endif /* HUBPROF_PARQUET_H */
