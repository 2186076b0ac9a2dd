// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "unwind/cfi.h"
#include "util/machine.h"
#include "elf/elfsym.h"
#include "symbols/procmaps.h"
#include "python/python.h"
#include "tracefs/tracefs.h"
#include "symbols/symbols.h"
#include "unwind/tables.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/mapkeys.h"
#include "util/strutil.h"
#include "pmtrace.skel.h"

#define CFI_ROWS (1u << 22) /* 32 MiB of kernel memory, 8 bytes a row */
#define CFI_ROWS_MAX (1u << 23)
/* the most rows of one file: the kernel's binary search takes 22 halvings */
#define CFI_FILE_ROWS (1u << 22)
#define CFI_FILES 16384
/* Rows given back are not taken again for this long: longer than any
 * program runs with a file's entry it found before the entry went. */
#define RIPE_NS (20 * 1000000ULL)
/* After a search for files no process maps that found none, no other
 * for this long (each reads every process's maps). */
#define RECLAIM_IDLE_NS 1000000000ULL
/* the files whose reads are counted: 256 KiB, forgotten past 6,144 */
#define REREAD_SLOTS 8192
#define CFI_WANTED 1024
#define VMA_PROCS 4096 /* processes whose VMAs are kept (LRU) */
#define JIT_NEW 256    /* processes met in JIT code, not read yet */

int pmt_unwind__supported(struct pmt_error *err)
{
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) <= 0)
		return pmt_error__runtime(err, -EOPNOTSUPP,
					  "this kernel has no bpf_find_vma (5.17+)");
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) <= 0)
		return pmt_error__runtime(err, -EOPNOTSUPP, "this kernel has no bpf_loop (5.17+)");
	return 0;
}

/* PMT_UNWIND_ROWS in the environment: the row array's size, from 1024
 * (the tests' way to fill it) to 8M; else 4M. clang++ alone maps 2.4M
 * rows (libclang-cpp's 1.0M, libLLVM's 950k, libz3's 387k), bpftrace
 * the same files. */
static uint32_t cfi_rows(void)
{
	const char *v = getenv("PMT_UNWIND_ROWS");
	unsigned long n = v ? strtoul(v, NULL, 10) : 0;

	return n >= 1024 && n <= CFI_ROWS_MAX ? (uint32_t)n : CFI_ROWS;
}

void pmt_unwind__size(struct pmtrace_bpf *skel, bool on, bool python)
{
	skel->rodata->pmt_unwind_dwarf = on;
	pmt_python__size(skel, python && on);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_rows, on ? cfi_rows() : 1);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_rules, on ? PMT_CFI_RULES : 1);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_files, on ? CFI_FILES : 1);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_wanted, on ? CFI_WANTED : 1);
	bpf_map__set_max_entries(skel->maps.pmt_vma_cache, on ? VMA_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.pmt_jit_new, on ? JIT_NEW : 1);
}

void pmt_unwind__autoload(struct pmtrace_bpf *skel)
{
	bool on = skel->rodata->pmt_unwind_dwarf;

	bpf_program__set_autoload(skel->progs.pmt_unwind_mmap, on);
	bpf_program__set_autoload(skel->progs.pmt_unwind_exec, on);
}

/* Learn processes' text mappings where they are made (bpf/unwind.bpf.c);
 * without it each sample learns one. */
static void attach_tracking(struct pmt_unwinder *u)
{
	struct pmtrace_bpf *skel = u->skel;
	struct pmt_error quiet = {0}; /* libbpf's failure says it */
	const char *root;

	/* libbpf finds the mmap tracepoint's id in tracefs: mounted if it
	 * is not (a run of -e events alone needs it nowhere else) */
	pmt_tracefs__root(&root, &quiet);
	skel->links.pmt_unwind_exec = bpf_program__attach(skel->progs.pmt_unwind_exec);
	skel->links.pmt_unwind_mmap = bpf_program__attach(skel->progs.pmt_unwind_mmap);
	if (!skel->links.pmt_unwind_exec || !skel->links.pmt_unwind_mmap)
		pmt_warn("unwind: cannot follow new mappings (%s): a new process's first "
			 "samples may stop short",
			 strerror(errno));
}

void pmt_unwinder__init(struct pmt_unwinder *u, struct pmtrace_bpf *skel)
{
	memset(u, 0, sizeof(*u));
	u->skel = skel;
	pmt_rowspace__init(&u->rows, cfi_rows());
	pmt_cfi_rules__init(&u->rules, PMT_CFI_RULES);
	pmt_rereads__init(&u->rereads, REREAD_SLOTS);
	u->wake_fd = -1;
	pthread_mutex_init(&u->lock, NULL);
	pthread_mutex_init(&u->read_lock, NULL);
}

/* Write rows at index first of the kernel's array through a mapping of
 * just those pages, gone when written: the rows stay the kernel's memory,
 * not pmtrace's resident set. Each row's rule is the kernel's before the
 * row (new rules written as met). -ENOSPC: no room for a new rule. */
