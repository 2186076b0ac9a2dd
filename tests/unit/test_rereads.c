// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
#include "test.h"
#include "unwind/rereads.h"

#define S 1000000000ULL

/* A file read once is never held; each read again holds it twice as long
 * as the one before, up to the maximum; other files are apart. */
TEST(rereads_hold_doubles)
{
	struct pmt_rereads t;
	struct pmt_cfi_file_key a = {.dev = 8 << 20 | 1, .ino = 42},
				b = {.dev = 8 << 20 | 1, .ino = 43};
	uint64_t now = 100 * S;
	uint32_t i;

	pmt_rereads__init(&t, 64);
	ASSERT_TRUE(!pmt_rereads__held(&t, &a, now));
	ASSERT_EQ(pmt_rereads__count(&t, &a), 0);
	ASSERT_EQ(pmt_rereads__read(&t, &a, now), 0);
	ASSERT_EQ(pmt_rereads__count(&t, &a), 1);
	ASSERT_TRUE(!pmt_rereads__held(&t, &a, now));
	ASSERT_EQ(pmt_rereads__read(&t, &b, now), 0);
	ASSERT_EQ(pmt_rereads__read(&t, &a, now), 1);
	ASSERT_TRUE(pmt_rereads__held(&t, &a, now + S - 1));
	ASSERT_TRUE(!pmt_rereads__held(&t, &a, now + S));
	ASSERT_TRUE(!pmt_rereads__held(&t, &b, now));
	ASSERT_EQ(pmt_rereads__read(&t, &a, now), 2);
	ASSERT_TRUE(pmt_rereads__held(&t, &a, now + 2 * S - 1));
	ASSERT_TRUE(!pmt_rereads__held(&t, &a, now + 2 * S));
	for (i = 3; i < 20; i++)
		ASSERT_EQ(pmt_rereads__read(&t, &a, now), i);
	ASSERT_TRUE(pmt_rereads__held(&t, &a, now + PMT_REREAD_HOLD_MAX_NS - 1));
	ASSERT_TRUE(!pmt_rereads__held(&t, &a, now + PMT_REREAD_HOLD_MAX_NS));
	ASSERT_EQ(t.files, 1);
	ASSERT_EQ(t.reads, 19);
	pmt_rereads__free(&t);
}

/* Full to three quarters, the table starts again: bounded, and a file
 * met before is then read as if for the first time. */
TEST(rereads_bounded)
{
	struct pmt_rereads t;
	struct pmt_cfi_file_key k = {.dev = 1};
	uint64_t i;

	pmt_rereads__init(&t, 16);
	for (i = 0; i < 1000; i++) {
		k.ino = i;
		ASSERT_EQ(pmt_rereads__read(&t, &k, 0), 0);
		ASSERT_TRUE(t.n <= 12);
	}
	k.ino = 999;
	ASSERT_EQ(pmt_rereads__read(&t, &k, 0), 1);
	pmt_rereads__free(&t);
}
