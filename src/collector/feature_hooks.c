/* The table of the collector's features (feature_hooks.h): which feature the core's init, log, harvest, fork
 * and exit reach, in which order. The one file that calls into every feature; the core calls none of them. */
/* SPDX-License-Identifier: MIT */
#include "feature_hooks.h"

#include "collector.h"
#include "env.h"
#include "hubprof/hub.h"
#include "regions.h"
#include "sample.h"
#include "select.h"

static void features_init(const hpc_env *e) {
  hpc_regions_init(e->start_paused);
  hpc_select_init(e); /* --kernel, --dispatch-range, --region (select.c) */
}

static void features_exit(hp_store *s, int64_t end_ns, int debug) {
  hpc_regions_exit(s, end_ns); /* regions still open: ended here, marked as such */
  hpc_nvtx_exit(s, end_ns);    /* NVTX start/end ranges still open: the same */
  hpc_select_exit(s, debug);
  hpc_code_capture(s);
  hpc_sample_exit(s); /* the last samples and their counts */
}

const hpc_feature_hooks hpc_features = {.sample_init = hpc_sample_init,
                                        .sampling = hpc_sample_on,
                                        .init = features_init,
                                        .log_opened = hpc_sample_log_opened,
                                        .window = hpc_sample_window,
                                        .code_note = hpc_code_note,
                                        .running = hpc_sample_running,
                                        .code_capture = hpc_code_capture,
                                        .pass = hpc_sample_pass,
                                        .fork_child = hpc_sample_fork_child,
                                        .exit = features_exit};