static int write_rows(struct pmt_unwinder *u, uint32_t first, const struct pmt_cfi *cfi)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE),
	       at = (size_t)first * sizeof(struct pmt_cfi_krow);
	size_t base = at / page * page, len = at - base + cfi->n * sizeof(struct pmt_cfi_krow);
	int rules = bpf_map__fd(u->skel->maps.pmt_cfi_rules), err = 0;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(u->skel->maps.pmt_cfi_rows), (off_t)base);
	struct pmt_cfi_krow *k = (struct pmt_cfi_krow *)(p + (at - base));
	size_t i;

	if (p == MAP_FAILED)
		return -errno;
	for (i = 0; i < cfi->n; i++) {
		struct pmt_cfi_rule rule = pmt_cfi_rule__of(&cfi->rows[i]);
		bool added;
		int64_t r = pmt_cfi_rules__intern(&u->rules, &rule, &added);
		uint32_t key = (uint32_t)r;

		if (r < 0) {
			err = (int)r;
			break;
		}
		if (added && bpf_map_update_elem(rules, &key, &rule, BPF_ANY)) {
			err = -errno;
			break;
		}
		k[i].pc = cfi->rows[i].pc;
		k[i].rule = key;
	}
	munmap(p, len);
	return err;
}

/* What is read of a file before any map is touched (so it can be read
 * while the programs load): its rows and whether it is a CPython. */
struct pmt_file_read {
	struct pmt_cfi_file_key key;
	struct pmt_cfi cfi;
	int cfi_err;
	char err[128];
	struct pmt_py_found py; /* python/python.h */
	char name[PATH_MAX];
};

/* Is the file a CPython (a few symbols: quick beside its tables)? */
static void read_python(struct pmt_file_read *r, const struct pmt_cfi_file_key *key, int fd,
			const char *name, bool python)
{
	memset(&r->cfi, 0, sizeof(r->cfi));
	r->key = *key;
	snprintf(r->name, sizeof(r->name), "%s", name);
	pmt_python__find(fd, python, &r->py);
}

static void read_cfi(struct pmt_file_read *r, int fd)
{
	struct pmt_error e = {0};

	r->cfi_err = pmt_cfi__read(fd, &r->cfi, &e);
	snprintf(r->err, sizeof(r->err), "%.*s", (int)sizeof(r->err) - 1, e.msg);
}

static void read_file(struct pmt_file_read *r, const struct pmt_cfi_file_key *key, int fd,
		      const char *name, bool python)
{
	read_python(r, key, fd, name, python);
	read_cfi(r, fd);
}

/* Processes the kernel met in JIT code: their perf maps opened while
 * they live (a container's is under its root, named by its own pid) */
/* Did the kernel put anything in queue q since it was last scanned?
 * Taken as scanned now: what comes after this read moves it again. An
 * idle round is then a read of memory, not a walk of a hash's buckets a
 * queue (0.7% of this machine's CPU, at a round every 5 ms). */
static bool queue_moved(struct pmt_unwinder *u, enum pmt_queue q)
{
	uint64_t now = __atomic_load_n(&u->skel->bss->pmt_queued[q], __ATOMIC_ACQUIRE);

	return __atomic_exchange_n(&u->queued_seen[q], now, __ATOMIC_ACQ_REL) != now;
}

static void poll_python(struct pmt_unwinder *u)
{
	if (queue_moved(u, PMT_QUEUE_PY))
		pmt_python__poll(u->skel, u->syms);
}

static void poll_jit(struct pmt_unwinder *u)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_jit_new);
	uint32_t pid;
	int i;

	if (!queue_moved(u, PMT_QUEUE_JIT))
		return;
	/* a deleted key starts the walk again: the map empties */
	for (i = 0; i < JIT_NEW && !bpf_map_get_next_key(fd, NULL, &pid); i++) {
		pmt_syms__jit_seen(u->syms, pid);
		bpf_map_delete_elem(fd, &pid);
	}
}

void pmt_unwinder__poll_queues(struct pmt_unwinder *u)
{
	if (!u->running)
		return;
	poll_python(u);
	poll_jit(u);
}

static bool read_already(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key);
static struct pmt_cfi_file_key file_key(unsigned int maj, unsigned int min, uint64_t ino);

/* The files processes map executable now, sorted (failed: out of
 * memory, or no /proc: then none is taken for gone). */
struct live {
	struct pmt_cfi_file_key *v;
	size_t n, cap;
	bool failed;
};

static void live_add(void *ctx, const struct pmt_procmap *m)
{
	struct live *l = ctx;
	struct pmt_cfi_file_key *g;

	if (!m->ino)
		return;
	if (!(g = pmt_grow(l->v, &l->cap, l->n, sizeof(*g), 512))) {
		l->failed = true;
		return;
	}
	l->v = g;
	l->v[l->n++] = file_key(m->maj, m->min, m->ino);
}

