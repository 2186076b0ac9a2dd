// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libdlthrow.so, opened by dlthrower: dlthrow_run(n) throws n
 * std::runtime_error, two of every three from site_a and the third from
 * site_b, each caught in dlthrow_run; returns how many it caught. Built
 * without frame pointers, as Debian builds: only CFI unwinds it. */
#include <stdexcept>

__attribute__((noinline)) int site_a(int i)
{
	if (i >= 0)
		throw std::runtime_error("a");
	return i;
}

__attribute__((noinline)) int site_b(int i)
{
	if (i >= 0)
		throw std::runtime_error("b");
	return i;
}

extern "C" int dlthrow_run(int n)
{
	int caught = 0;

	for (int i = 0; i < n; i++) {
		try {
			if (i % 3 == 2)
				site_b(i);
			else
				site_a(i);
		} catch (const std::exception &) {
			caught++;
		}
	}
	return caught;
}
