/* The CLI's declarative option tables: every subcommand describes its options once (name, short name, kind,
 * choices, range, help) and this file parses argv against that table, validates the values and writes --help.
 */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_OPTIONS_H
#define HUBPROF_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum cli_opt_kind {
  CLI_OPT_FLAG = 0, /* no value: --force */
  CLI_OPT_STRING,   /* one value: --output OUT */
  CLI_OPT_UINT,     /* a whole number in [min, max]: --limit N */
  CLI_OPT_ENUM,     /* one of `choices` (or choices_fn()): --by kernel */
  CLI_OPT_LIST,     /* "a,b,c": no empty item */
} cli_opt_kind;

enum {
  CLI_OPT_REPEAT = 1, /* may be given more than once: every value kept (otherwise a second, different value
                         is a usage error, the same one is harmless) */
  CLI_OPT_HIDDEN = 2, /* accepted, not shown in --help (an old spelling) */
};

/* Extra validation of one value: CLI_OK, or CLI_USAGE / CLI_FAIL with a message (without the command
 * prefix) written to err. */
typedef int (*cli_opt_check)(const char *value, char *err, size_t len);

typedef struct cli_opt {
  const char *name; /* long name, without "--" */
  char short_name;  /* 0: none */
  cli_opt_kind kind;
  unsigned flags;                         /* CLI_OPT_REPEAT, CLI_OPT_HIDDEN */
  const char *value;                      /* value name in help ("LIST"); enums show their choices instead */
  const char *help;                       /* wrapped to the help's width; '\n' forces a new line */
  const char *const *choices;             /* CLI_OPT_ENUM: NULL-terminated */
  const char *const *(*choices_fn)(void); /* CLI_OPT_ENUM: when the choices are known only at run time */
  unsigned long min, max;                 /* CLI_OPT_UINT */
  const char *def;                        /* the default, shown in help ("(default: X)") */
  cli_opt_check check;                    /* NULL: none */
  const char *alias_of;                   /* CLI_OPT_HIDDEN spelling of another option: its values go there */
} cli_opt;

typedef struct cli_spec {
  const char *command;          /* "profile": the prefix of error messages and help */
  const char *usage;            /* usage line(s), after "usage: hubprof " */
  const char *about;            /* the paragraph under the usage (wrapped as written) */
  const cli_opt *const *tables; /* NULL-terminated list of option tables (shared rows in their own table) */
  const char *epilog;           /* after the options (examples), may be NULL */
  int stop_at_operand; /* the first operand ends the options (trace, profile: APP's own options follow) */
} cli_spec;

/* The values given for one option. */
typedef struct cli_val {
  const char **v; /* pointers into argv, in order */
  size_t n;
  unsigned long u; /* CLI_OPT_UINT: the last value */
} cli_val;

typedef struct cli_args {
  const cli_spec *spec;
  const cli_opt **opts; /* every option of the spec's tables, flattened */
  cli_val *vals;        /* one per entry of opts */
  size_t nopts;
  char **operands; /* the arguments that are not options, in order (pointers into argv) */
  size_t noperands;
} cli_args;

/* cli_parse's "go on" answer; any other is the exit status to return at once. */
#define CLI_PROCEED (-1)

/* Parse argv[1..argc) (argv[0] is the subcommand) against spec. Returns CLI_PROCEED with *a filled (free it
 * with cli_args_free); or the exit status after printing --help (CLI_OK) or one error line (CLI_USAGE for a
 * malformed command line, CLI_FAIL when a check found a named input unusable); *a is then empty. Unknown
 * options get a "did you mean" from the table. */
int cli_parse(const cli_spec *spec, int argc, char **argv, cli_args *a);
void cli_args_free(cli_args *a);

/* Values by long name (a name not in the spec is a programming error: assert). */
int cli_given(const cli_args *a, const char *name);       /* how many times given */
const char *cli_str(const cli_args *a, const char *name); /* the last value, NULL when absent */
unsigned long cli_uint(const cli_args *a, const char *name, unsigned long def);
/* CLI_OPT_ENUM: the index of the value among the choices, def when absent. */
int cli_enum(const cli_args *a, const char *name, int def);
const char *const *cli_list(const cli_args *a, const char *name, size_t *n); /* every value */

