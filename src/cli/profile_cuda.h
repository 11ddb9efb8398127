/* `hubprof profile` on CUDA (profile_cuda.c): NVIDIA metrics planned by CUPTI's Profiler Host API for the
 * GPU's chip and measured by the collector's Range Profiler (src/collector/prov_cuda_range.c). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_PROFILE_CUDA_H
#define HUBPROF_CLI_PROFILE_CUDA_H

#include "cli.h"
#include "run_app.h"

#include "counters.h"

#include <stddef.h>

/* 1 when a profile with no --device means CUDA: a --counters name looks like an NVIDIA metric (it has "__",
 * as "smsp__inst_executed.sum"). */
int cli_cuda_metric_names(const char *const *counters, size_t n);
/* The chip of CUDA device 0 ("GH100"), from the driver and CUPTI (cuptiDeviceGetChipName), into chip; CLI_OK,
 * or CLI_FAIL with one line printed ("CMD: --device cuda: no CUDA driver here ..."). */
int cli_cuda_chip(const char *cmd, char *chip, size_t len);
/* Plan and run a profile of NVIDIA metrics on chip's provider p (hc_cupti_device_open): kernel replay (one
 * configuration per device list: CUPTI replays its passes inside each kernel) or application replay (the
 * list split into configurations of one CUPTI pass each, one run per configuration; per device list too);
 * not multiplexing.
 * counters: the --counters lists ('device=SEL:LIST' ones too), groups: --group, mlists/mfiles: --metrics and
 * --metrics-file. ro: the run's options (plan and provider set here). Returns the exit status. */
int cli_profile_cuda(run_opts *ro, hc_provider *p, const char *replay, const char *const *counters,
                     size_t ncounters, const char *const *groups, size_t ngroups, const char *const *mlists,
                     size_t nmlists, const char *const *mfiles, size_t nmfiles, unsigned maxpp, int argc,
                     char **argv);

#endif
