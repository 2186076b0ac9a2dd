/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One sink of messages: every one goes to stderr as "pmtrace: ...".
 * Errors are not said here: they fill a struct pmt_error (util/error.h),
 * printed once by what ends the run. */
#ifndef PMT_LOG_H
#define PMT_LOG_H

#include <stdbool.h>

extern int pmt_verbose; /* -v count */
extern bool pmt_quiet;	/* -q */

void pmt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pmt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hint: ..." line under an error */
void pmt_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* As fprintf(stderr, ...), control bytes escaped like the lines above. */
void pmt_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exit statuses */
#define PMT_EXIT_OK 0
#define PMT_EXIT_FAIL 1	 /* runtime failure */
#define PMT_EXIT_USAGE 2 /* bad input: options, probe names, target */

#endif
