/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Signal handling: handlers only set flags. Our signals stay blocked except
 * inside the event loop's epoll_pwait (and the output's wait for a slow
 * reader), so they can never land between checking the flags and going to
 * sleep. During start-up they keep their default action instead.
 */
#ifndef PMT_SIGNALS_H
#define PMT_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

extern volatile sig_atomic_t pmt_signalled;	  /* SIGINT/SIGTERM/SIGHUP */
extern volatile sig_atomic_t pmt_child_signalled; /* SIGCHLD */

void pmt_signals__install(void);
/* Start-up (on: until the probes are attached) holds nothing that outlives
 * the process: a stop signal there simply ends it, at once, even inside a
 * long map creation (the kernel gives up on a fatal signal). off: back to
 * flags, handled by the event loop. */
void pmt_signals__startup(bool on);
/* The mask to wait with (the one pmtrace started with). */
const sigset_t *pmt_signals__wait_mask(void);
/* Let our signals that wait land now. The event loop's wait returns at
 * once while its rings hold records, and a wait that returns records
 * leaves a pending signal blocked: a reader that is always behind (one
 * slow CPU, sampling itself) would never see Ctrl-C without this. */
void pmt_signals__poll(void);
/* In a forked child before exec: restore what pmtrace started with. */
void pmt_signals__child_reset(void);

#endif
