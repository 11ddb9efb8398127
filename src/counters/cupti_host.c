/* NVIDIA chips described by CUPTI's Profiler Host API with no GPU: libcupti found and loaded at run time
 * (dlopen, never linked), its supported chips, a chip's metrics as a catalogue provider, and the passes a
 * metric list takes as one configuration (docs/cuda.md). */
/* SPDX-License-Identifier: MIT */
#include "counters_internal.h"
#include "cupti_find.h"

#include "../common/hu_text.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The host API's parameter structs, declared from the documented field order (every one starts with its
 * size and a reserved pointer); the size passed is up to the end of the last field. */
#define PSIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

typedef struct {
  size_t size;
  void *priv;
  size_t nchips;
  const char *const *chips;
} p_chips;
typedef struct {
  size_t size;
  void *priv;
  int profiler_type; /* 0: range profiler */
  const char *chip;
  const uint8_t *availability; /* NULL: no GPU, every counter assumed available */
  void *host;                  /* out */
} p_init;
typedef struct {
  size_t size;
  void *priv;
  void *host;
} p_deinit;
typedef struct {
  size_t size;
  void *priv;
  void *host;
  int type; /* 0 counter, 1 ratio, 2 throughput */
  const char **names;
  size_t n;
} p_base;
typedef struct {
  size_t size;
  void *priv;
  void *host;
  int type;
  const char *name;
  size_t n;
  const char **subs;
} p_sub;
typedef struct {
  size_t size;
  void *priv;
  void *host;
  const char *name;
  const char *description; /* out, the rest too */
  const char *hw_unit;     /* "sm", "dram" */
  const char *dim_unit;    /* "byte", "gpc_cycle", "percent" */
  int type;
} p_prop;
typedef struct {
  size_t size;
  void *priv;
  void *host;
  const char **names;
  size_t n;
} p_add;
typedef struct {
  size_t size;
  void *priv;
  void *host;
  size_t image_size;
} p_isize;
typedef struct {
  size_t size;
  void *priv;
  void *host;
  size_t image_size;
  uint8_t *image;
} p_image;
typedef struct {
  size_t size;
  void *priv;
  size_t image_size;
  uint8_t *image;
  size_t passes;
} p_passes;

typedef int (*cupti_fn)(void *params);
typedef int (*cupti_str_fn)(int result, const char **str);

enum { F_CHIPS, F_INIT, F_DEINIT, F_BASE, F_SUB, F_PROP, F_ADD, F_ISIZE, F_IMAGE, F_PASSES, F_COUNT };
static const char *const fn_names[F_COUNT] = {
    "cuptiProfilerHostGetSupportedChips", "cuptiProfilerHostInitialize",
    "cuptiProfilerHostDeinitialize",      "cuptiProfilerHostGetBaseMetrics",
    "cuptiProfilerHostGetSubMetrics",     "cuptiProfilerHostGetMetricProperties",
    "cuptiProfilerHostConfigAddMetrics",  "cuptiProfilerHostGetConfigImageSize",
    "cuptiProfilerHostGetConfigImage",    "cuptiProfilerHostGetNumOfPasses"};

struct hc_cupti {
  void *lib;
  void *nvperf; /* libnvperf_host.so from libcupti's folder, loaded before it, or NULL */
  cupti_fn fn[F_COUNT];
  cupti_str_fn result_string; /* cuptiGetResultString, NULL when absent */
  char path[PATH_MAX];
  char error[HC_ERROR_MAX];
};

static const char *const type_names[] = {"counter", "ratio", "throughput"};
#define NTYPES 3

const char *hc_cupti_type_name(int type) { return type >= 0 && type < NTYPES ? type_names[type] : "?"; }

/* "CUPTI_ERROR_INVALID_PARAMETER" or "CUPTI error 1" */
static const char *result_text(const hc_cupti *c, int rc, char *buf, size_t len) {
  const char *s = NULL;
  if (c->result_string && c->result_string(rc, &s) == 0 && s) return s;
  snprintf(buf, len, "CUPTI error %d", rc);
  return buf;
}

static int call(hc_cupti *c, int f, void *params, size_t size) {
  *(size_t *)params = size;
  return c->fn[f](params);
}

/* ---- finding and loading libcupti ---- */

/* AddressSanitizer aborts the process when a library is opened with RTLD_DEEPBIND, as libcupti opens
 * libnvperf_host.so: a sanitizer build finds libcupti but does not load it. */
