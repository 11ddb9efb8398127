/* Metric arguments shared by `plan`, `profile` and `list`: a device opened, the metric definitions for it
 * (built-in sets and --metrics-file), and --metrics lists turned into the planner's counter groups. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "counters.h"
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

int cli_device_open(const char *cmd, const char *device, hc_provider **out) {
  hc_status st = hc_device_open(device, out);
  if (st == HC_OK) return CLI_OK;
  const char *err = hc_provider_error(*out);
  cli_error("%s%s%s", cmd ? cmd : "", cmd ? ": " : "", err[0] ? err : hc_status_str(st));
  hc_provider_close(*out);
  *out = NULL;
  return CLI_FAIL;
}

int cli_metrics_open(const hc_provider *p, const char *const *files, size_t nfiles, hc_metrics **out) {
  const char *device = hc_provider_limits(p) ? hc_provider_limits(p)->device : NULL;
  size_t n = hc_provider_count(p);
  const char **names = calloc(n + 1, sizeof *names);
  hc_metrics *m = NULL;
  hc_status st = names ? hc_metrics_new(&m) : HC_ERR_NOMEM;
  for (size_t i = 0; names && i < n; i++)
    names[i] = hc_provider_counter(p, i)->name;
  if (st == HC_OK) st = hc_metrics_add_builtin(m, device);
  for (size_t i = 0; st == HC_OK && i < nfiles; i++)
    st = hc_metrics_add_file(m, files[i], device);
  /* an NVIDIA chip's catalogue holds base metrics ("dram__bytes_read"), a definition full names (".sum"):
   * CUPTI checks those when they are planned (profile_cuda.c) */
  if (st == HC_OK)
    st = hc_provider_is_cupti(p) ? hc_metrics_resolve(m, NULL, 0) : hc_metrics_resolve(m, names, n);
  free(names);
  if (st != HC_OK) {
    cli_error("%s", st == HC_ERR_NOMEM ? "out of memory" : hc_metrics_error(m));
    hc_metrics_free(m);
    return CLI_FAIL;
  }
  *out = m;
  return CLI_OK;
}

int cli_metric_groups(const hc_provider *p, const char *const *lists, size_t nlists, const char *const *files,
                      size_t nfiles, char ***groups, size_t *ngroups) {
  *groups = NULL;
  *ngroups = 0;
  if (!nlists) return CLI_OK;
  hc_metrics *m = NULL; /* cli_metrics_open leaves it untouched when it fails */
  int rc = cli_metrics_open(p, files, nfiles, &m);
  for (size_t i = 0; rc == CLI_OK && i < nlists; i++) {
    char **g;
    size_t ng;
    hc_status st = hc_metrics_plan_groups(m, lists[i], &g, &ng);
    if (st != HC_OK) {
      cli_error("%s", st == HC_ERR_NOMEM ? "out of memory" : hc_metrics_error(m));
      rc = st == HC_ERR_INVALID ? CLI_USAGE : CLI_FAIL; /* a malformed list; unknown names are input errors */
      break;
    }
    char **all = realloc(*groups, (*ngroups + ng + 1) * sizeof *all);
    if (!all) {
      hc_metrics_groups_free(g);
      cli_error("out of memory");
      rc = CLI_FAIL;
      break;
    }
    *groups = all;
    for (size_t k = 0; k < ng; k++) { /* a metric named twice is planned once */
      int dup = 0;
      for (size_t j = 0; j < *ngroups && !dup; j++)
        dup = strcmp(all[j], g[k]) == 0;
      if (dup)
        free(g[k]);
      else
        all[(*ngroups)++] = g[k];
    }
    all[*ngroups] = NULL;
    free(g); /* the strings moved */
  }
  hc_metrics_free(m);
  if (rc != CLI_OK) {
    hc_metrics_groups_free(*groups);
    *groups = NULL;
    *ngroups = 0;
  }
  return rc;
}