static int key_cmp(const void *a, const void *b)
{
	const struct pmt_cfi_file_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void live_pid(void *ctx, uint32_t pid)
{
	pmt_procmaps__each(pid, live_add, ctx);
}

static void live_files(struct live *l)
{
	if (pmt_procmaps__pids(live_pid, l))
		l->failed = true;
	pmt_sort(l->v, l->n, sizeof(*l->v), key_cmp);
}

static bool is_live(const struct live *l, const struct pmt_cfi_file_key *k)
{
	return (!k->dev && k->ino == PMT_VDSO_INO) || /* every process has it */
	       bsearch(k, l->v, l->n, sizeof(*k), key_cmp);
}

/* A file no process maps (a pmt_mapkeys__pick of the files' map). */
static bool not_live(void *ctx, const void *key)
{
	return !is_live(ctx, key);
}

/* A file no process maps, not read again lately (unwind/rereads.h). */
struct gone_ctx {
	struct pmt_unwinder *u;
	const struct live *l;
	uint64_t now;
};

static bool gone_for_good(void *ctx, const void *key)
{
	const struct gone_ctx *g = ctx;

	return !is_live(g->l, key) && !pmt_rereads__held(&g->u->rereads, key, g->now);
}

/*
 * The files no process maps any more give back their entries and rows
 * (the rows ripen for RIPE_NS first) and their interpreters' entries: a
 * process that maps one again asks for it again. u->gen counts up first,
 * so the main thread, finishing a stack, reads their rows again if it
 * read them across. Under u->lock.
 */
static void reclaim(struct pmt_unwinder *u, uint64_t now)
{
	int files = bpf_map__fd(u->skel->maps.pmt_cfi_files);
	struct pmt_cfi_file_key *gone = NULL;
	struct pmt_cfi_file f;
	struct live l = {0};
	size_t n = 0, i;

	u->reclaimed_ns = now;
	u->reclaim_freed = false;
	u->reclaims++;
	live_files(&l);
	if (!l.failed)
		n = pmt_mapkeys__pick(files, sizeof(*gone), not_live, &l, (void **)&gone);
	if (n)
		__atomic_add_fetch(&u->gen, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		/* read again lately: kept a while longer (unwind/rereads.h) */
		if (pmt_rereads__held(&u->rereads, &gone[i], now) ||
		    bpf_map_lookup_elem(files, &gone[i], &f) ||
		    bpf_map_delete_elem(files, &gone[i]))
			continue;
		if (f.count)
			pmt_rowspace__give(&u->rows, f.first, f.count, pmt_now_ns() + RIPE_NS);
		if (pmt_verbose > 1)
			pmt_info("unwind: file %x:%llx gave back its %u rows", gone[i].dev,
				 (unsigned long long)gone[i].ino, f.count);
		u->files_given_back++;
		u->reclaim_freed = true;
	}
	free(gone);
	if (!l.failed) {
		struct gone_ctx g = {u, &l, now};

		pmt_python__forget(u->skel, gone_for_good, &g);
	}
	free(l.v);
}

/* Room for n rows: given back rows or rows never used; when there is
 * none, what files no process maps hold, once ripe (a few ms). */
static bool place_rows(struct pmt_unwinder *u, uint32_t n, uint32_t *first)
{
	uint64_t now = pmt_now_ns(), ripe = 0;
	struct timespec ts;

	if (pmt_rowspace__take(&u->rows, n, now, first))
		return true;
	if (u->reclaim_freed || now - u->reclaimed_ns >= RECLAIM_IDLE_NS)
		reclaim(u, now);
	now = pmt_now_ns();
	if (pmt_rowspace__hole_for(&u->rows, n, &ripe) && ripe > now) {
		ts.tv_sec = (time_t)((ripe - now) / 1000000000ULL);
		ts.tv_nsec = (long)((ripe - now) % 1000000000ULL);
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return pmt_rowspace__take(&u->rows, n, pmt_now_ns(), first);
}

/* The file's entry for the kernel; a full map first gives back the
 * entries of files no process maps. False: no room (its rows back). */
static bool enter_file(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key,
		       const struct pmt_cfi_file *file)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_cfi_files);

	if (!bpf_map_update_elem(fd, key, file, BPF_ANY))
		return true;
	if (errno == E2BIG) {
		reclaim(u, pmt_now_ns());
		if (!bpf_map_update_elem(fd, key, file, BPF_ANY))
			return true;
	}
	/* never reachable: ripe at once */
	if (file->count)
		pmt_rowspace__give(&u->rows, file->first, file->count, 0);
	if (!u->warned_files)
		pmt_warn("unwind: no room for another file's tables (%u files, all mapped by "
			 "processes now): further files are walked by frame pointers",
			 CFI_FILES);
	u->warned_files = true;
	return false;
}

/* Give the kernel a file's rows (no rows: count 0, so the kernel does
 * not ask again) and frees them; nothing if another thread gave them. */
static void commit_file(struct pmt_unwinder *u, struct pmt_file_read *r)
{
	struct pmt_cfi_file file = {0};
	uint32_t first = 0, n = (uint32_t)r->cfi.n;
	int err;

	pthread_mutex_lock(&u->lock);
	if (read_already(u, &r->key)) {
		pthread_mutex_unlock(&u->lock);
		pmt_cfi__free(&r->cfi);
		return;
	}
	if (n && !r->cfi_err)
		pmt_rereads__read(&u->rereads, &r->key, pmt_now_ns());
	if (r->cfi_err) {
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: %s", r->name, r->err);
	} else if (n > CFI_FILE_ROWS) {
		pmt_warn("unwind: %s has %u rows of unwind tables, more than the %u a file may "
			 "have: walked by frame pointers",
			 r->name, n, CFI_FILE_ROWS);
	} else if (n && !place_rows(u, n, &first)) {
		if (u->nrefused < PMT_UNWIND_REFUSED) {
			u->refused[u->nrefused].key = r->key;
			u->refused[u->nrefused++].rows = n;
		}
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: no room for its %u rows (file %x:%llx)", r->name, n,
				 r->key.dev, (unsigned long long)r->key.ino);
		if (!u->warned_full)
			pmt_warn("unwind tables full (%u rows, held by files processes map now): "
				 "further files are walked by frame pointers",
				 u->rows.cap);
		u->warned_full = true;
	} else if (n && (err = write_rows(u, first, &r->cfi))) {
		pmt_rowspace__give(&u->rows, first, n, 0);
		if (err == -ENOSPC && !u->warned_rules)
			pmt_warn("unwind: no room for another rule (%u, which the rows of every "
				 "file share): further files with new ones are walked by frame "
				 "pointers",
				 PMT_CFI_RULES);
		u->warned_rules = u->warned_rules || err == -ENOSPC;
	} else {
		/* in place before the file entry below makes them reachable */
		file.first = first;
		file.count = n;
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: %u rows (file %x:%llx)", r->name, file.count,
				 r->key.dev, (unsigned long long)r->key.ino);
	}
	pmt_cfi__free(&r->cfi);
	pmt_python__commit(u->skel, &r->key, &r->py, r->name);
	enter_file(u, &r->key, &file);
	pthread_mutex_unlock(&u->lock);
}

