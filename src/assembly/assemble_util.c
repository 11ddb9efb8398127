/* What the assembly's files share (assemble_internal.h) and call, calling none of them: its warning and
 * error lines, and the kernel names and program identities of an input. */
/* SPDX-License-Identifier: MIT */
#include "assemble_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void asm_warnf(hp_assembly *a, const char *fmt, ...) {
  if (!a->o.warn) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  a->o.warn(a->o.warn_ctx, line);
}

hp_status asm_fail(hp_assembly *a, hp_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->error, sizeof a->error, fmt, ap);
  va_end(ap);
  return st;
}

/* Kernel names by id of store s, and in names[n + id] its program's identity (a kernel is its name and its
 * program: two programs' kernels of one name are two keys); ids above a million are ignored: no such log
 * exists. */
int asm_knames_load(hp_store *s, char ***names, size_t *n) {
  hp_cursor *c = NULL;
  hp_kernel_symbol k = {.size = sizeof k};
  if (hp_cursor_open(s, HP_TABLE_KERNEL_SYMBOL, &c) != HP_OK) return -1;
  int rc = 0;
  while (rc == 0 && hp_cursor_next(c, &k) == HP_OK) {
    if (k.id > 1000000) continue;
    if (k.id >= *n) { /* names then identities: both halves grow */
      size_t m = k.id + 16;
      char **v = realloc(*names, 2 * m * sizeof *v);
      if (!v) {
        rc = -1;
        break;
      }
      memmove(v + m, v + *n, *n * sizeof *v);
      memset(v + *n, 0, (m - *n) * sizeof *v);
      memset(v + m + *n, 0, (m - *n) * sizeof *v);
      *names = v;
      *n = m;
    }
    free((*names)[k.id]);
    free((*names)[*n + k.id]);
    (*names)[*n + k.id] = NULL;
    if (!((*names)[k.id] = strdup(k.name)) ||
        (k.program_hash && *k.program_hash && !((*names)[*n + k.id] = strdup(k.program_hash))))
      rc = -1;
  }
  hp_cursor_close(c);
  return rc;
}

const char *asm_kname(char *const *names, size_t n, uint64_t id) {
  return id < n && names[id] ? names[id] : "";
}
const char *asm_kprog(char *const *names, size_t n, uint64_t id) {
  return id < n && names[n + id] ? names[n + id] : "";
}
