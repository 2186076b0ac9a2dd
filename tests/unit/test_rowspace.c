// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
#include "test.h"
#include "unwind/rowspace.h"

/* Rows out from the start, then none: the array's size is the bound. */
TEST(rowspace_from_the_start)
{
	struct pmt_rowspace s;
	uint32_t f = 99;

	pmt_rowspace__init(&s, 100);
	ASSERT_TRUE(pmt_rowspace__take(&s, 60, 0, &f));
	ASSERT_EQ(f, 0);
	ASSERT_TRUE(pmt_rowspace__take(&s, 40, 0, &f));
	ASSERT_EQ(f, 60);
	ASSERT_TRUE(!pmt_rowspace__take(&s, 1, 0, &f));
	ASSERT_TRUE(!pmt_rowspace__fits(&s, 1));
	ASSERT_TRUE(!pmt_rowspace__take(&s, 0, 0, &f));
	ASSERT_EQ(pmt_rowspace__free_rows(&s), 0);
	pmt_rowspace__free(&s);
}

/* Rows given back are taken again only once ripe: a program that found
 * the file's entry before it went may still be reading them. */
TEST(rowspace_ripe_only)
{
	struct pmt_rowspace s;
	uint64_t ripe = 0;
	uint32_t f;

	pmt_rowspace__init(&s, 100);
	ASSERT_TRUE(pmt_rowspace__take(&s, 100, 0, &f));
	ASSERT_EQ(pmt_rowspace__give(&s, 20, 30, 1000), 0);
	ASSERT_TRUE(!pmt_rowspace__take(&s, 10, 999, &f));
	ASSERT_TRUE(pmt_rowspace__hole_for(&s, 30, &ripe));
	ASSERT_EQ(ripe, 1000);
	ASSERT_TRUE(!pmt_rowspace__hole_for(&s, 31, &ripe));
	ASSERT_TRUE(pmt_rowspace__fits(&s, 30)); /* not ripe, but it will be */
	ASSERT_TRUE(!pmt_rowspace__fits(&s, 31));
	ASSERT_TRUE(pmt_rowspace__take(&s, 10, 1000, &f));
	ASSERT_EQ(f, 20);
	ASSERT_TRUE(pmt_rowspace__take(&s, 20, 1000, &f));
	ASSERT_EQ(f, 30);
	ASSERT_EQ(s.n, 0);
	ASSERT_EQ(s.given_back, 30);
	ASSERT_EQ(s.taken_again, 30);
	pmt_rowspace__free(&s);
}

/* Neighbours merge (the later ripe time holds for the whole); the
 * smallest hole that fits is taken, so a large one stays for a large
 * file. */
TEST(rowspace_merge_and_best_fit)
{
	struct pmt_rowspace s;
	uint32_t f;

	pmt_rowspace__init(&s, 1000);
	ASSERT_TRUE(pmt_rowspace__take(&s, 1000, 0, &f));
	ASSERT_EQ(pmt_rowspace__give(&s, 100, 50, 5), 0); /* [100, 150) */
	ASSERT_EQ(pmt_rowspace__give(&s, 200, 50, 7), 0); /* [200, 250) */
	ASSERT_EQ(pmt_rowspace__give(&s, 150, 50, 6), 0); /* joins both */
	ASSERT_EQ(s.n, 1);
	ASSERT_EQ(s.holes[0].first, 100);
	ASSERT_EQ(s.holes[0].count, 150);
	ASSERT_EQ(s.holes[0].ripe_ns, 7);
	ASSERT_EQ(pmt_rowspace__give(&s, 500, 20, 1), 0);
	ASSERT_EQ(pmt_rowspace__give(&s, 480, 20, 1), 0); /* before [500, 520) */
	ASSERT_EQ(pmt_rowspace__give(&s, 900, 10, 1), 0);
	ASSERT_EQ(s.n, 3);
	ASSERT_EQ(s.holes[1].first, 480);
	ASSERT_EQ(s.holes[1].count, 40);
	ASSERT_TRUE(pmt_rowspace__take(&s, 10, 10, &f));
	ASSERT_EQ(f, 900); /* the 10-row hole, exactly */
	ASSERT_TRUE(pmt_rowspace__take(&s, 30, 10, &f));
	ASSERT_EQ(f, 480);
	ASSERT_TRUE(pmt_rowspace__take(&s, 100, 10, &f));
	ASSERT_EQ(f, 100);
	ASSERT_EQ(pmt_rowspace__free_rows(&s), 60);
	ASSERT_TRUE(!pmt_rowspace__take(&s, 51, 10, &f));
	pmt_rowspace__free(&s);
}
