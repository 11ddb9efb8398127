/* Runs an application under the collector: sets the documented HUBPROF_* variables and OPENCL_LAYERS
 * (and LD_PRELOAD when asked), becomes the subreaper of every descendant so forked children are waited
 * for, then merges each process's log into ONE store through the hub and removes the logs.
 * The application's stdin/stdout/stderr, arguments and exit status pass through untouched; the only
 * variables it sees added are the collector's. */
#include "run_app.h"
#include "cli.h"
#include "multiplex.h"

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

/* "APP.hubprof.db" in the current directory, from the application's base name. */
static char *default_output(const char *app, const char *format) {
  const char *base = strrchr(app, '/');
  base = base ? base + 1 : app;
  size_t n = strlen(base) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s.hubprof%s", base, format_suffix(format));
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

hp_status run_copy_table(hp_store *in, hp_store *out, hp_table t) {
  const hp_table_desc *td = hp_table_describe(t);
  void *row = calloc(1, td->row_size);
  if (!row) return HP_ERR_NOMEM;
  hp_cursor *c = NULL;
  hp_status st = hp_cursor_open(in, t, &c);
  while (st == HP_OK) {
    memset(row, 0, td->row_size);
    *(uint32_t *)row = (uint32_t)td->row_size;
    st = hp_cursor_next(c, row);
    if (st == HP_OK) st = hp_write(out, t, row);
  }
  hp_cursor_close(c);
  free(row);
  return st == HP_END ? HP_OK : st;
}

/* Merge the logs into the output; prints the summary. Returns 0 on success. */
static int merge_logs(const run_opts *o, const char *output, const char *dir) {
  size_t n;
  char **logs = run_list_logs(dir, &n);
  int rc = 0;
  if (n == 0) {
    cli_warn("no OpenCL activity recorded (did the application use OpenCL?); %s not written", output);
    free(logs);
    return 1;
  }
  hp_store **in = calloc(n, sizeof *in);
  size_t nin = 0;
  for (size_t i = 0; i < n && in; i++) {
    hp_store *s;
    hp_status st = hp_store_open(logs[i], "log", HP_READ, &s);
    if (st != HP_OK) { /* a process killed before its first block: nothing to merge from it */
      cli_warn("%s (skipped)", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
      hp_store_abort(s);
      continue;
    }
    if (hp_store_damage(s, NULL) != HP_OK && !o->quiet)
      cli_warn("%s (a process ended abruptly; keeping what it committed)", hp_store_error(s));
    in[nin++] = s;
  }
  hp_store *out = NULL;
  hp_merge_stats stats = {.size = sizeof stats};
  hp_status st = in ? hp_store_open(output, o->format, HP_CREATE, &out) : HP_ERR_NOMEM;
  if (st == HP_OK) st = hp_merge(out, in, nin, &stats);
  if (st == HP_OK) st = hp_store_commit(out);
  if (st != HP_OK) {
    cli_warn("%s; the per-process logs are kept in %s",
             out && hp_store_error(out)[0] ? hp_store_error(out) : hp_status_str(st), dir);
    rc = 1;
  }
  hp_store_abort(out);
  uint64_t lost = 0;
  for (size_t i = 0; i < nin; i++) {
    hp_cursor *c;
    if (hp_cursor_open(in[i], HP_TABLE_PROCESS, &c) == HP_OK) {
      hp_process p = {.size = sizeof p};
      while (hp_cursor_next(c, &p) == HP_OK)
        lost += p.lost_records;
      hp_cursor_close(c);
    }
    hp_store_close(in[i]);
  }
  if (rc == 0 && !o->quiet) {
    char extra[128] = "";
    if (o->plan)
      snprintf(extra, sizeof extra, ", %" PRIu64 " counter values in %zu pass%s (kernel replay)",
               stats.rows_out[HP_TABLE_COUNTER_VALUE], o->npasses, o->npasses == 1 ? "" : "es");
    fprintf(stderr,
            "hubprof: %" PRIu64 " dispatches of %" PRIu64 " kernel%s in %" PRIu64 " process%s%s -> %s (%s)\n",
            stats.rows_out[HP_TABLE_DISPATCH], stats.rows_out[HP_TABLE_KERNEL_SYMBOL],
            stats.rows_out[HP_TABLE_KERNEL_SYMBOL] == 1 ? "" : "s", stats.rows_out[HP_TABLE_PROCESS],
            stats.rows_out[HP_TABLE_PROCESS] == 1 ? "" : "es", extra, output, o->format);
    if (lost) cli_warn("%" PRIu64 " records were lost (the collector ran out of space)", lost);
  }
  for (size_t i = 0; i < n; i++)
    free(logs[i]);
  free(logs);
  free(in);
  return rc;
}

int run_prepare(const run_opts *o, const char *app, char **output, char **collector) {
  *output = *collector = NULL;
  if (!cli_format_known(o->format)) {
    cli_error("%s: unknown format '%s' (see 'hubprof %s --help')", o->mode, o->format, o->mode);
    return CLI_USAGE;
  }
  char *out = o->output ? strdup(o->output) : default_output(app, o->format);
  char *coll = find_collector();
  if (!coll) {
    cli_error("cannot find libhubprof_collector.so beside the hubprof executable (set HUBPROF_COLLECTOR)");
    free(out);
    return CLI_FAIL;
  }
  struct stat sb;
  if (!o->force && stat(out, &sb) == 0) {
    cli_error("%s: already exists (use --force to replace it, or -o to choose another name)", out);
    free(out);
    free(coll);
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
  if (o->provider) setenv("HUBPROF_PROVIDER", o->provider, 1);
  setenv("HUBPROF_START_PAUSED", o->start_paused ? "1" : "0", 1);
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
  /* Like time(1): a Ctrl-C goes to the application; we stay to merge what it recorded. */
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGINT, &ign, &old_int);
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
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
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
  if (err_pipe[1] >= 0) close(err_pipe[1]);
  if (pid < 0) {
    cli_error("cannot start %s: %s", argv[0], strerror(errno));
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    return CLI_FAIL;
  }
  int exec_errno = 0;
  if (err_pipe[0] >= 0) {
    if (read(err_pipe[0], &exec_errno, sizeof exec_errno) != sizeof exec_errno) exec_errno = 0;
    close(err_pipe[0]);
  }
  int status = 0, app_rc = 0;
  for (;;) { /* the application, then every descendant left behind */
    int st;
    pid_t w = waitpid(-1, &st, 0);
    if (w < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (w == pid) status = st;
  }
  if (WIFEXITED(status))
    app_rc = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    app_rc = 128 + WTERMSIG(status);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  sigaction(SIGCHLD, &old_chld, NULL);
  if (exec_errno) {
    cli_error("cannot run '%s': %s", argv[0], strerror(exec_errno));
    return app_rc;
  }
  *started = 1;
  return app_rc;
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
  if (!started) {
    run_remove_dir(dir);
  } else if ((o->multiplex ? multiplex_merge(o, output, dir) : merge_logs(o, output, dir)) == 0) {
    run_remove_dir(dir);
  } else {
    /* nothing recorded: remove the empty directory; a failed merge keeps the logs it named */
    rmdir(dir);
  }
  free(dir);
  free(output);
  free(collector);
  return app_rc;
}
