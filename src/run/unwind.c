// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "events/cfi.h"
#include "events/elfsym.h"
#include "events/procmaps.h"
#include "events/python.h"
#include "events/tracefs.h"
#include "output/symbols.h"
#include "run/unwind.h"
#include "util/log.h"
#include "util/strutil.h"
#include "pmtrace.skel.h"

#define CFI_ROWS (1u << 21) /* 32 MiB of kernel memory */
#define CFI_FILES 4096
#define CFI_WANTED 1024
#define USTACKS 16384
#define VMA_PROCS 4096 /* processes whose VMAs are kept (LRU) */
#define PY_FILES 64    /* CPython interpreter files */
#define PY_SEEN 16384  /* code objects met, per process (LRU) */
#define PY_NEW 4096    /* ... not yet read by user space */

bool pmt_unwind__supported(const char **why)
{
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) <= 0) {
		*why = "this kernel has no bpf_find_vma (5.17+)";
		return false;
	}
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) <= 0) {
		*why = "this kernel has no bpf_loop (5.17+)";
		return false;
	}
	return true;
}

void pmt_unwind__size(struct pmtrace_bpf *skel, bool on, bool aggregating, bool python)
{
	python = python && on;
	skel->rodata->pmt_unwind_dwarf = on;
	skel->rodata->pmt_python = python;
	bpf_map__set_max_entries(skel->maps.pmt_py_files, python ? PY_FILES : 1);
	bpf_map__set_max_entries(skel->maps.pmt_py_seen, python ? PY_SEEN : 1);
	bpf_map__set_max_entries(skel->maps.pmt_py_new, python ? PY_NEW : 1);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_rows, on ? CFI_ROWS : 1);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_files, on ? CFI_FILES : 1);
	bpf_map__set_max_entries(skel->maps.pmt_cfi_wanted, on ? CFI_WANTED : 1);
	bpf_map__set_max_entries(skel->maps.pmt_ustacks, on && aggregating ? USTACKS : 1);
	bpf_map__set_max_entries(skel->maps.pmt_vma_cache, on ? VMA_PROCS : 1);
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
	const char *root;

	/* libbpf finds the mmap tracepoint's id in tracefs: mounted if it
	 * is not (a run of -e events alone needs it nowhere else) */
	pmt_tracefs__root(&root);
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
	u->rows_cap = CFI_ROWS;
}

/* Write rows at index first of the kernel's array through a mapping of
 * just those pages, gone when written: the rows stay the kernel's memory,
 * not pmtrace's resident set. */
static int write_rows(struct pmt_unwinder *u, uint32_t first, const struct pmt_cfi *cfi)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), at = (size_t)first * sizeof(*cfi->rows);
	size_t base = at / page * page, len = at - base + cfi->n * sizeof(*cfi->rows);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(u->skel->maps.pmt_cfi_rows), (off_t)base);

	if (p == MAP_FAILED)
		return -errno;
	memcpy(p + (at - base), cfi->rows, cfi->n * sizeof(*cfi->rows));
	munmap(p, len);
	return 0;
}

/* A CPython interpreter: its eval loop and _PyRuntime for the kernel,
 * which then writes the Python frames of its processes' stacks. */
static void load_python(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key, int fd,
			const char *name)
{
	struct pmt_py_file py;
	char version[32];

	if (!u->skel->rodata->pmt_python)
		return;
	switch (pmt_py__probe(fd, &py, version, sizeof(version))) {
	case PMT_PY_SUPPORTED:
		bpf_map_update_elem(bpf_map__fd(u->skel->maps.pmt_py_files), key, &py, BPF_ANY);
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: CPython %s, Python frames read", name, version);
		break;
	case PMT_PY_UNSUPPORTED:
		pmt_warn("%s is CPython %s: Python frames are read from 3.11 only, its stacks "
			 "show the interpreter's native frames",
			 name, version);
		break;
	default: break;
	}
}

/* The code objects the kernel met first in a process: read while the
 * process lives, for naming its Python frames later. */
static void poll_python(struct pmt_unwinder *u)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_py_new);
	struct pmt_py_id key, next;
	struct pmt_py_new code;
	bool first = true;
	int i;

	if (!u->skel->rodata->pmt_python)
		return;
	/* a deleted key starts the walk again: the queue empties */
	for (i = 0; i < PY_NEW && !bpf_map_get_next_key(fd, first ? NULL : &key, &next); i++) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &code))
			pmt_syms__python_code(u->syms, key.tgid, key.id, code.code, code.qualname);
		bpf_map_delete_elem(fd, &key);
	}
}

void pmt_unwinder__poll_python(struct pmt_unwinder *u)
{
	if (u->running)
		poll_python(u);
}

/* Load the rows of the file open at fd under key (no rows: count 0, so
 * the kernel does not ask again). */
