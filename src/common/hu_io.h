/* Whole-buffer file I/O: the read/write loops that retry on EINTR and continue after short transfers,
 * and syncing a folder (so a rename or a new file in it is durable). 0 on success, -1 with errno set. */
/* SPDX-License-Identifier: MIT */
#ifndef HUBPROF_HU_IO_H
#define HUBPROF_HU_IO_H

#include <stddef.h>
#include <stdint.h>

/* Write all n bytes at the file position / at offset off. A write that makes no progress is EIO. */
int hu_write_all(int fd, const void *p, size_t n);
int hu_pwrite_all(int fd, const void *p, size_t n, uint64_t off);
/* Read exactly n bytes at offset off: -1 (errno EIO when the file ends first). */
int hu_pread_all(int fd, void *p, size_t n, uint64_t off);
/* Read up to n bytes from the file position, stopping at the end of the file: the count, or -1. */
long long hu_read_full(int fd, void *p, size_t n);
/* fsync(2) a folder. */
int hu_fsync_dir(const char *dir);

#endif
