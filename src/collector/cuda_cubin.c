/* The cubins of a CUDA process: stored once per hash when their modules load, and the map from a PC sample's
 * cubin CRC and function to code object and offset (cuda_cubin.h). */
/* SPDX-License-Identifier: MIT */
#include "cuda_cubin.h"

#include "../common/hu_bytes.h"
#include "hubprof/hub.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cubin_entry {
  uint64_t crc, co_id;
  uint32_t module_id;
  unsigned char *bytes;
  size_t n;
  char hash[65];
  /* the last function placed, and its .text offset (PCs come grouped by function) */
  char *last_fn;
  uint64_t last_off;
} cubin_entry;

struct hpc_cubins {
  pthread_mutex_t lock;
  cubin_entry c[HPC_CUBINS_MAX];
  size_t n;
  uint64_t modules, refused;
};

hpc_cubins *hpc_cubins_new(void) {
  hpc_cubins *r = calloc(1, sizeof *r);
  if (r) pthread_mutex_init(&r->lock, NULL);
  return r;
}

void hpc_cubins_free(hpc_cubins *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++)
    free(r->c[i].bytes), free(r->c[i].last_fn);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

static int is_cubin(const unsigned char *b, size_t n) { /* ELF64, little-endian, EM_CUDA (190) */
  return n >= 64 && !memcmp(b, "\177ELF", 4) && b[4] == 2 && b[5] == 1 && (b[18] | b[19] << 8) == 190;
}

uint64_t hpc_cubins_add(hpc_cubins *r, hp_store *s, const void *cubin_bytes, size_t n, uint64_t crc,
                        uint32_t module_id, _Atomic uint64_t *next_id, const char **why) {
  *why = "";
  if (!r) return *why = "out of memory", 0;
  const unsigned char *b = cubin_bytes;
  pthread_mutex_lock(&r->lock);
  r->modules++;
  if (!b || !is_cubin(b, n)) {
    r->refused++;
    pthread_mutex_unlock(&r->lock);
    return *why = "the module's image is not an ELF cubin", 0;
  }
  char hash[65];
  hu_sha256_hex(b, n, hash);
  int stored = 0;
  for (size_t i = 0; i < r->n && !stored; i++)
    stored = !strcmp(r->c[i].hash, hash);
  uint64_t id = atomic_fetch_add(next_id, 1) + 1;
  if (s && !stored) hp_write_code_bytes(s, b, n, NULL);
  char uri[48];
  snprintf(uri, sizeof uri, "cuda://module/%u", module_id);
  hp_code_object co = {.size = sizeof co,
                       .id = id,
                       .process_id = 1,
                       .uri = uri,
                       .hash = hash,
                       .code_size = n,
                       .build_options = "",
                       .source = "",
                       .ir_hash = ""};
  if (s) hp_write_code_object(s, &co);
  if (r->n < HPC_CUBINS_MAX) {
    cubin_entry *c = &r->c[r->n];
    memset(c, 0, sizeof *c);
    if ((c->bytes = malloc(n))) {
      memcpy(c->bytes, b, n);
      c->n = n, c->crc = crc, c->co_id = id, c->module_id = module_id;
      memcpy(c->hash, hash, sizeof hash);
      r->n++;
    } else {
      *why = "out of memory: the module's PC samples are not placed";
    }
  } else {
    *why = "too many modules: the module's PC samples are not placed";
  }
  pthread_mutex_unlock(&r->lock);
  return id;
}

int hpc_cubins_place(hpc_cubins *r, const hpc_cupti_pc *pc, uint64_t *code_object_id, uint64_t *offset) {
  if (!r || !pc || !pc->functionName) return -1;
  int rc = -1;
  pthread_mutex_lock(&r->lock);
  for (size_t i = r->n; i-- > 0 && rc;) { /* the latest module of that CRC (a module loaded again) */
    cubin_entry *c = &r->c[i];
    if (c->crc != pc->cubinCrc) continue;
    if (!c->last_fn || strcmp(c->last_fn, pc->functionName)) {
      uint64_t off;
      if (hpc_cubin_func_offset(c->bytes, c->n, pc->functionName, &off)) break;
      char *fn = strdup(pc->functionName);
      if (!fn) break;
      free(c->last_fn);
      c->last_fn = fn, c->last_off = off;
    }
    *code_object_id = c->co_id;
    *offset = c->last_off + pc->pcOffset;
    rc = 0;
  }
  pthread_mutex_unlock(&r->lock);
  return rc;
}

void hpc_cubins_stats(hpc_cubins *r, uint64_t *modules, uint64_t *refused) {
  *modules = *refused = 0;
  if (!r) return;
  pthread_mutex_lock(&r->lock);
  *modules = r->modules, *refused = r->refused;
  pthread_mutex_unlock(&r->lock);
}
