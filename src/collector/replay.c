/* Replay bookkeeping shared by every provider's counter modes (replay.h): the plan and one counter session
 * per pass, multiplexing and warm-up keys, the profile's log rows. Runtime-neutral: replaying a dispatch on a
 * runtime is the provider's (prov_opencl_replay.c).
 * Sections: init · sessions · keys · log rows · fork. */
/* SPDX-License-Identifier: MIT */
#include "replay.h"
#include "env.h"
#include "fmt_log.h"
#include "regions.h"
#include "sample.h"
#include "wtrack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

hpc_replay_state hpc_rp = {.warmup = 1};

/* ---- init -------------------------------------------------------------------------------------------- */
int hpc_rp_init_plan(const hpc_env *e, const char **why) {
  static char msg[512];
  hpc_rp.env = e;
  hpc_rp.mux = e->multiplex;
  hpc_rp.timed = e->debug;
  const char *w = getenv("HUBPROF_WINDOW");
  if (w && *w) {
    if (strcmp(w, "kernel") && strcmp(w, "enqueue")) {
      *why = "HUBPROF_WINDOW must be 'kernel' or 'enqueue'";
      return -1;
    }
    hpc_rp.warmup = !strcmp(w, "kernel");
  }
  if (hc_plan_parse(e->plan, &hpc_rp.plan) != HC_OK || !hpc_rp.plan->npasses || !hpc_rp.plan->ncounters) {
    *why = "HUBPROF_PLAN is not a counter plan (passes separated by ';', counters by ',')";
    return -1;
  }
  if (hpc_rp_devplans_init(why) != 0) return -1; /* per-device plans (device_plans.c) */
  /* application replay: one pass per run; with per-device plans the whole plan, each device measuring its
   * pass of the run (device_plans.c) */
  if (e->pass && hpc_rp.plan->npasses != 1 && !hpc_rp.devplans) {
    *why = "HUBPROF_PASS is set: HUBPROF_PLAN must hold that one pass";
    return -1;
  }
  hc_status st = hc_provider_open(e->provider, &hpc_rp.prov);
  if (st != HC_OK) {
    snprintf(msg, sizeof msg, "counter provider '%s': %s", e->provider, hc_status_str(st));
    *why = msg;
    return -1;
  }
  return 0;
}

static hc_status session_open(hpc_pass *pr);

/* Regions' host part: the plan's counters, and in application replay (HUBPROF_REGION_COUNTERS, the whole
 * plan: each run measures every counter on the host, the host runs once per run) those of the other passes
 * too, with counter_info ids after `id`. Unknown or unmeasurable names are left out. */
static void host_counters(uint64_t id) {
  const char *all = getenv("HUBPROF_REGION_COUNTERS");
  hc_plan *pl = NULL;
  if (all && *all && hc_plan_parse(all, &pl) == HC_OK)
    for (size_t i = 0; i < pl->ncounters; i++) {
      long x = hc_provider_find(hpc_rp.prov, pl->names[i]);
      if (x >= 0 && hc_provider_counter(hpc_rp.prov, (size_t)x)->available &&
          hpc_region_host_add((size_t)x, id + 1, 1) == 1)
        id++;
    }
  hc_plan_free(pl);
  hpc_region_host_start(hpc_rp.prov);
}

int hpc_rp_init_passes(const char **why) {
  static char msg[512];
  const hc_plan *plan = hpc_rp.plan;
  hpc_rp.npasses = plan->npasses;
  hpc_rp.passes = calloc(hpc_rp.npasses, sizeof *hpc_rp.passes);
  hpc_rp.vals = calloc(plan->ncounters, sizeof *hpc_rp.vals);
  if (!hpc_rp.passes || !hpc_rp.vals) {
    *why = "out of memory";
    return -1;
  }
  if (plan->ncounters > 256) {
    *why = "HUBPROF_PLAN names more than 256 counters";
    return -1;
  }
  uint64_t id = 0;
  for (size_t p = 0; p < hpc_rp.npasses; p++) {
    hpc_pass *pr = &hpc_rp.passes[p];
    pr->idx = calloc(plan->ncounters, sizeof *pr->idx);
    pr->info_id = calloc(plan->ncounters, sizeof *pr->info_id);
    if (!pr->idx || !pr->info_id) {
      *why = "out of memory";
      return -1;
    }
    for (size_t i = 0; i < plan->ncounters; i++) {
      if (plan->pass[i] != p + 1) continue;
      long x = hc_provider_find(hpc_rp.prov, plan->names[i]);
      if (x < 0 || !hc_provider_counter(hpc_rp.prov, (size_t)x)->available) {
        snprintf(msg, sizeof msg, "counter '%s' %s", plan->names[i],
                 x < 0 ? "is unknown" : hc_provider_counter(hpc_rp.prov, (size_t)x)->reason);
        *why = msg;
        return -1;
      }
      pr->idx[pr->n] = (size_t)x;
      pr->info_id[pr->n++] = ++id;
    }
    if (!pr->n) {
      *why = "HUBPROF_PLAN has an empty pass";
      return -1;
    }
    for (size_t i = 0; i < pr->n; i++) /* regions' host part: every counter of the plan */
      hpc_region_host_add(pr->idx[i], pr->info_id[i], 0);
    /* opened now, before the runtime starts its worker threads (they inherit the counters) */
    hc_status st = session_open(pr);
    if (st != HC_OK) {
      snprintf(msg, sizeof msg, "cannot open the counters of pass %zu: %s", p + 1, hc_status_str(st));
      *why = msg;
      return -1;
    }
  }
  host_counters(id);
  return 0;
}

