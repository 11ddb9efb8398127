/* libFuzzer target for src/common's readers: the input as JSON (a parsed tree must walk, and every string
 * in it must survive the writer and the parser again unchanged), as a run of varints (bounded reads never
 * pass the end), and as a name list (every name trimmed and non-empty). */
/* SPDX-License-Identifier: MIT */
#include "../../src/common/hu_json.h"
#include "../../src/common/hu_text.h"
#include "../../src/common/hu_varint.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_string(const char *s) {
  hu_buf b = {0};
  hu_json_put_str(&b, s);
  if (b.oom) {
    hu_buf_free(&b);
    return;
  }
  hu_json *j = NULL;
  if (hu_json_parse((const char *)b.p, b.n, &j) != HU_OK || j->type != HU_JSON_STR || strcmp(j->s, s) != 0)
    abort(); /* the writer's output must read back as the same string */
  hu_json_free(j);
  hu_buf_free(&b);
}

static void walk(const hu_json *v, int depth) {
  if (depth > HU_JSON_MAX_DEPTH + 1) abort();
  if (v->type == HU_JSON_STR) check_string(v->s);
  for (size_t i = 0; i < v->n; i++) {
    if (v->type == HU_JSON_OBJ) {
      check_string(v->keys[i]);
      if (hu_json_get(v, v->keys[i]) == NULL) abort();
    }
    walk(&v->kid[i], depth + 1);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hu_json *j = NULL;
  if (hu_json_parse((const char *)data, size, &j) == HU_OK) {
    walk(j, 0);
    hu_json_free(j);
  } else {
    if (j && (j->type != HU_JSON_NULL || j->n || !hu_json_error(j)[0]))
      abort(); /* a failure returns no partial tree, and a reason */
    hu_json_free(j);
  }
  const unsigned char *p = data, *end = data + size;
  uint64_t v;
  while (p < end) {
    const unsigned char *at = p;
    if (!hu_varint_get(&p, end, &v)) break;
    /* a read moves forward, never past the end, and never takes fewer bytes than the minimal encoding
     * (a non-minimal one, or one whose bits past the 64th were dropped, takes more) */
    if (p <= at || p > end || (size_t)(p - at) < hu_varint_len(v)) abort();
  }
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  char **names;
  size_t n;
  if (hu_split_names(text, &names, &n) == HU_OK) {
    for (size_t i = 0; i < n; i++) {
      size_t l = strlen(names[i]);
      if (!l || names[i][0] == ' ' || names[i][0] == '\t' || names[i][l - 1] == ' ' ||
          names[i][l - 1] == '\t' || strchr(names[i], ','))
        abort();
    }
    if (names[n] != NULL) abort();
    hu_strv_free(names);
  }
  free(text);
  return 0;
}
