/* libhubprof_exit.so: preloaded by hubprof trace|profile|sample into the application and its children (the
 * collector itself is an OpenCL layer, which cannot interpose libc): exit, _exit and _Exit tell the collector
 * the exit code, and _exit closes its log first. Without a collector in the process it only forwards. */
/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <pthread.h>
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

/* Tell the collector, when one is loaded (as a layer it is not in the global scope: found by its path). */
static void tell(int code, int quick) {
  if (!g_pid || (pid_t)syscall(SYS_getpid) != g_pid) return;
  const char *path = getenv("HUBPROF_INJECTION_PATH");
  void *h = path && *path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!h) return;
  void (*fn)(int, int);
  *(void **)&fn = dlsym(h, "hubprof_collector_exit");
  if (fn) fn(code, quick);
  dlclose(h); /* the reference NOLOAD took */
}

EXPORT void exit(int status) {
  tell(status, 0);
  void (*real)(int);
  *(void **)&real = dlsym(RTLD_NEXT, "exit");
  if (real) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

static __attribute__((noreturn)) void quick_exit_now(int status) {
  tell(status, 1);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
EXPORT void _exit(int status) { quick_exit_now(status); }
EXPORT void _Exit(int status) { quick_exit_now(status); }
