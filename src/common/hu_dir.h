/* Folders: the files with one extension over a search path of folders (an earlier folder wins a name found
 * twice: device descriptions, metric sets), one folder's entries sorted, and a folder removed. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_DIR_H
#define HUBPROF_HU_DIR_H

#include "hu.h"

#include <stddef.h>

/* Full paths of the files "dir/NAME.ext" (ext like ".metrics"; hidden files skipped) in the first nd
 * folders of dirs (missing or unreadable folders skipped), NULL-terminated, in *paths (free with
 * hu_strv_free of hu_text.h), the count in *n when n is given. HU_OK, or HU_ERR_NOMEM (nothing returned). */
hu_status hu_dir_find(const char *const *dirs, size_t nd, const char *ext, char ***paths, size_t *n);

/* The entries of folder dir (never "." or ".."; hidden ones too) whose names start with prefix and end with
 * suffix (NULL: any), sorted by name, NULL-terminated in *names (free with hu_strv_free), the count in *n
 * when n is given: "dir/NAME" with full, else NAME. HU_OK (an empty list when dir cannot be read: errno
 * says why), or HU_ERR_NOMEM with nothing returned. */
hu_status hu_dir_names(const char *dir, const char *prefix, const char *suffix, int full, char ***names,
                       size_t *n);

/* Remove path: a file or link is unlinked (a link is never followed), a folder is emptied `depth` levels
 * deep (deeper folders are left, and so is the folder holding them) and removed. Best effort; errno from
 * the last failure. */
void hu_dir_remove(const char *path, int depth);

#endif
