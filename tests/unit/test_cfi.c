// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unwind rows from CFI, checked on this test binary itself: at a
 * function's first instruction the caller's frame is at rsp + 8. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/error.h"
#include "unwind/cfi.h"
#include "elf/elfsym.h"
#include "test.h"

/* a fresh error value for each call (the first error set wins) */
#define TERR(e) (pmt_error__clear(&(e)), &(e))

TEST(cfi_rows_of_self)
{
	struct pmt_elf_syms syms;
	const struct pmt_elf_sym *s;
	const struct pmt_cfi_row *r;
	struct pmt_cfi cfi;
	struct pmt_error terr = {0};
	char path[256];
	size_t i, sp = 0;
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	ASSERT_TRUE(n > 0);
	path[n] = '\0';
	fd = open(path, O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pmt_cfi__read(fd, &cfi, TERR(terr)), 0);
	close(fd);
	ASSERT_TRUE(cfi.n > 100);
	for (i = 1; i < cfi.n; i++) {
		ASSERT_TRUE(cfi.rows[i - 1].pc < cfi.rows[i].pc);
		sp += cfi.rows[i].cfa == PMT_CFA_SP;
	}
	ASSERT_TRUE(sp > cfi.n / 2);
	/* a function's entry: return address on top of the stack */
	ASSERT_EQ(pmt_elf__funcs(path, &syms, TERR(terr)), 0);
	s = pmt_elf__find(&syms, "pmt_cfi__find");
	ASSERT_TRUE(s != NULL);
	r = pmt_cfi__find(&cfi, (uint32_t)s->off);
	ASSERT_TRUE(r != NULL);
	ASSERT_EQ(r->cfa, PMT_CFA_SP);
	ASSERT_EQ(r->cfa_off, 8);
	ASSERT_EQ(r->fp, PMT_FP_SAME);
	/* _start's return address is undefined: the outermost frame */
	s = pmt_elf__find(&syms, "_start");
	if (s) {
		r = pmt_cfi__find(&cfi, (uint32_t)s->off + 1);
		ASSERT_TRUE(r != NULL);
		ASSERT_EQ(r->cfa, PMT_CFA_END);
	}
	ASSERT_TRUE(pmt_cfi__find(&cfi, 0) == NULL || pmt_cfi__find(&cfi, 0)->pc == 0);
	pmt_elf__free(&syms);
	pmt_cfi__free(&cfi);
	/* not an ELF file */
	fd = open("/proc/self/status", O_RDONLY);
	ASSERT_TRUE(pmt_cfi__read(fd, &cfi, TERR(terr)) < 0);
	close(fd);
}

/* path's rows by this reader and by libdw alone: 1 equal, 0 the file is
 * not here, -1 they differ. */
static int same_rows(const char *path)
{
	struct pmt_cfi fast, slow;
	struct pmt_error e = {0};
	int fd = open(path, O_RDONLY), same;

	if (fd < 0)
		return 0;
	if (pmt_cfi__read_with(fd, &fast, false, TERR(e)) ||
	    pmt_cfi__read_with(fd, &slow, true, TERR(e))) {
		close(fd);
		fprintf(stderr, "    %s: %s\n", path, e.msg);
		return -1;
	}
	close(fd);
	same = fast.n == slow.n && fast.unsupported == slow.unsupported &&
	       !memcmp(fast.rows, slow.rows, fast.n * sizeof(*fast.rows));
	if (!same)
		fprintf(stderr, "    %s: %zu rows (%zu unsupported), libdw %zu (%zu)\n", path,
			fast.n, fast.unsupported, slow.n, slow.unsupported);
	pmt_cfi__free(&fast);
	pmt_cfi__free(&slow);
	return same ? 1 : -1;
}

/* One pass over each FDE's program gives libdw's rows, row for row: on
 * libc, the loader, this binary, Python, gcc's cc1 (some 480,000 rows)
 * and a static program without .eh_frame_hdr, where present. */
TEST(cfi_one_pass_equals_libdw)
{
	static const char *const files[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
		"/proc/self/exe",
		"/usr/bin/python3.11",
		"/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
		".output/testprogs/static_nofp",
		/* arm64's (make deps ARCH=arm64), read by their ELF machine */
		"/usr/lib/aarch64-linux-gnu/libc.so.6",
		"/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
		".output/arm64/pmtrace",
	};
	size_t i, seen = 0;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int r = same_rows(files[i]);

		ASSERT_TRUE(r >= 0);
		seen += r;
	}
	ASSERT_TRUE(seen >= 3);
}

/* The loader's lazy binding trampolines (_dl_runtime_resolve_*) align the
 * stack and find their caller from rbx: rows of rule PMT_CFA_BX, after a
 * row that says where the caller's rbx is saved. */
TEST(cfi_rbx_rows_of_the_loader)
{
	struct pmt_error e = {0};
	struct pmt_cfi cfi;
	size_t i, bx = 0, saved = 0;
	int fd = open("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", O_RDONLY);

	if (fd < 0)
		return; /* not a Debian x86-64 machine */
	ASSERT_EQ(pmt_cfi__read(fd, &cfi, TERR(e)), 0);
	close(fd);
	for (i = 1; i < cfi.n; i++) {
		if (cfi.rows[i].cfa != PMT_CFA_BX)
			continue;
		bx++;
		ASSERT_TRUE(cfi.rows[i].cfa_off > 0);
		saved += cfi.rows[i - 1].bx == PMT_FP_SAVED && cfi.rows[i - 1].bx_off < 0;
	}
	ASSERT_TRUE(bx >= 3);
	ASSERT_TRUE(saved >= 3);
	pmt_cfi__free(&cfi);
}

/* arm64's rows (libc of the arm64 multiarch packages, make deps
 * ARCH=arm64): a function's entry returns through x30 (bx PMT_FP_SAME),
 * its body finds the return address saved (bx_off) next to x29 (fp_off,
 * 8 below it: stp x29, x30); _start's return address is undefined. */
TEST(cfi_arm64_link_register_rows)
{
	const char *path = "/usr/lib/aarch64-linux-gnu/libc.so.6";
	size_t i, in_lr = 0, saved = 0, paired = 0, end = 0;
	struct pmt_error e = {0};
	struct pmt_cfi cfi;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		printf("    skipped: no %s (make deps ARCH=arm64 installs it)\n", path);
		return;
	}
	ASSERT_EQ(pmt_cfi__read(fd, &cfi, TERR(e)), 0);
	close(fd);
	for (i = 0; i < cfi.n; i++) {
		const struct pmt_cfi_row *r = &cfi.rows[i];

		ASSERT_TRUE(r->cfa != PMT_CFA_BX && r->cfa != PMT_CFA_PLT);
		end += r->cfa == PMT_CFA_END;
		if (r->cfa != PMT_CFA_SP && r->cfa != PMT_CFA_FP)
			continue;
		in_lr += r->bx == PMT_FP_SAME && r->cfa == PMT_CFA_SP && r->cfa_off == 0;
		saved += r->bx == PMT_FP_SAVED;
		paired += r->bx == PMT_FP_SAVED && r->fp == PMT_FP_SAVED &&
			  r->bx_off == r->fp_off + 8;
	}
	printf("    %s: %zu rows: %zu in x30 at sp, %zu saved (%zu beside x29), %zu ends\n", path,
	       cfi.n, in_lr, saved, paired, end);
	ASSERT_TRUE(in_lr > 1000);
	ASSERT_TRUE(saved > 1000);
	ASSERT_TRUE(paired * 10 > saved * 9);
	pmt_cfi__free(&cfi);
}
