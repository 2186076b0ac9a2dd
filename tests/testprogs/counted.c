// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * counted N: functions whose calls cost a known number of events, for
 * --counter. After a warm-up (every path run once, outside the counted
 * functions, so lazy binding and first touches are not counted; then one
 * call of pmt_faults(0) and one of pmt_migrate(0) that cost the program
 * nothing: they take the tracer's own first-hit cost, the page fault of
 * the kernel mapping a process's uprobe trampoline page at its first
 * probed return):
 *   pmt_faults(k) for k = 1, 2, ..., 7, 1, 2, ... N times: maps k fresh
 *     pages, writes each (exactly k page faults), unmaps them
 *   pmt_sleep_once() N times: one 1 ms nanosleep (one context switch)
 *   pmt_migrate(k) N times (k = 3): k faults on one CPU, a move to the
 *     other CPU (sched_setaffinity, inside the call), k more faults there:
 *     2k page faults, whichever CPU counted them
 */
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long page;

static void touch(int k)
{
	char *p;
	int i;

	if (!k)
		return;
	p = mmap(NULL, (size_t)k * (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	for (i = 0; i < k; i++)
		p[(long)i * page] = 1;
	munmap(p, (size_t)k * (size_t)page);
}

static void sleep_1ms(void)
{
	struct timespec ts = {0, 1000000};

	nanosleep(&ts, NULL);
}

static void run_on(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

__attribute__((noinline)) void pmt_faults(int k)
{
	touch(k);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void pmt_sleep_once(void)
{
	sleep_1ms();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void pmt_migrate(int k, int from, int to)
{
	if (!k)
		return;
	touch(k);
	run_on(to);
	touch(k);
	__asm__ volatile("" ::: "memory");
	(void)from;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 70, i, cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	struct rusage ru;
	long sleeps;

	page = sysconf(_SC_PAGESIZE);
	/* warm-up: every library call and page the counted calls use */
	touch(7);
	sleep_1ms();
	run_on(0);
	run_on(cpus > 1 ? 1 : 0);
	run_on(0);
	pmt_faults(0);
	pmt_migrate(0, 0, 0);
	for (i = 0; i < n; i++)
		pmt_faults(1 + i % 7);
	getrusage(RUSAGE_SELF, &ru);
	sleeps = ru.ru_nvcsw + ru.ru_nivcsw;
	for (i = 0; i < n; i++)
		pmt_sleep_once();
	getrusage(RUSAGE_SELF, &ru);
	sleeps = ru.ru_nvcsw + ru.ru_nivcsw - sleeps;
	for (i = 0; i < n; i++) {
		int from = i % 2 && cpus > 1, to = cpus > 1 ? !from : 0;

		run_on(from);
		pmt_migrate(3, from, to);
	}
	/* the preemptions the calls may count beside their own switches,
	 * and all the switches of the sleeps' loop (a busy machine adds
	 * waits of its own: a lock, a fault) */
	getrusage(RUSAGE_SELF, &ru);
	printf("pid=%d cpus=%d sleep_switches=%ld preempted=%ld\n", (int)getpid(), cpus, sleeps,
	       ru.ru_nivcsw);
	return 0;
}
