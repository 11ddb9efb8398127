/* hubprof's in-application API: named regions, markers and collection start/stop, header-only. Nothing to
 * link: the first call looks the collector up once (the way NVTX does); without hubprof every call returns.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_API_H
#define HUBPROF_API_H

/* Usage (C or C++; POSIX with dlopen, glibc >= 2.34 needs no -ldl, older ones do):
 *   #include <hubprof/api.h>
 *   hubprof_region_begin("solve");   ... nested regions, per thread ...   hubprof_region_end();
 *   hubprof_mark("checkpoint");      a zero-length region
 *   hubprof_stop(); ... hubprof_start();   collection off / on for the whole process
 * Under `hubprof trace|profile` the calls reach the collector; otherwise each is a load and a branch.
 * Define HUBPROF_API_DISABLE to compile every call away. Details: docs/api-regions.md. */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#ifndef RTLD_DEFAULT /* a GNU extension: not declared in strict C modes, the value on glibc and musl */
#define RTLD_DEFAULT ((void *)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The collector's entry points, resolved once per translation unit. state: 0 = not looked up yet,
 * 1 = found, 2 = no collector in this process. */
typedef struct hubprof_api_table_ {
  int state;
  void (*region_begin)(const char *name);
  void (*region_end)(void);
  void (*mark)(const char *name);
  void (*start)(void);
  void (*stop)(void);
} hubprof_api_table_;

static inline void *hubprof_api_sym_(void *lib, const char *name) {
  return lib ? dlsym(lib, name) : dlsym(RTLD_DEFAULT, name);
}

/* Looks the collector up: already in the process (LD_PRELOAD), else the library named by
 * HUBPROF_INJECTION_PATH, which `hubprof trace|profile` sets (the collector itself). Racing threads reach
 * the same answer; the table's pointers are written before its state. */
static inline hubprof_api_table_ *hubprof_api_resolve_(hubprof_api_table_ *t) {
  void *lib = NULL, *p = hubprof_api_sym_(NULL, "hubprof_region_begin");
  if (!p) {
    const char *path = getenv("HUBPROF_INJECTION_PATH");
    if (path && *path && (lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL)) != NULL)
      p = hubprof_api_sym_(lib, "hubprof_region_begin");
  }
  if (p) {
    void *q[4] = {hubprof_api_sym_(lib, "hubprof_region_end"), hubprof_api_sym_(lib, "hubprof_mark"),
                  hubprof_api_sym_(lib, "hubprof_start"), hubprof_api_sym_(lib, "hubprof_stop")};
    if (q[0] && q[1] && q[2] && q[3]) {
      memcpy(&t->region_begin, &p, sizeof p);
      memcpy(&t->region_end, &q[0], sizeof p);
      memcpy(&t->mark, &q[1], sizeof p);
      memcpy(&t->start, &q[2], sizeof p);
      memcpy(&t->stop, &q[3], sizeof p);
      __atomic_store_n(&t->state, 1, __ATOMIC_RELEASE);
      return t;
    }
  }
  __atomic_store_n(&t->state, 2, __ATOMIC_RELEASE);
  return t;
}

/* The table when the collector is there, NULL otherwise. */
static inline hubprof_api_table_ *hubprof_api_table_get_(void) {
  static hubprof_api_table_ t;
  int s = __atomic_load_n(&t.state, __ATOMIC_ACQUIRE);
  if (__builtin_expect(s == 0, 0)) s = hubprof_api_resolve_(&t)->state;
  return s == 1 ? &t : NULL;
}

#ifndef HUBPROF_API_DISABLE
/* Open a region on the calling thread; regions nest per thread. NULL, empty, huge (stored up to 1023
 * bytes) or invalid UTF-8 names are all accepted. The name is copied: it may be freed right after. */
static inline void hubprof_region_begin(const char *name) {
  hubprof_api_table_ *t = hubprof_api_table_get_();
  if (t) t->region_begin(name);
}
/* Close the calling thread's innermost region (without one: recorded as an unbalanced end). */
static inline void hubprof_region_end(void) {
  hubprof_api_table_ *t = hubprof_api_table_get_();
  if (t) t->region_end();
}
/* A marker: a region of zero length, now. */
static inline void hubprof_mark(const char *name) {
  hubprof_api_table_ *t = hubprof_api_table_get_();
  if (t) t->mark(name);
}
/* Collection on / off for the whole process: dispatches while off are neither recorded nor replayed. */
static inline void hubprof_start(void) {
  hubprof_api_table_ *t = hubprof_api_table_get_();
  if (t) t->start();
}
static inline void hubprof_stop(void) {
  hubprof_api_table_ *t = hubprof_api_table_get_();
  if (t) t->stop();
}
#else
static inline void hubprof_region_begin(const char *name) { (void)name; }
static inline void hubprof_region_end(void) {}
static inline void hubprof_mark(const char *name) { (void)name; }
static inline void hubprof_start(void) {}
static inline void hubprof_stop(void) {}
#endif

#ifdef __cplusplus
}
#endif

#endif