#if defined(__SANITIZE_ADDRESS__)
#define HC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HC_ASAN 1
#endif
#endif

/* Try one file: 1 when loaded, 0 when absent, -1 when it cannot be used (the message in c->error). */
static int try_load(hc_cupti *c, const char *path) {
  if (access(path, R_OK) != 0) return 0;
#ifdef HC_ASAN
  snprintf(c->error, sizeof c->error,
           "%s: not loaded by a sanitizer build (libcupti opens libnvperf_host.so with RTLD_DEEPBIND, which "
           "AddressSanitizer refuses); use the release build",
           path);
  return -1;
#endif
  /* libcupti opens libnvperf_host.so by bare name: load the one beside it first (a pip package's folder,
   * $CUDA_HOME, is on no search path), so that name finds it already loaded */
  char host[PATH_MAX];
  const char *slash = strrchr(path, '/');
  snprintf(host, sizeof host, "%.*slibnvperf_host.so", slash ? (int)(slash - path + 1) : 0, path);
  if (!c->nvperf && access(host, R_OK) == 0) c->nvperf = dlopen(host, RTLD_NOW | RTLD_GLOBAL);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(c->error, sizeof c->error, "%s: %s", path, dlerror());
    return -1;
  }
  for (int i = 0; i < F_COUNT; i++) {
    *(void **)&c->fn[i] = dlsym(h, fn_names[i]);
    if (!c->fn[i]) {
      snprintf(c->error, sizeof c->error,
               "%s has no %s (the Profiler Host API needs CUDA 12.6 or later; set HUBPROF_CUPTI)", path,
               fn_names[i]);
      dlclose(h);
      return -1;
    }
  }
  *(void **)&c->result_string = dlsym(h, "cuptiGetResultString");
  c->lib = h;
  snprintf(c->path, sizeof c->path, "%s", path);
  return 1;
}

/* ---- the search: one home for where libcupti is looked for (cupti_find.h; the collector's CUDA provider
 * uses it too) ---- */

/* The first libcupti.so* in a folder (the unversioned name first, then the newest version). */
static int try_dir(hc_cupti_load_fn load, void *ctx, const char *dir) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/libcupti.so", dir);
  int r = load(ctx, path);
  if (r) return r;
  glob_t g;
  snprintf(path, sizeof path, "%s/libcupti.so.*", dir);
  if (glob(path, 0, NULL, &g) != 0) return 0;
  for (size_t i = g.gl_pathc; i-- > 0 && !r;)
    r = load(ctx, g.gl_pathv[i]);
  globfree(&g);
  return r;
}

/* Folders of the nvidia-cuda-cupti pip package: nvidia/cuda_cupti/lib under site-packages. */
static int try_pip(hc_cupti_load_fn load, void *ctx) {
  const char *home = getenv("HOME"), *venv = getenv("VIRTUAL_ENV");
  char pats[5][PATH_MAX];
  size_t np = 0;
  if (venv) snprintf(pats[np++], PATH_MAX, "%s/lib/python3*/site-packages/nvidia/cuda_cupti/lib", venv);
  if (home)
    snprintf(pats[np++], PATH_MAX, "%s/.local/lib/python3*/site-packages/nvidia/cuda_cupti/lib", home);
  snprintf(pats[np++], PATH_MAX, "/usr/local/lib/python3*/*-packages/nvidia/cuda_cupti/lib");
  snprintf(pats[np++], PATH_MAX, "/usr/lib/python3*/*-packages/nvidia/cuda_cupti/lib");
  snprintf(pats[np++], PATH_MAX, "/opt/*/lib/python3*/site-packages/nvidia/cuda_cupti/lib");
  int r = 0;
  for (size_t k = 0; k < np && !r; k++) {
    glob_t g;
    if (glob(pats[k], GLOB_ONLYDIR, NULL, &g) != 0) continue;
    for (size_t i = 0; i < g.gl_pathc && !r; i++)
      r = try_dir(load, ctx, g.gl_pathv[i]);
    globfree(&g);
  }
  return r;
}

