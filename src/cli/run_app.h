/* Running an application under the collector (shared by `trace` and `profile`): environment, child
 * following, waiting, merging the per-process logs into one store, summary, exit status; and the pieces
 * application replay (app_replay.c) runs once per pass. */
#ifndef HUBPROF_CLI_RUN_APP_H
#define HUBPROF_CLI_RUN_APP_H

#include "hubprof/hub.h"

#include <stddef.h>

typedef struct run_opts {
  const char *mode;   /* HUBPROF_MODE for the collector: "trace" or "profile" */
  const char *format; /* output store format */
  const char *output; /* output path, NULL = default from the application's name */
  int force;          /* replace an existing output */
  int preload;        /* also LD_PRELOAD the collector */
  int quiet;          /* no plan, progress or summary */
  int start_paused;   /* HUBPROF_START_PAUSED: collection off until the application calls hubprof_start() */
  /* profile only */
  const char *plan;      /* HUBPROF_PLAN: the whole plan (hc_plan_format) */
  const char *provider;  /* HUBPROF_PROVIDER: the counter provider's name */
  size_t npasses;        /* passes of the plan */
  const char *match;     /* application replay: "name", "grid" or "all" */
  const char *multiplex; /* iteration multiplexing: its policy, "kernel" or "launch" (HUBPROF_MULTIPLEX); NULL
                            for kernel or application replay */
} run_opts;

/* Run argv[0..argc) once with the collector (trace, or profile with kernel replay or iteration multiplexing)
 * and merge its logs into one store (multiplexing: with the imputed values, multiplex.c); returns the exit
 * status hubprof should exit with: the application's own (128+signal when killed), 127/126 when it could not
 * be started, or 1/2 for hubprof's own errors found before the application started. */
int run_app(const run_opts *o, int argc, char **argv);

/* Path of the collector library: $HUBPROF_COLLECTOR, else beside the hubprof executable
 * (build/libhubprof_collector.so) or in ../lib/hubprof/. NULL when not found. malloc'd. */
char *find_collector(void);

/* ---- pieces of a run ---- */
/* Checks made before anything runs: format known, output free (or --force), collector found. On success
 * *output and *collector are malloc'd and 0 is returned; otherwise the CLI exit code, message printed. */
int run_prepare(const run_opts *o, const char *app, char **output, char **collector);
/* A fresh directory for one run's logs, beside the output (or in $TMPDIR); NULL on failure. malloc'd. */
char *run_make_log_dir(const char *output);
/* Remove a log directory and the files in it. */
void run_remove_dir(const char *dir);
/* Paths of the logs in dir (hubprof-*.log), sorted; free with run_free_list. */
char **run_list_logs(const char *dir, size_t *n);
void run_free_list(char **v, size_t n);
/* Copy every row of table t from `in` to `out` unchanged. */
hp_status run_copy_table(hp_store *in, hp_store *out, hp_table t);
/* Run the application once with the collector writing into dir: HUBPROF_PLAN = plan (NULL: none),
 * HUBPROF_PASS = pass (0: unset) and HUBPROF_MULTIPLEX = o->multiplex (NULL: unset). Waits for it and every
 * descendant. Returns its exit status as run_app does; *started = 0 when it could not be started (the error
 * is printed). */
int run_launch(const run_opts *o, const char *collector, const char *dir, const char *plan, size_t pass,
               int argc, char **argv, int *started);

/* `hubprof profile --replay application`: one run per pass, dispatches matched across runs, one store
 * (app_replay.c). `plan` is the whole plan; argv as for run_app. */
struct hc_plan;
struct hc_provider;
int app_replay(const run_opts *o, const struct hc_plan *plan, const struct hc_provider *prov, int argc,
               char **argv);

#endif
