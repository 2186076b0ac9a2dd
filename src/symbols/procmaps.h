/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A live process's executable mappings, as /proc/PID/maps lists them,
 * and the live processes, as /proc lists them: the one reader of each for
 * the symbolizer and the unwinder. */
#ifndef PMT_PROCMAPS_H
#define PMT_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmt_procmap {
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min; /* of the file's device; ino 0: no file */
	const char *path;      /* "/usr/lib/...", "[vdso]", "" (valid in the call) */
};

/* One line of a maps file (its newline cut): true, and m filled (path
 * into line), when it is an executable mapping. */
bool pmt_procmaps__line(char *line, struct pmt_procmap *m);
/* fn for each executable mapping of process pid, in address order.
 * -errno when its maps cannot be read (the process is gone). */
int pmt_procmaps__each(uint32_t pid, void (*fn)(void *ctx, const struct pmt_procmap *m), void *ctx);
/* Process pid's maps opened for pmt_procmaps__query: the descriptor, or
 * -errno (-ENOTTY where the kernel has no PROCMAP_QUERY, Linux 6.11:
 * every later call says so at once). */
int pmt_procmaps__open(uint32_t pid);
/* The mapping (any protection, file-backed or anonymous: ino 0) holding
 * addr in the maps fd opened (one PROCMAP_QUERY): out filled, a file's
 * path into path (len bytes; "" for no file). -ENOENT when addr is in
 * none, -ESRCH when the process (its address space as opened) is gone,
 * -ENOTTY where the kernel has no such query, -errno else. */
int pmt_procmaps__query(int fd, uint64_t addr, struct pmt_procmap *out, char *path, size_t len);
/* fn for each process /proc lists now. -errno when /proc cannot be read. */
int pmt_procmaps__pids(void (*fn)(void *ctx, uint32_t pid), void *ctx);

#endif
