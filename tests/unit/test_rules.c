// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "test.h"
#include "util/error.h"
#include "unwind/cfi.h"
#include "unwind/rules.h"

static struct pmt_cfi_rule rule_sp(int32_t off)
{
	struct pmt_cfi_row row = {.cfa = PMT_CFA_SP, .cfa_off = off};

	return pmt_cfi_rule__of(&row);
}

/* Each rule once, indexed in the order met; max is the bound; the
 * slots grow without losing one. */
TEST(rules_interned_once)
{
	struct pmt_cfi_rules r;
	struct pmt_cfi_rule a = rule_sp(8), b = rule_sp(16);
	bool added;
	int i;

	pmt_cfi_rules__init(&r, 1000);
	ASSERT_EQ(pmt_cfi_rules__intern(&r, &a, &added), 0);
	ASSERT_TRUE(added);
	ASSERT_EQ(pmt_cfi_rules__intern(&r, &b, &added), 1);
	ASSERT_EQ(pmt_cfi_rules__intern(&r, &a, &added), 0);
	ASSERT_TRUE(!added);
	for (i = 2; i < 1000; i++) {
		struct pmt_cfi_rule c = rule_sp(8 * (i + 1));

		ASSERT_EQ(pmt_cfi_rules__intern(&r, &c, &added), i);
	}
	ASSERT_EQ(pmt_cfi_rules__intern(&r, &b, &added), 1);
	b = rule_sp(8 * 2000);
	ASSERT_EQ(pmt_cfi_rules__intern(&r, &b, &added), -ENOSPC);
	ASSERT_EQ(r.n, 1000);
	ASSERT_EQ(r.v[999].cfa_off, 8000);
	pmt_cfi_rules__free(&r);
}

/* A file's rows through their rules and back, as the kernel's table
 * holds them: the same rows, and far fewer rules than rows. */
TEST(rules_of_self_round_trip)
{
	struct pmt_error err = {0};
	struct pmt_cfi_rules r;
	struct pmt_cfi cfi;
	size_t i;
	bool added;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(pmt_cfi__read(fd, &cfi, &err), 0);
	close(fd);
	pmt_cfi_rules__init(&r, PMT_CFI_RULES);
	for (i = 0; i < cfi.n; i++) {
		struct pmt_cfi_rule rule = pmt_cfi_rule__of(&cfi.rows[i]);
		int64_t at = pmt_cfi_rules__intern(&r, &rule, &added);
		struct pmt_cfi_row back;

		ASSERT_TRUE(at >= 0);
		back = pmt_cfi_rule__row(cfi.rows[i].pc, &r.v[at]);
		ASSERT_TRUE(!memcmp(&back, &cfi.rows[i], sizeof(back)));
	}
	ASSERT_TRUE(cfi.n > 1000);
	ASSERT_TRUE(r.n * 20 < cfi.n);
	pmt_cfi_rules__free(&r);
	pmt_cfi__free(&cfi);
}
