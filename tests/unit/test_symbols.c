// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* User symbols: one file's table (this test binary itself), and the
 * processes that map it as the kernel would report them (fork, exec,
 * mmap, exit), with pids no live process has. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <libelf.h>
#include "elf/elfsym.h"
#include "symbols/jitmap.h"
#include "symbols/procmaps.h"
#include "symbols/symbols.h"
#include "symbols/srcline.h"
#include "symbols/symfile.h"
#include "util/strutil.h"
#include "test.h"

/* one function under three names: perf (and we) show the global one */
__attribute__((noinline, used)) int pmt_symtest_fn(int x)
{
	return x * 3 + 1;
}
extern int pmt_symtest_weak(int) __attribute__((weak, alias("pmt_symtest_fn")));
extern int __pmt_symtest_global_u(int) __attribute__((alias("pmt_symtest_fn")));

/* a function inlined into another, the lines of both known */
static const int pmt_srctest_inl_line = __LINE__ + 3;
static inline __attribute__((always_inline)) int pmt_srctest_inl(volatile int *x)
{
	return *x * 7 + 2;
}

static const int pmt_srctest_call_line = __LINE__ + 3;
__attribute__((noinline, used)) int pmt_srctest_outer(volatile int *x)
{
	return pmt_srctest_inl(x) + 1;
}

#define FAKE_PID 0x7fff0000u /* above any pid_max */

struct exe_map {
	uint64_t start, end, pgoff, dev, ino;
	char path[256];
};

struct finding {
	uintptr_t addr;
	struct exe_map *m;
	int found;
};

static void holds_addr(void *ctx, const struct pmt_procmap *pm)
{
	struct finding *f = ctx;
	struct stat st;

	if (f->addr < pm->start || f->addr >= pm->end)
		return;
	f->m->start = pm->start;
	f->m->end = pm->end;
	f->m->pgoff = pm->pgoff;
	snprintf(f->m->path, sizeof(f->m->path), "%s", pm->path);
	f->found = stat(f->m->path, &st);
	f->m->dev = st.st_dev;
	f->m->ino = st.st_ino;
}

/* This binary's executable mapping holding addr. */
static int exe_map_of(uintptr_t addr, struct exe_map *m)
{
	struct finding f = {addr, m, -1};

	if (pmt_procmaps__each((uint32_t)getpid(), holds_addr, &f))
		return -1;
	return f.found;
}

TEST(symfile_names_as_perf)
{
	uintptr_t fn = (uintptr_t)&pmt_symtest_fn;
	struct pmt_symfile *f, *v;
	struct exe_map m;
	uint64_t delta = 99;
	const char *name;
	int fd;

	ASSERT_EQ(exe_map_of(fn, &m), 0);
	fd = open(m.path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	f = pmt_symfile__read(fd, NULL, NULL, true);
	close(fd);
	ASSERT_TRUE(f != NULL);
	/* sized, global (not weak), fewest underscores */
	name = pmt_symfile__name(f, fn - m.start + m.pgoff, &delta);
	ASSERT_TRUE(name != NULL);
	ASSERT_STREQ(name, "pmt_symtest_fn");
	ASSERT_EQ(delta, 0);
	name = pmt_symfile__name(f, fn - m.start + m.pgoff + 3, &delta);
	ASSERT_TRUE(name && !strcmp(name, "pmt_symtest_fn"));
	ASSERT_EQ(delta, 3);
	ASSERT_TRUE(pmt_symfile__name(f, 0, &delta) == NULL);
	ASSERT_EQ(strlen(pmt_symfile__build_id(f)), 40);
	pmt_symfile__free(f);
	/* not ELF */
	fd = open("/proc/self/status", O_RDONLY);
	ASSERT_TRUE(pmt_symfile__read(fd, NULL, NULL, true) == NULL);
	close(fd);
	/* the vDSO from our own image */
	v = pmt_symfile__vdso();
	ASSERT_TRUE(v != NULL);
	ASSERT_TRUE(pmt_symfile__bytes(v) > 0);
	pmt_symfile__free(v);
}

/* PLT stubs named as perf and objdump name them ("func@plt"): this test
 * program's own, against objdump -d (binutils, with the compiler). */
TEST(symfile_plt_as_objdump)
{
	char line[512], name[256], cmd[64];
	unsigned long long va;
	uint64_t off, delta;
	struct pmt_symfile *f;
	const char *got;
	int fd, n = 0;
	Elf *elf;
	FILE *p;

	fd = open("/proc/self/exe", O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	f = pmt_symfile__read(fd, NULL, NULL, true);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ASSERT_TRUE(f && elf);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec /proc/%d/exe", (int)getpid());
	p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL);
	while (fgets(line, sizeof(line), p)) {
		/* not the header entry ("first@plt-0x10") */
		if (sscanf(line, "%llx <%255[^>]>:", &va, name) != 2 || strlen(name) < 4 ||
		    strcmp(name + strlen(name) - 4, "@plt"))
			continue;
		ASSERT_EQ(pmt_elf__vaddr_to_off(elf, va, &off), 0);
		got = pmt_symfile__name(f, off + 4, &delta);
		if (!got || strcmp(got, name) || delta != 4)
			fprintf(stderr, "  %s at %llx: got %s\n", name, va, got ? got : "nothing");
		ASSERT_TRUE(got && !strcmp(got, name) && delta == 4);
		n++;
	}
	pclose(p);
	ASSERT_TRUE(n >= 10); /* libtraceevent, libelf, libc, ... */
	elf_end(elf);
	close(fd);
	pmt_symfile__free(f);
}

/* How many frames llvm-addr2line -f -i gives at off of path (the
 * oracle where the index and dwarf_getscopes differ), -1 unknown. */
static int oracle_frames(const char *path, uint64_t off)
{
	char cmd[512], line[4096];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "llvm-addr2line -f -i -e '%s' 0x%" PRIx64 " 2>/dev/null", path,
		 off);
	if (!(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p))
		n++;
	return pclose(p) ? -1 : n / 2; /* a name and a line each */
}

