/* Code objects of the programs the application builds: each program's identity (a hash of what the
 * application gave: sources and build options, binaries, linked inputs; kernel_symbol.program_hash), one
 * code_object row per program and device (build options; source when created from source and asked for;
 * the binary's hash, size and bytes once per hash only when asked for: HUBPROF_CODE), and the program's code
 * object for kernel_symbol.code_object_id. Filled from the intercepted program calls (slow paths: never a
 * dispatch); each forwards first and returns exactly what the runtime returned, errno untouched. Nothing
 * here asks the runtime for what it would have to compile to answer, but at HUBPROF_CODE=all. */
/* SPDX-License-Identifier: MIT */
#include "prov_opencl.h"

#include "../common/hu_bytes.h"
#include "env.h"
#include "hubprof/hub.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic uint64_t hpc_code_object_ids; /* code_object row ids of the process (here and sample.c) */

typedef struct prog {
  cl_program p;
  char *source;            /* NULL when not created from source, or sources not kept (HUBPROF_CODE) */
  uint64_t co;             /* its first device's code object, 0 until built */
  unsigned char in[32];    /* digest of its inputs (sources, binaries, compiled or linked programs) */
  int has_in;              /* in is set (a program the collector saw created) */
  char id[HPC_PROGRAM_ID]; /* its identity once built: inputs and options; "" unknown */
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
  memset(&g_progs[g_nprogs], 0, sizeof *g_progs);
  g_progs[g_nprogs].p = p;
  return &g_progs[g_nprogs++];
}

int hpc_cl_code; /* HUBPROF_CODE (env.h: HPC_CODE_*), set at init (prov_opencl.c) */
static int code_mode(void) { return hpc_cl_code; }

/* A tagged, length-prefixed part of a digest (so "ab"+"c" and "a"+"bc" differ). */
static void put_part(hu_sha256 *c, const char *tag, const void *p, size_t n) {
  uint64_t len = n;
  hu_sha256_update(c, tag, strlen(tag) + 1);
  hu_sha256_update(c, &len, sizeof len);
  if (n) hu_sha256_update(c, p, n);
}

/* The program's identity: its inputs' digest and the options (g_plock held). */
static void set_id_locked(prog *pr, const char *options) {
  if (!pr->has_in) {
    pr->id[0] = 0;
    return;
  }
  hu_sha256 c;
  unsigned char d[32];
  static const char hx[] = "0123456789abcdef";
  hu_sha256_init(&c);
  put_part(&c, "in", pr->in, sizeof pr->in);
  put_part(&c, "options", options ? options : "", options ? strlen(options) : 0);
  hu_sha256_final(&c, d);
  for (int i = 0; i < (HPC_PROGRAM_ID - 1) / 2; i++) {
    pr->id[2 * i] = hx[d[i] >> 4];
    pr->id[2 * i + 1] = hx[d[i] & 15];
  }
  pr->id[HPC_PROGRAM_ID - 1] = 0;
}

/* Rows for program p on each of its devices, its identity from its inputs and options (g_plock not held).
 * Its binaries (hash, size, bytes) only at HUBPROF_CODE=all: asking PoCL for them compiles every kernel
 * of the program once more. */
static void record(const cl_icd_dispatch *n, cl_program p, const char *options) {
  cl_uint nd = 0;
  if (n->clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof nd, &nd, NULL) != CL_SUCCESS || !nd || nd > 64)
    return;
  cl_device_id devs[64];
  size_t sizes[64] = {0};
  unsigned char *bins[64] = {0};
  if (n->clGetProgramInfo(p, CL_PROGRAM_DEVICES, nd * sizeof *devs, devs, NULL) != CL_SUCCESS) return;
  int code = code_mode(), have = 0;
  if (code == HPC_CODE_ALL &&
      n->clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, nd * sizeof *sizes, sizes, NULL) == CL_SUCCESS) {
    for (cl_uint i = 0; i < nd; i++)
      bins[i] = sizes[i] && sizes[i] < (256u << 20) ? malloc(sizes[i]) : NULL;
    have = n->clGetProgramInfo(p, CL_PROGRAM_BINARIES, nd * sizeof *bins, bins, NULL) == CL_SUCCESS;
  }
  hp_store *s = hpc_store_enter_open();
  pthread_mutex_lock(&g_plock);
  prog *pr = find_locked(p, 1);
  if (pr) set_id_locked(pr, options);
  const char *src = pr && pr->source && code >= HPC_CODE_SOURCE ? pr->source : "";
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
    snprintf(uri, sizeof uri, "program://%.16s/device%u", pr && pr->id[0] ? pr->id : "unknown", i);
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

