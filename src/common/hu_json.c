/* JSON reading and writing (hu_json.h): a small strict parser that builds a tree (nesting bounded, only
 * what JSON allows) for the Parquet manifest and the replay metadata, and string escaping for the writers. */
/* SPDX-License-Identifier: MIT */
#include "hu_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p, *end;
  const char *why; /* the first failure's reason (a static string), NULL while none */
  int failed;
} jp;

static int fail(jp *j, const char *what) {
  if (!j->failed) j->why = what;
  j->failed = 1;
  return -1;
}

static void ws(jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static int hex4(jp *j, unsigned *out) {
  if (j->end - j->p < 4) return fail(j, "bad \\u escape");
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = *j->p++;
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return fail(j, "bad \\u escape");
  }
  *out = v;
  return 0;
}

static void put_utf8(hu_buf *b, unsigned cp) {
  if (cp < 0x80) {
    hu_buf_byte(b, cp);
  } else if (cp < 0x800) {
    hu_buf_byte(b, 0xC0 | (cp >> 6));
    hu_buf_byte(b, 0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    hu_buf_byte(b, 0xE0 | (cp >> 12));
    hu_buf_byte(b, 0x80 | ((cp >> 6) & 0x3F));
    hu_buf_byte(b, 0x80 | (cp & 0x3F));
  } else {
    hu_buf_byte(b, 0xF0 | (cp >> 18));
    hu_buf_byte(b, 0x80 | ((cp >> 12) & 0x3F));
    hu_buf_byte(b, 0x80 | ((cp >> 6) & 0x3F));
    hu_buf_byte(b, 0x80 | (cp & 0x3F));
  }
}

/* A string at j->p (just past the opening quote); malloc'd, NUL-terminated, no NUL inside. */
static char *string(jp *j) {
  hu_buf b = {0};
  for (;;) {
    if (j->p >= j->end) {
      fail(j, "unterminated string");
      break;
    }
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') {
      hu_buf_byte(&b, 0);
      if (b.oom) {
        fail(j, "out of memory");
        break;
      }
      return (char *)b.p;
    }
    if (c < 0x20) {
      fail(j, "control character in string");
      break;
    }
    if (c != '\\') {
      hu_buf_byte(&b, c);
      continue;
    }
    if (j->p >= j->end) {
      fail(j, "unterminated string");
      break;
    }
    char e = *j->p++;
    unsigned cp;
    switch (e) {
    case '"': hu_buf_byte(&b, '"'); break;
    case '\\': hu_buf_byte(&b, '\\'); break;
    case '/': hu_buf_byte(&b, '/'); break;
    case 'b': hu_buf_byte(&b, '\b'); break;
    case 'f': hu_buf_byte(&b, '\f'); break;
    case 'n': hu_buf_byte(&b, '\n'); break;
    case 'r': hu_buf_byte(&b, '\r'); break;
    case 't': hu_buf_byte(&b, '\t'); break;
    case 'u':
      if (hex4(j, &cp)) break;
      if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
        unsigned lo;
        if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
          fail(j, "lone surrogate in string");
          break;
        }
        j->p += 2;
        if (hex4(j, &lo)) break;
        if (lo < 0xDC00 || lo > 0xDFFF) {
          fail(j, "lone surrogate in string");
          break;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        fail(j, "lone surrogate in string");
        break;
      }
      if (cp == 0) {
        fail(j, "NUL in string");
        break;
      }
      put_utf8(&b, cp);
      break;
    default: fail(j, "bad escape in string"); break;
    }
    if (j->failed) break;
  }
  hu_buf_free(&b);
  return NULL;
}

static int value(jp *j, hu_json *v, int depth);

static int add_kid(jp *j, hu_json *v, size_t *cap) {
  if (v->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 4;
    hu_json *k = realloc(v->kid, nc * sizeof *k);
    if (!k) return fail(j, "out of memory");
    v->kid = k;
    if (v->type == HU_JSON_OBJ) {
      char **keys = realloc(v->keys, nc * sizeof *keys);
      if (!keys) return fail(j, "out of memory");
      v->keys = keys;
    }
    *cap = nc;
  }
  memset(&v->kid[v->n], 0, sizeof v->kid[v->n]);
  return 0;
}

static int container(jp *j, hu_json *v, int depth, char close) {
  size_t cap = 0;
  ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return 0;
  }
  for (;;) {
    if (add_kid(j, v, &cap)) return -1;
    if (v->type == HU_JSON_OBJ) {
      ws(j);
      if (j->p >= j->end || *j->p != '"') return fail(j, "expected a key");
      j->p++;
      char *k = string(j);
      if (!k) return -1;
      v->keys[v->n] = k;
      ws(j);
      if (j->p >= j->end || *j->p != ':') {
        v->n++; /* the key is owned now */
        v->kid[v->n - 1].type = HU_JSON_NULL;
        return fail(j, "expected ':'");
      }
      j->p++;
    }
    int rc = value(j, &v->kid[v->n], depth + 1);
    v->n++;
    if (rc) return -1;
    ws(j);
    if (j->p >= j->end) return fail(j, "unexpected end");
    if (*j->p == ',') {
      j->p++;
      continue;
    }
    if (*j->p == close) {
      j->p++;
      return 0;
    }
    return fail(j, "expected ',' or a closing bracket");
  }
}

static int literal(jp *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) return fail(j, "bad literal");
  j->p += n;
  return 0;
}