struct index_check {
	const char *path;
	int inlined, walk_wrong;
};

/* The frames of off by the CU index and by dwarf_getscopes: the same,
 * or where not, as many as llvm-addr2line's (gcc's C++ lambdas: libdw's
 * walk of the scopes stops at the lambda, under its class). */
static void same_frames(struct pmt_srcfile *a, struct pmt_srcfile *b, uint64_t off,
			struct index_check *c, int *failed)
{
	const struct pmt_srcframe *x, *y;
	int n = pmt_srcfile__frames(a, off, &x), m = pmt_srcfile__frames(b, off, &y), i, o;

	for (i = 0; n == m && i < n; i++)
		if ((x[i].name == NULL) != (y[i].name == NULL) ||
		    (x[i].name && strcmp(x[i].name, y[i].name)) || strcmp(x[i].file, y[i].file) ||
		    x[i].line != y[i].line)
			break;
	c->inlined += n > 1;
	if (n == m && i == n)
		return;
	o = oracle_frames(c->path, off);
	if (o != n)
		FAIL_AT("%s offset 0x%" PRIx64
			": %d frames (%s), dwarf_getscopes %d, llvm-addr2line %d",
			c->path, off, n, n && x[0].name ? x[0].name : "-", m, o);
	else
		c->walk_wrong++;
}

/* Every step-th offset of the executable mapping holding addr (offsets
 * are addresses in these files: llvm-addr2line takes them), a longer odd
 * step where that gives more than 1500 offsets (the ASan build is several
 * times the plain one's size, and libdw's walk costs the test its time). */
static void index_as_walk(uintptr_t addr, uint64_t step, struct index_check *c, int *failed)
{
	struct pmt_srcfile *a, *b;
	static struct exe_map m;
	uint64_t off;
	int fd;

	if (exe_map_of(addr, &m))
		return;
	if ((m.end - m.start) / step > 1500)
		step = (m.end - m.start) / 1500 | 1;
	c->path = m.path;
	fd = open(m.path, O_RDONLY);
	if (fd < 0)
		return;
	a = pmt_srcfile__open(fd, m.path, NULL, true, NULL);
	b = pmt_srcfile__open(fd, m.path, NULL, true, NULL);
	close(fd);
	if (a && b) {
		pmt_srcfile__no_index(b);
		for (off = m.pgoff; off < m.pgoff + (m.end - m.start) && !*failed; off += step)
			same_frames(a, b, off, c, failed);
	}
	pmt_srcfile__free(a);
	pmt_srcfile__free(b);
}

/* A CU's scopes indexed at its first address give the frames
 * dwarf_getscopes gives, for this binary and libc (its debug file,
 * where installed: Debian's is dwz-compressed, imported units), or those
 * llvm-addr2line gives where the walk is wrong. */
TEST(srcfile_index_as_getscopes)
{
	struct index_check c = {0};

	index_as_walk((uintptr_t)&pmt_srctest_outer, 61, &c, failed);
	ASSERT_TRUE(c.inlined > 0);
	memset(&c, 0, sizeof(c));
	/* libc's, or under ASan the interceptor's library */
	index_as_walk((uintptr_t)&strlen, 199, &c, failed);
	fprintf(stderr,
		"  %s: %d sampled offsets in inlined calls, %d where llvm-addr2line "
		"agrees with the index, not libdw's walk\n",
		c.path ? c.path : "libc", c.inlined, c.walk_wrong);
}

/* The DWARF begun again past its budget of line tables gives the answers
 * it gave before: this binary's own executable mapping, every 97th
 * offset (a 211th under ASan), by a file let hold one CU's lines at a
 * time and by one holding them all; then the first again, its answers
 * now kept or looked up anew. */
