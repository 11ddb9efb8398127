/* Regions inside the collector (regions.c): what nvtx.c and the exported API call, and the limits and
 * marker names the docs (docs/api-regions.md) promise. */
#ifndef HUBPROF_COLLECTOR_REGIONS_H
#define HUBPROF_COLLECTOR_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#define HPC_REGION_NAME_MAX 1024 /* bytes stored of a name, terminator included: longer ones end in "..." */
#define HPC_REGION_DEPTH 64      /* nesting levels recorded per thread; deeper regions are counted only */

#define HPC_REGION_CAT_API "hubprof"     /* category of hubprof_region_begin/hubprof_mark */
#define HPC_REGION_CAT_HUBPROF "hubprof" /* category of the collector's own markers below */
#define HPC_REGION_END_WITHOUT_BEGIN "hubprof: region end without begin"
#define HPC_REGION_THREAD_EXIT "hubprof: thread exit inside region"
#define HPC_REGION_PROCESS_EXIT "hubprof: process exit inside region"
#define HPC_REGION_TOO_DEEP "hubprof: regions nested too deep, deeper ones not recorded"

/* Copy name (at most len bytes, or to its terminator) into dst as UTF-8 of at most cap-1 bytes: invalid
 * bytes become \xNN, a name too long is cut at a character and ends in "...", NULL becomes "(null)".
 * cap >= 8. Returns the stored length. */
__attribute__((visibility("hidden"))) size_t hpc_region_name(char *dst, size_t cap, const char *name,
                                                             size_t len);
/* Open a region on the calling thread (category lives as long as the process); close the innermost one. */
__attribute__((visibility("hidden"))) void hpc_region_push(const char *category, const char *name,
                                                           size_t len);
__attribute__((visibility("hidden"))) void hpc_region_pop(void);
/* Write one finished region (start == end: a marker) of the calling thread. */
__attribute__((visibility("hidden"))) void hpc_region_write(const char *category, const char *name,
                                                            size_t len, int64_t start_ns, int64_t end_ns);
__attribute__((visibility("hidden"))) int64_t hpc_region_now(void);

#endif
