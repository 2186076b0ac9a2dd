/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A stripped file's separate debug file, found where gdb, elfutils and
 * perf look on this machine: by build-id under /usr/lib/debug/.build-id
 * (Debian's -dbgsym packages), then by the name and CRC in its
 * .gnu_debuglink beside the file, in .debug/ beside it, and under
 * /usr/lib/debug with the file's directory. A debuglink candidate whose
 * CRC differs (a debug file of another build) is passed over.
 * Files served by debuginfod come through symbols/debuginfod.h.
 */
#ifndef PMT_DEBUGFILE_H
#define PMT_DEBUGFILE_H

#include <libelf.h>

/* The debug file of elf (the file at path, NULL when unknown), opened
 * read-only; *found its path (malloc'd, the
 * caller frees). -1 when there is none. */
int pmt_debugfile__open(Elf *elf, const char *path, char **found);

#endif