/* ---- sessions ------------------------------------------------------------------------------------------ */
/* One pass's session: per thread when the launching thread is left out (it cannot be with inherit). */
static hc_status session_open(hpc_pass *pr) {
  return hc_session_open_mode(hpc_rp.prov, pr->idx, pr->n,
                              hpc_rp.warmup ? HC_SESSION_PER_THREAD : HC_SESSION_AUTO, &pr->sess);
}

int hpc_rp_sessions_ready(void) {
  for (size_t p = 0; p < hpc_rp.npasses; p++)
    if (!hpc_rp.passes[p].sess) {
      hc_status st = session_open(&hpc_rp.passes[p]);
      if (st != HC_OK) {
        hpc_say("cannot open the counters of pass %zu (%s); profiling disabled", p + 1, hc_status_str(st));
        atomic_store(&hpc_rp.off, 1);
        return -1;
      }
    }
  return 0;
}

/* ---- keys ---------------------------------------------------------------------------------------------- */
hpc_rp_key *hpc_rp_key_find(hpc_rp_key **tab, int launch, uint32_t kid, uint32_t agent,
                            const uint32_t grid[3], const uint32_t wg[3]) {
  hpc_rp_key want = {.kernel_id = kid, .agent_id = agent};
  if (launch) {
    memcpy(want.grid, grid, sizeof want.grid);
    memcpy(want.wg, wg, sizeof want.wg);
  }
  uint64_t h = (uint64_t)agent << 32 | kid;
  for (int i = 0; i < 3; i++)
    h = h * 1000003u ^ want.grid[i] ^ ((uint64_t)want.wg[i] << 32);
  size_t b = hpc_hash((uintptr_t)h, 12);
  for (hpc_rp_key *m = tab[b]; m; m = m->next)
    if (m->kernel_id == kid && m->agent_id == agent && !memcmp(m->grid, want.grid, sizeof m->grid) &&
        !memcmp(m->wg, want.wg, sizeof m->wg))
      return m;
  hpc_rp_key *m = malloc(sizeof *m);
  if (!m) return NULL;
  *m = want;
  m->next = tab[b];
  tab[b] = m;
  if (tab == hpc_rp.muxtab) hpc_rp.mux_keys++;
  return m;
}

static void keys_clear(void) {
  for (size_t b = 0; b < HPC_RP_BUCKETS; b++)
    for (hpc_rp_key **tab = hpc_rp.muxtab; tab; tab = tab == hpc_rp.muxtab ? hpc_rp.warmtab : NULL)
      while (tab[b]) {
        hpc_rp_key *m = tab[b];
        tab[b] = m->next;
        free(m);
      }
}

/* ---- log rows ------------------------------------------------------------------------------------------ */
void hpc_rp_log_head(hp_store *s) {
  const hpc_env *e = hpc_rp.env;
  hp_write_metadata(s, "replay", e->pass ? "application" : hpc_rp.mux ? "multiplex" : "kernel");
  if (hpc_rp.mux)
    hp_write_metadata(s, "multiplex_policy", hpc_rp.mux == HPC_MUX_LAUNCH ? "launch" : "kernel");
  hp_write_metadata(s, "pass_plan", e->plan);
  if (hpc_rp.devplans) hp_write_metadata(s, "device_plans", hpc_rp.devplans);
  if (e->pass) {
    char b[32];
    snprintf(b, sizeof b, "%ld", e->pass);
    hp_write_metadata(s, "replay_pass", b);
  }
  /* CUDA counters (prov_cuda_range.c) have no counter provider of their own: HUBPROF_PROVIDER's name */
  hp_write_metadata(s, "counter_provider", hpc_rp.prov ? hc_provider_name(hpc_rp.prov) : e->provider);
}

void hpc_rp_log_counters(hp_store *s) {
  uint64_t id = 0;
  for (size_t p = 0; p < hpc_rp.npasses; p++)
    for (size_t i = 0; i < hpc_rp.passes[p].n; i++)
      hpc_counter_info_row(s, hpc_rp.prov, hpc_rp.passes[p].idx[i], ++id);
  hpc_region_host_info(s);
}

void hpc_rp_write_row(const hpc_rp_row *r, const char *meta_key, const char *meta_value) {
  hp_store *s = hpc_store_enter();
  if (s && meta_value) hp_write_metadata(s, meta_key, meta_value);
  if (s) {
    hp_write_dispatch(s, &r->d);
    hpc_code_note(r->d.kernel_id,
                  r->d.agent_id); /* the kernel's code bytes, at its first dispatch (sample.c) */
    hpc_code_capture(s);
    for (size_t i = 0; i < r->nvals; i++) {
      hp_counter_value v = {.size = sizeof v,
                            .dispatch_id = r->d.id,
                            .counter_id = r->ids[i],
                            .pass = r->pass[i],
                            .value = r->vals[i]};
      hp_write_counter_value(s, &v);
    }
    hp_log_flush(s);
  }
  hpc_store_leave(s);
}

