// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "strutil.h"

const char pmt_usage[] =
"usage: pmtrace [OPTIONS] --tp CATEGORY:NAME [--tp ...] [-- COMMAND [ARGS...]]\n"
"       pmtrace --list [GLOB]\n"
"       pmtrace --info CATEGORY:NAME\n"
"\n"
"Probes:\n"
"  --tp CATEGORY:NAME     stream a tracepoint; globs allowed (sched:sched_*)\n"
"  --filter EXPR          keep only events of the probe before it for which\n"
"                         EXPR holds, decided in the kernel, e.g.\n"
"                         'prev_pid == 0 && next_comm ~ \"kworker*\"'\n"
"                         fields, pid tid comm cpu uid gid cgroup;\n"
"                         == != < <= > >= & ~(glob) && || ! ( )\n"
"\n"
"Targets (default: whole system):\n"
"  -a, --all-cpus         trace the whole system (also while COMMAND runs)\n"
"  -p, --pid PID          trace only the threads of process PID\n"
"  -- COMMAND [ARGS...]   run COMMAND, trace it and its children, stop when it\n"
"                         exits and exit with its status\n"
"  -C, --cpu LIST         only events on these CPUs (0-3,6)\n"
"\n"
"Output:\n"
"  -o, --output FILE      write events to FILE instead of stdout\n"
"      --json             JSON Lines: one object per event\n"
"  -q, --quiet            no start/summary messages (losses are still reported)\n"
"  -v, --verbose          libbpf and verifier messages (-vv: more)\n"
"\n"
"Run:\n"
"  -d, --duration SECS    stop after SECS seconds\n"
"      --buffer-pages N   perf ring pages per CPU, a power of two (default 256)\n"
"  -l, --list [GLOB]      list tracepoints\n"
"      --info CAT:NAME    show a tracepoint's fields\n"
"  -h, --help             this text\n"
"  -V, --version          version\n";

enum {
	OPT_TP = 256,
	OPT_JSON,
	OPT_BUFFER_PAGES,
	OPT_INFO,
	OPT_FILTER,
};

