// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process tracking: each process's executable mappings, from /proc at
 * first sight, then kept current by the kernel's fork, exec, mmap and
 * exit records (symbols/sideband_bpf.c); exited processes kept, within a bound,
 * for the samples not yet printed. */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "symbols/symbols_internal.h"
#include "symbols/procmaps.h"
#include "util/grow.h"

struct proc *syms_proc_find(const struct pmt_syms *s, uint32_t pid, size_t *at)
{
	size_t lo = 0, hi = s->nprocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < s->nprocs && s->procs[lo].pid == pid ? s->procs[lo].p : NULL;
}

/* p's mappings and perf map forgotten: those before an exec at time
 * exec_ns (its new program writes its own perf map; one opened since the
 * exec, as the kernel met its JIT code before the exec's record was
 * applied in time order, is the new program's and stays) */
static void proc_clear(struct pmt_syms *s, struct proc *p, uint64_t exec_ns)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		syms_file_unref(s, p->maps[i].f);
	p->n = 0;
	if (p->jit_looked_ns >= exec_ns)
		return;
	pmt_jitmap__free(p->jit);
	p->jit = NULL;
	p->jit_looked_ns = 0;
}

void syms_proc_free(struct pmt_syms *s, struct proc *p)
{
	proc_clear(s, p, UINT64_MAX);
	free(p->maps);
	free(p);
}

static void proc_remove(struct pmt_syms *s, uint32_t pid)
{
	size_t at;
	struct proc *p = syms_proc_find(s, pid, &at);

	if (p) {
		pmt_grow_remove(s->procs, &s->nprocs, sizeof(*s->procs), at);
		syms_proc_free(s, p);
	}
}

/* A process without mappings; an exited one of that pid goes. Its user
 * is parent's where it has one (a fork's child is its parent's until it
 * changes it: no stat of /proc for each of a churn's processes). */
static struct proc *proc_new(struct pmt_syms *s, uint32_t pid, const struct proc *parent)
{
	struct stat st;
	char dir[32];
	struct proc *p;
	size_t at;

	proc_remove(s, pid);
	syms_proc_find(s, pid, &at);
	p = calloc(1, sizeof(*p));
	if (!p ||
	    !pmt_grow_insert((void **)&s->procs, &s->nprocs, &s->cap, sizeof(*s->procs), at, 64)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	/* its user, while it lives: whose perf map names its frames */
	if (parent && parent->uid != UINT32_MAX) {
		p->uid = parent->uid;
	} else {
		snprintf(dir, sizeof(dir), "/proc/%u", pid);
		p->uid = stat(dir, &st) ? UINT32_MAX : (uint32_t)st.st_uid;
	}
	s->procs[at] = (struct proc_at){pid, p};
	return p;
}

/* A new mapping replaces what it overlaps, and only that, as mmap does:
 * what is left of a mapping on either side stays. (A loader's first
 * mapping of a library spans all its segments, and a later mapping may
 * land in what it gave back: arm64's ld.so is mapped executable whole,
 * and the vDSO then placed inside that span.) */
static void add_map(struct pmt_syms *s, struct proc *p, uint64_t start, uint64_t end,
		    uint64_t pgoff, struct file *f)
{
	size_t i, at;

	for (i = 0; i < p->n;) {
		struct map *m = &p->maps[i];

		if (m->start >= end || m->end <= start) {
			i++;
		} else if (m->start < start && m->end > end) {
			struct map right = {end, m->end, m->pgoff + (end - m->start), m->f};

			m->end = start;
			if (!pmt_grow_insert((void **)&p->maps, &p->n, &p->cap, sizeof(*p->maps),
					     i + 1, 16)) {
				p->maps[i].end = right.end; /* as it was */
				return;
			}
			p->maps[i + 1] = right;
			syms_file_ref(s, right.f);
			i += 2;
		} else if (m->start < start) {
			m->end = start;
			i++;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
			i++;
		} else {
			syms_file_unref(s, m->f);
			pmt_grow_remove(p->maps, &p->n, sizeof(*p->maps), i);
		}
	}
	for (at = 0; at < p->n && p->maps[at].start < start; at++)
		;
	if (!pmt_grow_insert((void **)&p->maps, &p->n, &p->cap, sizeof(*p->maps), at, 16))
		return;
	p->maps[at] = (struct map){start, end, pgoff, f};
	syms_file_ref(s, f);
}

struct map *syms_map_find(struct proc *p, uint64_t addr)
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
	f = syms_file_get(s, dev, ino, path, hold, p->pid, start, end);
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

/* p among the exited, at ts, last in their ring (the caller made room) */
static void proc_died(struct pmt_syms *s, struct proc *p, uint64_t ts)
{
	p->dead = true;
	p->exit_ts = ts;
	s->dead[(s->dead_head + s->ndead++) % MAX_DEAD] = (struct dead){p->pid, ts};
}

/* p is gone, without an exit record to come (or one already applied):
 * it waits among the exited, behind the last of them, and goes as they
 * do (kept, every later sample of its would read /proc again; left
 * live, it would stay for good). Past the bound it stays live: the
 * exited are not forgotten for it. */
static void proc_gone(struct pmt_syms *s, struct proc *p)
{
	if (s->ndead < s->max_dead)
		proc_died(s, p,
			  s->ndead ? s->dead[(s->dead_head + s->ndead - 1) % MAX_DEAD].ts : 0);
}

/* A live process's executable mappings, from /proc (none when it is
 * gone). */
static struct proc *read_proc(struct pmt_syms *s, uint32_t pid)
{
	struct reading r = {s, proc_new(s, pid, NULL)};
	int err = r.p ? pmt_procmaps__each(pid, map_listed, &r) : 0;

