/* Regions inside the collector (regions.c): what nvtx.c and the exported API call, and the limits and
 * marker names the docs (docs/api-regions.md) promise. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_COLLECTOR_REGIONS_H
#define HUBPROF_COLLECTOR_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#define HPC_REGION_NAME_MAX 1024 /* bytes stored of a name, terminator included: longer ones end in "..." */
#define HPC_REGION_DEPTH 64      /* nesting levels recorded per thread; deeper regions are counted only */

/* Category of hubprof_region_begin/hubprof_mark and of the collector's own markers below. Categories are
 * compared by address: one string per category. */
extern const char hpc_region_cat_hubprof[] __attribute__((visibility("hidden")));
#define HPC_REGION_END_WITHOUT_BEGIN "hubprof: region end without begin"
#define HPC_REGION_THREAD_EXIT "hubprof: thread exit inside region"
#define HPC_REGION_PROCESS_EXIT "hubprof: process exit inside region"
#define HPC_REGION_TOO_DEEP "hubprof: regions nested too deep, deeper ones not recorded"

#define HPC_RHIDDEN __attribute__((visibility("hidden")))

/* Copy name (at most len bytes, or to its terminator) into dst as UTF-8 of at most cap-1 bytes: invalid
 * bytes become \xNN, a name too long is cut at a character and ends in "...", NULL becomes "(null)".
 * cap >= 8. Returns the stored length. */
HPC_RHIDDEN size_t hpc_region_name(char *dst, size_t cap, const char *name, size_t len);
/* Open a region on the calling thread (category lives as long as the process): returns its 0-based level;
 * close the innermost open region of that category: returns its level, or -1 when there was none (recorded
 * as an unbalanced end). */
HPC_RHIDDEN int hpc_region_push(const char *category, const char *name, size_t len);
HPC_RHIDDEN int hpc_region_pop(const char *category);
/* Write one finished region (start == end: a marker) of the calling thread. */
HPC_RHIDDEN void hpc_region_write(const char *category, const char *name, size_t len, int64_t start_ns,
                                  int64_t end_ns);
/* The calling thread's thread row id (0 when the collector is off); a fresh region row id; the clock. */
HPC_RHIDDEN uint64_t hpc_region_thread(void);
HPC_RHIDDEN uint64_t hpc_region_id_new(void);
HPC_RHIDDEN int64_t hpc_region_now(void);
/* 1 when one of the calling thread's open regions (the recorded levels) is named one of names[0..n). */
HPC_RHIDDEN int hpc_region_open_named(const char *const *names, size_t n);
struct hp_store;
struct hc_provider;
/* The host part of regions' counters (profile with counters; replay.c sets it up at init): add each
 * counter (provider index, counter_info row id; extra: a counter of no pass of this run, whose counter_info
 * row hpc_region_host_info writes) once, then start. Returns 1 added, 0 already there, -1 past HC_SELF_MAX
 * counters. */
HPC_RHIDDEN int hpc_region_host_add(size_t idx, uint64_t info_id, int extra);
HPC_RHIDDEN void hpc_region_host_start(struct hc_provider *p);
HPC_RHIDDEN void hpc_region_host_info(struct hp_store *s);
/* The counter_info row (row id `id`) of provider p's counter idx. */
HPC_RHIDDEN void hpc_counter_info_row(struct hp_store *s, struct hc_provider *p, size_t idx, uint64_t id);
/* Around hubprof's own work for a dispatch on the calling thread (prov_opencl_replay.c): its counts are left
 * out of the thread's host parts. */
HPC_RHIDDEN void hpc_region_host_pause(void);
HPC_RHIDDEN void hpc_region_host_resume(void);
/* The host part of regions that are not frames of the thread's stack (NVTX start/end ranges, API calls):
 * begin reads the calling thread's counts into v (HPC_REGION_HOST_MAX values; 1 when read: profile with
 * counters); end writes region region_id's rows, its counts since then, on the same thread; write_host
 * writes a finished region with its rows (API calls; host_begin NULL: the region alone, as hpc_region_write).
 */
#define HPC_REGION_HOST_MAX 32 /* = HC_SELF_MAX */
HPC_RHIDDEN int hpc_region_host_begin(double *v);
HPC_RHIDDEN void hpc_region_host_end(struct hp_store *s, uint64_t region_id, const double *begin);
HPC_RHIDDEN void hpc_region_write_host(const char *category, const char *name, size_t len, int64_t start_ns,
                                       int64_t end_ns, const double *host_begin);
/* Exit handler (nvtx.c): close the NVTX start/end ranges still open. */
HPC_RHIDDEN void hpc_nvtx_exit(struct hp_store *s, int64_t end_ns);

#endif
