/* hubprof export macro: HP_API marks every function of the public API (the headers in include/hubprof);
 * the library is built with -fvisibility=hidden and a version script, so nothing else leaves it. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_EXPORT_H
#define HUBPROF_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define HP_API __attribute__((visibility("default")))
#else
#define HP_API
#endif

#endif
