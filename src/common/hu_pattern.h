/* Bounds on the name patterns a user gives (--kernel and --device globs, --kernel regular expressions, and
 * HUBPROF_KERNEL as the collector reads it): checked before a pattern is compiled, so compiling and
 * matching it cost little whatever its text (a 130 KB regex cost glibc 3 GB and 17 s to compile). */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_PATTERN_H
#define HUBPROF_HU_PATTERN_H

#include <stddef.h>

#define HU_PATTERN_MAX 1024    /* bytes of one pattern, glob or regular expression */
#define HU_REGEX_SIZE_MAX 4096 /* a regular expression's atoms with its {m,n} repetitions written out */

/* 0 when the POSIX extended regular expression re (len bytes, (size_t)-1 for all of it) is within the
 * bounds: at most HU_PATTERN_MAX bytes, at most HU_REGEX_SIZE_MAX atoms once its bounded repetitions are
 * expanded (as glibc's compiler does: "(a{255}){255}" is 65 025), no back-reference (\1 to \9, whose
 * matching cost has no bound). Else -1 with a static reason in *why. Syntax errors are left to regcomp. */
int hu_regex_bounded(const char *re, size_t len, const char **why);
/* The same for a glob (fnmatch): its length only. */
int hu_glob_bounded(const char *glob, const char **why);

/* A name pattern with its syntax given by a prefix: "re:" a POSIX extended regular expression searched
 * anywhere in the name, "glob:" a glob matching the whole name (fnmatch); without a prefix, `dflt`
 * (HU_PAT_GLOB: analyze, diff, report, roofline; HU_PAT_REGEX: trace, profile, sample). Returns the text
 * after the prefix, *kind its syntax. */
enum { HU_PAT_GLOB = 0, HU_PAT_REGEX = 1 };
const char *hu_pattern_kind(const char *pat, int dflt, int *kind);
/* Does pattern pat (syntax by prefix, else dflt) match name? A regular expression that does not compile
 * matches nothing. Compiles it at each call: for kernel or device names, not per row. */
int hu_pattern_match(const char *pat, int dflt, const char *name);
/* A glob as an anchored POSIX extended regular expression matching the same names, into out (len bytes):
 * 0, or -1 when it does not fit. */
int hu_glob_to_regex(const char *glob, char *out, size_t len);

#endif
