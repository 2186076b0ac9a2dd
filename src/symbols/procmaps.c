// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/procmaps.h"

bool pmt_procmaps__line(char *line, struct pmt_procmap *m)
{
	unsigned long long start, end, pgoff, ino;
	char perms[8];
	int pos = -1;

	/* "start-end perms offset maj:min inode   path" */
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &m->maj,
		   &m->min, &ino, &pos) != 7 ||
	    pos < 0 || strlen(perms) < 3 || perms[2] != 'x')
		return false;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	m->path = line + pos;
	return true;
}

int pmt_procmaps__each(uint32_t pid, void (*fn)(void *ctx, const struct pmt_procmap *m), void *ctx)
{
	char path[64], line[4096 + 128];
	struct pmt_procmap m;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (pmt_procmaps__line(line, &m))
			fn(ctx, &m);
	fclose(f);
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
