// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Three IFUNC symbols for lazybind.c: the loader runs each resolver
 * (lazy_resolve_a, _b, _c) at the program's first call of its symbol,
 * from _dl_fixup under _dl_runtime_resolve, whose CFI finds its caller
 * from rbx (it aligns the stack). Built without frame pointers.
 */
#define LAZY_IFUNC(x)                                                      \
	static int impl_##x(int v)                                         \
	{                                                                  \
		return v + #x[0];                                          \
	}                                                                  \
	__attribute__((noinline, used)) int (*lazy_resolve_##x(void))(int) \
	{                                                                  \
		__asm__ volatile("" ::: "memory");                         \
		return impl_##x;                                           \
	}                                                                  \
	int lazy_##x(int v) __attribute__((ifunc("lazy_resolve_" #x)));

LAZY_IFUNC(a)
LAZY_IFUNC(b)
LAZY_IFUNC(c)
