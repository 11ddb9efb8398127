/* One run of the application under the collector (trace, profile, sample, each pass of application replay):
 * the collector's environment, the fork and exec, the subreaper's wait for every descendant, the exit status.
 */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"
#include "cli.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Prepend `value` to the ':'-separated list in variable `name`. */
static int env_prepend(const char *name, const char *value) {
  const char *old = getenv(name);
  if (!old || !*old) return setenv(name, value, 1);
  size_t n = strlen(old) + strlen(value) + 2;
  char *v = malloc(n);
  if (!v) return -1;
  snprintf(v, n, "%s:%s", value, old);
  int rc = setenv(name, v, 1);
  free(v);
  return rc;
}

/* The exit shim beside the collector (libhubprof_exit.so), or NULL: without it processes still run, and the
 * process rows have no exit code but the application's own (malloc'd). */
static char *exit_shim(const char *collector) {
  const char *slash = strrchr(collector, '/');
  size_t n = slash ? (size_t)(slash - collector) + 1 : 0;
  char *p = malloc(n + sizeof "libhubprof_exit.so");
  if (!p) return NULL;
  memcpy(p, collector, n);
  memcpy(p + n, "libhubprof_exit.so", sizeof "libhubprof_exit.so");
  if (access(p, R_OK) == 0) return p;
  free(p);
  return NULL;
}

/* Every process this hubprof reaped (the application and the descendants left to it), with its wait status.
 */
static run_reaped *g_reaped;
static size_t g_nreaped;
const run_reaped *run_reaped_list(size_t *n) {
  *n = g_nreaped;
  return g_reaped;
}
static void reaped(pid_t pid, int status) {
  run_reaped *r = realloc(g_reaped, (g_nreaped + 1) * sizeof *r);
  if (!r) return; /* the process row keeps the collector's word */
  g_reaped = r;
  g_reaped[g_nreaped++] = (run_reaped){pid, status};
}

