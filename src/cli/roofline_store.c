/* `hubprof roofline -o STORE` and `--store STORE`: the measured ceilings as hub rows (the node, one agent per
 * device, the ceilings) in a new store, or added to an existing profile by a merge, so that they name the
 * profile's own agent (merge de-duplicates nodes and agents) and the store keeps its format. */
/* SPDX-License-Identifier: MIT */
#include "../common/hu_launch.h"
#include "cli.h"
#include "roofline.h"

#include "hubprof/hub.h"
#include "hubprof/parquet.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void machine_id(char *buf, size_t len) {
  buf[0] = 0;
  int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, len - 1);
  close(fd);
  buf[n > 0 ? n : 0] = 0;
  char *nl = strchr(buf, '\n');
  if (nl) *nl = 0;
}

/* Whether rows a and b are of one device (a device's rows come together). */
static int same_device(const rl_ceiling *a, const rl_ceiling *b) {
  return a->type == b->type && a->device_index == b->device_index && strcmp(a->device, b->device) == 0 &&
         strcmp(a->vendor, b->vendor) == 0 && strcmp(a->runtime, b->runtime) == 0;
}

/* The node (as the collector writes it: merge matches it by host name and machine id), one agent per device
 * (a device's rows come together) and every ceiling. */
static hp_status write_rows(hp_store *s, const rl_ceiling *rows, size_t n, const char *method, int64_t when) {
  hu_launch l;
  hu_launch_read(&l);
  struct utsname u;
  memset(&u, 0, sizeof u);
  uname(&u);
  char mid[64];
  machine_id(mid, sizeof mid);
  hp_node node = {.size = sizeof node,
                  .id = 1,
                  .hostname = l.host,
                  .machine_id = mid,
                  .system_name = u.sysname,
                  .release = u.release,
                  .version = u.version,
                  .machine = u.machine};
  hp_status st = hp_write_node(s, &node);
  uint64_t agent = 0;
  for (size_t i = 0; i < n && st == HP_OK; i++) {
    const rl_ceiling *c = &rows[i];
    if (i == 0 || !same_device(c, &rows[i - 1])) {
      hp_agent a = {.size = sizeof a,
                    .id = ++agent,
                    .node_id = 1,
                    .type = c->type,
                    .device_index = c->device_index,
                    .vendor = c->vendor,
                    .name = c->device,
                    .product_name = c->device,
                    .runtime = c->runtime,
                    .compute_units = c->compute_units,
                    .max_clock_mhz = c->max_clock_mhz,
                    .global_mem_bytes = c->global_mem_bytes,
                    .local_mem_bytes = c->local_mem_bytes};
      st = hp_write_agent(s, &a);
    }
    hp_ceiling r = {.size = sizeof r,
                    .id = i + 1,
                    .agent_id = agent,
                    .name = c->ceiling,
                    .value = c->value,
                    .unit = c->unit,
                    .method = method,
                    .note = c->note,
                    .measured_ns = when};
    if (st == HP_OK) st = hp_write_ceiling(s, &r);
  }
  return st;
}

static const char *why(hp_store *s, hp_status st) {
  return s && hp_store_error(s)[0] ? hp_store_error(s) : hp_status_str(st);
}

int rl_store_check_append(const char *store) {
  hp_store *s = cli_open_readable("roofline --store", store);
  if (!s) return CLI_FAIL;
  /* rewritten in place: never a store read only up to damage (a log cut by a crash, or still being written
   * by a running collector), whose unreadable part the rewrite would drop */
  if (hp_store_damage(s, NULL) != HP_OK) {
    cli_error("roofline --store: %s: damaged or still being written, not rewriting it (%s; 'hubprof convert' "
              "keeps what is readable)",
              store, hp_store_error(s));
    hp_store_close(s);
    return CLI_FAIL;
  }
  hp_store_close(s);
  return CLI_OK;
}

int rl_store_new(const char *path, const char *format, const rl_ceiling *rows, size_t n, const char *method,
                 int64_t when) {
  hp_store *s = NULL;
  hp_status st = hp_store_open(path, format, HP_CREATE, &s);
  if (st == HP_OK) st = write_rows(s, rows, n, method, when);
  if (st == HP_OK) st = hp_write_metadata(s, "tool_version", hp_version());
  if (st == HP_OK) st = hp_store_commit(s);
  if (st != HP_OK) {
    cli_error("roofline: %s: %s", path, why(s, st));
    hp_store_abort(s);
    return CLI_FAIL;
  }
  hp_store_close(s);
  return CLI_OK;
}

int rl_store_append(const char *store, const rl_ceiling *rows, size_t n, const char *method, int64_t when) {
  /* the new rows go to a hidden log beside the store, then the store and that log are merged into the
   * store's own path, in its format (a Parquet dataset keeps its part files: hp_parquet_set_append) */
  char dir[PATH_MAX], tmp[PATH_MAX + 64];
  snprintf(dir, sizeof dir, "%s", store);
  size_t dl = strlen(dir);
  while (dl > 1 && dir[dl - 1] == '/')
    dir[--dl] = 0;
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = 0;
  else
    *slash = 0;
  snprintf(tmp, sizeof tmp, "%s/.hubprof-roofline.%ld.log", dir, (long)getpid());
  hp_store *t = NULL, *in = NULL, *tin = NULL, *out = NULL;
  hp_status st = hp_store_open(tmp, "log", HP_CREATE, &t);
  if (st == HP_OK) st = write_rows(t, rows, n, method, when);
  if (st == HP_OK) st = hp_store_commit(t);
  if (st != HP_OK) {
    cli_error("roofline --store: %s: %s", tmp, why(t, st));
    hp_store_abort(t);
    unlink(tmp);
    return CLI_FAIL;
  }
  hp_store_close(t);
  char format[32] = "";
  const char *failed = store;
  hp_store *bad = NULL;
  st = hp_store_open(store, NULL, HP_READ, &in);
  if (st != HP_OK) bad = in;
  if (st == HP_OK) {
    snprintf(format, sizeof format, "%s", hp_store_format(in));
    st = hp_store_open(tmp, "log", HP_READ, &tin);
    if (st != HP_OK) {
      failed = tmp;
      bad = tin;
    }
  }
  if (st == HP_OK && (st = hp_store_open(store, format, HP_CREATE, &out)) != HP_OK) bad = out;
  if (st == HP_OK && strcmp(format, "parquet") == 0 && (st = hp_parquet_set_append(out)) != HP_OK) bad = out;
  if (st == HP_OK) {
    hp_store *ins[2] = {in, tin};
    hp_merge_stats stats = {.size = sizeof stats};
    if ((st = hp_merge(out, ins, 2, &stats)) != HP_OK) bad = out;
  }
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", why(bad, st));
  hp_store_close(in);
  hp_store_close(tin);
  if (st == HP_OK && (st = hp_store_commit(out)) != HP_OK) {
    bad = out;
    snprintf(msg, sizeof msg, "%s", why(bad, st));
  }
  unlink(tmp);
  if (st != HP_OK) {
    cli_error("roofline --store: %s: the ceilings were not added (the store is unchanged): %s", failed, msg);
    hp_store_abort(out);
    return CLI_FAIL;
  }
  hp_store_close(out);
  return CLI_OK;
}

void rl_note(rl_ceiling *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->note, sizeof c->note, fmt, ap);
  va_end(ap);
}
