/* `hubprof roofline`: measure every OpenCL and CUDA device's ceilings with hubprof's own micro-benchmarks
 * (roofline_cl.c, roofline_cuda.c; the cache levels: roofline_cache.c) and print one row per device and
 * ceiling: device,ceiling,value,unit,note.
 */
/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "options.h"
#include "report.h"
#include "roofline.h"

#include "hubprof/hub.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const platforms[] = {"all", "opencl", "cuda", NULL};
enum { PLAT_ALL, PLAT_OPENCL, PLAT_CUDA };

static const cli_opt roofline_opts[] = {
    {.name = "device",
     .kind = CLI_OPT_STRING,
     .value = "GLOB",
     .help =
         "only the devices whose name matches GLOB (OpenCL: CL_DEVICE_NAME; CUDA: the product name or the "
         "chip name, e.g. GH100) (default: every device)",
     .check = cli_check_glob},
    {.name = "platform",
     .kind = CLI_OPT_ENUM,
     .choices = platforms,
     .def = "all",
     .help = "which devices: all (CUDA devices through CUDA, the others through OpenCL), opencl or cuda"},
    CLI_OPT_REPORT_FORMAT("table, csv or json"),
    {.name = "output",
     .short_name = 'o',
     .kind = CLI_OPT_STRING,
     .value = "STORE",
     .help = "also write the ceilings (with the node and devices) to a new store; its format from the name "
             "(.db rocpd, .parquet or a folder, .log)"},
    {.name = "force", .short_name = 'f', .kind = CLI_OPT_FLAG, .help = "replace the -o STORE if it exists"},
    {.name = "store",
     .kind = CLI_OPT_STRING,
     .value = "STORE",
     .help = "also add the ceilings to an existing store (a profile of this machine), in its format, next to "
             "its devices"},
    {.name = "quick",
     .kind = CLI_OPT_FLAG,
     .help = "small sizes and few repetitions: a fast, rough figure (tests); also HUBPROF_ROOFLINE_QUICK=1"},
    {0},
};

static const cli_opt *const roofline_tables[] = {roofline_opts, cli_opts_quiet, cli_opts_common, NULL};

CLI_COMMAND(
    roofline,
    .usage = "roofline [--device GLOB] [--platform P] [--format F] [-o STORE [-f]] [--store STORE] [--quick] "
             "[-q]",
    .about =
        "Measure the ceilings of every OpenCL and CUDA device with hubprof's own micro-benchmarks: FLOP/s\n"
        "for fp64 (OpenCL: with cl_khr_fp64), fp32, fp16 (OpenCL: with cl_khr_fp16), int32 operations per\n"
        "second, global-memory bandwidth (dram) and each cache level's read bandwidth (l1, l2, l3: the\n"
        "host's caches on a CPU device, L1/shared memory and L2 on CUDA). One row per device and ceiling; a\n"
        "ceiling a device lacks, or a cache level not told apart from the one outside it, has no value and "
        "a\n"
        "note saying why. Units: GFLOP/s, GOP/s (int32), GB/s (docs/cli/roofline.md).\n"
        "With -o or --store the ceilings are kept in a store (its ceiling table), where `hubprof analyze\n"
        "--roofline` and `hubprof report` place the profile's kernels under them.",
    .tables = roofline_tables)

