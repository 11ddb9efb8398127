/* Selective collection on the command line (select_args.h): one table of rows shared by trace and profile,
 * each value checked when parsed (regex compiled, range parsed, no empty value, no newline), so a bad filter
 * is one usage error before the application starts. */
/* SPDX-License-Identifier: MIT */
#include "select_args.h"

#include "../common/hu_pattern.h"
#include "../common/hu_range.h"
#include "cli.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

static int check_range(const char *v, char *err, size_t len) {
  int rc = cli_check_line(v, "range", err, len);
  if (rc != CLI_OK) return rc;
  hu_range r;
  const char *why = "";
  if (hu_range_parse(v, (size_t)-1, &r, &why) != HU_OK) {
    snprintf(err, len, "'%s': %s", v, why);
    return CLI_USAGE;
  }
  return CLI_OK;
}

static int check_region(const char *v, char *err, size_t len) {
  return cli_check_line(v, "region name", err, len);
}

const cli_opt cli_opts_dispatch_select[] = {
    {.name = "kernel",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "REGEX",
     .help = "collect only dispatches of kernels whose name (or NAME#PROGRAM-HASH) this POSIX extended "
             "regular expression matches (anywhere in the name: anchor with ^ and $; 'glob:PATTERN' for a "
             "glob as analyze takes, 're:' for a regex explicitly); repeatable: any of them",
     .check = cli_check_regex},
    {.name = "kernel-exclude",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "REGEX",
     .help = "do not collect dispatches of kernels whose name this regular expression matches (wins over "
             "--kernel); repeatable",
     .check = cli_check_regex},
    {.name = "dispatch-range",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "RANGE",
     .help =
         "collect only these dispatches, numbered from 1 in the order the process makes them, counting "
         "only those that passed --kernel, --kernel-exclude and --region: A-B (inclusive), A- (from A), -B "
         "(up to B) or N; 'kernel:A-B' numbers each kernel's dispatches on their own. Repeatable: any of "
         "the ranges (and of the kernel: ranges, when both kinds are given)",
     .check = check_range},
    {.name = "region",
     .kind = CLI_OPT_STRING,
     .flags = CLI_OPT_REPEAT,
     .value = "NAME",
     .help = "collect only dispatches made while their thread is inside a region of this name, at any depth "
             "(hubprof_region_begin or NVTX push/pop; docs/api-regions.md); repeatable: any of them",
     .check = check_region},
    {0},
};

/* The values of one option joined by newlines into *out (NULL when not given); patterns (`pat`) as the
 * collector's regular expressions. */
static int join(const cli_args *a, const char *cmd, const char *name, int pat, char **out) {
  size_t n, total = 0;
  const char *const *v = cli_list(a, name, &n);
  *out = NULL;
  if (!n) return CLI_OK;
  if (n > CLI_SELECT_MAX) {
    cli_error("%s: --%s given %zu times: at most %d", cmd, name, n, CLI_SELECT_MAX);
    return CLI_USAGE;
  }
  for (size_t i = 0; i < n; i++)
    total += (pat ? 4 * strlen(v[i]) + 8 : strlen(v[i])) + 1; /* a glob as a regex: at most 4 bytes each */
  char *s = malloc(total);
  if (!s) {
    cli_error("out of memory");
    return CLI_FAIL;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (pat && cli_pattern_regex(v[i], s + o, total - o)) { /* checked when parsed: it fits */
      free(s);
      cli_error("%s: --%s '%.64s': too long", cmd, name, v[i]);
      return CLI_USAGE;
    }
    size_t l = pat ? strlen(s + o) : strlen(v[i]);
    if (!pat) memcpy(s + o, v[i], l);
    o += l;
    s[o++] = i + 1 < n ? '\n' : 0;
  }
  *out = s;
  return CLI_OK;
}

int cli_selection_get(const cli_args *a, const char *cmd, cli_selection *s) {
  memset(s, 0, sizeof *s);
  int rc = join(a, cmd, "kernel", 1, &s->kernel);
  if (rc == CLI_OK) rc = join(a, cmd, "kernel-exclude", 1, &s->exclude);
  if (rc == CLI_OK) rc = join(a, cmd, "dispatch-range", 0, &s->range);
  if (rc == CLI_OK) rc = join(a, cmd, "region", 0, &s->region);
  if (rc != CLI_OK) cli_selection_free(s);
  return rc;
}

void cli_selection_free(cli_selection *s) {
  free(s->kernel);
  free(s->exclude);
  free(s->range);
  free(s->region);
  memset(s, 0, sizeof *s);
}
