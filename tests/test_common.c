/* Tests of src/common (hu_*): buffers and array growth (overflow refused), varints and words at their edges
 * (round trips, cut-short and over-long input), hashes (known FNV-1a values, string and byte forms agree),
 * the JSON reader (every kind of value, escapes, surrogates, the errors) and writer (round trip of every
 * byte), id maps and the interner under growth, the directory search over real folders, and the text
 * helpers (CSV quoting, name lists, edit distance), the dispatch-range grammar, and the map of per-device
 * plans (well-formed and hostile maps, a device found by index, name or model), and the binary search's
 * partition point (lower and upper bounds on every small sorted array, against a linear scan). */
/* SPDX-License-Identifier: MIT */
#include "../src/common/hu_buf.h"
#include "../src/common/hu_devplan.h"
#include "../src/common/hu_dir.h"
#include "../src/common/hu_hash.h"
#include "../src/common/hu_io.h"
#include "../src/common/hu_json.h"
#include "../src/common/hu_kname.h"
#include "../src/common/hu_map.h"
#include "../src/common/hu_pattern.h"
#include "../src/common/hu_range.h"
#include "../src/common/hu_search.h"
#include "../src/common/hu_text.h"
#include "../src/common/hu_varint.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- buffers ---- */

static void test_buf(void) {
  hu_buf b = {0};
  hu_buf_str(&b, "ab");
  hu_buf_byte(&b, 'c');
  hu_buf_le32(&b, 0x04030201u);
  hu_buf_le64(&b, 0x0c0b0a0908070605ull);
  CHECK_EQ_U64(b.n, 15);
  CHECK(memcmp(b.p, "abc\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 15) == 0);
  hu_buf_printf(&b, "-%d-", 42);
  CHECK_STR(hu_buf_cstr(&b), "abc\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c-42-");
  CHECK_EQ_U64(b.n, 19); /* the NUL of cstr is not counted */
  /* a long printf goes past the function's stack buffer */
  char big[1000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  hu_buf_printf(&b, "%s!", big);
  CHECK_EQ_U64(b.n, 19 + 999 + 1);
  CHECK(b.p[b.n - 1] == '!' && b.p[19] == 'x');
  /* growth keeps the content */
  hu_buf c = {0};
  for (unsigned i = 0; i < 100000; i++)
    hu_buf_byte(&c, i & 0xff);
  CHECK(!c.oom && c.n == 100000);
  int same = 1;
  for (unsigned i = 0; i < 100000; i++)
    same &= c.p[i] == (i & 0xff);
  CHECK(same);
  /* an impossible size: refused, sticky, and the content stays as it was */
  CHECK(hu_buf_reserve(&c, SIZE_MAX - 10) == -1);
  CHECK(c.oom);
  hu_buf_byte(&c, 1);
  CHECK_EQ_U64(c.n, 100000);
  CHECK(hu_buf_cstr(&c) == NULL);
  hu_buf_free(&c);
  CHECK(c.p == NULL && c.n == 0 && c.oom == 0);
  hu_buf_free(&b);
}

static void test_grow(void) {
  int *v = NULL;
  size_t cap = 0;
  CHECK(hu_grow((void **)&v, &cap, 1, sizeof *v) == 0 && cap == 16);
  CHECK(hu_grow((void **)&v, &cap, 16, sizeof *v) == 0 && cap == 16);
  CHECK(hu_grow((void **)&v, &cap, 17, sizeof *v) == 0 && cap == 32);
  CHECK(hu_grow((void **)&v, &cap, 1000, sizeof *v) == 0 && cap == 1024);
  for (int i = 0; i < 1000; i++)
    v[i] = i;
  CHECK(hu_grow((void **)&v, &cap, 5000, sizeof *v) == 0 && cap == 8192 && v[999] == 999);
  /* sizes that would overflow: refused, array untouched */
  int *keep = v;
  CHECK(hu_grow((void **)&v, &cap, SIZE_MAX / 2, sizeof *v) == -1 && v == keep && cap == 8192);
  CHECK(hu_grow((void **)&v, &cap, SIZE_MAX, 1) == -1 && cap == 8192);
  free(v);
}

/* ---- varints and words ---- */

static void test_varint(void) {
  const uint64_t vals[] = {0,
                           1,
                           127,
                           128,
                           255,
                           300,
                           16383,
                           16384,
                           (1ull << 32),
                           (1ull << 49) - 1,
                           1ull << 49,
                           (1ull << 56) - 1,
                           1ull << 56,
                           (1ull << 63),
                           UINT64_MAX};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    unsigned char b[HU_VARINT_ROOM + 6];
    memset(b, 0xee, sizeof b);
    unsigned char *e = hu_varint_put(b, vals[i]);
    CHECK_EQ_U64((size_t)(e - b), hu_varint_len(vals[i]));
    /* minimal: the last byte has no continuation bit, the others have it */
    CHECK(!(e[-1] & 0x80));
    for (unsigned char *q = b; q < e - 1; q++)
      CHECK(*q & 0x80);
    const unsigned char *p = b;
    uint64_t got = 0;
    CHECK(hu_varint_get(&p, e, &got) == 1);
    CHECK_EQ_U64(got, vals[i]);
    CHECK(p == e);
    /* cut short by one byte: refused, position unchanged */
    p = b;
    CHECK(hu_varint_get(&p, e - 1, &got) == 0 && p == b);
    /* a non-minimal encoding in 10 bytes reads the same */
    unsigned char n[HU_VARINT_MAX];
    hu_varint_put_n(n, vals[i], HU_VARINT_MAX);
    p = n;
    CHECK(hu_varint_get(&p, n + sizeof n, &got) == 1 && got == vals[i] && p == n + sizeof n);
  }
  /* the simple byte form agrees with the 8-byte store form */
  hu_buf b = {0};
  hu_buf_varint(&b, 300);
  CHECK(b.n == 2 && b.p[0] == 0xac && b.p[1] == 0x02);
  hu_buf_free(&b);
  CHECK_EQ_U64(hu_varint_len(UINT64_MAX), 10);
  /* over-long: 11 bytes with continuation bits are refused */
  unsigned char bad[11];
  memset(bad, 0x80, sizeof bad);
  const unsigned char *p = bad;
  uint64_t got;
  CHECK(hu_varint_get(&p, bad + sizeof bad, &got) == 0 && p == bad);
  CHECK(hu_varint_get(&p, bad, &got) == 0); /* empty */

  const int64_t sv[] = {0, 1, -1, 2, -2, INT64_MAX, INT64_MIN, 123456789, -123456789};
  for (size_t i = 0; i < sizeof sv / sizeof sv[0]; i++)
    CHECK(hu_unzigzag(hu_zigzag(sv[i])) == sv[i]);
  CHECK(hu_zigzag(0) == 0 && hu_zigzag(-1) == 1 && hu_zigzag(1) == 2 && hu_zigzag(-2) == 3);
  CHECK(hu_zigzag(INT64_MIN) == UINT64_MAX);

  unsigned char w[8];
  hu_put_le32(w, 0xdeadbeefu);
  CHECK(w[0] == 0xef && w[3] == 0xde && hu_get_le32(w) == 0xdeadbeefu);
  hu_put_le64(w, 0x0123456789abcdefull);
  CHECK(w[0] == 0xef && w[7] == 0x01 && hu_get_le64(w) == 0x0123456789abcdefull);

  /* hu_copy_short: exactly n bytes, every length across its three ways, nothing written around them */
  unsigned char src[40], dst[48];
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (unsigned char)(i * 7 + 1);
  int copy_ok = 1;
  for (size_t n = 0; n <= sizeof src; n++) {
    memset(dst, 0xee, sizeof dst);
    hu_copy_short(dst + 4, src, n);
    copy_ok &= memcmp(dst + 4, src, n) == 0;
    for (size_t i = 0; i < sizeof dst; i++)
      copy_ok &= i >= 4 && i < 4 + n ? 1 : dst[i] == 0xee;
  }
  CHECK(copy_ok);
}

/* ---- hashes ---- */

static void test_hash(void) {
  /* published FNV-1a 64-bit values */
  CHECK(hu_fnv1a("", 0, HU_FNV_BASIS) == 0xcbf29ce484222325ull);
  CHECK(hu_fnv1a("a", 1, HU_FNV_BASIS) == 0xaf63dc4c8601ec8cull);
  CHECK(hu_fnv1a("foobar", 6, HU_FNV_BASIS) == 0x85944171f73967e8ull);
  /* continuing a hash is hashing the concatenation */
  CHECK(hu_fnv1a("bar", 3, hu_fnv1a("foo", 3, HU_FNV_BASIS)) == hu_fnv1a("foobar", 6, HU_FNV_BASIS));
  CHECK(hu_hash_str("kernel_a") == hu_hash_bytes("kernel_a", 8));
  CHECK(hu_hash_str("kernel_a") != hu_hash_str("kernel_b"));
  CHECK(hu_mix64(0) == 0);
  /* consecutive ids spread over the low bits: 4096 ids into 8192 slots, few collisions */
  static unsigned char used[8192];
  size_t coll = 0;
  for (uint64_t i = 1; i <= 4096; i++) {
    size_t s = (size_t)hu_mix64(i) & 8191;
    coll += used[s];
    used[s] = 1;
  }
  CHECK_MSG(coll < 1500, "%zu collisions", coll);
}

/* ---- binary search ---- */

static void test_partition(void) {
  /* every array of 0-9 values in 0..3, non-decreasing (built from the counts of each value), every key -1..4:
   * the lower bound (first >= key) and the upper bound (first > key) equal a linear scan's */
  int ok = 1;
  size_t arrays = 0;
  for (unsigned code = 0; code < 10000; code++) { /* the counts of 0, 1, 2, 3: four decimal digits */
    unsigned cnt[4] = {code % 10, code / 10 % 10, code / 100 % 10, code / 1000};
    if (cnt[0] + cnt[1] + cnt[2] + cnt[3] > 9) continue;
    int a[9];
    size_t n = 0;
    for (int v = 0; v < 4; v++)
      for (unsigned k = 0; k < cnt[v]; k++)
        a[n++] = v;
    arrays++;
    for (int key = -1; key <= 4; key++) {
      size_t lo, up, want_lo = 0, want_up = 0;
      HU_PARTITION(lo, n, mid, a[mid] < key);
      HU_PARTITION(up, n, mid, a[mid] <= key);
      while (want_lo < n && a[want_lo] < key)
        want_lo++;
      while (want_up < n && a[want_up] <= key)
        want_up++;
      if (lo != want_lo || up != want_up) {
        CHECK_MSG(0, "n %zu key %d: lower %zu (want %zu), upper %zu (want %zu)", n, key, lo, want_lo, up,
                  want_up);
        ok = 0;
      }
    }
    if (!ok) break;
  }
  CHECK(ok && arrays == 715); /* the multisets of at most 9 values out of 4: C(13, 4) */
  /* the index and the array are the caller's expressions: a struct key, and n evaluated once */
  struct run {
    uint64_t first, last;
  } runs[] = {{1, 4}, {5, 5}, {9, 20}};
  size_t calls = 0, i;
#define NRUNS (calls++, sizeof runs / sizeof *runs)
  HU_PARTITION(i, NRUNS, m, runs[m].last < 7);
#undef NRUNS
  CHECK(i == 2 && calls == 1);
  HU_PARTITION(i, (size_t)0, m, runs[m].last < 7);
  CHECK(i == 0);
}

/* ---- JSON ---- */

/* The tree of text, or NULL with why in err (copied from the failed tree, which is freed). */
static hu_json *parse(const char *text, char *err, size_t errlen) {
  hu_json *j = NULL;
  if (hu_json_parse(text, strlen(text), &j) == HU_OK) return j;
  snprintf(err, errlen, "%s", hu_json_error(j));
  hu_json_free(j);
  return NULL;
}

static void test_json_read(void) {
  char err[128];
  hu_json *j = parse(" {\"a\": [1, -2, 3.5, 1e3, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\","
                     " \"big\": 18446744073709551615, \"over\": 18446744073709551616, \"o\": {}} ",
                     err, sizeof err);
  CHECK_MSG(j != NULL, "%s", err);
  if (!j) return;
  CHECK(j->type == HU_JSON_OBJ && j->n == 5);
  const hu_json *a = hu_json_get(j, "a");
  CHECK(a && a->type == HU_JSON_ARR && a->n == 7);
  if (a && a->n == 7) {
    CHECK(a->kid[0].type == HU_JSON_INT && a->kid[0].u == 1 && a->kid[0].d == 1.0);
    CHECK(a->kid[1].type == HU_JSON_NUM && a->kid[1].d == -2.0);
    CHECK(a->kid[2].type == HU_JSON_NUM && a->kid[2].d == 3.5);
    CHECK(a->kid[3].type == HU_JSON_NUM && a->kid[3].d == 1000.0);
    CHECK(a->kid[4].type == HU_JSON_BOOL && a->kid[4].u == 1);
    CHECK(a->kid[5].type == HU_JSON_BOOL && a->kid[5].u == 0);
    CHECK(a->kid[6].type == HU_JSON_NULL);
    int64_t v;
    CHECK(hu_json_int64(&a->kid[0], &v) == 0 && v == 1);
    CHECK(hu_json_int64(&a->kid[1], &v) == 0 && v == -2);
    CHECK(hu_json_int64(&a->kid[2], &v) == -1); /* 3.5 */
    CHECK(hu_json_int64(&a->kid[4], &v) == -1); /* true */
  }
  const hu_json *s = hu_json_get(j, "s");
  CHECK(s && s->type == HU_JSON_STR && strcmp(s->s, "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0);
  const hu_json *big = hu_json_get(j, "big"), *over = hu_json_get(j, "over");
  CHECK(big && big->type == HU_JSON_INT && big->u == UINT64_MAX);
  int64_t v;
  CHECK(hu_json_int64(big, &v) == -1); /* above INT64_MAX */
  CHECK(over && over->type == HU_JSON_NUM);
  CHECK(hu_json_get(j, "o") && hu_json_get(j, "o")->type == HU_JSON_OBJ && hu_json_get(j, "o")->n == 0);
  CHECK(hu_json_get(j, "missing") == NULL);
  CHECK(hu_json_get(a, "a") == NULL); /* not an object */
  CHECK(hu_json_int64(NULL, &v) == -1);
  hu_json_free(j);

  /* errors: each refused with a reason on a tree that holds no value */
  const char *bad[] = {"",
                       "[1,]",
                       "{\"a\" 1}",
                       "[1 2]",
                       "\"abc",
                       "\"\\x\"",
                       "\"\\ud83d\"",
                       "\"\\ude00\"",
                       "\"\\u0000\"",
                       "[01x]",
                       "tru",
                       "1 2",
                       "{1: 2}",
                       "\"a\tb\"",
                       "-",
                       "1.",
                       "1e",
                       "[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hu_json *x = (hu_json *)1;
    CHECK_MSG(hu_json_parse(bad[i], strlen(bad[i]), &x) == HU_ERR_INVALID, "accepted '%s'", bad[i]);
    CHECK_MSG(x && x->type == HU_JSON_NULL && x->n == 0 && hu_json_error(x)[0], "'%s': no reason", bad[i]);
    hu_json_free(x);
  }
  /* nesting up to the limit is fine */
  char deep[2 * HU_JSON_MAX_DEPTH + 4];
  size_t k = 0;
  for (int i = 0; i < HU_JSON_MAX_DEPTH; i++)
    deep[k++] = '[';
  for (int i = 0; i < HU_JSON_MAX_DEPTH; i++)
    deep[k++] = ']';
  deep[k] = 0;
  j = parse(deep, err, sizeof err);
  CHECK_MSG(j != NULL, "%s", err);
  hu_json_free(j);
  /* the length bounds the text: nothing is read past n */
  j = NULL;
  CHECK(hu_json_parse("[1]garbage", 3, &j) == HU_OK && j && j->n == 1 && hu_json_error(j)[0] == 0);
  hu_json_free(j);
  CHECK(hu_json_parse("[1,", 3, &j) == HU_ERR_INVALID && strcmp(hu_json_error(j), "unexpected end") == 0);
  hu_json_free(j);
  CHECK(strcmp(hu_json_error(NULL), "out of memory") == 0);
}

static void test_json_write(void) {
  /* every byte 1..255 survives writer -> parser (bytes >= 0x80 as they are) */
  char all[256];
  for (int i = 1; i < 256; i++)
    all[i - 1] = (char)i;
  all[255] = 0;
  hu_buf b = {0};
  hu_json_put_str(&b, all);
  hu_json *j = NULL;
  CHECK(!b.oom && hu_json_parse((const char *)b.p, b.n, &j) == HU_OK);
  CHECK(j && j->type == HU_JSON_STR && memcmp(j->s, all, 256) == 0);
  hu_json_free(j);
  hu_buf_free(&b);
  hu_json_put_str(&b, "a\"b\\c\nd\x01");
  CHECK(b.n == 18 && memcmp(b.p, "\"a\\\"b\\\\c\\nd\\u0001\"", 18) == 0);
  /* the FILE form writes the same bytes */
  FILE *f = tmpfile();
  CHECK(f != NULL);
  if (f) {
    hu_json_write_str(f, "a\"b\\c\nd\x01");
    rewind(f);
    char got[64] = "";
    size_t n = fread(got, 1, sizeof got - 1, f);
    CHECK(n == b.n && memcmp(got, b.p, n) == 0);
    fclose(f);
  }
  hu_buf_free(&b);
}

/* ---- maps ---- */

static void test_idmap(void) {
  hu_idmap m = {0};
  uint64_t v = 7;
  CHECK(hu_idmap_get(&m, 5, &v) == 0 && v == 7);  /* empty */
  CHECK(hu_idmap_put(&m, 0, 1) == 0 && m.n == 0); /* key 0 is never stored */
  CHECK(hu_idmap_get(&m, 0, &v) == 0);
  for (uint64_t k = 1; k <= 100000; k++)
    CHECK(hu_idmap_put(&m, k * 0x10001, k + 1) == 0);
  CHECK_EQ_U64(m.n, 100000);
  CHECK(m.cap >= 2 * m.n && (m.cap & (m.cap - 1)) == 0);
  int all = 1;
  for (uint64_t k = 1; k <= 100000; k++)
    all &= hu_idmap_get(&m, k * 0x10001, &v) == 1 && v == k + 1;
  CHECK(all);
  CHECK(hu_idmap_get(&m, 3, NULL) == 0);
  CHECK(hu_idmap_put(&m, 0x10001, UINT64_MAX) == 0 && m.n == 100000); /* replace */
  CHECK(hu_idmap_get(&m, 0x10001, &v) == 1 && v == UINT64_MAX);
  hu_idmap_free(&m);
  CHECK(m.cap == 0 && hu_idmap_get(&m, 0x10001, &v) == 0);
}

static void test_strmap(void) {
  hu_strmap m = {0};
  int added = -1;
  CHECK(hu_strmap_find(&m, "a") == -1);
  CHECK(hu_strmap_intern(&m, "alpha", &added) == 0 && added == 1);
  CHECK(hu_strmap_intern(&m, "beta", &added) == 1 && added == 1);
  CHECK(hu_strmap_intern(&m, "alpha", &added) == 0 && added == 0);
  CHECK(hu_strmap_intern(&m, "", &added) == 2 && added == 1);
  const char *first = hu_strmap_str(&m, 0);
  char name[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof name, "k%d", i);
    CHECK(hu_strmap_intern(&m, name, NULL) == 3 + i);
  }
  CHECK_EQ_U64(m.n, 5003);
  CHECK(hu_strmap_str(&m, 0) == first); /* copies never move */
  CHECK_STR(hu_strmap_str(&m, 1), "beta");
  CHECK(hu_strmap_str(&m, 5003) == NULL);
  CHECK(hu_strmap_find(&m, "k4999") == 5002 && hu_strmap_find(&m, "k5000") == -1);
  /* the interned copy is the map's own */
  char mine[] = "mutable";
  long i = hu_strmap_intern(&m, mine, NULL);
  mine[0] = 'X';
  CHECK_STR(hu_strmap_str(&m, (size_t)i), "mutable");
  hu_strmap_free(&m);
  CHECK(m.n == 0 && hu_strmap_find(&m, "beta") == -1);
}

/* ---- directories ---- */

static void touch(const char *dir, const char *name) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  if (f) fclose(f);
}

static void test_dir(void) {
  char base[] = "/tmp/hu_dir_XXXXXX";
  if (!mkdtemp(base)) {
    CHECK(!"mkdtemp");
    return;
  }
  char d1[300], d2[300], missing[300];
  snprintf(d1, sizeof d1, "%s/one", base);
  snprintf(d2, sizeof d2, "%s/two", base);
  snprintf(missing, sizeof missing, "%s/none", base);
  mkdir(d1, 0700);
  mkdir(d2, 0700);
  touch(d1, "b.metrics");
  touch(d1, ".hidden.metrics");
  touch(d1, "notes.txt");
  touch(d1, ".metrics"); /* a name that is only the extension */
  touch(d2, "a.metrics");
  touch(d2, "b.metrics"); /* shadowed by one/b.metrics */
  touch(d2, "c.metrics.bak");
  const char *dirs[] = {missing, d1, d2};
  char **paths = NULL;
  size_t n = 99;
  CHECK(hu_dir_find(dirs, 3, ".metrics", &paths, &n) == HU_OK);
  CHECK_EQ_U64(n, 2);
  if (paths && n == 2) {
    char want[320];
    snprintf(want, sizeof want, "%s/a.metrics", d2);
    CHECK_STR(paths[0], want);
    snprintf(want, sizeof want, "%s/b.metrics", d1);
    CHECK_STR(paths[1], want);
    CHECK(paths[2] == NULL);
  }
  hu_strv_free(paths);
  /* no folder at all: an empty, NULL-terminated list */
  CHECK(hu_dir_find(dirs, 1, ".metrics", &paths, NULL) == HU_OK && paths && paths[0] == NULL);
  hu_strv_free(paths);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  CHECK(system(cmd) == 0);
}

/* ---- file I/O ---- */

static void test_io(void) {
  char path[] = "/tmp/hu_io_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    CHECK(!"mkstemp");
    return;
  }
  static unsigned char data[300000], back[300000];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (unsigned char)(i * 7 + 3);
  CHECK(hu_write_all(fd, data, sizeof data) == 0);
  CHECK(hu_pwrite_all(fd, "XY", 2, 10) == 0);
  CHECK(hu_pread_all(fd, back, sizeof back, 0) == 0);
  CHECK(back[10] == 'X' && back[11] == 'Y' && back[9] == data[9] && back[12] == data[12]);
  CHECK(memcmp(back + 12, data + 12, sizeof data - 12) == 0);
  /* past the end: refused with EIO */
  errno = 0;
  CHECK(hu_pread_all(fd, back, 10, sizeof data - 5) == -1 && errno == EIO);
  /* read_full stops at the end of the file */
  CHECK(lseek(fd, (off_t)(sizeof data - 100), SEEK_SET) >= 0);
  CHECK(hu_read_full(fd, back, 1000) == 100);
  CHECK(memcmp(back, data + sizeof data - 100, 100) == 0);
  close(fd);
  /* a closed descriptor: an error, not a crash or a loop */
  CHECK(hu_write_all(fd, data, 10) == -1 && errno == EBADF);
  CHECK(hu_read_full(fd, back, 10) == -1);
  unlink(path);
  CHECK(hu_fsync_dir("/tmp") == 0);
  CHECK(hu_fsync_dir("/nonexistent/hubprof") == -1 && errno == ENOENT);
}

/* ---- text ---- */

static void csv(const char *in, const char *want) {
  FILE *f = tmpfile();
  if (!f) {
    CHECK(!"tmpfile");
    return;
  }
  hu_csv_write_str(f, in);
  rewind(f);
  char got[128] = "";
  size_t n = fread(got, 1, sizeof got - 1, f);
  got[n] = 0;
  CHECK_STR(got, want);
  fclose(f);
}

static void test_text(void) {
  csv("plain", "plain");
  csv("", "");
  csv("a,b", "\"a,b\"");
  csv("say \"hi\"", "\"say \"\"hi\"\"\"");
  csv("two\nlines", "\"two\nlines\"");
  csv("cr\r", "\"cr\r\"");

  char **v;
  size_t n;
  CHECK(hu_split_names(" a ,b,\tc\t", &v, &n) == HU_OK && n == 3);
  if (n == 3) {
    CHECK_STR(v[0], "a");
    CHECK_STR(v[1], "b");
    CHECK_STR(v[2], "c");
    CHECK(v[3] == NULL);
  }
  hu_strv_free(v);
  CHECK(hu_split_names("", &v, &n) == HU_OK && n == 0 && v && !v[0]);
  hu_strv_free(v);
  const char *bad[] = {",", "a,", ",a", "a,,b", "a, ,b", " "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = (char **)1;
    CHECK_MSG(hu_split_names(bad[i], &v, &n) == HU_ERR_INVALID && v == NULL, "'%s'", bad[i]);
  }
  char s[] = "x, y ,z";
  char *out[3];
  CHECK(hu_split_inplace(s, out, 3) == 3 && !strcmp(out[0], "x") && !strcmp(out[1], "y") &&
        !strcmp(out[2], "z"));
  char t[] = "x,y,z";
  CHECK(hu_split_inplace(t, out, 2) == -1); /* more than max */
  char e[] = "";
  CHECK(hu_split_inplace(e, out, 2) == -1);

  CHECK_EQ_U64(hu_edit_distance("", ""), 0);
  CHECK_EQ_U64(hu_edit_distance("abc", ""), 3);
  CHECK_EQ_U64(hu_edit_distance("SQ_WAVES", "sq_waves"), 0); /* case-insensitive */
  CHECK_EQ_U64(hu_edit_distance("kitten", "sitting"), 3);
  CHECK_EQ_U64(hu_edit_distance("GRBM_COUNT", "GRMB_COUNT"), 1); /* a transposition is one edit */
  CHECK_EQ_U64(hu_edit_distance("ab", "ba"), 1);
  /* long names: only the first HU_EDIT_MAX - 1 bytes count */
  char l1[200], l2[200];
  memset(l1, 'a', sizeof l1 - 1);
  l1[sizeof l1 - 1] = 0;
  memcpy(l2, l1, sizeof l2);
  l2[150] = 'b';
  CHECK_EQ_U64(hu_edit_distance(l1, l2), 0);
  l2[10] = 'b';
  CHECK_EQ_U64(hu_edit_distance(l1, l2), 1);
}

/* UTF-8: invalid bytes become \xNN one by one, valid sequences (up to 4 bytes) stay */
static void utf8(const char *in, const char *want) {
  char *tmp;
  const char *got = hu_utf8_clean(in, &tmp);
  CHECK_STR(got, want);
  CHECK((tmp == NULL) == (strcmp(in, want) == 0) && (got == in) == (tmp == NULL));
  free(tmp);
}

static void test_utf8(void) {
  utf8("", "");
  utf8("plain", "plain");
  utf8("\xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9", "\xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9"); /* valid */
  utf8("k\xFF", "k\\xFF");
  utf8("\xC3(", "\\xC3(");                          /* a cut 2-byte sequence */
  utf8("\xE2\x82(", "\\xE2\\x82(");                 /* a cut 3-byte sequence: each byte alone */
  utf8("\xC0\xAF", "\\xC0\\xAF");                   /* overlong '/' */
  utf8("\xE0\x80\xAF", "\\xE0\\x80\\xAF");          /* overlong, 3 bytes */
  utf8("\xED\xA0\x80", "\\xED\\xA0\\x80");          /* an encoded surrogate */
  utf8("\xF4\x90\x80\x80", "\\xF4\\x90\\x80\\x80"); /* above U+10FFFF */
  utf8("\x80z", "\\x80z");                          /* a lone continuation byte */
  int bad;
  CHECK(hu_utf8_escaped_size("a\xFF", &bad) == 6 && bad);
  CHECK(hu_utf8_escaped_size("a\xC3\xA9", &bad) == 4 && !bad);
  CHECK(hu_utf8_seq((const unsigned char *)"\xF0\x9F\x98\x80") == 4);
  CHECK(hu_utf8_seq((const unsigned char *)"\xF5\x80\x80\x80") == 0);
}

/* ---- dispatch ranges (--dispatch-range) ---- */
static void range_ok(const char *s, uint64_t first, uint64_t last, int per_kernel) {
  hu_range r;
  const char *why = NULL;
  CHECK_MSG(hu_range_parse(s, (size_t)-1, &r, &why) == HU_OK, "'%s': %s\n", s, why ? why : "");
  CHECK_MSG(r.first == first && r.last == last && r.per_kernel == per_kernel, "'%s'\n", s);
}
static void range_bad(const char *s, const char *want) {
  hu_range r;
  const char *why = NULL;
  CHECK_MSG(hu_range_parse(s, (size_t)-1, &r, &why) == HU_ERR_INVALID, "'%s' accepted\n", s);
  CHECK_MSG(why && strstr(why, want), "'%s': %s\n", s, why ? why : "(no reason)");
}
static void test_range(void) {
  range_ok("3-7", 3, 7, 0);
  range_ok("5", 5, 5, 0);
  range_ok("9-", 9, UINT64_MAX, 0);
  range_ok("-4", 1, 4, 0);
  range_ok("kernel:2-2", 2, 2, 1);
  range_ok("kernel:-1", 1, 1, 1);
  range_ok("9223372036854775807", INT64_MAX, INT64_MAX, 0);
  range_bad("5-3", "start is after the end");
  range_bad("x-y", "not a whole number");
  range_bad("-3-5", "negative");
  range_bad("3--5", "negative");
  range_bad("9223372036854775808", "too large");
  range_bad("99999999999999999999999", "too large");
  range_bad("0", "numbered from 1");
  range_bad("0-3", "numbered from 1");
  range_bad("", "empty");
  range_bad("kernel:", "empty");
  range_bad("-", "both ends");
  range_bad(" 3", "not a whole number");
  range_bad("3-7 ", "not a whole number");
  range_bad("Kernel:3", "not a whole number");
  hu_range r;
  const char *why;
  CHECK(hu_range_parse("12-34,junk", 5, &r, &why) == HU_OK && r.first == 12 && r.last == 34); /* a length */
}

/* Pattern bounds, terminal text and CSV text cells (hostile input, issue 30). */
static void test_hostile_text(void) {
  const char *why = NULL;
  static const char *const fine[] = {"^add$",         "vec.*",      "[[:alnum:]_]+x{2,3}",
                                     "\\.(a|b)?",     "[]a]{4095}", "a{4095}",
                                     "((a{63}){63})", "k)",         "a{,}"};
  for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
    CHECK_MSG(hu_regex_bounded(fine[i], (size_t)-1, &why) == 0, "%s refused: %s", fine[i], why);
  static const char *const big[] = {"((a{255}){255}){255}", "a{4097}", "(a{64}){64}",
                                    "([[:alpha:]]{100}|x){41}"};
  for (size_t i = 0; i < sizeof big / sizeof *big; i++)
    CHECK_MSG(hu_regex_bounded(big[i], (size_t)-1, &why) == -1 && strstr(why, "4096 atoms"), "%s", big[i]);
  CHECK(hu_regex_bounded("(a)\\1", (size_t)-1, &why) == -1 && strstr(why, "back-reference"));
  CHECK(hu_regex_bounded("[\\1]", (size_t)-1, &why) == 0); /* a backslash in brackets is itself */
  char long_re[HU_PATTERN_MAX + 2];
  memset(long_re, 'a', sizeof long_re - 1);
  long_re[sizeof long_re - 1] = 0;
  CHECK(hu_regex_bounded(long_re, (size_t)-1, &why) == -1 && strstr(why, "longer than 1024"));
  CHECK(hu_regex_bounded(long_re, HU_PATTERN_MAX, &why) == 0);
  CHECK(hu_glob_bounded(long_re, &why) == -1 && hu_glob_bounded(long_re + 1, &why) == 0);
  /* control characters visible, C1 included; other text untouched (the same pointer) */
  char *tmp;
  const char *s = "k\x1b[2J\x07\t\xc2\x9b\x7f \xc3\xa9";
  CHECK(strcmp(hu_term_clean(s, &tmp), "k\\x1B[2J\\x07\\x09\\x9B\\x7F \xc3\xa9") == 0);
  free(tmp);
  CHECK(hu_term_clean("plain \xc3\xa9", &tmp) != NULL && tmp == NULL);
  /* CSV: formula prefixes quoted with a ', the rest as hu_csv_write_str */
  char buf[256] = "";
  FILE *f = fmemopen(buf, sizeof buf, "w");
  static const char *const cells[] = {"=1+2", "+x", "-2", "@a", "\tx", "\rx", "a,b", "plain", ""};
  for (size_t i = 0; i < sizeof cells / sizeof *cells; i++) {
    hu_csv_write_text(f, cells[i]);
    fputc('|', f);
  }
  fclose(f);
  CHECK_MSG(strcmp(buf, "\"'=1+2\"|\"'+x\"|\"'-2\"|\"'@a\"|\"'\tx\"|\"'\rx\"|\"a,b\"|plain||") == 0, "%s",
            buf);
}

/* --kernel patterns with their syntax by prefix; globs as anchored regexes; names told apart by program */
static void test_patterns(void) {
  char re[64];
  CHECK(hu_glob_to_regex("up*da?e.[!x]k", re, sizeof re) == 0);
  CHECK_MSG(strcmp(re, "^up.*da.e\\.[^x]k$") == 0, "%s", re);
  CHECK(hu_glob_to_regex("a[b", re, sizeof re) == 0 && strcmp(re, "^a\\[b$") == 0); /* a lone '[' is itself */
  CHECK(hu_glob_to_regex("abcdef", re, 5) == -1);
  CHECK(hu_pattern_match("up*", HU_PAT_GLOB, "update") && !hu_pattern_match("up", HU_PAT_GLOB, "update"));
  CHECK(hu_pattern_match("up", HU_PAT_REGEX, "update") && hu_pattern_match("re:^upd", HU_PAT_GLOB, "update"));
  CHECK(hu_pattern_match("glob:*date", HU_PAT_REGEX, "update") &&
        !hu_pattern_match("glob:up", HU_PAT_REGEX, "update"));
  CHECK(!hu_pattern_match("re:(", HU_PAT_GLOB, "(")); /* does not compile: matches nothing */
  /* hu_kname: a name of two programs gets their digits; one program's name stays; unknown stays bare */
  struct {
    char *name, *prog;
  } k[5] = {{strdup("x"), "3f2a91c0aa"},
            {strdup("x"), "77aa0000bb"},
            {strdup("y"), "1111"},
            {strdup("x"), "3f2a91c0aa"},
            {strdup("x"), NULL}};
  CHECK(hu_kname_disambiguate(k, 5, sizeof k[0], offsetof(__typeof__(k[0]), name),
                              offsetof(__typeof__(k[0]), prog)) == 0);
  CHECK(!strcmp(k[0].name, "x#3f2a91c0") && !strcmp(k[1].name, "x#77aa0000") && !strcmp(k[2].name, "y") &&
        !strcmp(k[3].name, "x#3f2a91c0") && !strcmp(k[4].name, "x"));
  /* identities sharing the first 8 digits: as many as tell them apart */
  k[0].prog = "abcdef0123";
  k[1].prog = "abcdef0199";
  free(k[0].name), free(k[1].name);
  k[0].name = strdup("z"), k[1].name = strdup("z");
  CHECK(hu_kname_disambiguate(k, 2, sizeof k[0], offsetof(__typeof__(k[0]), name),
                              offsetof(__typeof__(k[0]), prog)) == 0);
  CHECK_MSG(!strcmp(k[0].name, "z#abcdef012") && !strcmp(k[1].name, "z#abcdef019"), "%s %s", k[0].name,
            k[1].name);
  for (int i = 0; i < 5; i++)
    free(k[i].name);
}

/* ---- per-device plans' map ---- */
static void test_devplan(void) {
  const char *map = "1-2:0\n3-3:pthread*\n4-4:*Xeon*\n0-0:", *why = NULL;
  CHECK(hu_devplan_check(map, 4, 64, &why) == 0);
  size_t f = 9, n = 9;
  CHECK(hu_devplan_find(map, "basic-x", "m", 0, &f, &n) == 0 && f == 0 && n == 2);      /* by index */
  CHECK(hu_devplan_find(map, "pthread-x", "m", 1, &f, &n) == 1 && f == 2 && n == 1);    /* by name */
  CHECK(hu_devplan_find(map, "gpu", "Intel Xeon", 2, &f, &n) == 2 && f == 3 && n == 1); /* by model */
  CHECK(hu_devplan_find(map, "gpu", "other", 7, &f, &n) == 3 && f == 0 && n == 0); /* every other: none */
  CHECK(hu_devplan_check(map, 3, 64, &why) == -1); /* a pass beyond the plan */
  CHECK(hu_devplan_check(map, 4, 3, &why) == -1);  /* more entries than allowed */
  CHECK(hu_devplan_check("1-1:0", 1, 64, &why) == -1 && strstr(why, "every other device"));
  static const char *const bad[] = {"", "1-1", "x-1:", "2-1:", "0-1:", "1-1:0\n", "1-1:0\nzz\n0-0:"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(hu_devplan_check(bad[i], 4, 64, &why) == -1);
  char big[HU_PATTERN_MAX + 16]; /* a selector longer than a pattern may be */
  memset(big, 'a', sizeof big);
  memcpy(big, "1-1:", 4);
  memcpy(big + sizeof big - 6, "\n0-0:", 6);
  big[sizeof big - 1] = 0;
  CHECK(hu_devplan_check(big, 1, 64, &why) == -1);
  CHECK(hu_devplan_find("nonsense", "a", "b", 0, &f, &n) == -1);
}

int main(void) {
  test_devplan();
  test_patterns();
  test_hostile_text();
  test_buf();
  test_grow();
  test_varint();
  test_hash();
  test_json_read();
  test_json_write();
  test_idmap();
  test_strmap();
  test_dir();
  test_io();
  test_text();
  test_utf8();
  test_range();
  test_partition();
  return check_report("test_common");
}
