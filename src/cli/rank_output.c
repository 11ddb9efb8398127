/* The output of trace and profile under an MPI launcher: when hubprof itself runs as one rank
 * (`mpirun -np N hubprof trace -o DIR -- APP`), -o names a folder and each rank writes its own store
 * DIR/hubprof-HOST-PID-rRANK.EXT there, with no coordination between ranks (docs/cluster.md). */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "../common/hu_launch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_run_output(const char *cmd, const char *app, const char *path, const char *given, const char **format,
                   const char **output) {
  static char rank_path[PATH_MAX];
  hu_launch l;
  *output = path;
  /* a launcher's rank and a job of more than one: each rank its own file (a job of one behaves as usual) */
  if (!hu_launch_read(&l) || l.size == 1) return cli_output_format(cmd, path, given, format);
  if (given && !cli_format_known(given)) return cli_output_format(cmd, path, given, format);
  *format = given ? given : "rocpd";
  char dir[PATH_MAX];
  if (path) {
    snprintf(dir, sizeof dir, "%s", path);
  } else { /* APP.hubprof-ranks beside the current directory */
    const char *base = strrchr(app, '/');
    snprintf(dir, sizeof dir, "%s.hubprof-ranks", base ? base + 1 : app);
  }
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    dir[--n] = 0;
  if (!n) {
    cli_error("%s: the output name is empty (give the folder of the rank stores with -o)", cmd);
    return CLI_USAGE;
  }
  struct stat sb;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) { /* every rank tries; the first one makes it */
    cli_error("%s: rank %ld: cannot create the folder %s for the rank stores: %s", cmd, l.rank, dir,
              strerror(errno));
    return CLI_FAIL;
  }
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    cli_error(
        "%s: rank %ld: %s is not a folder: under an MPI launcher -o names the folder of the rank stores", cmd,
        l.rank, dir);
    return CLI_FAIL;
  }
  struct stat manifest;
  char probe[PATH_MAX + 32];
  snprintf(probe, sizeof probe, "%s/README.txt", dir);
  if (stat(probe, &manifest) == 0) { /* a Parquet dataset's folder is a store, not a folder of stores */
    cli_error("%s: rank %ld: %s is a Parquet store; under an MPI launcher -o names the folder of the rank "
              "stores (choose another name)",
              cmd, l.rank, dir);
    return CLI_FAIL;
  }
  int w = snprintf(rank_path, sizeof rank_path, "%s/hubprof-%s-%ld-r%ld%s", dir, l.host, (long)getpid(),
                   l.rank, cli_format_suffix(*format));
  if (w < 0 || (size_t)w >= sizeof rank_path) {
    cli_error("%s: rank %ld: the rank store's name in %s is too long", cmd, l.rank, dir);
    return CLI_FAIL;
  }
  *output = rank_path;
  return 0;
}
