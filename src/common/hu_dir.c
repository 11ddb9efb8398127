/* Directory listing over a search path (hu_dir.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_dir.h"

#include "hu_text.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_of(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int by_base(const void *a, const void *b) {
  return strcmp(base_of(*(char *const *)a), base_of(*(char *const *)b));
}

hu_status hu_dir_find(const char *const *dirs, size_t nd, const char *ext, char ***paths, size_t *n) {
  size_t cnt = 0, cap = 8, el = strlen(ext);
  char **v = calloc(cap + 1, sizeof *v);
  if (!v) return HU_ERR_NOMEM;
  for (size_t i = 0; i < nd; i++) {
    DIR *d = opendir(dirs[i]);
    if (!d) continue;
    struct dirent *e;
    while ((e = readdir(d))) {
      size_t len = strlen(e->d_name);
      if (e->d_name[0] == '.' || len <= el || strcmp(e->d_name + len - el, ext)) continue;
      int dup = 0;
      for (size_t k = 0; k < cnt && !dup; k++)
        dup = strcmp(base_of(v[k]), e->d_name) == 0;
      if (dup) continue; /* an earlier folder on the path wins */
      if (cnt == cap) {
        char **nv = realloc(v, (2 * cap + 1) * sizeof *nv);
        if (!nv) goto nomem;
        v = nv;
        cap *= 2;
      }
      size_t pl = strlen(dirs[i]) + len + 2;
      if (!(v[cnt] = malloc(pl))) goto nomem;
      snprintf(v[cnt++], pl, "%s/%s", dirs[i], e->d_name);
      v[cnt] = NULL;
      continue;
    nomem:
      closedir(d);
      hu_strv_free(v);
      return HU_ERR_NOMEM;
    }
    closedir(d);
  }
  v[cnt] = NULL;
  qsort(v, cnt, sizeof *v, by_base);
  *paths = v;
  if (n) *n = cnt;
  return HU_OK;
}