static int roofline(const cli_args *args) {
  int fmt = cli_enum(args, "format", REPORT_TABLE);
  const char *qenv = getenv("HUBPROF_ROOFLINE_QUICK");
  rl_opts o = {.device_glob = cli_str(args, "device"),
               .quick = cli_given(args, "quick") || (qenv && qenv[0] && qenv[0] != '0'),
               .quiet = cli_given(args, "quiet") > 0};
  if (args->noperands) {
    cli_error("roofline: unexpected argument '%s' (see 'hubprof roofline --help')", args->operands[0]);
    return CLI_USAGE;
  }
  /* the stores are checked before measuring (seconds): a bad name fails at once */
  const char *out = cli_str(args, "output"), *add = cli_str(args, "store"), *out_fmt = NULL;
  if (out) {
    int rc = cli_output_format("roofline", out, NULL, &out_fmt);
    if (!rc) rc = cli_check_output(out, out_fmt, cli_given(args, "force"));
    if (rc) return rc;
  }
  if (add && rl_store_check_append(add)) return CLI_FAIL;
  if (out && add && strcmp(out, add) == 0) {
    cli_error("roofline: %s: is both -o and --store", out);
    return CLI_USAGE;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t when = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  char method[64];
  snprintf(method, sizeof method, "hubprof roofline %s%s", hp_version(), o.quick ? " --quick" : "");
  /* CUDA devices first: OpenCL then leaves NVIDIA's out (the same GPUs) */
  int plat = cli_enum(args, "platform", PLAT_ALL);
  rl_ceiling *rows = NULL, *crows = NULL;
  size_t n = 0, cn = 0;
  char err[1024] = "", cerr[1024] = "";
  int crc = plat != PLAT_OPENCL ? rl_measure_cuda(&o, &crows, &cn, cerr, sizeof cerr) : 0;
  o.skip_nvidia = cn > 0;
  int ofail = plat != PLAT_CUDA && rl_measure(&o, &rows, &n, err, sizeof err);
  if ((plat == PLAT_CUDA && crc) || (plat == PLAT_OPENCL && ofail) || (crc && ofail)) {
    if (ofail) cli_error("%s", err);
    if (crc && (plat == PLAT_CUDA || crc == -2)) cli_error("%s", cerr); /* not: no CUDA here at all */
    free(rows);
    free(crows);
    return CLI_FAIL;
  }
  if (cn) { /* one list: the CUDA devices' rows, then OpenCL's */
    rl_ceiling *all = realloc(crows, (cn + n) * sizeof *all);
    if (!all) {
      cli_error("out of memory");
      free(rows);
      free(crows);
      return CLI_FAIL;
    }
    if (n) memcpy(all + cn, rows, n * sizeof *rows);
    free(rows);
    rows = all;
    n += cn;
  }
  if ((out && rl_store_new(out, out_fmt, rows, n, method, when)) ||
      (add && rl_store_append(add, rows, n, method, when))) {
    free(rows);
    return CLI_FAIL;
  }
  static const report_col table_cols[] = {
      {"DEVICE", 0, 1}, {"CEILING", 0, 0}, {"VALUE", 1, 0}, {"UNIT", 0, 0}, {"NOTE", 0, 1}};
  static const report_col data_cols[] = {
      {"device", 0, 0}, {"ceiling", 0, 0}, {"value", 1, 0}, {"unit", 0, 0}, {"note", 0, 0}};
  report *r = report_new(fmt == REPORT_TABLE ? table_cols : data_cols, 5);
  int rc = r ? CLI_OK : CLI_FAIL;
  for (size_t i = 0; i < n && rc == CLI_OK; i++) {
    char value[64] = "";
    if (rows[i].value >= 0)
      snprintf(value, sizeof value, "%.2f", rows[i].value);
    else if (fmt == REPORT_TABLE)
      snprintf(value, sizeof value, "-");
    const char *cells[] = {rows[i].device, rows[i].ceiling, value, rows[i].unit, rows[i].note};
    if (report_add(r, cells)) rc = CLI_FAIL;
  }
  if (rc == CLI_OK)
    report_print(r, (report_fmt)fmt, report_term_width(), stdout);
  else
    cli_error("out of memory");
  report_free(r);
  free(rows);
  return rc;
}

int cmd_roofline(int argc, char **argv) {
  cli_args args;
  int rc = cli_parse(&roofline_spec, argc, argv, &args);
  if (rc != CLI_PROCEED) return rc;
  rc = cli_finish_stdout(roofline(&args));
  cli_args_free(&args);
  return rc;
}
