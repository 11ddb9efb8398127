/* `hubprof profile` of NVIDIA metrics on a CUDA program (profile_cuda.h): the chip from the GPU (--device
 * cuda, or NVIDIA metric names with no --device) or named (--device GH100), the metrics checked and their
 * passes counted by CUPTI's Profiler Host API, then one run with CUPTI's kernel replay, or one run per
 * configuration (application replay). docs/cuda.md, "Counters". */
/* SPDX-License-Identifier: MIT */
#include "profile_cuda.h"

#include "metrics.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_cuda_metric_names(const char *const *counters, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strstr(counters[i], "__")) return 1;
  return 0;
}

int cli_cuda_chip(const char *cmd, char *chip, size_t len) {
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!drv) {
    cli_error(
        "%s: NVIDIA metrics need a CUDA GPU, and there is no CUDA driver here (libcuda.so.1 not found); "
        "'hubprof plan --device GH100 --counters LIST' plans them without one",
        cmd);
    return CLI_FAIL;
  }
  int (*init)(unsigned) = NULL, (*count)(int *) = NULL;
  *(void **)&init = dlsym(drv, "cuInit");
  *(void **)&count = dlsym(drv, "cuDeviceGetCount");
  int n = 0, rc = init && count ? init(0) : -1;
  if (rc == 0) rc = count(&n);
  if (rc != 0 || n == 0) {
    cli_error("%s: NVIDIA metrics need a CUDA GPU: %s (cuInit/cuDeviceGetCount returned %d)", cmd,
              rc ? "the CUDA driver found no usable device" : "no CUDA device", rc);
    dlclose(drv);
    return CLI_FAIL;
  }
  hc_cupti *c = NULL;
  int (*get)(void *) = NULL;
  if (hc_cupti_open(&c) == HC_OK) *(void **)&get = hc_cupti_sym(c, "cuptiDeviceGetChipName");
  const char *name = hc_cupti_chip(get, 0);
  if (!name) {
    cli_error("%s: the chip of CUDA device 0 is unknown: %s", cmd,
              !c     ? "out of memory"
              : !get ? (hc_cupti_error(c)[0] ? hc_cupti_error(c) : "libcupti has no cuptiDeviceGetChipName")
                     : "cuptiDeviceGetChipName failed");
    hc_cupti_close(c);
    dlclose(drv);
    return CLI_FAIL;
  }
  snprintf(chip, len, "%s", name);
  hc_cupti_close(c);
  dlclose(drv);
  return CLI_OK;
}

/* ---- names ----------------------------------------------------------------------------------------------
 */
typedef struct names {
  const char **v;
  size_t n;
  char *buf;
} names;

/* Every metric of lists (then of the groups' lists, after "NAME="), distinct, blanks trimmed. */
static int collect(const char *cmd, const char *const *lists, size_t nl, const char *const *groups, size_t ng,
                   names *out) {
  size_t len = 1;
  for (size_t i = 0; i < nl; i++)
    len += strlen(lists[i]) + 1;
  for (size_t i = 0; i < ng; i++)
    len += strlen(groups[i]) + 1;
  memset(out, 0, sizeof *out);
  out->buf = malloc(len);
  out->v = calloc(len, sizeof *out->v);
  if (!out->buf || !out->v) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  char *w = out->buf;
  for (size_t i = 0; i < nl + ng; i++) {
    const char *s = i < nl ? lists[i] : groups[i - nl];
    if (i >= nl && strchr(s, '=')) s = strchr(s, '=') + 1;
    for (;;) {
      size_t l = strcspn(s, ",");
      const char *e = s + l;
      while (l && (*s == ' ' || *s == '\t'))
        s++, l--;
      while (l && (s[l - 1] == ' ' || s[l - 1] == '\t'))
        l--;
      if (!l) {
        cli_error("%s: an empty name in '%s'", cmd, i < nl ? lists[i] : groups[i - nl]);
        return CLI_USAGE;
      }
      memcpy(w, s, l);
      w[l] = 0;
      size_t k = 0;
      while (k < out->n && strcmp(out->v[k], w))
        k++;
      if (k == out->n) out->v[out->n++] = w;
      w += l + 1;
      if (!*e) break;
      s = e + 1;
    }
  }
  return CLI_OK;
}

/* ---- plans ------------------------------------------------------------------------------------------------
 */
/* CUPTI's passes of names[0..n) as one configuration on p; CLI_FAIL with the line printed (an unknown metric:
 * CUPTI's closest names). */
