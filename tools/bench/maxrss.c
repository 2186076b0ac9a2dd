// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * maxrss FILE CMD [ARGS...]: run CMD, forward SIGINT/SIGTERM to it, write its
 * peak RSS in KiB to FILE, exit with its status. A small forking process is
 * needed: ru_maxrss keeps the high-water mark of the process that forked
 * (a Python benchmark driver, say) across exec.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status = 0;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: maxrss FILE CMD [ARGS...]\n");
		return 2;
	}
	signal(SIGINT, forward);
	signal(SIGTERM, forward);
	child = fork();
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	while (wait4(child, &status, 0, &ru) < 0)
		;
	f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%ld\n", ru.ru_maxrss);
		fclose(f);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