/* A file read before, whose rows went back, that no process maps now:
 * the late stacks of a process gone end there, rather than take rows from
 * the files that run now (and give them back at the next reclaim, over
 * and over). An entry without rows, held as a read would be, so it is not
 * asked again at once (unwind/rereads.h). */
static void enter_gone(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key)
{
	struct pmt_cfi_file none = {0};

	pthread_mutex_lock(&u->lock);
	pmt_rereads__read(&u->rereads, key, pmt_now_ns());
	u->gone_not_reread++;
	enter_file(u, key, &none);
	pthread_mutex_unlock(&u->lock);
}

/* Load the rows of the file open at fd under key, unless read already
 * (or read before and mapped by no process now: enter_gone). One file is
 * read at a time: the main thread, finishing a stack, waits for the
 * loader's read of the file it needs instead of reading it again. */
static void load_file(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key, int fd,
		      const char *name, bool mapped)
{
	struct pmt_file_read *r;

	pthread_mutex_lock(&u->read_lock);
	if (read_already(u, key)) {
		pthread_mutex_unlock(&u->read_lock);
		return;
	}
	if (!mapped && pmt_rereads__count(&u->rereads, key)) {
		enter_gone(u, key);
	} else if ((r = malloc(sizeof(*r)))) {
		/* an interpreter is known before its rows are read: a stack
		 * left for user space meanwhile takes the thread's Python
		 * frames along (bpf/unwind.bpf.h, pmt_py_dump) */
		read_python(r, key, fd, name, u->skel->rodata->pmt_python);
		if (r->py.py == PMT_PY_SUPPORTED) {
			pthread_mutex_lock(&u->lock);
			pmt_python__commit(u->skel, &r->key, &r->py, r->name);
			pthread_mutex_unlock(&u->lock);
		}
		read_cfi(r, fd);
		commit_file(u, r);
		free(r);
	}
	pthread_mutex_unlock(&u->read_lock);
}

/* Does the path end in one of the names? */
static bool wanted_name(const char *path, const char *const *names)
{
	size_t n = strlen(path), k;

	for (; *names; names++) {
		k = strlen(*names);
		if (n >= k && !memcmp(path + n - k, *names, k) &&
		    (n == k || path[n - k - 1] == '/'))
			return true;
	}
	return false;
}

/* The kernel's key of a file: its dev_t as the kernel encodes it. */
static struct pmt_cfi_file_key file_key(unsigned int maj, unsigned int min, uint64_t ino)
{
	struct pmt_cfi_file_key key = {0};

	key.dev = maj << 20 | min;
	key.ino = ino;
	return key;
}

static bool same_key(const struct pmt_cfi_file_key *a, const struct pmt_cfi_file_key *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* The file process pid (0: pmtrace) maps at [start, end), opened through
 * its mapping (so a deleted or replaced file still reads): -1 if gone. */
static int open_mapped(uint32_t pid, uint64_t start, uint64_t end)
{
	char path[96];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start,
			 end);
	else
		snprintf(path, sizeof(path), "/proc/self/map_files/%" PRIx64 "-%" PRIx64, start,
			 end);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Has the file been read (rows, or none to be had)? */
static bool read_already(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key)
{
	struct pmt_cfi_file known;

	return !bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.pmt_cfi_files), key, &known);
}

struct reading {
	struct pmt_unwinder *u;
	uint32_t tgid;
	const struct pmt_cfi_file_key *only; /* this file alone, or every one */
};

static bool serve_wanted(struct pmt_unwinder *u);
static void read_now(struct pmt_unwinder *u, uint32_t pid, const struct pmt_mapped *m,
		     const struct pmt_cfi_file_key *key);

/* A file of a process gone before its tables were read: found through
 * the mapping the process had at vm_start (symbols/symbols.h). */
static void read_gone(struct pmt_unwinder *u, uint32_t tgid, uint64_t vm_start,
		      const struct pmt_cfi_file_key *key)
{
	struct pmt_mapped *m = malloc(sizeof(*m));
	struct pmt_cfi_file_key k;

	if (m && pmt_syms__mapped(u->syms, tgid, vm_start, m)) {
		k = file_key(major(m->dev), minor(m->dev), m->ino);
		if (same_key(&k, key))
			read_now(u, tgid, m, key);
	}
	free(m);
}

static void load_mapped(void *ctx, const struct pmt_procmap *m)
{
	const struct reading *r = ctx;
	struct pmt_cfi_file_key key = file_key(m->maj, m->min, m->ino);
	int fd;

	if (!m->ino || (r->only && !same_key(&key, r->only)))
		return;
	/* a process's other files wait for the files samples are asking
	 * for now, of any process */
	if (!r->only)
		serve_wanted(r->u);
	if (read_already(r->u, &key))
		return;
	fd = open_mapped(r->tgid, m->start, m->end);
	if (fd < 0)
		return;
	load_file(r->u, &key, fd, m->path, true);
	close(fd);
}

/* Remember tgid's other files for later (a full list forgets: the
 * process's next sample in one of them asks again). */
