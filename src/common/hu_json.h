/* JSON for hubprof's small documents (the Parquet manifest, replay metadata, reports): a strict parser
 * that builds a tree, and string escaping for writers to a hu_buf or a FILE. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_JSON_H
#define HUBPROF_HU_JSON_H

#include "hu.h"
#include "hu_buf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HU_JSON_MAX_DEPTH 16 /* nesting the parser accepts */

typedef enum {
  HU_JSON_NULL,
  HU_JSON_BOOL,
  HU_JSON_INT,
  HU_JSON_NUM,
  HU_JSON_STR,
  HU_JSON_ARR,
  HU_JSON_OBJ
} hu_json_type;
typedef struct hu_json hu_json;
struct hu_json {
  hu_json_type type;
  uint64_t u;      /* HU_JSON_INT (a non-negative integer that fits 64 bits) or HU_JSON_BOOL */
  double d;        /* HU_JSON_INT and HU_JSON_NUM (any other number): the value as a double */
  char *s;         /* HU_JSON_STR: NUL-terminated UTF-8, contains no NUL */
  size_t n;        /* HU_JSON_ARR/HU_JSON_OBJ: children */
  char **keys;     /* HU_JSON_OBJ: keys of the children */
  hu_json *kid;    /* HU_JSON_ARR/HU_JSON_OBJ: children */
  const char *err; /* the root of a failed parse: why (hu_json_error), else NULL */
};

/* Parse text[0..n) into *out: HU_OK; or HU_ERR_INVALID / HU_ERR_NOMEM with *out a tree holding no value
 * (never a partial one) whose hu_json_error says why in a few words (*out NULL only when even that could not
 * be allocated). Free *out with hu_json_free either way. */
hu_status hu_json_parse(const char *text, size_t n, hu_json **out);
/* Why the parse that made j failed, "" when it did not; "out of memory" for j NULL. */
const char *hu_json_error(const hu_json *j);
void hu_json_free(hu_json *j);
const hu_json *hu_json_get(const hu_json *obj, const char *key); /* member of an object, or NULL */
/* An integer value (non-negative up to INT64_MAX, negative down to -2^53): 0 with *out, or -1. */
int hu_json_int64(const hu_json *v, int64_t *out);

/* s as a JSON string with its quotes: '"' and '\' escaped, \n and \t, other control bytes as \u00XX;
 * other bytes (UTF-8) as they are. */
void hu_json_put_str(hu_buf *b, const char *s);
void hu_json_write_str(FILE *out, const char *s);

#endif
