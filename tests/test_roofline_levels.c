/* Tests of `hubprof roofline`'s cache levels (src/cli/roofline_cache.c, compiled in): the host's data caches
 * read from a sysfs-like folder, the working set of each level, and the rule that drops a level whose
 * bandwidth cannot be told apart from the level outside it (the timing itself: tests/cli/test_roofline.sh).
 */
/* SPDX-License-Identifier: MIT */
#include "../src/cli/roofline_cache.c"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(int index, const char *file, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/index%d", root, index);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/index%d/%s", root, index, file);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "%s\n", text);
  fclose(f);
}

static void cache(int index, const char *level, const char *type, const char *size) {
  put(index, "level", level);
  put(index, "type", type);
  put(index, "size", size);
}

static void cleanup(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
}

static void test_host_caches(void) {
  snprintf(root, sizeof root, "/tmp/hp-levels.XXXXXX");
  CHECK(mkdtemp(root) != NULL);
  setenv("HUBPROF_ROOFLINE_CACHES", root, 1);
  rl_level lv[RL_MAX_LEVELS];
  CHECK(rl_host_caches(lv, RL_MAX_LEVELS) == 0); /* an empty folder: no level */
  /* listed out of order, with the instruction cache, a second unified L2 entry, an unreadable size and a
   * level out of range, as a machine's sysfs might list them */
  cache(0, "3", "Unified", "307200K");
  cache(1, "1", "Instruction", "32K");
  cache(2, "1", "Data", "48K");
  cache(3, "2", "Unified", "2048K");
  cache(4, "2", "Unified", "4096K");
  cache(5, "4", "Unified", "many");
  cache(6, "5", "Unified", "1G");
  size_t n = rl_host_caches(lv, RL_MAX_LEVELS);
  CHECK(n == 3);
  CHECK(n == 3 && lv[0].level == 1 && lv[0].size == 48 << 10);
  CHECK(n == 3 && lv[1].level == 2 && lv[1].size == 2048 << 10);
  CHECK(n == 3 && lv[2].level == 3 && lv[2].size == (int64_t)307200 << 10);
  CHECK(rl_host_caches(lv, 2) == 2 && lv[0].level == 1 && lv[1].level == 3); /* the first two listed fit */
  cache(7, "4", "Unified", "1M");
  CHECK(rl_host_caches(lv, RL_MAX_LEVELS) == 4 && lv[3].level == 4 && lv[3].size == 1 << 20);
  unsetenv("HUBPROF_ROOFLINE_CACHES");
  cleanup();
}

static void test_working_sets(void) {
  char why[192] = "";
  rl_level lv[] = {{1, 48 << 10}, {2, 2 << 20}, {3, (int64_t)300 << 20}, {4, 16 << 20}};
  CHECK(rl_working_set(lv, 0, why, sizeof why) == 24 << 10);           /* half of L1 */
  CHECK(rl_working_set(lv, 1, why, sizeof why) == 256 << 10);          /* L2 / 8 (above 4 x L1) */
  CHECK(rl_working_set(lv, 2, why, sizeof why) == (int64_t)300 << 17); /* L3 / 8 (above 4 x L2) */
  CHECK(why[0] == 0);
  CHECK(rl_working_set(lv, 3, why, sizeof why) == 0); /* an L4 smaller than L3: none */
  CHECK_MSG(
      strcmp(why, "l4 (16 MiB) is under 8x l3 (300 MiB): no working set well inside it and outside l3") == 0,
      "%s\n", why);
  rl_level small[] = {{1, 32 << 10}, {2, 1 << 20}, {3, 4 << 20}};
  CHECK(rl_working_set(small, 1, why, sizeof why) == 128 << 10); /* 4 x L1 */
  CHECK(rl_working_set(small, 2, why, sizeof why) == 0);         /* 4 x L2 is all of L3 */
  CHECK(strstr(why, "l3 (4 MiB) is under 8x l2 (1 MiB)") == why);
  char t[32];
  rl_size_text(48 << 10, t, sizeof t);
  CHECK(strcmp(t, "48 KiB") == 0);
  rl_size_text((int64_t)300 << 17, t, sizeof t);
  CHECK(strcmp(t, "37.5 MiB") == 0);
  CHECK(strcmp(rl_level_name(3), "l3") == 0 && strcmp(rl_level_name(9), "cache") == 0);
}

static rl_ceiling lv(const char *name, double value) {
  rl_ceiling c = {.ceiling = name, .unit = "GB/s", .value = value};
  snprintf(c.note, sizeof c.note, "measured");
  return c;
}

static void test_order(void) {
  /* well apart: all kept */
  rl_ceiling a[] = {lv("l1", 400), lv("l2", 150), lv("l3", 40)};
  rl_order_levels(a, 3, 12);
  CHECK(a[0].value == 400 && a[1].value == 150 && a[2].value == 40);
  CHECK(strcmp(a[2].note, "measured") == 0);
  /* l3 no faster than dram (a last-level cache the measurement could not reach): dropped, with the figures;
   * l2 then compared with dram */
  rl_ceiling b[] = {lv("l1", 400), lv("l2", 150), lv("l3", 13)};
  rl_order_levels(b, 3, 12);
  CHECK(b[0].value == 400 && b[1].value == 150 && b[2].value == -1);
  CHECK_MSG(strcmp(b[2].note, "not told apart from dram (13.00 GB/s against 12.00): not kept; measured") == 0,
            "%s\n", b[2].note);
  /* l2 slower than l3 (a burst of load): the inner one of the pair goes, l1 is compared with l3 */
  rl_ceiling c[] = {lv("l1", 400), lv("l2", 30), lv("l3", 40)};
  rl_order_levels(c, 3, 12);
  CHECK(c[0].value == 400 && c[1].value == -1 && c[2].value == 40);
  CHECK(strstr(c[1].note, "not told apart from l3 (30.00 GB/s against 40.00)") == c[1].note);
  /* a level not measured stays as it is; without dram the outermost level is kept */
  rl_ceiling d[] = {lv("l1", 100), lv("l2", -1)};
  snprintf(d[1].note, sizeof d[1].note, "no working set");
  rl_order_levels(d, 2, -1);
  CHECK(d[0].value == 100 && d[1].value == -1 && strcmp(d[1].note, "no working set") == 0);
  /* just under the margin is not apart; at it, it is */
  rl_ceiling e[] = {lv("l1", RL_APART * 100 - 0.01), lv("l2", 100)};
  rl_order_levels(e, 2, 50);
  CHECK(e[1].value == 100 && e[0].value == -1);
}

int main(void) {
  test_host_caches();
  test_working_sets();
  test_order();
  printf("test_roofline_levels: %d passed, %d failed\n", check_passed, check_failed);
  return check_failed != 0;
}