int hc_cupti_search(hc_cupti_load_fn load, void *ctx, char *err, size_t len) {
  const char *env = getenv("HUBPROF_CUPTI");
  if (env && *env) { /* the user's choice is the only one tried */
    int r = load(ctx, env);
    if (r == 0) snprintf(err, len, "libcupti not found: HUBPROF_CUPTI=%s: no such file", env);
    return r;
  }
  const char *cuda = getenv("CUDA_HOME");
  char dirs[4][PATH_MAX];
  size_t nd = 0;
  snprintf(dirs[nd++], PATH_MAX, "/usr/local/cuda/lib64");
  snprintf(dirs[nd++], PATH_MAX, "/usr/local/cuda/extras/CUPTI/lib64");
  if (cuda && *cuda) {
    snprintf(dirs[nd++], PATH_MAX, "%s/lib64", cuda);
    snprintf(dirs[nd++], PATH_MAX, "%s/extras/CUPTI/lib64", cuda);
  }
  int r = 0;
  for (size_t i = 0; i < nd && !r; i++)
    r = try_dir(load, ctx, dirs[i]);
  if (!r) r = try_pip(load, ctx);
  if (r == 0)
    snprintf(err, len,
             "libcupti not found (looked in $HUBPROF_CUPTI (unset), /usr/local/cuda/lib64, "
             "/usr/local/cuda/extras/CUPTI/lib64, $CUDA_HOME%s%.300s%s, and the nvidia-cuda-cupti pip "
             "package's site-packages/nvidia/cuda_cupti/lib); set HUBPROF_CUPTI=/path/to/libcupti.so",
             cuda && *cuda ? "=" : " (unset)", cuda ? cuda : "",
             cuda && *cuda ? "/{lib64,extras/CUPTI/lib64}" : "");
  return r;
}

static int load_host(void *ctx, const char *path) { return try_load(ctx, path); }

hc_status hc_cupti_open(hc_cupti **out) {
  if (!out) return HC_ERR_INVALID;
  hc_cupti *c = calloc(1, sizeof *c);
  *out = c;
  if (!c) return HC_ERR_NOMEM;
  return hc_cupti_search(load_host, c, c->error, sizeof c->error) == 1 ? HC_OK : HC_ERR_UNAVAILABLE;
}

void hc_cupti_close(hc_cupti *c) {
  if (!c) return;
  if (c->lib) dlclose(c->lib);
  if (c->nvperf) dlclose(c->nvperf);
  free(c);
}

const char *hc_cupti_error(const hc_cupti *c) { return c ? c->error : "out of memory"; }
const char *hc_cupti_path(const hc_cupti *c) { return c ? c->path : ""; }

hc_status hc_cupti_chips(hc_cupti *c, const char *const **names, size_t *n) {
  p_chips a = {0};
  int rc = call(c, F_CHIPS, &a, PSIZE(p_chips, chips));
  if (rc) {
    char b[32];
    snprintf(c->error, sizeof c->error, "%s: %s", fn_names[F_CHIPS], result_text(c, rc, b, sizeof b));
    return HC_ERR_IO;
  }
  *names = a.chips;
  *n = a.nchips;
  return HC_OK;
}

/* The chip's name as CUPTI spells it (case-insensitive match), or NULL. */
static const char *find_chip(hc_cupti *c, const char *chip) {
  const char *const *names;
  size_t n;
  if (hc_cupti_chips(c, &names, &n) != HC_OK) return NULL;
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(names[i], chip) == 0) return names[i];
  return NULL;
}

/* A host object for chip, or NULL with the message in *err. */
static void *host_open(hc_cupti *c, const char *chip, char *err, size_t len) {
  p_init a = {.profiler_type = 0, .chip = chip};
  int rc = call(c, F_INIT, &a, PSIZE(p_init, host));
  if (rc || !a.host) {
    char b[32];
    snprintf(err, len, "%s(%s): %s", fn_names[F_INIT], chip, result_text(c, rc, b, sizeof b));
    return NULL;
  }
  return a.host;
}

static void host_close(hc_cupti *c, void *host) {
  p_deinit a = {.host = host};
  call(c, F_DEINIT, &a, PSIZE(p_deinit, host));
}

/* ---- a chip's metrics as a catalogue provider ---- */

int hc_provider_is_cupti(const hc_provider *p) { return p && p->kind == HC_KIND_CUPTI; }

static void cupti_release(hc_provider *p) { hc_cupti_close(p->cupti); }

