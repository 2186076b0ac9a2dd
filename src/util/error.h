/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One error value. Whatever finds a problem fills it where it knows the
 * context (what was wrong, a hint, the input with a caret under the bad
 * token) and returns -errno; the caller that ends the run prints it once
 * and takes the exit status from its class:
 *
 *   usage    the user's input: options, probe names, filters, targets,
 *            paths; exit 2, and nothing was attached
 *   runtime  the system: out of memory, a kernel that refuses a load, an
 *            unreadable file the user did not name; exit 1
 *
 * The first error set wins: a failure that causes others keeps its own
 * words. Printed as "pmtrace: MSG", the quoted input and caret, then one
 * "hint: " line for each hint (pmt_error__format).
 */
#ifndef PMT_ERROR_H
#define PMT_ERROR_H

#include <stdbool.h>
#include "util/strutil.h"

enum pmt_err_class {
	PMT_ERR_NONE,
	PMT_ERR_USAGE,
	PMT_ERR_RUNTIME,
};

struct pmt_error {
	enum pmt_err_class cls;
	int code;	 /* -errno returned with it */
	char msg[1024];	 /* without "pmtrace: " */
	char hint[1024]; /* hint lines joined by '\n' (no "hint: "); may be empty */
	char src[4096];	 /* input quoted under msg, or empty */
	int pos, len;	 /* the caret's byte span in src; len 0: no caret */
	bool muted;	 /* the last error set was not kept: nor are its hints */
};

/* Set a usage error (exit 2); returns -EINVAL. */
int pmt_error__usage(struct pmt_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Set a runtime error (exit 1) with code (-errno); returns code, or -EIO
 * when code is not negative. */
int pmt_error__runtime(struct pmt_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Add a hint line to the error set (nothing when none is set, or when the
 * error was set before: the first error keeps its own hints). */
void pmt_error__hint(struct pmt_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A runtime error (code, -errno) of an attachment, worded one way for
 * every probe kind: "SPEC: cannot attach KIND: REASON". */
int pmt_error__attach(struct pmt_error *e, int code, const char *spec, const char *kind,
		      const char *reason);
/* Put "PREFIX" (printf's) before the message of the error set: the
 * context a caller knows and the function that set it did not. */
void pmt_error__prefix(struct pmt_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Quote src under the message with a caret under [pos, pos+len). */
void pmt_error__caret(struct pmt_error *e, const char *src, int pos, int len);
static inline bool pmt_error__set(const struct pmt_error *e)
{
	return e->cls != PMT_ERR_NONE;
}
/* MSG, quoted input and caret, hint lines; each line ends in '\n'. */
void pmt_error__format(struct pmt_buf *b, const struct pmt_error *e);
/* To stderr with "pmtrace: " (control bytes escaped); nothing if unset. */
void pmt_error__print(const struct pmt_error *e);
/* 0 (none), 2 (usage) or 1 (runtime). */
int pmt_error__exit_status(const struct pmt_error *e);
void pmt_error__clear(struct pmt_error *e);

#endif
