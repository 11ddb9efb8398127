/* Running an application under the collector (shared by `trace` and, later, `profile`): environment,
 * child following, waiting, merging the per-process logs into one store, summary, exit status. */
#ifndef HUBPROF_CLI_RUN_APP_H
#define HUBPROF_CLI_RUN_APP_H

typedef struct run_opts {
  const char *mode;   /* HUBPROF_MODE for the collector: "trace" */
  const char *format; /* output store format */
  const char *output; /* output path, NULL = default from the application's name */
  int force;          /* replace an existing output */
  int preload;        /* also LD_PRELOAD the collector */
  int quiet;          /* no summary */
} run_opts;

/* Run argv[0..argc) with the collector; returns the exit status hubprof should exit with: the
 * application's own (128+signal when killed), 127/126 when it could not be started, or 1/2 for
 * hubprof's own errors found before the application started. */
int run_app(const run_opts *o, int argc, char **argv);

/* Path of the collector library: $HUBPROF_COLLECTOR, else beside the hubprof executable
 * (build/libhubprof_collector.so) or in ../lib/hubprof/. NULL when not found. malloc'd. */
char *find_collector(void);

#endif
