/* Source lines from a code object's stored IR (code_lines.c) for the functions whose rows the object lacks
 * (PoCL's work-group functions of a program built with -g alone). Internal; prefix cl_. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_ANALYSIS_CODE_LINES_H
#define HUBPROF_ANALYSIS_CODE_LINES_H

#include "code_read.h"

#include <stddef.h>

/* Compile ir (irn bytes, LLVM bitcode) again through the LLVM plugin and add to c (read from the object so,
 * sn bytes) the line rows of each function that has none in c and whose regenerated code is identical to
 * so's. 0 when every such function got rows; 1 when the IR has no locations for them either; -1 otherwise,
 * with why (whyn bytes) saying why (the functions that were identical keep the rows they got). */
int cl_lines_from_ir(cr_code *c, const void *so, size_t sn, const void *ir, size_t irn, char *why,
                     size_t whyn);

/* The same from the regenerated object (obj, on bytes, any bytes: its debug sections are relocated in place).
 */
int cl_lines_from_object(cr_code *c, const void *so, size_t sn, unsigned char *obj, size_t on, char *why,
                         size_t whyn);

#endif
