// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakepy [N]: a program that looks like a CPython interpreter of another
 * version to pmtrace (it exports _PyRuntime, _PyEval_EvalFrameDefault and
 * a Py_Version of 3.12; built -rdynamic): its stacks must stay native, with
 * a notice. Spins N rounds in its "eval loop".
 */
#include <stdint.h>
#include <stdlib.h>

char _PyRuntime[4096];
const uint32_t Py_Version = 0x030c01f0;

__attribute__((noinline)) long _PyEval_EvalFrameDefault(long n)
{
	volatile long x = 0;

	for (long i = 0; i < n; i++)
		x += i;
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;

	_PyRuntime[0] = 1;
	return _PyEval_EvalFrameDefault(n) == 42;
}
