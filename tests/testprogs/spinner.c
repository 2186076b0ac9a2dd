// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spinner MS [PAGES]: spin in pmt_spin_inner (called from pmt_spin_outer)
 * for MS ms of CPU time, then touch PAGES new pages (one page fault each).
 * spinner -N: a fixed amount of work instead (N calls of pmt_spin_inner),
 * for benchmarks that measure how much slower tracing makes it. Either way
 * it prints its own CPU time last ("cpu_ms="), and the task-clock it
 * counted on itself from main ("task_clock_ms=") where it may open one.
 * Built with frame pointers, so user stacks unwind: main -> outer -> inner.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A task-clock on itself: perf's clock, which counts the time a host
 * took from this guest's CPU while the task ran (the CPU-time clock
 * leaves that out under paravirtual steal accounting). -1 if refused. */
static int own_task_clock(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	return (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

__attribute__((noinline)) uint64_t pmt_spin_inner(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t pmt_spin_outer(double ms)
{
	double end = cpu_ms() + ms;
	uint64_t x = 1;

	while (cpu_ms() < end)
		x = pmt_spin_inner(x);
	return x;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000, pages = argc > 2 ? atol(argv[2]) : 0, i;
	long psz = sysconf(_SC_PAGESIZE);
	volatile char *mem;
	int clock_fd = own_task_clock();
	uint64_t ns;

	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	if (ms < 0) {
		uint64_t x = 1;

		for (i = 0; i < -ms; i++)
			x = pmt_spin_inner(x);
		printf("x=%llu\n", (unsigned long long)x);
		return 0;
	}
	printf("x=%llu\n", (unsigned long long)pmt_spin_outer((double)ms));
	if (pages > 0) {
		mem = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return 1;
		/* transparent huge pages (enabled=always) would fault 2 MiB at once */
		madvise((void *)mem, (size_t)(pages * psz), MADV_NOHUGEPAGE);
		for (i = 0; i < pages; i++)
			mem[i * psz] = 1;
		munmap((void *)mem, (size_t)(pages * psz));
	}
	/* its CPU time by the kernel's account, from its fork to here: what
	 * a task-clock counted from exec to exit should come to */
	printf("cpu_ms=%.3f\n", cpu_ms());
	if (clock_fd >= 0 && read(clock_fd, &ns, sizeof(ns)) == (ssize_t)sizeof(ns))
		printf("task_clock_ms=%.3f\n", (double)ns / 1e6);
	return 0;
}