static void rest_later(struct pmt_unwinder *u, uint32_t tgid)
{
	uint32_t i;

	for (i = 0; i < u->nrest; i++)
		if (u->rest[i] == tgid)
			return;
	if (u->nrest < PMT_UNWIND_REST)
		u->rest[u->nrest++] = tgid;
}

/*
 * The files the kernel asked for (it stops a stack at the first file it
 * has no rows of), each read alone first, of whatever process: on a busy
 * machine, a short-lived process's program must not wait behind every
 * library of a large process met before it (a QEMU's 30 took 0.3 s).
 * The other executable files of their processes are read after, newest
 * process first, and give way again to files asked for meanwhile. A
 * process gone is asked again by its next sample. True if any was asked.
 */
static bool serve_wanted(struct pmt_unwinder *u)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_cfi_wanted);
	struct pmt_cfi_file_key key, next;
	struct pmt_cfi_want w;
	bool any = false;

	if (!queue_moved(u, PMT_QUEUE_WANTED))
		return false;
	/* take one key at a time: the kernel may add more meanwhile */
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		any = true;
		if (!bpf_map_lookup_elem(fd, &key, &w)) {
			struct reading r = {u, w.tgid, &key};
			uint64_t t0 = pmt_now_ns();

			pmt_procmaps__each(w.tgid, load_mapped, &r);
			/* gone already (a short process): by the path its
			 * mapping had, if that is still the file */
			if (!read_already(u, &key))
				read_gone(u, w.tgid, w.vm_start, &key);
			rest_later(u, w.tgid);
			if (pmt_verbose > 1)
				pmt_info("unwind: a file of process %u read in %.1f ms", w.tgid,
					 (double)(pmt_now_ns() - t0) / 1e6);
		}
		bpf_map_delete_elem(fd, &key);
	}
	return any;
}

/* Files that had no room, while they are mapped: once a second, files
 * no process maps any more give their rows back, and the refused that
 * would fit now lose their entries (rows none), so the kernel asks for
 * them again. */
static void retry_refused(struct pmt_unwinder *u)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_cfi_files);
	uint64_t now = pmt_now_ns();
	struct pmt_cfi_file f;
	uint32_t i, kept = 0;

	if (!u->nrefused || now - u->reclaimed_ns < RECLAIM_IDLE_NS)
		return;
	pthread_mutex_lock(&u->lock);
	reclaim(u, now);
	for (i = 0; i < u->nrefused; i++) {
		/* not yet: no room, or read again lately (refused again) */
		if (!pmt_rowspace__fits(&u->rows, u->refused[i].rows) ||
		    pmt_rereads__held(&u->rereads, &u->refused[i].key, now))
			u->refused[kept++] = u->refused[i];
		else if (!bpf_map_lookup_elem(fd, &u->refused[i].key, &f) && !f.count)
			bpf_map_delete_elem(fd, &u->refused[i].key);
	}
	u->nrefused = kept;
	pthread_mutex_unlock(&u->lock);
}

static void poll_wanted(struct pmt_unwinder *u)
{
	poll_jit(u);
	retry_refused(u);
	serve_wanted(u);
	while (u->nrest && !u->stop) {
		struct reading r = {u, u->rest[--u->nrest], NULL};

		pmt_procmaps__each(r.tgid, load_mapped, &r);
	}
}

/* a round this often without the kernel's word (no ring) */
#define POLL_MS 5
/* ... and with it: for the files refused, given back once a second */
#define IDLE_MS 1000

static int queue_word(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

static void *loader(void *arg)
{
	struct pmt_unwinder *u = arg;
	struct pollfd pfd[2] = {
		{.fd = u->wake_fd, .events = POLLIN},
		{.fd = u->queue_wake ? ring_buffer__epoll_fd(u->queue_wake) : -1, .events = POLLIN},
	};
	uint64_t n;

	while (!u->stop) {
		poll_wanted(u);
		poll_python(u);
		/* woken at once to stop (no exit waits for a round), to read
		 * what a stack left for user space needs, or by the kernel's
		 * word that a queue moved (the words taken before the round
		 * that reads the queues: one put meanwhile wakes it again) */
		if (poll(pfd, 2, u->queue_wake ? IDLE_MS : POLL_MS) <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && read(u->wake_fd, &n, sizeof(n)) == sizeof(n))
			__atomic_store_n(&u->woken, false, __ATOMIC_RELAXED);
		if (pfd[1].revents & POLLIN)
			ring_buffer__consume(u->queue_wake);
	}
	return NULL;
}

void pmt_unwinder__wake(struct pmt_unwinder *u)
{
	uint64_t one = 1;

	if (!u->running || __atomic_exchange_n(&u->woken, true, __ATOMIC_RELAXED))
		return;
	if (write(u->wake_fd, &one, sizeof(one)) < 0)
		__atomic_store_n(&u->woken, false, __ATOMIC_RELAXED);
}

/*
 * What nearly every process maps (the dynamic loader and libc, ours too),
 * the command pmtrace starts and every library it needs (DT_NEEDED, and
 * theirs, as the loader finds them) are read before it runs, so a
 * short-lived process's first samples unwind in every file it starts
 * with. Reading them needs no map: a thread reads them while the
 * programs load (a few ms of CFI parsing beside the verifier's tens),
 * and start() gives the rows to the kernel.
 */
#define PREFETCH_MAX 64
/* a system-wide session's reading of running processes' files stops
 * queueing more after this long (a machine running much big code) */
#define PREFETCH_RUNNING_NS 1500000000ULL

struct prefetch {
	struct pmt_file_read files[PREFETCH_MAX];
	size_t n;
	bool python;
	bool running; /* system wide: the files of the processes on a CPU now too */
	uint64_t t0;
	uint32_t pid; /* ... the one whose maps are walked */
	char cmd[PATH_MAX];
	/* the command's libraries still to read, breadth first */
	char *queue[PREFETCH_MAX];
	size_t nqueue;
};

static bool prefetched(const struct prefetch *p, const struct pmt_cfi_file_key *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (same_key(&p->files[i].key, key))
			return true;
	return false;
}

static void prefetch_fd(struct prefetch *p, const struct pmt_cfi_file_key *key, int fd,
			const char *name)
{
	if (p->n < PREFETCH_MAX && !prefetched(p, key))
		read_file(&p->files[p->n++], key, fd, name, p->python);
}

/* The vDSO, the same image in every process: its rows from pmtrace's
 * own, through a memory file (the reader takes a descriptor). */
static void prefetch_vdso(struct prefetch *p, const struct pmt_procmap *m)
{
	struct pmt_cfi_file_key key = {.dev = 0, .ino = PMT_VDSO_INO};
	size_t len = m->end - m->start;
	int fd = memfd_create("vdso", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, (const void *)m->start, len) == (ssize_t)len)
		prefetch_fd(p, &key, fd, "[vdso]");
	if (fd >= 0)
		close(fd);
}

