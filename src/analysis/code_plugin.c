/* Loading the code plugin (code_plugin.h) once, on the first sample view that needs a code object read. */
/* SPDX-License-Identifier: MIT */
#include "code_plugin.h"

#include "../common/hu_part.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const cp_api *loaded;
static char load_why[PATH_MAX + 160];

static void load(void) {
  char path[PATH_MAX + 32];
  hu_part_path(path, sizeof path, "HUBPROF_CODE_PLUGIN", CP_FILE);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(load_why, sizeof load_why, "no code plugin (%s)", e ? e : path);
    return;
  }
  cp_entry_fn *entry = (cp_entry_fn *)dlsym(h, CP_ENTRY);
  const cp_api *api = entry ? entry() : NULL;
  if (!api || api->version != CP_VERSION || api->code_size != sizeof(cr_code)) {
    snprintf(load_why, sizeof load_why, "the code plugin %s is not of this build of hubprof", path);
    dlclose(h);
    return;
  }
  loaded = api; /* kept loaded: its code may be called until the process ends */
}

const cp_api *cp_load(char *why, size_t whyn) {
  pthread_once(&once, load);
  if (!loaded) snprintf(why, whyn, "%s", load_why);
  return loaded;
}
