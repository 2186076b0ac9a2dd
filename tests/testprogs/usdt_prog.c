// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * usdt_prog [wait] N: USDT probes (sys/sdt.h) with known arguments.
 *   pmt:args(i)   N times: arg0 = -(i + 1) (int), arg1 = 4000000000 + i
 *                 (unsigned int), arg2 = "alpha", "beta", "gamma", "" for
 *                 i % 4; arg3 = i % 4
 *   pmt:guarded   N times when its semaphore is set (nothing else
 *                 fires it): prints "guarded N"
 * wait: prints "pid P", waits (up to 20 s) for the guarded probe's
 * semaphore to be set (a tracer attaching with -p), then 500 ms, fires
 * pmt:guarded N times, waits for the semaphore back to 0 and prints "reset" (the
 * tracer gone), or "still set" after 20 s.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sdt.h>

/* every probe of a file built with _SDT_HAS_SEMAPHORES has one; only
 * pmt:guarded's is looked at */
unsigned short pmt_guarded_semaphore __attribute__((section(".probes")));
unsigned short pmt_args_semaphore __attribute__((section(".probes")));

static const char *const words[] = {"alpha", "beta", "gamma", ""};

__attribute__((noinline)) static void fire_one(int neg, unsigned int u, const char *w, int k)
{
	DTRACE_PROBE4(pmt, args, neg, u, w, k);
}

/* fired whether or not its semaphore is set */
static void fire_args(int n)
{
	int i;

	for (i = 0; i < n; i++)
		fire_one(-(i + 1), 4000000000u + (unsigned int)i, words[i % 4], i % 4);
}

static int fire_guarded(int n)
{
	int i, fired = 0;

	for (i = 0; i < n; i++) {
		if (__builtin_expect(pmt_guarded_semaphore, 0)) {
			DTRACE_PROBE1(pmt, guarded, i);
			fired++;
		}
	}
	return fired;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* Until the semaphore is (set ? nonzero : zero), 20 s at most. */
static int wait_semaphore(int set)
{
	int i;

	for (i = 0; i < 20000; i++) {
		if (!!*(volatile unsigned short *)&pmt_guarded_semaphore == set)
			return 1;
		sleep_ms(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	int n = argc > 1 + wait ? atoi(argv[1 + wait]) : 10;

	if (!wait) {
		fire_args(n);
		printf("guarded %d\n", fire_guarded(n));
		return 0;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!wait_semaphore(1)) {
		printf("never set\n");
		return 1;
	}
	/* the kernel sets the semaphore when it registers the uprobe, a
	 * moment before the tracer's program is attached to it */
	sleep_ms(500);
	printf("guarded %d\n", fire_guarded(n));
	fflush(stdout);
	printf("%s\n", wait_semaphore(0) ? "reset" : "still set");
	return 0;
}