static int passes_of(const char *cmd, hc_provider *p, const char *const *v, size_t n, size_t *passes) {
  if (hc_cupti_passes(p, v, n, passes) == HC_OK) return CLI_OK;
  cli_error("%s: %s", cmd, hc_provider_error(p));
  return CLI_FAIL;
}

/* Application replay: the names split, in order, into configurations of one CUPTI pass each (a metric that
 * needs more passes alone gets its own configuration, which CUPTI replays inside its run). pass[i]: the
 * configuration of v[i], 1-based. */
static int split(const char *cmd, hc_provider *p, const names *nm, unsigned *pass, size_t *nconf) {
  const char **cur = calloc(nm->n ? nm->n : 1, sizeof *cur);
  if (!cur) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  size_t ncur = 0, closed = 0, np = 0;
  int rc = CLI_OK;
  for (size_t i = 0; i < nm->n && rc == CLI_OK; i++) {
    if (ncur) { /* into the open configuration, while it stays one pass */
      cur[ncur] = nm->v[i];
      rc = passes_of(cmd, p, cur, ncur + 1, &np);
      if (rc == CLI_OK && np <= 1) {
        ncur++;
        pass[i] = (unsigned)closed + 1;
        continue;
      }
      closed++, ncur = 0;
    }
    cur[0] = nm->v[i]; /* it opens the next one */
    ncur = 1;
    pass[i] = (unsigned)closed + 1;
    if (rc == CLI_OK) rc = passes_of(cmd, p, cur, 1, &np);
    if (rc == CLI_OK && np > 1) closed++, ncur = 0; /* several passes alone: nothing joins it */
  }
  free(cur);
  *nconf = closed + (ncur ? 1 : 0);
  return rc;
}

/* A slot's provider: the chip its selector names, when CUPTI knows it; else the profile's. */
static hc_provider *slot_provider(hc_provider *p, const char *sel, hc_provider **own) {
  *own = NULL;
  if (!sel || !*sel || hc_cupti_device_open(sel, own) != HC_OK) {
    hc_provider_close(*own);
    *own = NULL;
    return p;
  }
  return *own;
}

static int run(run_opts *ro, hc_provider *p, int app, const cli_dev_lists *dl, const char *const *groups,
               size_t ngroups, int argc, char **argv) {
  size_t nslots = dl->nsel + 1, total = 0;
  const char **l = malloc((dl->nun + dl->naddr + 1) * sizeof *l);
  char *plan = NULL, *map = NULL;
  size_t plen = 0, mlen = 0;
  FILE *pf = open_memstream(&plan, &plen), *mf = open_memstream(&map, &mlen);
  hc_plan **plans =
      calloc(nslots, sizeof *plans); /* each device list's, NULL for one that measures nothing */
  const char **sels = calloc(nslots, sizeof *sels);
  int rc = l && pf && mf && plans && sels ? CLI_OK : CLI_FAIL;
  if (rc) cli_error("profile: out of memory");
  for (size_t k = 0; rc == CLI_OK && k < nslots; k++) {
    size_t nl = cli_device_lists_of(dl, k, l);
    const char *sel = k < dl->nsel ? dl->sel[k] : "";
    sels[k] = k < dl->nsel ? sel : NULL;
    if (k == dl->nsel && dl->nsel && !nl && !ngroups) { /* the other devices run unmeasured */
      fprintf(mf, "0-0:");
      continue;
    }
    names nm;
    rc = collect("profile", l, nl, groups, ngroups, &nm);
    hc_provider *own = NULL, *sp = rc == CLI_OK ? slot_provider(p, sel, &own) : p;
    unsigned *pass = rc == CLI_OK ? calloc(nm.n ? nm.n : 1, sizeof *pass) : NULL;
    size_t nconf = 1, np = 0;
    if (rc == CLI_OK && !pass) {
      cli_error("out of memory");
      rc = CLI_FAIL;
    }
    if (rc == CLI_OK) rc = passes_of("profile", sp, nm.v, nm.n, &np); /* every name checked, as one */
    if (rc == CLI_OK && app) rc = split("profile", sp, &nm, pass, &nconf);
    for (size_t i = 0; rc == CLI_OK && !app && i < nm.n; i++)
      pass[i] = 1;
    if (rc == CLI_OK && !ro->quiet) {
      if (dl->nsel)
        fprintf(stderr, "hubprof: plan for %s%s:\n", k < dl->nsel ? "device=" : "",
                k < dl->nsel ? sel : "every other device");
      fprintf(stderr, "hubprof: plan: %zu counter%s in %zu pass%s on %s, %s\n", nm.n, nm.n == 1 ? "" : "s",
              nconf, nconf == 1 ? "" : "es", hc_provider_limits(sp)->device,
              app ? "application replay (one configuration per run)" : "kernel replay (one configuration)");
      if (!app)
        fprintf(stderr, "hubprof:   CUPTI replays each kernel %zu time%s for this configuration\n", np,
                np == 1 ? "" : "s");
    }
    char *slot = NULL; /* this list's own plan, for application replay's runs */
    size_t slen = 0;
    FILE *sf = rc == CLI_OK ? open_memstream(&slot, &slen) : NULL;
    if (rc == CLI_OK && !sf) {
      cli_error("profile: out of memory");
      rc = CLI_FAIL;
    }
    for (size_t c = 1; rc == CLI_OK && c <= nconf; c++) {
      if (!ro->quiet) fprintf(stderr, "hubprof:   pass %zu:", c);
      size_t w = 0;
      fprintf(pf, "%s", total + c > 1 ? ";" : "");
      fprintf(sf, "%s", c > 1 ? ";" : "");
      for (size_t i = 0; i < nm.n; i++)
        if (pass[i] == c) {
          if (!ro->quiet) fprintf(stderr, "%s%s", w ? ", " : " ", nm.v[i]);
          fprintf(pf, "%s%s", w ? "," : "", nm.v[i]);
          fprintf(sf, "%s%s", w++ ? "," : "", nm.v[i]);
        }
      if (!ro->quiet) fputc('\n', stderr);
    }
    if (sf) fclose(sf);
    if (rc == CLI_OK && hc_plan_parse(slot, &plans[k]) != HC_OK) {
      cli_error("profile: out of memory");
      rc = CLI_FAIL;
    }
    free(slot);
    if (rc == CLI_OK) fprintf(mf, "%zu-%zu:%s%s", total + 1, total + nconf, sel, k < dl->nsel ? "\n" : "");
    total += nconf;
    free(pass);
    free(nm.v);
    free(nm.buf);
    hc_provider_close(own);
  }
  if (pf) fclose(pf);
  if (mf) fclose(mf);
  free(l);
  if (rc == CLI_OK) {
    if (dl->nsel)
      setenv("HUBPROF_DEVICE_PLANS", map, 1);
    else
      unsetenv("HUBPROF_DEVICE_PLANS");
    ro->plan = plan;
    ro->provider = "cupti";
    ro->npasses = total;
    rc = app ? app_replay(ro, plans, sels, nslots, argc, argv) : run_app(ro, argc, argv);
  }
  for (size_t k = 0; plans && k < nslots; k++)
    hc_plan_free(plans[k]);
  free(plans);
  free(sels);
  free(plan);
  free(map);
  return rc;
}

