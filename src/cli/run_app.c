/* Runs an application under the collector: checks the output before anything runs, sets the documented
 * HUBPROF_* variables and OPENCL_LAYERS (and LD_PRELOAD when asked), becomes the subreaper of every
 * descendant so forked children are waited for, passes SIGINT/SIGTERM/SIGHUP on to the application, then
 * assembles the per-process logs into ONE store through the hub's pipeline (hubprof/assemble.h) and
 * removes them. The application's stdin/stdout/stderr, arguments and exit status pass through untouched;
 * the only variables it sees added are the collector's. */
/* SPDX-License-Identifier: MIT */
#include "partition.h"
#include "run_app.h"
#include "cli.h"
#include "progress.h"
#include "watch.h"

#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *find_collector(void) {
  const char *env = getenv("HUBPROF_COLLECTOR");
  if (env && *env) return access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = '\0';
  static const char *const rel[] = {"/libhubprof_collector.so", "/../lib/hubprof/libhubprof_collector.so",
                                    "/../lib/libhubprof_collector.so"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s%s", exe, rel[i]);
    if (access(p, R_OK) == 0) return realpath(p, NULL);
  }
  return NULL;
}

static const char *format_suffix(const char *format) {
  if (strcmp(format, "rocpd") == 0) return ".db";
  if (strcmp(format, "log") == 0) return ".log";
  return strcmp(format, "parquet") == 0 ? ".parquet" : ".store";
}

/* "APP.hubprof.db" in the current directory, from the application's base name; when that exists (and not
 * --force), the first free "APP.hubprof-N.db" from N = 2, as nsys and perf pick a new name. */
static char *default_output(const char *app, const char *format, int force) {
  const char *base = strrchr(app, '/');
  base = base ? base + 1 : app;
  size_t n = strlen(base) + 32;
  char *p = malloc(n);
  if (!p) return NULL;
  snprintf(p, n, "%s.hubprof%s", base, format_suffix(format));
  struct stat sb;
  for (unsigned i = 2; !force && i < 100000 && lstat(p, &sb) == 0; i++)
    snprintf(p, n, "%s.hubprof-%u%s", base, i, format_suffix(format));
  return p;
}

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

/* Directory for the per-process logs: beside the output (same file system, so the merge reads locally),
 * falling back to $TMPDIR when the output's directory is not writable (the merge then reports it). */
