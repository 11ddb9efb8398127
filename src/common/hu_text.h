/* Text helpers shared by the CLI, the counters, the analysis and the hub: CSV fields, comma-separated name
 * lists, the edit distance behind "did you mean" suggestions, UTF-8 escaping. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_TEXT_H
#define HUBPROF_HU_TEXT_H

#include "hu.h"

#include <stddef.h>
#include <stdio.h>

/* s as one CSV field: as it is, or in double quotes (quotes doubled) when it holds , " CR or LF. */
void hu_csv_write_str(FILE *out, const char *s);
/* s as a CSV field of a text column: as hu_csv_write_str, except that text starting with = + - @, a tab or
 * a CR (what a spreadsheet reads as a formula) gets a single quote in front and double quotes around
 * ("'=cmd()"), as OWASP's CSV-injection advice says. Numbers of numeric columns go through
 * hu_csv_write_str: a negative number stays a number. */
void hu_csv_write_text(FILE *out, const char *s);

/* Split "a, b,c" into its names (blanks around each trimmed), each malloc'd, into a NULL-terminated
 * *out (free with hu_strv_free) and the count in *n. "" gives no names.
 * HU_ERR_INVALID on an empty name ("a,,b", "a,"), HU_ERR_NOMEM; *out is NULL then. */
hu_status hu_split_names(const char *list, char ***out, size_t *n);
/* The same in place, without allocating: s is cut (NULs written) into at most max names in out.
 * Returns the count, or -1 on an empty name (also "") or more than max names. */
long hu_split_inplace(char *s, char **out, size_t max);
/* Free a NULL-terminated vector of malloc'd strings (NULL is fine). */
void hu_strv_free(char **v);

/* Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), case-insensitive (ASCII),
 * over the first HU_EDIT_MAX - 1 bytes of each. */
#define HU_EDIT_MAX 64
size_t hu_edit_distance(const char *a, const char *b);

/* UTF-8 text: a byte that is not part of a valid UTF-8 sequence (overlong forms, surrogates and code points
 * above U+10FFFF are not valid) becomes the four characters \xNN (NN: its value in upper-case hex); valid
 * text is kept. hu_utf8_seq: bytes of the valid sequence at p (1 to 4), 0 when the byte at p starts none.
 * hu_utf8_escaped_size: size of s escaped, NUL included; *bad says whether any byte needs escaping.
 * hu_utf8_escape: write s escaped to out (hu_utf8_escaped_size bytes). hu_utf8_clean: s itself when it is
 * valid, else an escaped copy in *tmp (malloc'd; free it; NULL when none was made; s when out of memory). */
size_t hu_utf8_seq(const unsigned char *p);
size_t hu_utf8_escaped_size(const char *s, int *bad);
void hu_utf8_escape(const char *s, char *out);
const char *hu_utf8_clean(const char *s, char **tmp);

/* Text for a terminal (tables and messages of the human format): every control character — the bytes
 * 0x00-0x1F and 0x7F, and the C1 code points U+0080-U+009F in UTF-8 — becomes the four characters \xNN
 * (NN: the byte, or the code point, in upper-case hex), so no text from a store or a file can move the
 * cursor, retitle the window or hide what follows. s itself when it has none, else a copy in *tmp as
 * hu_utf8_clean gives it (free *tmp; s when out of memory). */
const char *hu_term_clean(const char *s, char **tmp);

#endif
