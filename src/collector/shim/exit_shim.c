/* libhubprof_exit.so: preloaded by hubprof trace|profile|sample into the application and its children (the
 * collector itself is an OpenCL layer, which cannot interpose libc): exit() tells the collector the exit code
 * (never from a signal handler, never in a vfork child). Without a collector in the process it only forwards.
 * _exit and _Exit are left alone: async-signal-safe, they are what a program's own signal handler calls while
 * the code it interrupted may hold the collector's locks (seen: a kernel's SIGSEGV chained through write
 * tracking's handler), so a child that ends with _exit() still leaves its log unclosed. */
/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* The pid this copy belongs to: set at load and in fork's child. A vfork child (no fork handlers run) shares
 * its parent's memory and must change nothing in it: it only forwards. */
static pid_t g_pid;
static void pid_child(void) { g_pid = (pid_t)syscall(SYS_getpid); }
__attribute__((constructor)) static void pid_init(void) {
  g_pid = (pid_t)syscall(SYS_getpid);
  pthread_atfork(NULL, NULL, pid_child);
}

/* Called from a signal handler, most likely: a signal a handler blocks while it runs is blocked now. There,
 * _exit must stay what it is (async-signal-safe: the collector's exit path takes locks the interrupted code
 * may hold, and dlopen takes the loader's), so nothing is told. A program that blocks these signals for good
 * only loses its exit code in the store. */
static int in_handler(void) {
  static const int sigs[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE,  SIGABRT, SIGTERM, SIGINT, SIGHUP,
                             SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE, SIGTRAP};
  sigset_t cur;
  if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0) return 1;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigismember(&cur, sigs[i]) == 1) return 1;
  return 0;
}

/* Tell the collector, when one is loaded (as a layer it is not in the global scope: found by its path). */
static void tell(int code) {
  if (!g_pid || (pid_t)syscall(SYS_getpid) != g_pid || in_handler()) return;
  const char *path = getenv("HUBPROF_INJECTION_PATH");
  void *h = path && *path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!h) return;
  void (*fn)(int);
  *(void **)&fn = dlsym(h, "hubprof_collector_exit");
  if (fn) fn(code);
  dlclose(h); /* the reference NOLOAD took */
}

EXPORT void exit(int status) {
  tell(status);
  void (*real)(int);
  *(void **)&real = dlsym(RTLD_NEXT, "exit");
  if (real) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