int run_launch(const run_opts *o, const char *collector, const char *dir, const char *plan, size_t pass,
               int argc, char **argv, int *started) {
  (void)argc;
  *started = 0;
  /* The collector reads only these; everything else of the environment passes through unchanged. */
  setenv("HUBPROF_OUTPUT_DIR", dir, 1);
  setenv("HUBPROF_MODE", o->mode, 1);
  if (plan)
    setenv("HUBPROF_PLAN", plan, 1);
  else
    unsetenv("HUBPROF_PLAN");
  if (pass) {
    char b[32];
    snprintf(b, sizeof b, "%zu", pass);
    setenv("HUBPROF_PASS", b, 1);
  } else {
    unsetenv("HUBPROF_PASS");
  }
  if (plan && o->plan) /* regions' host part: every counter, in every run (regions.c) */
    setenv("HUBPROF_REGION_COUNTERS", o->plan, 1);
  else
    unsetenv("HUBPROF_REGION_COUNTERS");
  if (o->provider) setenv("HUBPROF_PROVIDER", o->provider, 1);
  setenv("HUBPROF_START_PAUSED", o->start_paused ? "1" : "0", 1);
  setenv("HUBPROF_API", o->api ? "1" : "0", 1);
  setenv("HUBPROF_CODE", o->code ? o->code : "auto", 1);
  const char *sel[][2] = {{"HUBPROF_KERNEL", o->sel_kernel},
                          {"HUBPROF_KERNEL_EXCLUDE", o->sel_exclude},
                          {"HUBPROF_DISPATCH_RANGE", o->sel_range},
                          {"HUBPROF_REGION", o->sel_region}};
  for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) /* the selection (select_args.c), or none */
    if (sel[i][1])
      setenv(sel[i][0], sel[i][1], 1);
    else
      unsetenv(sel[i][0]);
  if (o->multiplex)
    setenv("HUBPROF_MULTIPLEX", o->multiplex, 1);
  else
    unsetenv("HUBPROF_MULTIPLEX");
  static int layered; /* once per hubprof process, however many runs */
  if (!layered) {
    layered = 1;
    env_prepend("OPENCL_LAYERS", collector);
    setenv("HUBPROF_INJECTION_PATH", collector, 1); /* include/hubprof/api.h and Python regions load it */
    setenv("NVTX_INJECTION64_PATH", collector, 1);  /* NVTX-annotated code hands its calls to it (nvtx.c) */
    setenv("CUDA_INJECTION64_PATH", collector, 1);  /* the CUDA driver loads it at cuInit (prov_cuda.c) */
    cli_cuda_check(argv[0]);
    if (o->preload) env_prepend("LD_PRELOAD", collector);
    char *shim = exit_shim(collector);
    if (shim) env_prepend("LD_PRELOAD", shim); /* how each process ends (shim/exit_shim.c) */
    free(shim);
  }

  /* Orphaned grandchildren are re-parented to us, so every process that writes a log is waited for. */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  /* SIGINT, SIGTERM and SIGHUP are passed on to the application and we stay to keep what it recorded;
   * SIGQUIT is left to the application (like time(1)). Blocked around fork, so none is lost in between. */
  sigset_t old_mask;
  run_signals_take(&old_mask);
  fflush(NULL);
  int err_pipe[2] = {-1, -1};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) err_pipe[0] = err_pipe[1] = -1;
  pid_t pid = fork();
  if (pid == 0) {
    run_signals_child(&old_mask);
    if (err_pipe[0] >= 0) close(err_pipe[0]);
    if (pass > 1) { /* application replay: the user sees the first run's output once, not once per pass */
      int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null >= 0) dup2(null, STDOUT_FILENO);
    }
    execvp(argv[0], argv);
    int e = errno;
    if (err_pipe[1] >= 0) (void)!write(err_pipe[1], &e, sizeof e);
    _exit(e == ENOENT ? 127 : 126);
  }
  int fork_errno = errno;
  if (pid > 0) run_signals_set_child(pid);
  sigprocmask(SIG_SETMASK, &old_mask, NULL); /* a signal that came meanwhile is passed on now */
  if (err_pipe[1] >= 0) close(err_pipe[1]);
  if (pid < 0) {
    cli_error("cannot start %s: %s", argv[0], strerror(fork_errno));
    run_signals_release();
    return CLI_FAIL;
  }
  int exec_errno = 0;
  if (err_pipe[0] >= 0) {
    ssize_t r;
    while ((r = read(err_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
      ;
    if (r != sizeof exec_errno) exec_errno = 0;
    close(err_pipe[0]);
  }
  int status = 0, app_rc = 0;
  char what[64]; /* the live progress line (watch.c): dispatches in this run's logs so far */
  if (pass)
    snprintf(what, sizeof what, "pass %zu/%zu", pass, o->npasses);
  else
    snprintf(what, sizeof what, "%s", o->multiplex ? "multiplexing" : o->plan ? "kernel replay" : "tracing");
  cli_watch *watch = cli_watch_start(dir, what, o->quiet);
  for (;;) { /* the application, then every descendant left behind */
    int st;
    pid_t w = cli_watch_wait(watch, &st);
    if (w < 0) {
      if (errno == EINTR) continue;
      break;
    }
    reaped(w, st);
    if (w == pid) {
      status = st;
      run_signals_set_child(0);
    }
  }
  run_signals_set_child(0);
  cli_watch_end(watch);
  if (WIFEXITED(status))
    app_rc = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    app_rc = 128 + WTERMSIG(status);
  run_signals_release();
  if (exec_errno) {
    cli_error("cannot run '%s': %s", argv[0], strerror(exec_errno));
    return app_rc;
  }
  if (run_stop_signal()) /* -q or not: the run was cut short, its profile with it */
    fprintf(stderr,
            "hubprof: %s received: passed on to the application, which ended with status %d; keeping "
            "what it recorded\n",
            run_signal_name(run_stop_signal()), app_rc);
  *started = 1;
  return app_rc;
}