TEST(srcfile_line_budget_same_answers)
{
	static struct exe_map m;
	struct pmt_srcfile *a, *b;
	const struct pmt_srcframe *x, *y;
	uint64_t off, step;
	unsigned long restarts;
	int fd, n, k, i, pass, asked = 0;

	ASSERT_EQ(exe_map_of((uintptr_t)&pmt_srctest_outer, &m), 0);
	step = (m.end - m.start) / 97 > 1500 ? 211 : 97;
	fd = open(m.path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	a = pmt_srcfile__open(fd, m.path, NULL, true, NULL);
	b = pmt_srcfile__open(fd, m.path, NULL, true, NULL);
	close(fd);
	ASSERT_TRUE(a && b);
	pmt_srcfile__line_budget(a, 1);
	pmt_srcfile__line_budget(b, (size_t)-1);
	for (pass = 0; pass < 2 && !*failed; pass++)
		for (off = m.pgoff; off < m.pgoff + (m.end - m.start) && !*failed; off += step) {
			n = pmt_srcfile__frames(a, off, &x);
			k = pmt_srcfile__frames(b, off, &y);
			asked += n > 0;
			ASSERT_EQ(n, k);
			for (i = 0; i < n; i++) {
				ASSERT_TRUE((x[i].name == NULL) == (y[i].name == NULL));
				ASSERT_TRUE(!x[i].name || !strcmp(x[i].name, y[i].name));
				ASSERT_STREQ(x[i].file, y[i].file);
				ASSERT_EQ(x[i].line, y[i].line);
			}
		}
	restarts = pmt_srcfile__line_budget(a, 1);
	/* a restart at each CU after the first, many CUs here */
	ASSERT_TRUE(restarts >= 20);
	ASSERT_EQ(pmt_srcfile__line_budget(b, (size_t)-1), 0);
	ASSERT_TRUE(asked >= 100);
	pmt_srcfile__free(a);
	pmt_srcfile__free(b);
}

/* Inlined frames and lines from this binary's own DWARF (it is built
 * with -g): somewhere in pmt_srctest_outer the inlined function is
 * running, at its line, called from the outer one's line; the cache
 * keeps its size however many addresses are asked. gcc's build has
 * .debug_aranges; the ASan build is clang's, which has none: its CUs
 * are found by their own ranges. */
TEST(srcfile_inlined_frames_and_lines)
{
	uintptr_t fn = (uintptr_t)&pmt_srctest_outer;
	const struct pmt_srcframe *fr;
	struct pmt_srcfile *f;
	struct exe_map m;
	size_t bytes;
	int fd, n, found = 0;
	uint64_t off;

	ASSERT_EQ(exe_map_of(fn, &m), 0);
	fd = open(m.path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	f = pmt_srcfile__open(fd, NULL, NULL, true, NULL);
	close(fd);
	ASSERT_TRUE(f != NULL);
	bytes = pmt_srcfile__bytes(f);
	off = fn - m.start + m.pgoff;
	n = pmt_srcfile__frames(f, off, &fr);
	ASSERT_TRUE(n >= 1);
	ASSERT_TRUE(fr[n - 1].name == NULL && strstr(fr[n - 1].file, "tests/unit/test_symbols.c"));
	ASSERT_EQ(fr[n - 1].file[0], '/');
	for (; off < fn - m.start + m.pgoff + 64 && !found; off++) {
		n = pmt_srcfile__frames(f, off, &fr);
		if (n == 2 && fr[0].name && !strcmp(fr[0].name, "pmt_srctest_inl")) {
			ASSERT_EQ(fr[0].line, (uint32_t)pmt_srctest_inl_line);
			ASSERT_EQ(fr[1].line, (uint32_t)pmt_srctest_call_line);
			ASSERT_TRUE(strstr(fr[1].file, "test_symbols.c") != NULL);
			found = 1;
		}
	}
	ASSERT_TRUE(found);
	/* far more addresses than slots: the cache's bytes, and the
	 * indexes of the CUs met (their budget: 32768 scopes of 64 bytes) */
	for (off = 0; off < 4 * PMT_SRC_CACHE; off++)
		pmt_srcfile__frames(f, fn - m.start + m.pgoff + off, &fr);
	ASSERT_TRUE(pmt_srcfile__bytes(f) <= bytes + (32768u << 6));
	ASSERT_EQ(pmt_srcfile__frames(f, 0, &fr), 0);
	pmt_srcfile__free(f);
	/* not ELF: nothing */
	fd = open("/proc/self/status", O_RDONLY);
	ASSERT_TRUE(pmt_srcfile__open(fd, NULL, NULL, true, NULL) == NULL);
	close(fd);
}

/* The file offset of section name in the ELF file at fd, or 0. */
static uint64_t section_off(int fd, const char *name)
{
	Elf *e = elf_version(EV_CURRENT) != EV_NONE ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	GElf_Shdr sh;
	uint64_t off = e && pmt_elf__section(e, name, &sh) ? sh.sh_offset : 0;

	elf_end(e);
	return off;
}

/* libc's debug file (libc6-dbg) lists its CUs in .debug_aranges: an
 * address in none of them (a PLT entry) is in none, without a walk of
 * its 4,000 CUs (their ranges would grow the file's bytes by a table of
 * them); an address in a CU still has its line. */
TEST(srcfile_aranges_no_walk)
{
	const struct pmt_srcframe *fr;
	struct pmt_srcfile *f;
	struct exe_map m;
	uint64_t plt;
	size_t bytes;
	int fd;

	/* (getppid: not one of ASan's interceptors) */
	ASSERT_EQ(exe_map_of((uintptr_t)&getppid, &m), 0);
	ASSERT_TRUE(strstr(m.path, "libc.so") != NULL);
	fd = open(m.path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	plt = section_off(fd, ".plt");
	f = pmt_srcfile__open(fd, m.path, NULL, false, NULL);
	close(fd);
	ASSERT_TRUE(plt != 0);
	ASSERT_TRUE(f != NULL); /* libc6-dbg: make test-deps */
	ASSERT_TRUE(pmt_srcfile__frames(f, (uintptr_t)&getppid - m.start + m.pgoff, &fr) >= 1);
	ASSERT_TRUE(fr[0].line > 0);
	bytes = pmt_srcfile__bytes(f);
	ASSERT_EQ(pmt_srcfile__frames(f, plt + 16, &fr), 0);
	ASSERT_EQ(pmt_srcfile__bytes(f), bytes);
	pmt_srcfile__free(f);
}

static const char *name_of(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_buf *b)
{
	b->len = 0;
	pmt_syms__name(s, pid, addr, false, false, b);
	return pmt_buf__cstr(b);
}

TEST(syms_follow_processes)
{
	uintptr_t fn = (uintptr_t)&pmt_symtest_fn;
	struct pmt_syms *s = pmt_syms__new(true, true);
	struct pmt_syms_stats st;
	struct pmt_buf b = {0};
	struct pmt_module mod;
	struct exe_map m;
	struct pmt_mmap mm;
	uint32_t i;

	ASSERT_TRUE(s != NULL);
	ASSERT_EQ(exe_map_of(fn, &m), 0);
	mm = (struct pmt_mmap){FAKE_PID, m.start, m.end - m.start, m.pgoff, m.dev, m.ino, m.path};
	/* a process of which /proc knows nothing, told by its records */
	pmt_syms__exec(s, FAKE_PID, 0);
	ASSERT_STREQ(name_of(s, FAKE_PID, fn, &b), "[unknown]");
	pmt_syms__mmap(s, &mm);
	ASSERT_STREQ(name_of(s, FAKE_PID, fn, &b), "pmt_symtest_fn");
	ASSERT_TRUE(pmt_syms__module(s, FAKE_PID, fn, &mod));
	ASSERT_STREQ(mod.file, m.path);
	ASSERT_EQ(mod.pgoff, m.pgoff);
	ASSERT_EQ(strlen(mod.build_id), 40);
	/* its DWARF opened when a name first needs it, closed once idle (its
	 * path leads back to it) with the answers it gave kept: the same
	 * address named again without it, another opens it again */
	{
		const struct pmt_srcframe *fr;
		char file[256];
		uint32_t line;
		int n;

		pmt_syms__stats(s, &st);
		ASSERT_EQ(st.fds, 0);
		n = pmt_syms__srcframes(s, FAKE_PID, fn, &fr);
		ASSERT_TRUE(n >= 1);
		ASSERT_TRUE(fr[n - 1].line > 0);
		snprintf(file, sizeof(file), "%s", fr[n - 1].file);
		line = fr[n - 1].line;
		pmt_syms__stats(s, &st);
		ASSERT_EQ(st.fds, 1);
		ASSERT_EQ(pmt_syms__let_go(s, 3600ULL * 1000000000ULL), 0);
		ASSERT_EQ(pmt_syms__let_go(s, 0), 1);
		pmt_syms__stats(s, &st);
		ASSERT_EQ(st.fds, 0);
		ASSERT_EQ(pmt_syms__srcframes(s, FAKE_PID, fn, &fr), n);
		ASSERT_EQ(fr[n - 1].line, line);
		ASSERT_STREQ(fr[n - 1].file, file);
		pmt_syms__stats(s, &st);
		ASSERT_EQ(st.fds, 0);
		ASSERT_EQ(pmt_syms__let_go(s, 0), 0);
		ASSERT_TRUE(pmt_syms__srcframes(s, FAKE_PID, fn + 1, &fr) >= 1);
		pmt_syms__stats(s, &st);
		ASSERT_EQ(st.fds, 1);
		ASSERT_EQ(pmt_syms__let_go(s, 0), 1);
		pmt_syms__stats(s, &st);
		ASSERT_EQ(st.fds, 0);
	}
	/* a mapping made inside another takes only what it covers (as
	 * arm64's vDSO placed in the span ld.so's first mapping gave back):
	 * the text on either side stays named, at its own offsets */
	{
		struct pmt_mmap vdso = {FAKE_PID, 0, 0x1000, 0, 0, 0, "[vdso]"};
		uint64_t page = fn & ~0xfffULL;

		vdso.start = page > m.start ? page - 0x1000 : page + 0x1000;
		ASSERT_TRUE(vdso.start >= m.start && vdso.start + 0x1000 <= m.end);
		pmt_syms__mmap(s, &vdso);
		ASSERT_STREQ(name_of(s, FAKE_PID, fn, &b), "pmt_symtest_fn");
		/* the vDSO's page itself is the vDSO's now */
		ASSERT_TRUE(pmt_syms__module(s, FAKE_PID, vdso.start, &mod));
		ASSERT_STREQ(mod.file, "[vdso]");
		/* the text above it: the file offset past the hole */
		if (vdso.start < page) {
			ASSERT_TRUE(pmt_syms__module(s, FAKE_PID, page, &mod));
			ASSERT_EQ(mod.start, vdso.start + 0x1000);
			ASSERT_EQ(mod.pgoff, m.pgoff + (vdso.start + 0x1000 - m.start));
		}
		pmt_syms__mmap(s, &mm);
	}
	/* a child has its parent's mappings until it execs */
	pmt_syms__fork(s, FAKE_PID + 1, FAKE_PID);
	ASSERT_STREQ(name_of(s, FAKE_PID + 1, fn, &b), "pmt_symtest_fn");
	pmt_syms__exec(s, FAKE_PID + 1, 0);
	ASSERT_STREQ(name_of(s, FAKE_PID + 1, fn, &b), "[unknown]");
	/* exited: named until reaped past its exit */
	pmt_syms__exit(s, FAKE_PID, 1000);
	pmt_syms__reap(s, 1000);
	ASSERT_STREQ(name_of(s, FAKE_PID, fn, &b), "pmt_symtest_fn");
	pmt_syms__reap(s, 1001);
	ASSERT_STREQ(name_of(s, FAKE_PID, fn, &b), "[unknown]");
	/* (asked of /proc then, gone: among the exited until reaped) */
	ASSERT_TRUE(pmt_syms__exited(s, FAKE_PID));
	pmt_syms__reap(s, UINT64_MAX);
	/* too many exited before a print: the oldest are forgotten, counted */
	for (i = 0; i < 8193; i++) {
		mm.pid = FAKE_PID + 10 + i;
		pmt_syms__exec(s, mm.pid, 0);
		pmt_syms__mmap(s, &mm);
		pmt_syms__exit(s, mm.pid, 2000 + i);
	}
	ASSERT_EQ(pmt_syms__forgotten(s), 1);
	ASSERT_EQ(pmt_syms__forgotten(s), 0);
	ASSERT_STREQ(name_of(s, FAKE_PID + 10 + 8192, fn, &b), "pmt_symtest_fn");
	pmt_syms__stats(s, &st);
	ASSERT_EQ(st.exited, 8192);
	ASSERT_TRUE(st.files <= 2);
	pmt_syms__reap(s, UINT64_MAX);
	pmt_syms__stats(s, &st);
	ASSERT_EQ(st.exited, 0);
	ASSERT_EQ(st.fds, 0); /* read, so closed; its DWARF when a name needs it */
	pmt_buf__free(&b);
	pmt_syms__free(s);
}

/* As perf script prints them (perf 6.1, the same programs). */
/* A process /proc no longer has, met in a sample: read once, then among
 * the exited, reaped as they are (it stayed for good: a long run's
 * churn grew the table without bound); a Python frame's process is not
 * looked up at all. */
TEST(syms_gone_process_reaped)
{
	uintptr_t fn = (uintptr_t)&pmt_symtest_fn;
	struct pmt_syms *s = pmt_syms__new(true, true);
	struct pmt_syms_stats st;
	struct pmt_buf b = {0};
	struct pmt_module mod;

	ASSERT_TRUE(s != NULL);
	ASSERT_TRUE(!pmt_syms__module(s, FAKE_PID, PMT_PY_FRAME | 7, &mod));
	pmt_syms__stats(s, &st);
	ASSERT_EQ(st.procs, 0);
	ASSERT_STREQ(name_of(s, FAKE_PID, fn, &b), "[unknown]");
	ASSERT_TRUE(!pmt_syms__module(s, FAKE_PID, fn, &mod));
	pmt_syms__stats(s, &st);
	ASSERT_EQ(st.procs, 1);
	ASSERT_EQ(st.exited, 1);
	ASSERT_TRUE(pmt_syms__exited(s, FAKE_PID));
	/* its records, come late, make it anew */
	pmt_syms__fork(s, FAKE_PID, FAKE_PID - 1);
	ASSERT_TRUE(!pmt_syms__exited(s, FAKE_PID));
	pmt_syms__exit(s, FAKE_PID, 5);
	pmt_syms__reap(s, UINT64_MAX);
	pmt_syms__stats(s, &st);
	ASSERT_EQ(st.procs, 0);
	ASSERT_EQ(st.exited, 0);
	ASSERT_EQ(pmt_syms__forgotten(s), 0);
	pmt_buf__free(&b);
	pmt_syms__free(s);
}

TEST(symbols_demangled_as_perf)
{
	static const char *const cases[][2] = {
		{"_Z10heavy_lessii", "heavy_less"},
		{"_ZN6Sorter3runEd", "Sorter::run"},
		{"_ZNSt17_Function_handlerIFbiiEZN6Sorter3runEdEUliiE_E9_M_invokeERKSt9_Any_dataOiS7_",
		 "std::_Function_handler<bool (int, int), Sorter::run(double)::{lambda(int, "
		 "int)#1}>::_M_invoke"},
		{"_ZN7rsnames2rs6crunch17h9ff0eb0a8e9e7aafE", "rsnames::rs::crunch"},
		{"_RNvNtCs1YDQuSXGT83_7rsnames2rs6crunch", "rsnames::rs::crunch"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = pmt_symfile__demangle(cases[i][0]);

		ASSERT_TRUE(d != NULL);
		ASSERT_STREQ(d, cases[i][1]);
		free(d);
	}
	/* C names, PLT stubs and versioned names stay as they are */
	ASSERT_TRUE(pmt_symfile__demangle("main") == NULL);
	ASSERT_TRUE(pmt_symfile__demangle("_Znwm@plt") == NULL);
	ASSERT_TRUE(pmt_symfile__demangle("_start") == NULL);
}

/* A perf map (JIT code) as runtimes write it: both address spellings,
 * names with spaces, malformed lines skipped, lines appended later read
 * at a miss once PMT_JITMAP_RECHECK_NS has passed, a later line for the
 * same address winning. */
TEST(jitmap_read_as_it_grows)
{
	char path[] = "/tmp/pmt-jitmap-XXXXXX";
	int fd = mkstemp(path), rfd;
	uint64_t off = 0, t = 1000000000ULL;
	struct pmt_jitmap *j;
	const char *first = "0x1000 10 JS:*hot /t/a.js:2:1\n"
			    "2000 20 LazyCompile:~warm /t/a.js:9\n"
			    "zz 10 bad\n"
			    "3000 0 empty\n"
			    "4000 8 par";
	const char *more = "tial\n1000 10 JS:*hot2\n";

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, first, strlen(first)), (ssize_t)strlen(first));
	rfd = open(path, O_RDONLY);
	j = pmt_jitmap__from_fd(rfd);
	ASSERT_TRUE(j);
	ASSERT_STREQ(pmt_jitmap__name(j, 0x1004, &off, t), "JS:*hot /t/a.js:2:1");
	ASSERT_EQ(off, 4);
	ASSERT_STREQ(pmt_jitmap__name(j, 0x201f, &off, t), "LazyCompile:~warm /t/a.js:9");
	ASSERT_TRUE(!pmt_jitmap__name(j, 0x2020, &off, t)); /* past its end */
	ASSERT_TRUE(!pmt_jitmap__name(j, 0x3000, &off, t)); /* size 0 */
	ASSERT_EQ(pmt_jitmap__count(j), 2);
	ASSERT_EQ(pmt_jitmap__skipped(j), 2);
	/* the line being written is read when whole, after the recheck time */
	ASSERT_EQ(write(fd, more, strlen(more)), (ssize_t)strlen(more));
	ASSERT_TRUE(!pmt_jitmap__name(j, 0x4001, &off, t + 1));
	ASSERT_STREQ(pmt_jitmap__name(j, 0x4001, &off, t + PMT_JITMAP_RECHECK_NS), "partial");
	ASSERT_STREQ(pmt_jitmap__name(j, 0x1004, &off, t + PMT_JITMAP_RECHECK_NS), "JS:*hot2");
	pmt_jitmap__free(j);
	close(fd);
	unlink(path);
}

/* A process whose JIT code the kernel met after an exec, its perf map
 * opened then, keeps that map when the exec's record is applied later
 * (records wait for the samples' time; the poll does not): names come
 * from it after the file is gone (a container's root gone with it). An
 * exec after the map was opened forgets it: the new program writes its
 * own. */
TEST(syms_jit_map_kept_past_earlier_exec)
{
	struct pmt_syms *s = pmt_syms__new(true, true);
	uint32_t pid = (uint32_t)getpid();
	const char *line = "10000 100 JS:*late /t/x.js:1\n";
	struct pmt_buf b = {0};
	char path[64];
	uint64_t t0;
	int fd;

	ASSERT_TRUE(s != NULL);
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	t0 = pmt_now_ns();
	pmt_syms__jit_seen(s, pid);
	unlink(path);
	pmt_syms__exec(s, pid, t0 - 1);
	ASSERT_STREQ(name_of(s, pid, 0x10010, &b), "JS:*late /t/x.js:1");
	pmt_syms__exec(s, pid, pmt_now_ns());
	ASSERT_STREQ(name_of(s, pid, 0x10010, &b), "[unknown]");
	pmt_buf__free(&b);
	pmt_syms__free(s);
}

/* The container id and systemd unit a cgroup path names: as the OTel
 * collector's enrichment and systemd's cg_path_get_unit take them. */
static void cg_parts(const char *path, char *unit, char *container)
{
	size_t n;
	const char *p = pmt_cgroup__unit(path, &n);

	snprintf(unit, 256, "%.*s", (int)n, p);
	p = pmt_cgroup__container(path, &n);
	snprintf(container, 256, "%.*s", (int)n, p ? p : "");
}

TEST(cgroup_paths_name_units_and_containers)
{
	static const char hex[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	static const struct {
		const char *path, *unit;
		bool container;
	} cases[] = {
		{"/system.slice/nginx.service", "nginx.service", false},
		{"/", "-.slice", false},
		{"/system.slice", "system.slice", false},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/x.service",
		 "user@1000.service", false},
		{"/user.slice/user-0.slice/session-4.scope", "session-4.scope", false},
		{"/kubepods.slice/kubepods-pod1a2b.slice/cri-containerd-%s.scope",
		 "cri-containerd-%s.scope", true},
		{"/system.slice/docker-%s.scope", "docker-%s.scope", true},
		{"/machine.slice/libpod-%s.scope/container", "libpod-%s.scope", true},
		{"/kubepods.slice/kubepods-burstable.slice/crio-%s.scope", "crio-%s.scope", true},
		{"/kubepods/besteffort/pod1/%s", "-.slice", true},
		{"/docker/%s", "-.slice", true},
		{"/system.slice/crio-conmon-%s.scope", "crio-conmon-%s.scope", false},
		{"/system.slice/docker-%.63s.scope", "docker-%.63s.scope", false},
	};
	char path[512], unit[256], want[256], container[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), cases[i].path, hex);
		snprintf(want, sizeof(want), cases[i].unit, hex);
		cg_parts(path, unit, container);
		ASSERT_STREQ(unit, want);
		ASSERT_STREQ(container, cases[i].container ? hex : "");
	}
}

