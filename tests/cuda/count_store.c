/* count_store: what a store holds, summed for the CUDA checks (tests/cuda/test_cuda.sh,
 * tests/device/cuda.sh): dispatches per kernel display name, copies per direction with their bytes, regions
 * per category, agents. usage: count_store STORE   prints "key value" lines; exit 0, or 1 with one line when
 * STORE cannot be read. */
/* SPDX-License-Identifier: MIT */
#include "hubprof/hub.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK 4096
static char *knames[MAXK];
static uint64_t kids[MAXK], kcount[MAXK];
static size_t nk;

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: count_store STORE\n");
    return 2;
  }
  hp_store *s = NULL;
  if (hp_store_open(argv[1], NULL, HP_READ, &s) != HP_OK) {
    fprintf(stderr, "count_store: %s\n", s ? hp_store_error(s) : argv[1]);
    hp_store_close(s);
    return 1;
  }
  hp_cursor *c;
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) == HP_OK) {
    while (hp_cursor_next(c, &k) == HP_OK && nk < MAXK) {
      size_t i = 0;
      while (i < nk && kids[i] != k.id)
        i++;
      if (i == nk) nk++;
      free(knames[i]);
      kids[i] = k.id;
      knames[i] = strdup(k.display_name[0] ? k.display_name : k.name);
    }
    hp_cursor_close(c);
  }
  uint64_t nd = 0, timed = 0, unknown = 0;
  hp_dispatch d = {.size = sizeof d};
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) == HP_OK) {
    while (hp_cursor_next(c, &d) == HP_OK) {
      nd++;
      timed += d.end_ns > d.start_ns || (d.start_ns && d.end_ns == d.start_ns);
      size_t i = 0;
      while (i < nk && kids[i] != d.kernel_id)
        i++;
      if (i < nk)
        kcount[i]++;
      else
        unknown++;
    }
    hp_cursor_close(c);
  }
  printf("dispatches %" PRIu64 "\ndispatches_timed %" PRIu64 "\n", nd, timed);
  for (size_t i = 0; i < nk; i++)
    if (kcount[i]) printf("kernel %" PRIu64 " %s\n", kcount[i], knames[i]);
  if (unknown) printf("kernel %" PRIu64 " (unknown)\n", unknown);
  static const char *const dir[] = {"unknown", "h2d", "d2h", "d2d", "fill"};
  uint64_t bytes[5] = {0}, count[5] = {0};
  hp_memory_copy m = {.size = sizeof m};
  if (hp_cursor_open(s, HP_TABLE_MEMORY_COPY, &c) == HP_OK) {
    while (hp_cursor_next(c, &m) == HP_OK) {
      unsigned x = m.direction < 5 ? m.direction : 0;
      bytes[x] += m.bytes;
      count[x]++;
    }
    hp_cursor_close(c);
  }
  for (int i = 0; i < 5; i++)
    printf("copies_%s %" PRIu64 "\nbytes_%s %" PRIu64 "\n", dir[i], count[i], dir[i], bytes[i]);
  hp_region r = {.size = sizeof r};
  uint64_t api = 0, api_cuda = 0, sync = 0, other = 0;
  if (hp_cursor_open(s, HP_TABLE_REGION, &c) == HP_OK) {
    while (hp_cursor_next(c, &r) == HP_OK) {
      if (strcmp(r.category, "api") == 0)
        api++, api_cuda += strncmp(r.name, "cu", 2) == 0; /* cuda*, cu*: not OpenCL's cl* */
      else if (strcmp(r.category, "sync") == 0)
        sync++;
      else
        other++, printf("region %s/%s\n", r.category, r.name);
    }
    hp_cursor_close(c);
  }
  printf("regions_api %" PRIu64 "\nregions_api_cuda %" PRIu64 "\nregions_sync %" PRIu64
         "\nregions_other %" PRIu64 "\n",
         api, api_cuda, sync, other);
  hp_agent a = {.size = sizeof a};
  if (hp_cursor_open(s, HP_TABLE_AGENT, &c) == HP_OK) {
    while (hp_cursor_next(c, &a) == HP_OK)
      printf("agent %d %s | %s | %s | %" PRId64 " CUs | %" PRId64 " MHz | %" PRId64 " bytes\n", a.type,
             a.name, a.product_name, a.runtime, a.compute_units, a.max_clock_mhz, a.global_mem_bytes);
    hp_cursor_close(c);
  }
  for (size_t i = 0; i < nk; i++)
    free(knames[i]);
  hp_store_close(s);
  return 0;
}