/* --help from the spec (stdout for --help, stderr never: errors are one line). */
void cli_help(const cli_spec *spec, FILE *out);
/* A subcommand's spec, NAME_spec, and its help function cmd_NAME_help (cli.h): the spec's fields other
 * than .command, which is NAME as written. */
#define CLI_COMMAND(NAME, ...)                                                                               \
  static const cli_spec NAME##_spec = {.command = #NAME, __VA_ARGS__};                                       \
  void cmd_##NAME##_help(FILE *out) { cli_help(&NAME##_spec, out); }

/* The candidate closest to word (edit distance with transpositions, or the only one word is a prefix of), or
 * NULL when none is close enough to be a likely typo. */
const char *cli_suggest(const char *word, const char *const *cands, size_t n);

/* Checks for cli_opt.check. The pattern checks and cli_check_line are pattern_args.c's. */
int cli_check_glob(const char *value, char *err, size_t len); /* a valid glob: no unterminated '[' */
/* A --kernel pattern of trace, profile, sample: a valid regex, or "glob:" and a valid glob, or "re:" and a
 * regex (hu_pattern.h). */
int cli_check_regex(const char *value, char *err, size_t len);
/* That pattern as the collector reads it: a regular expression ("re:" dropped; a "glob:" written as an
 * anchored one) into out. 0, or -1 when it does not fit (4 * length + 8 bytes always do). */
int cli_pattern_regex(const char *value, char *out, size_t len);
/* A pattern within hu_pattern.h's bounds (regex: a regular expression, else a glob); the message does not
 * repeat a pattern longer than the limit. Used by cli_check_glob and the --kernel regex checks. */
int cli_check_pattern(const char *value, int regex, char *err, size_t len);
/* A value that travels one per line in the environment (`what` names it in the message): not empty, no
 * newline. */
int cli_check_line(const char *value, const char *what, char *err, size_t len);
int cli_check_file(const char *value, char *err, size_t len);   /* an existing regular file */
int cli_check_device(const char *value, char *err, size_t len); /* a device name, or a regular file */

/* Rows shared by several subcommands. */
extern const cli_opt cli_opts_counters[];  /* plan, profile: --counters, --group, --metrics, --metrics-file,
                                              --device, --max-counters-per-pass */
extern const cli_opt cli_opts_store_out[]; /* trace, profile, merge, convert: -F/--output-format (and its old
                                              spelling --format, hidden), -f/--force; each has its own -o */
extern const cli_opt cli_opts_common[];    /* every subcommand: -h/--help */
extern const cli_opt cli_opts_select[];    /* analyze, diff: --metrics-file, --kernel GLOB, --device GLOB */
extern const cli_opt cli_opts_quiet[];     /* -q/--quiet */
extern const cli_opt cli_opts_strict[];    /* analyze: --strict (merge and convert have their own) */
extern const cli_opt cli_opts_api[];       /* --api (trace, profile, sample): API calls and memory copies */
extern const cli_opt cli_opts_code[];      /* --code (trace, profile, sample): programs' sources, binaries */
/* --format table|csv|json (the report format of analyze, diff, list, roofline: CLI_OPT_REPORT_FORMAT); plan
 * adds "line" and info has no csv, so they define their own rows from these choices. */
extern const char *const cli_report_formats[];
/* Rows several subcommands share with their own help: -n/--limit N, and --format over cli_report_formats. */
#define CLI_OPT_LIMIT(HELP)                                                                                  \
  {                                                                                                          \
    .name = "limit", .short_name = 'n', .kind = CLI_OPT_UINT, .value = "N", .min = 1, .max = 1000000000,     \
    .help = HELP                                                                                             \
  }
#define CLI_OPT_REPORT_FORMAT(HELP)                                                                          \
  { .name = "format", .kind = CLI_OPT_ENUM, .choices = cli_report_formats, .def = "table", .help = HELP }
/* --counters LIST and --metrics LIST of the commands that read stores (analyze, diff), each with its own
 * help: the counters and metrics to show, comma-separated (or @FILE). */
#define CLI_OPT_COUNTERS(HELP)                                                                               \
  { .name = "counters", .kind = CLI_OPT_LIST, .value = "LIST", .help = HELP }
#define CLI_OPT_METRICS(HELP)                                                                                \
  { .name = "metrics", .kind = CLI_OPT_LIST, .value = "LIST", .help = HELP }
/* The store formats compiled into the hub (choices_fn of -F/--output-format). */
const char *const *cli_store_formats(void);

#endif