hc_status hc_cupti_device_open(const char *chip, hc_provider **out) {
  hc_provider *p = hc_provider_alloc(HC_KIND_CUPTI, "cupti");
  *out = p;
  if (!p) return HC_ERR_NOMEM;
  p->release = cupti_release;
  hc_status st = hc_cupti_open(&p->cupti);
  if (st != HC_OK) {
    snprintf(p->error, sizeof p->error, "%s", hc_cupti_error(p->cupti));
    return st;
  }
  hc_cupti *c = p->cupti;
  const char *name = find_chip(c, chip);
  if (!name) {
    const char *const *names;
    size_t n = 0;
    int w = snprintf(p->error, sizeof p->error, "'%.200s' is not one of CUPTI's chips", chip);
    if (hc_cupti_chips(c, &names, &n) != HC_OK) n = 0;
    for (size_t i = 0; i < n && w > 0 && (size_t)w < sizeof p->error; i++)
      w += snprintf(p->error + w, sizeof p->error - (size_t)w, "%s%s", i ? ", " : " (", names[i]);
    if (n && w > 0 && (size_t)w < sizeof p->error) snprintf(p->error + w, sizeof p->error - (size_t)w, ")");
    return HC_ERR_UNKNOWN;
  }
  void *host = host_open(c, name, p->error, sizeof p->error);
  if (!host) return HC_ERR_IO;
  size_t cap = 0;
  st = HC_OK;
  for (int t = 0; t < NTYPES && st == HC_OK; t++) {
    p_base a = {.host = host, .type = t};
    int rc = call(c, F_BASE, &a, PSIZE(p_base, n));
    if (rc) {
      char b[32];
      snprintf(p->error, sizeof p->error, "%s(%s, %s): %s", fn_names[F_BASE], name, type_names[t],
               result_text(c, rc, b, sizeof b));
      st = HC_ERR_IO;
      break;
    }
    if (p->n + a.n > cap) {
      cap = p->n + a.n;
      hc_counter *nc = realloc(p->counters, cap * sizeof *nc);
      if (!nc) {
        st = HC_ERR_NOMEM;
        break;
      }
      p->counters = nc;
    }
    for (size_t i = 0; i < a.n; i++) {
      hc_counter *k = &p->counters[p->n];
      memset(k, 0, sizeof *k);
      k->name = hc_provider_own(p, a.names[i]);
      if (!k->name) {
        st = HC_ERR_NOMEM;
        break;
      }
      /* its hardware unit, unit and description ("sm", "gpc_cycle", "# of cycles elapsed on SM") */
      p_prop pr = {.host = host, .name = a.names[i]};
      char desc[HC_ERROR_MAX];
      int ok = call(c, F_PROP, &pr, PSIZE(p_prop, type)) == 0;
      snprintf(desc, sizeof desc, "%s: %s", type_names[t], ok && pr.description ? pr.description : "");
      k->block = hc_provider_own(p, ok && pr.hw_unit ? pr.hw_unit : "");
      k->unit = hc_provider_own(p, ok && pr.dim_unit ? pr.dim_unit : "");
      k->description = hc_provider_own(p, desc);
      if (!k->block || !k->unit || !k->description) {
        st = HC_ERR_NOMEM;
        break;
      }
      k->reason = "a CUPTI host description: measured on a CUDA GPU by hubprof profile --device cuda";
      p->n++;
    }
  }
  host_close(c, host);
  if (st == HC_ERR_NOMEM) snprintf(p->error, sizeof p->error, "out of memory");
  if (st != HC_OK) return st;
  p->has_limits = 1;
  snprintf(p->limits.device, sizeof p->limits.device, "%s", name);
  snprintf(
      p->description, sizeof p->description,
      "NVIDIA %.40s from CUPTI's Profiler Host API, no GPU needed; names take a rollup (.sum .avg .min .max)",
      name);
  return HC_OK;
}

/* ---- passes of a metric list ---- */

/* Where a user's metric name's base metric ends: after the word that follows "__" (a rollup such as
 * ".sum" or ".avg.pct_of_peak_sustained_elapsed" comes after it). */
static size_t base_len(const char *name) {
  const char *u = strstr(name, "__");
  const char *dot = strchr(u ? u : name, '.');
  return dot ? (size_t)(dot - name) : strlen(name);
}

