// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython frames: the 3.11 layout against the interpreter's headers, the
 * line table as CPython reads it, and interpreter files told apart. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "python/codes.h"
#include "python/cpython.h"
#include "py311_headers.h"
#include "test.h"

TEST(python_layout_is_the_headers)
{
	struct pmt_py_layout want;
	const struct pmt_py_layout *got = pmt_py__layout311();

	pmt_py311_from_headers(&want);
	ASSERT_EQ(got->k.rt_tstate, want.k.rt_tstate);
	ASSERT_EQ(got->k.rt_interp, want.k.rt_interp);
	ASSERT_EQ(got->k.is_threads, want.k.is_threads);
	ASSERT_EQ(got->k.ts_next, want.k.ts_next);
	ASSERT_EQ(got->k.ts_cframe, want.k.ts_cframe);
	ASSERT_EQ(got->k.ts_tid, want.k.ts_tid);
	ASSERT_EQ(got->k.cf_frame, want.k.cf_frame);
	ASSERT_EQ(got->k.fr_code, want.k.fr_code);
	ASSERT_EQ(got->k.fr_previous, want.k.fr_previous);
	ASSERT_EQ(got->k.fr_instr, want.k.fr_instr);
	ASSERT_EQ(got->k.fr_entry, want.k.fr_entry);
	ASSERT_EQ(got->k.co_code, want.k.co_code);
	ASSERT_EQ(got->co_firstlineno, want.co_firstlineno);
	ASSERT_EQ(got->co_filename, want.co_filename);
	ASSERT_EQ(got->k.co_qualname, want.k.co_qualname);
	ASSERT_EQ(got->co_linetable, want.co_linetable);
	ASSERT_EQ(got->str_length, want.str_length);
	ASSERT_EQ(got->str_state, want.str_state);
	ASSERT_EQ(got->str_ascii_data, want.str_ascii_data);
	ASSERT_EQ(got->str_compact_data, want.str_compact_data);
	ASSERT_EQ(got->bytes_size, want.bytes_size);
	ASSERT_EQ(got->bytes_data, want.bytes_data);
}

/* co_linetable of a 7-line function (firstlineno 1) compiled by CPython
 * 3.11, and its co_lines() by code unit (None: 0). */
/* Names read from a live process (here our own memory): a str as 3.11
 * lays it out comes back as UTF-8; memory that is no str (a freed code
 * object's reused names) gives no name, never invalid UTF-8. */
