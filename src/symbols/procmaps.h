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
/* The file-backed mappings (any protection) holding each of the n
 * addresses of process pid, by one PROCMAP_QUERY each (Linux 6.11): out
 * filled, the first one's path into path (len bytes), every path set to
 * it. -ENOENT when an address is in none, -ENOTTY where the kernel has no
 * such query (every later call says so at once), -errno else. */
int pmt_procmaps__query(uint32_t pid, const uint64_t *addrs, size_t n, struct pmt_procmap *out,
			char *path, size_t len);
/* fn for each process /proc lists now. -errno when /proc cannot be read. */
int pmt_procmaps__pids(void (*fn)(void *ctx, uint32_t pid), void *ctx);

#endif
