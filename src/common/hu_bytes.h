/* Stored bytes: a content hash (SHA-256, FIPS 180-4) that names them in files, and base64 (RFC 4648) that
 * carries them in text columns. Allocation-free; the caller gives the room. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_BYTES_H
#define HUBPROF_HU_BYTES_H

#include <stddef.h>
#include <stdint.h>

typedef struct hu_sha256 {
  uint32_t h[8];
  uint64_t n;          /* bytes hashed so far */
  unsigned char b[64]; /* partial block */
} hu_sha256;

void hu_sha256_init(hu_sha256 *c);
void hu_sha256_update(hu_sha256 *c, const void *p, size_t n);
void hu_sha256_final(hu_sha256 *c, unsigned char out[32]);
/* SHA-256 of n bytes as 64 lowercase hex digits and a NUL. */
void hu_sha256_hex(const void *p, size_t n, char out[65]);

/* Characters base64 needs for n bytes (padded), without the NUL. */
static inline size_t hu_base64_len(size_t n) { return (n + 2) / 3 * 4; }
/* Encode n bytes to out (hu_base64_len(n) + 1 bytes, NUL-terminated); returns the characters written. */
size_t hu_base64_encode(const void *p, size_t n, char *out);
/* Decode text (padded base64, no whitespace) into out (room for len / 4 * 3 bytes); returns the bytes
 * written, or -1 when the text is not base64. */
long hu_base64_decode(const char *text, size_t len, unsigned char *out);

#endif
