/* Runs an application under the collector once (trace, profile with kernel replay or multiplexing, sample):
 * the output settled (run_prepare.c), one launch (launch.c), the per-process logs (log_dir.c) assembled into
 * ONE store through the CLI's drive of the hub's pipeline (drive.c) and removed, the summary, the exit
 * status. The application's stdin/stdout/stderr, arguments and exit status pass through untouched. */
/* SPDX-License-Identifier: MIT */
#include "run_app.h"
#include "cli.h"
#include "drive.h"

#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- assembly: the logs of every run into ONE store ---- */
int run_assemble(const run_opts *o, const char *output, char *const *dirs, size_t nruns,
                 hp_assemble_stats *stats, const char **keep_dir) {
  *keep_dir = NULL;
  cli_drive d; /* a live progress line on a terminal while the logs are assembled */
  hp_assemble_opts ao = {.cancel = run_signals_cancel()};
  if (o->multiplex) {
    ao.impute = strcmp(o->multiplex, "launch") == 0 ? HP_IMPUTE_LAUNCH : HP_IMPUTE_KERNEL;
    ao.plan = o->plan;
  }
  if (o->match)
    ao.match = !strcmp(o->match, "name")  ? HP_MATCH_NAME
               : !strcmp(o->match, "all") ? HP_MATCH_ALL
                                          : HP_MATCH_GRID;
  if (cli_drive_start(&d, &ao)) return 1;
  hp_status st = HP_OK;
  size_t nreaped = 0;
  const run_reaped *r = run_reaped_list(&nreaped);
  for (size_t i = 0; i < nreaped && st == HP_OK; i++) /* how they ended, into their process rows */
    st = hp_assembly_set_exit(d.a, r[i].pid, WIFEXITED(r[i].status) ? WEXITSTATUS(r[i].status) : -1,
                              WIFSIGNALED(r[i].status) ? WTERMSIG(r[i].status) : 0);
  size_t nlogs = 0, nfirst = 0;
  for (size_t k = 0; k < nruns && st == HP_OK; k++) {
    size_t n = 0;
    char **logs = run_list_logs(dirs[k], &n);
    if (k == 0) nfirst = n;
    nlogs += n;
    for (size_t i = 0; i < n && st == HP_OK; i++)
      st = hp_assembly_add(d.a, logs[i], (uint32_t)k);
    if (st != HP_OK) *keep_dir = dirs[k];
    run_free_list(logs, n);
  }
  /* processes whose collector kept no log said why in the folder's status file (hu_collector_status.h) */
  long fpid = 0;
  char fwhy[1100] = "";
  size_t nfailed = 0, nfailed_first = 0;
  for (size_t k = 0; k < nruns; k++) {
    long p = 0;
    char w[sizeof fwhy];
    size_t f = run_collector_failures(dirs[k], &p, w, sizeof w);
    if (f && !nfailed) {
      fpid = p;
      memcpy(fwhy, w, sizeof fwhy);
    }
    nfailed += f;
    if (k == 0) nfailed_first = f;
  }
  if (st == HP_OK && (!nlogs || !nfirst) && (nruns == 1 ? nfailed : nfailed_first)) {
    cli_error(
        "%s not written: the collector could not keep a log in %zu process%s%s, so nothing was recorded "
        "(process %ld: %s)",
        output, nfailed, nfailed == 1 ? "" : "es", nruns > 1 ? " of the first run" : "", fpid, fwhy);
    cli_drive_end(&d);
    return RUN_NO_LOG;
  }
  if (st == HP_OK && (!nlogs || !nfirst)) {
    struct statvfs v; /* a full disk stops the collector: say that, not "no activity" */
    if (statvfs(dirs[0], &v) == 0 && (unsigned long long)v.f_bavail * v.f_frsize < (1ull << 20))
      cli_warn("the disk of %s filled up while the application ran (%llu KiB free): the collector stopped "
               "and kept no log; %s not written",
               dirs[0], (unsigned long long)v.f_bavail * v.f_frsize >> 10, output);
    else if (cli_cuda_warned) /* the one line about CUDA said why (cuda_check.c) */
      cli_warn("nothing recorded%s; %s not written", nruns > 1 ? " in the first run" : "", output);
    else
      cli_warn(
          "no OpenCL or CUDA activity recorded%s (did the application use OpenCL or CUDA?); %s not written",
          nruns > 1 ? " in the first run" : "", output);
    cli_drive_end(&d);
    return 1;
  }
  cli_drive_out out = {.path = output,
                       .format = o->format,
                       .verb = "assembling",
                       .quiet = o->quiet,
                       .inputs = dirs,
                       .ninputs = nruns};
  if (st == HP_OK) st = cli_drive_write(&d, &out);
  *stats = d.stats;
  for (size_t k = 0; k < nruns && st == HP_OK; k++) /* logs that stopped growing: why, in the metadata */
    st = run_collector_stopped(dirs[k], d.out);
  if (st == HP_OK) st = cli_drive_commit(&d);
  if (st == HP_OK && nfailed) /* never silenced by -q: what they did is missing from the store */
    cli_warn("%zu process%s kept no log, so what %s did is not in %s (process %ld: %s)", nfailed,
             nfailed == 1 ? "" : "es", nfailed == 1 ? "it" : "they", output, fpid, fwhy);
  if (st != HP_OK) {
    const char *why = cli_drive_why(&d, st), *sig = run_signal_name(run_stop_signal());
    if (!*keep_dir) *keep_dir = dirs[0];
    if (st == HP_ERR_CANCELLED && nruns == 1)
      cli_warn("stopped by %s: %s not written; the per-process logs are kept in %s (hubprof merge -o %s %s)",
               sig, output, *keep_dir, output, *keep_dir);
    else if (st == HP_ERR_CANCELLED)
      cli_warn("stopped by %s: %s not written; the per-process logs of the %zu runs are kept in %s and the "
               "folders beside it",
               sig, output, nruns, *keep_dir);
    else
      cli_warn("%s; the per-process logs are kept in %s", why, *keep_dir);
  }
  cli_drive_end(&d);
  return st == HP_OK ? 0 : 1;
}

