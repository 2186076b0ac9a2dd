// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "symbols/procmaps.h"
#include "unwind/cpython.h"
#include "symbols/symbols.h"
#include "symbols/srcline.h"
#include "symbols/symfile.h"

/* Exited processes kept for samples not yet printed; beyond this the
 * oldest are forgotten (and counted). */
#define MAX_DEAD 8192
/* Files no process maps any more, kept for the next one that does. */
#define MAX_IDLE_FILES 64
/* Descriptors held for files not yet read (so replaced or deleted files
 * still resolve); beyond this, files are opened by path when read. */
#define MAX_HELD_FDS 128
/* Files whose DWARF is kept open for inlined frames and lines; the one
 * used longest ago is closed beyond this (and opened again by path when
 * needed). */
#define MAX_SRC_FILES 8
/* Python code objects kept (names, line tables), by process and address
 * into a table of this many slots; one that falls on a taken slot
 * replaces it. */
#define PY_CODES 4096

struct ksym {
	uint64_t addr;
	size_t name; /* offset in pmt_syms.knames */
};

/* One executable file, shared by every process mapping it. */
struct file {
	uint64_t dev, ino; /* the key; 0, 0: the vDSO */
	char *path;
	int fd;			 /* held until read, else -1 */
	struct pmt_symfile *tab; /* read on first use */
	bool tried;		 /* read once, even if that failed */
	struct pmt_srcfile *src; /* its DWARF, when it has some and it is open */
	bool src_tried;
	uint64_t src_used;   /* when src last answered (a sequence number) */
	uint32_t refs;	     /* mappings naming it */
	uint64_t idle_since; /* refs 0: when (a sequence number) */
};

struct pycode {
	uint32_t id; /* the kernel's (abi.h); 0: empty */
	uint64_t addr;
	struct pmt_py_code c;
};

struct map {
	uint64_t start, end, pgoff;
	struct file *f;
};

struct proc {
	uint32_t pid;
	bool dead;
	uint64_t exit_ts;
	struct map *maps; /* sorted by start, disjoint */
	uint32_t n, cap;
};

struct dead {
	uint32_t pid;
	uint64_t ts;
};

/* Kernel stacks repeat: the last lookups, direct-mapped by address
 * (binary searches of ~150,000 symbols were a tenth of a streamed
 * stack's cost). The table is read once, so entries never go stale. */
#define KCACHE 1024

struct kcached {
	uint64_t addr; /* 0: empty (no kernel address is 0) */
	const struct ksym *k;
};

struct pmt_syms {
	pthread_mutex_t lock; /* recursive: spans hold it around calls */
	struct ksym *ksyms;
	size_t nksyms;
	struct kcached kcache[KCACHE];
	bool ksyms_read;
	bool demangle;		     /* C++/Rust names as perf shows them */
	bool inlines;		     /* inlined frames and source lines from DWARF */
	size_t nsrc;		     /* files with src open */
	struct pycode *py;	     /* PY_CODES slots, made at first use */
	struct pmt_srcframe pyframe; /* the last Python frame's, for srcframes */
	char *knames;		     /* one block holding every kernel name */
	struct proc **procs;	     /* sorted by pid */
	size_t nprocs, cap;
	struct file **files; /* sorted by (dev, ino) */
	size_t nfiles, fcap, idle, held;
	uint64_t seq;
	struct dead *dead; /* exits in order: a ring of MAX_DEAD */
	size_t dead_head, ndead;
	uint64_t forgotten;
};
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms ("ffffffff81000000 T _stext [mod]"). */
static void read_kallsyms(struct pmt_syms *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t cap = 0, used = 0, kcap = 0;
	char line[512], type, name[256];
	unsigned long long addr;

	s->ksyms_read = true;
	if (!f)
		return;
	/* names into one growing block, found by offset */
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (s->nksyms == cap) {
			struct ksym *k =
				realloc(s->ksyms, (cap = cap ? cap * 2 : 65536) * sizeof(*k));

			if (!k)
				break;
			s->ksyms = k;
		}
		n = strlen(name) + 1;
		if (used + n > kcap) {
			char *p = realloc(s->knames, kcap = (kcap + n) * 2);

			if (!p)
				break;
			s->knames = p;
		}
		memcpy(s->knames + used, name, n);
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = used;
		s->nksyms++;
		used += n;
	}
	fclose(f);
	if (s->nksyms > 1)
		qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
}

