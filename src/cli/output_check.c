/* The output of every command that writes a store (trace, profile, sample, merge, convert), checked before
 * anything runs: a name, in a folder where a file can be made (tried), with room, short enough, and replaced
 * only with --force and a store. */
/* SPDX-License-Identifier: MIT */
#include "cli.h"

#include "hubprof/hub.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CLI_MIN_FREE_MB 64 /* room a store's folder must have before anything runs (HUBPROF_MIN_FREE_MB) */

unsigned long long cli_min_free_bytes(void) {
  const char *e = getenv("HUBPROF_MIN_FREE_MB");
  char *end = NULL;
  unsigned long long mb = e && *e ? strtoull(e, &end, 10) : CLI_MIN_FREE_MB;
  if (e && *e && (!end || *end)) mb = CLI_MIN_FREE_MB;
  return mb << 20;
}

int cli_folder_room(const char *folder, const char *what) {
  struct statvfs v;
  if (statvfs(folder, &v) != 0) return 0; /* no answer: the write itself will tell */
  unsigned long long free_b = (unsigned long long)v.f_bavail * v.f_frsize, need = cli_min_free_bytes();
  if (free_b >= need) return 0;
  cli_error("%s: folder %s has %llu MiB free, less than the %llu MiB hubprof wants before it starts (set "
            "HUBPROF_MIN_FREE_MB to change it)",
            what, folder, free_b >> 20, need >> 20);
  return CLI_FAIL;
}

/* Whether a file can be made in folder: one is made and removed (permissions alone do not say: root on /proc,
 * a read-only mount). An unnamed one (O_TMPFILE) where the file system can, so nothing watching the folder
 * sees a name come and go; a named one elsewhere. 0, or the error number. */
static int can_create(const char *folder) {
#ifdef O_TMPFILE
  int tfd = open(folder, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (tfd >= 0) {
    close(tfd);
    return 0;
  }
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return errno;
#endif
  char probe[PATH_MAX];
  if (snprintf(probe, sizeof probe, "%s/.hubprof-probe.%ld", folder, (long)getpid()) >= (int)sizeof probe)
    return ENAMETOOLONG;
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno == EEXIST ? 0 : errno;
  close(fd);
  unlink(probe);
  return 0;
}

int cli_check_output(const char *path, const char *format, int force) {
  if (!path || !*path) {
    cli_error("the output name is empty (give one with -o)");
    return CLI_USAGE;
  }
  char dir[PATH_MAX];
  size_t pl = strlen(path);
  if (format && !strcmp(format, "parquet") && pl > 1 && path[pl - 1] == '/' && pl < sizeof dir) {
    snprintf(dir, sizeof dir, "%s", path); /* "out.parquet/" names the folder out.parquet */
    while (pl > 1 && dir[pl - 1] == '/')
      dir[--pl] = 0;
    path = dir;
  }
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    cli_error("%s: names a folder, not an output file", path);
    return CLI_FAIL;
  }
  /* the hub writes a temporary ".NAME.tmp.PID.N" beside the output: both names must fit */
  if (strlen(base) + 40 > NAME_MAX || strlen(path) + 40 >= PATH_MAX) {
    cli_error("%s: name too long (at most %d bytes for the file name)", path, NAME_MAX - 40);
    return CLI_FAIL;
  }
  char parent[PATH_MAX];
  if (!slash)
    snprintf(parent, sizeof parent, ".");
  else if (slash == path)
    snprintf(parent, sizeof parent, "/");
  else
    snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
  struct stat sb;
  if (stat(parent, &sb) != 0) {
    cli_error("%s: cannot write here: folder %s: %s", path, parent, strerror(errno));
    return CLI_FAIL;
  }
  if (!S_ISDIR(sb.st_mode)) {
    cli_error("%s: cannot write here: %s is not a folder", path, parent);
    return CLI_FAIL;
  }
  if (access(parent, W_OK | X_OK) != 0) {
    cli_error("%s: cannot write here: folder %s: %s", path, parent, strerror(errno));
    return CLI_FAIL;
  }
  int e = can_create(parent);
  if (e) {
    cli_error("%s: cannot write here: no file can be made in folder %s (%s)", path, parent, strerror(e));
    return CLI_FAIL;
  }
  if (cli_folder_room(parent, path)) return CLI_FAIL;
  if (lstat(path, &sb) != 0) {
    if (errno == ENOENT) return 0;
    cli_error("%s: %s", path, strerror(errno));
    return CLI_FAIL;
  }
  if (S_ISLNK(sb.st_mode) && stat(path, &sb) != 0) { /* a dangling link: replaced only with --force */
    if (force) return 0;
    cli_error("%s: already exists (a link; use --force to replace it, or -o to choose another name)", path);
    return CLI_FAIL;
  }
  const char *what = S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                     : S_ISFIFO(sb.st_mode)                     ? "a FIFO"
                     : S_ISSOCK(sb.st_mode)                     ? "a socket"
                                                                : NULL;
  if (what) {
    cli_error("%s: is %s, not a file hubprof can write a store to", path, what);
    return CLI_FAIL;
  }
  int is_dir = S_ISDIR(sb.st_mode);
  if (is_dir && (!format || strcmp(format, "parquet") != 0)) {
    cli_error("%s: is a folder; a %s store is a file (choose another name with -o)", path,
              format ? format : "rocpd");
    return CLI_FAIL;
  }
  if (!force) {
    cli_error("%s: already exists (use --force to replace it, or -o to choose another name)", path);
    return CLI_FAIL;
  }
  if (is_dir) { /* --force replaces a folder only when it is a store */
    hp_store *s = NULL;
    hp_status st = hp_store_open(path, "parquet", HP_READ, &s);
    hp_store_abort(s);
    if (st != HP_OK && st != HP_ERR_TRUNCATED && st != HP_ERR_CORRUPT) {
      cli_error("%s: is a folder that is not a hubprof store: --force replaces only a file or a store", path);
      return CLI_FAIL;
    }
  }
  return 0;
}
