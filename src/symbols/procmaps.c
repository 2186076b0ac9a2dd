// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/procmaps.h"

/* A number in base 16 or 10 at *p, and *p past it; false when none. */
static bool number(char **p, int base, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, base);
	if (end == *p || errno)
		return false;
	*p = end;
	return true;
}

static bool expect(char **p, char c)
{
	return **p == c ? (++*p, true) : false;
}

bool pmt_procmaps__line(char *line, struct pmt_procmap *m)
{
	unsigned long long start, end, pgoff, maj, min, ino;
	char *p = line, *perms;

	/* "start-end perms offset maj:min inode   path", by hand: a churn's
	 * processes make this a hot loop */
	line[strcspn(line, "\n")] = '\0';
	if (!number(&p, 16, &start) || !expect(&p, '-') || !number(&p, 16, &end) ||
	    !expect(&p, ' '))
		return false;
	perms = p;
	p += strcspn(p, " ");
	if (p - perms < 3 || perms[2] != 'x' || !expect(&p, ' ') || !number(&p, 16, &pgoff) ||
	    !expect(&p, ' ') || !number(&p, 16, &maj) || !expect(&p, ':') ||
	    !number(&p, 16, &min) || !expect(&p, ' ') || !number(&p, 10, &ino))
		return false;
	p += strspn(p, " ");
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->maj = (unsigned int)maj;
	m->min = (unsigned int)min;
	m->ino = ino;
	m->path = p;
	return true;
}

int pmt_procmaps__each(uint32_t pid, void (*fn)(void *ctx, const struct pmt_procmap *m), void *ctx)
{
	char path[64], line[4096 + 128], buf[16384];
	struct pmt_procmap m;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	setvbuf(f, buf, _IOFBF, sizeof(buf)); /* a process's maps in a read or two */
	while (fgets(line, sizeof(line), f))
		if (pmt_procmaps__line(line, &m))
			fn(ctx, &m);
	fclose(f);
	return 0;
}

/* linux/fs.h of 6.11 (PROCMAP_QUERY): Debian 12's headers predate it */
struct procmap_query_v1 {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PMT_PROCMAP_QUERY _IOWR('f', 17, struct procmap_query_v1)

static bool query_unsupported;

int pmt_procmaps__open(uint32_t pid)
{
	char name[64];
	int fd;

	if (__atomic_load_n(&query_unsupported, __ATOMIC_RELAXED))
		return -ENOTTY;
	snprintf(name, sizeof(name), "/proc/%u/maps", pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pmt_procmaps__query(int fd, uint64_t addr, struct pmt_procmap *out, char *path, size_t len)
{
	/* the mapping holding addr, file or not (no flags: covering) */
	struct procmap_query_v1 q = {
		.size = sizeof(q),
		.query_addr = addr,
		.vma_name_size = (uint32_t)len,
		.vma_name_addr = (uint64_t)(uintptr_t)path,
	};
	int err;

	if (ioctl(fd, PMT_PROCMAP_QUERY, &q)) {
		err = -errno;
		if (err == -ENOTTY || err == -EINVAL)
			__atomic_store_n(&query_unsupported, true, __ATOMIC_RELAXED);
		return err == -EINVAL ? -ENOTTY : err;
	}
	*out = (struct pmt_procmap){.start = q.vma_start,
				    .end = q.vma_end,
				    .pgoff = q.vma_offset,
				    .ino = q.inode,
				    .maj = q.dev_major,
				    .min = q.dev_minor,
				    .path = path};
	if (!q.inode && len)
		path[0] = '\0'; /* an anonymous mapping's name ([heap]) is no file's */
	return 0;
}

int pmt_procmaps__pids(void (*fn)(void *ctx, uint32_t pid), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned long pid;
	char *end;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid = strtoul(e->d_name, &end, 10);
		if (pid && !*end && pid <= UINT32_MAX)
			fn(ctx, (uint32_t)pid);
	}
	closedir(d);
	return 0;
}