static const struct ksym *ksym_find(struct pmt_syms *s, uint64_t addr)
{
	struct kcached *c = &s->kcache[(addr ^ addr >> 10) % KCACHE];
	size_t lo;

	if (c->addr == addr)
		return c->k;
	if (!s->ksyms_read)
		read_kallsyms(s);
	/* the last symbol at or below addr */
	lo = pmt_count_le(s->ksyms, s->nksyms, sizeof(*s->ksyms), offsetof(struct ksym, addr), 8,
			  addr);
	c->addr = addr;
	c->k = lo ? &s->ksyms[lo - 1] : NULL;
	return c->k;
}

struct pmt_syms *pmt_syms__new(bool demangle, bool inlines)
{
	struct pmt_syms *s = calloc(1, sizeof(*s));
	pthread_mutexattr_t a;

	if (!s)
		return NULL;
	s->demangle = demangle;
	s->inlines = inlines;
	s->dead = calloc(MAX_DEAD, sizeof(*s->dead));
	if (!s->dead) {
		free(s);
		return NULL;
	}
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->lock, &a);
	pthread_mutexattr_destroy(&a);
	return s;
}

static void file_free(struct pmt_syms *s, struct file *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		s->held--;
	}
	pmt_symfile__free(f->tab);
	if (f->src)
		s->nsrc--;
	pmt_srcfile__free(f->src);
	free(f->path);
	free(f);
}

static void proc_free(struct pmt_syms *s, struct proc *p);

void pmt_syms__free(struct pmt_syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++)
		proc_free(s, s->procs[i]);
	for (i = 0; i < s->nfiles; i++)
		file_free(s, s->files[i]);
	if (s->py)
		for (i = 0; i < PY_CODES; i++)
			pmt_py__code_free(&s->py[i].c);
	free(s->py);
	free(s->procs);
	free(s->files);
	free(s->dead);
	free(s->ksyms);
	free(s->knames);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void pmt_syms__lock(struct pmt_syms *s)
{
	if (s)
		pthread_mutex_lock(&s->lock);
}

void pmt_syms__unlock(struct pmt_syms *s)
{
	if (s)
		pthread_mutex_unlock(&s->lock);
}

/* Grow an array of pointers by one slot at `at`; false without memory. */
static bool insert_slot(void ***v, size_t *n, size_t *cap, size_t at)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void **g = realloc(*v, nc * sizeof(*g));

		if (!g)
			return false;
		*v = g;
		*cap = nc;
	}
	memmove(&(*v)[at + 1], &(*v)[at], (*n - at) * sizeof(**v));
	(*n)++;
	return true;
}

static void remove_slot(void **v, size_t *n, size_t at)
{
	memmove(&v[at], &v[at + 1], (*n - at - 1) * sizeof(*v));
	(*n)--;
}

/* ---- files ---- */

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
static struct file *file_get(struct pmt_syms *s, uint64_t dev, uint64_t ino, const char *path,
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
	    !insert_slot((void ***)&s->files, &s->nfiles, &s->fcap, at)) {
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

static void file_ref(struct pmt_syms *s, struct file *f)
{
	if (!f->refs++)
		s->idle--;
}

/* The file no mapping names any more waits among the idle ones; the
 * longest idle goes when there are too many. */
static void file_unref(struct pmt_syms *s, struct file *f)
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
	file_free(s, s->files[oldest]);
	remove_slot((void **)s->files, &s->nfiles, oldest);
	s->idle--;
}

/* The file, through a mapping of process pid: the descriptor held
 * since it was mapped (handed over), else opened now; -1. */
static int file_open(struct pmt_syms *s, struct file *f, uint32_t pid, const struct map *m)
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

/* Close the DWARF used longest ago when too many are open. */
static void src_evict(struct pmt_syms *s)
{
	struct file *old = NULL;
	size_t i;

	if (s->nsrc < MAX_SRC_FILES)
		return;
	for (i = 0; i < s->nfiles; i++)
		if (s->files[i]->src && (!old || s->files[i]->src_used < old->src_used))
			old = s->files[i];
	if (!old)
		return;
	pmt_srcfile__free(old->src);
	old->src = NULL;
	old->src_tried = false; /* opened again when asked */
	s->nsrc--;
}