/* ---- the HUBPROF_DEBUG summary ------------------------------------------------------------------------ */
void hpc_rp_summary(void) {
  const hpc_rp_stats *st = &hpc_rp.st;
  double ms = 1e-6;
  double other = (double)(st->total_ns - st->pass_ns);
  if (hpc_rp.mux) {
    hpc_say(
        "pid %ld: %llu dispatches measured one pass each (iteration multiplexing, policy %s, %llu keys; "
        "%llu ran unprofiled); per dispatch: drain %.1f us, counters start+stop %.1f us, log rows %.1f us, "
        "cost beyond the run %.1f us",
        (long)getpid(), (unsigned long long)st->dispatches,
        hpc_rp.mux == HPC_MUX_LAUNCH ? "launch" : "kernel", (unsigned long long)hpc_rp.mux_keys,
        (unsigned long long)st->unreplayed,
        st->dispatches ? (double)st->drain_ns / 1e3 / (double)st->dispatches : 0.0,
        st->dispatches ? (double)st->counters_ns / 1e3 / (double)st->dispatches : 0.0,
        st->dispatches ? (double)st->write_ns / 1e3 / (double)st->dispatches : 0.0,
        st->dispatches ? other / 1e3 / (double)st->dispatches : 0.0);
    (void)ms;
    return;
  }
  hpc_say(
      "pid %ld: %llu dispatches replayed in %llu passes (%llu ran once, unprofiled; %llu warm-up runs and "
      "%llu tracking runs, "
      "%.3f ms); replay cost beyond the passes %.1f us per dispatch; saved %llu bytes in %.3f ms (%.2f "
      "GB/s); compared in %.3f ms; "
      "restored %llu bytes in %llu copies, %.3f ms (%.2f GB/s); accessible %llu bytes; write-tracked "
      "%llu dispatches (%llu write faults, %llu armed pages protected again), saved in full %llu",
      (long)getpid(), (unsigned long long)st->dispatches, (unsigned long long)st->passes,
      (unsigned long long)st->unreplayed, (unsigned long long)st->warmups, (unsigned long long)st->track_runs,
      (double)st->warm_ns * ms, st->dispatches ? other / 1e3 / (double)st->dispatches : 0.0,
      (unsigned long long)st->saved, (double)st->save_ns * ms,
      st->save_ns ? (double)st->saved / (double)st->save_ns : 0.0, (double)st->compare_ns * ms,
      (unsigned long long)st->restored, (unsigned long long)st->restores, (double)st->restore_ns * ms,
      st->restore_ns ? (double)st->restored / (double)st->restore_ns : 0.0,
      (unsigned long long)st->accessible, (unsigned long long)st->tracked, (unsigned long long)st->faults,
      (unsigned long long)hpc_wt_reprotected(), (unsigned long long)st->full);
  if (st->dispatches) {
    double nd = (double)st->dispatches, np = (double)st->passes;
    hpc_say(
        "pid %ld: per dispatch: drain %.1f us, save %.1f us, compare %.1f us, restores %.1f us, log rows "
        "%.1f us; per pass %.1f us, of which counters start+stop %.1f us; best of 1 MiB or more: save %.2f "
        "GB/s, restore %.2f GB/s",
        (long)getpid(), (double)st->drain_ns / 1e3 / nd, (double)st->save_ns / 1e3 / nd,
        (double)st->compare_ns / 1e3 / nd, (double)st->restore_ns / 1e3 / nd, (double)st->write_ns / 1e3 / nd,
        (double)st->pass_ns / 1e3 / np, (double)st->counters_ns / 1e3 / np, st->save_best, st->restore_best);
    hpc_say("pid %ld: counted the launching thread alone in %llu of %llu dispatches (a device that runs "
            "kernels on it)",
            (long)getpid(), (unsigned long long)st->caller_only, (unsigned long long)st->dispatches);
    const char *off = hpc_rp.prov ? hc_provider_ring_off(hpc_rp.prov) : NULL;
    hpc_say("pid %ld: %llu pass windows counted from perf ring buffers, without a system call%s%s",
            (long)getpid(), (unsigned long long)(hpc_rp.prov ? hc_provider_ring_windows(hpc_rp.prov) : 0),
            off ? "; rings off: " : "", off ? off : "");
  }
}

/* ---- fork ---------------------------------------------------------------------------------------------- */
void hpc_rp_fork_child(void) {
  for (size_t p = 0; p < hpc_rp.npasses; p++)
    if (hpc_rp.passes[p].sess) { /* the parent's counters: the child opens its own at its first dispatch */
      hc_session_close(hpc_rp.passes[p].sess);
      hpc_rp.passes[p].sess = NULL;
    }
  hpc_rp.mux_keys = 0;
  keys_clear(); /* the child's rotation starts afresh, in its own log */
}