/* "unknown metric 'x' on GH100 (did you mean 'y'?)" on the provider. */
static void unknown_metric(hc_provider *p, void *host, const char *name) {
  hc_cupti *c = p->cupti;
  size_t bl = base_len(name);
  char base[256];
  snprintf(base, sizeof base, "%.*s", (int)bl, name);
  const char *suffix = name + bl;
  int w = snprintf(p->error, sizeof p->error, "unknown metric '%s' on %s", name, p->limits.device);
  long i = hc_provider_find(p, base);
  if (i < 0) { /* a base metric CUPTI does not know: the closest names, with the user's rollup */
    const char *sug[3];
    size_t ns = hc_provider_suggest(p, base, sug, 3);
    for (size_t k = 0; k < ns && w > 0 && (size_t)w < sizeof p->error; k++)
      w += snprintf(p->error + w, sizeof p->error - (size_t)w, "%s'%s%s'", k ? ", " : " (did you mean ",
                    sug[k], suffix[0] ? suffix : ".sum");
    if (ns && w > 0 && (size_t)w < sizeof p->error) snprintf(p->error + w, sizeof p->error - (size_t)w, "?)");
    return;
  }
  /* the base is known: the rollup is wrong or missing */
  int type = 0; /* the description starts with the type's name */
  for (int t = 0; t < NTYPES; t++)
    if (strncmp(p->counters[i].description, type_names[t], strlen(type_names[t])) == 0) type = t;
  p_sub a = {.host = host, .type = type, .name = p->counters[i].name};
  if (call(c, F_SUB, &a, PSIZE(p_sub, subs)) || !a.n) return;
  size_t best = 0, bd = (size_t)-1;
  for (size_t k = 0; k < a.n; k++) {
    size_t d = hu_edit_distance(suffix, a.subs[k]);
    if (d < bd) bd = d, best = k;
  }
  if (w > 0 && (size_t)w < sizeof p->error)
    snprintf(p->error + w, sizeof p->error - (size_t)w, " (%s: did you mean '%s%s'?)",
             suffix[0] ? "not one of its rollups" : "a base metric needs a rollup", base, a.subs[best]);
}

hc_status hc_cupti_passes(hc_provider *p, const char *const *names, size_t n, size_t *passes) {
  if (!hc_provider_is_cupti(p) || !names || !n || !passes) return HC_ERR_INVALID;
  hc_cupti *c = p->cupti;
  p->error[0] = 0;
  void *host = host_open(c, p->limits.device, p->error, sizeof p->error);
  if (!host) return HC_ERR_IO;
  hc_status st = HC_OK;
  char b[32];
  p_add add = {.host = host, .names = (const char **)names, .n = n};
  int rc = call(c, F_ADD, &add, PSIZE(p_add, n));
  if (rc) { /* which one: add them one by one to a fresh configuration */
    host_close(c, host);
    host = host_open(c, p->limits.device, p->error, sizeof p->error);
    if (!host) return HC_ERR_IO;
    for (size_t i = 0; i < n; i++) {
      p_add one = {.host = host, .names = (const char **)&names[i], .n = 1};
      if (call(c, F_ADD, &one, PSIZE(p_add, n))) {
        unknown_metric(p, host, names[i]);
        host_close(c, host);
        return HC_ERR_UNKNOWN;
      }
    }
    snprintf(p->error, sizeof p->error, "%s: %s (each metric alone is accepted)", fn_names[F_ADD],
             result_text(c, rc, b, sizeof b));
    host_close(c, host);
    return HC_ERR_IO;
  }
  p_isize is = {.host = host};
  uint8_t *image = NULL;
  if ((rc = call(c, F_ISIZE, &is, PSIZE(p_isize, image_size)))) {
    snprintf(p->error, sizeof p->error, "%s: %s", fn_names[F_ISIZE], result_text(c, rc, b, sizeof b));
    st = HC_ERR_IO;
  } else if (!(image = malloc(is.image_size ? is.image_size : 1))) {
    snprintf(p->error, sizeof p->error, "out of memory");
    st = HC_ERR_NOMEM;
  } else {
    p_image im = {.host = host, .image_size = is.image_size, .image = image};
    p_passes np = {.image_size = is.image_size, .image = image};
    if ((rc = call(c, F_IMAGE, &im, PSIZE(p_image, image)))) {
      snprintf(p->error, sizeof p->error, "%s: %s", fn_names[F_IMAGE], result_text(c, rc, b, sizeof b));
      st = HC_ERR_IO;
    } else if ((rc = call(c, F_PASSES, &np, PSIZE(p_passes, passes)))) {
      snprintf(p->error, sizeof p->error, "%s: %s", fn_names[F_PASSES], result_text(c, rc, b, sizeof b));
      st = HC_ERR_IO;
    } else {
      *passes = np.passes;
    }
  }
  free(image);
  host_close(c, host);
  return st;
}

