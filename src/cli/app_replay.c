/* Application replay (`hubprof profile --replay application`): runs the application once per pass, each run's
 * logs in their own directory, then hands every run to the hub's assembly pipeline (hubprof/assemble.h),
 * which pairs each later run's processes with the first run's (command line, then order of start), matches
 * their dispatches per device by a policy (name, grid, all) and writes ONE store: the first run's dispatches
 * with every pass's counter values attached. Unmatched dispatches and processes are reported, never joined.
 * With per-device plans each run measures each device's next pass (as many runs as the longest list). */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "run_app.h"

#include "../common/hu_buf.h"
#include "counters.h"
#include "hubprof/assemble.h"
#include "hubprof/hub.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The counters run k measures, as "a,b" (one list), or "device=SEL: a,b; every other device: c" (per-device
 * plans; a device without a k-th pass shows "-"), into b. */
static void run_counters(hu_buf *b, hc_plan *const *plans, const char *const *sels, size_t nslots, size_t k) {
  b->n = 0;
  for (size_t s = 0; s < nslots; s++) {
    if (nslots > 1)
      hu_buf_printf(b, "%s%s%s: ", s ? "; " : "", sels[s] ? "device=" : "",
                    sels[s] ? sels[s] : "every other device");
    size_t w = 0;
    for (size_t i = 0; plans[s] && i < plans[s]->ncounters; i++)
      if (plans[s]->pass[i] == k + 1) hu_buf_printf(b, "%s%s", w++ ? "," : "", plans[s]->names[i]);
    if (!w && nslots > 1) hu_buf_str(b, "-");
  }
}

int app_replay(const run_opts *o0, hc_plan *const *plans, const char *const *sels, size_t nslots, int argc,
               char **argv) {
  run_opts ro = *o0, *o = &ro; /* npasses: the runs (per-device plans: fewer than the whole plan's) */
  char *output = NULL, *collector = NULL;
  int rc = run_prepare(o, argv[0], &output, &collector);
  if (rc) return rc;
  size_t nruns = 0; /* per-device plans: as many runs as the device list with the most passes has */
  for (size_t s = 0; s < nslots; s++)
    if (plans[s] && plans[s]->npasses > nruns) nruns = plans[s]->npasses;
  ro.npasses = nruns;
  char **dirs = calloc(nruns ? nruns : 1, sizeof *dirs);
  hu_buf pass_str = {0};
  int app_rc = CLI_FAIL, ok = dirs != NULL, first_rc = 0;
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
    run_counters(&pass_str, plans, sels, nslots, k);
    if (pass_str.oom || !hu_buf_cstr(&pass_str)) {
      cli_error("profile: out of memory");
      ok = 0;
      break;
    }
    if (!(dirs[k] = run_make_log_dir(output))) {
      cli_error("cannot create a directory for the logs: %s", strerror(errno));
      ok = 0;
      break;
    }
    if (!o->quiet) fprintf(stderr, "hubprof: [pass %zu/%zu] %s\n", k + 1, nruns, hu_buf_cstr(&pass_str));
    int started = 0; /* per-device plans: every run gets the whole plan, each device measures its k-th pass */
    int run_rc = run_launch(o, collector, dirs[k], nslots > 1 ? o->plan : hu_buf_cstr(&pass_str), k + 1, argc,
                            argv, &started);
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
    if (run_assemble(o, output, dirs, ran, &st, &keep) == 0 && !o->quiet) {
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
      if (st.lost_records)
        cli_warn("%" PRIu64 " records were lost (the collector ran out of space)", st.lost_records);
      run_note_selection(o, &st);
    }
  }
  for (size_t k = 0; dirs && k < nruns; k++) {
    if (dirs[k] && !keep) run_remove_dir(dirs[k]);
    free(dirs[k]);
  }
  free(dirs);
  hu_buf_free(&pass_str);
  free(output);
  free(collector);
  return app_rc;
}
