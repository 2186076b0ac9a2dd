// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mixer: a known mix of syscalls from processes with known names.
 *   child "mix-a": 100 getppid, 3 open(/dev/null, O_RDONLY)
 *   child "mix-b": 200 getppid, 5 open(/dev/null, O_WRONLY)
 *   child "other":  50 getppid, 7 open(/dev/null, O_RDWR|O_CLOEXEC)
 *   itself:         10 getppid (after the children exit)
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct {
	const char *name;
	int calls, opens, flags;
} kids[] = {
	{"mix-a", 100, 3, O_RDONLY},
	{"mix-b", 200, 5, O_WRONLY},
	{"other", 50, 7, O_RDWR | O_CLOEXEC},
};

int main(void)
{
	int i, j, status, bad = 0;

	for (i = 0; i < 3; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid)
			continue;
		prctl(PR_SET_NAME, kids[i].name);
		for (j = 0; j < kids[i].calls; j++)
			syscall(SYS_getppid);
		for (j = 0; j < kids[i].opens; j++)
			close(open("/dev/null", kids[i].flags));
		_exit(0);
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	for (j = 0; j < 10; j++)
		syscall(SYS_getppid);
	return bad;
}
