/* Minimal test harness for hubprof's C tests: CHECK macros that count, and a closing
 * "N passed, N failed" line that tests/run.sh adds up. Header-only; include once per test program. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_TESTS_CHECK_H
#define HUBPROF_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                                          \
  do {                                                                                                       \
    if (cond) {                                                                                              \
      check_passed++;                                                                                        \
    } else {                                                                                                 \
      check_failed++;                                                                                        \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                               \
    }                                                                                                        \
  } while (0)

#define CHECK_MSG(cond, ...)                                                                                 \
  do {                                                                                                       \
    if (cond) {                                                                                              \
      check_passed++;                                                                                        \
    } else {                                                                                                 \
      check_failed++;                                                                                        \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                               \
      fprintf(stderr, __VA_ARGS__);                                                                          \
      fputc('\n', stderr);                                                                                   \
    }                                                                                                        \
  } while (0)

/* Status check that prints the store's error line when it fails. */
#define CHECK_OK(st, store)                                                                                  \
  CHECK_MSG((st) == HP_OK, "status %d: %s", (int)(st), (store) ? hp_store_error(store) : "")

#define CHECK_EQ_U64(a, b)                                                                                   \
  CHECK_MSG((unsigned long long)(a) == (unsigned long long)(b), "%llu != %llu", (unsigned long long)(a),     \
            (unsigned long long)(b))

#define CHECK_STR(a, b) CHECK_MSG(strcmp((a), (b)) == 0, "'%s' != '%s'", (a), (b))

/* Print the closing line and return the exit code for main. */
static inline int check_report(const char *name) {
  printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
  return check_failed ? 1 : 0;
}

#endif
