/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Debug files with their compressed sections (SHF_COMPRESSED: Debian's
 * -dbg and -dbgsym packages, gcc -gz) kept uncompressed on disk, as perf
 * keeps a build-id cache. libdw inflates every compressed section of a
 * file when it opens its DWARF (elfutils 0.188): libc6-dbg's 4 MB debug
 * file becomes 25 MB of heap at each open. An uncompressed copy is
 * mapped instead: only the pages a lookup reads are resident, and they
 * are the page cache's to drop.
 *
 * The copies live in one directory (by default
 * $XDG_CACHE_HOME/pmtrace/debug, else ~/.cache/pmtrace/debug: where
 * debuginfod's client keeps its own), made mode 0700 and used only when
 * it is this user's and no one else may write to it. A file is copied
 * only when it is this user's or root's and no one else may write to
 * it, so no other user's file ever stands for another with the same
 * build-id. A copy is named by the file's build-id, size and mtime, and
 * written with zlib a block at a time (no more memory than a file's
 * section headers), into a temporary file renamed when whole. The
 * directory is held to a size bound, the copies used longest ago
 * removed first (a use touches its mtime), and a copy is not made when
 * it would leave the file system less than PMT_DEBUGCACHE_FREE free.
 */
#ifndef PMT_DEBUGCACHE_H
#define PMT_DEBUGCACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <libelf.h>

#define PMT_DEBUGCACHE_MAX (512ull << 20)
#define PMT_DEBUGCACHE_FREE (1ull << 30)

struct pmt_debugcache;

/* The cache in dir (NULL: the default above), at most max bytes (0:
 * PMT_DEBUGCACHE_MAX). The directory is made at the first copy. */
struct pmt_debugcache *pmt_debugcache__new(const char *dir, uint64_t max);
void pmt_debugcache__free(struct pmt_debugcache *c);

/* A read-only descriptor of the copy of the ELF file open at fd (elf
 * its ELF) with its sections uncompressed, made now if there is none;
 * -1 when it has no compressed section, or no copy can be made (c
 * NULL, not the user's or root's file, no build-id, another class or
 * byte order than this machine's, the bound, the disk): the caller
 * reads the file itself. */
int pmt_debugcache__open(struct pmt_debugcache *c, int fd, Elf *elf);

/* Copies made and used by this process, and files left uncompressed
 * (that could not be copied), for -v and tests. */
struct pmt_debugcache_stats {
	uint64_t made, used, refused;
};
struct pmt_debugcache_stats pmt_debugcache__stats(const struct pmt_debugcache *c);

#endif
