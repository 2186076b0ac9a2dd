// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbols/jitmap.h"
#include "util/grow.h"

struct jitsym {
	uint64_t start, end;
	uint32_t seq;  /* the line's order: a later one wins */
	uint32_t name; /* offset in names */
};

struct pmt_jitmap {
	int fd;
	off_t done;	     /* bytes of the file read (whole lines) */
	uint64_t checked_ns; /* when its size was last looked at */
	bool checked;
	struct jitsym *v;
	size_t n, cap;
	size_t nsorted; /* v's first ones, in order; the rest read since */
	char *names;
	size_t nlen, ncap;
	size_t skipped;
};

/* The pid innermost in pid's namespaces (the last of NSpid), or pid. */
static uint32_t ns_pid(uint32_t pid)
{
	char path[64], line[256];
	uint32_t ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;

			for (;;) {
				unsigned long v = strtoul(p, &end, 10);

				if (end == p)
					break;
				ns = (uint32_t)v;
				p = end;
			}
			break;
		}
	}
	fclose(f);
	return ns;
}

struct pmt_jitmap *pmt_jitmap__from_fd(int fd)
{
	struct pmt_jitmap *j;

	if (fd < 0)
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j) {
		close(fd);
		return NULL;
	}
	j->fd = fd;
	return j;
}

/* Opened as perf opens one, and stricter: not through a symbolic link,
 * not a FIFO or device, owned by root or by the process's own user (uid;
 * -1 when not known: root's alone). Another user's file is not taken for
 * the process's names: -EPERM, its owner in *owner. */
static int open_owned(const char *path, uint32_t uid, uid_t *owner)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (st.st_uid != 0 && (uid == UINT32_MAX || st.st_uid != uid)) {
		*owner = st.st_uid;
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct pmt_jitmap *pmt_jitmap__open(uint32_t pid, uint32_t uid, uid_t *refused)
{
	char path[96];
	int fd;

	/* its own root and pid: the same file as /tmp/perf-PID.map for a
	 * process in pmtrace's namespaces */
	snprintf(path, sizeof(path), "/proc/%u/root/tmp/perf-%u.map", pid, ns_pid(pid));
	fd = open_owned(path, uid, refused);
	if (fd == -ENOENT || fd == -EACCES) {
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
		fd = open_owned(path, uid, refused);
	}
	if (fd == -EPERM)
		errno = EPERM;
	return fd < 0 ? NULL : pmt_jitmap__from_fd(fd);
}

void pmt_jitmap__free(struct pmt_jitmap *j)
{
	if (!j)
		return;
	close(j->fd);
	free(j->v);
	free(j->names);
	free(j);
}

/* A hex number, with or without 0x; the end, or NULL. */
static const char *hex(const char *p, uint64_t *v)
{
	char *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	errno = 0;
	*v = strtoull(p, &end, 16);
	return end == p || errno || (*end != ' ' && *end != '\t') ? NULL : end;
}

/* One line (without its newline): "START SIZE NAME". */
static void add_line(struct pmt_jitmap *j, const char *line, size_t len)
{
	uint64_t start, size;
	const char *p = hex(line, &start), *name;
	size_t nlen;
	void *v;

	if (!p || !(p = hex(p, &size)) || !size || start + size < start) {
		j->skipped += len > 0;
		return;
	}
	for (name = p; *name == ' ' || *name == '\t'; name++)
		;
	nlen = len - (size_t)(name - line);
	if (!nlen || j->n >= PMT_JITMAP_MAX) {
		j->skipped++;
		return;
	}
	if (!(v = pmt_grow(j->v, &j->cap, j->n, sizeof(*j->v), 256)))
		return;
	j->v = v;
	if (!(v = pmt_grow_to(j->names, &j->ncap, j->nlen + nlen + 1, 1, 4096)))
		return;
	j->names = v;
	memcpy(j->names + j->nlen, name, nlen);
	j->names[j->nlen + nlen] = '\0';
	j->v[j->n] = (struct jitsym){start, start + size, (uint32_t)j->n, (uint32_t)j->nlen};
	j->nlen += nlen + 1;
	j->n++;
}

/* The lines written since the last read (whole ones: a line being
 * written is read next time). */
static void read_more(struct pmt_jitmap *j)
{
	char buf[65536];
	size_t have = 0, i, from;
	ssize_t r;

	for (;;) {
		r = pread(j->fd, buf + have, sizeof(buf) - have, j->done + (off_t)have);
		if (r <= 0)
			return;
		have += (size_t)r;
		for (from = i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = '\0';
			add_line(j, buf + from, i - from);
			from = i + 1;
		}
		j->done += (off_t)from;
		if (!from && have == sizeof(buf)) { /* a line longer than buf */
			j->done += (off_t)have;
			j->skipped++;
			from = have;
		}
		memmove(buf, buf + from, have - from);
		have -= from;
	}
}

static int by_start(const void *a, const void *b)
{
	const struct jitsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The lines read since the last lookup sorted and merged into the rest: a
 * map that keeps growing costs its new lines, not a sort of all of it. */
static void sort_new(struct pmt_jitmap *j)
{
	size_t a = 0, b = j->nsorted, k = 0;
	struct jitsym *m;

	if (j->nsorted == j->n)
		return;
	pmt_sort(j->v + j->nsorted, j->n - j->nsorted, sizeof(*j->v), by_start);
	m = j->nsorted ? malloc(j->n * sizeof(*m)) : NULL;
	if (m) {
		while (a < j->nsorted && b < j->n)
			m[k++] = by_start(&j->v[a], &j->v[b]) <= 0 ? j->v[a++] : j->v[b++];
		while (a < j->nsorted)
			m[k++] = j->v[a++];
		while (b < j->n)
			m[k++] = j->v[b++];
		memcpy(j->v, m, j->n * sizeof(*m));
		free(m);
	} else if (j->nsorted) { /* no memory for the merge: all of it */
		pmt_sort(j->v, j->n, sizeof(*j->v), by_start);
	}
	j->nsorted = j->n;
}

static const struct jitsym *find(const struct pmt_jitmap *j, uint64_t addr)
{
	size_t lo = 0, hi = j->nsorted, mid;

	/* the last entry starting at or below addr (the latest line of
	 * those starting there) */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (j->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < j->v[lo - 1].end ? &j->v[lo - 1] : NULL;
}

const char *pmt_jitmap__name(struct pmt_jitmap *j, uint64_t addr, uint64_t *off, uint64_t now_ns)
{
	const struct jitsym *s = j ? find(j, addr) : NULL;
	struct stat st;

	if (!s && j && (!j->checked || now_ns - j->checked_ns >= PMT_JITMAP_RECHECK_NS)) {
		j->checked = true;
		j->checked_ns = now_ns;
		if (!fstat(j->fd, &st) && st.st_size > j->done)
			read_more(j);
		sort_new(j);
		s = find(j, addr);
	}
	if (!s)
		return NULL;
	*off = addr - s->start;
	return j->names + s->name;
}

size_t pmt_jitmap__count(const struct pmt_jitmap *j)
{
	return j ? j->n : 0;
}

size_t pmt_jitmap__skipped(const struct pmt_jitmap *j)
{
	return j ? j->skipped : 0;
}