/* Its DWARF, opened at fd when inlined frames are asked for. */
static void file_src(struct pmt_syms *s, struct file *f, int fd)
{
	if (!s->inlines || f->src_tried)
		return;
	f->src_tried = true;
	if (fd < 0)
		return;
	src_evict(s);
	f->src = pmt_srcfile__open(fd, f->tab ? pmt_symfile__build_id(f->tab) : "", s->demangle);
	if (f->src) {
		s->nsrc++;
		f->src_used = ++s->seq;
	}
}

/* Its symbols (and DWARF), read the first time they are needed through
 * a mapping of process pid. */
static const struct pmt_symfile *file_table(struct pmt_syms *s, struct file *f, uint32_t pid,
					    const struct map *m)
{
	int fd;

	if (f->tried)
		return f->tab;
	f->tried = true;
	if (!f->dev && !f->ino)
		return f->tab = pmt_symfile__vdso();
	fd = file_open(s, f, pid, m);
	if (fd < 0)
		return NULL;
	f->tab = pmt_symfile__read(fd, s->demangle);
	file_src(s, f, fd);
	close(fd);
	return f->tab;
}

/* ---- processes ---- */

static struct proc *proc_find(const struct pmt_syms *s, uint32_t pid, size_t *at)
{
	size_t lo = 0, hi = s->nprocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < s->nprocs && s->procs[lo]->pid == pid ? s->procs[lo] : NULL;
}

static void proc_clear(struct pmt_syms *s, struct proc *p)
{
	uint32_t i;

	for (i = 0; i < p->n; i++)
		file_unref(s, p->maps[i].f);
	p->n = 0;
}

static void proc_free(struct pmt_syms *s, struct proc *p)
{
	proc_clear(s, p);
	free(p->maps);
	free(p);
}

static void proc_remove(struct pmt_syms *s, uint32_t pid)
{
	size_t at;
	struct proc *p = proc_find(s, pid, &at);

	if (p) {
		remove_slot((void **)s->procs, &s->nprocs, at);
		proc_free(s, p);
	}
}

/* A process without mappings; an exited one of that pid goes. */
static struct proc *proc_new(struct pmt_syms *s, uint32_t pid)
{
	struct proc *p;
	size_t at;

	proc_remove(s, pid);
	proc_find(s, pid, &at);
	p = calloc(1, sizeof(*p));
	if (!p || !insert_slot((void ***)&s->procs, &s->nprocs, &s->cap, at)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	s->procs[at] = p;
	return p;
}

/* A new mapping replaces whatever it overlaps. */
static void add_map(struct pmt_syms *s, struct proc *p, uint64_t start, uint64_t end,
		    uint64_t pgoff, struct file *f)
{
	uint32_t i, j, at;

	for (i = j = 0; i < p->n; i++) {
		if (p->maps[i].start < end && p->maps[i].end > start)
			file_unref(s, p->maps[i].f);
		else
			p->maps[j++] = p->maps[i];
	}
	p->n = j;
	if (p->n == p->cap) {
		uint32_t nc = p->cap ? p->cap * 2 : 16;
		struct map *m = realloc(p->maps, nc * sizeof(*m));

		if (!m)
			return;
		p->maps = m;
		p->cap = nc;
	}
	for (at = 0; at < p->n && p->maps[at].start < start; at++)
		;
	memmove(&p->maps[at + 1], &p->maps[at], (p->n - at) * sizeof(*p->maps));
	p->maps[at] = (struct map){start, end, pgoff, f};
	p->n++;
	file_ref(s, f);
}

static struct map *map_find(struct proc *p, uint64_t addr)
{
	size_t lo =
		pmt_count_le(p->maps, p->n, sizeof(*p->maps), offsetof(struct map, start), 8, addr);

