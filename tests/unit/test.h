/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small unit-test harness: TEST(name) registers a function (constructor),
 * ASSERT_* print the expression, actual and expected values and fail the
 * test. The runner prints one line per test and "unit: N passed, N failed".
 */
#ifndef PMT_TEST_H
#define PMT_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct pmt_test {
	const char *name;
	void (*fn)(int *failed);
	struct pmt_test *next;
};

void pmt_test__register(struct pmt_test *t);

#define TEST(name)                                                      \
	static void test_##name(int *failed);                           \
	static struct pmt_test reg_##name = {#name, test_##name, NULL}; \
	__attribute__((constructor)) static void reg_fn_##name(void)    \
	{                                                               \
		pmt_test__register(&reg_##name);                        \
	}                                                               \
	static void test_##name(int *failed)

#define FAIL_AT(...)                                              \
	do {                                                      \
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                     \
		fputc('\n', stderr);                              \
		(*failed)++;                                      \
	} while (0)

#define ASSERT_TRUE(c)                                    \
	do {                                              \
		if (!(c)) {                               \
			FAIL_AT("expected true: %s", #c); \
			return;                           \
		}                                         \
	} while (0)

#define ASSERT_EQ(a, b)                                                               \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		if (_a != _b) {                                                       \
			FAIL_AT("%s == %s: got %lld, expected %lld", #a, #b, _a, _b); \
			return;                                                       \
		}                                                                     \
	} while (0)

#define ASSERT_STREQ(a, b)                                                               \
	do {                                                                             \
		const char *_a = (a), *_b = (b);                                         \
		if (!_a || !_b || strcmp(_a, _b)) {                                      \
			FAIL_AT("%s == %s:\n    got:      %s\n    expected: %s", #a, #b, \
				_a ? _a : "(null)", _b ? _b : "(null)");                 \
			return;                                                          \
		}                                                                        \
	} while (0)

/* Read tests/data/NAME (the runner runs from the project root). */
char *pmt_test__data(const char *name);
/* Parse tests/data/NAME as a tracefs format; NULL (with a message) if not. */
struct pmt_format *pmt_test__format(const char *name);
/* The expressions the aggregation tests compile (freed at exit) */
struct pmt_exprs;
extern struct pmt_exprs pmt_test_exprs;

#endif
