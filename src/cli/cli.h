/* hubprof CLI: the subcommand table and helpers shared by the one-file-per-subcommand sources. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_CLI_H
#define HUBPROF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of every subcommand (docs/cli/exit-codes.md): 0 success; 1 an input error (the command line is
 * well formed but something it names cannot be used: a file, store, device, counter or metric), or a failure
 * while working (I/O, memory); 2 a usage error (the command line itself is wrong, found without reading any
 * input). trace and profile exit with the application's own status once it has started. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

typedef struct cli_cmd {
  const char *name;
  const char *summary;               /* one line for `hubprof --help` */
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
  void (*help)(FILE *out);
} cli_cmd;

int cmd_info(int argc, char **argv);
void cmd_info_help(FILE *out);
int cmd_merge(int argc, char **argv);
void cmd_merge_help(FILE *out);
int cmd_convert(int argc, char **argv);
void cmd_convert_help(FILE *out);
int cmd_export(int argc, char **argv);
void cmd_export_help(FILE *out);
int cmd_report(int argc, char **argv);
void cmd_report_help(FILE *out);
int cmd_trace(int argc, char **argv);
void cmd_trace_help(FILE *out);
int cmd_sample(int argc, char **argv);
void cmd_sample_help(FILE *out);
int cmd_profile(int argc, char **argv);
void cmd_profile_help(FILE *out);
int cmd_analyze(int argc, char **argv);
void cmd_analyze_help(FILE *out);
int cmd_diff(int argc, char **argv);
void cmd_diff_help(FILE *out);
/* print_analysis.c: an analysis result (ha_run, ha_diff) as a table fitted to `width` in panels, CSV or
 * JSON (every column), then its notes; CLI_OK or CLI_FAIL. */
struct ha_result;
int cli_print_analysis(const struct ha_result *res, int fmt, size_t width);
int cmd_plan(int argc, char **argv);
void cmd_plan_help(FILE *out);
struct hc_provider;
struct hc_metrics;
/* metric_args.c: open device (a description's name or file) into *out: CLI_OK, or CLI_FAIL after one error
 * line ("CMD: " first when cmd is given) with *out NULL. */
int cli_device_open(const char *cmd, const char *device, struct hc_provider **out);
/* metric_args.c: the metric definitions for provider p's device (the built-in sets for it, and `files`),
 * names checked against its counters; errors printed. CLI_OK or CLI_FAIL. */
int cli_metrics_open(const struct hc_provider *p, const char *const *files, size_t nfiles,
                     struct hc_metrics **out);
/* metric_args.c: `--metrics` lists (each "a,b") as planner groups "NAME=C1,C2" for hc_plan_args.groups
 * (NULL-terminated; free with hc_metrics_groups_free); errors printed. CLI_OK, CLI_USAGE (a malformed list)
 * or CLI_FAIL (an unknown metric, a bad definition file). */
int cli_metric_groups(const struct hc_provider *p, const char *const *lists, size_t nlists,
                      const char *const *files, size_t nfiles, char ***groups, size_t *ngroups);
int cmd_list(int argc, char **argv);
void cmd_list_help(FILE *out);
int cmd_roofline(int argc, char **argv);
void cmd_roofline_help(FILE *out);

/* messages.c, the error reporter: "hubprof: <message>" on stderr, one line. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hubprof: warning: <message>" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Flush stdout and report a write error (full disk, closed pipe) as a failure, as perf does. */
int cli_finish_stdout(int rc);
/* The noun for a count: one (n == 1) or many ("dispatch" / "dispatches"), for summary lines. */
static inline const char *cli_noun(uint64_t n, const char *one, const char *many) {
  return n == 1 ? one : many;
}
/* list_file.c: `@FILE` in a list of counters or metrics. cli_list_expand returns value itself, or (for
 * "@FILE" and "device=SEL:@FILE") the list with the file's names joined by ',' (owned until
 * cli_list_files_forget), or NULL with "FILE:LINE: problem" in err. One name per line, '#' comments, blank
 * lines; bounded. */
#define CLI_LIST_FILE_MAX (1 << 20) /* bytes of a list file (as a metric definition file) */
#define CLI_LIST_LINE_MAX 4096      /* bytes of one line */
#define CLI_LIST_NAMES_MAX 8192     /* names in one file (as counters in a device description) */
const char *cli_list_expand(const char *value, char *err, size_t elen);
int cli_list_file_read(const char *path, char **out, char *err, size_t elen);
/* "FILE:LINE" of a name read from a list file (the last one), NULL when it came from no file. */
const char *cli_list_origin(const char *name, size_t len);
void cli_list_files_forget(void);
/* device_lists.c: --counters lists addressed per device ('device=SEL:LIST') split from the others. */
typedef struct cli_dev_lists {
  char **sel; /* the distinct selectors, in order of first use: slot k; slot nsel is every other device */
  size_t nsel;
  const char **un; /* the unaddressed lists (every device's) */
  size_t nun;
  char **addr;      /* the addressed lists (after "device=SEL:") */
  size_t *addr_sel; /* the slot of each */
  size_t naddr;
} cli_dev_lists;
int cli_device_lists(const char *cmd, const char *const *lists, size_t n, cli_dev_lists *d);
/* The lists of slot k (slot nsel: the unaddressed ones alone) into out (room for n lists); their count. */
size_t cli_device_lists_of(const cli_dev_lists *d, size_t slot, const char **out);
void cli_device_lists_free(cli_dev_lists *d);
/* Plan `lists` with `groups` under `max` per pass (0: the device's limits) on p, every counter available;
 * CLI_OK with *out, or the error printed ("CMD: why") and CLI_USAGE (malformed) / CLI_FAIL. */