hc_status hc_cupti_metric_count(hc_cupti *c, const char *chip, size_t *n) {
  void *host = host_open(c, chip, c->error, sizeof c->error);
  if (!host) return HC_ERR_IO;
  hc_status st = HC_OK;
  *n = 0;
  for (int t = 0; t < NTYPES && st == HC_OK; t++) {
    p_base a = {.host = host, .type = t};
    int rc = call(c, F_BASE, &a, PSIZE(p_base, n));
    if (rc) {
      char b[32];
      snprintf(c->error, sizeof c->error, "%s(%.100s): %s", fn_names[F_BASE], chip,
               result_text(c, rc, b, sizeof b));
      st = HC_ERR_IO;
    }
    *n += a.n;
  }
  host_close(c, host);
  return st;
}

long hc_cupti_base(const hc_provider *p, const char *name) {
  if (!hc_provider_is_cupti(p) || !name) return -1;
  char base[256];
  snprintf(base, sizeof base, "%.*s", (int)base_len(name), name);
  return hc_provider_find(p, base);
}

void *hc_cupti_sym(hc_cupti *c, const char *name) { return c && c->lib && name ? dlsym(c->lib, name) : NULL; }

/* The Profiler Host side of PM sampling (the collector's sample_cupti_pm.c): a host object of profiler type
 * PM sampling (1) for the chip and its counter availability, with the metrics' configuration image. */
hc_status hc_cupti_pm_config(hc_cupti *c, const char *chip, const uint8_t *avail, const char *const *names,
                             size_t n, void **host, uint8_t **image, size_t *size, char *err, size_t len) {
  return hc_cupti_config(c, 1, chip, avail, names, n, host, image, size, NULL, err, len);
}

hc_status hc_cupti_config(hc_cupti *c, int type, const char *chip, const uint8_t *avail,
                          const char *const *names, size_t n, void **host, uint8_t **image, size_t *size,
                          size_t *passes, char *err, size_t len) {
  char b[32];
  *host = NULL, *image = NULL, *size = 0;
  p_init a = {.profiler_type = type, .chip = chip, .availability = avail};
  int rc = call(c, F_INIT, &a, PSIZE(p_init, host));
  if (rc || !a.host)
    return snprintf(err, len, "%s(%s): %s", fn_names[F_INIT], chip ? chip : "?",
                    result_text(c, rc, b, sizeof b)),
           HC_ERR_IO;
  *host = a.host;
  p_add add = {.host = a.host, .names = (const char **)names, .n = n};
  p_isize is = {.host = a.host};
  int f = F_ADD;
  if (!(rc = call(c, F_ADD, &add, PSIZE(p_add, n))))
    rc = call(c, f = F_ISIZE, &is, PSIZE(p_isize, image_size));
  if (rc) return snprintf(err, len, "%s: %s", fn_names[f], result_text(c, rc, b, sizeof b)), HC_ERR_IO;
  p_image im = {
      .host = a.host, .image_size = is.image_size, .image = malloc(is.image_size ? is.image_size : 1)};
  if (!im.image) return snprintf(err, len, "out of memory"), HC_ERR_NOMEM;
  *image = im.image, *size = is.image_size;
  if ((rc = call(c, F_IMAGE, &im, PSIZE(p_image, image))))
    return snprintf(err, len, "%s: %s", fn_names[F_IMAGE], result_text(c, rc, b, sizeof b)), HC_ERR_IO;
  p_passes np = {.image_size = is.image_size, .image = im.image};
  if (passes && (rc = call(c, F_PASSES, &np, PSIZE(p_passes, passes))))
    return snprintf(err, len, "%s: %s", fn_names[F_PASSES], result_text(c, rc, b, sizeof b)), HC_ERR_IO;
  if (passes) *passes = np.passes;
  return HC_OK;
}

void hc_cupti_host_close(hc_cupti *c, void *host) {
  if (c && host) host_close(c, host);
}
