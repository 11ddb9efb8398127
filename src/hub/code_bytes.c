/* The bytes of code objects in a store: written as code_blob chunks (base64 text, named by the SHA-256 of
 * the whole), read back and checked against that hash. Every format stores them as rows of code_blob. */
/* SPDX-License-Identifier: MIT */
#include "hub_internal.h"

#include "../common/hu_bytes.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (24u << 10) /* raw bytes per row: 32 KiB of text, well inside a log chunk */

static uint64_t g_blob_id; /* row ids of code_blob rows, unique in the process */

hp_status hp_write_code_bytes(hp_store *s, const void *bytes, size_t n, char *hash_hex) {
  if (!s || (n && !bytes)) return HP_ERR_INVALID;
  char hash[65];
  hu_sha256_hex(bytes, n, hash);
  if (hash_hex) memcpy(hash_hex, hash, sizeof hash);
  char *text = malloc(hu_base64_len(CHUNK) + 1);
  if (!text) return HP_ERR_NOMEM;
  hp_status st = HP_OK;
  size_t off = 0;
  do { /* an empty object still gets one (empty) chunk, so that its hash is found */
    size_t m = n - off < CHUNK ? n - off : CHUNK;
    hu_base64_encode((const unsigned char *)bytes + off, m, text);
    hp_code_blob b = {.size = sizeof b,
                      .id = __atomic_add_fetch(&g_blob_id, 1, __ATOMIC_RELAXED),
                      .hash = hash,
                      .offset = off,
                      .total_size = n,
                      .data = text};
    st = hp_write(s, HP_TABLE_CODE_BLOB, &b);
    off += m;
  } while (st == HP_OK && off < n);
  free(text);
  return st;
}

hp_status hp_read_code_bytes(hp_store *s, const char *hash_hex, void **out, size_t *n) {
  if (!s || !hash_hex || !out || !n) return HP_ERR_INVALID;
  *out = NULL;
  *n = 0;
  hp_cursor *c;
  hp_status st = hp_cursor_open(s, HP_TABLE_CODE_BLOB, &c);
  if (st != HP_OK) return st == HP_ERR_INVALID ? HP_ERR_NOT_FOUND : st;
  unsigned char *buf = NULL, *have = NULL;    /* have: one flag per chunk filled */
  unsigned char *scratch = malloc(CHUNK + 3); /* a chunk's text may decode to more than it should */
  uint64_t total = 0;
  int found = 0;
  hp_code_blob b = {.size = sizeof b};
  while ((st = hp_cursor_next(c, &b)) == HP_OK) {
    if (strcmp(b.hash, hash_hex) != 0) continue;
    if (!found) {
      total = b.total_size;
      if (total > ((uint64_t)1 << 31)) { /* 2 GiB: no code object is that large */
        st = HP_ERR_CORRUPT;
        break;
      }
      buf = malloc(total ? total : 1);
      have = calloc(total / CHUNK + 1, 1);
      if (!buf || !have) {
        st = HP_ERR_NOMEM;
        break;
      }
      found = 1;
    }
    size_t len = strlen(b.data);
    uint64_t want = b.offset < total ? (total - b.offset < CHUNK ? total - b.offset : CHUNK) : 0;
    if (b.total_size != total || b.offset % CHUNK || (b.offset >= total && total) ||
        len != hu_base64_len(want) || have[b.offset / CHUNK]) {
      st = HP_ERR_CORRUPT;
      break;
    }
    if (!scratch || hu_base64_decode(b.data, len, scratch) != (long)want) {
      st = scratch ? HP_ERR_CORRUPT : HP_ERR_NOMEM;
      break;
    }
    memcpy(buf + b.offset, scratch, want);
    have[b.offset / CHUNK] = 1;
  }
  hp_cursor_close(c);
  free(scratch);
  if (st == HP_END) st = found ? HP_OK : HP_ERR_NOT_FOUND;
  for (uint64_t i = 0; st == HP_OK && i * CHUNK < total; i++)
    if (!have[i]) st = HP_ERR_CORRUPT;
  if (st == HP_OK) {
    char h[65];
    hu_sha256_hex(buf, total, h);
    if (strcmp(h, hash_hex) != 0) st = HP_ERR_CORRUPT;
  }
  free(have);
  if (st != HP_OK) {
    free(buf);
    return st;
  }
  *out = buf;
  *n = total;
  return HP_OK;
}