int hpc_program_identity(cl_program p, char id[HPC_PROGRAM_ID]) {
  pthread_mutex_lock(&g_plock);
  prog *pr = find_locked(p, 0);
  int ok = pr && pr->id[0];
  if (ok) memcpy(id, pr->id, HPC_PROGRAM_ID);
  pthread_mutex_unlock(&g_plock);
  return ok;
}

/* Program p's inputs' digest (NULL: unknown) and its sources when kept (g_plock not held). A program object
 * at the address of a released one starts afresh. */
static void set_inputs(cl_program p, const unsigned char *in, char *source) {
  pthread_mutex_lock(&g_plock);
  prog *pr = find_locked(p, 1);
  if (pr) {
    free(pr->source);
    pr->source = source;
    pr->co = 0;
    pr->id[0] = 0;
    if (in) memcpy(pr->in, in, 32);
    pr->has_in = in != NULL;
  } else {
    free(source);
  }
  pthread_mutex_unlock(&g_plock);
}

/* The inputs' digest of program p into c (0 when the collector never saw p created). */
static int put_program(hu_sha256 *c, const char *tag, cl_program p) {
  pthread_mutex_lock(&g_plock);
  prog *pr = find_locked(p, 0);
  int ok = pr && pr->has_in;
  if (ok) put_part(c, tag, pr->in, sizeof pr->in);
  pthread_mutex_unlock(&g_plock);
  return ok;
}

cl_program hpc_CreateProgramWithSource(const cl_icd_dispatch *n, cl_context c, cl_uint count,
                                       const char **strings, const size_t *lengths, cl_int *err) {
  cl_program p = n->clCreateProgramWithSource(c, count, strings, lengths, err);
  if (!p || !strings || !on()) return p;
  int saved = errno;
  size_t total = 0;
  for (cl_uint i = 0; i < count; i++)
    total += strings[i] ? (lengths && lengths[i] ? lengths[i] : strlen(strings[i])) : 0;
  /* the sources as one text: what the runtime compiles (the strings are concatenated) */
  char *src = code_mode() >= HPC_CODE_SOURCE ? malloc(total + 1) : NULL;
  hu_sha256 h;
  hu_sha256_init(&h);
  uint64_t len = total;
  hu_sha256_update(&h, "source", 7);
  hu_sha256_update(&h, &len, sizeof len);
  size_t at = 0;
  for (cl_uint i = 0; i < count; i++) {
    if (!strings[i]) continue;
    size_t l = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    hu_sha256_update(&h, strings[i], l);
    if (src) memcpy(src + at, strings[i], l);
    at += l;
  }
  if (src) src[at] = 0;
  unsigned char in[32];
  hu_sha256_final(&h, in);
  set_inputs(p, in, src);
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
    hu_sha256 h; /* the binaries as given, device by device */
    unsigned char in[32];
    hu_sha256_init(&h);
    for (cl_uint i = 0; i < nd && lengths && bins; i++)
      put_part(&h, "binary", bins[i], bins[i] ? lengths[i] : 0);
    hu_sha256_final(&h, in);
    set_inputs(p, in, NULL);
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
    hu_sha256 h; /* compiled: its sources, options and headers (by name and inputs) are its new inputs */
    unsigned char in[32];
    hu_sha256_init(&h);
    int ok = put_program(&h, "compiled", p);
    put_part(&h, "options", options ? options : "", options ? strlen(options) : 0);
    for (cl_uint i = 0; ok && i < nh && hdrs && names; i++) {
      put_part(&h, "header", names[i] ? names[i] : "", names[i] ? strlen(names[i]) : 0);
      ok = put_program(&h, "header", hdrs[i]);
    }
    hu_sha256_final(&h, in);
    if (ok) {
      pthread_mutex_lock(&g_plock);
      prog *pr = find_locked(p, 0);
      if (pr) memcpy(pr->in, in, sizeof in);
      pthread_mutex_unlock(&g_plock);
    }
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
    hu_sha256 h; /* linked: its input programs in order (each by its inputs) */
    unsigned char in[32];
    hu_sha256_init(&h);
    int ok = 1;
    for (cl_uint i = 0; ok && i < np && progs; i++)
      ok = put_program(&h, "linked", progs[i]);
    hu_sha256_final(&h, in);
    set_inputs(p, ok ? in : NULL, NULL);
    record(n, p, options);
    hpc_busy = 0;
    errno = saved;
  }
  return p;
}