static void load_file(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key, int fd,
		      const char *name)
{
	struct pmt_cfi_file file = {0};
	struct pmt_cfi cfi;
	char err[128];

	if (pmt_cfi__read(fd, &cfi, err, sizeof(err))) {
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: %s", name, err);
	} else if (cfi.n > u->rows_cap - u->rows_used) {
		if (!u->warned_full)
			pmt_warn("unwind tables full (%u rows): further files are walked by "
				 "frame pointers",
				 u->rows_cap);
		u->warned_full = true;
	} else if (!write_rows(u, u->rows_used, &cfi)) {
		/* in place before the file entry below makes them reachable */
		file.first = u->rows_used;
		file.count = (uint32_t)cfi.n;
		u->rows_used += (uint32_t)cfi.n;
		if (pmt_verbose > 1)
			pmt_info("unwind: %s: %u rows", name, file.count);
	}
	pmt_cfi__free(&cfi);
	load_python(u, key, fd, name);
	bpf_map_update_elem(bpf_map__fd(u->skel->maps.pmt_cfi_files), key, &file, BPF_ANY);
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

/* Has the file been read (rows, or none to be had)? */
static bool read_already(struct pmt_unwinder *u, const struct pmt_cfi_file_key *key)
{
	struct pmt_cfi_file known;

	return !bpf_map_lookup_elem(bpf_map__fd(u->skel->maps.pmt_cfi_files), key, &known);
}

struct reading {
	struct pmt_unwinder *u;
	uint32_t tgid;
	const char *const *only;
};

static void load_mapped(void *ctx, const struct pmt_procmap *m)
{
	const struct reading *r = ctx;
	struct pmt_cfi_file_key key = file_key(m->maj, m->min, m->ino);
	char path[96];
	int fd;

	if (!m->ino || (r->only && !wanted_name(m->path, r->only)) || read_already(r->u, &key))
		return;
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, r->tgid, m->start,
		 m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	load_file(r->u, &key, fd, m->path);
	close(fd);
}

/* Every executable file process tgid maps that has no rows yet: the
 * kernel asks for one file at a time (it stops at the first it cannot
 * unwind), a process's next ones are read with it. A process gone is
 * asked again by its next sample. */
static void load_process(struct pmt_unwinder *u, uint32_t tgid, const char *const *only)
{
	struct reading r = {u, tgid, only};

	pmt_procmaps__each(tgid, load_mapped, &r);
}

static void poll_wanted(struct pmt_unwinder *u)
{
	int fd = bpf_map__fd(u->skel->maps.pmt_cfi_wanted);
	struct pmt_cfi_file_key key, next;
	struct pmt_cfi_want w;

	/* take one key at a time: the kernel may add more meanwhile */
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &w)) {
			uint64_t t0 = pmt_now_ns();

			load_process(u, w.tgid, NULL);
			if (pmt_verbose > 1)
				pmt_info("unwind: process %u read in %.1f ms", w.tgid,
					 (double)(pmt_now_ns() - t0) / 1e6);
		}
		bpf_map_delete_elem(fd, &key);
	}
}

#define POLL_NS (5 * 1000 * 1000L)

static void *loader(void *arg)
{
	struct pmt_unwinder *u = arg;
	const struct timespec ts = {0, POLL_NS};

	while (!u->stop) {
		poll_wanted(u);
		poll_python(u);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* What nearly every process maps: the dynamic loader and libc, read now
 * (they are ours too) so a short-lived process's first samples unwind. */
static void preload(struct pmt_unwinder *u)
{
	static const char *const common[] = {"libc.so.6", "ld-linux-x86-64.so.2", NULL};
	uint64_t t0 = pmt_now_ns();

	load_process(u, (uint32_t)getpid(), common);
	if (pmt_verbose > 1)
		pmt_info("unwind: libc and the loader read in %.1f ms",
			 (double)(pmt_now_ns() - t0) / 1e6);
}

/* The command pmtrace starts: read before it runs, so its first samples
 * unwind too (a script's interpreter is met as usual). */
static void preload_command(struct pmt_unwinder *u, const char *cmd)
{
	struct pmt_cfi_file_key key;
	char path[4096];
	struct stat st;
	int fd;

	if (!strchr(cmd, '/') && !pmt_elf__locate(cmd, path, sizeof(path)))
		cmd = path;
	fd = open(cmd, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &st)) {
		key = file_key(major(st.st_dev), minor(st.st_dev), st.st_ino);
		if (!read_already(u, &key))
			load_file(u, &key, fd, cmd);
	}
	close(fd);
}

int pmt_unwinder__start(struct pmt_unwinder *u, const char *cmd, struct pmt_error *e)
{
	sigset_t all, old;
	int err;

	if (!u->skel || !u->skel->rodata->pmt_unwind_dwarf || u->running)
		return 0;
	attach_tracking(u);
	preload(u);
	if (cmd)
		preload_command(u, cmd);
	/* signals stay with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&u->thread, NULL, loader, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		return pmt_error__runtime(e, -err, "cannot start the unwind table loader: %s",
					  strerror(err));
	}
	u->running = true;
	return 0;
}

void pmt_unwinder__stop(struct pmt_unwinder *u)
{
	if (!u->running)
		return;
	u->stop = true;
	pthread_join(u->thread, NULL);
	u->running = false;
}