int cli_profile_cuda(run_opts *ro, hc_provider *p, const char *replay, const char *const *counters,
                     size_t ncounters, const char *const *groups0, size_t ngroups0, const char *const *mlists,
                     size_t nmlists, const char *const *mfiles, size_t nmfiles, unsigned maxpp, int argc,
                     char **argv) {
  const char *chip = hc_provider_limits(p)->device;
  if (!strcmp(replay, "multiplex")) {
    cli_error(
        "profile: %s: NVIDIA metrics are collected by kernel replay (CUPTI's, the default) or application "
        "replay, not iteration multiplexing",
        chip);
    return CLI_USAGE;
  }
  if (maxpp) {
    cli_error("profile: %s: --max-counters-per-pass does not apply to NVIDIA metrics (CUPTI schedules a "
              "configuration's passes itself)",
              chip);
    return CLI_USAGE;
  }
  char **mgroups = NULL;
  size_t nmgroups = 0;
  int rc = cli_metric_groups(p, mlists, nmlists, mfiles, nmfiles, &mgroups, &nmgroups);
  const char **groups = rc == CLI_OK ? malloc((ngroups0 + nmgroups + 1) * sizeof *groups) : NULL;
  if (rc == CLI_OK && !groups) {
    cli_error("out of memory");
    rc = CLI_FAIL;
  }
  size_t ngroups = 0;
  for (size_t i = 0; groups && i < ngroups0; i++)
    groups[ngroups++] = groups0[i];
  for (size_t i = 0; groups && i < nmgroups; i++)
    groups[ngroups++] = mgroups[i];
  cli_dev_lists dl;
  memset(&dl, 0, sizeof dl);
  if (rc == CLI_OK) rc = cli_device_lists("profile", counters, ncounters, &dl);
  int app = !strcmp(replay, "application");
  if (rc == CLI_OK) rc = run(ro, p, app, &dl, groups, ngroups, argc, argv);
  cli_device_lists_free(&dl);
  free(groups);
  hc_metrics_groups_free(mgroups);
  return rc;
}
