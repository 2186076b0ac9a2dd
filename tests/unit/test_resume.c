// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A user stack finished from a copy of it (unwind/resume.h), checked on
 * this test's own stack: the registers and the stack taken in a function
 * three calls deep, the walk by the CFI of this binary and libc must give
 * each caller's call site (the return addresses the functions saw), and
 * reach the outermost frame. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/procmaps.h"
#include "unwind/cfi.h"
#include "unwind/resume.h"
#include "test.h"

#define COPY_MAX (256 * 1024)
#define MAPS_MAX 64

struct text {
	uint64_t start, end, pgoff;
	char path[256];
	struct pmt_cfi cfi;
	bool read;
};

static struct text maps[MAPS_MAX];
static size_t nmaps;
static uint64_t stack_end;

static void note_map(void *ctx, const struct pmt_procmap *m)
{
	(void)ctx;
	if (!m->ino || nmaps == MAPS_MAX)
		return;
	maps[nmaps] = (struct text){m->start, m->end, m->pgoff, "", {0}, false};
	snprintf(maps[nmaps].path, sizeof(maps[nmaps].path), "%s", m->path);
	nmaps++;
}

/* The executable mappings (pmt_procmaps__each lists no others), and the
 * stack's end from /proc/self/maps itself. */
static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;

	nmaps = 0;
	pmt_procmaps__each((uint32_t)getpid(), note_map, NULL);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			stack_end = hi;
	if (f)
		fclose(f);
}

/* ctx: return addresses whose frames stand for an interpreter's eval
 * loop (their Python frames first), 0-ended */
static int row_of(void *ctx, uint64_t pc, unsigned back, struct pmt_cfi_row *row, bool *eval)
{
	const uint64_t *evals = ctx;
	const struct pmt_cfi_row *r;
	struct pmt_error e = {0};
	size_t i;
	int fd;

	for (; evals && *evals; evals++)
		if (pc == *evals)
			*eval = true;
	for (i = 0; i < nmaps && !(pc >= maps[i].start && pc < maps[i].end); i++)
		;
	if (i == nmaps)
		return -1;
	if (!maps[i].read) {
		maps[i].read = true;
		fd = open(maps[i].path, O_RDONLY);
		if (fd >= 0) {
			pmt_cfi__read(fd, &maps[i].cfi, &e);
			close(fd);
		}
	}
	r = pmt_cfi__find(&maps[i].cfi, (uint32_t)(pc - maps[i].start + maps[i].pgoff - back));
	if (!r)
		return 0;
	*row = *r;
	return 1;
}

/* the return addresses each level saw, innermost first */
static uint64_t ras[4];
static struct pmt_ustack_dump *dump;
static unsigned char *copy;

/* Not instrumented: the copy reads other frames' redzones under ASan. */
__attribute__((no_sanitize_address, noinline)) static void copy_stack(unsigned char *to,
								      uint64_t from, size_t n)
{
	const volatile unsigned char *p = (const volatile unsigned char *)from;
	size_t i;

	for (i = 0; i < n; i++)
		to[i] = p[i];
}

__attribute__((noinline)) static void capture(void)
{
	uint64_t pc, sp, fp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(fp));
	ras[0] = (uint64_t)__builtin_return_address(0);
	dump->pc = pc;
	dump->sp = sp;
	dump->fp = fp;
	dump->caller = 0;
	dump->size = (uint32_t)(stack_end - sp < COPY_MAX ? stack_end - sp : COPY_MAX);
	/* below sp only is written from here on: the copy is of the stack
	 * as it stood at the asm */
	copy_stack(copy, sp, dump->size);
}

#define LEVEL(name, callee, slot)                                     \
	__attribute__((noinline)) static int name(int x)              \
	{                                                             \
		ras[slot] = (uint64_t)__builtin_return_address(0);    \
		callee;                                               \
		__asm__ volatile("" ::: "memory"); /* no tail call */ \
		return x + 1;                                         \
	}
LEVEL(level3, capture(), 1)
LEVEL(level2, level3(x), 2)
LEVEL(level1, level2(x), 3)

