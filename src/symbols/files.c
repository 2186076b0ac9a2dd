// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The executable files processes map, each read once for its symbols
 * and (with inlined frames) its DWARF, shared by every process mapping
 * it; idle ones kept for the next process, within bounds. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "symbols/symbols_internal.h"
#include "util/grow.h"
#include "util/log.h"

static size_t file_at(const struct pmt_syms *s, uint64_t dev, uint64_t ino)
{
	size_t lo = 0, hi = s->nfiles;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct file *f = s->files[mid];

		if (f->dev < dev || (f->dev == dev && f->ino < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Its path names it (the same file) in this mount namespace: what needs
 * it later can open it again there. */
static bool at_path(const struct file *f)
{
	struct stat st;

	return f->path[0] == '/' && !stat(f->path, &st) && st.st_dev == f->dev &&
	       st.st_ino == f->ino;
}

/* The file at path if it is still the one mapped, else the process's
 * own reference to its mapping; -1. */
static int open_mapped(const struct file *f, uint32_t pid, uint64_t start, uint64_t end)
{
	char mf[64];
	struct stat st;
	int fd = -1;

	if (f->path[0] == '/') {
		fd = open(f->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && st.st_dev == f->dev && st.st_ino == f->ino)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	if (!pid)
		return -1;
	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	return open(mf, O_RDONLY | O_CLOEXEC);
}

/* The file (dev, ino), registered at first sight. hold: open it now,
 * while the mapping process surely lives. */
struct file *syms_file_get(struct pmt_syms *s, uint64_t dev, uint64_t ino, const char *path,
			   bool hold, uint32_t pid, uint64_t start, uint64_t end)
{
	size_t at = file_at(s, dev, ino), len;
	struct file *f;

	if (at < s->nfiles && s->files[at]->dev == dev && s->files[at]->ino == ino)
		return s->files[at];
	f = calloc(1, sizeof(*f));
	len = strlen(path);
	/* maps and records name a removed file "... (deleted)" */
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		len -= 10;
	if (!f || !(f->path = strndup(path, len)) ||
	    !pmt_grow_insert((void **)&s->files, &s->nfiles, &s->fcap, sizeof(*s->files), at, 64)) {
		if (f)
			free(f->path);
		free(f);
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	f->fd = -1;
	if (hold && (dev || ino) && s->held < MAX_HELD_FDS &&
	    (f->fd = open_mapped(f, pid, start, end)) >= 0)
		s->held++;
	s->files[at] = f;
	s->idle++; /* until a mapping refers to it */
	f->idle_since = ++s->seq;
	return f;
}

void syms_file_ref(struct pmt_syms *s, struct file *f)
{
	if (!f->refs++)
		s->idle--;
}

/* The file no mapping names any more waits among the idle ones; the
 * longest idle goes when there are too many. */
void syms_file_unref(struct pmt_syms *s, struct file *f)
{
	size_t i, oldest = SIZE_MAX;

	if (--f->refs)
		return;
	f->idle_since = ++s->seq;
	if (++s->idle <= MAX_IDLE_FILES)
		return;
	for (i = 0; i < s->nfiles; i++)
		if (!s->files[i]->refs &&
		    (oldest == SIZE_MAX || s->files[i]->idle_since < s->files[oldest]->idle_since))
			oldest = i;
	syms_file_free(s, s->files[oldest]);
	pmt_grow_remove(s->files, &s->nfiles, sizeof(*s->files), oldest);
	s->idle--;
}

/* The file, through a mapping of process pid: the descriptor held
 * since it was mapped (handed over), else opened now; -1. */
int syms_file_open(struct pmt_syms *s, struct file *f, uint32_t pid, const struct map *m)
{
	int fd = f->fd;

	if (fd >= 0) {
		f->fd = -1;
		s->held--;
		return fd;
	}
	fd = open_mapped(f, pid, m->start, m->end);
	/* replaced and its process gone: the path is all there is (perf's
	 * way) */
	if (fd < 0 && f->path[0] == '/')
		fd = open(f->path, O_RDONLY | O_CLOEXEC);
	return fd;
}

/* Its DWARF closed, the answers it gave kept (pmt_srcfile__sleep) */
static void src_close(struct pmt_syms *s, struct file *f)
{
	pmt_srcfile__sleep(f->src);
	s->nsrc--;
	if (pmt_verbose >= 2)
		pmt_info("DWARF of %s closed (%zu open)", f->path, s->nsrc);
}

/* (-vv: which files' DWARF a run holds at once) */
static void src_opened(struct pmt_syms *s, struct file *f)
{
	s->nsrc++;
	f->src_used_ns = pmt_now_ns();
	if (pmt_verbose >= 2)
		pmt_info("DWARF of %s opened (%zu open)", f->path, s->nsrc);
}

/* Close the DWARF used longest ago when too many are open. */
static void src_evict(struct pmt_syms *s)
{
	struct file *old = NULL;
	size_t i;

	if (s->nsrc < MAX_SRC_FILES)
		return;
	for (i = 0; i < s->nfiles; i++)
		if (syms_src_open(s->files[i]) &&
		    (!old || s->files[i]->src_used_ns < old->src_used_ns))
			old = s->files[i];
	if (old)
		src_close(s, old);
}

/* The file's path where it names one in this mount namespace (its
 * debuglink is looked for beside it), else NULL */
static const char *abs_path(const struct file *f)
{
	return f->path[0] == '/' ? f->path : NULL;
}

const struct pmt_elf_loads *syms_file_loads(struct pmt_syms *s, struct file *f, uint32_t pid,
					    const struct map *m)
{
	int fd;

	if (f->loads_tried)
		return f->loads;
	f->loads_tried = true;
	/* the descriptor held stays held, for the symbols */
	fd = f->fd >= 0 ? f->fd : syms_file_open(s, f, pid, m);
	if (fd < 0)
		return NULL;
	f->loads = malloc(sizeof(*f->loads));
	if (f->loads && pmt_elf__loads(fd, f->loads)) {
		free(f->loads);
		f->loads = NULL;
	}
	if (fd != f->fd)
		close(fd);
	return f->loads;
}

/* Its DWARF, opened at fd when inlined frames are asked for; or opened
 * again, where it was closed (asleep) and an address it kept no answer
 * for is asked (false: it cannot be: asleep still). */
bool syms_file_src(struct pmt_syms *s, struct file *f, int fd)
{
	const char *debug = f->tab ? pmt_symfile__debug_path(f->tab) : NULL;

	if (f->src && pmt_srcfile__asleep(f->src)) {
		if (fd < 0)
			return false;
		src_evict(s);
		if (!pmt_srcfile__wake(f->src, fd, abs_path(f), debug))
			return false;
		src_opened(s, f);
		return true;
	}
	if (!s->inlines || f->src_tried)
		return f->src != NULL;
	f->src_tried = true;
	if (fd < 0)
		return false;
	src_evict(s);
	f->src = pmt_srcfile__open(fd, abs_path(f), debug, s->demangle, s->dcache);
	if (f->src)
		src_opened(s, f);
	return f->src != NULL;
}

size_t pmt_syms__let_go(struct pmt_syms *s, uint64_t idle_ns)
{
	uint64_t now = pmt_now_ns();
	size_t i, n = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nfiles && s->nsrc; i++) {
		struct file *f = s->files[i];

		if (syms_src_open(f) && now - f->src_used_ns >= idle_ns && at_path(f)) {
			src_close(s, f);
			n++;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* debuginfod, when the environment names servers: made at the first
 * stripped file */
static struct pmt_debuginfod *debuginfod(struct pmt_syms *s)
{
	if (!s->dbgd_tried) {
		s->dbgd_tried = true;
		s->dbgd = pmt_debuginfod__new();
	}
	return s->dbgd;
}

/* A stripped file's debug file asked of debuginfod, once. */
static void ask_debug(struct pmt_syms *s, struct file *f)
{
	const char *id = pmt_symfile__build_id(f->tab);

	if (!id[0] || !debuginfod(s))
		return;
	f->fetch_gen = pmt_debuginfod__generation(s->dbgd);
	f->fetching = pmt_debuginfod__ask(s->dbgd, id);
}

/* The file's debug file has come since it was read: read it again with
 * it (through the mapping of pid, or its path). */
static void fetched(struct pmt_syms *s, struct file *f, uint32_t pid, const struct map *m)
{
	uint64_t gen = pmt_debuginfod__generation(s->dbgd);
	enum pmt_fetch_state st;
	const char *path = NULL;
	struct pmt_symfile *tab;
	int fd;

	if (gen == f->fetch_gen)
		return;
	f->fetch_gen = gen;
	st = pmt_debuginfod__state(s->dbgd, pmt_symfile__build_id(f->tab), &path);
	if (st == PMT_FETCH_PENDING)
		return;
	f->fetching = false;
	if (st != PMT_FETCH_DONE)
		return;
	fd = syms_file_open(s, f, pid, m);
	if (fd < 0)
		return;
	tab = pmt_symfile__read(fd, NULL, path, s->demangle);
	if (tab) {
		pmt_symfile__free(f->tab);
		f->tab = tab;
		/* its DWARF, too: from the debug file */
		if (f->src)
			src_close(s, f);
		f->src_tried = false;
		if (!at_path(f))
			syms_file_src(s, f, fd);
	}
	close(fd);
}

/* Its symbols (and DWARF), read the first time they are needed through
 * a mapping of process pid. */
const struct pmt_symfile *syms_file_table(struct pmt_syms *s, struct file *f, uint32_t pid,
					  const struct map *m)
{
	int fd;

	if (f->tried) {
		if (f->fetching)
			fetched(s, f, pid, m);
		return f->tab;
	}
	f->tried = true;
	if (!f->dev && !f->ino)
		return f->tab = pmt_symfile__vdso();
	fd = syms_file_open(s, f, pid, m);
	if (fd < 0)
		return NULL;
	f->tab = pmt_symfile__read(fd, abs_path(f), NULL, s->demangle);
	if (f->tab && pmt_symfile__stripped(f->tab))
		ask_debug(s, f);
	if (!at_path(f))
		syms_file_src(s, f, fd);
	close(fd);
	return f->tab;
}

void syms_file_free(struct pmt_syms *s, struct file *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		s->held--;
	}
	pmt_symfile__free(f->tab);
	free(f->loads);
	if (syms_src_open(f))
		s->nsrc--;
	pmt_srcfile__free(f->src);
	free(f->path);
	free(f);
}