static int number(jp *j, hu_json *v) {
  const char *s = j->p;
  int neg = 0, frac = 0;
  if (j->p < j->end && *j->p == '-') {
    neg = 1;
    j->p++;
  }
  if (j->p >= j->end || *j->p < '0' || *j->p > '9') return fail(j, "bad number");
  uint64_t u = 0;
  int overflow = 0;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
    unsigned d = (unsigned)(*j->p++ - '0');
    if (u > (UINT64_MAX - d) / 10) overflow = 1;
    u = u * 10 + d;
  }
  if (j->p < j->end && *j->p == '.') {
    frac = 1;
    j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return fail(j, "bad number");
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
      j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    frac = 1;
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return fail(j, "bad number");
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
      j->p++;
  }
  size_t len = (size_t)(j->p - s);
  char tmp[64], *t = len < sizeof tmp ? tmp : malloc(len + 1);
  if (!t) return fail(j, "out of memory");
  memcpy(t, s, len);
  t[len] = 0;
  v->d = strtod(t, NULL);
  if (t != tmp) free(t);
  if (neg || frac || overflow) {
    v->type = HU_JSON_NUM;
  } else {
    v->type = HU_JSON_INT;
    v->u = u;
  }
  return 0;
}

static int value(jp *j, hu_json *v, int depth) {
  if (depth > HU_JSON_MAX_DEPTH) return fail(j, "nested too deeply");
  ws(j);
  if (j->p >= j->end) return fail(j, "unexpected end");
  char c = *j->p;
  switch (c) {
  case '{':
    j->p++;
    v->type = HU_JSON_OBJ;
    return container(j, v, depth, '}');
  case '[':
    j->p++;
    v->type = HU_JSON_ARR;
    return container(j, v, depth, ']');
  case '"':
    j->p++;
    v->type = HU_JSON_STR;
    v->s = string(j);
    return v->s ? 0 : -1;
  case 't':
    v->type = HU_JSON_BOOL;
    v->u = 1;
    return literal(j, "true");
  case 'f': v->type = HU_JSON_BOOL; return literal(j, "false");
  case 'n': v->type = HU_JSON_NULL; return literal(j, "null");
  default: return number(j, v);
  }
}

static void free_kids(hu_json *v) {
  for (size_t i = 0; i < v->n; i++) {
    free_kids(&v->kid[i]);
    if (v->type == HU_JSON_OBJ) free(v->keys[i]);
  }
  free(v->kid);
  free(v->keys);
  free(v->s);
}

void hu_json_free(hu_json *j) {
  if (!j) return;
  free_kids(j);
  free(j);
}

hu_status hu_json_parse(const char *text, size_t n, hu_json **out) {
  *out = NULL;
  jp j = {text, text + n, NULL, 0};
  hu_json *v = calloc(1, sizeof *v);
  if (!v) return HU_ERR_NOMEM;
  if (value(&j, v, 0) == 0) {
    ws(&j);
    if (j.p != j.end) fail(&j, "trailing bytes after the JSON value");
  }
  *out = v;
  if (!j.failed) return HU_OK;
  free_kids(v); /* no partial tree: a value-less root that says why */
  memset(v, 0, sizeof *v);
  v->err = j.why;
  return strcmp(j.why, "out of memory") == 0 ? HU_ERR_NOMEM : HU_ERR_INVALID;
}

const char *hu_json_error(const hu_json *j) { return !j ? "out of memory" : j->err ? j->err : ""; }

const hu_json *hu_json_get(const hu_json *obj, const char *key) {
  if (!obj || obj->type != HU_JSON_OBJ) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->kid[i];
  return NULL;
}

int hu_json_int64(const hu_json *v, int64_t *out) {
  if (!v) return -1;
  if (v->type == HU_JSON_INT && v->u <= (uint64_t)INT64_MAX) {
    *out = (int64_t)v->u;
    return 0;
  }
  /* a negative integer: exact as a double up to 2^53 */
  if (v->type == HU_JSON_NUM && v->d == (double)(int64_t)v->d && v->d >= -9007199254740992.0 &&
      v->d <= 9007199254740992.0) {
    *out = (int64_t)v->d;
    return 0;
  }
  return -1;
}

/* ---- writing ---- */

/* The escape of byte ch inside a JSON string into e (NUL-terminated), or 0 when it stands as it is. */
static size_t escape(unsigned char ch, char e[8]) {
  if (ch == '"' || ch == '\\') {
    e[0] = '\\';
    e[1] = (char)ch;
    e[2] = 0;
    return 2;
  }
  if (ch == '\n') return (size_t)snprintf(e, 8, "\\n");
  if (ch == '\t') return (size_t)snprintf(e, 8, "\\t");
  if (ch < 0x20) return (size_t)snprintf(e, 8, "\\u%04x", ch);
  return 0;
}

void hu_json_put_str(hu_buf *b, const char *s) {
  hu_buf_byte(b, '"');
  const char *run = s;
  for (; *s; s++) {
    char e[8];
    size_t n = escape((unsigned char)*s, e);
    if (!n) continue;
    hu_buf_put(b, run, (size_t)(s - run));
    hu_buf_put(b, e, n);
    run = s + 1;
  }
  hu_buf_put(b, run, (size_t)(s - run));
  hu_buf_byte(b, '"');
}

void hu_json_write_str(FILE *out, const char *s) {
  fputc('"', out);
  const char *run = s;
  for (; *s; s++) {
    char e[8];
    size_t n = escape((unsigned char)*s, e);
    if (!n) continue;
    fwrite(run, 1, (size_t)(s - run), out);
    fwrite(e, 1, n, out);
    run = s + 1;
  }
  fwrite(run, 1, (size_t)(s - run), out);
  fputc('"', out);
}