char *run_make_log_dir(const char *output) {
  const char *slash = strrchr(output, '/');
  char tmpl[PATH_MAX];
  if (slash)
    snprintf(tmpl, sizeof tmpl, "%.*s/.hubprof-logs.XXXXXX", (int)(slash - output), output);
  else
    snprintf(tmpl, sizeof tmpl, ".hubprof-logs.XXXXXX");
  if (slash == output) snprintf(tmpl, sizeof tmpl, "/.hubprof-logs.XXXXXX");
  if (mkdtemp(tmpl)) return realpath(tmpl, NULL);
  const char *tmp = getenv("TMPDIR");
  snprintf(tmpl, sizeof tmpl, "%s/hubprof-logs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(tmpl)) return realpath(tmpl, NULL);
  return NULL;
}

void run_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[PATH_MAX];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Paths of the logs in dir (hubprof-*.log), sorted. */
char **run_list_logs(const char *dir, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **v = NULL;
  size_t cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (strncmp(e->d_name, "hubprof-", 8) != 0 || l < 5 || strcmp(e->d_name + l - 4, ".log") != 0) continue;
    if (*n == cap) {
      char **nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *v);
      if (!nv) break;
      v = nv;
    }
    size_t pl = strlen(dir) + l + 2;
    if (!(v[*n] = malloc(pl))) break;
    snprintf(v[(*n)++], pl, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (*n) qsort(v, *n, sizeof *v, cmp_str);
  return v;
}

void run_free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* ---- the output, checked before the application starts ---- */
int run_check_output(const char *path, const char *format, int force) {
  if (!path || !*path) {
    cli_error("the output name is empty (give one with -o)");
    return CLI_USAGE;
  }
  char dir[PATH_MAX];
  size_t pl = strlen(path);
  if (format && !strcmp(format, "parquet") && pl > 1 && path[pl - 1] == '/' && pl < sizeof dir) {
    snprintf(dir, sizeof dir, "%s", path); /* "out.parquet/" names the folder out.parquet */
    while (pl > 1 && dir[pl - 1] == '/')
      dir[--pl] = 0;
    path = dir;
  }
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    cli_error("%s: names a folder, not an output file", path);
    return CLI_FAIL;
  }
  /* the hub writes a temporary ".NAME.tmp.PID.N" beside the output: both names must fit */
  if (strlen(base) + 40 > NAME_MAX || strlen(path) + 40 >= PATH_MAX) {
    cli_error("%s: name too long (at most %d bytes for the file name)", path, NAME_MAX - 40);
    return CLI_FAIL;
  }
  char parent[PATH_MAX];
  if (!slash)
    snprintf(parent, sizeof parent, ".");
  else if (slash == path)
    snprintf(parent, sizeof parent, "/");
  else
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
  struct stat sb;
  if (stat(parent, &sb) != 0) {
    cli_error("%s: cannot write here: folder %s: %s", path, parent, strerror(errno));
    return CLI_FAIL;
  }
  if (!S_ISDIR(sb.st_mode)) {
    cli_error("%s: cannot write here: %s is not a folder", path, parent);
    return CLI_FAIL;
  }
  if (access(parent, W_OK | X_OK) != 0) {
    cli_error("%s: cannot write here: folder %s: %s", path, parent, strerror(errno));
    return CLI_FAIL;
  }
  if (lstat(path, &sb) != 0) {
    if (errno == ENOENT) return 0;
    cli_error("%s: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  if (S_ISLNK(sb.st_mode) && stat(path, &sb) != 0) { /* a dangling link: replaced only with --force */
    if (force) return 0;
    cli_error("%s: already exists (a link; use --force to replace it, or -o to choose another name)", path);
    return CLI_FAIL;
  }
  const char *what = S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                     : S_ISFIFO(sb.st_mode)                     ? "a FIFO"
                     : S_ISSOCK(sb.st_mode)                     ? "a socket"
                                                                : NULL;
  if (what) {
    cli_error("%s: is %s, not a file hubprof can write a store to", path, what);
    return CLI_FAIL;
  }
  int is_dir = S_ISDIR(sb.st_mode);
  if (is_dir && (!format || strcmp(format, "parquet") != 0)) {
    cli_error("%s: is a folder; a %s store is a file (choose another name with -o)", path,
              format ? format : "rocpd");
    return CLI_FAIL;
  }
  if (!force) {
    cli_error("%s: already exists (use --force to replace it, or -o to choose another name)", path);
    return CLI_FAIL;
  }
  if (is_dir) { /* --force replaces a folder only when it is a store */
    hp_store *s = NULL;
    hp_status st = hp_store_open(path, "parquet", HP_READ, &s);
    hp_store_abort(s);
    if (st != HP_OK && st != HP_ERR_TRUNCATED && st != HP_ERR_CORRUPT) {
      cli_error("%s: is a folder that is not a hubprof store: --force replaces only a file or a store", path);
      return CLI_FAIL;
    }
  }
  return 0;
}

/* ---- signals: SIGINT, SIGTERM and SIGHUP go to the application; hubprof stays to keep what it recorded.
 * Once no application runs (it ended, between application-replay runs, while the logs are assembled) the
 * first one lets hubprof finish the store from what was recorded, and a second one stops the assembly at
 * once (hp_assemble_opts.cancel), keeping the logs and naming them; nothing is left without a message. The
 * handlers stay installed from the first launch to the end of hubprof. */
static volatile sig_atomic_t g_child;    /* the application's pid while it runs */
static volatile sig_atomic_t g_received; /* the last signal received */
static volatile sig_atomic_t g_after;    /* signals received while no application ran */
static volatile int g_cancel;            /* the second of those: the assembly stops */
static char g_out_name[1024];            /* the store being written, for the handler's lines */

static const char *signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

static void say_safe(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); } /* async-signal-safe */

