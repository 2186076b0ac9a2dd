// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lazybind: calls liblazy.so's three IFUNC symbols, each bound lazily at
 * its first call (linked -z lazy), so each resolver runs under the
 * loader's _dl_runtime_resolve with main as its caller. Prints the sum.
 */
#include <stdio.h>

int lazy_a(int v);
int lazy_b(int v);
int lazy_c(int v);

int main(void)
{
	printf("%d\n", lazy_a(1) + lazy_b(2) + lazy_c(3));
	return 0;
}
