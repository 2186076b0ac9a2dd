/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line options. Parsing is pure: no kernel access, no output. */
#ifndef PMT_OPTS_H
#define PMT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pmt_probe_kind {
	PMT_PROBE_TRACEPOINT,
};

struct pmt_probe_arg {
	enum pmt_probe_kind kind;
	const char *spec;	/* as given: "sched:sched_*" */
	const char *filter;	/* --filter after it, or NULL */
};

enum pmt_mode {
	PMT_MODE_TRACE,
	PMT_MODE_LIST,
	PMT_MODE_INFO,
	PMT_MODE_HELP,
	PMT_MODE_VERSION,
};

#define PMT_DEFAULT_PAGES 256	/* per CPU: 1 MiB with 4 KiB pages */

struct pmt_opts {
	enum pmt_mode mode;
	struct pmt_probe_arg *probes;
	int nr_probes;
	pid_t pid;		/* -p; 0 = none */
	bool system_wide;	/* -a, or the default without -p/CMD */
	const char *cpus;	/* -C list as given, NULL = all */
	const char *output;	/* -o */
	bool json;
	bool quiet;
	int verbose;
	double duration;	/* -d seconds; 0 = until stopped */
	int buffer_pages;	/* per CPU, power of two */
	char **cmd;		/* -- CMD ARGS..., NULL-terminated; NULL = none */
	const char *list_glob;	/* --list [GLOB] */
	const char *info_spec;	/* --info CAT:NAME */
};

/* Parse argv; on a usage error returns -EINVAL with a message in err. */
int pmt_opts__parse(int argc, char **argv, struct pmt_opts *o,
		    char *err, size_t errlen);
void pmt_opts__free(struct pmt_opts *o);
extern const char pmt_usage[];

/*
 * Parse a CPU list ("0-3,6") into a bitmap of nbits bits.
 * -EINVAL with a message in err.
 */
int pmt_parse_cpulist(const char *s, uint64_t *mask, int nbits,
		      char *err, size_t errlen);

#endif
