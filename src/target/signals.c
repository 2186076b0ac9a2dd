// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "target/signals.h"

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

/* The stop signals pmtrace handles: all but a SIGHUP nohup ignored. */
static void stop_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		if (stop_signals[i] != SIGHUP || !hup_ignored)
			sigaddset(set, stop_signals[i]);
}

/* Give the signals of set (stop signals, SIGCHLD) the action fn. */
static void set_action(const sigset_t *set, void (*fn)(int))
{
	struct sigaction sa = {.sa_handler = fn, .sa_flags = SA_NOCLDSTOP};
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigismember(set, sigs[i]))
			sigaction(sigs[i], &sa, NULL);
}

void pmt_signals__install(void)
{
	struct sigaction old;
	sigset_t block;

	hup_ignored = !sigaction(SIGHUP, NULL, &old) && old.sa_handler == SIG_IGN;
	stop_set(&block);
	sigaddset(&block, SIGCHLD);
	set_action(&block, on_signal);
	signal(SIGPIPE, SIG_IGN); /* EPIPE from write() ends the trace */
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

void pmt_signals__poll(void)
{
	static const int ours[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
	sigset_t pend, old;
	size_t i;

	if (sigpending(&pend))
		return;
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (sigismember(&pend, ours[i]))
			break;
	if (i == sizeof(ours) / sizeof(ours[0]))
		return;
	/* unblocked a moment: the kernel runs the handlers of what waits */
	pthread_sigmask(SIG_SETMASK, &wait_mask, &old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void pmt_signals__startup(bool on)
{
	sigset_t set;

	stop_set(&set);
	/* blocked while the action changes, so a signal meets one or the
	 * other, never neither */
	if (!on)
		sigprocmask(SIG_BLOCK, &set, NULL);
	set_action(&set, on ? SIG_DFL : on_signal);
	if (on)
		sigprocmask(SIG_UNBLOCK, &set, NULL);
}
