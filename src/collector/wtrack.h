/* Write tracking for kernel replay: which pages of host-resident buffers a replayed dispatch writes, each
 * saved when first written (mprotect + a SIGSEGV handler that chains to the application's), restored alone;
 * memory only OpenCL writes stays read-only between dispatches, so a dispatch re-protects what was written.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HPC_WTRACK_H
#define HPC_WTRACK_H
#include <stddef.h>
#include <stdint.h>

/* One range of host memory a kernel may write, and where its saved bytes go (`size` bytes at `shadow`:
 * byte i of the range is saved at shadow[i]). */
typedef struct hpc_wt_range {
  char *host;
  size_t size;
  char *shadow;
  int keep; /* 1: memory only OpenCL commands write (not the application's own): stays read-only ("armed")
               after the dispatch, and the next one protects only the pages written since */
} hpc_wt_range;

/* Whether write tracking can be used in this process, decided once (HUBPROF_WTRACK, a probe that protects a
 * page, writes it and checks the handler saw it). Returns 1 when usable; 0 with *why the reason. "auto"
 * (default) and "on" use it, "off" does not. */
int hpc_wt_usable(const char **why);

/* 1 when HUBPROF_WTRACK=on: tracking wherever the device allows (tests, benchmarks); 0 for "auto". */
int hpc_wt_forced(void);

/* 1 when every whole page of [host, host + size) is resident (mincore): a page never touched is left to
 * the full save, whose pass 1 then takes its first-touch fault as the application's run would. */
int hpc_wt_resident(const char *host, size_t size);

/* Start tracking `n` ranges (one replayed dispatch; the caller serialises them): bytes in pages the ranges
 * share with other memory are saved now, the ranges' own pages are made read-only and saved at their first
 * write. Returns 0, or -1 with nothing left protected (the caller then saves in full). */
int hpc_wt_begin(const hpc_wt_range *r, size_t n);

/* Pages of [host, host + size) that it holds whole (those tracking protects; 0: only shared edges). */
size_t hpc_wt_pages(const char *host, size_t size);

/* Put back every byte saved so far (the pages written since hpc_wt_begin); they stay writable and saved.
 * Returns the bytes copied. */
uint64_t hpc_wt_restore(void);

/* Stop tracking: every page writable again, except armed ones (`keep`); the application's SIGSEGV handler
 * back once nothing is armed. */
void hpc_wt_end(void);

/* Memory [host, host + size) is handed to the application or freed (a map, a release): armed regions
 * overlapping it become writable and are dropped (during a dispatch, at its end). Any thread. */
void hpc_wt_disarm(const char *host, size_t size);

/* Before a command that may write armed memory (a copy, a fill): when the application has replaced the
 * SIGSEGV action since, every armed region is dropped (writable), so its handler never sees our faults. */
void hpc_wt_guard(void);

/* Pages a begin would protect for [host, host + size): its whole pages, or only the open ones of an armed
 * region (the cost estimate). */
size_t hpc_wt_walk(const char *host, size_t size);

/* Pages protected again by begins, in armed regions, since the start (HUBPROF_DEBUG). */
uint64_t hpc_wt_reprotected(void);

/* Nanoseconds spent arming regions (their first whole protection, a one-time cost) since the start. */
uint64_t hpc_wt_arm_ns(void);

/* Totals since the start: bytes saved at first write (and edges), write faults handled. */
void hpc_wt_totals(uint64_t *saved, uint64_t *faults);

/* In a forked child: tracking state of the parent's dispatch (if any) is dropped. */
void hpc_wt_fork_child(void);

#endif
