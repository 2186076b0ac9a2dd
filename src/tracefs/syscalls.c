// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "tracefs/syscalls.h"

static const struct {
	const char *name;
	int nr;
} nrs[] = {
#define PMT_SYSCALL(name, nr) {#name, nr},
#include "syscall_nrs.h"
#undef PMT_SYSCALL
};

/* Tracepoints are named after the kernel function (SYSCALL_DEFINE), the
 * numbers after the call: where they differ, the function's name maps
 * to the call's (x86-64's table: "4 common stat sys_newstat"). */
static const struct {
	const char *tp, *call;
} aliases[] = {
	{"newstat", "stat"},   {"newfstat", "fstat"},	   {"newlstat", "lstat"},
	{"newuname", "uname"}, {"sendfile64", "sendfile"}, {"umount", "umount2"},
};

int pmt_syscall_nr(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].tp)) {
			name = aliases[i].call;
			break;
		}
	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++)
		if (!strcmp(name, nrs[i].name))
			return nrs[i].nr;
	return -1;
}
