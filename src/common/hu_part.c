/* Finding a separately built part of hubprof beside the program or library holding the caller (hu_part.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_part.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hu_part_path(char *out, size_t n, const char *env, const char *file) {
  const char *e = env ? getenv(env) : NULL;
  if (e && *e) {
    snprintf(out, n, "%s", e);
    return 0;
  }
  /* the shared library holding this code, as it was loaded; the executable (linked statically, or a name
   * without a folder) by its real path */
  Dl_info di;
  struct link_map *lm = NULL;
  char self[PATH_MAX] = "";
  ssize_t l;
  if (dladdr1((void *)hu_part_path, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name[0] &&
      di.dli_fname && strchr(di.dli_fname, '/'))
    snprintf(self, sizeof self, "%s", di.dli_fname);
  else if ((l = readlink("/proc/self/exe", self, sizeof self - 1)) > 0)
    self[l] = 0;
  char *slash = strrchr(self, '/');
  int dl = slash ? (int)(slash - self) : 1;
  const char *dir = slash ? self : ".";
  static const char *const rel[] = {"/", "/hubprof/", "/../lib/hubprof/", "/../lib/", "/../"};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
    snprintf(out, n, "%.*s%s%s", dl, dir, rel[i], file);
    if (access(out, R_OK) == 0) return 0;
  }
  snprintf(out, n, "%.*s/%s", dl, dir, file); /* not there: the caller's message names it */
  return -1;
}
