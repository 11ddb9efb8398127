/* Code objects of the programs the application builds: one code_object row per program and device (hash
 * and size of the program binary the runtime gives back, build options, source when created from source),
 * the binary's bytes once per hash, and the program's code object for kernel_symbol.code_object_id. Filled
 * from the intercepted program calls (slow paths: never a dispatch); each forwards first and returns exactly
 * what the runtime returned, errno untouched. */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"

#include "../common/hu_bytes.h"
#include "hubprof/hub.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic uint64_t hpc_code_object_ids; /* code_object row ids of the process (here and sample.c) */

typedef struct prog {
  cl_program p;
  char *source; /* NULL when not created from source */
  uint64_t co;  /* its first device's code object, 0 until built */
} prog;

static pthread_mutex_t g_plock = PTHREAD_MUTEX_INITIALIZER;
static prog *g_progs;
static size_t g_nprogs;
static char (*g_hashes)[65];
static size_t g_nhashes;

static int on(void) {
#ifdef HUBPROF_COLLECTOR_NOOP /* the overhead floor: forward only */
  return 0;
#endif
  int e = atomic_load_explicit(&hpc_enabled, memory_order_relaxed);
  if (e == 0) e = hpc_init_slow();
  return e >= 1 && e != HPC_EXITING && !hpc_busy;
}

static prog *find_locked(cl_program p, int add) {
  for (size_t i = 0; i < g_nprogs; i++)
    if (g_progs[i].p == p) return &g_progs[i];
  if (!add) return NULL;
  prog *np = realloc(g_progs, (g_nprogs + 1) * sizeof *np);
  if (!np) return NULL;
  g_progs = np;
  g_progs[g_nprogs] = (prog){p, NULL, 0};
  return &g_progs[g_nprogs++];
}

/* Rows for program p on each of its devices (g_plock not held). */
static void record(const cl_icd_dispatch *n, cl_program p, const char *options) {
  cl_uint nd = 0;
  if (n->clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL) != CL_SUCCESS || !nd || nd > 64)
    return;
  cl_device_id devs[64];
  size_t sizes[64];
  unsigned char *bins[64] = {0};
  if (n->clGetProgramInfo(p, CL_PROGRAM_DEVICES, nd * sizeof *devs, devs, NULL) != CL_SUCCESS ||
      n->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, nd * sizeof *sizes, sizes, NULL) != CL_SUCCESS)
    return;
  for (cl_uint i = 0; i < nd; i++)
    bins[i] = sizes[i] && sizes[i] < (256u << 20) ? malloc(sizes[i]) : NULL;
  int have = n->clGetProgramInfo(p, CL_PROGRAM_BINARIES, nd * sizeof *bins, bins, NULL) == CL_SUCCESS;
  hp_store *s = hpc_store_enter_open();
  pthread_mutex_lock(&g_plock);
  prog *pr = find_locked(p, 1);
  const char *src = pr && pr->source ? pr->source : "";
  for (cl_uint i = 0; i < nd; i++) {
    char hash[65] = "";
    uint64_t size = 0;
    if (have && bins[i]) {
      hu_sha256_hex(bins[i], sizes[i], hash);
      size = sizes[i];
      size_t k = 0;
      while (k < g_nhashes && strcmp(g_hashes[k], hash))
        k++;
      if (k == g_nhashes) {
        char(*nh)[65] = realloc(g_hashes, (g_nhashes + 1) * sizeof *nh);
        if (nh) {
          g_hashes = nh;
          memcpy(g_hashes[g_nhashes++], hash, 65);
          if (s) hp_write_code_bytes(s, bins[i], sizes[i], NULL);
        }
      }
    }
    char uri[64];
    snprintf(uri, sizeof uri, "program://%.16s/device%u", hash[0] ? hash : "unknown", i);
    uint64_t id = atomic_fetch_add(&hpc_code_object_ids, 1) + 1;
    hp_code_object co = {.size = sizeof co,
                         .id = id,
                         .process_id = 1,
                         .agent_id = hpc_agent_of(&hpc_opencl, n, (uintptr_t)devs[i]),
                         .uri = uri,
                         .hash = hash,
                         .code_size = size,
                         .build_options = options ? options : "",
                         .source = src};
    if (s) hp_write_code_object(s, &co);
    if (pr && i == 0) pr->co = id;
  }
  pthread_mutex_unlock(&g_plock);
  hpc_store_leave(s);
  for (cl_uint i = 0; i < nd; i++)
    free(bins[i]);
}

