// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* thrower N: throws N std::runtime_error, two of every three from
 * parse_one and the third from parse_two, each caught in main; prints
 * "N caught". Built as Debian builds (no frame pointers): a stack
 * from __cxa_throw in libstdc++ unwinds only through the CFI of
 * libstdc++, which the program needs (DT_NEEDED) but pmtrace never saw
 * mapped before the first throw. */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

__attribute__((noinline)) int parse_one(int i)
{
	if (i >= 0)
		throw std::runtime_error("bad input");
	return i;
}

__attribute__((noinline)) int parse_two(int i)
{
	if (i >= 0)
		throw std::runtime_error("bad input too");
	return i;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 900, caught = 0;

	for (int i = 0; i < n; i++) {
		try {
			if (i % 3 == 2)
				parse_two(i);
			else
				parse_one(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	printf("%d caught\n", caught);
	return 0;
}
