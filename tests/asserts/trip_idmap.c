/* A program that breaks hu_idmap's documented invariant (src/common/hu_map.h: at most half of the slots used)
 * and calls the map: built by tests/check_asserts.sh against the sanitizer objects, where the assert must
 * stop it, and against the release objects, where it must not (NDEBUG; the call is harmless then). */
/* SPDX-License-Identifier: MIT */
#include "../../src/common/hu_map.h"

#include <stdio.h>

int main(void) {
  hu_idmap m = {.n = 1}; /* one key stored in no slot at all: 2n > cap */
  int found = hu_idmap_get(&m, 5, NULL);
  printf("returned %d\n", found);
  return 0;
}