	return lo && addr < p->maps[lo - 1].end ? &p->maps[lo - 1] : NULL;
}

/* Executable mappings of a file, or the vDSO: the ones named. */
static void map_file(struct pmt_syms *s, struct proc *p, uint64_t start, uint64_t end,
		     uint64_t pgoff, uint64_t dev, uint64_t ino, const char *path, bool hold)
{
	struct file *f;

	if (!ino && strcmp(path, "[vdso]"))
		return; /* anonymous (JIT) or [vsyscall]: nothing to name it */
	if (!ino)
		dev = 0;
	f = file_get(s, dev, ino, path, hold, p->pid, start, end);
	if (f)
		add_map(s, p, start, end, pgoff, f);
}

struct reading {
	struct pmt_syms *s;
	struct proc *p;
};

static void map_listed(void *ctx, const struct pmt_procmap *m)
{
	struct reading *r = ctx;

	map_file(r->s, r->p, m->start, m->end, m->pgoff, makedev(m->maj, m->min), m->ino, m->path,
		 false);
}

/* A live process's executable mappings, from /proc (none when it is
 * gone). */
static struct proc *read_proc(struct pmt_syms *s, uint32_t pid)
{
	struct reading r = {s, proc_new(s, pid)};

	if (r.p)
		pmt_procmaps__each(pid, map_listed, &r);
	return r.p;
}

static struct proc *proc_get(struct pmt_syms *s, uint32_t pid)
{
	size_t at;
	struct proc *p = proc_find(s, pid, &at);

