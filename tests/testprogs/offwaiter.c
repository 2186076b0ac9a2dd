// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * offwaiter N MS [WARMUP_MS]: known time off the CPU, in two places.
 * Prints "pid P", sleeps WARMUP_MS (default 1000) in warmup() for a
 * tracer to attach (SIGUSR1 ends the warm-up early: the tracers said
 * they are attached), then:
 *   nap()        N nanosleeps of MS ms (blocked: S)
 *   wait_pipe()  N reads of a pipe a child writes to MS ms after each
 *                request (blocked: S, in pipe_read)
 * Both spend N * MS ms off the CPU, and little on it; how long their
 * waits kept it off the CPU (a busy machine makes them longer), as the
 * thread measures it, is printed at the end: "nap US" and "wait_pipe US".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long nap_us, wait_us;

/* Time off the CPU so far: wall time less the thread's CPU time (a
 * guest's vCPU descheduled by its host is time the guest counts on the
 * CPU, in both) */
static long long now_us(void)
{
	struct timespec wall, cpu;

	clock_gettime(CLOCK_MONOTONIC, &wall);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	return (wall.tv_sec - cpu.tv_sec) * 1000000LL + (wall.tv_nsec - cpu.tv_nsec) / 1000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static void on_usr1(int sig)
{
	(void)sig;
}

__attribute__((noinline)) void warmup(long ms)
{
	sleep_ms(ms); /* EINTR at SIGUSR1 */
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void nap(int n, long ms)
{
	int i;

	for (i = 0; i < n; i++) {
		long long t = now_us();

		sleep_ms(ms);
		nap_us += now_us() - t;
	}
	__asm__ volatile("" ::: "memory");
}

/* ask on one pipe, the child answers on the other MS ms later */
__attribute__((noinline)) void wait_pipe(int n, int ask, int answer)
{
	char c = 0;
	int i;

	for (i = 0; i < n; i++) {
		long long t;

		if (write(ask, &c, 1) != 1)
			exit(1);
		t = now_us();
		if (read(answer, &c, 1) != 1)
			exit(1);
		wait_us += now_us() - t;
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, to[2], from[2];
	long ms = argc > 2 ? atol(argv[2]) : 20, warm = argc > 3 ? atol(argv[3]) : 1000;
	struct sigaction sa = {.sa_handler = on_usr1};
	pid_t child;
	char c;

	/* no SA_RESTART: the signal ends warmup's sleep */
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(to) || pipe(from))
		return 1;
	child = fork();
	if (child == 0) {
		close(to[1]);
		close(from[0]);
		while (read(to[0], &c, 1) == 1) {
			sleep_ms(ms);
			if (write(from[1], &c, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	warmup(warm);
	nap(n, ms);
	wait_pipe(n, to[1], from[0]);
	close(to[1]);
	waitpid(child, NULL, 0);
	printf("nap %lld\nwait_pipe %lld\n", nap_us, wait_us);
	return 0;
}