/* The file process pid (0: pmtrace) maps at m, read through the mapping
 * unless it is read already or there is no room. */
static void prefetch_mapping(struct prefetch *p, uint32_t pid, const struct pmt_procmap *m)
{
	struct pmt_cfi_file_key key = file_key(m->maj, m->min, m->ino);
	int fd;

	if (p->n >= PREFETCH_MAX || prefetched(p, &key))
		return;
	fd = open_mapped(pid, m->start, m->end);
	if (fd < 0)
		return;
	prefetch_fd(p, &key, fd, m->path);
	close(fd);
}

/* Past the time a system-wide session reads running processes' files. */
static bool prefetch_late(const struct prefetch *p)
{
	return p->running && pmt_now_ns() - p->t0 > PREFETCH_RUNNING_NS;
}

static void prefetch_mapped(void *ctx, const struct pmt_procmap *m)
{
	static const char *const common[] = {"libc.so.6", PMT_LD_SO, NULL};

	if (!m->ino && !strcmp(m->path, "[vdso]"))
		prefetch_vdso(ctx, m);
	if (m->ino && wanted_name(m->path, common))
		prefetch_mapping(ctx, 0, m);
}

static void prefetch_queue(void *ctx, const char *path);

/* Any file a running process maps executable (as prefetch_mapped reads
 * pmtrace's own common ones), through the process's mapping. */
static void prefetch_running_mapped(void *ctx, const struct pmt_procmap *m)
{
	struct prefetch *p = ctx;

	if (m->ino && !prefetch_late(p))
		prefetch_mapping(p, p->pid, m);
}

/* A process on a CPU now (state R in its stat, after the command's name
 * in parentheses), not pmtrace: its files are read before sampling. */
static void prefetch_running(void *ctx, uint32_t pid)
{
	struct prefetch *p = ctx;
	char path[64], buf[512], *paren;
	ssize_t n;
	int fd;

	if (pid == (uint32_t)getpid() || p->n >= PREFETCH_MAX)
		return;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	if (!paren || paren[1] != ' ' || paren[2] != 'R')
		return;
	p->pid = pid;
	pmt_procmaps__each(pid, prefetch_running_mapped, p);
	/* and what its program needs (DT_NEEDED), which a process still in
	 * its loader has not mapped yet: queued, read after */
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0 && buf[0] == '/') {
		buf[n] = '\0';
		prefetch_queue(p, buf);
	}
}

/* a library of the command's: queued once */
static void prefetch_queue(void *ctx, const char *path)
{
	struct prefetch *p = ctx;
	size_t i;

	for (i = 0; i < p->nqueue; i++)
		if (!strcmp(p->queue[i], path))
			return;
	if (p->nqueue < PREFETCH_MAX && (p->queue[p->nqueue] = strdup(path)))
		p->nqueue++;
}

static void prefetch_path(struct prefetch *p, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd >= 0 && !fstat(fd, &st)) {
		struct pmt_cfi_file_key key =
			file_key(major(st.st_dev), minor(st.st_dev), st.st_ino);

		prefetch_fd(p, &key, fd, path);
	}
	if (fd >= 0)
		close(fd);
}

static void *prefetch_main(void *arg)
{
	struct prefetch *p = arg;
	uint64_t t0 = pmt_now_ns();
	size_t i;

	p->t0 = t0;
	pmt_procmaps__each((uint32_t)getpid(), prefetch_mapped, p);
	if (p->cmd[0]) {
		prefetch_path(p, p->cmd);
		pmt_elf__needed(p->cmd, prefetch_queue, p);
	}
	/* a system-wide profile's first samples land mostly in what runs
	 * now: big code (a compiler's 2.4M rows, 0.5 s to read) whose
	 * stacks the kernel met before its rows were read were finished
	 * from 8 KB copies, short of main (clang's first second) */
	if (p->running)
		pmt_procmaps__pids(prefetch_running, p);
	/* the queue grows as each library names its own */
	for (i = 0; i < p->nqueue && p->n < PREFETCH_MAX && !prefetch_late(p); i++) {
		prefetch_path(p, p->queue[i]);
		pmt_elf__needed(p->queue[i], prefetch_queue, p);
	}
	if (pmt_verbose > 1)
		pmt_info("unwind: libc, the loader, the command%s and %zu programs and "
			 "libraries they need: %zu files read in %.1f ms",
			 p->running ? ", the files of running processes" : "", p->nqueue, p->n,
			 (double)(pmt_now_ns() - t0) / 1e6);
	return NULL;
}