static const struct option long_opts[] = {
	{"tp", required_argument, NULL, OPT_TP},
	{"filter", required_argument, NULL, OPT_FILTER},
	{"all-cpus", no_argument, NULL, 'a'},
	{"pid", required_argument, NULL, 'p'},
	{"cpu", required_argument, NULL, 'C'},
	{"output", required_argument, NULL, 'o'},
	{"json", no_argument, NULL, OPT_JSON},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"duration", required_argument, NULL, 'd'},
	{"buffer-pages", required_argument, NULL, OPT_BUFFER_PAGES},
	{"list", no_argument, NULL, 'l'},
	{"info", required_argument, NULL, OPT_INFO},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{},
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int add_probe(struct pmt_opts *o, enum pmt_probe_kind kind, const char *spec)
{
	struct pmt_probe_arg *p = realloc(o->probes, (size_t)(o->nr_probes + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	o->probes = p;
	p[o->nr_probes].kind = kind;
	p[o->nr_probes].spec = spec;
	p[o->nr_probes].filter = NULL;
	o->nr_probes++;
	return 0;
}

void pmt_opts__free(struct pmt_opts *o)
{
	free(o->probes);
	o->probes = NULL;
	o->nr_probes = 0;
}

int pmt_opts__parse(int argc, char **argv, struct pmt_opts *o,
		    char *err, size_t errlen)
{
	bool pid_set = false, all_set = false;
	uint64_t pages;
	int64_t pid;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->buffer_pages = PMT_DEFAULT_PAGES;
	optind = 0;	/* full re-initialisation: parse may run more than once */
	opterr = 0;
	/* '+': stop at the first non-option, which starts COMMAND */
	while ((c = getopt_long(argc, argv, "+ap:C:o:qvd:lhV", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_TP:
			if (!*optarg)
				return fail(err, errlen, "--tp needs CATEGORY:NAME, e.g. --tp sched:sched_switch");
			if (add_probe(o, PMT_PROBE_TRACEPOINT, optarg))
				return -ENOMEM;
			break;
		case OPT_FILTER:
			/* like perf: a filter belongs to the probe before it */
			if (!o->nr_probes)
				return fail(err, errlen, "--filter must follow the probe it filters, e.g. --tp sched:sched_switch --filter 'prev_pid == 0'");
			if (o->probes[o->nr_probes - 1].filter)
				return fail(err, errlen, "a second --filter for %s: combine them with &&",
					    o->probes[o->nr_probes - 1].spec);
			o->probes[o->nr_probes - 1].filter = optarg;
			break;
		case 'a':
			all_set = true;
			break;
		case 'p':
			if (pmt_parse_s64(optarg, &pid) || pid <= 0 || pid > 0x3fffffff)
				return fail(err, errlen, "-p/--pid: '%s' is not a process ID (a positive integer)", optarg);
			o->pid = (pid_t)pid;
			pid_set = true;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 'o':
			if (!*optarg)
				return fail(err, errlen, "-o/--output needs a file name");
			o->output = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) ||
			    o->duration > 1e9)
				return fail(err, errlen, "-d/--duration: '%s' is not a positive number of seconds", optarg);
			break;
		case OPT_BUFFER_PAGES:
			if (pmt_parse_u64(optarg, &pages) || pages == 0 ||
			    (pages & (pages - 1)) || pages > (1u << 20))
				return fail(err, errlen, "--buffer-pages: '%s' is not a power of two between 1 and 1048576", optarg);
			o->buffer_pages = (int)pages;
			break;
		case 'l':
			o->mode = PMT_MODE_LIST;
			break;
		case OPT_INFO:
			o->mode = PMT_MODE_INFO;
			o->info_spec = optarg;
			break;
		case 'h':
			o->mode = PMT_MODE_HELP;
			return 0;
		case 'V':
			o->mode = PMT_MODE_VERSION;
			return 0;
		case ':':
		case '?':
		default:
			if (optopt && optopt < 256)
				return fail(err, errlen, "option -%c %s", optopt,
					    strchr("pCod", optopt) ? "needs an argument" : "is unknown");
			return fail(err, errlen, "option '%s' %s", argv[optind - 1],
				    strchr(argv[optind - 1], '=') || !optopt ?
				    "is unknown or takes no argument" : "needs an argument");
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];

	if (o->mode == PMT_MODE_LIST) {
		if (o->nr_probes)
			return fail(err, errlen, "--list cannot be combined with probes");
		/* the word after --list is its glob, not a command */
		if (o->cmd) {
			o->list_glob = o->cmd[0];
			if (o->cmd[1])
				return fail(err, errlen, "--list takes one GLOB, got '%s' too", o->cmd[1]);
			o->cmd = NULL;
		}
		return 0;
	}
	if (o->mode == PMT_MODE_INFO) {
		if (o->nr_probes || o->cmd)
			return fail(err, errlen, "--info takes one CATEGORY:NAME and nothing else");
		return 0;
	}
	if (!o->nr_probes)
		return fail(err, errlen, "no probe given: name one with --tp CATEGORY:NAME (see --list)");
	if (pid_set && o->cmd)
		return fail(err, errlen, "-p/--pid and a COMMAND cannot be combined: trace one or the other");
	if (pid_set && all_set)
		return fail(err, errlen, "-p/--pid and -a/--all-cpus cannot be combined");
	o->system_wide = all_set || (!pid_set && !o->cmd);
	return 0;
}

int pmt_parse_cpulist(const char *s, uint64_t *mask, int nbits,
		      char *err, size_t errlen)
{
	const char *p = s;
	char *end;
	long a, b;

	memset(mask, 0, (size_t)(nbits + 63) / 64 * sizeof(*mask));
	if (!*s)
		return fail(err, errlen, "-C/--cpu: empty CPU list; expected e.g. 0-3,6");
	while (*p) {
		if (*p < '0' || *p > '9')
			goto bad;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtol(p, &end, 10);
			p = end;
		}
		if (a > b || b >= nbits)
			return fail(err, errlen, "-C/--cpu: '%s': CPU range must be ascending and below %d", s, nbits);
		for (; a <= b; a++)
			mask[a / 64] |= 1ULL << (a % 64);
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	return fail(err, errlen, "-C/--cpu: '%s' is not a CPU list; expected e.g. 0-3,6", s);
}
