/* The reading subcommands' opening and check of a store: one error line when it cannot be opened, and a table
 * (or a file of one) that could not be read at all makes analyze, diff, export, info and report fail, rather
 * than report figures for part of the data. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include <hubprof/hub.h>

#include <string.h>

const char *cli_store_unreadable(hp_store *s) {
  if (hp_store_damage(s, NULL) == HP_OK) return NULL;
  /* a log cut by a crash: its complete blocks are the run's data, read with a warning */
  if (strcmp(hp_store_format(s), "log") == 0) return NULL;
  const char *why = hp_store_error(s);
  return why && *why ? why : "damaged";
}

hp_store *cli_open_store(const char *path) {
  hp_store *s;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  if (st == HP_OK) return s;
  cli_error("%s", s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st));
  hp_store_abort(s);
  return NULL;
}

hp_store *cli_open_readable(const char *cmd, const char *path) {
  hp_store *s = cli_open_store(path);
  if (s && cli_check_readable(cmd, s)) {
    hp_store_close(s);
    return NULL;
  }
  return s;
}

int cli_check_readable(const char *cmd, hp_store *s) {
  if (hp_store_note(s)[0]) cli_warn("%s", hp_store_note(s));
  const char *why = cli_store_unreadable(s), *path = hp_store_path(s);
  if (!why) return 0;
  size_t n = strlen(path);
  if (strncmp(why, path, n) == 0 && strncmp(why + n, ": ", 2) == 0) why += n + 2; /* the path once */
  cli_error("%s: %s: a table cannot be read: %s (hubprof convert keeps what is readable)", cmd, path, why);
  return CLI_FAIL;
}
