/* `hubprof merge DIR`: a folder of stores (the rank stores of `mpirun ... hubprof trace -o DIR`) given as an
 * input stands for the stores in it; a foreign file there is named; a rank whose process did not finish
 * (killed mid-run) is named with what is kept of it (docs/cluster.md). */
/* SPDX-License-Identifier: MIT */
#include "../common/hu_dir.h"
#include "cli.h"

#include "hubprof/hub.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int push(char ***v, size_t *n, size_t *cap, const char *a, const char *b) {
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    char **nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
  }
  size_t l = strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
  if (!((*v)[*n] = malloc(l))) return -1;
  if (b)
    snprintf((*v)[*n], l, "%s/%s", a, b);
  else
    snprintf((*v)[*n], l, "%s", a);
  (*n)++;
  return 0;
}

/* The sorted names in dir (not "." or ".."); *n 0 when none or unreadable. */
static char **names_in(const char *dir, size_t *n) {
  char **v = NULL;
  *n = 0;
  return hu_dir_names(dir, NULL, NULL, 0, &v, n) == HU_OK ? v : NULL;
}

static void free_names(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* A folder that no store format claims (a Parquet store is a folder too). */
static int is_folder_of_stores(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0;
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, NULL, HP_READ, &s);
  hp_store_abort(s);
  return st == HP_ERR_FORMAT;
}

/* One folder's stores into the list; logs a killed hubprof left behind (.hubprof-logs.*) are taken with a
 * warning; a foreign entry is an error naming it. */
static int expand_folder(const char *dir, char ***v, size_t *n, size_t *cap, size_t *found) {
  size_t nn = 0;
  char **names = names_in(dir, &nn);
  int rc = CLI_OK;
  for (size_t i = 0; i < nn && rc == CLI_OK; i++) {
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    if (names[i][0] == '.') {
      if (strncmp(names[i], ".hubprof-logs.", 14) != 0) continue; /* a store being written (.NAME.tmp.*) */
      size_t nl = 0;
      char **logs = names_in(p, &nl);
      size_t taken = 0;
      for (size_t k = 0; k < nl && rc == CLI_OK; k++) {
        size_t l = strlen(logs[k]);
        if (strncmp(logs[k], "hubprof-", 8) || l < 5 || strcmp(logs[k] + l - 4, ".log")) continue;
        if (push(v, n, cap, p, logs[k])) rc = CLI_FAIL;
        taken++;
      }
      free_names(logs, nl);
      if (taken) {
        cli_warn("%s: %zu per-process log%s that no hubprof assembled (it was killed, or is still running): "
                 "merged as they are",
                 p, taken, taken == 1 ? "" : "s");
        *found += taken;
      }
      continue;
    }
    size_t l = strlen(names[i]);
    if (l > 11 && !strcmp(names[i] + l - 11, ".log.launch"))
      continue; /* NAME.log's launch file (its reader's) */
    hp_store *s = NULL;
    hp_status st = hp_store_open(p, NULL, HP_READ, &s);
    hp_store_abort(s);
    if (st == HP_ERR_FORMAT) {
      cli_error("%s: not a hubprof store (a foreign file in the folder of stores %s?): move it away or name "
                "the stores one by one",
                p, dir);
      rc = CLI_FAIL;
    } else if (push(v, n, cap, p, NULL)) {
      rc = CLI_FAIL;
    } else {
      (*found)++;
    }
  }
  free_names(names, nn);
  return rc;
}

int cli_merge_inputs(char *const *operands, size_t nops, char ***paths, size_t *npaths) {
  char **v = NULL;
  size_t n = 0, cap = 0;
  int rc = CLI_OK;
  for (size_t i = 0; i < nops && rc == CLI_OK; i++) {
    if (!is_folder_of_stores(operands[i])) {
      if (push(&v, &n, &cap, operands[i], NULL)) rc = CLI_FAIL;
      continue;
    }
    size_t found = 0;
    rc = expand_folder(operands[i], &v, &n, &cap, &found);
    if (rc == CLI_OK && !found) {
      cli_error("%s: a folder without stores in it", operands[i]);
      rc = CLI_FAIL;
    }
  }
  if (rc != CLI_OK) {
    cli_merge_inputs_free(v, n);
    v = NULL;
    n = 0;
  }
  *paths = v;
  *npaths = n;
  return rc;
}

void cli_merge_inputs_free(char **paths, size_t n) { free_names(paths, n); }

/* Dispatches of process row `proc` in s (counted only for a cut process). */
static uint64_t dispatches_of(hp_store *s, uint64_t proc) {
  hp_cursor *c = NULL;
  uint64_t k = 0;
  if (hp_cursor_open(s, HP_TABLE_DISPATCH, &c) != HP_OK) return 0;
  hp_dispatch d = {.size = sizeof d};
  while (hp_cursor_next(c, &d) == HP_OK)
    k += d.process_id == proc;
  hp_cursor_close(c);
  return k;
}

void cli_merge_report_cut(char *const *paths, size_t n) {
  for (size_t i = 0; i < n; i++) {
    hp_store *s = NULL;
    if (hp_store_open(paths[i], NULL, HP_READ, &s) != HP_OK) { /* damage is the merge's to report */
      hp_store_abort(s);
      continue;
    }
    hp_cursor *c = NULL;
    struct cut {
      uint64_t id, node;
      int64_t pid, rank, end;
    } *cuts = NULL;
    size_t nc = 0, capc = 0;
    hp_process p = {.size = sizeof p};
    if (hp_cursor_open(s, HP_TABLE_PROCESS, &c) == HP_OK) {
      while (hp_cursor_next(c, &p) == HP_OK) {
        size_t j = 0;
        while (j < nc && cuts[j].id != p.id)
          j++;
        if (j == nc) { /* a process written twice (start, then end): the last row wins */
          if (nc == capc) {
            struct cut *g = realloc(cuts, (capc = capc ? 2 * capc : 8) * sizeof *g);
            if (!g) break;
            cuts = g;
          }
          nc++;
        }
        cuts[j] = (struct cut){p.id, p.node_id, p.pid, p.rank, p.end_ns};
      }
      hp_cursor_close(c);
    }
    for (size_t j = 0; j < nc; j++) {
      if (cuts[j].end) continue;
      char host[256] = "?";
      hp_node nd = {.size = sizeof nd};
      if (hp_cursor_open(s, HP_TABLE_NODE, &c) == HP_OK) {
        while (hp_cursor_next(c, &nd) == HP_OK)
          if (nd.id == cuts[j].node) snprintf(host, sizeof host, "%s", nd.hostname);
        hp_cursor_close(c);
      }
      char who[64];
      if (cuts[j].rank >= 0)
        snprintf(who, sizeof who, "rank %" PRId64, cuts[j].rank);
      else
        snprintf(who, sizeof who, "process");
      uint64_t nd_kept = dispatches_of(s, cuts[j].id);
      cli_warn("%s (host %s, pid %" PRId64 ", %s) was cut: it did not finish (killed mid-run?); its %" PRIu64
               " recorded dispatch%s are kept, its end time is unknown",
               who, host, cuts[j].pid, paths[i], nd_kept, nd_kept == 1 ? "" : "es");
    }
    free(cuts);
    hp_store_abort(s);
  }
}
