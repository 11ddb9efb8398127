/* Application replay (`hubprof profile --replay application`): runs the application once per pass, each run's
 * logs in their own directory, then hands every run to the hub's assembly pipeline (hubprof/assemble.h),
 * which pairs each later run's processes with the first run's (command line, then order of start), matches
 * their dispatches by a policy (name, grid, all) and writes ONE store: the first run's dispatches with every
 * pass's counter values attached. Unmatched dispatches and processes are reported, never joined. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "run_app.h"

#include "counters.h"
#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int app_replay(const run_opts *o, const hc_plan *plan, const hc_provider *prov, int argc, char **argv) {
  (void)prov; /* counter descriptions come from the logs the collector wrote */
  char *output = NULL, *collector = NULL;
  int rc = run_prepare(o, argv[0], &output, &collector);
  if (rc) return rc;
  size_t nruns = plan->npasses;
  char **dirs = calloc(nruns ? nruns : 1, sizeof *dirs);
  size_t plen = 1;
  for (size_t i = 0; i < plan->ncounters; i++)
    plen += strlen(plan->names[i]) + 1;
  char *pass_str = malloc(plen);
  int app_rc = CLI_FAIL, ok = dirs && pass_str, first_rc = 0;
  if (!ok) cli_error("profile: out of memory");
  size_t ran = 0;
  for (size_t k = 0; ok && k < nruns; k++) {
    if (run_stop_signal()) { /* stopped by a signal: no further run; what ran is kept */
      int sig = run_stop_signal();
      cli_warn("%s received: passes %zu to %zu not run; keeping the %zu run%s done",
               sig == SIGINT    ? "SIGINT"
               : sig == SIGTERM ? "SIGTERM"
                                : "SIGHUP",
               k + 1, nruns, k, k == 1 ? "" : "s");
      break;
    }
    size_t w = 0;
    pass_str[0] = '\0';
    for (size_t i = 0; i < plan->ncounters; i++)
      if (plan->pass[i] == k + 1) w += (size_t)sprintf(pass_str + w, "%s%s", w ? "," : "", plan->names[i]);
    if (!(dirs[k] = run_make_log_dir(output))) {
      cli_error("cannot create a directory for the logs: %s", strerror(errno));
      ok = 0;
      break;
    }
    if (!o->quiet) fprintf(stderr, "hubprof: [pass %zu/%zu] %s\n", k + 1, nruns, pass_str);
    int started = 0;
    int run_rc = run_launch(o, collector, dirs[k], pass_str, k + 1, argc, argv, &started);
    if (!started) {
      app_rc = run_rc;
      ok = 0;
      break;
    }
    ran++;
    if (k == 0)
      app_rc = first_rc = run_rc;
    else if (run_rc != first_rc)
      cli_warn("pass %zu: the application exited with %d, in the first run with %d (hubprof exits with the "
               "first run's)",
               k + 1, run_rc, first_rc);
  }
  const char *keep = NULL;
  if (ok && ran) {
    hp_assemble_stats st = {.size = sizeof st};
    int arc = run_assemble(o, output, dirs, ran, &st, &keep);
    if (arc == RUN_NO_LOG && app_rc == 0) app_rc = CLI_FAIL;
    if (arc == 0 && !o->quiet) {
      const hp_merge_stats *m = &st.merge;
      uint64_t nk = st.kernels_dispatched, np = m->rows_out[HP_TABLE_PROCESS]; /* kernels run */
      fprintf(stderr,
              "hubprof: %" PRIu64 " %s of %" PRIu64 " kernel%s in %" PRIu64 " process%s, %" PRIu64
              " counter %s in %zu pass%s (application replay, match '%s'",
              m->rows_out[HP_TABLE_DISPATCH],
              cli_noun(m->rows_out[HP_TABLE_DISPATCH], "dispatch", "dispatches"), nk, nk == 1 ? "" : "s", np,
              np == 1 ? "" : "es", m->rows_out[HP_TABLE_COUNTER_VALUE],
              cli_noun(m->rows_out[HP_TABLE_COUNTER_VALUE], "value", "values"), ran, ran == 1 ? "" : "es",
              o->match);
      if (st.unmatched_dispatches) fprintf(stderr, ", %" PRIu64 " unmatched", st.unmatched_dispatches);
      fprintf(stderr, ") -> %s (%s); %s\n", output, o->format, run_code_kept(o));
      run_note_selection(o, &st);
    }
    if (arc == 0) run_warn_losses(&st); /* -q or not */
  }
  for (size_t k = 0; dirs && k < nruns; k++) {
    if (dirs[k] && !keep) run_remove_dir(dirs[k]);
    free(dirs[k]);
  }
  free(dirs);
  free(pass_str);
  free(output);
  free(collector);
  return app_rc;
}
