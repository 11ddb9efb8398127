/* `--partition KEYS` of the commands that write a store (trace, profile, sample, merge, convert): Hive
 * partition folders (node=N/process=P) for a Parquet output, chosen explicitly or automatically by size. */
/* SPDX-License-Identifier: MIT */
#include "partition.h"

#include "cli.h"

#include "hubprof/parquet.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const partition_choices[] = {"auto", "node,process", "process", "node", "none", NULL};
static const unsigned partition_keys[] = {0, HP_PARTITION_NODE | HP_PARTITION_PROCESS, HP_PARTITION_PROCESS,
                                          HP_PARTITION_NODE, 0};

const cli_opt cli_opts_partition[] = {
    {.name = "partition",
     .kind = CLI_OPT_ENUM,
     .choices = partition_choices,
     .def = "auto",
     .help = "Parquet output: Hive partition folders of the per-process tables "
             "(dispatch/node=N/process=P/part-*.parquet); auto: node,process when the inputs hold at "
             "least 1 GiB"},
    {0},
};

static int g_choice = -1; /* index into partition_choices; -1: not given (auto) */

int cli_partition_choose(const char *cmd, const cli_args *a, const char *format) {
  g_choice = cli_given(a, "partition") ? cli_enum(a, "partition", 0) : -1;
  if (g_choice > 0 && g_choice < 4 && strcmp(format, "parquet") != 0) {
    cli_error("%s: --partition %s needs a Parquet output (-F parquet or an OUT ending in .parquet), not %s",
              cmd, partition_choices[g_choice], format);
    return CLI_USAGE;
  }
  return 0;
}

/* Bytes of a file, or of the regular files below a folder (a few levels deep). */
static uint64_t path_bytes(const char *path, int depth) {
  struct stat sb;
  if (stat(path, &sb) != 0) return 0;
  if (S_ISREG(sb.st_mode)) return (uint64_t)sb.st_size;
  if (!S_ISDIR(sb.st_mode) || depth <= 0) return 0;
  DIR *d = opendir(path);
  if (!d) return 0;
  uint64_t sum = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    size_t n = strlen(path) + strlen(e->d_name) + 2;
    char *p = malloc(n);
    if (!p) break;
    snprintf(p, n, "%s/%s", path, e->d_name);
    sum += path_bytes(p, depth - 1);
    free(p);
  }
  closedir(d);
  return sum;
}

uint64_t cli_partition_auto_bytes(void) {
  const char *e = getenv("HUBPROF_PARTITION_AUTO_BYTES"); /* for tests: a smaller threshold */
  char *end;
  unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
  return e && *e && !*end ? (uint64_t)v : (uint64_t)1 << 30;
}

int cli_partition_apply(hp_store *out, char *const *inputs, size_t n) {
  if (strcmp(hp_store_format(out), "parquet") != 0) return 0;
  unsigned keys = g_choice > 0 ? partition_keys[g_choice] : 0;
  if (g_choice <= 0) { /* auto */
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
      sum += path_bytes(inputs[i], 4);
    keys = sum >= cli_partition_auto_bytes() ? HP_PARTITION_NODE | HP_PARTITION_PROCESS : 0;
  }
  if (!keys) return 0;
  if (hp_parquet_set_partition(out, keys) != HP_OK) {
    cli_error("%s: cannot partition: %s", hp_store_path(out), hp_store_error(out));
    return CLI_FAIL;
  }
  return 0;
}