uint64_t hpc_program_code_object(cl_program p) {
  pthread_mutex_lock(&g_plock);
  prog *pr = find_locked(p, 0);
  uint64_t id = pr ? pr->co : 0;
  pthread_mutex_unlock(&g_plock);
  return id;
}

cl_program hpc_CreateProgramWithSource(const cl_icd_dispatch *n, cl_context c, cl_uint count,
                                       const char **strings, const size_t *lengths, cl_int *err) {
  cl_program p = n->clCreateProgramWithSource(c, count, strings, lengths, err);
  if (!p || !strings || !on()) return p;
  int saved = errno;
  size_t total = 0;
  for (cl_uint i = 0; i < count; i++)
    total += strings[i] ? (lengths && lengths[i] ? lengths[i] : strlen(strings[i])) : 0;
  char *src = malloc(total + 1);
  if (src) {
    size_t at = 0;
    for (cl_uint i = 0; i < count; i++) {
      if (!strings[i]) continue;
      size_t l = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
      memcpy(src + at, strings[i], l);
      at += l;
    }
    src[at] = 0;
    pthread_mutex_lock(&g_plock);
    prog *pr = find_locked(p, 1);
    if (pr) {
      free(pr->source); /* a program object at the address of a released one */
      pr->source = src;
      pr->co = 0;
    } else {
      free(src);
    }
    pthread_mutex_unlock(&g_plock);
  }
  errno = saved;
  return p;
}

cl_program hpc_CreateProgramWithBinary(const cl_icd_dispatch *n, cl_context c, cl_uint nd,
                                       const cl_device_id *d, const size_t *lengths,
                                       const unsigned char **bins, cl_int *status, cl_int *err) {
  cl_program p = n->clCreateProgramWithBinary(c, nd, d, lengths, bins, status, err);
  if (p && on()) {
    int saved = errno;
    hpc_busy = 1;
    record(n, p, "");
    hpc_busy = 0;
    errno = saved;
  }
  return p;
}

cl_int hpc_BuildProgram(const cl_icd_dispatch *n, cl_program p, cl_uint nd, const cl_device_id *d,
                        const char *options, void(CL_CALLBACK *notify)(cl_program, void *), void *data) {
  cl_int rc = n->clBuildProgram(p, nd, d, options, notify, data);
  if (rc == CL_SUCCESS && on()) {
    int saved = errno;
    hpc_busy = 1;
    record(n, p, options); /* a build still running (callback given): its binaries are not there yet */
    hpc_busy = 0;
    errno = saved;
  }
  return rc;
}

cl_int hpc_CompileProgram(const cl_icd_dispatch *n, cl_program p, cl_uint nd, const cl_device_id *d,
                          const char *options, cl_uint nh, const cl_program *hdrs, const char **names,
                          void(CL_CALLBACK *notify)(cl_program, void *), void *data) {
  cl_int rc = n->clCompileProgram(p, nd, d, options, nh, hdrs, names, notify, data);
  if (rc == CL_SUCCESS && on()) {
    int saved = errno;
    hpc_busy = 1;
    record(n, p, options);
    hpc_busy = 0;
    errno = saved;
  }
  return rc;
}

cl_program hpc_LinkProgram(const cl_icd_dispatch *n, cl_context c, cl_uint nd, const cl_device_id *d,
                           const char *options, cl_uint np, const cl_program *progs,
                           void(CL_CALLBACK *notify)(cl_program, void *), void *data, cl_int *err) {
  cl_program p = n->clLinkProgram(c, nd, d, options, np, progs, notify, data, err);
  if (p && on()) {
    int saved = errno;
    hpc_busy = 1;
    record(n, p, options);
    hpc_busy = 0;
    errno = saved;
  }
  return p;
}