TEST(resume_own_stack)
{
	/* the stack above capture deeper than a dump's copy */
	volatile unsigned char pad[2 * PMT_DUMP_BYTES];
	uint64_t out[128];
	struct pmt_resume r;
	uint32_t size;
	size_t i;

	read_maps();
	ASSERT_TRUE(stack_end != 0);
	dump = calloc(1, sizeof(*dump));
	copy = malloc(COPY_MAX);
	ASSERT_TRUE(dump && copy);
	pad[0] = pad[sizeof(pad) - 1] = 1;
	level1(1);
	r = pmt_resume(dump, copy, NULL, row_of, NULL, out, 128);
	/* capture's own pc, then each caller at its call instruction */
	ASSERT_TRUE(r.n >= 6);
	ASSERT_EQ(out[0], dump->pc);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(out[i + 1], ras[i] - 1);
	/* through this test's callers, main and libc to the outermost */
	ASSERT_EQ(r.end, PMT_RESUME_WHOLE);
	/* a full copy (the stack deeper than it: pad) stops the walk,
	 * said so */
	size = dump->size;
	ASSERT_TRUE(size > PMT_DUMP_BYTES);
	dump->size = PMT_DUMP_BYTES;
	r = pmt_resume(dump, copy, NULL, row_of, NULL, out, 128);
	ASSERT_TRUE(r.end == PMT_RESUME_BEYOND && r.n >= 1);
	/* a copy shorter than a dump's room is all the kernel could read
	 * there: a read past it is a read the kernel's walk failed */
	dump->size = 16;
	r = pmt_resume(dump, copy, NULL, row_of, NULL, out, 128);
	ASSERT_TRUE(r.end == PMT_RESUME_UNREAD && r.n >= 1);
	/* a stack with more frames than it may keep: cut there, said so */
	dump->size = size;
	r = pmt_resume(dump, copy, NULL, row_of, NULL, out, 3);
	ASSERT_EQ(r.n, 3);
	ASSERT_EQ(r.end, PMT_RESUME_DEPTH);
	for (i = 0; i < nmaps; i++)
		pmt_cfi__free(&maps[i].cfi);
	free(dump);
	free(copy);
}

/* Python frames the kernel read at the event go before the eval loop
 * frames among those finished, each call's up to its entry frame, as the
 * kernel's walk puts them: here level2's and the test's frames stand for
 * eval loop calls, the first running two Python frames, the second one;
 * a fourth frame no eval frame is left for stays out. */
TEST(resume_python_frames)
{
	const uint64_t a = PMT_PY_FRAME | 11, b = PMT_PY_FRAME | 12, c = PMT_PY_FRAME | 13;
	uint64_t out[128], py[4] = {a, b | PMT_PY_ENTRY, c | PMT_PY_ENTRY, PMT_PY_FRAME | 14};
	uint64_t evals[3];
	struct pmt_resume r;
	size_t i;

	read_maps();
	dump = calloc(1, sizeof(*dump));
	copy = malloc(COPY_MAX);
	ASSERT_TRUE(dump && copy);
	level1(1);
	evals[0] = ras[1];
	evals[1] = ras[3];
	evals[2] = 0;
	dump->npy = 4;
	r = pmt_resume(dump, copy, py, row_of, evals, out, 128);
	ASSERT_TRUE(r.end == PMT_RESUME_WHOLE && r.n >= 9);
	ASSERT_EQ(out[0], dump->pc);
	ASSERT_EQ(out[1], ras[0] - 1);
	ASSERT_EQ(out[2], a);
	ASSERT_EQ(out[3], b);
	ASSERT_EQ(out[4], ras[1] - 1);
	ASSERT_EQ(out[5], ras[2] - 1);
	ASSERT_EQ(out[6], c);
	ASSERT_EQ(out[7], ras[3] - 1);
	for (i = 8; i < r.n; i++)
		ASSERT_TRUE(!(out[i] & PMT_PY_FRAME));
	/* the frames' room taken by Python frames as by native ones */
	r = pmt_resume(dump, copy, py, row_of, evals, out, 3);
	ASSERT_EQ(r.n, 3);
	ASSERT_EQ(out[2], a);
	for (i = 0; i < nmaps; i++)
		pmt_cfi__free(&maps[i].cfi);
	free(dump);
	free(copy);
}
