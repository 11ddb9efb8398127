/* Counter lists addressed per device (`--counters 'device=SEL:a,b'`, SEL a device index, or a glob over its
 * name or model): split from the unaddressed lists, which apply to every device. `profile` and `plan` plan
 * each device's lists on their own (one plan per device list; the collector picks a device's at its first
 * dispatch: HUBPROF_DEVICE_PLANS, src/collector/device_plans.c). */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "../common/hu_pattern.h"
#include "counters.h"

#include <stdlib.h>
#include <string.h>

void cli_device_lists_free(cli_dev_lists *d) {
  for (size_t i = 0; i < d->nsel; i++)
    free(d->sel[i]);
  for (size_t i = 0; i < d->naddr; i++)
    free(d->addr[i]);
  free(d->sel);
  free(d->un);
  free(d->addr);
  free(d->addr_sel);
  memset(d, 0, sizeof *d);
}

int cli_device_lists(const char *cmd, const char *const *lists, size_t n, cli_dev_lists *d) {
  memset(d, 0, sizeof *d);
  d->sel = calloc(n + 1, sizeof *d->sel);
  d->un = calloc(n + 1, sizeof *d->un);
  d->addr = calloc(n + 1, sizeof *d->addr);
  d->addr_sel = calloc(n + 1, sizeof *d->addr_sel);
  if (!d->sel || !d->un || !d->addr || !d->addr_sel) {
    cli_device_lists_free(d);
    cli_error("out of memory");
    return CLI_FAIL;
  }
  for (size_t i = 0; i < n; i++) {
    if (strncmp(lists[i], "device=", 7) != 0) {
      d->un[d->nun++] = lists[i];
      continue;
    }
    const char *sel = lists[i] + 7, *colon = strchr(sel, ':'), *why = NULL;
    if (!colon || colon == sel || !colon[1] || memchr(sel, '\n', (size_t)(colon - sel))) {
      cli_error("%s: --counters '%s': a list for some devices is 'device=SEL:LIST' (SEL a device index, "
                "or a pattern of its name or model)",
                cmd, lists[i]);
      cli_device_lists_free(d);
      return CLI_USAGE;
    }
    char *s = strndup(sel, (size_t)(colon - sel)), *l = strdup(colon + 1);
    if (!s || !l || hu_glob_bounded(s, &why)) {
      if (s && l)
        cli_error("%s: --counters '%.40s...': the device pattern is %s", cmd, lists[i], why);
      else
        cli_error("out of memory");
      free(s);
      free(l);
      cli_device_lists_free(d);
      return s && l ? CLI_USAGE : CLI_FAIL;
    }
    size_t k = 0;
    while (k < d->nsel && strcmp(d->sel[k], s))
      k++;
    if (k == d->nsel)
      d->sel[d->nsel++] = s;
    else
      free(s);
    d->addr[d->naddr] = l;
    d->addr_sel[d->naddr++] = k;
  }
  return CLI_OK;
}

size_t cli_device_lists_of(const cli_dev_lists *d, size_t slot, const char **out) {
  size_t n = 0;
  for (size_t i = 0; i < d->nun; i++)
    out[n++] = d->un[i];
  for (size_t i = 0; i < d->naddr; i++)
    if (d->addr_sel[i] == slot) out[n++] = d->addr[i];
  return n;
}

int cli_plan_lists(const char *cmd, hc_provider *p, const char *const *lists, size_t n,
                   const char *const *groups, size_t ngroups, unsigned max, hc_plan **out) {
  hc_plan_args a = {.counters = lists,
                    .ncounters = n,
                    .groups = groups,
                    .ngroups = ngroups,
                    .max_per_pass = max,
                    .need_available = 1};
  hc_status st = hc_plan_text(p, &a, out);
  if (st == HC_OK) return CLI_OK;
  const char *err = hc_plan_error(*out);
  cli_error("%s: %s", cmd, err[0] ? err : hc_status_str(st));
  hc_plan_free(*out);
  *out = NULL;
  return st == HC_ERR_INVALID ? CLI_USAGE : CLI_FAIL; /* malformed: usage; unknown, unavailable: input */
}
