// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* USDT notes: argument specs as compilers write them, and the notes of
 * this test binary itself, which carries a probe (sys/sdt.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/sdt.h>
#include "elf/stapsdt.h"
#include "test.h"

__attribute__((noinline, used)) int pmt_usdt_unit_target(int x, unsigned short y, const char *p)
{
	DTRACE_PROBE3(pmt_unit, three, x, y, p);
	return x + y;
}

TEST(usdt_arg_specs)
{
	struct pmt_usdt_arg a[PMT_USDT_MAX_ARGS];

	ASSERT_EQ(pmt_usdt__parse_args("-4@%eax 8@-16(%rbp)  2@$5 1@(%rdi)", a, 12), 4);
	ASSERT_STREQ(pmt_usdt__type(&a[0]), "s32");
	ASSERT_STREQ(pmt_usdt__type(&a[1]), "u64");
	ASSERT_STREQ(pmt_usdt__type(&a[2]), "u16");
	ASSERT_STREQ(pmt_usdt__type(&a[3]), "u8");
	ASSERT_TRUE(a[0].readable && a[1].readable && a[2].readable && a[3].readable);
	ASSERT_STREQ(a[1].spec, "8@-16(%rbp)");
	/* forms libbpf 1.1 cannot read: base+index, symbol-relative */
	ASSERT_EQ(pmt_usdt__parse_args("8@(%r8,%rdi,8) -8@counter(%rip)", a, 12), 2);
	ASSERT_TRUE(!a[0].readable && !a[1].readable && a[1].is_signed);
	/* an operand without a size (old notes): a long */
	ASSERT_EQ(pmt_usdt__parse_args("%rdi", a, 12), 1);
	ASSERT_TRUE(a[0].size == 8 && !a[0].is_signed);
	ASSERT_EQ(pmt_usdt__parse_args("", a, 12), 0);
	ASSERT_EQ(pmt_usdt__parse_args("3@%eax", a, 12), -EINVAL);
	ASSERT_EQ(pmt_usdt__parse_args("4@%eax 4@%ebx", a, 1), -EINVAL);
	ASSERT_EQ(pmt_usdt__parse_args("x@%eax", a, 12), -EINVAL);
}

TEST(usdt_notes_of_this_binary)
{
	struct pmt_usdt_notes notes;
	struct pmt_error err = {0};
	const struct pmt_usdt_note *n = NULL;
	char path[256];
	ssize_t len;
	size_t i;

	len = readlink("/proc/self/exe", path, sizeof(path) - 1);
	ASSERT_TRUE(len > 0);
	path[len] = '\0';
	ASSERT_EQ(pmt_usdt__read(path, &notes, &err), 0);
	for (i = 0; i < notes.n; i++)
		if (!strcmp(notes.v[i].provider, "pmt_unit") && !strcmp(notes.v[i].name, "three"))
			n = &notes.v[i];
	ASSERT_TRUE(n != NULL);
	ASSERT_EQ(n->nargs, 3);
	ASSERT_STREQ(pmt_usdt__type(&n->args[0]), "s32");
	ASSERT_STREQ(pmt_usdt__type(&n->args[1]), "u16");
	ASSERT_STREQ(pmt_usdt__type(&n->args[2]), "u64");
	ASSERT_EQ(n->semaphore, 0);
	ASSERT_TRUE(n->pc != 0 && n->sites >= 1);
	pmt_usdt__free(&notes);
	/* not an ELF file: a usage error */
	ASSERT_EQ(pmt_usdt__read("/proc/self/status", &notes, &err), -EINVAL);
	ASSERT_EQ(err.cls, PMT_ERR_USAGE);
	ASSERT_EQ(pmt_usdt_unit_target(1, 2, "x"), 3);
}
