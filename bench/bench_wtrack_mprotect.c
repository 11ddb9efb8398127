/* What write tracking's page protection costs on this machine, by buffer size (docs/replay.md "Write
 * tracking", docs/benchmarks.md "Write tracking growth, session 5"): whole-range mprotect both ways (what a
 * dispatch paid before arming), the same with a second thread running (TLB shootdowns), a 2 MiB huge-page
 * range, the armed scheme (one write fault + re-protecting the written page), mincore, soft-dirty clearing,
 * userfaultfd write-protection of the range (where permitted) and whether userfaultfd is permitted. Median
 * and min-max of ROUNDS rounds, microseconds. usage: bench_wtrack_mprotect [ROUNDS]   (built by `make bench`;
 * run by bench/bench_wtrack.sh) */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAXR 64
static size_t ps;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void report(const char *what, size_t bytes, double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  printf("    %-44s %9zu B: %10.1f us (min %.1f, max %.1f)\n", what, bytes, v[n / 2], v[0], v[n - 1]);
}

/* A write fault makes its page writable again (the tracking handler's work, less the copy). */
static void on_fault(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  uintptr_t a = (uintptr_t)si->si_addr & ~(uintptr_t)(ps - 1);
  if (mprotect((void *)a, ps, PROT_READ | PROT_WRITE) != 0) _exit(99);
}

static atomic_int spin_stop;
static void *spin(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
    ;
  return NULL;
}

