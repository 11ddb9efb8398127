/* CRC-32C (Castagnoli) for the log's block checksums: SSE4.2 instruction when the CPU has it, table
 * otherwise. */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

#include <string.h>

static uint32_t table[8][256];
static int have_hw = -1;

static void init_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n) {
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    v ^= crc;
    crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^ table[5][(v >> 16) & 0xff] ^
          table[4][(v >> 24) & 0xff] ^ table[3][(v >> 32) & 0xff] ^ table[2][(v >> 40) & 0xff] ^
          table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n--)
    crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = (uint32_t)c;
  while (n--)
    c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
#endif

uint32_t hp_crc32c(uint32_t crc, const void *data, size_t n) {
  if (__atomic_load_n(&have_hw, __ATOMIC_ACQUIRE) < 0) {
    int hw = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
    if (!hw) init_table(); /* racing threads write the same values */
    __atomic_store_n(&have_hw, hw, __ATOMIC_RELEASE);
  }
  crc = ~crc;
#if defined(__x86_64__)
  if (have_hw) return ~crc_hw(crc, data, n);
#endif
  return ~crc_sw(crc, data, n);
}
