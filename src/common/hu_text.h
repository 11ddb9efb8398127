/* Text helpers shared by the CLI, the counters and the analysis: CSV fields, comma-separated name lists,
 * and the edit distance behind "did you mean" suggestions. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_TEXT_H
#define HUBPROF_HU_TEXT_H

#include "hu.h"

#include <stddef.h>
#include <stdio.h>

/* s as one CSV field: as it is, or in double quotes (quotes doubled) when it holds , " CR or LF. */
void hu_csv_write_str(FILE *out, const char *s);

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

#endif
