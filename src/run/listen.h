/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --listen: an HTTP endpoint serving the aggregation as Prometheus metrics. */
#ifndef PMT_LISTEN_H
#define PMT_LISTEN_H

#include "options/opts.h"
#include "run/session.h"

struct pmt_listen;

/* Bind and listen now, before anything is loaded, so that a port in use
 * or a bad address fails first (-EINVAL: a usage error); serves nothing
 * until started. */
/* profiles: the aggregation is by stack, served as profiles at
 * /debug/pprof/profile (its /metrics: pmtrace's own metrics only). */
int pmt_listen__bind(struct pmt_listen **out, const struct pmt_listen_opts *lo, bool profiles,
		     struct pmt_error *err);
/* Serve s's aggregation from a thread of its own; 0 or -errno. */
int pmt_listen__start(struct pmt_listen *l, struct pmt_session *s, struct pmt_error *err);
/* Stop serving (waits for a scrape under way) and close the socket. */
void pmt_listen__free(struct pmt_listen *l);

#endif
