/* `hubprof roofline`'s cache levels (roofline.h): the host CPU's data caches as sysfs describes them, the
 * working set that measures each level, and the rule that keeps a level's bandwidth only where it reads
 * faster than the level outside it (roofline_cl.c and roofline_cuda.c measure them). */
/* SPDX-License-Identifier: MIT */
#include "roofline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of DIR/NAME into buf; 0, or -1 when it cannot be read. */
static int read_line(const char *dir, const char *name, char *buf, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  int ok = fgets(buf, (int)len, f) != NULL;
  fclose(f);
  if (!ok) return -1;
  buf[strcspn(buf, "\r\n")] = 0;
  return 0;
}

/* sysfs's "48K", "2048K", "300M" (or a plain byte count): bytes, or -1. */
static int64_t parse_size(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || v <= 0) return -1;
  int64_t mul = *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : *end == 'G' ? 1024 * 1024 * 1024 : 1;
  if (*end && mul != 1) end++;
  if (*end) return -1;
  if (v > INT64_MAX / mul) return -1;
  return (int64_t)v * mul;
}

size_t rl_host_caches(rl_level *out, size_t max) {
  const char *dir = getenv("HUBPROF_ROOFLINE_CACHES");
  if (!dir || !*dir) dir = "/sys/devices/system/cpu/cpu0/cache";
  size_t n = 0;
  for (int i = 0; i < 32; i++) {
    char sub[4096], buf[64];
    snprintf(sub, sizeof sub, "%s/index%d", dir, i);
    if (read_line(sub, "type", buf, sizeof buf)) continue;
    if (strcmp(buf, "Data") != 0 && strcmp(buf, "Unified") != 0) continue; /* not the instruction cache */
    if (read_line(sub, "level", buf, sizeof buf)) continue;
    int level = atoi(buf);
    if (level < 1 || level > RL_MAX_LEVELS) continue;
    if (read_line(sub, "size", buf, sizeof buf)) continue;
    int64_t size = parse_size(buf);
    if (size <= 0) continue;
    size_t k = 0;
    while (k < n && out[k].level != level)
      k++;
    if (k < n) continue; /* one per level (the first index listed) */
    if (n == max) break;
    out[n++] = (rl_level){level, size};
  }
  for (size_t a = 1; a < n; a++) /* innermost first */
    for (size_t b = a; b > 0 && out[b - 1].level > out[b].level; b--) {
      rl_level t = out[b];
      out[b] = out[b - 1];
      out[b - 1] = t;
    }
  return n;
}

const char *rl_level_name(int level) {
  static const char *const names[RL_MAX_LEVELS] = {"l1", "l2", "l3", "l4"};
  return level >= 1 && level <= RL_MAX_LEVELS ? names[level - 1] : "cache";
}

void rl_size_text(int64_t bytes, char *buf, size_t len) {
  if (bytes >= (int64_t)1 << 20 && bytes % ((int64_t)1 << 20) == 0)
    snprintf(buf, len, "%lld MiB", (long long)(bytes >> 20));
  else if (bytes >= (int64_t)1 << 20)
    snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
  else
    snprintf(buf, len, "%lld KiB", (long long)(bytes >> 10));
}

int64_t rl_working_set(const rl_level *levels, size_t i, char *why, size_t len) {
  int64_t size = levels[i].size;
  if (i == 0) return size / 2;
  int64_t inner = levels[i - 1].size, w = 4 * inner;
  if (w < size / 8) w = size / 8;
  if (w > size / 2) {
    char a[32], b[32];
    rl_size_text(size, a, sizeof a);
    rl_size_text(inner, b, sizeof b);
    snprintf(why, len, "%s (%s) is under 8x %s (%s): no working set well inside it and outside %s",
             rl_level_name(levels[i].level), a, rl_level_name(levels[i - 1].level), b,
             rl_level_name(levels[i - 1].level));
    return 0;
  }
  return w;
}

void rl_order_levels(rl_ceiling *levels, size_t n, double dram) {
  const char *outer = dram > 0 ? "dram" : NULL;
  double outer_v = dram;
  for (size_t k = n; k-- > 0;) {
    rl_ceiling *c = &levels[k];
    if (!(c->value >= 0)) continue;
    if (outer && c->value < RL_APART * outer_v) {
      char was[sizeof c->note];
      memcpy(was, c->note, sizeof was);
      snprintf(c->note, sizeof c->note, "not told apart from %s (%.2f GB/s against %.2f): not kept; %.120s",
               outer, c->value, outer_v, was);
      c->value = -1;
      continue;
    }
    outer = c->ceiling;
    outer_v = c->value;
  }
}