static void forward_signal(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  int e = errno;
  g_received = sig;
  if (g_child > 0) {
    /* sent by a process (kill, timeout, a job manager): passed on; from the terminal (Ctrl-C, hangup) the
     * application's process group has it already */
    if (si && si->si_code <= 0) kill((pid_t)g_child, sig);
  } else if (g_after++ == 0) {
    say_safe("hubprof: ");
    say_safe(signal_name(sig));
    say_safe(" received: finishing ");
    say_safe(g_out_name);
    say_safe(" from what was recorded (send it again to stop now, keeping the logs)\n");
  } else if (!g_cancel) {
    g_cancel = 1;
    say_safe("hubprof: ");
    say_safe(signal_name(sig));
    say_safe(" received again: stopping\n");
  }
  errno = e;
}

int run_stop_signal(void) { return g_received; }

/* ---- assembly: the logs of every run into ONE store ---- */
static void warn_line(void *ctx, const char *line) {
  (void)ctx;
  cli_warn("%s", line);
}

int run_assemble(const run_opts *o, const char *output, char *const *dirs, size_t nruns,
                 hp_assemble_stats *stats, const char **keep_dir) {
  *keep_dir = NULL;
  cli_progress *pr = NULL; /* a live progress line on a terminal while the logs are assembled */
  hp_assemble_opts ao = {.size = sizeof ao,
                         .warn = warn_line,
                         .progress = cli_progress_ref_cb,
                         .progress_ctx = &pr,
                         .cancel = &g_cancel};
  if (o->multiplex) {
    ao.impute = strcmp(o->multiplex, "launch") == 0 ? HP_IMPUTE_LAUNCH : HP_IMPUTE_KERNEL;
    ao.plan = o->plan;
  }
  if (o->match)
    ao.match = !strcmp(o->match, "name")  ? HP_MATCH_NAME
               : !strcmp(o->match, "all") ? HP_MATCH_ALL
                                          : HP_MATCH_GRID;
  hp_assembly *a = NULL;
  if (hp_assembly_new(&ao, &a) != HP_OK) {
    cli_error("out of memory");
    return 1;
  }
  hp_status st = HP_OK;
  size_t nlogs = 0, nfirst = 0;
  for (size_t k = 0; k < nruns && st == HP_OK; k++) {
    size_t n = 0;
    char **logs = run_list_logs(dirs[k], &n);
    if (k == 0) nfirst = n;
    nlogs += n;
    for (size_t i = 0; i < n && st == HP_OK; i++)
      st = hp_assembly_add(a, logs[i], (uint32_t)k);
    if (st != HP_OK) *keep_dir = dirs[k];
    run_free_list(logs, n);
  }
  if (st == HP_OK && (!nlogs || !nfirst)) {
    cli_warn("no OpenCL activity recorded%s (did the application use OpenCL?); %s not written",
             nruns > 1 ? " in the first run" : "", output);
    hp_assembly_free(a);
    return 1;
  }
  hp_store *out = NULL;
  if (st == HP_OK) st = hp_store_open(output, o->format, HP_CREATE, &out);
  if (st == HP_OK && cli_partition_apply(out, dirs, nruns)) st = HP_ERR_INVALID;
  if (st == HP_OK) {
    pr = cli_progress_start("assembling", "rows", 0, o->quiet);
    st = hp_assembly_write(a, out, stats);
    cli_progress_end(pr);
  }
  if (st == HP_OK) st = hp_store_commit(out);
  if (st != HP_OK) {
    const char *why = hp_assembly_error(a)[0]         ? hp_assembly_error(a)
                      : out && hp_store_error(out)[0] ? hp_store_error(out)
                                                      : hp_status_str(st);
    if (!*keep_dir) *keep_dir = dirs[0];
    if (st == HP_ERR_CANCELLED && nruns == 1)
      cli_warn("stopped by %s: %s not written; the per-process logs are kept in %s (hubprof merge -o %s %s)",
               signal_name(g_received), output, *keep_dir, output, *keep_dir);
    else if (st == HP_ERR_CANCELLED)
      cli_warn("stopped by %s: %s not written; the per-process logs of the %zu runs are kept in %s and the "
               "folders beside it",
               signal_name(g_received), output, nruns, *keep_dir);
    else
      cli_warn("%s; the per-process logs are kept in %s", why, *keep_dir);
  }
  hp_store_abort(out);
  hp_assembly_free(a);
  return st == HP_OK ? 0 : 1;
}

