/* Directory listing: the files with one extension over a search path of folders (an earlier folder wins
 * a name found twice), sorted by file name. Used for the device descriptions and the metric sets. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_DIR_H
#define HUBPROF_HU_DIR_H

#include "hu.h"

#include <stddef.h>

/* Full paths of the files "dir/NAME.ext" (ext like ".metrics"; hidden files skipped) in the first nd
 * folders of dirs (missing or unreadable folders skipped), NULL-terminated, in *paths (free with
 * hu_strv_free of hu_text.h), the count in *n when n is given. HU_OK, or HU_ERR_NOMEM (nothing returned). */
hu_status hu_dir_find(const char *const *dirs, size_t nd, const char *ext, char ***paths, size_t *n);

#endif
