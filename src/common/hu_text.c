/* Text helpers: CSV fields, name lists, edit distance, UTF-8 escaping (hu_text.h). */
/* SPDX-License-Identifier: MIT */
#include "hu_text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* s in double quotes (quotes doubled), after `lead` inside them. */
static void csv_quoted(FILE *out, const char *lead, const char *s) {
  fputc('"', out);
  fputs(lead, out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

void hu_csv_write_str(FILE *out, const char *s) {
  if (strpbrk(s, ",\"\n\r"))
    csv_quoted(out, "", s);
  else
    fputs(s, out);
}

void hu_csv_write_text(FILE *out, const char *s) {
  if (*s && strchr("=+-@\t\r", *s))
    csv_quoted(out, "'", s);
  else
    hu_csv_write_str(out, s);
}

void hu_strv_free(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}

long hu_split_inplace(char *s, char **out, size_t max) {
  long n = 0;
  for (char *c = s;;) {
    size_t w = strcspn(c, ",");
    char end = c[w], *b = c, *e = c + w;
    while (b < e && (*b == ' ' || *b == '\t'))
      b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
      e--;
    *e = 0;
    if (b == e || (size_t)n == max) return -1;
    out[n++] = b;
    if (!end) break;
    c += w + 1;
  }
  return n;
}

hu_status hu_split_names(const char *list, char ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  size_t max = 1;
  for (const char *c = list; *c; c++)
    max += *c == ',';
  char *copy = strdup(list), **v = calloc(max + 1, sizeof *v), **at = calloc(max, sizeof *at);
  hu_status st = copy && v && at ? HU_OK : HU_ERR_NOMEM;
  long got = 0;
  if (st == HU_OK && *list && (got = hu_split_inplace(copy, at, max)) < 0) st = HU_ERR_INVALID;
  for (long i = 0; st == HU_OK && i < got; i++)
    if (!(v[i] = strdup(at[i]))) st = HU_ERR_NOMEM;
  free(copy);
  free(at);
  if (st != HU_OK) {
    hu_strv_free(v);
    return st;
  }
  *out = v;
  *n = (size_t)got;
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

/* ---- UTF-8: bytes that are not part of a valid sequence written as the four characters \xNN ---- */
size_t hu_utf8_seq(const unsigned char *p) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0; /* no overlong forms */
    if (c == 0xED) hi = 0x9F; /* no surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
  } else
    return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return n;
}

size_t hu_utf8_escaped_size(const char *s, int *bad) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = 1;
  *bad = 0;
  while (*p) {
    size_t k = hu_utf8_seq(p);
    if (!k) {
      *bad = 1;
      n += 4;
      p++;
    } else {
      n += k;
      p += k;
    }
  }
  return n;
}

void hu_utf8_escape(const char *s, char *out) {
  static const char hex[] = "0123456789ABCDEF";
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t k = hu_utf8_seq(p);
    if (!k) {
      *out++ = '\\';
      *out++ = 'x';
      *out++ = hex[*p >> 4];
      *out++ = hex[*p & 15];
      p++;
    } else {
      memcpy(out, p, k);
      out += k;
      p += k;
    }
  }
  *out = 0;
}

/* Bytes of the control character at p (1, or 2 for a C1 code point), 0 when it starts none. */
static size_t term_control(const unsigned char *p) {
  if (*p < 0x20 || *p == 0x7F) return 1;
  return p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F ? 2 : 0;
}

const char *hu_term_clean(const char *s, char **tmp) {
  size_t extra = 0;
  *tmp = NULL;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t c = term_control(p);
    extra += c ? 4 - c : 0;
    p += c ? c : 1;
  }
  if (!extra || !(*tmp = malloc(strlen(s) + extra + 1))) return s;
  static const char hex[] = "0123456789ABCDEF";
  char *o = *tmp;
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t c = term_control(p);
    if (!c) {
      *o++ = (char)*p++;
      continue;
    }
    unsigned v = c == 2 ? p[1] : p[0]; /* U+0080-U+009F: the code point is the second byte */
    *o++ = '\\';
    *o++ = 'x';
    *o++ = hex[v >> 4];
    *o++ = hex[v & 15];
    p += c;
  }
  *o = 0;
  return *tmp;
}

const char *hu_utf8_clean(const char *s, char **tmp) {
  int bad;
  size_t n = hu_utf8_escaped_size(s, &bad);
  *tmp = NULL;
  if (!bad || !(*tmp = malloc(n))) return s;
  hu_utf8_escape(s, *tmp);
  return *tmp;
}