int run_prepare(const run_opts *o, const char *app, char **output, char **collector) {
  *output = *collector = NULL;
  if (!cli_format_known(o->format)) {
    cli_error("%s: unknown format '%s' (see 'hubprof %s --help')", o->mode, o->format, o->mode);
    return CLI_USAGE;
  }
  char *out = o->output ? strdup(o->output) : default_output(app, o->format, o->force);
  if (!out) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  snprintf(g_out_name, sizeof g_out_name, "%s", out); /* named by the signal handler */
  int rc = run_check_output(out, o->format, o->force);
  if (rc) {
    free(out);
    return rc;
  }
  char *coll = find_collector();
  if (!coll) {
    cli_error("cannot find libhubprof_collector.so beside the hubprof executable (set HUBPROF_COLLECTOR)");
    free(out);
    return CLI_FAIL;
  }
  *output = out;
  *collector = coll;
  return 0;
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
    if (o->preload) env_prepend("LD_PRELOAD", collector);
  }

  /* Orphaned grandchildren are re-parented to us, so every process that writes a log is waited for. */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  /* SIGINT, SIGTERM and SIGHUP are passed on to the application and we stay to keep what it recorded;
   * SIGQUIT is left to the application (like time(1)). Blocked around fork, so none is lost in between. */
  static const int fwd[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction on = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
  static struct sigaction old_fwd[3]; /* the inherited handlers, for the application (saved once) */
  static int installed;
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_quit;
  sigemptyset(&on.sa_mask);
  sigemptyset(&ign.sa_mask);
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int i = 0; i < 3; i++) {
    sigaddset(&block, fwd[i]);
    sigaddset(&on.sa_mask, fwd[i]);
  }
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  for (int i = 0; i < 3; i++)
    sigaction(fwd[i], &on, installed ? NULL : &old_fwd[i]);
  installed = 1;
  sigaction(SIGQUIT, &ign, &old_quit);
  /* an inherited SIG_IGN for SIGCHLD would make waitpid lose the application's status: default it here,
   * and give the application its inherited setting back */
  struct sigaction dfl = {.sa_handler = SIG_DFL}, old_chld;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &old_chld);
  fflush(NULL);
  int err_pipe[2] = {-1, -1};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) err_pipe[0] = err_pipe[1] = -1;
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 3; i++)
      sigaction(fwd[i], &old_fwd[i], NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
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
  if (pid > 0) g_child = pid;
  sigprocmask(SIG_SETMASK, &old_mask, NULL); /* a signal that came meanwhile is passed on now */
  if (err_pipe[1] >= 0) close(err_pipe[1]);
  if (pid < 0) {
    cli_error("cannot start %s: %s", argv[0], strerror(fork_errno));
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
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
    if (w == pid) {
      status = st;
      g_child = 0;
    }
  }
  g_child = 0;
  cli_watch_end(watch);
  if (WIFEXITED(status))
    app_rc = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    app_rc = 128 + WTERMSIG(status);
  sigaction(SIGQUIT, &old_quit, NULL); /* SIGINT, SIGTERM and SIGHUP keep forward_signal: see above */
  sigaction(SIGCHLD, &old_chld, NULL);
  if (exec_errno) {
    cli_error("cannot run '%s': %s", argv[0], strerror(exec_errno));
    return app_rc;
  }
  if (g_received && !o->quiet)
    fprintf(stderr,
            "hubprof: %s received: passed on to the application, which ended with status %d; keeping "
            "what it recorded\n",
            signal_name(g_received), app_rc);
  *started = 1;
  return app_rc;
}

