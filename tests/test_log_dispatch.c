/* The collector's batch path for dispatch rows (hp_log_write_dispatches) writes exactly the bytes the
 * generic hp_write_dispatch writes: random rows (zeros, negatives, huge values) both ways, compared file
 * to file after the header, and read back equal. The same for its region append (hp_log_write_region),
 * with names of every length from empty to larger than a block. */
/* SPDX-License-Identifier: MIT */
#include "check.h"
#include "fmt_log.h"
#include "hubprof/hub.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 20000

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A value of one of several magnitudes: 0, small, large, negative, extreme. */
static uint64_t pick(uint64_t *s) {
  switch (rnd(s) % 6) {
  case 0: return 0;
  case 1: return rnd(s) % 128;
  case 2: return rnd(s) % 100000;
  case 3: return rnd(s);
  case 4: return (uint64_t) - (int64_t)(rnd(s) % 1000000);
  default: return UINT64_MAX - rnd(s) % 3;
  }
}

static void fill(hp_dispatch *d, uint64_t i, uint64_t *s) {
  *d = (hp_dispatch){.size = sizeof *d,
                     .id = i + 1,
                     .dispatch_id = pick(s),
                     .process_id = pick(s),
                     .thread_id = pick(s),
                     .agent_id = pick(s),
                     .queue_id = pick(s),
                     .kernel_id = pick(s),
                     .grid = {(uint32_t)pick(s), (uint32_t)pick(s), (uint32_t)pick(s)},
                     .workgroup = {(uint32_t)pick(s), (uint32_t)pick(s), (uint32_t)pick(s)},
                     .private_size = (int64_t)pick(s),
                     .group_size = (int64_t)pick(s),
                     .start_ns = (int64_t)pick(s),
                     .end_ns = (int64_t)pick(s),
                     .enqueue_ns = (int64_t)pick(s),
                     .passes = (uint32_t)pick(s),
                     .bytes_accessible = pick(s),
                     .bytes_restored = pick(s),
                     .cold = (uint32_t)pick(s),
                     .region_id = pick(s)};
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)len);
  *n = b && fread(b, 1, (size_t)len, f) == (size_t)len ? (size_t)len : 0;
  fclose(f);
  return b;
}

/* Both logs' records after their headers are the same bytes. */
static void same_records(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  unsigned char *ba = slurp(a, &na), *bb = slurp(b, &nb);
  CHECK(ba && bb && na == nb && na > 4096);
  if (ba && bb && na == nb && na > 4096)
    CHECK_MSG(memcmp(ba + 4096, bb + 4096, na - 4096) == 0, "records differ");
  free(ba);
  free(bb);
}

#define NR 5000
static void regions(const char *tmp) {
  char a[256], b[256];
  snprintf(a, sizeof a, "%s/hubprof-reg-a-%d.log", tmp, (int)getpid());
  snprintf(b, sizeof b, "%s/hubprof-reg-b-%d.log", tmp, (int)getpid());
  hp_store *sa, *sb;
  CHECK_OK(hp_store_open(a, "log", HP_CREATE, &sa), sa);
  CHECK_OK(hp_store_open(b, "log", HP_CREATE, &sb), sb);
  static char text[20000];
  for (size_t i = 0; i + 2 < sizeof text; i += 3) /* "é" and an ASCII letter: valid UTF-8 at every cut of 3 */
    text[i] = (char)0xC3, text[i + 1] = (char)0xA9, text[i + 2] = (char)('a' + i % 26);
  static hp_region rows[NR];
  static char *names[NR];
  uint64_t seed = 0xD1B54A32D192ED03ULL;
  for (size_t i = 0; i < NR; i++) {
    size_t len = 3 * (rnd(&seed) % 4 == 0 ? rnd(&seed) % 6000 : rnd(&seed) % 20);
    names[i] = malloc(len + 1);
    memcpy(names[i], text, len);
    names[i][len] = 0;
    rows[i] = (hp_region){.size = sizeof rows[i],
                          .id = pick(&seed),
                          .process_id = pick(&seed),
                          .thread_id = pick(&seed),
                          .name = names[i],
                          .category = i % 3 ? "hubprof" : "",
                          .start_ns = (int64_t)pick(&seed),
                          .end_ns = (int64_t)pick(&seed)};
    CHECK_OK(hp_write_region(sa, &rows[i]), sa);
    CHECK_OK(hp_log_write_region(sb, &rows[i], len, strlen(rows[i].category)), sb);
  }
  CHECK_OK(hp_store_close(sa), (hp_store *)NULL);
  CHECK_OK(hp_store_close(sb), (hp_store *)NULL);
  same_records(a, b);
  hp_store *r;
  CHECK_OK(hp_store_open(b, NULL, HP_READ, &r), r);
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_REGION, &c), r);
  hp_region g = {.size = sizeof g};
  size_t i = 0, same = 0;
  while (hp_cursor_next(c, &g) == HP_OK && i < NR) {
    const hp_region *w = &rows[i++];
    same += g.id == w->id && g.process_id == w->process_id && g.thread_id == w->thread_id &&
            !strcmp(g.name, w->name) && !strcmp(g.category, w->category) && g.start_ns == w->start_ns &&
            g.end_ns == w->end_ns;
  }
  CHECK_EQ_U64(i, NR);
  CHECK_EQ_U64(same, NR);
  hp_cursor_close(c);
  hp_store_close(r);
  for (i = 0; i < NR; i++)
    free(names[i]);
  unlink(a);
  unlink(b);
}

int main(void) {
  char a[256], b[256];
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(a, sizeof a, "%s/hubprof-disp-a-%d.log", tmp, (int)getpid());
  snprintf(b, sizeof b, "%s/hubprof-disp-b-%d.log", tmp, (int)getpid());
  hp_store *sa, *sb;
  CHECK_OK(hp_store_open(a, "log", HP_CREATE, &sa), sa);
  CHECK_OK(hp_store_open(b, "log", HP_CREATE, &sb), sb);
  static hp_dispatch rows[N];
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  for (uint64_t i = 0; i < N; i++)
    fill(&rows[i], i, &seed);
  for (size_t i = 0; i < N; i++)
    CHECK_OK(hp_write_dispatch(sa, &rows[i]), sa);
  size_t written = 0;
  for (size_t i = 0; i < N; i += 37) { /* batches of odd sizes, as a harvest makes them */
    size_t k = N - i < 37 ? N - i : 37, w = 0;
    CHECK_OK(hp_log_write_dispatches(sb, rows + i, k, &w), sb);
    written += w;
  }
  CHECK_EQ_U64(written, N);
  CHECK_OK(hp_store_close(sa), (hp_store *)NULL);
  CHECK_OK(hp_store_close(sb), (hp_store *)NULL);
  same_records(a, b); /* the header holds the creation time and pid: what follows it */
  hp_store *r;
  CHECK_OK(hp_store_open(b, NULL, HP_READ, &r), r);
  hp_cursor *c;
  CHECK_OK(hp_cursor_open(r, HP_TABLE_DISPATCH, &c), r);
  hp_dispatch d = {.size = sizeof d};
  size_t i = 0, same = 0;
  while (hp_cursor_next(c, &d) == HP_OK && i < N)
    same += memcmp(&d, &rows[i++], sizeof d) == 0;
  CHECK_EQ_U64(i, N);
  CHECK_EQ_U64(same, N);
  hp_cursor_close(c);
  hp_store_close(r);
  unlink(a);
  unlink(b);
  regions(tmp);
  return check_report("test_log_dispatch");
}
