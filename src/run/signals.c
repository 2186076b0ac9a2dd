// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <signal.h>
#include <stddef.h>
#include "run/signals.h"

volatile sig_atomic_t pmt_signalled;
volatile sig_atomic_t pmt_child_signalled;
/* the mask from before pmt_signals__install */
static sigset_t wait_mask;

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

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
