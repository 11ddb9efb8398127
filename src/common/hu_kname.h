/* Kernel names for people where one name belongs to kernels of several programs: "name#3f2a91c0", the name
 * and the first hex digits of its program's identity (kernel_symbol.program_hash), as CLIntercept's
 * KernelNameHashTracking shows them; a name of one program only stays as it is. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_KNAME_H
#define HUBPROF_HU_KNAME_H

#include <stddef.h>

#define HU_KNAME_DIGITS 8 /* digits of the program identity shown, more where two share them */

/* n records of `stride` bytes at recs, each with a malloc'd name (char * at name_off) and its program's
 * identity (char * at prog_off, "" or NULL unknown): a name that two identities share is replaced, for each
 * record with an identity, by "name#digits" (freeing the old string). Records with the same name and
 * identity (the same kernel in several processes) get the same text. 0, or -1 out of memory (names already
 * replaced stay valid). */
int hu_kname_disambiguate(void *recs, size_t n, size_t stride, size_t name_off, size_t prog_off);

#endif