/* A frame's offset as bpftrace prints it in a stack: decimal, +0 when the
 * name has none; the length given, not the string's end, bounds it. */
TEST(offset_decimal_as_bpftrace)
{
	struct pmt_buf b = {0};

	pmt_syms__offset_decimal("do_nanosleep+0x5e", 17, &b);
	ASSERT_STREQ(pmt_buf__cstr(&b), "do_nanosleep+94");
	b.len = 0;
	pmt_syms__offset_decimal("schedule", 8, &b);
	ASSERT_STREQ(pmt_buf__cstr(&b), "schedule+0");
	b.len = 0;
	pmt_syms__offset_decimal("libc.so.6+0x2724a and more", 17, &b);
	ASSERT_STREQ(pmt_buf__cstr(&b), "libc.so.6+160330");
	pmt_buf__free(&b);
}

/* /proc/PID/maps lines as the kernel writes them, by hand-written parser:
 * executable ones kept, others and malformed ones not. */
TEST(procmaps_lines_parsed)
{
	char exe[] = "7f1c2a400000-7f1c2a5d5000 r-xp 00028000 fe:01 1835118                    "
		     "/usr/lib/x86_64-linux-gnu/libc.so.6\n";
	char vdso[] = "7ffd5b9e3000-7ffd5b9e5000 r-xp 00000000 00:00 0                          "
		      "[vdso]\n";
	char anon[] = "7f1c2a600000-7f1c2a700000 r-xp 00000000 00:00 0 \n";
	char data[] = "55d0c8e1f000-55d0c8e21000 rw-p 00003000 fe:01 1835001 /usr/bin/ls\n";
	char bad[] = "7f1c2a400000 r-xp 00028000 fe:01 1835118 /usr/lib/x\n";
	char odd[] = "10-20 r-xp 0 103:0a 42 /a path with spaces (deleted)\n";
	struct pmt_procmap m;

	ASSERT_TRUE(pmt_procmaps__line(exe, &m));
	ASSERT_EQ(m.start, 0x7f1c2a400000ULL);
	ASSERT_EQ(m.end, 0x7f1c2a5d5000ULL);
	ASSERT_EQ(m.pgoff, 0x28000);
	ASSERT_EQ(m.maj, 0xfe);
	ASSERT_EQ(m.min, 1);
	ASSERT_EQ(m.ino, 1835118);
	ASSERT_STREQ(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ASSERT_TRUE(pmt_procmaps__line(vdso, &m));
	ASSERT_STREQ(m.path, "[vdso]");
	ASSERT_EQ(m.ino, 0);
	ASSERT_TRUE(pmt_procmaps__line(anon, &m));
	ASSERT_STREQ(m.path, "");
	ASSERT_TRUE(!pmt_procmaps__line(data, &m));
	ASSERT_TRUE(!pmt_procmaps__line(bad, &m));
	ASSERT_TRUE(pmt_procmaps__line(odd, &m));
	ASSERT_EQ(m.maj, 0x103);
	ASSERT_EQ(m.min, 0xa);
	ASSERT_STREQ(m.path, "/a path with spaces (deleted)");
}

int pmt_symtest_data[64] = {1}; /* in this binary's initialized data */
extern char __executable_start;

/* PROCMAP_QUERY (6.11) against this process's own maps, opened once:
 * the data mapping holding an initialized global (not executable: the
 * full read lists it not), as this binary's file, its link-time address
 * found from it; a heap address as anonymous (no file, no path); an
 * address in no mapping says -ENOENT; a child's maps, once it has
 * exited, say -ESRCH (its address space is gone). */
TEST(procmaps_query_data_mapping)
{
	uint64_t addrs[2] = {(uintptr_t)&pmt_symtest_data[0], (uintptr_t)&pmt_symtest_data[63]};
	struct pmt_procmap q[2];
	struct pmt_elf_loads loads;
	char path[4096], exe[4096];
	uint64_t vaddr;
	struct stat st;
	ssize_t n;
	void *heap;
	int err, fd, maps;
	pid_t child;

	maps = pmt_procmaps__open((uint32_t)getpid());
	ASSERT_TRUE(maps >= 0);
	err = pmt_procmaps__query(maps, addrs[0], &q[0], path, sizeof(path));
	if (err == -ENOTTY) {
		close(maps);
		printf("    skipped: this kernel has no PROCMAP_QUERY (Linux 6.11)\n");
		return;
	}
	ASSERT_EQ(err, 0);
	ASSERT_TRUE((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0);
	exe[n] = '\0';
	ASSERT_STREQ(q[0].path, exe);
	ASSERT_EQ(pmt_procmaps__query(maps, addrs[1], &q[1], path, sizeof(path)), 0);
	ASSERT_TRUE(!stat(exe, &st));
	ASSERT_EQ(q[0].ino, st.st_ino);
	ASSERT_EQ(makedev(q[0].maj, q[0].min), st.st_dev);
	ASSERT_TRUE(q[0].start <= addrs[0] && addrs[0] < q[0].end);
	ASSERT_EQ(q[1].ino, q[0].ino);
	ASSERT_TRUE((fd = open(exe, O_RDONLY | O_CLOEXEC)) >= 0);
	err = pmt_elf__loads(fd, &loads);
	close(fd);
	ASSERT_EQ(err, 0);
	ASSERT_TRUE(pmt_elf__vaddr_in_file(&loads, q[0].start, q[0].pgoff, addrs[0], &vaddr));
	ASSERT_EQ(vaddr, addrs[0] - (uintptr_t)&__executable_start);
	heap = malloc(1 << 20); /* mmap'd: anonymous */
	err = pmt_procmaps__query(maps, (uintptr_t)heap, &q[0], path, sizeof(path));
	ASSERT_EQ(err, 0);
	ASSERT_EQ(q[0].ino, 0);
	ASSERT_STREQ(q[0].path, "");
	ASSERT_TRUE(q[0].start <= (uintptr_t)heap && (uintptr_t)heap < q[0].end);
	free(heap);
	ASSERT_EQ(pmt_procmaps__query(maps, 0x1000, &q[0], path, sizeof(path)), -ENOENT);
	close(maps);
	if ((child = fork()) == 0) {
		pause();
		_exit(0);
	}
	ASSERT_TRUE(child > 0);
	maps = pmt_procmaps__open((uint32_t)child);
	ASSERT_TRUE(maps >= 0);
	ASSERT_EQ(pmt_procmaps__query(maps, addrs[0], &q[0], path, sizeof(path)), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ASSERT_EQ(pmt_procmaps__query(maps, addrs[0], &q[0], path, sizeof(path)), -ESRCH);
	close(maps);
}
