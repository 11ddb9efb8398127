/* The CLI's error reporter: every "hubprof: ..." and "hubprof: warning: ..." line on stderr, and the check
 * that standard output was written. It calls nothing else of the CLI, so no file of the CLI calls in a
 * circle. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "../common/hu_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One message line on stderr; names and text from stores and files in it reach the terminal with their
 * control characters made visible (hu_term_clean). */
static void message(const char *prefix, const char *fmt, va_list ap) {
  char *text = NULL, *tmp;
  fputs(prefix, stderr);
  if (vasprintf(&text, fmt, ap) < 0) {
    fputs("out of memory\n", stderr);
    return;
  }
  /* a quoted name read from a list file (@FILE, list_file.c): its file and line lead the message, after
   * the command's name ("profile: c.txt:3: unknown counter 'x'") */
  for (const char *q = strchr(text, '\''), *e; q && (e = strchr(q + 1, '\'')); q = strchr(e + 1, '\'')) {
    const char *where = cli_list_origin(q + 1, (size_t)(e - q - 1));
    if (!where) continue;
    const char *colon = strstr(text, ": ");
    size_t at =
        colon && colon < q && !memchr(text, ' ', (size_t)(colon - text)) ? (size_t)(colon - text) + 2 : 0;
    char *with = NULL;
    if (asprintf(&with, "%.*s%s: %s", (int)at, text, where, text + at) >= 0) {
      free(text);
      text = with;
    }
    break;
  }
  fputs(hu_term_clean(text, &tmp), stderr);
  fputc('\n', stderr);
  free(tmp);
  free(text);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  message("hubprof: ", fmt, ap);
  va_end(ap);
}

void cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  message("hubprof: warning: ", fmt, ap);
  va_end(ap);
}

int cli_finish_stdout(int rc) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error("cannot write standard output: %s", strerror(errno));
    return CLI_FAIL;
  }
  return rc;
}
