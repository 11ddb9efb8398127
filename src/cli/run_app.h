/* Running an application under the collector (shared by `trace`, `profile` and `sample`): run_app.c (one run,
 * assembly, summary), run_prepare.c (output, collector), launch.c (environment, fork, wait), run_signals.c,
 * log_dir.c; and the pieces application replay (app_replay.c) runs per pass. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_RUN_APP_H
#define HUBPROF_CLI_RUN_APP_H

#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct run_opts {
  const char *mode;   /* HUBPROF_MODE for the collector: "trace" or "profile" */
  const char *format; /* output store format */
  const char *output; /* output path, NULL = default from the application's name */
  int force;          /* replace an existing output */
  int preload;        /* also LD_PRELOAD the collector */
  int quiet;          /* no plan, progress or summary */
  int start_paused;   /* HUBPROF_START_PAUSED: collection off until the application calls hubprof_start() */
  int api;            /* HUBPROF_API: also record the OpenCL calls and transfer commands (--api) */
  /* profile only */
  const char *plan;      /* HUBPROF_PLAN: the whole plan (hc_plan_format) */
  const char *provider;  /* HUBPROF_PROVIDER: the counter provider's name */
  size_t npasses;        /* passes of the plan */
  const char *match;     /* application replay: "name", "grid" or "all" */
  const char *multiplex; /* iteration multiplexing: its policy, "kernel" or "launch" (HUBPROF_MULTIPLEX); NULL
                            for kernel or application replay */
  /* dispatch selection (select_args.h): HUBPROF_KERNEL, _KERNEL_EXCLUDE, _DISPATCH_RANGE, HUBPROF_REGION;
     values one per line, NULL = not given */
  const char *sel_kernel, *sel_exclude, *sel_range, *sel_region;
  const char *code; /* HUBPROF_CODE: "none", "source" (sample) or "all" (--code); NULL: "auto" */
} run_opts;

/* Run argv[0..argc) once with the collector (trace, or profile with kernel replay or iteration multiplexing)
 * and assemble its logs into one store (multiplexing: with the imputed values); returns the exit
 * status hubprof should exit with: the application's own (128+signal when killed), 127/126 when it could not
 * be started, or 1/2 for hubprof's own errors found before the application started. */
int run_app(const run_opts *o, int argc, char **argv);

/* The warnings of data lost in a run (processes that did not finish, records the collector could not store):
 * printed after every assembly, -q or not. */
void run_warn_losses(const hp_assemble_stats *st);
/* What the store keeps of the programs' code (HUBPROF_CODE), for the summary line. */
const char *run_code_kept(const run_opts *o);

/* Path of the collector library: $HUBPROF_COLLECTOR, else beside the hubprof executable
 * (build/libhubprof_collector.so) or in ../lib/hubprof/. NULL when not found. malloc'd. */
char *find_collector(void);

/* ---- pieces of a run ---- */
/* A process hubprof reaped (launch.c): the application of each run, and descendants left behind. */
typedef struct run_reaped {
  pid_t pid;
  int status; /* as waitpid gave it */
} run_reaped;
const run_reaped *run_reaped_list(size_t *n);
/* Checks made before anything runs: format known, output checked (cli_check_output), collector found. On
 * success *output and *collector are malloc'd and 0 is returned; otherwise the CLI exit code, message
 * printed. */
int run_prepare(const run_opts *o, const char *app, char **output, char **collector);
/* A fresh directory for one run's logs, beside the output (or in $TMPDIR); NULL on failure. malloc'd. */
char *run_make_log_dir(const char *output);
/* How many processes of the run whose logs are in dir kept no log because their collector turned itself off
 * (it could not create the log, or a setting was bad): the lines of dir's status file
 * (hu_collector_status.h). The first one's process in *pid and message in why. */
size_t run_collector_failures(const char *dir, long *pid, char *why, size_t len);
/* The processes of dir whose log stopped growing (the disk filled: their status lines of kind
 * HU_COLLECTOR_STOPPED) into out's metadata, collector_stopped.PID = the collector's message. */
