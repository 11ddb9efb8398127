/* Per-device plans of profile mode (HUBPROF_DEVICE_PLANS, written by `hubprof profile --counters
 * 'device=SEL:LIST'`): which passes of the plan each device measures, chosen at a device's first dispatch
 * by its index, name or model (glob; the map is read by src/common/hu_devplan.c), and that device's plan
 * kept in the log's metadata. Kernel replay runs a device's passes; application replay (HUBPROF_PASS) its
 * pass of the run; multiplexing rotates over its passes (prov_opencl_replay.c). */
/* SPDX-License-Identifier: MIT */
#include "replay.h"

#include "../common/hu_devplan.h"
#include "env.h"
#include "fmt_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVPLANS 64

int hpc_rp_devplans_init(const char **why) {
  static char msg[160];
  const char *v = getenv("HUBPROF_DEVICE_PLANS"), *bad;
  free(hpc_rp.devplans);
  hpc_rp.devplans = NULL;
  if (!v || !*v) return 0;
  if (hu_devplan_check(v, hpc_rp.plan->npasses, MAX_DEVPLANS, &bad)) {
    snprintf(msg, sizeof msg, "HUBPROF_DEVICE_PLANS: %s", bad);
    *why = msg;
    return -1;
  }
  if (!(hpc_rp.devplans = strdup(v))) {
    *why = "out of memory";
    return -1;
  }
  return 0;
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
  if (!hpc_rp.devplans) return;
  hpc_rp_range *r = agent_id < HPC_RP_AGENTS ? &hpc_rp.agent_range[agent_id] : NULL;
  size_t f = 0, m = 0;
  if (r && r->known) {
    f = r->first, m = r->n;
  } else {
    char name[256] = "", model[256] = "";
    int32_t index = -1;
    hpc_agent_names(agent_id, name, sizeof name, model, sizeof model, &index);
    if (hu_devplan_find(hpc_rp.devplans, name, model, index, &f, &m) < 0) f = m = 0; /* checked at init */
    if (r) *r = (hpc_rp_range){(uint32_t)f, (uint32_t)m, 1};
    /* the device's plan in the metadata: "device_plan.INDEX" = "NAME = PLAN" (its passes only, numbered
     * from 1 within the device; "" when it measures nothing), at its first dispatch */
    char key[64], plan[3000], val[3400];
    snprintf(key, sizeof key, "device_plan.%d", (int)index);
    plan_text(f, m, plan, sizeof plan);
    snprintf(val, sizeof val, "%s = %s", name, plan);
    hp_store *s = hpc_store_enter();
    if (s) {
      hp_write_metadata(s, key, val);
      hp_log_flush(s);
    }
    hpc_store_leave(s);
  }
  long pass = hpc_rp.env ? hpc_rp.env->pass : 0;
  if (pass) { /* application replay: run P measures each device's P-th pass, if it has one */
    *first = f + (size_t)pass - 1;
    *n = (size_t)pass <= m;
    return;
  }
  *first = f;
  *n = m;
}
