// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "run/signals.h"

volatile sig_atomic_t pmt_signalled;
volatile sig_atomic_t pmt_child_signalled;
/* the mask from before pmt_signals__install */
static sigset_t wait_mask;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
/* SIGHUP ignored when pmtrace started (nohup): it stays ignored. SIGINT
 * and SIGTERM always stop it, also where a script's & ignored SIGINT. */
static bool hup_ignored;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		pmt_child_signalled = 1;
	else
		pmt_signalled = sig;
}

void pmt_signals__install(void)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_NOCLDSTOP};
	sigset_t block;

	struct sigaction old;

	hup_ignored = !sigaction(SIGHUP, NULL, &old) && old.sa_handler == SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!hup_ignored)
		sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* EPIPE from write() ends the trace */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
}

void pmt_signals__child_reset(void)
{
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
}

const sigset_t *pmt_signals__wait_mask(void)
{
	return &wait_mask;
}

void pmt_signals__startup(bool on)
{
	struct sigaction sa = {.sa_handler = on ? SIG_DFL : on_signal, .sa_flags = SA_NOCLDSTOP};
	sigset_t set;
	unsigned i;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (i = 0; i < 3; i++) {
		if (stop_signals[i] == SIGHUP && hup_ignored)
			continue;
		sigaddset(&set, stop_signals[i]);
	}
	if (!on)
		sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < 3; i++)
		if (sigismember(&set, stop_signals[i]))
			sigaction(stop_signals[i], &sa, NULL);
	if (on)
		sigprocmask(SIG_UNBLOCK, &set, NULL);
}