hp_status run_collector_stopped(const char *dir, struct hp_store *out);
/* Remove a log directory and the files in it. */
void run_remove_dir(const char *dir);
/* Paths of the logs in dir (hubprof-*.log), sorted; free with run_free_list. */
char **run_list_logs(const char *dir, size_t *n);
void run_free_list(char **v, size_t n);
/* Assemble the logs of runs dirs[0..nruns) (run k's logs in dirs[k]; more than one run = application
 * replay) into `output` through the hub's pipeline (o->multiplex: imputed; o->match: replay matching).
 * Warnings printed as they come. 0 on success with *stats filled; 1 when nothing was recorded (warned,
 * *keep_dir NULL) or on failure (warned; *keep_dir = the folder whose logs are kept for `hubprof merge`);
 * RUN_NO_LOG when nothing was recorded because the collector could not keep a log (said, with its reason):
 * hubprof then exits non-zero even when the application exited 0. */
#define RUN_NO_LOG 2
int run_assemble(const run_opts *o, const char *output, char *const *dirs, size_t nruns,
                 hp_assemble_stats *stats, const char **keep_dir);
/* The last of SIGINT, SIGTERM, SIGHUP hubprof received while an application ran (passed on to it), or 0:
 * application replay starts no further run after one. */
int run_stop_signal(void);
/* Run the application once with the collector writing into dir: HUBPROF_PLAN = plan (NULL: none),
 * HUBPROF_PASS = pass (0: unset) and HUBPROF_MULTIPLEX = o->multiplex (NULL: unset). Waits for it and every
 * descendant; SIGINT, SIGTERM and SIGHUP sent to hubprof meanwhile are passed on to it (and said so).
 * Returns its exit status as run_app does; *started = 0 when it could not be started (the error printed). */
int run_launch(const run_opts *o, const char *collector, const char *dir, const char *plan, size_t pass,
               int argc, char **argv, int *started);

/* run_signals.c: SIGINT, SIGTERM and SIGHUP while an application runs are passed on to it (kill, when a
 * process sent them); once none runs, the first one finishes the store named by run_signals_name_output and
 * a second one sets the flag of run_signals_cancel (hp_assemble_opts.cancel). run_signals_take installs the
 * handler (the inherited ones saved once), blocks the three signals into *old_mask, ignores SIGQUIT and
 * defaults SIGCHLD; run_signals_child gives a forked application its inherited settings and mask back;
 * run_signals_release gives SIGQUIT and SIGCHLD back after a run (the handler stays). */
void run_signals_name_output(const char *output);
const volatile int *run_signals_cancel(void);
void run_signals_take(sigset_t *old_mask);
void run_signals_child(const sigset_t *old_mask);
void run_signals_release(void);
/* The application's pid while it runs (signals are passed on to it), or 0. */
void run_signals_set_child(pid_t pid);
/* "SIGINT", "SIGTERM", "SIGHUP" or "a signal". */
const char *run_signal_name(int sig);

/* With a dispatch selection: the line "N dispatches not selected" of the summary (stderr). */
void run_note_selection(const run_opts *o, const hp_assemble_stats *st);

/* `hubprof profile --replay application`: one run per pass, dispatches matched across runs, one store
 * (app_replay.c). `plans` holds one plan per device list (nslots; NULL for a list that measures nothing):
 * with one, each run measures one of its passes; with several (per-device plans, o->plan the whole plan
 * and HUBPROF_DEVICE_PLANS set), run k measures each device's k-th pass. sels[k]: the device selector of
 * list k, NULL for every other device's. argv as for run_app. */
struct hc_plan;
int app_replay(const run_opts *o, struct hc_plan *const *plans, const char *const *sels, size_t nslots,
               int argc, char **argv);

/* cuda_check.c: before the first run, one warning when argv0 is a CUDA program and there is no CUDA driver
 * (the driver is what loads the collector into a CUDA program). */
void cli_cuda_check(const char *argv0);
extern int cli_cuda_warned; /* 1 once cli_cuda_check warned */

#endif