void pmt_unwinder__prefetch(struct pmt_unwinder *u, const char *cmd, bool running)
{
	struct prefetch *p;

	if (!u->skel->rodata->pmt_unwind_dwarf || u->pre)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->python = u->skel->rodata->pmt_python;
	p->running = running;
	/* found as execvp finds it (a bare name's path was overwritten by
	 * the name itself here, so -- python3.11 was read at its first
	 * samples); not found: the command's own start says so */
	if (cmd && !strchr(cmd, '/')) {
		if (pmt_elf__locate(cmd, p->cmd, sizeof(p->cmd)))
			p->cmd[0] = '\0';
	} else if (cmd) {
		snprintf(p->cmd, sizeof(p->cmd), "%s", cmd);
	}
	u->pre = p;
	if (pthread_create(&u->pre_thread, NULL, prefetch_main, p)) {
		prefetch_main(p);
		return;
	}
	u->prefetching = true;
}

/* Wait for the prefetch; commit: give its rows to the kernel. */
static void prefetch_end(struct pmt_unwinder *u, bool commit)
{
	struct prefetch *p = u->pre;
	size_t i;

	if (!p)
		return;
	if (u->prefetching)
		pthread_join(u->pre_thread, NULL);
	u->prefetching = false;
	for (i = 0; i < p->n; i++) {
		if (commit)
			commit_file(u, &p->files[i]);
		else
			pmt_cfi__free(&p->files[i].cfi);
	}
	for (i = 0; i < p->nqueue; i++)
		free(p->queue[i]);
	free(p);
	u->pre = NULL;
}

int pmt_unwinder__start(struct pmt_unwinder *u, struct pmt_error *e)
{
	sigset_t all, old;
	int err;

	if (!u->skel || !u->skel->rodata->pmt_unwind_dwarf || u->running)
		return 0;
	attach_tracking(u);
	prefetch_end(u, true);
	u->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (u->wake_fd < 0)
		return pmt_error__runtime(e, -errno, "cannot start the unwind table loader: %s",
					  strerror(errno));
	/* without it (no memory), a round every POLL_MS */
	u->queue_wake =
		ring_buffer__new(bpf_map__fd(u->skel->maps.pmt_queue_wake), queue_word, NULL, NULL);
	/* signals stay with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&u->thread, NULL, loader, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		ring_buffer__free(u->queue_wake);
		u->queue_wake = NULL;
		close(u->wake_fd);
		u->wake_fd = -1;
		return pmt_error__runtime(e, -err, "cannot start the unwind table loader: %s",
					  strerror(err));
	}
	u->running = true;
	return 0;
}

/* A file a stack to finish met before the loader read it: read now, by
 * the process's mapping, else by its path if that is still the file. */
static void read_now(struct pmt_unwinder *u, uint32_t pid, const struct pmt_mapped *m,
		     const struct pmt_cfi_file_key *key)
{
	struct stat st;
	int fd = open_mapped(pid, m->start, m->end);
	bool mapped = fd >= 0;

	if (fd < 0 && (fd = open(m->path, O_RDONLY | O_CLOEXEC)) >= 0 &&
	    (fstat(fd, &st) || st.st_dev != m->dev || st.st_ino != m->ino)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return; /* the stack ends there: counted by the caller */
	load_file(u, key, fd, m->path, mapped);
	close(fd);
}

struct resuming {
	struct pmt_unwinder *u;
	uint32_t pid;
	bool have; /* m and file: the mapping of the last pc */
	struct pmt_mapped m;
	struct pmt_cfi_file file;
	bool python; /* ... an interpreter's, py its eval loop */
	struct pmt_py_file py;
	uint64_t gen; /* of u->gen when m and file were looked up */
};

/* The last of the file's rows at or below at, by the kernel's array
 * (log2 of the file's rows lookups: no copy of the rows here). */
static bool row_below(struct pmt_unwinder *u, const struct pmt_cfi_file *f, uint64_t at,
		      struct pmt_cfi_row *row)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_cfi_rows);
	uint32_t lo = 0, hi = f->count, mid, key;
	struct pmt_cfi_krow k;
	bool found = false;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		key = f->first + mid;
		if (bpf_map_lookup_elem(fd, &key, &k))
			return false;
		if (k.pc <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		key = f->first + lo - 1;
		found = !bpf_map_lookup_elem(fd, &key, &k);
	}
	/* the rules are the kernel's copies of these (under the lock: the
	 * loader thread adds to them) */
	pthread_mutex_lock(&u->lock);
	found = found && k.rule < u->rules.n;
	if (found)
		*row = pmt_cfi_rule__row(k.pc, &u->rules.v[k.rule]);
	pthread_mutex_unlock(&u->lock);
	return found;
}

/* The row at file offset at of the file whose rows start at f->first
 * (in one generation of u->gen a file's first row names it), through a cache of
 * the rows found last: a stack met again is finished without a lookup
 * in the kernel's array (log2 of the file's rows system calls). */
static bool row_cached(struct pmt_unwinder *u, const struct pmt_cfi_file *f, uint64_t at,
		       struct pmt_cfi_row *row)
{
	uint64_t h = ((uint64_t)f->first << 32 | at) * 0x9E3779B97F4A7C15ULL;
	struct pmt_row_memo *m;

