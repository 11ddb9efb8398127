/* Folders: listings and removal (hu_dir.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_dir.h"

#include "hu_text.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
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

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

hu_status hu_dir_names(const char *dir, const char *prefix, const char *suffix, int full, char ***names,
                       size_t *n) {
  size_t cnt = 0, cap = 8, pl = prefix ? strlen(prefix) : 0, sl = suffix ? strlen(suffix) : 0;
  char **v = calloc(cap + 1, sizeof *v);
  if (!v) return HU_ERR_NOMEM;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    const char *nm = e->d_name;
    size_t len = strlen(nm);
    if (!strcmp(nm, ".") || !strcmp(nm, "..") || len < pl + sl || strncmp(nm, prefix ? prefix : "", pl) ||
        strcmp(nm + len - sl, suffix ? suffix : ""))
      continue;
    if (cnt == cap) {
      char **nv = realloc(v, (2 * cap + 1) * sizeof *nv);
      if (!nv) goto nomem;
      v = nv;
      cap *= 2;
    }
    size_t l = (full ? strlen(dir) + 1 : 0) + len + 1;
    if (!(v[cnt] = malloc(l))) goto nomem;
    snprintf(v[cnt++], l, "%s%s%s", full ? dir : "", full ? "/" : "", nm);
    v[cnt] = NULL;
  }
  if (d) {
    int e2 = errno;
    closedir(d);
    errno = e2;
  }
  qsort(v, cnt, sizeof *v, by_name);
  *names = v;
  if (n) *n = cnt;
  return HU_OK;
nomem:
  closedir(d);
  hu_strv_free(v);
  return HU_ERR_NOMEM;
}

void hu_dir_remove(const char *path, int depth) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return;
  if (!S_ISDIR(sb.st_mode)) { /* a file, or a link in a folder's place: never followed */
    unlink(path);
    return;
  }
  char **v = NULL;
  size_t n = 0;
  if (depth >= 0 && hu_dir_names(path, NULL, NULL, 1, &v, &n) == HU_OK) {
    for (size_t i = 0; i < n; i++) {
      struct stat eb;
      if (lstat(v[i], &eb) == 0 && S_ISDIR(eb.st_mode)) {
        if (depth > 0) hu_dir_remove(v[i], depth - 1);
      } else {
        unlink(v[i]);
      }
    }
    hu_strv_free(v);
  }
  rmdir(path);
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
