// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ends deep|unreadable|exit N: user stacks that cannot reach their
 * outermost frame, each for a reason of its own; N getppid(2) calls:
 *   deep        made 200 frames deep (more than a stack keeps);
 *   unreadable  made from a function whose CFI puts its caller's return
 *               address 1 GiB above its stack, where nothing is mapped;
 *   exit        none: N children that exit at once (their stacks at
 *               sched_process_exit have no memory left to walk).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEEP 200

#if defined(__x86_64__)
__asm__(".text\n"
	".globl pmt_unreadable_getppid\n"
	".type pmt_unreadable_getppid, @function\n"
	"pmt_unreadable_getppid:\n"
	".cfi_startproc\n"
	".cfi_def_cfa %rsp, 0x40000000\n"
	"mov $110, %eax\n" /* __NR_getppid */
	"syscall\n"
	"ret\n"
	".cfi_endproc\n"
	".size pmt_unreadable_getppid, . - pmt_unreadable_getppid\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl pmt_unreadable_getppid\n"
	".type pmt_unreadable_getppid, %function\n"
	"pmt_unreadable_getppid:\n"
	".cfi_startproc\n"
	".cfi_def_cfa sp, 0x40000000\n"
	".cfi_offset x30, -8\n"
	"mov x8, #173\n" /* __NR_getppid */
	"svc #0\n"
	"ret\n"
	".cfi_endproc\n"
	".size pmt_unreadable_getppid, . - pmt_unreadable_getppid\n");
#endif
long pmt_unreadable_getppid(void);

__attribute__((noinline)) static long deep(int d, long n)
{
	long r = 0, i;

	if (d > 1)
		r = deep(d - 1, n);
	else
		for (i = 0; i < n; i++)
			r += syscall(SYS_getppid);
	__asm__ volatile("" : "+r"(r)::"memory"); /* not a tail call */
	return r;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 10, i;
	const char *how = argc > 1 ? argv[1] : "";
	int status;

	if (!strcmp(how, "deep")) {
		deep(DEEP, n);
	} else if (!strcmp(how, "unreadable")) {
		for (i = 0; i < n; i++)
			pmt_unreadable_getppid();
	} else if (!strcmp(how, "exit")) {
		for (i = 0; i < n; i++) {
			pid_t c = fork();

			if (c < 0)
				return 1;
			if (!c)
				_exit(0);
			waitpid(c, &status, 0);
		}
	} else {
		fprintf(stderr, "usage: ends deep|unreadable|exit N\n");
		return 2;
	}
	return 0;
}