	return p ? p : read_proc(s, pid);
}

void pmt_syms__note_pid(struct pmt_syms *s, uint32_t pid)
{
	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	proc_get(s, pid);
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__note_all(struct pmt_syms *s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char *end;

	if (!s || !d) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		unsigned long pid = strtoul(e->d_name, &end, 10);

		if (pid && !*end && pid <= UINT32_MAX)
			pmt_syms__note_pid(s, (uint32_t)pid);
	}
	closedir(d);
}

void pmt_syms__fork(struct pmt_syms *s, uint32_t pid, uint32_t ppid)
{
	struct proc *parent, *child;
	size_t at;
	uint32_t i;

	if (!s || !pid || pid == ppid)
		return; /* a thread: the process's mappings already */
	pthread_mutex_lock(&s->lock);
	child = proc_find(s, pid, &at);
	/* a child read from /proc before its fork record came is complete */
	if ((!child || child->dead) && (parent = proc_get(s, ppid)) && (child = proc_new(s, pid)))
		for (i = 0; i < parent->n; i++)
			add_map(s, child, parent->maps[i].start, parent->maps[i].end,
				parent->maps[i].pgoff, parent->maps[i].f);
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__exec(struct pmt_syms *s, uint32_t pid)
{
	struct proc *p;
	size_t at;

	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	p = proc_find(s, pid, &at);
	if (p && !p->dead)
		proc_clear(s, p);
	else
		proc_new(s, pid);
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__mmap(struct pmt_syms *s, const struct pmt_mmap *m)
{
	struct proc *p;

	if (!s || !m->pid)
		return;
	pthread_mutex_lock(&s->lock);
	p = proc_get(s, m->pid);
	if (p && !p->dead)
		map_file(s, p, m->start, m->start + m->len, m->pgoff, m->dev, m->ino, m->path,
			 true);
	pthread_mutex_unlock(&s->lock);
}

/* Forget the oldest exited process. */
static void pop_dead(struct pmt_syms *s)
{
	struct dead d = s->dead[s->dead_head];
	size_t at;
	struct proc *p = proc_find(s, d.pid, &at);

	s->dead_head = (s->dead_head + 1) % MAX_DEAD;
	s->ndead--;
	if (p && p->dead && p->exit_ts == d.ts) {
		remove_slot((void **)s->procs, &s->nprocs, at);
		proc_free(s, p);
	}
}

void pmt_syms__exit(struct pmt_syms *s, uint32_t pid, uint64_t ts)
{
	struct proc *p;
	size_t at;

	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	p = proc_find(s, pid, &at);
	if (p && !p->dead) {
		if (s->ndead == MAX_DEAD) {
			pop_dead(s);
			s->forgotten++;
		}
		p->dead = true;
		p->exit_ts = ts;
		s->dead[(s->dead_head + s->ndead++) % MAX_DEAD] = (struct dead){pid, ts};
	}
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__reap(struct pmt_syms *s, uint64_t ts)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	while (s->ndead && s->dead[s->dead_head].ts < ts)
		pop_dead(s);
	pthread_mutex_unlock(&s->lock);
}

bool pmt_syms__exited(struct pmt_syms *s, uint32_t pid)
{
	struct proc *p;
	size_t at;
	bool dead;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	p = proc_find(s, pid, &at);
	dead = p && p->dead;
	pthread_mutex_unlock(&s->lock);
	return dead;
}

uint64_t pmt_syms__forgotten(struct pmt_syms *s)
{
	uint64_t n;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	n = s->forgotten;
	s->forgotten = 0;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void pmt_syms__stats(struct pmt_syms *s, struct pmt_syms_stats *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	st->procs = s->nprocs;
	st->exited = s->ndead;
	st->files = s->nfiles;
	st->fds = s->held + s->nsrc;
	for (i = 0; i < s->nfiles; i++) {
		if (s->files[i]->tab)
			st->bytes += pmt_symfile__bytes(s->files[i]->tab);
		if (s->files[i]->src)
			st->bytes += pmt_srcfile__bytes(s->files[i]->src);
	}
	for (i = 0; i < s->nprocs; i++)
		st->bytes += sizeof(struct proc) + s->procs[i]->cap * sizeof(struct map);
	pthread_mutex_unlock(&s->lock);
}

/* ---- Python code objects ---- */

static bool is_py_frame(uint64_t v)
{
	return (v & PMT_PY_FRAME) && !pmt_is_kernel_addr(v);
}

static struct pycode *py_slot(struct pmt_syms *s, uint32_t id)
{
	if (!s->py && !(s->py = calloc(PY_CODES, sizeof(*s->py))))
		return NULL;
	return &s->py[(id * 0x9e3779b1u) >> 20 & (PY_CODES - 1)];
}

/* The code object the kernel calls id, if it was read. */
static struct pycode *py_code(struct pmt_syms *s, uint32_t id)
{
	struct pycode *slot = py_slot(s, id);

	return slot && slot->id == id ? slot : NULL;
}

void pmt_syms__python_code(struct pmt_syms *s, uint32_t pid, uint32_t id, uint64_t addr,
			   uint64_t qualname)
{
	struct pycode *slot;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	slot = py_slot(s, id);
	if (slot) {
		pmt_py__code_free(&slot->c);
		slot->id = 0;
		if (!pmt_py__read_code(pid, addr, qualname, &slot->c)) {
			slot->id = id;
			slot->addr = addr;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

uint64_t pmt_syms__frame_addr(struct pmt_syms *s, uint64_t v)
{
	struct pycode *p;

	if (!s || !is_py_frame(v))
		return v;
	pthread_mutex_lock(&s->lock);
	p = py_code(s, PMT_PY_ID(v));
	v = p ? p->addr : 0;
	pthread_mutex_unlock(&s->lock);
	return v;
}

/* A Python frame value (PMT_PY_FRAME) as a source frame, into
 * s->pyframe: its function, file and line. false when its code object
 * was not read. */
static bool py_frame(struct pmt_syms *s, uint64_t v)
{
	struct pycode *p = py_code(s, PMT_PY_ID(v));
	int line;

	if (!p)
		return false;
	line = pmt_py__line(p->c.linetable, p->c.nlinetable, p->c.firstlineno, PMT_PY_INSTR(v));
	s->pyframe = (struct pmt_srcframe){p->c.qualname, p->c.filename,
					   (uint32_t)(line > 0 ? line : 0)};
	return true;
}

/* "qualname (file:line)" of a Python frame value. */
static bool py_name(struct pmt_syms *s, uint64_t v, struct pmt_buf *b)
{
	const struct pmt_srcframe *f = &s->pyframe;

	if (!py_frame(s, v)) {
		pmt_buf__puts(b, "[python]");
		return false;
	}
	pmt_buf__printf(b, f->line ? "%s (%s:%u)" : "%s (%s)", f->name, f->file, f->line);
	return true;
}

static void unknown(struct pmt_buf *b, uint64_t addr, bool with_addr)
{
	pmt_buf__puts(b, "[unknown]");
	if (with_addr) {
		pmt_buf__putc(b, ' ');
		pmt_buf__hex(b, addr);
	}
}

/* The function holding a user address of process pid. */
static const char *user_name(struct pmt_syms *s, uint32_t pid, uint64_t addr, uint64_t *off)
{
	const struct pmt_symfile *tab;
	struct proc *p = pid ? proc_get(s, pid) : NULL;
	struct map *m = p ? map_find(p, addr) : NULL;

	if (!m || !(tab = file_table(s, m->f, pid, m)))
		return NULL;
	return pmt_symfile__name(tab, addr - m->start + m->pgoff, off);
}

bool pmt_syms__name(struct pmt_syms *s, uint32_t pid, uint64_t addr, bool offset,
		    bool with_addr_if_unknown, struct pmt_buf *b)
{
	const char *name = NULL;
	uint64_t off = 0;

	if (!s) {
		unknown(b, addr, with_addr_if_unknown);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	if (is_py_frame(addr)) {
		bool found = py_name(s, addr, b);

		pthread_mutex_unlock(&s->lock);
		return found;
	}
	if (pmt_is_kernel_addr(addr)) {
		const struct ksym *k = ksym_find(s, addr);

		if (k) {
			name = s->knames + k->name;
			off = addr - k->addr;
		}
	} else {
		name = user_name(s, pid, addr, &off);
	}
	if (name) {
		pmt_buf__puts(b, name);
		if (offset && off) {
			pmt_buf__puts(b, "+");
			pmt_buf__hex(b, off);
		}
	} else {
		unknown(b, addr, with_addr_if_unknown);
	}
	pthread_mutex_unlock(&s->lock);
	return name != NULL;
}

int pmt_syms__srcframes(struct pmt_syms *s, uint32_t pid, uint64_t addr,
			const struct pmt_srcframe **frames)
{
	struct proc *p;
	struct map *m;
	struct file *f;
	int n = 0, fd;

	if (!s || !pid || pmt_is_kernel_addr(addr))
		return 0;
	pthread_mutex_lock(&s->lock);
	if (is_py_frame(addr)) {
		n = py_frame(s, addr);
		*frames = &s->pyframe;
		pthread_mutex_unlock(&s->lock);
		return n;
	}
	if (!s->inlines) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	p = proc_get(s, pid);
	m = p ? map_find(p, addr) : NULL;
	if (m && file_table(s, m->f, pid, m)) {
		f = m->f;
		if (!f->src_tried) {
			fd = file_open(s, f, pid, m);
			file_src(s, f, fd);
			if (fd >= 0)
				close(fd);
		}
		if (f->src) {
			f->src_used = ++s->seq;
			n = pmt_srcfile__frames(f->src, addr - m->start + m->pgoff, frames);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

void pmt_syms__folded(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_buf *b)
{
	const struct pmt_srcframe *fr;
	int n;

	pmt_syms__lock(s);
	pmt_syms__name(s, pid, addr, false, false, b);
	for (n = pmt_syms__srcframes(s, pid, addr, &fr) - 1; n > 0; n--) {
		pmt_buf__putc(b, ';');
		pmt_buf__puts(b, fr[n - 1].name);
		pmt_buf__puts(b, " (inlined)");
	}
	pmt_syms__unlock(s);
}

bool pmt_syms__module(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_module *mod)
{
	const struct pmt_symfile *tab;
	struct proc *p;
	struct map *m;

	memset(mod, 0, sizeof(*mod));
	if (pmt_is_kernel_addr(addr)) {
		mod->file = "[kernel.kallsyms]";
		mod->start = 0xffff800000000000ULL;
		mod->end = UINT64_MAX;
		return true;
	}
	if (!s || !pid)
		return false;
	pthread_mutex_lock(&s->lock);
	p = proc_get(s, pid);
	m = p ? map_find(p, addr) : NULL;
	if (m) {
		mod->file = m->f->path;
		mod->start = m->start;
		mod->end = m->end;
		mod->pgoff = m->pgoff;
		tab = file_table(s, m->f, pid, m);
		if (tab)
			snprintf(mod->build_id, sizeof(mod->build_id), "%s",
				 pmt_symfile__build_id(tab));
	}
	pthread_mutex_unlock(&s->lock);
	return m != NULL;
}
