// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dlthrower N [LIB]: opens LIB (libdlthrow.so beside the program) with
 * dlopen and has it throw N C++ exceptions right away, from two sites
 * (see dlthrow_lib.cc); prints "N caught". The program itself is C and
 * needs no libstdc++: the library and libstdc++ are mapped only by the
 * dlopen, just before the first throw, so a tracer meets both before
 * it can have read their unwind tables. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* not on the stack: a stack copied for a tracer stays small */
static char lib[PATH_MAX];

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 900;
	int (*run)(int);
	void *h;
	ssize_t len;

	if (argc > 2) {
		snprintf(lib, sizeof(lib), "%s", argv[2]);
	} else {
		len = readlink("/proc/self/exe", lib, sizeof(lib) - 32);
		if (len < 0)
			return 1;
		lib[len] = '\0';
		strcpy(strrchr(lib, '/') + 1, "libdlthrow.so");
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlthrower: %s\n", dlerror());
		return 1;
	}
	run = (int (*)(int))dlsym(h, "dlthrow_run");
	if (!run)
		return 1;
	printf("%d caught\n", run(n));
	return 0;
}
