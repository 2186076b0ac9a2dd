/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finding (mounting) tracefs, listing events, reading their formats. */
#ifndef PMT_TRACEFS_H
#define PMT_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include "util/error.h"
#include "tracefs/format.h"

/*
 * The tracefs root: an existing mount, else tracefs mounted at
 * /sys/kernel/tracing, else debugfs' tracing directory. 0, or -errno
 * with err filled.
 */
int pmt_tracefs__root(const char **root, struct pmt_error *err);

struct pmt_names {
	char **v; /* sorted "category:name" */
	size_t n, cap;
};

/* All tracepoints, from <root>/available_events; -errno with err filled.
 * The list is read once and kept (the caller does not free it) until
 * pmt_tracefs__forget(). */
int pmt_tracefs__events(const struct pmt_names **out, struct pmt_error *err);
/* The kernel functions ftrace can hook (available_filter_functions),
 * without module tags or repeats; -errno with err filled. Kept as the
 * events are. */
int pmt_tracefs__functions(const struct pmt_names **out, struct pmt_error *err);
/* Give the lists back (a session, once its probes are resolved). */
void pmt_tracefs__forget(void);
void pmt_names__free(struct pmt_names *names);
/* Append names in all matching glob pattern (fnmatch); returns count. */
size_t pmt_names__match(const struct pmt_names *all, const char *pattern, struct pmt_names *out);
int pmt_names__add(struct pmt_names *names, const char *name);
/* Parse <root>/events/<cat>/<name>/format. err gets a message. */
int pmt_tracefs__format(const char *cat, const char *name, struct pmt_format **out,
			struct pmt_error *err);

/* Split "cat:name" (or "cat/name") into parts; -EINVAL if not of that form. */
int pmt_tp_split(const char *spec, char *cat, size_t catlen, char *name, size_t namelen);

#endif
