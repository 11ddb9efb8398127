/* Parquet helper: a small strict JSON parser for the store's manifest (_hubprof.json). It builds a tree,
 * bounds nesting, and accepts only what JSON allows; numbers are kept when they are non-negative integers. */
#include "parquet_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PJ_MAX_DEPTH 16

typedef struct {
  const char *p, *end;
  char *err;
  size_t errlen;
  int failed;
} jp;

static int fail(jp *j, const char *what) {
  if (!j->failed) snprintf(j->err, j->errlen, "%s", what);
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

static void put_utf8(pq_buf *b, unsigned cp) {
  if (cp < 0x80) {
    pq_buf_byte(b, cp);
  } else if (cp < 0x800) {
    pq_buf_byte(b, 0xC0 | (cp >> 6));
    pq_buf_byte(b, 0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    pq_buf_byte(b, 0xE0 | (cp >> 12));
    pq_buf_byte(b, 0x80 | ((cp >> 6) & 0x3F));
    pq_buf_byte(b, 0x80 | (cp & 0x3F));
  } else {
    pq_buf_byte(b, 0xF0 | (cp >> 18));
    pq_buf_byte(b, 0x80 | ((cp >> 12) & 0x3F));
    pq_buf_byte(b, 0x80 | ((cp >> 6) & 0x3F));
    pq_buf_byte(b, 0x80 | (cp & 0x3F));
  }
}

/* A string at j->p (just past the opening quote); malloc'd, NUL-terminated, no NUL inside. */
static char *string(jp *j) {
  pq_buf b = {0};
  for (;;) {
    if (j->p >= j->end) {
      fail(j, "unterminated string");
      break;
    }
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') {
      pq_buf_byte(&b, 0);
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
      pq_buf_byte(&b, c);
      continue;
    }
    if (j->p >= j->end) {
      fail(j, "unterminated string");
      break;
    }
    char e = *j->p++;
    unsigned cp;
    switch (e) {
    case '"': pq_buf_byte(&b, '"'); break;
    case '\\': pq_buf_byte(&b, '\\'); break;
    case '/': pq_buf_byte(&b, '/'); break;
    case 'b': pq_buf_byte(&b, '\b'); break;
    case 'f': pq_buf_byte(&b, '\f'); break;
    case 'n': pq_buf_byte(&b, '\n'); break;
    case 'r': pq_buf_byte(&b, '\r'); break;
    case 't': pq_buf_byte(&b, '\t'); break;
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
  pq_buf_free(&b);
  return NULL;
}

static int value(jp *j, pq_json *v, int depth);

static int add_kid(jp *j, pq_json *v, size_t *cap) {
  if (v->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 4;
    pq_json *k = realloc(v->kid, nc * sizeof *k);
    if (!k) return fail(j, "out of memory");
    v->kid = k;
    if (v->type == PJ_OBJ) {
      char **keys = realloc(v->keys, nc * sizeof *keys);
      if (!keys) return fail(j, "out of memory");
      v->keys = keys;
    }
    *cap = nc;
  }
  memset(&v->kid[v->n], 0, sizeof v->kid[v->n]);
  return 0;
}

static int container(jp *j, pq_json *v, int depth, char close) {
  size_t cap = 0;
  ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return 0;
  }
  for (;;) {
    if (add_kid(j, v, &cap)) return -1;
    if (v->type == PJ_OBJ) {
      ws(j);
      if (j->p >= j->end || *j->p != '"') return fail(j, "expected a key");
      j->p++;
      char *k = string(j);
      if (!k) return -1;
      v->keys[v->n] = k;
      ws(j);
      if (j->p >= j->end || *j->p != ':') {
        v->n++; /* the key is owned now */
        v->kid[v->n - 1].type = PJ_NULL;
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

static int number(jp *j, pq_json *v) {
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
  (void)s;
  if (neg || frac || overflow) {
    v->type = PJ_NUM;
  } else {
    v->type = PJ_INT;
    v->u = u;
  }
  return 0;
}

static int value(jp *j, pq_json *v, int depth) {
  if (depth > PJ_MAX_DEPTH) return fail(j, "nested too deeply");
  ws(j);
  if (j->p >= j->end) return fail(j, "unexpected end");
  char c = *j->p;
  switch (c) {
  case '{':
    j->p++;
    v->type = PJ_OBJ;
    return container(j, v, depth, '}');
  case '[':
    j->p++;
    v->type = PJ_ARR;
    return container(j, v, depth, ']');
  case '"':
    j->p++;
    v->type = PJ_STR;
    v->s = string(j);
    return v->s ? 0 : -1;
  case 't':
    v->type = PJ_BOOL;
    v->u = 1;
    return literal(j, "true");
  case 'f': v->type = PJ_BOOL; return literal(j, "false");
  case 'n': v->type = PJ_NULL; return literal(j, "null");
  default: return number(j, v);
  }
}

static void free_kids(pq_json *v) {
  for (size_t i = 0; i < v->n; i++) {
    free_kids(&v->kid[i]);
    if (v->type == PJ_OBJ) free(v->keys[i]);
  }
  free(v->kid);
  free(v->keys);
  free(v->s);
}

void pq_json_free(pq_json *j) {
  if (!j) return;
  free_kids(j);
  free(j);
}

int pq_json_parse(const char *text, size_t n, pq_json **out, char *err, size_t errlen) {
  *out = NULL;
  jp j = {text, text + n, err, errlen, 0};
  pq_json *v = calloc(1, sizeof *v);
  if (!v) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (value(&j, v, 0) == 0) {
    ws(&j);
    if (j.p != j.end) fail(&j, "trailing bytes after the JSON value");
  }
  if (j.failed) {
    pq_json_free(v);
    return -1;
  }
  *out = v;
  return 0;
}

const pq_json *pq_json_get(const pq_json *obj, const char *key) {
  if (!obj || obj->type != PJ_OBJ) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->kid[i];
  return NULL;
}
