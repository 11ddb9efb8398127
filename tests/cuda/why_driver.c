/* why_driver: the CUDA provider's sampling path without a GPU (tests/cuda/test_cuda.sh): loads the stand-in
 * libcuda.so.1, does what the driver does at cuInit (InitializeInjection of $CUDA_INJECTION64_PATH), then has
 * the stand-in libcupti (tests/cuda/fake_cupti.c, found through HUBPROF_CUPTI) play a context, a module (a
 * cubin nvcc built) and two launches, and waits a little over a second so that the provider reads the PC
 * samples of the second launch before its kernel record comes (at exit): they must wait for it.
 * usage: why_driver LIBCUDA LIBCUPTI CUBIN LDG_OFFSET_HEX */
/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: why_driver LIBCUDA LIBCUPTI CUBIN LDG_OFFSET_HEX\n");
    return 2;
  }
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "why_driver: %s\n", dlerror());
    return 1;
  }
  const char *inj = getenv("CUDA_INJECTION64_PATH");
  void *h = inj && *inj ? dlopen(inj, RTLD_NOW | RTLD_GLOBAL) : NULL;
  int (*init)(void) = NULL;
  if (h) *(void **)&init = dlsym(h, "InitializeInjection");
  int injected = init ? init() : 0;
  void *fake = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD); /* loaded by the provider: not when not injected */
  int (*run)(const unsigned char *, size_t, unsigned long long) = NULL;
  if (fake) *(void **)&run = dlsym(fake, "fake_cupti_run");
  FILE *f = fopen(argv[3], "rb");
  static unsigned char cubin[1 << 20];
  size_t n = f ? fread(cubin, 1, sizeof cubin, f) : 0;
  if (f) fclose(f);
  int rc = run && n ? run(cubin, n, strtoull(argv[4], NULL, 16)) : -1;
  struct timespec ts = {1, 300000000};
  nanosleep(&ts, NULL);
  printf("why_driver: injection %d, cupti %s, run %d\n", injected, fake ? "loaded" : "not loaded", rc);
  return rc != 0;
}
