// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The machine's CPUs and a process's threads (machine.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "abi/probe.h"
#include "util/grow.h"
#include "util/machine.h"
#include "util/strutil.h"

int pmt_parse_cpulist(const char *s, uint64_t *mask, int nbits, struct pmt_error *err)
{
	const char *p = s;
	char *end;
	long a, b;

	memset(mask, 0, (size_t)(nbits + 63) / 64 * sizeof(*mask));
	if (!*s)
		return pmt_error__usage(err, "-C/--cpu: empty CPU list; expected e.g. 0-3,6");
	while (*p) {
		if (*p < '0' || *p > '9')
			goto bad;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtol(p, &end, 10);
			p = end;
		}
		if (a > b || b >= nbits)
			return pmt_error__usage(
				err, "-C/--cpu: '%s': CPU range must be ascending and below %d", s,
				nbits);
		for (; a <= b; a++)
			mask[a / 64] |= 1ULL << (a % 64);
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	return pmt_error__usage(err, "-C/--cpu: '%s' is not a CPU list; expected e.g. 0-3,6", s);
}

int pmt_online_cpus(uint64_t *mask)
{
	struct pmt_error err = {0};
	char *text;
	int ret;

	ret = pmt_read_file("/sys/devices/system/cpu/online", &text, NULL);
	if (ret)
		return ret;
	text[strcspn(text, "\n")] = '\0';
	ret = pmt_parse_cpulist(text, mask, PMT_MAX_CPUS, &err);
	free(text);
	return ret;
}

int pmt_first_online_cpu(void)
{
	uint64_t mask[PMT_MAX_CPUS / 64];
	int i;

	if (pmt_online_cpus(mask))
		return 0;
	for (i = 0; i < PMT_MAX_CPUS; i++)
		if (mask[i / 64] & (1ULL << (i % 64)))
			return i;
	return 0;
}

int pmt_thread_ids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *d;
	pid_t *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		nv = pmt_grow(v, &cap, cnt, sizeof(*v), 16);
		if (!nv) {
			err = -ENOMEM;
			break;
		}
		v = nv;
		v[cnt++] = (pid_t)atoi(d->d_name);
	}
	closedir(dir);
	if (err) {
		free(v);
		return err;
	}
	*tids = v;
	*n = cnt;
	return 0;
}

uint64_t pmt_caps_effective(void)
{
	uint64_t eff = 0;
	char *status, *p;

	if (!pmt_read_file("/proc/self/status", &status, NULL)) {
		p = strstr(status, "CapEff:");
		if (p)
			eff = strtoull(p + 7, NULL, 16);
		free(status);
	}
	return eff;
}

void pmt_pages_give_back(const void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (!p || !n)
		return;
	/* the pages wholly inside: a neighbour's may have been written
	 * (a loader's relocations beside .rodata) */
	lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	hi = ((uintptr_t)p + n) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