	if (!u->memo)
		return row_below(u, f, at, row);
	m = &u->memo[h >> (64 - PMT_ROW_MEMO_BITS)];
	if (m->used && m->first == f->first && m->at == at) {
		*row = m->row;
		return m->found;
	}
	m->found = row_below(u, f, at, &m->row);
	m->used = true;
	m->first = f->first;
	m->at = (uint32_t)at;
	*row = m->row;
	return m->found;
}

static int resume_row_once(struct resuming *c, uint64_t pc, unsigned back, struct pmt_cfi_row *row,
			   bool *eval)
{
	int files = bpf_map__fd(c->u->skel->maps.pmt_cfi_files);
	uint64_t at;

	if (!c->have || pc < c->m.start || pc >= c->m.end) {
		struct pmt_cfi_file_key key;

		c->have = pmt_syms__mapped(c->u->syms, c->pid, pc, &c->m);
		if (!c->have)
			return -1;
		key = file_key(major(c->m.dev), minor(c->m.dev), c->m.ino);
		if (!c->m.ino) /* the vDSO: read at start, or never */
			key = (struct pmt_cfi_file_key){.dev = 0, .ino = PMT_VDSO_INO};
		if (bpf_map_lookup_elem(files, &key, &c->file) && c->m.ino) {
			uint64_t t0 = pmt_thread_cpu_ns();

			read_now(c->u, c->pid, &c->m, &key);
			c->u->resume_read_ns += pmt_thread_cpu_ns() - t0;
			if (bpf_map_lookup_elem(files, &key, &c->file))
				c->file.count = 0;
		}
		c->python = c->m.ino && pmt_python__file(c->u->skel, &key, &c->py);
	}
	at = pc - c->m.start + c->m.pgoff - back;
	*eval = c->python && at >= c->py.eval_start && at < c->py.eval_end;
	if (!c->file.count || at > UINT32_MAX)
		return 0;
	return row_cached(c->u, &c->file, at, row) ? 1 : 0;
}

/* resume_row_once, again if files gave their rows back meanwhile (the
 * rows read may be another file's by then: see reclaim). */
static int resume_row(void *ctx, uint64_t pc, unsigned back, struct pmt_cfi_row *row, bool *eval)
{
	struct resuming *c = ctx;
	struct pmt_unwinder *u = c->u;
	uint64_t gen;
	int tries, ret = 0;

	for (tries = 0; tries < 3; tries++) {
		gen = __atomic_load_n(&u->gen, __ATOMIC_SEQ_CST);
		if (gen != u->memo_gen) {
			if (u->memo)
				memset(u->memo, 0, sizeof(*u->memo) << PMT_ROW_MEMO_BITS);
			u->memo_gen = gen;
		}
		if (gen != c->gen) {
			c->have = false;
			c->gen = gen;
		}
		ret = resume_row_once(c, pc, back, row, eval);
		if (__atomic_load_n(&u->gen, __ATOMIC_SEQ_CST) == gen)
			break;
	}
	return ret;
}

struct pmt_resume pmt_unwinder__resume(struct pmt_unwinder *u, uint32_t pid,
				       const struct pmt_ustack_dump *d, const void *stack,
				       const uint64_t *py, uint64_t *out, uint32_t max)
{
	struct resuming *c = calloc(1, sizeof(*c));
	struct pmt_resume r = {0};

	if (!c || !u->skel || !u->skel->rodata->pmt_unwind_dwarf) {
		free(c);
		return r;
	}
	if (!u->memo) /* no memory for it: every row looked up */
		u->memo = calloc(1u << PMT_ROW_MEMO_BITS, sizeof(*u->memo));
	c->u = u;
	c->pid = pid;
	r = pmt_resume(d, stack, py, resume_row, c, out, max);
	free(c);
	__atomic_fetch_add(&u->resume_ends[r.end], 1, __ATOMIC_RELAXED);
	return r;
}

static uint64_t resume_end(const struct pmt_unwinder *u, enum pmt_resume_end end)
{
	return __atomic_load_n(&u->resume_ends[end], __ATOMIC_RELAXED);
}

uint64_t pmt_unwinder__ended_as(const struct pmt_unwinder *u, enum pmt_stat stat)
{
	switch (stat) {
	case PMT_STAT_UNWIND_ENDED: return resume_end(u, PMT_RESUME_NO_TEXT);
	case PMT_STAT_UNWIND_DEPTH: return resume_end(u, PMT_RESUME_DEPTH);
	case PMT_STAT_UNWIND_UNREAD: return resume_end(u, PMT_RESUME_UNREAD);
	default: return 0;
	}
}

uint64_t pmt_unwinder__beyond_copy(const struct pmt_unwinder *u)
{
	return resume_end(u, PMT_RESUME_BEYOND);
}

void pmt_unwinder__stop(struct pmt_unwinder *u)
{
	uint64_t one = 1;

	prefetch_end(u, false);
	if (!u->running)
		return;
	u->stop = true;
	if (write(u->wake_fd, &one, sizeof(one)) < 0)
		pmt_warn("unwind: cannot wake the loader: %s", strerror(errno));
	pthread_join(u->thread, NULL);
	ring_buffer__free(u->queue_wake);
	u->queue_wake = NULL;
	close(u->wake_fd);
	u->wake_fd = -1;
	u->running = false;
}

void pmt_unwinder__free(struct pmt_unwinder *u)
{
	free(u->memo);
	u->memo = NULL;
	pmt_rowspace__free(&u->rows);
	pmt_cfi_rules__free(&u->rules);
	pmt_rereads__free(&u->rereads);
}