/* The summary line of trace, kernel replay and multiplexing. */
static void summary(const run_opts *o, const char *output, const hp_assemble_stats *st) {
  const hp_merge_stats *m = &st->merge;
  uint64_t nk = m->rows_out[HP_TABLE_KERNEL_SYMBOL], np = m->rows_out[HP_TABLE_PROCESS];
  uint64_t nd = m->rows_out[HP_TABLE_DISPATCH];
  fprintf(stderr, "hubprof: %" PRIu64 " %s of %" PRIu64 " kernel%s in %" PRIu64 " process%s", nd,
          cli_noun(nd, "dispatch", "dispatches"), nk, nk == 1 ? "" : "s", np, np == 1 ? "" : "es");
  if (o->multiplex)
    fprintf(stderr,
            ", %" PRIu64 " measured and %" PRIu64
            " imputed counter values in %zu pass%s (iteration multiplexing, "
            "policy '%s': %" PRIu64 " of %" PRIu64 " key%s complete)",
            st->measured_values, st->imputed_values, o->npasses, o->npasses == 1 ? "" : "es", o->multiplex,
            st->keys - st->incomplete_keys, st->keys, st->keys == 1 ? "" : "s");
  else if (o->plan)
    fprintf(stderr, ", %" PRIu64 " counter %s in %zu pass%s (kernel replay)",
            m->rows_out[HP_TABLE_COUNTER_VALUE],
            cli_noun(m->rows_out[HP_TABLE_COUNTER_VALUE], "value", "values"), o->npasses,
            o->npasses == 1 ? "" : "es");
  fprintf(stderr, " -> %s (%s)\n", output, o->format);
  if (st->unfinished_processes)
    cli_warn("%" PRIu64 " process%s did not finish (killed, or its log cut short): %" PRIu64
             " dispatch%s of %s kept, end time unknown",
             st->unfinished_processes, st->unfinished_processes == 1 ? "" : "es", st->unfinished_dispatches,
             st->unfinished_dispatches == 1 ? "" : "es", st->unfinished_processes == 1 ? "it" : "them");
  if (st->lost_records)
    cli_warn("%" PRIu64 " records were lost (the collector ran out of space)", st->lost_records);
}

void run_note_selection(const run_opts *o, const hp_assemble_stats *st) {
  if (!o->sel_kernel && !o->sel_exclude && !o->sel_range && !o->sel_region) return;
  fprintf(stderr, "hubprof: %" PRIu64 " dispatch%s not selected (run untouched, not recorded)\n",
          st->not_selected_dispatches, st->not_selected_dispatches == 1 ? "" : "es");
}

int run_app(const run_opts *o, int argc, char **argv) {
  char *output, *collector;
  int rc = run_prepare(o, argv[0], &output, &collector);
  if (rc) return rc;
  char *dir = run_make_log_dir(output);
  if (!dir) {
    cli_error("cannot create a directory for the logs: %s", strerror(errno));
    free(output);
    free(collector);
    return CLI_FAIL;
  }
  int started = 0;
  int app_rc = run_launch(o, collector, dir, o->plan, 0, argc, argv, &started);
  hp_assemble_stats stats = {.size = sizeof stats};
  const char *keep = NULL;
  if (!started) {
    run_remove_dir(dir);
  } else if (run_assemble(o, output, &dir, 1, &stats, &keep) == 0) {
    if (!o->quiet) summary(o, output, &stats);
    if (!o->quiet) run_note_selection(o, &stats);
    run_remove_dir(dir);
  } else if (!keep) {
    rmdir(dir); /* nothing recorded: remove the empty directory; a failed assembly keeps the logs it named */
  }
  free(dir);
  free(output);
  free(collector);
  return app_rc;
}
