// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPython frames: the 3.11 layout against the interpreter's headers, the
 * line table as CPython reads it, and interpreter files told apart. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "events/python.h"
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
