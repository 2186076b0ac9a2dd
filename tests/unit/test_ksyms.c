// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/kallsyms' text symbols in their compact table (symbols/ksyms.h):
 * every address finds the symbol a sorted list of whole addresses finds,
 * across runs of high bits (x86-64's top 2 GB, arm64's kernel and its
 * modules), with lines out of order and data symbols skipped. */
#include <stdlib.h>
#include <string.h>
#include "symbols/ksyms.h"
#include "test.h"

static const char kallsyms[] = "ffffffff80fffff0 t __pfx__stext\n"
			       "ffffffff81000000 T _stext\n"
			       "ffffffff810000f0 t __pfx_helper\n"
			       "ffffffff81000100 t helper\n"
			       "ffffffff82000000 D some_data\n"
			       "ffffffffc0001000 t mod_fn\t[mod]\n"
			       "ffffffff81000200 W weak_fn\n"
			       "ffff800080010000 T arm_text\n"
			       "ffff800000400000 t arm_mod\t[m2]\n"
			       "ffffffff810002f8 T __pfx_lone\n"
			       "ffffffff81000300 T last_core\n"
			       "ffffffffc0000000 t bpf_prog_x\t[bpf]\n"
			       "garbage line\n";

/* the reference: the last of the text symbols at or below addr */
static const char *slow_find(uint64_t addr, uint64_t *start)
{
	static const struct {
		uint64_t a;
		const char *n;
	} v[] = {{0xffff800000400000ull, "arm_mod"},	  {0xffff800080010000ull, "arm_text"},
		 {0xffffffff80fffff0ull, "__pfx__stext"}, {0xffffffff81000000ull, "_stext"},
		 {0xffffffff810000f0ull, "__pfx_helper"}, {0xffffffff81000100ull, "helper"},
		 {0xffffffff81000200ull, "weak_fn"},	  {0xffffffff810002f8ull, "__pfx_lone"},
		 {0xffffffff81000300ull, "last_core"},	  {0xffffffffc0000000ull, "bpf_prog_x"},
		 {0xffffffffc0001000ull, "mod_fn"}};
	const char *name = NULL;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]) && v[i].a <= addr; i++) {
		name = v[i].n;
		*start = v[i].a;
	}
	return name;
}

TEST(ksyms_compact_as_sorted)
{
	static const uint64_t probes[] = {0,
					  0xffff8000003fffffull,
					  0xffff800000400000ull,
					  0xffff80007fffffffull,
					  0xffff800080010000ull,
					  0xffff8000ffffffffull,
					  0xffff800100000000ull,
					  0xfffffffe00000000ull,
					  0xffffffff80ffffefull,
					  0xffffffff80fffff0ull,
					  0xffffffff80ffffffull,
					  0xffffffff81000000ull,
					  0xffffffff810000efull,
					  0xffffffff810000f0ull,
					  0xffffffff810000ffull,
					  0xffffffff81000250ull,
					  0xffffffff810002f8ull,
					  0xffffffff82000010ull,
					  0xffffffffc0000000ull,
					  0xffffffffc0000fffull,
					  0xffffffffc0001000ull,
					  0xffffffffffffffffull};
	FILE *f = fmemopen((void *)kallsyms, sizeof(kallsyms) - 1, "r");
	struct pmt_ksyms k = {0};
	struct pmt_ksym_found got;
	const char *want;
	char name[300];
	uint64_t wstart = 0;
	size_t i;
	int r;

	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(pmt_ksyms__read(&k, f), 0);
	fclose(f);
	/* the two functions with their __pfx_ symbols 16 bytes before
	 * them, one each; __pfx_lone at another distance stays a symbol */
	ASSERT_EQ(k.n, 9);
	ASSERT_EQ(k.pfx, 16);
	ASSERT_TRUE(!k.hidden);
	ASSERT_TRUE(memmem(k.names, k.names_len, "pfx_h", 5) == NULL);
	/* 8 bytes a symbol beside the names and three runs */
	ASSERT_TRUE(pmt_ksyms__bytes(&k) <= 9 * 8 + 3 * 8 + k.names_len);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		want = slow_find(probes[i], &wstart);
		r = pmt_ksyms__find(&k, probes[i], &got);
		if (r)
			snprintf(name, sizeof(name), "%s%s", got.prefix, got.name);
		if (r != (want != NULL) || (want && (strcmp(name, want) || got.start != wstart)))
			FAIL_AT("0x%llx: %s at 0x%llx, not %s at 0x%llx",
				(unsigned long long)probes[i], r ? name : "none",
				r ? (unsigned long long)got.start : 0ull, want ? want : "none",
				(unsigned long long)wstart);
	}
	pmt_ksyms__free(&k);
	/* every address 0: hidden from this user */
	f = fmemopen((void *)"0000000000000000 T _stext\n0000000000000000 t x\n", 46, "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(pmt_ksyms__read(&k, f), 0);
	fclose(f);
	ASSERT_EQ(k.n, 0);
	ASSERT_TRUE(k.hidden);
	ASSERT_TRUE(!pmt_ksyms__find(&k, 0xffffffff81000000ull, &got));
	pmt_ksyms__free(&k);
}

/* This kernel's table: each symbol finds itself; the bytes as said */
TEST(ksyms_of_this_kernel)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	struct pmt_ksyms k = {0};
	char line[512], type, sym[256], name[300];
	unsigned long long addr;
	struct pmt_ksym_found got;
	size_t seen = 0, bad = 0, pfx = 0, named = 0;

	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(pmt_ksyms__read(&k, f), 0);
	rewind(f);
	/* (unprivileged: every address 0, nothing to find) */
	while (!k.hidden && fgets(line, sizeof(line), f) && seen < 20000)
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && addr &&
		    (type == 't' || type == 'T')) {
			seen++;
			/* (an alias at the same address may be found instead) */
			if (!pmt_ksyms__find(&k, addr, &got) || got.start != addr) {
				if (bad++ < 3)
					FAIL_AT("%s at 0x%llx: %s", sym, addr,
						pmt_ksyms__find(&k, addr, &got) ? got.name
										: "none");
				continue;
			}
			snprintf(name, sizeof(name), "%s%s", got.prefix, got.name);
			/* a __pfx_ symbol by its name (but where another
			 * shares its address: a marker, a folded twin) */
			if (!strncmp(sym, "__pfx_", 6)) {
				pfx++;
				named += !strcmp(name, sym);
			}
		}
	fclose(f);
	if (bad)
		FAIL_AT("%zu of %zu symbols not found as themselves", bad, seen);
	/* (folded where the kernel has them) */
	ASSERT_TRUE(!pfx || k.pfx);
	if (named * 100 < pfx * 99)
		FAIL_AT("%zu of %zu __pfx_ symbols named as themselves", named, pfx);
	ASSERT_EQ(pmt_ksyms__bytes(&k), k.n * 8 + k.nruns * 8 + k.names_len);
	pmt_ksyms__free(&k);
}
