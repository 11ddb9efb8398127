/* `@FILE` in the lists of counters and metrics (--counters, --metrics, sample's --counters, analyze's): the
 * file read, bounded, into the comma-separated list the option would have had, and where each name came
 * from, so an error about a name names its file and line. Calls nothing else of the CLI. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct origin {
  char *name;
  char *where; /* "FILE:LINE" */
} origin;

static origin *g_orig;
static size_t g_norig, g_caporig;
static char **g_owned; /* the expanded lists, alive until cli_list_files_forget */
static size_t g_nowned;

const char *cli_list_origin(const char *name, size_t len) {
  for (size_t i = g_norig; i-- > 0;)
    if (strlen(g_orig[i].name) == len && !memcmp(g_orig[i].name, name, len)) return g_orig[i].where;
  return NULL;
}

void cli_list_files_forget(void) {
  for (size_t i = 0; i < g_norig; i++) {
    free(g_orig[i].name);
    free(g_orig[i].where);
  }
  free(g_orig);
  g_orig = NULL;
  g_norig = g_caporig = 0;
  for (size_t i = 0; i < g_nowned; i++)
    free(g_owned[i]);
  free(g_owned);
  g_owned = NULL;
  g_nowned = 0;
}

static int remember(const char *name, const char *path, size_t line) {
  if (g_norig == g_caporig) { /* doubled: thousands of names cost no more than their copies */
    size_t cap = g_caporig ? 2 * g_caporig : 64;
    origin *o = realloc(g_orig, cap * sizeof *o);
    if (!o) return -1;
    g_orig = o;
    g_caporig = cap;
  }
  char *where = NULL;
  if (asprintf(&where, "%s:%zu", path, line) < 0) return -1;
  char *n = strdup(name);
  if (!n) {
    free(where);
    return -1;
  }
  g_orig[g_norig++] = (origin){n, where};
  return 0;
}

/* The whole file (at most CLI_LIST_FILE_MAX bytes, checked before and while reading), NUL-terminated. */
static char *slurp(const char *path, char *err, size_t elen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, elen, "%s: cannot read: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > CLI_LIST_FILE_MAX) {
    snprintf(err, elen, "%s: %s", path,
             !S_ISREG(st.st_mode) ? "not a regular file"
                                  : "larger than 1 MiB (a list of names is far smaller)");
    close(fd);
    return NULL;
  }
  char *b = malloc((size_t)st.st_size + 2);
  size_t got = 0;
  while (b && got <= (size_t)st.st_size) { /* one byte more than fstat said: a file that grows is caught */
    ssize_t r = read(fd, b + got, (size_t)st.st_size + 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (!b || got > (size_t)st.st_size) {
    snprintf(err, elen, "%s: %s", path, b ? "grew while it was read" : "out of memory");
    free(b);
    return NULL;
  }
  b[got] = 0;
  return b;
}

int cli_list_file_read(const char *path, char **out, char *err, size_t elen) {
  *out = NULL;
  char *text = slurp(path, err, elen);
  if (!text) return -1;
  size_t cap = strlen(text) + 1, len = 0, line = 0, names = 0;
  char *list = malloc(cap);
  int rc = list ? 0 : -1;
  if (!list) snprintf(err, elen, "%s: out of memory", path);
  for (char *p = text, *next; rc == 0 && p && *p; p = next) {
    line++;
    char *nl = strchr(p, '\n');
    next = nl ? nl + 1 : NULL;
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n > CLI_LIST_LINE_MAX) {
      snprintf(err, elen, "%s:%zu: line longer than %d bytes", path, line, CLI_LIST_LINE_MAX);
      rc = -1;
      break;
    }
    p[n] = 0;
    char *hash = strchr(p, '#');
    if (hash) *hash = 0;
    while (*p == ' ' || *p == '\t' || *p == '\r')
      p++;
    size_t m = strlen(p);
    while (m && (p[m - 1] == ' ' || p[m - 1] == '\t' || p[m - 1] == '\r'))
      p[--m] = 0;
    if (!m) continue; /* a blank line or a comment */
    if (strpbrk(p, ", \t@")) {
      snprintf(err, elen, "%s:%zu: '%.80s' is not one name (one counter or metric per line)", path, line, p);
      rc = -1;
      break;
    }
    if (++names > CLI_LIST_NAMES_MAX) {
      snprintf(err, elen, "%s:%zu: more than %d names", path, line, CLI_LIST_NAMES_MAX);
      rc = -1;
      break;
    }
    if (remember(p, path, line) != 0) {
      snprintf(err, elen, "%s: out of memory", path);
      rc = -1;
      break;
    }
    len += (size_t)snprintf(list + len, cap - len, "%s%s", len ? "," : "", p);
  }
  free(text);
  if (rc == 0 && !names) {
    snprintf(err, elen, "%s: no names in it (one counter or metric per line, '#' starts a comment)", path);
    rc = -1;
  }
  if (rc != 0) {
    free(list);
    return -1;
  }
  *out = list;
  return 0;
}

const char *cli_list_expand(const char *value, char *err, size_t elen) {
  /* "@FILE", or a per-device list "device=SEL:@FILE" */
  const char *at = value[0] == '@' ? value : NULL;
  if (!at && !strncmp(value, "device=", 7)) {
    const char *colon = strchr(value, ':');
    if (colon && colon[1] == '@') at = colon + 1;
  }
  if (!at) return value;
  if (!at[1]) {
    snprintf(err, elen, "'%s': '@' needs a file name", value);
    return NULL;
  }
  char *list;
  if (cli_list_file_read(at + 1, &list, err, elen) != 0) return NULL;
  char *whole = NULL;
  if (asprintf(&whole, "%.*s%s", (int)(at - value), value, list) < 0) whole = NULL;
  free(list);
  char **o = whole ? realloc(g_owned, (g_nowned + 1) * sizeof *o) : NULL;
  if (!o) {
    free(whole);
    snprintf(err, elen, "out of memory");
    return NULL;
  }
  g_owned = o;
  g_owned[g_nowned++] = whole;
  return whole;
}
