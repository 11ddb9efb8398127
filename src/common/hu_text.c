/* Text helpers: CSV fields, name lists, edit distance (hu_text.h). */
#include "hu_text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void hu_csv_write_str(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

void hu_strv_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}

hu_status hu_split_names(const char *list, char ***out, size_t *n) {
  size_t cap = 8, cnt = 0;
  *out = NULL;
  *n = 0;
  char **v = calloc(cap + 1, sizeof *v);
  if (!v) return HU_ERR_NOMEM;
  hu_status st = HU_OK;
  for (const char *p = list; *list;) {
    size_t len = strcspn(p, ",");
    const char *a = p, *e = p + len;
    while (a < e && (*a == ' ' || *a == '\t'))
      a++;
    while (e > a && (e[-1] == ' ' || e[-1] == '\t'))
      e--;
    if (a == e) {
      st = HU_ERR_INVALID;
      break;
    }
    if (cnt == cap) {
      char **nv = realloc(v, (2 * cap + 1) * sizeof *nv);
      if (!nv) {
        st = HU_ERR_NOMEM;
        break;
      }
      v = nv;
      cap *= 2;
    }
    if (!(v[cnt] = strndup(a, (size_t)(e - a)))) {
      st = HU_ERR_NOMEM;
      break;
    }
    v[++cnt] = NULL;
    if (!p[len]) break;
    p += len + 1;
  }
  if (st != HU_OK) {
    hu_strv_free(v);
    return st;
  }
  *out = v;
  *n = cnt;
  return HU_OK;
}

size_t hu_edit_distance(const char *a, const char *b) {
  enum { M = HU_EDIT_MAX };
  size_t la = strlen(a), lb = strlen(b);
  if (la >= M) la = M - 1;
  if (lb >= M) lb = M - 1;
  size_t d[M][M];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++) {
    for (size_t j = 1; j <= lb; j++) {
      int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
      size_t cost = ca != cb, v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  }
  return d[la][lb];
}
