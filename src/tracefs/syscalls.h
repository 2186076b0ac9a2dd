/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * System call numbers by the name of their tracepoints (syscalls:sys_enter_NAME):
 * what lets one attachment to raw_syscalls serve many syscalls:* tracepoints.
 */
#ifndef PMT_SYSCALLS_H
#define PMT_SYSCALLS_H

/* The number of the system call whose tracepoints are sys_enter_NAME and
 * sys_exit_NAME, or -1 when the headers pmtrace was built with do not know
 * it (a newer call: its tracepoints are then attached one by one). */
int pmt_syscall_nr(const char *name);

#endif
