/* Bounds on user patterns before they are compiled (hu_pattern.h): length, and a regular expression's size
 * with its bounded repetitions written out, estimated by one pass over its text. */
/* SPDX-License-Identifier: MIT */
#include "hu_pattern.h"

#include <fnmatch.h>
#include <regex.h>
#include <stdint.h>
#include <string.h>

/* Where the bracket expression opened at re[i] ('[') ends: the index of its ']', or len when it does not. */
static size_t bracket_end(const char *re, size_t i, size_t len) {
  size_t j = i + 1;
  if (j < len && re[j] == '^') j++;
  if (j < len && re[j] == ']') j++; /* a ']' first is a member */
  while (j < len && re[j] != ']') {
    if (re[j] == '[' && j + 1 < len && (re[j + 1] == ':' || re[j + 1] == '.' || re[j + 1] == '=')) {
      char t = re[j + 1]; /* [:class:], [.coll.], [=equiv=] */
      for (j += 2; j + 1 < len && !(re[j] == t && re[j + 1] == ']'); j++)
        ;
      j += 2;
    } else {
      j++;
    }
  }
  return j < len ? j : len;
}

/* "{m}", "{m,}", "{m,n}" at re[i]: 1 with the copies of the atom before it the compiler makes in *copies
 * (m, m + 1 for an open end, n) and *end at the '}'; 0 when it is not an interval (regcomp judges it). */
static int interval(const char *re, size_t i, size_t len, uint64_t *copies, size_t *end) {
  uint64_t m = 0, n = 0;
  size_t j = i + 1, digits = 0;
  for (; j < len && re[j] >= '0' && re[j] <= '9' && digits < 9; j++, digits++)
    m = m * 10 + (uint64_t)(re[j] - '0');
  if (!digits) return 0;
  n = m;
  if (j < len && re[j] == ',') {
    j++;
    n = m + 1;
    if (j < len && re[j] >= '0' && re[j] <= '9') {
      n = 0;
      for (digits = 0; j < len && re[j] >= '0' && re[j] <= '9' && digits < 9; j++, digits++)
        n = n * 10 + (uint64_t)(re[j] - '0');
    }
  }
  if (j >= len || re[j] != '}') return 0;
  *end = j;
  *copies = n > m ? n : m;
  return 1;
}

int hu_regex_bounded(const char *re, size_t len, const char **why) {
  if (len == (size_t)-1) len = strlen(re);
  if (len > HU_PATTERN_MAX) {
    *why = "longer than 1024 bytes, the limit of a pattern";
    return -1;
  }
  /* per open group: its size so far (every alternative) and the size of its last atom */
  uint64_t total[HU_PATTERN_MAX + 1], last[HU_PATTERN_MAX + 1];
  size_t d = 0;
  total[0] = last[0] = 0;
  for (size_t i = 0; i < len; i++) {
    size_t end;
    uint64_t copies;
    switch (re[i]) {
    case '(':
      d++; /* at most len levels: fits */
      total[d] = last[d] = 0;
      break;
    case ')':
      if (d) { /* the group is an atom of its parent */
        uint64_t g = total[d--] + 1;
        last[d] = g;
        total[d] += g;
      } else { /* an unmatched ')' is an ordinary character */
        last[d] = 1;
        total[d]++;
      }
      break;
    case '|': last[d] = 0; break;
    case '*':
    case '+':
    case '?': /* the compiler may copy the atom once */
      total[d] += last[d];
      last[d] *= 2;
      break;
    case '{':
      if (interval(re, i, len, &copies, &end)) {
        total[d] = total[d] - last[d] + last[d] * copies;
        last[d] *= copies;
        i = end;
      } else {
        last[d] = 1;
        total[d]++;
      }
      break;
    case '[':
      i = bracket_end(re, i, len);
      last[d] = 1;
      total[d]++;
      break;
    case '\\':
      if (i + 1 < len && re[i + 1] >= '1' && re[i + 1] <= '9') {
        *why = "a back-reference (\\1 to \\9): its matching cost has no bound";
        return -1;
      }
      i++;
      last[d] = 1;
      total[d]++;
      break;
    default: last[d] = 1; total[d]++;
    }
    uint64_t all = 0;
    for (size_t k = 0; k <= d; k++)
      all += total[k];
    if (all > HU_REGEX_SIZE_MAX) {
      *why = "larger than 4096 atoms once its repetitions are written out, the limit of a pattern";
      return -1;
    }
  }
  return 0;
}

int hu_glob_bounded(const char *glob, const char **why) {
  if (strlen(glob) <= HU_PATTERN_MAX) return 0;
  *why = "longer than 1024 bytes, the limit of a pattern";
  return -1;
}

const char *hu_pattern_kind(const char *pat, int dflt, int *kind) {
  *kind = dflt;
  if (!strncmp(pat, "re:", 3)) {
    *kind = HU_PAT_REGEX;
    return pat + 3;
  }
  if (!strncmp(pat, "glob:", 5)) {
    *kind = HU_PAT_GLOB;
    return pat + 5;
  }
  return pat;
}

int hu_pattern_match(const char *pat, int dflt, const char *name) {
  int kind;
  const char *body = hu_pattern_kind(pat, dflt, &kind);
  if (kind == HU_PAT_GLOB) return fnmatch(body, name, 0) == 0;
  const char *why;
  regex_t re;
  if (hu_regex_bounded(body, (size_t)-1, &why) || regcomp(&re, body, REG_EXTENDED | REG_NOSUB)) return 0;
  int hit = regexec(&re, name, 0, NULL, 0) == 0;
  regfree(&re);
  return hit;
}

/* Does the '[' at p open a bracket expression (a ']' closes it; a ']' first is a member)? */
static int glob_bracket(const char *p) {
  const char *q = p + 1;
  if (*q == '!' || *q == '^') q++;
  if (*q == ']') q++;
  return *q && strchr(q, ']') != NULL;
}

int hu_glob_to_regex(const char *glob, char *out, size_t len) {
  size_t o = 0;
#define PUT(c)                                                                                               \
  do {                                                                                                       \
    if (o + 1 >= len) return -1;                                                                             \
    out[o++] = (c);                                                                                          \
  } while (0)
  PUT('^');
  for (const char *p = glob; *p; p++) {
    if (*p == '*') {
      PUT('.');
      PUT('*');
    } else if (*p == '?') {
      PUT('.');
    } else if (*p == '[' && glob_bracket(p)) {
      const char *q = p + 1; /* a bracket expression: copied, its '!' negation as '^' */
      PUT('[');
      if (*q == '!' || *q == '^') {
        PUT('^');
        q++;
      }
      if (*q == ']') {
        PUT(']');
        q++;
      }
      for (; *q != ']'; q++)
        PUT(*q);
      PUT(']');
      p = q;
    } else {
      if (*p == '\\' && p[1]) p++; /* an escaped character: itself */
      if (strchr(".[]()*+?{}|^$\\", *p)) PUT('\\');
      PUT(*p);
    }
  }
  PUT('$');
#undef PUT
  out[o] = 0;
  return 0;
}
