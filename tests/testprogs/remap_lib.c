// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Built twice (Makefile), each with its function as the ELF entry point:
 * remap_a (remap_spin_a) and remap_b (REMAP_B: remap_spin_b, which keeps
 * 4 KiB on its stack, so its frames differ from a's and unwinding b's
 * code with a's tables goes wrong). Position-independent and calling
 * nothing: remap.c maps the files itself and calls their entry points.
 * Without frame pointers, as Debian builds: only their CFI unwinds them.
 */
#ifndef REMAP_B
__attribute__((noinline)) unsigned long remap_spin_a(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
#else
__attribute__((noinline)) unsigned long remap_spin_b(unsigned long n)
{
	volatile unsigned char buf[4096];
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		buf[x & 4095] = (unsigned char)x;
	}
	return x + buf[0];
}
#endif
