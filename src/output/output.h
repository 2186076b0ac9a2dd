/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Event writers: perf-script-like text, or JSON Lines. */
#ifndef PMT_OUTPUT_H
#define PMT_OUTPUT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "output/record.h"
#include "symbols/named.h"
#include "tracefs/format.h"
#include "util/error.h"
#include "util/json.h"
#include "util/strutil.h"

struct pmt_syms;

enum pmt_out_mode {
	PMT_OUT_TEXT,
	PMT_OUT_JSON,
};

struct pmt_output {
	int fd;
	bool own_fd;
	enum pmt_out_mode mode;
	struct pmt_buf buf;
	int err;	  /* first write error, -errno; sticky */
	const char *path; /* for messages */
	/* Pipes, sockets and terminals are written without blocking, so a
	 * signal ends a run whose reader stopped reading: wfd is a second,
	 * non-blocking open file description of the same pipe or terminal
	 * (fd's own flags are shared with other processes: left alone),
	 * sockets use MSG_DONTWAIT; -1 and false: plain blocking write(). */
	int wfd;
	bool sock;
	/* Set by pmt_output__interruptible: waits for a blocked reader run
	 * with wait_mask, and once *stop is set they last at most a grace
	 * period, after which what cannot be written is dropped. */
	const volatile sig_atomic_t *stop;
	const sigset_t *wait_mask;
	uint64_t give_up_ms; /* end of the grace period, once begun */
	/* End offsets in buf of the records it holds: to count those that
	 * are dropped. */
	size_t *ends;
	size_t nends, cap_ends;
	bool lines_pending; /* buf holds summary lines (not records) */
	uint64_t unwritten; /* records dropped: output blocked after stop */
	bool summary_cut;   /* summary lines dropped likewise */
};

/* path NULL or "-" writes to stdout. -errno with err set. */
int pmt_output__open(struct pmt_output *o, const char *path, enum pmt_out_mode mode,
		     struct pmt_error *err);
/* Let blocked writes be interrupted: while waiting for the reader the
 * signal mask is wait_mask; once *stop is set, writes wait at most
 * PMT_OUT_GRACE_MS more, then drop what is left (counted in unwritten). */
void pmt_output__interruptible(struct pmt_output *o, const volatile sig_atomic_t *stop,
			       const sigset_t *wait_mask);
#define PMT_OUT_GRACE_MS 1000
/* Format one record into the buffer (written out when large). */
void pmt_output__record(struct pmt_output *o, const struct pmt_record *r);
/* Append a ready-made line (text mode: as is; JSON mode: caller formats). */
void pmt_output__line(struct pmt_output *o, const char *s, size_t n);
/* Write out what is buffered. Returns o->err. */
int pmt_output__flush(struct pmt_output *o);
/* Write out the rest and close; 0, or -errno with err filled when a
 * write failed (a reader that went away is not a failure). */
int pmt_output__close(struct pmt_output *o, struct pmt_error *err);

/* Format into b without writing: what the unit tests compare. */
void pmt_format_text(struct pmt_buf *b, const struct pmt_record *r);
void pmt_format_json(struct pmt_buf *b, const struct pmt_record *r);

#endif