	/* another user's, without CAP_SYS_PTRACE: counted, its frames
	 * unknown */
	if (err == -EACCES && !s->denied++)
		s->denied_pid = pid;
	else if (err == -ENOENT || err == -ESRCH)
		proc_gone(s, r.p);
	return r.p;
}

struct proc *syms_proc_get(struct pmt_syms *s, uint32_t pid)
{
	size_t at;
	struct proc *p = syms_proc_find(s, pid, &at);

	return p ? p : read_proc(s, pid);
}

void pmt_syms__note_pid(struct pmt_syms *s, uint32_t pid)
{
	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	syms_proc_get(s, pid);
	pthread_mutex_unlock(&s->lock);
}

static void note_one(void *ctx, uint32_t pid)
{
	pmt_syms__note_pid(ctx, pid);
}

void pmt_syms__note_all(struct pmt_syms *s)
{
	if (s)
		pmt_procmaps__pids(note_one, s);
}

void pmt_syms__fork(struct pmt_syms *s, uint32_t pid, uint32_t ppid)
{
	struct proc *parent, *child;
	size_t at;
	size_t i;

	if (!s || !pid || pid == ppid)
		return; /* a thread: the process's mappings already */
	pthread_mutex_lock(&s->lock);
	child = syms_proc_find(s, pid, &at);
	/* a child read from /proc before its fork record came is complete;
	 * a new one takes its parent's mappings whole (sorted, apart: a
	 * churn forks a parent of many mappings, each added one by one
	 * checked against those before) */
	if ((!child || child->dead) && (parent = syms_proc_get(s, ppid)) &&
	    (child = proc_new(s, pid, parent)) && parent->n &&
	    (child->maps = malloc(parent->n * sizeof(*child->maps)))) {
		memcpy(child->maps, parent->maps, parent->n * sizeof(*child->maps));
		child->n = child->cap = parent->n;
		for (i = 0; i < child->n; i++)
			syms_file_ref(s, child->maps[i].f);
	}
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__exec(struct pmt_syms *s, uint32_t pid, uint64_t ts)
{
	struct proc *p;
	size_t at;

	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	syms_pyquery_drop(s, pid);
	p = syms_proc_find(s, pid, &at);
	if (p && !p->dead)
		proc_clear(s, p, ts);
	else
		proc_new(s, pid, NULL);
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__mmap(struct pmt_syms *s, const struct pmt_mmap *m)
{
	struct proc *p;

	if (!s || !m->pid)
		return;
	pthread_mutex_lock(&s->lock);
	p = syms_proc_get(s, m->pid);
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
	struct proc *p = syms_proc_find(s, d.pid, &at);

	s->dead_head = (s->dead_head + 1) % MAX_DEAD;
	s->ndead--;
	if (p && p->dead && p->exit_ts == d.ts) {
		pmt_grow_remove(s->procs, &s->nprocs, sizeof(*s->procs), at);
		syms_proc_free(s, p);
	}
}

void pmt_syms__exit(struct pmt_syms *s, uint32_t pid, uint64_t ts)
{
	struct proc *p;
	size_t at;

	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	syms_pyquery_drop(s, pid);
	p = syms_proc_find(s, pid, &at);
	if (p && !p->dead && s->ndead == s->max_dead && s->on_bound && !s->settling) {
		/* the owner settles those waiting first (its locks come
		 * before this one: called without it) */
		s->settling = true;
		pthread_mutex_unlock(&s->lock);
		s->on_bound(s->on_bound_ctx);
		pthread_mutex_lock(&s->lock);
		s->settling = false;
		p = syms_proc_find(s, pid, &at);
	}
	if (p && !p->dead) {
		if (s->ndead == s->max_dead) {
			pop_dead(s);
			s->forgotten++;
			s->forgotten_total++;
		}
		proc_died(s, p, ts);
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

void pmt_syms__reap_oldest(struct pmt_syms *s, size_t n)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	while (n-- && s->ndead)
		pop_dead(s);
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__on_bound(struct pmt_syms *s, void (*settle)(void *ctx), void *ctx)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->on_bound = settle;
	s->on_bound_ctx = ctx;
	pthread_mutex_unlock(&s->lock);
}

size_t pmt_syms__waiting(struct pmt_syms *s, size_t *bound)
{
	size_t n;

	*bound = s ? s->max_dead : 0;
	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	n = s->ndead;
	pthread_mutex_unlock(&s->lock);
	return n;
}

bool pmt_syms__exited(struct pmt_syms *s, uint32_t pid)
{
	struct proc *p;
	size_t at;
	bool dead;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	p = syms_proc_find(s, pid, &at);
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
	st->forgotten = s->forgotten_total;
	st->ksyms_hidden = s->ksyms_hidden;
	st->denied = s->denied;
	st->denied_pid = s->denied_pid;
	st->jit_refused = s->jit_refused;
	st->jit_refused_pid = s->jit_refused_pid;
	st->jit_refused_uid = s->jit_refused_uid;
	st->py_read = s->py.reads;
	st->py_copied = s->py.copies;
	st->debug_made = pmt_debugcache__stats(s->dcache).made;
	st->debug_used = pmt_debugcache__stats(s->dcache).used;
	st->files = s->nfiles;
	st->fds = s->held + s->nsrc;
	for (i = 0; i < s->nfiles; i++) {
		if (s->files[i]->tab)
			st->bytes += pmt_symfile__bytes(s->files[i]->tab);
		if (s->files[i]->src)
			st->bytes += pmt_srcfile__bytes(s->files[i]->src);
	}
	for (i = 0; i < s->nprocs; i++)
		st->bytes += sizeof(struct proc) + s->procs[i].p->cap * sizeof(struct map);
	st->bytes += pmt_ksyms__bytes(&s->ktab);
	pthread_mutex_unlock(&s->lock);
}
