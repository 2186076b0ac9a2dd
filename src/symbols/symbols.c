// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Addresses to names (symbols.h): the one lock, and the lookups that take
 * a pid and an address to a kernel symbol (ksyms.c), a Python frame
 * (python/codes.c) or a mapped file's symbol (procs.c, files.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include "symbols/procmaps.h"
#include "symbols/symbols_internal.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strutil.h"

struct pmt_syms *pmt_syms__new(bool demangle, bool inlines)
{
	struct pmt_syms *s = calloc(1, sizeof(*s));
	pthread_mutexattr_t a;

	if (!s)
		return NULL;
	s->demangle = demangle;
	s->inlines = inlines;
	s->pyquery.fd = -1;
	/* a smaller bound, for tests of what happens past it */
	s->max_dead = getenv("PMT_MAX_DEAD") ? strtoul(getenv("PMT_MAX_DEAD"), NULL, 10) : 0;
	if (!s->max_dead || s->max_dead > MAX_DEAD)
		s->max_dead = MAX_DEAD;
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

bool pmt_syms__debug_cache(struct pmt_syms *s, const char *dir)
{
	pmt_debugcache__free(s->dcache);
	s->dcache = pmt_debugcache__new(dir, 0);
	return s->dcache != NULL;
}

void pmt_syms__free(struct pmt_syms *s)
{
	size_t i;

	if (!s)
		return;
	syms_pyquery_drop(s, 0);
	for (i = 0; i < s->nprocs; i++)
		syms_proc_free(s, s->procs[i].p);
	for (i = 0; i < s->nfiles; i++)
		syms_file_free(s, s->files[i]);
	pmt_pycodes__free(&s->py);
	pmt_cgnames__free(s->cg);
	pmt_debuginfod__free(s->dbgd);
	pmt_debugcache__free(s->dcache);
	free(s->pinned);
	free(s->jit_names);
	free(s->jit_at);
	free(s->jit_index);
	free(s->procs);
	free(s->files);
	free(s->dead);
	pmt_ksyms__free(&s->ktab);
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

static void unknown(struct pmt_buf *b, uint64_t addr, bool with_addr)
{
	pmt_buf__puts(b, "[unknown]");
	if (with_addr) {
		pmt_buf__putc(b, ' ');
		pmt_buf__hex(b, addr);
	}
}

/* p's perf map opened, if it is not and was not looked for lately. */
static void jit_open(struct pmt_syms *s, struct proc *p, uint64_t now)
{
	uid_t owner = 0;
	bool looked;

	if (p->jit || (p->jit_looked_ns && now - p->jit_looked_ns < JIT_RETRY_NS))
		return;
	looked = p->jit_looked_ns;
	p->jit_looked_ns = now;
	errno = 0;
	p->jit = pmt_jitmap__open(p->pid, p->uid, &owner);
	if (!p->jit && errno == EPERM && !looked && !s->jit_refused++) {
		s->jit_refused_pid = p->pid;
		s->jit_refused_uid = (uint32_t)owner;
	}
}

/* An address in no file: JIT code, named by the process's perf map. */
static const char *jit_name(struct pmt_syms *s, struct proc *p, uint64_t addr, uint64_t *off)
{
	uint64_t now = pmt_now_ns();

	jit_open(s, p, now);
	return p->jit ? pmt_jitmap__name(p->jit, addr, off, now) : NULL;
}

void pmt_syms__jit_seen(struct pmt_syms *s, uint32_t pid)
{
	struct proc *p;

	if (!s || !pid)
		return;
	pthread_mutex_lock(&s->lock);
	p = syms_proc_get(s, pid);
	if (p && !p->dead)
		jit_open(s, p, pmt_now_ns());
	pthread_mutex_unlock(&s->lock);
}

void pmt_syms__offset_decimal(const char *name, size_t len, struct pmt_buf *b)
{
	const char *plus = memmem(name, len, "+0x", 3);

	pmt_buf__printf(b, "%.*s+%llu", (int)(plus ? plus - name : (long)len), name,
			plus ? strtoull(plus + 3, NULL, 16) : 0ULL);
}

/* A rebased frame's index (a pinned file's, or past MAX_PINNED a JIT
 * name's), its offset into *off. */
static uint64_t frame_index(uint64_t v, uint64_t *off)
{
	*off = v & ((1ULL << FILE_FRAME_SHIFT) - 1);
	return (v & ~(3ULL << 62)) >> FILE_FRAME_SHIFT;
}

/* A rebased frame's file, and the file offset into *off; NULL when the
 * value names no pinned file. */
static struct file *file_frame(struct pmt_syms *s, uint64_t v, uint64_t *off)
{
	uint64_t i = frame_index(v, off);

	return i < s->npinned ? s->pinned[i] : NULL;
}

/* A rebased frame's file's symbols (read from the file itself: its
 * processes may all be gone) */
static const struct pmt_symfile *file_frame_table(struct pmt_syms *s, uint64_t v, struct file **f,
						  uint64_t *off)
{
	static const struct map none;

	*f = file_frame(s, v, off);
	return *f ? syms_file_table(s, *f, 0, &none) : NULL;
}

/* A rebased JIT frame's name (pmt_syms__rebase), or NULL. */
static const char *jit_frame(struct pmt_syms *s, uint64_t v, uint64_t *off)
{
	uint64_t i = frame_index(v, off);

	if (i <= MAX_PINNED || i - MAX_PINNED - 1 >= s->njit)
		return NULL;
	return s->jit_names + s->jit_at[i - MAX_PINNED - 1];
}

/* The function holding a user address of process pid; *in and *at the
 * file and file offset when the address lies in one. */
static const char *user_name(struct pmt_syms *s, uint32_t pid, uint64_t addr, uint64_t *off,
			     struct file **in, uint64_t *at)
{
	const struct pmt_symfile *tab;

	if (syms_is_file_frame(addr)) {
		tab = file_frame_table(s, addr, in, at);
		return tab ? pmt_symfile__name(tab, *at, off) : jit_frame(s, addr, off);
	}
	struct proc *p = pid ? syms_proc_get(s, pid) : NULL;
	struct map *m = p ? syms_map_find(p, addr) : NULL;

	if (!m)
		return p ? jit_name(s, p, addr, off) : NULL;
	*in = m->f;
	*at = addr - m->start + m->pgoff;
	if (!(tab = syms_file_table(s, m->f, pid, m)))
		return NULL;
	return pmt_symfile__name(tab, *at, off);
}

/* An address no symbol names, in a file: "FILE+0xOFFSET" (the file's
 * base name and the file offset, as addr2line -e FILE takes it), so
 * that unnamed code stays apart, and the same in every process. */
static void file_offset(struct pmt_buf *b, const struct file *f, uint64_t at)
{
	const char *base = strrchr(f->path, '/');

	pmt_buf__puts(b, base ? base + 1 : f->path);
	pmt_buf__puts(b, "+");
	pmt_buf__hex(b, at);
}

/* The kernel's symbols (ksyms.h), read the first time an address is
 * named, behind a direct-mapped cache */
static void read_kallsyms(struct pmt_syms *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");

	s->ksyms_read = true;
	if (!f)
		return;
	pmt_ksyms__read(&s->ktab, f);
	fclose(f);
	s->ksyms_hidden = s->ktab.hidden;
}

static bool syms_ksym(struct pmt_syms *s, uint64_t addr, struct pmt_ksym_found *sym)
{
	struct kcached *c = &s->kcache[(addr ^ addr >> 10) % KCACHE];

	if (c->addr != addr) {
		if (!s->ksyms_read)
			read_kallsyms(s);
		c->addr = addr;
		c->found = pmt_ksyms__find(&s->ktab, addr, &c->sym);
	}
	*sym = c->sym;
	return c->found;
}

bool pmt_syms__name(struct pmt_syms *s, uint32_t pid, uint64_t addr, bool offset,
		    bool with_addr_if_unknown, struct pmt_buf *b)
{
	const char *name = NULL;
	struct file *in = NULL;
	uint64_t off = 0, at = 0;

	if (!s) {
		unknown(b, addr, with_addr_if_unknown);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	if (syms_is_py_frame(addr)) {
		bool found = pmt_pycodes__name(&s->py, addr, b);

		pthread_mutex_unlock(&s->lock);
		return found;
	}
	if (pmt_is_kernel_addr(addr)) {
		struct pmt_ksym_found k;

		if (syms_ksym(s, addr, &k)) {
			/* (a function's padding: __pfx_NAME) */
			pmt_buf__puts(b, k.prefix);
			name = k.name;
			off = addr - k.start;
		}
	} else {
		name = user_name(s, pid, addr, &off, &in, &at);
	}
	if (name) {
		pmt_buf__puts(b, name);
		if (offset && off) {
			pmt_buf__puts(b, "+");
			pmt_buf__hex(b, off);
		}
	} else if (in && in->path[0]) {
		file_offset(b, in, at);
	} else {
		unknown(b, addr, with_addr_if_unknown);
	}
	pthread_mutex_unlock(&s->lock);
	return name != NULL;
}

/* Python frames: their code objects are python/codes.c's, under the lock. */
/* The static key of addr and qualname, both in the file mapping m of
 * file f (an interpreter's deep-frozen code). */
static bool py_key(struct pmt_syms *s, uint32_t pid, struct file *f, const struct map *m,
		   uint64_t addr, uint64_t qualname, struct pmt_pystatic_key *k)
{
	const struct pmt_elf_loads *l;

	if (!f || !(f->dev | f->ino))
		return false;
	l = syms_file_loads(s, f, pid, m);
	*k = (struct pmt_pystatic_key){.dev = f->dev, .ino = f->ino};
	return l && pmt_elf__vaddr_in_file(l, m->start, m->pgoff, addr, &k->vaddr) &&
	       pmt_elf__vaddr_in_file(l, m->start, m->pgoff, qualname, &k->qualname);
}

void syms_pyquery_drop(struct pmt_syms *s, uint32_t pid)
{
	struct pmt_pyquery *c = &s->pyquery;
	unsigned int i;

	if (pid && c->pid != pid)
		return;
	if (c->fd >= 0)
		close(c->fd);
	for (i = 0; i < c->n; i++)
		free(c->r[i].path);
	c->fd = -1;
	c->pid = 0;
	c->n = c->next = 0;
}

/* The mapping of process c->pid holding addr: one held, or asked of the
 * kernel (its maps opened again once when the address space they were
 * opened on is gone: an exec since), in the place of one held but keep.
 * NULL when none (err set). */
static const struct pyq_range *pyq_range(struct pmt_pyquery *c, uint64_t addr,
					 const struct pyq_range *keep, int *err)
{
	struct pmt_procmap q;
	struct pyq_range *r;
	unsigned int i;
	int again = 1;

	for (i = 0; i < c->n; i++)
		if (addr >= c->r[i].start && addr < c->r[i].end)
			return &c->r[i];
	while ((*err = pmt_procmaps__query(c->fd, addr, &q, c->path, sizeof(c->path))) == -ESRCH &&
	       again--) {
		int fd = pmt_procmaps__open(c->pid);

		if (fd < 0)
			break;
		close(c->fd);
		c->fd = fd;
	}
	if (*err)
		return NULL;
	if (c->n < PYQ_RANGES) {
		r = &c->r[c->n++];
	} else {
		if (&c->r[c->next] == keep)
			c->next = (c->next + 1) % PYQ_RANGES;
		r = &c->r[c->next];
		c->next = (c->next + 1) % PYQ_RANGES;
		free(r->path);
	}
	*r = (struct pyq_range){q.start, q.end, q.pgoff, makedev(q.maj, q.min), q.ino, NULL};
	if (q.ino && !(r->path = strdup(c->path)))
		r->ino = 0; /* taken for anonymous: not keyed, no harm */
	return r;
}

/* A process the sideband has not brought yet (its code came first, as
 * a churn's short interpreters do): the mappings of addr and qualname
 * asked of the kernel, not all its maps read; its maps kept open and
 * the mappings they gave kept while its codes come. 1 when keyed, 0
 * when not static, -ENOTTY where the kernel takes no query. */
static int py_static_queried(struct pmt_syms *s, uint32_t pid, uint64_t addr, uint64_t qualname,
			     struct pmt_pystatic_key *k)
{
	struct pmt_pyquery *c = &s->pyquery;
	const struct pyq_range *a, *q;
	struct map m;
	int err = 0;

	if (c->pid != pid) {
		int fd = pmt_procmaps__open(pid);

		syms_pyquery_drop(s, 0);
		if (fd < 0)
			return fd == -ENOTTY ? fd : 0;
		c->fd = fd;
		c->pid = pid;
	}
	if (!(a = pyq_range(c, addr, NULL, &err)) || !a->ino)
		return err == -ENOTTY ? err : 0;
	m = (struct map){.start = a->start, .end = a->end, .pgoff = a->pgoff};
	if (!(q = pyq_range(c, qualname, a, &err)) || q->ino != a->ino || q->dev != a->dev)
		return err == -ENOTTY ? err : 0;
	/* files are shared and outlive processes: looked up again each time */
	m.f = syms_file_get(s, a->dev, a->ino, a->path, false, pid, m.start, m.end);
	return py_key(s, pid, m.f, &m, addr, qualname, k);
}

/* The code object at addr (qualname object at qualname) of process pid,
 * when both lie in the initialized data of the file mapped just below
 * them (an interpreter's deep-frozen code): its key. */
static bool py_static(struct pmt_syms *s, uint32_t pid, uint64_t addr, uint64_t qualname,
		      struct pmt_pystatic_key *k)
{
	const struct map *m = NULL;
	struct proc *p;
	size_t i;
	int q;

	if (!(p = syms_proc_find(s, pid, &i)) &&
	    (q = py_static_queried(s, pid, addr, qualname, k)) != -ENOTTY)
		return q > 0;
	p = p ? p : syms_proc_get(s, pid); /* its samples need its maps too */
	for (i = 0; p && i < p->n && p->maps[i].start <= addr; i++)
		m = &p->maps[i];
	return m && py_key(s, pid, m->f, m, addr, qualname, k);
}

void pmt_syms__python_code(struct pmt_syms *s, uint32_t pid, uint32_t id, uint64_t addr,
			   uint64_t qualname)
{
	struct pmt_pystatic_key k;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	pmt_pycodes__learn(&s->py, pid, id, addr, qualname,
			   py_static(s, pid, addr, qualname, &k) ? &k : NULL);
	pthread_mutex_unlock(&s->lock);
}

uint64_t pmt_syms__frame_addr(struct pmt_syms *s, uint64_t v)
{
	if (!s || !syms_is_py_frame(v))
		return v;
	pthread_mutex_lock(&s->lock);
	v = pmt_pycodes__addr(&s->py, v);
	pthread_mutex_unlock(&s->lock);
	return v;
}

/* A Python frame value as a source frame, into s->pyframe. */
static bool py_srcframe(struct pmt_syms *s, uint64_t v)
{
	struct pmt_pyframe f;

	if (!pmt_pycodes__frame(&s->py, v, &f))
		return false;
	s->pyframe = (struct pmt_srcframe){f.name, f.file, f.line};
	return true;
}

int pmt_syms__srcframes(struct pmt_syms *s, uint32_t pid, uint64_t addr,
			const struct pmt_srcframe **frames)
{
	struct proc *p;
	struct map *m;
	struct file *f;
	uint64_t at;
	int n = 0, fd;

	if (!s || (!pid && !syms_is_file_frame(addr)) || pmt_is_kernel_addr(addr))
		return 0;
	pthread_mutex_lock(&s->lock);
	if (syms_is_py_frame(addr)) {
		n = py_srcframe(s, addr);
		*frames = &s->pyframe;
		pthread_mutex_unlock(&s->lock);
		return n;
	}
	if (!s->inlines) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (syms_is_file_frame(addr)) {
		static const struct map none;

		f = file_frame_table(s, addr, &f, &at) ? f : NULL;
		m = (struct map *)&none;
		pid = 0;
	} else {
		p = syms_proc_get(s, pid);
		m = p ? syms_map_find(p, addr) : NULL;
		f = m && syms_file_table(s, m->f, pid, m) ? m->f : NULL;
		at = m ? addr - m->start + m->pgoff : 0;
	}
	if (f) {
		/* an answer kept while its DWARF is closed, else opened (again) */
		n = f->src ? pmt_srcfile__frames(f->src, at, frames) : -1;
		if (n < 0 && (!f->src_tried || f->src)) {
			fd = syms_file_open(s, f, pid, m);
			if (syms_file_src(s, f, fd))
				n = pmt_srcfile__frames(f->src, at, frames);
			if (fd >= 0)
				close(fd);
		}
		if (syms_src_open(f))
			f->src_used_ns = pmt_now_ns();
		n = n < 0 ? 0 : n;
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

void pmt_syms__names(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_buf *scratch,
		     void (*fn)(void *ctx, const char *name, size_t len), void *ctx)
{
	const struct pmt_srcframe *fr;
	int n, k;

	pmt_syms__lock(s);
	n = pmt_syms__srcframes(s, pid, addr, &fr);
	for (k = 0; k < n - 1; k++) {
		scratch->len = 0;
		pmt_buf__puts(scratch, fr[k].name);
		pmt_buf__puts(scratch, " (inlined)");
		fn(ctx, scratch->p, scratch->len);
	}
	scratch->len = 0;
	pmt_syms__name(s, pid, addr, false, true, scratch);
	pmt_syms__unlock(s);
	fn(ctx, scratch->p, scratch->len);
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
	/* a Python frame is in no mapping: its process not looked up (a
	 * churn's exited interpreters would be read from /proc again) */
	if (!s || (!pid && !syms_is_file_frame(addr)) || syms_is_py_frame(addr))
		return false;
	pthread_mutex_lock(&s->lock);
	if (syms_is_file_frame(addr)) {
		/* a mapping of its own, where its offset is the frame's */
		struct file *f;
		uint64_t at;

		tab = file_frame_table(s, addr, &f, &at);
		if (f) {
			mod->file = f->path;
			mod->start = addr - at;
			mod->end = mod->start + (1ULL << FILE_FRAME_SHIFT);
			if (tab)
				snprintf(mod->build_id, sizeof(mod->build_id), "%s",
					 pmt_symfile__build_id(tab));
		}
		pthread_mutex_unlock(&s->lock);
		return f != NULL;
	}
	p = syms_proc_get(s, pid);
	m = p ? syms_map_find(p, addr) : NULL;
	if (m) {
		mod->file = m->f->path;
		mod->start = m->start;
		mod->end = m->end;
		mod->pgoff = m->pgoff;
		tab = syms_file_table(s, m->f, pid, m);
		if (tab)
			snprintf(mod->build_id, sizeof(mod->build_id), "%s",
				 pmt_symfile__build_id(tab));
	}
	pthread_mutex_unlock(&s->lock);
	return m != NULL;
}

void pmt_syms__cgroup(struct pmt_syms *s, uint64_t id, enum pmt_cgroup_show show, struct pmt_buf *b)
{
	const char *path, *part;
	size_t n;

	if (!s) {
		if (show == PMT_CGROUP_PATH)
			pmt_buf__u64(b, id);
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (!s->cg)
		s->cg = pmt_cgnames__new();
	path = pmt_cgnames__path(s->cg, id);
	if (!path) { /* gone before it was named: its id */
		if (show == PMT_CGROUP_PATH)
			pmt_buf__u64(b, id);
	} else if (show == PMT_CGROUP_PATH) {
		pmt_buf__puts(b, path);
	} else {
		part = show == PMT_CGROUP_UNIT ? pmt_cgroup__unit(path, &n)
					       : pmt_cgroup__container(path, &n);
		pmt_buf__add(b, part, n);
	}
	pthread_mutex_unlock(&s->lock);
}

/* f's index among the pinned files (pinned now if it is not), or -1 when
 * there are as many as there may be. */
static int64_t pin(struct pmt_syms *s, struct file *f)
{
	struct file **v;

	if (f->pin)
		return f->pin - 1;
	if (s->npinned >= MAX_PINNED)
		return -1;
	v = pmt_grow(s->pinned, &s->pincap, s->npinned, sizeof(*v), 64);
	if (!v)
		return -1;
	s->pinned = v;
	syms_file_ref(s, f);
	s->pinned[s->npinned] = f;
	f->pin = (uint32_t)++s->npinned;
	return f->pin - 1;
}

/* Room in the JIT names' index for one more: 0 or -ENOMEM. */
static int jit_index_room(struct pmt_syms *s)
{
	size_t cap = s->jit_icap ? 2 * s->jit_icap : 1024, i, j;
	uint32_t *ix;

	if (2 * (s->njit + 1) <= s->jit_icap)
		return 0;
	if (!(ix = calloc(cap, sizeof(*ix))))
		return -ENOMEM;
	for (i = 0; i < s->njit; i++) {
		for (j = pmt_hash_str(PMT_HASH_SEED, s->jit_names + s->jit_at[i]) & (cap - 1);
		     ix[j]; j = (j + 1) & (cap - 1))
			;
		ix[j] = (uint32_t)i + 1;
	}
	free(s->jit_index);
	s->jit_index = ix;
	s->jit_icap = cap;
	return 0;
}

/* The index of a JIT function's name among those kept (added if new), or
 * -1 (as many as there may be, or out of memory). */
static int64_t jit_intern(struct pmt_syms *s, const char *name)
{
	size_t len = strlen(name) + 1, j;
	uint32_t *at;
	char *p;

	if (jit_index_room(s))
		return -1;
	for (j = pmt_hash_str(PMT_HASH_SEED, name) & (s->jit_icap - 1); s->jit_index[j];
	     j = (j + 1) & (s->jit_icap - 1))
		if (!strcmp(s->jit_names + s->jit_at[s->jit_index[j] - 1], name))
			return s->jit_index[j] - 1;
	if (s->njit >= MAX_JIT_NAMES ||
	    !(at = pmt_grow(s->jit_at, &s->jit_atcap, s->njit, sizeof(*at), 256)))
		return -1;
	s->jit_at = at;
	if (!(p = pmt_grow(s->jit_names, &s->jit_cap, s->jit_len + len, 1, 4096)))
		return -1;
	s->jit_names = p;
	memcpy(p + s->jit_len, name, len);
	s->jit_at[s->njit] = (uint32_t)s->jit_len;
	s->jit_len += len;
	s->jit_index[j] = (uint32_t)++s->njit;
	return (int64_t)s->njit - 1;
}

/* A frame in no file: a JIT function's name kept (its process's perf map
 * goes with it), else unknown from now on. */
static uint64_t rebase_unmapped(struct pmt_syms *s, struct proc *p, uint64_t addr)
{
	uint64_t off = 0, i = MAX_PINNED;
	const char *name = jit_name(s, p, addr, &off);
	int64_t k = name && off < (1ULL << FILE_FRAME_SHIFT) ? jit_intern(s, name) : -1;

	if (k >= 0)
		i = MAX_PINNED + 1 + (uint64_t)k;
	else
		off = addr & ((1ULL << FILE_FRAME_SHIFT) - 1);
	return 1ULL << 62 | i << FILE_FRAME_SHIFT | off;
}

size_t pmt_syms__rebase(struct pmt_syms *s, uint32_t pid, uint64_t *ips, uint32_t n)
{
	struct proc *p;
	struct map *m;
	size_t at, done = 0;
	int64_t i;
	uint32_t k;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	p = syms_proc_find(s, pid, &at);
	for (k = 0; p && k < n; k++) {
		uint64_t off;

		if (pmt_is_kernel_addr(ips[k]) || syms_is_py_frame(ips[k]) ||
		    syms_is_file_frame(ips[k]))
			continue;
		m = syms_map_find(p, ips[k]);
		off = m ? ips[k] - m->start + m->pgoff : 0;
		if (!m || off >> FILE_FRAME_SHIFT || (i = pin(s, m->f)) < 0) {
			/* never asking for the process again */
			ips[k] = rebase_unmapped(s, p, ips[k]);
			s->unrebased++;
			continue;
		}
		/* its symbols read now, while the process's files are at hand */
		syms_file_table(s, m->f, pid, m);
		ips[k] = 1ULL << 62 | (uint64_t)i << FILE_FRAME_SHIFT | off;
		done++;
	}
	pthread_mutex_unlock(&s->lock);
	return done;
}

bool pmt_syms__debuginfod(const struct pmt_syms *s)
{
	return s && pmt_debuginfod__named();
}

void pmt_syms__touch(struct pmt_syms *s, uint32_t pid, uint64_t addr)
{
	struct file *in;
	uint64_t off, at;

	if (!s || pmt_is_kernel_addr(addr) || syms_is_py_frame(addr))
		return;
	/* the lookup naming does, its name unused */
	pthread_mutex_lock(&s->lock);
	user_name(s, pid, addr, &off, &in, &at);
	pthread_mutex_unlock(&s->lock);
}

bool pmt_syms__mapped(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_mapped *out)
{
	struct proc *p;
	struct map *m;
	bool found;

	if (!s || !pid || pmt_is_kernel_addr(addr))
		return false;
	pthread_mutex_lock(&s->lock);
	p = syms_proc_get(s, pid);
	m = p ? syms_map_find(p, addr) : NULL;
	found = m != NULL; /* a file, or the vDSO (ino 0) */
	if (found) {
		out->start = m->start;
		out->end = m->end;
		out->pgoff = m->pgoff;
		out->dev = m->f->dev;
		out->ino = m->f->ino;
		snprintf(out->path, sizeof(out->path), "%s", m->f->path);
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}

void pmt_syms__await_debug(struct pmt_syms *s, int ms)
{
	struct pmt_debuginfod_stats st;

	if (!s || !s->dbgd)
		return;
	pmt_debuginfod__stats(s->dbgd, &st);
	if (st.pending)
		pmt_info("waiting for %llu debug file%s from debuginfod (at most %d s)",
			 (unsigned long long)st.pending, st.pending == 1 ? "" : "s", ms / 1000);
	pmt_debuginfod__wait(s->dbgd, ms);
	pmt_debuginfod__stats(s->dbgd, &st);
	if (st.failed || st.pending || st.refused)
		pmt_warn("%llu of %llu stripped files' debug files did not come from debuginfod "
			 "(%llu not served, %llu still on their way, %llu past the %d asked): "
			 "their unnamed frames show as FILE+0xOFFSET",
			 (unsigned long long)(st.failed + st.pending + st.refused),
			 (unsigned long long)(st.fetched + st.failed + st.pending + st.refused),
			 (unsigned long long)st.failed, (unsigned long long)st.pending,
			 (unsigned long long)st.refused, PMT_DEBUGINFOD_MAX);
}