TEST(python_names_read_or_refused)
{
	static const uint32_t good[] = {'f', 0xe9, 0x4e2d, 0x1f600}, beyond[] = {'f', 0x3f6e6c},
			      surrogate[] = {'g', 0xd800};
	struct pmt_py311_fake fake;
	struct pmt_py_code c;
	uint64_t code, name, link;

	code = pmt_py311_fake_code(&fake, good, 4);
	memcpy(&name, fake.code + pmt_py__layout311()->k.co_qualname, 8);
	ASSERT_EQ(pmt_py__read_code((uint32_t)getpid(), code, name, &c), 0);
	ASSERT_STREQ(c.qualname, "f\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
	ASSERT_STREQ(c.filename, "a.py");
	ASSERT_EQ(c.firstlineno, 7);
	pmt_py__code_free(&c);
	code = pmt_py311_fake_code(&fake, beyond, 2);
	memcpy(&name, fake.code + pmt_py__layout311()->k.co_qualname, 8);
	ASSERT_EQ(pmt_py__read_code((uint32_t)getpid(), code, name, &c), -EINVAL);
	code = pmt_py311_fake_code(&fake, surrogate, 2);
	memcpy(&name, fake.code + pmt_py__layout311()->k.co_qualname, 8);
	ASSERT_EQ(pmt_py__read_code((uint32_t)getpid(), code, name, &c), -EINVAL);
	/* freed: pymalloc's link to the next free block where the count
	 * of references was, or none */
	code = pmt_py311_fake_code(&fake, good, 4);
	link = (uint64_t)(uintptr_t)&fake;
	memcpy(fake.code, &link, 8); /* ob_refcnt */
	ASSERT_EQ(pmt_py__read_code((uint32_t)getpid(), code, name, &c), -ESTALE);
	memset(fake.code, 0, 8);
	ASSERT_EQ(pmt_py__read_code((uint32_t)getpid(), code, name, &c), -ESTALE);
}

/* An interpreter file's own code object is read from the first process
 * that runs it and shared by the others (not copied): the same names,
 * kept while any slot or the static entry holds them. ASan: none freed
 * twice, none left. */
TEST(python_static_codes_shared)
{
	static const uint32_t name[] = {'g', 'o'};
	const struct pmt_pystatic_key sk = {
		.dev = 1, .ino = 2, .vaddr = 0x1000, .qualname = 0x2000};
	struct pmt_pycodes t = {0};
	struct pmt_py311_fake fake;
	struct pmt_pyframe a, b;
	uint64_t code, q;

	code = pmt_py311_fake_code(&fake, name, 2);
	memcpy(&q, fake.code + pmt_py__layout311()->k.co_qualname, 8);
	pmt_pycodes__learn(&t, (uint32_t)getpid(), 1, code, q, &sk);
	pmt_pycodes__learn(&t, (uint32_t)getpid(), 2, code, q, &sk);
	ASSERT_EQ(t.reads, 1);
	ASSERT_EQ(t.copies, 1);
	ASSERT_TRUE(pmt_pycodes__frame(&t, PMT_PY_FRAME | 1, &a));
	ASSERT_TRUE(pmt_pycodes__frame(&t, PMT_PY_FRAME | 2, &b));
	ASSERT_STREQ(a.name, "go");
	ASSERT_TRUE(a.name == b.name && a.file == b.file);
	/* the first slot taken by a code of its own: the second keeps its */
	pmt_pycodes__learn(&t, (uint32_t)getpid(), 1, code, q, NULL);
	ASSERT_EQ(t.reads, 2);
	ASSERT_TRUE(pmt_pycodes__frame(&t, PMT_PY_FRAME | 2, &b));
	ASSERT_STREQ(b.name, "go");
	ASSERT_TRUE(pmt_pycodes__frame(&t, PMT_PY_FRAME | 1, &a));
	ASSERT_TRUE(a.name != b.name);
	/* one that cannot be read leaves its slot empty */
	pmt_pycodes__learn(&t, (uint32_t)getpid(), 3, code, q + 8, NULL);
	ASSERT_TRUE(!pmt_pycodes__frame(&t, PMT_PY_FRAME | 3, &a));
	pmt_pycodes__free(&t);
}

TEST(python_line_table_as_cpython)
{
	static const char hex[] =
		"8000d808098041dd0d12903189588c58f000030513f0000305138801d80809885"
		"190118955890a8801d80b0c88738a378837d80c0d901189468841f8d80b0c8048";
	static const struct {
		int from, to, line;
	} want[] = {{0, 1, 1},	 {1, 3, 2},   {3, 20, 3},  {20, 28, 4},
		    {28, 34, 5}, {34, 39, 6}, {39, 40, 0}, {40, 42, 7}};
	uint8_t t[sizeof(hex) / 2];
	size_t i, n = (sizeof(hex) - 1) / 2;
	int u;

	for (i = 0; i < n; i++) {
		unsigned int b;

		ASSERT_EQ(sscanf(hex + 2 * i, "%2x", &b), 1);
		t[i] = (uint8_t)b;
	}
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		for (u = want[i].from; u < want[i].to; u++)
			ASSERT_EQ(pmt_py__line(t, n, 1, (uint32_t)u), want[i].line);
	/* past the table, or no table: unknown */
	ASSERT_EQ(pmt_py__line(t, n, 1, 42), 0);
	ASSERT_EQ(pmt_py__line(NULL, 0, 1, 0), 0);
}

/* Debian's python3.11 is a supported interpreter; a C program is none. */
TEST(python_interpreters_told_apart)
{
	struct pmt_py_file f = {0};
	char version[32] = "";
	int fd = open("/usr/bin/python3.11", O_RDONLY);

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pmt_py__probe(fd, &f, version, sizeof(version)), PMT_PY_SUPPORTED);
	ASSERT_STREQ(version, "3.11");
	ASSERT_TRUE(f.eval_end > f.eval_start && f.runtime > 0);
	ASSERT_EQ(f.fr_entry, pmt_py__layout311()->k.fr_entry);
	close(fd);
	fd = open("/proc/self/exe", O_RDONLY);
	ASSERT_EQ(pmt_py__probe(fd, &f, version, sizeof(version)), PMT_PY_NONE);
	close(fd);
}
