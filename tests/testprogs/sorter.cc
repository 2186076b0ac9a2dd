// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sorter N: sorts N numbers with std::sort through a std::function
 * holding a lambda that calls heavy_less: C++ names to demangle
 * (heavy_less, Sorter::run, std::_Function_handler<...>::_M_invoke,
 * std::__introsort_loop<...>), hot for as long as N says.
 */
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <vector>

__attribute__((noinline)) bool heavy_less(int a, int b)
{
	volatile int x = 0;

	for (int i = 0; i < 50; i++)
		x = x + i;
	return a < b;
}

struct Sorter {
	std::vector<int> v;

	__attribute__((noinline)) void run(double f)
	{
		std::function<bool(int, int)> cmp = [f](int a, int b) {
			return heavy_less(a, b) && f > 0;
		};
		std::sort(v.begin(), v.end(), cmp);
	}
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	Sorter s;

	srand(1);
	for (int i = 0; i < n; i++)
		s.v.push_back(rand());
	s.run(1.0);
	return 0;
}