const char *run_code_kept(const run_opts *o) {
  const char *c = o->code ? o->code : "none";
  return !strcmp(c, "all")      ? "programs: sources and binaries kept"
         : !strcmp(c, "source") ? "programs: sources kept, not binaries (--code)"
                                : "programs: hashes only (--code keeps sources and binaries)";
}

/* The summary line of trace, kernel replay and multiplexing. */
static void summary_line(const run_opts *o, const char *output, const hp_assemble_stats *st) {
  const hp_merge_stats *m = &st->merge;
  uint64_t nk = st->kernels_dispatched, np = m->rows_out[HP_TABLE_PROCESS]; /* kernels run, not created */
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
  fprintf(stderr, " -> %s (%s); %s\n", output, o->format, run_code_kept(o));
}

/* The summary line (not with -q), then what was lost (-q or not). */
static void summary(const run_opts *o, const char *output, const hp_assemble_stats *st) {
  if (!o->quiet) summary_line(o, output, st);
  run_warn_losses(st);
}

void run_warn_losses(const hp_assemble_stats *st) {
  if (st->unfinished_processes)
    cli_warn("%" PRIu64 " process%s did not finish (killed, or its log cut short): %" PRIu64
             " dispatch%s of %s kept, end time unknown",
             st->unfinished_processes, st->unfinished_processes == 1 ? "" : "es", st->unfinished_dispatches,
             st->unfinished_dispatches == 1 ? "" : "es", st->unfinished_processes == 1 ? "it" : "them");
  if (st->lost_records)
    cli_warn("%" PRIu64 " %s lost (the collector ran out of space)", st->lost_records,
             cli_noun(st->lost_records, "record was", "records were"));
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
  int arc = started ? run_assemble(o, output, &dir, 1, &stats, &keep) : 1;
  if (arc == 0) {
    summary(o, output, &stats);
    if (!o->quiet) run_note_selection(o, &stats);
  }
  if (!keep) run_remove_dir(dir);                          /* a failed assembly keeps the logs it named */
  if (arc == RUN_NO_LOG && app_rc == 0) app_rc = CLI_FAIL; /* no profile, and not the application's doing */
  free(dir);
  free(output);
  free(collector);
  return app_rc;
}