struct hc_provider;
struct hc_plan;
int cli_plan_lists(const char *cmd, struct hc_provider *p, const char *const *lists, size_t n,
                   const char *const *groups, size_t ngroups, unsigned max, struct hc_plan **out);
/* output_format.c: is `f` the name of a format compiled into the hub? */
int cli_format_known(const char *f);

struct hp_merge_stats;
/* merge_stores.c: open the stores at paths[0..n) (any formats; damaged ones warned about, or refused with
 * strict), merge them into out_path in `format` and commit: the pipeline of `merge` and `convert`. An
 * existing out_path is refused unless force. Errors are printed (one line); returns CLI_OK or CLI_FAIL.
 * first_format, when not NULL, gets the first input's format name. *unfinished, when not NULL, gets the
 * number of processes that did not close their logs (the assembly's count: 0 means no input needs
 * cli_merge_report_cut). */
int cli_merge_stores(char *const *paths, size_t n, const char *out_path, const char *format, int force,
                     int strict, int quiet, struct hp_merge_stats *stats, char *first_format,
                     size_t first_format_len, uint64_t *unfinished);
/* `merge --append` (merge_append.c): add the stores at paths[0..n) to the Parquet dataset `store` as new
 * part files; errors printed; CLI_OK or CLI_FAIL. */
int cli_merge_append(char *const *paths, size_t n, const char *store, int strict, int quiet,
                     struct hp_merge_stats *stats, uint64_t *unfinished);

/* options.c: is `arg` -h or --help? */
int cli_is_help(const char *arg);

struct hp_store;
/* store_check.c: the reason an opened store has a table (or a file of one) that could not be read at all,
 * or NULL (a log cut by a crash is read up to its damage: NULL). */
const char *cli_store_unreadable(struct hp_store *s);
/* "CMD: STORE: a table cannot be read: REASON" and CLI_FAIL when cli_store_unreadable; else 0. */
int cli_check_readable(const char *cmd, struct hp_store *s);
/* The store at path opened to read, or NULL after one error line (the store's reason). */
struct hp_store *cli_open_store(const char *path);
/* The same, then checked by cli_check_readable(cmd): NULL (closed) after its error line. */
struct hp_store *cli_open_readable(const char *cmd, const char *path);

/* merge_dir.c: the merge's inputs with every folder of stores (one no format claims) replaced by the stores
 * in it, sorted (and the logs a killed hubprof left in .hubprof-logs.*, with a warning); a foreign entry or
 * an empty folder is one error and CLI_FAIL. Free with cli_merge_inputs_free. */
int cli_merge_inputs(char *const *operands, size_t nops, char ***paths, size_t *npaths);
void cli_merge_inputs_free(char **paths, size_t n);
/* One warning per process of the inputs that did not finish (end unknown): its rank, host, pid, store and
 * the dispatches kept. */
void cli_merge_report_cut(char *const *paths, size_t n);

/* output_format.c, the one rule for output names (docs/cli/output-names.md): the format of an output store,
 * from -F/--output-format (`given`, NULL when not given) and the output's name: NAME.parquet, NAME/ or an
 * existing folder -> parquet; .db .sqlite .sqlite3 .rocpd -> rocpd; .log .hplog -> log; any other name ->
 * `given`, else rocpd. A name that says another format than `given` is one error line ("CMD: ...") and
 * CLI_USAGE; else 0 with *format set. */
int cli_output_format(const char *cmd, const char *path, const char *given, const char **format);
/* The suffix outputs of `format` are named with by default (".db", ".log", ".parquet"); the name says that
 * format back to cli_output_format. */
const char *cli_format_suffix(const char *format);
/* The default output of an application: "APP.hubprof.SUFFIX" in the current directory, from the application's
 * base name; when that exists (and not force) the first free "APP.hubprof-N.SUFFIX" from N = 2, as nsys and
 * perf pick a new name. malloc'd; NULL when out of memory. */
char *cli_default_output(const char *app, const char *format, int force);
/* rank_output.c: trace and profile: cli_output_format, except under an MPI launcher (a rank variable set,
 * more than one rank) where path (default APP.hubprof-ranks) is the folder of the rank stores: it is created
 * and *output set to this rank's DIR/hubprof-HOST-PID-rRANK.SUFFIX (format -F, default rocpd;
 * cli_format_suffix). Otherwise *output = path. */
int cli_run_output(const char *cmd, const char *app, const char *path, const char *given, const char **format,
                   const char **output);
/* output_check.c: the output checked before anything runs: a name, in an existing writable folder, short
 * enough for the store and its temporary; an existing one is refused unless force, and even with force unless
 * it is a regular file or a store (never a device, FIFO, socket, or a folder where a file is meant). 0, or
 * the CLI exit code with the message printed. Used by trace, profile, sample, merge and convert. */
int cli_check_output(const char *path, const char *format, int force);
/* The room a store's folder must have before anything runs: HUBPROF_MIN_FREE_MB MiB (default 64), in bytes.
 */
unsigned long long cli_min_free_bytes(void);
/* 0 when folder has that room (or cannot tell); else one error line naming `what` and the folder, CLI_FAIL.
 */
int cli_folder_room(const char *folder, const char *what);

/* analyze_roofline.c: `analyze --roofline`: the ceilings and the kernels placed under them, printed in
 * format fmt (report_fmt); errors printed. CLI_OK or CLI_FAIL. */
int cli_analyze_roofline(struct hp_store *s, int fmt);

#endif