/* A buffer of `bytes` touched in full, 4 KiB pages (huge = 0) or 2 MiB ones where the system gives them. */
static char *buffer(size_t bytes, int huge) {
  size_t al = huge ? (size_t)2 << 20 : ps;
  char *b = NULL;
  if (posix_memalign((void **)&b, al, bytes) != 0) return NULL;
  madvise(b, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  memset(b, 1, bytes);
  return b;
}

static void whole(size_t bytes, int rounds, int huge, int thread) {
  char *b = buffer(bytes, huge);
  if (!b) return;
  pthread_t t;
  atomic_store(&spin_stop, 0);
  if (thread && pthread_create(&t, NULL, spin, NULL) != 0) thread = 0;
  double pr[MAXR], un[MAXR];
  for (int r = 0; r < rounds; r++) {
    double t0 = now_us();
    mprotect(b, bytes, PROT_READ);
    double t1 = now_us();
    mprotect(b, bytes, PROT_READ | PROT_WRITE);
    pr[r] = t1 - t0;
    un[r] = now_us() - t1;
  }
  if (thread) {
    atomic_store(&spin_stop, 1);
    pthread_join(t, NULL);
  }
  const char *p = huge ? "protect, 2 MiB pages" : thread ? "protect, a second thread running" : "protect";
  const char *u = huge     ? "unprotect, 2 MiB pages"
                  : thread ? "unprotect, a second thread running"
                           : "unprotect";
  report(p, bytes, pr, rounds);
  report(u, bytes, un, rounds);
  free(b);
}

/* Armed: the range stays read-only; per round one write fault (the page made writable) and the page
 * protected again, what an armed dispatch writing one page pays; and mincore over the range. */
static void armed(size_t bytes, int rounds) {
  char *b = buffer(bytes, 0);
  if (!b) return;
  unsigned char *vec = malloc(bytes / ps);
  mprotect(b, bytes, PROT_READ);
  double fa[MAXR], re[MAXR], mc[MAXR];
  volatile char *p = b + bytes / 2 + 5;
  for (int r = 0; r < rounds; r++) {
    double t0 = now_us();
    *p += 1;
    double t1 = now_us();
    mprotect((void *)((uintptr_t)p & ~(uintptr_t)(ps - 1)), ps, PROT_READ);
    double t2 = now_us();
    if (vec) mincore(b, bytes, vec);
    fa[r] = t1 - t0;
    re[r] = t2 - t1;
    mc[r] = now_us() - t2;
  }
  mprotect(b, bytes, PROT_READ | PROT_WRITE);
  report("armed: one write fault", bytes, fa, rounds);
  report("armed: the written page protected again", bytes, re, rounds);
  report("mincore (residency check) over the range", bytes, mc, rounds);
  free(vec);
  free(b);
}

/* Soft-dirty: clearing the bits walks every page of the process (the buffer is only a part). */
static void soft_dirty(size_t bytes, int rounds) {
  char *b = buffer(bytes, 0);
  if (!b) return;
  double cl[MAXR];
  int n = 0;
  for (int r = 0; r < rounds; r++) {
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    if (fd < 0) break;
    double t0 = now_us();
    ssize_t w = write(fd, "4", 1);
    cl[n] = now_us() - t0;
    close(fd);
    if (w != 1) break;
    n++;
  }
  if (n)
    report("soft-dirty: clear_refs 4 (whole process)", bytes, cl, n);
  else
    printf("    soft-dirty: /proc/self/clear_refs not writable here\n");
  free(b);
}

/* userfaultfd write-protection of the whole range and its removal (UFFDIO_WRITEPROTECT), where permitted. */
static void uffd_wp(size_t bytes, int rounds) {
  long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
  if (fd < 0) fd = syscall(SYS_userfaultfd, O_CLOEXEC);
  if (fd < 0) {
    printf("    userfaultfd write-protect: refused here (%s)\n", strerror(errno));
    return;
  }
  struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP};
  char *b = buffer(bytes, 0);
  struct uffdio_register reg = {.range = {(uintptr_t)b, bytes}, .mode = UFFDIO_REGISTER_MODE_WP};
  if (!b || ioctl((int)fd, UFFDIO_API, &api) != 0 || ioctl((int)fd, UFFDIO_REGISTER, &reg) != 0) {
    printf("    userfaultfd write-protect: not available (%s)\n", strerror(errno));
    close((int)fd);
    free(b);
    return;
  }
  double pr[MAXR], un[MAXR];
  for (int r = 0; r < rounds; r++) {
    struct uffdio_writeprotect wp = {.range = {(uintptr_t)b, bytes}, .mode = UFFDIO_WRITEPROTECT_MODE_WP};
    double t0 = now_us();
    ioctl((int)fd, UFFDIO_WRITEPROTECT, &wp);
    double t1 = now_us();
    wp.mode = 0;
    ioctl((int)fd, UFFDIO_WRITEPROTECT, &wp);
    pr[r] = t1 - t0;
    un[r] = now_us() - t1;
  }
  struct uffdio_range ur = {(uintptr_t)b, bytes};
  ioctl((int)fd, UFFDIO_UNREGISTER, &ur);
  close((int)fd);
  report("userfaultfd write-protect", bytes, pr, rounds);
  report("userfaultfd write-unprotect", bytes, un, rounds);
  free(b);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 11;
  if (rounds < 1 || rounds > MAXR) rounds = 11;
  ps = (size_t)sysconf(_SC_PAGESIZE);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
  printf("== page protection cost, %d rounds, median (min-max)\n", rounds);
  size_t sizes[] = {(size_t)64 << 10, (size_t)4 << 20, (size_t)64 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    whole(sizes[i], rounds, 0, 0);
    whole(sizes[i], rounds, 0, 1);
    if (sizes[i] >= (size_t)2 << 20) whole(sizes[i], rounds, 1, 0);
    armed(sizes[i], rounds);
    soft_dirty(sizes[i], rounds);
    uffd_wp(sizes[i], rounds);
  }
  long fd = syscall(SYS_userfaultfd, 0);
  if (fd >= 0) {
    printf("    userfaultfd: permitted (fd %ld)\n", fd);
    close((int)fd);
  } else {
    int e = errno;
    long um = syscall(SYS_userfaultfd, 1 /* UFFD_USER_MODE_ONLY */);
    printf("    userfaultfd: refused (%s); user-mode-only: %s\n", strerror(e),
           um >= 0 ? "permitted" : "refused");
    if (um >= 0) close((int)um);
  }
  return 0;
}
