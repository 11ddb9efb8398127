/* Per-device plans of profile mode (HUBPROF_DEVICE_PLANS, written by `hubprof profile --counters
 * 'device=SEL:LIST'`): which passes of the plan each device measures, chosen at a device's first dispatch
 * by its index, name or model (glob), and that device's plan kept in the log's metadata. */
/* SPDX-License-Identifier: MIT */
#include "replay.h"

#include "../common/hu_pattern.h"
#include "fmt_log.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVPLANS 64

typedef struct hpc_devplan {
  char sel[256];   /* a device index, or a glob over its name and model; "" for every other device */
  size_t first, n; /* its passes, 0-based */
} hpc_devplan;

static hpc_devplan g_dp[MAX_DEVPLANS];

/* HUBPROF_DEVICE_PLANS: one entry per line, "FIRST-LAST:SEL" (1-based passes of HUBPROF_PLAN; "0-0" for
 * none), the last one with an empty SEL. */
int hpc_rp_devplans_init(const char **why) {
  const char *v = getenv("HUBPROF_DEVICE_PLANS");
  hpc_rp.devplans = NULL;
  hpc_rp.ndevplans = 0;
  if (!v || !*v) return 0;
  size_t k = 0;
  for (const char *p = v; *p; k++) {
    const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
    unsigned long a, b;
    int used = 0;
    if (k == MAX_DEVPLANS || sscanf(p, "%lu-%lu:%n", &a, &b, &used) != 2 || !used || p + used > end ||
        (size_t)(end - p - used) >= sizeof g_dp[k].sel || a > b || b > hpc_rp.plan->npasses || (!a && b)) {
      *why = "HUBPROF_DEVICE_PLANS is not a list of FIRST-LAST:DEVICE lines over the passes of HUBPROF_PLAN";
      return -1;
    }
    memcpy(g_dp[k].sel, p + used, (size_t)(end - p - used));
    g_dp[k].sel[end - p - used] = 0;
    const char *big;
    if (hu_glob_bounded(g_dp[k].sel, &big)) {
      *why = "HUBPROF_DEVICE_PLANS: a device pattern is longer than the limit of a pattern";
      return -1;
    }
    g_dp[k].first = a ? a - 1 : 0;
    g_dp[k].n = a ? b - a + 1 : 0;
    p = nl ? nl + 1 : end;
  }
  if (!k || g_dp[k - 1].sel[0]) {
    *why = "HUBPROF_DEVICE_PLANS must end with the entry of every other device (no selector)";
    return -1;
  }
  hpc_rp.devplans = g_dp;
  hpc_rp.ndevplans = k;
  return 0;
}

static int matches(const char *sel, const char *name, const char *model, int32_t index) {
  if (!sel[0]) return 1;
  char *end;
  long i = strtol(sel, &end, 10);
  if (!*end) return i == index;
  return fnmatch(sel, name, 0) == 0 || fnmatch(sel, model, 0) == 0;
}

/* The passes [first, first + n) as a plan ("a,b;c"), into buf. */
static void plan_text(size_t first, size_t n, char *buf, size_t len) {
  size_t w = 0;
  buf[0] = 0;
  for (size_t p = first; p < first + n && w < len; p++)
    for (size_t i = 0, k = 0; i < hpc_rp.plan->ncounters && w < len; i++)
      if (hpc_rp.plan->pass[i] == p + 1)
        w += (size_t)snprintf(buf + w, len - w, "%s%s",
                              k++         ? ","
                              : p > first ? ";"
                                          : "",
                              hpc_rp.plan->names[i]);
}

void hpc_rp_device_passes(uint32_t agent_id, size_t *first, size_t *n) {
  *first = 0;
  *n = hpc_rp.npasses;
  if (!hpc_rp.ndevplans) return;
  size_t e = agent_id < sizeof hpc_rp.agent_plan ? hpc_rp.agent_plan[agent_id] : 0;
  if (!e) {
    char name[256] = "", model[256] = "";
    int32_t index = -1;
    hpc_agent_names(agent_id, name, sizeof name, model, sizeof model, &index);
    while (e < hpc_rp.ndevplans && !matches(hpc_rp.devplans[e].sel, name, model, index))
      e++;
    if (e == hpc_rp.ndevplans) e--; /* the last entry matches every device */
    e++;
    if (agent_id < sizeof hpc_rp.agent_plan) hpc_rp.agent_plan[agent_id] = (uint8_t)e;
    /* the device's plan in the metadata: "device_plan.INDEX" = "NAME = PLAN" (its passes only, numbered
     * from 1 within the device; "" when it measures nothing) */
    const hpc_devplan *d = &hpc_rp.devplans[e - 1];
    char key[64], plan[3000], val[3400];
    snprintf(key, sizeof key, "device_plan.%d", (int)index);
    plan_text(d->first, d->n, plan, sizeof plan);
    snprintf(val, sizeof val, "%s = %s", name, plan);
    hp_store *s = hpc_store_enter();
    if (s) {
      hp_write_metadata(s, key, val);
      hp_log_flush(s);
    }
    hpc_store_leave(s);
  }
  *first = hpc_rp.devplans[e - 1].first;
  *n = hpc_rp.devplans[e - 1].n;
}
