// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "abi.h"
#include "strutil.h"

const char pmt_usage[] =
"usage: pmtrace [OPTIONS] --tp CATEGORY:NAME [--tp ...] [-- COMMAND [ARGS...]]\n"
"       pmtrace --list [GLOB]\n"
"       pmtrace --info CATEGORY:NAME\n"
"\n"
"Probes:\n"
"  --tp CATEGORY:NAME     stream a tracepoint; globs allowed (sched:sched_*)\n"
"  -e, --event EVENT      sample a PMU event: cycles, instructions, cpu-clock,\n"
"                         page-faults, L1-dcache-load-misses, rNNNN,\n"
"                         PMU/TERM=VAL,.../; modifiers :u :k\n"
"      --period N         sample every N events, or\n"
"      --freq HZ          N samples a second per CPU (default 4000)\n"
"                         sample fields: ip addr period value mode(user|kernel)\n"
"  --kprobe FUNC[+OFF]    kernel function entry; globs allowed ('vfs_*')\n"
"  --kretprobe FUNC       kernel function return\n"
"                         fields: arg0..arg5, retval; with fentry/fexit also\n"
"                         the parameters by name (count, file, ...)\n"
"      --kprobe-mode auto|fentry|kprobe  how to attach (default auto:\n"
"                         fentry/fexit where the kernel can)\n"
"  --uprobe PATH:SYM[+OFF]  user function entry (executable or library)\n"
"  --uretprobe PATH:SYM   user function return; fields arg0..arg5, retval\n"
"      --stack [kernel|user|both]  record call stacks (default both), for\n"
"                         -e events and function probes\n"
"  --filter EXPR          keep only events of the probe before it for which\n"
"                         EXPR holds, decided in the kernel, e.g.\n"
"                         'prev_pid == 0 && next_comm ~ \"kworker*\"'\n"
"                         fields, pid tid comm cpu uid gid cgroup;\n"
"                         == != < <= > >= & ~(glob) && || ! ( )\n"
"\n"
"Aggregations, done in the kernel; printed at exit or every --interval:\n"
"  --count                count events\n"
"  --sum/--avg/--min/--max/--stats EXPR\n"
"                         EXPR: a field or common value, maybe scaled: len/1024\n"
"  --hist EXPR            power-of-two histogram\n"
"  --lhist EXPR:MIN:MAX:STEP  linear histogram\n"
"  --by KEY[,KEY...]      one result per key: fields, comm pid tid cpu uid probe;\n"
"                         -e events also sym kstack ustack stack\n"
"  --folded               -e --stack: print folded stacks (comm;f1;f2 count)\n"
"  --flamegraph FILE.svg  -e --stack: write an interactive flame graph\n"
"  --latency START,END    histogram of START->END time, matched by tid or by\n"
"  --latency kprobe:FUNC  ... or of a function's calls (also uprobe:PATH:SYM)\n"
"  --match SF=EF          START's field SF equal to END's field EF\n"
"  --unit ns|us|ms|s      latency unit (default us)\n"
"  --top N                only the N largest; --interval SECS; --keep (do not\n"
"                         reset each interval); --max-keys N (default 10240)\n"
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
"  -l, --list [GLOB]      list tracepoints and PMU events\n"
"      --info CAT:NAME    show a tracepoint's fields\n"
"  -h, --help             this text\n"
"  -V, --version          version\n";

enum {
	OPT_TP = 256,
	OPT_JSON,
	OPT_BUFFER_PAGES,
	OPT_INFO,
	OPT_FILTER,
	OPT_COUNT, OPT_SUM, OPT_AVG, OPT_MIN, OPT_MAX, OPT_STATS, OPT_HIST, OPT_LHIST,
	OPT_KPROBE, OPT_KRETPROBE, OPT_UPROBE, OPT_URETPROBE, OPT_KPROBE_MODE,
	OPT_PERIOD, OPT_FREQ, OPT_STACK, OPT_FOLDED, OPT_FLAMEGRAPH,
	OPT_BY, OPT_TOP, OPT_INTERVAL, OPT_KEEP, OPT_MAX_KEYS, OPT_LATENCY, OPT_MATCH, OPT_UNIT,
};

static const struct option long_opts[] = {
	{"tp", required_argument, NULL, OPT_TP},
	{"filter", required_argument, NULL, OPT_FILTER},
	{"event", required_argument, NULL, 'e'},
	{"kprobe", required_argument, NULL, OPT_KPROBE},
	{"kretprobe", required_argument, NULL, OPT_KRETPROBE},
	{"uprobe", required_argument, NULL, OPT_UPROBE},
	{"uretprobe", required_argument, NULL, OPT_URETPROBE},
	{"kprobe-mode", required_argument, NULL, OPT_KPROBE_MODE},
	{"period", required_argument, NULL, OPT_PERIOD},
	{"freq", required_argument, NULL, OPT_FREQ},
	{"stack", optional_argument, NULL, OPT_STACK},
	{"folded", no_argument, NULL, OPT_FOLDED},
	{"flamegraph", required_argument, NULL, OPT_FLAMEGRAPH},
	{"count", no_argument, NULL, OPT_COUNT},
	{"sum", required_argument, NULL, OPT_SUM},
	{"avg", required_argument, NULL, OPT_AVG},
	{"min", required_argument, NULL, OPT_MIN},
	{"max", required_argument, NULL, OPT_MAX},
	{"stats", required_argument, NULL, OPT_STATS},
	{"hist", required_argument, NULL, OPT_HIST},
	{"lhist", required_argument, NULL, OPT_LHIST},
	{"by", required_argument, NULL, OPT_BY},
	{"top", required_argument, NULL, OPT_TOP},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"keep", no_argument, NULL, OPT_KEEP},
	{"max-keys", required_argument, NULL, OPT_MAX_KEYS},
	{"latency", required_argument, NULL, OPT_LATENCY},
	{"match", required_argument, NULL, OPT_MATCH},
	{"unit", required_argument, NULL, OPT_UNIT},
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


static const char *fn_name(enum pmt_agg_fn fn)
{
	static const char *const names[] = {
		"", "count", "sum", "avg", "min", "max", "stats", "hist", "lhist",
	};
	return names[fn];
}

static const char *long_opts_name(int c)
{
	return fn_name((enum pmt_agg_fn)(c - OPT_COUNT + PMT_FN_COUNT));
}

/* EXPR:MIN:MAX:STEP; the EXPR part may itself hold no ':'. Splits arg in
 * place only on success, so error messages can still show it whole. */
static int parse_lhist(char *arg, struct pmt_agg_opts *a)
{
	char *p[4], *c1, *c2, *c3;

	c1 = strchr(arg, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	c3 = c2 ? strchr(c2 + 1, ':') : NULL;
	if (!c3 || strchr(c3 + 1, ':') || c1 == arg)
		return -EINVAL;
	p[0] = arg;
	p[1] = c1 + 1;
	p[2] = c2 + 1;
	p[3] = c3 + 1;
	*c1 = *c2 = *c3 = '\0';
	if (
	    pmt_parse_s64(p[1], &a->lmin) || pmt_parse_s64(p[2], &a->lmax) ||
	    pmt_parse_s64(p[3], &a->lstep) || a->lmin >= a->lmax || a->lstep <= 0 ||
	    (a->lmax - a->lmin) / a->lstep > 10000) {
		*c1 = *c2 = *c3 = ':';
		return -EINVAL;
	}
	a->expr = p[0];
	return 0;
}

static const char *const kind_names[] = {
	[PMT_PROBE_TRACEPOINT] = "tracepoint",
	[PMT_PROBE_PERF] = "event",
	[PMT_PROBE_KPROBE] = "kprobe",
	[PMT_PROBE_KRETPROBE] = "kretprobe",
	[PMT_PROBE_UPROBE] = "uprobe",
	[PMT_PROBE_URETPROBE] = "uretprobe",
};

const char *pmt_probe_kind_name(enum pmt_probe_kind kind)
{
	return kind_names[kind];
}

enum pmt_probe_kind pmt_probe_kind_of(const char *spec, const char **rest)
{
	size_t i, n;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		n = strlen(kind_names[i]);
		if (i != PMT_PROBE_PERF && !strncmp(spec, kind_names[i], n) && spec[n] == ':') {
			*rest = spec + n + 1;
			return (enum pmt_probe_kind)i;
		}
	}
	*rest = !strncmp(spec, "tp:", 3) ? spec + 3 : spec;
	return PMT_PROBE_TRACEPOINT;
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
	o->agg.max_keys = PMT_DEFAULT_MAX_KEYS;
	optind = 0;	/* full re-initialisation: parse may run more than once */
	opterr = 0;
	/* '+': stop at the first non-option, which starts COMMAND */
	while ((c = getopt_long(argc, argv, "+ae:p:C:o:qvd:lhV", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_TP:
			if (!*optarg)
				return pmt_errf(err, errlen, "--tp needs CATEGORY:NAME, e.g. --tp sched:sched_switch");
			if (add_probe(o, PMT_PROBE_TRACEPOINT, optarg))
				return -ENOMEM;
			break;
		case 'e':
			if (add_probe(o, PMT_PROBE_PERF, optarg))
				return -ENOMEM;
			break;
		case OPT_KPROBE: case OPT_KRETPROBE: case OPT_UPROBE: case OPT_URETPROBE: {
			enum pmt_probe_kind k = (enum pmt_probe_kind)(c - OPT_KPROBE + PMT_PROBE_KPROBE);

			if (!*optarg)
				return pmt_errf(err, errlen, "--%s needs %s", kind_names[k],
						k < PMT_PROBE_UPROBE ? "a kernel function, e.g. vfs_read" :
						"PATH:SYMBOL, e.g. /usr/bin/bash:readline");
			if (add_probe(o, k, optarg))
				return -ENOMEM;
			break;
		}
		case OPT_KPROBE_MODE:
			if (!strcmp(optarg, "auto"))
				o->kprobe_mode = PMT_KMODE_AUTO;
			else if (!strcmp(optarg, "fentry"))
				o->kprobe_mode = PMT_KMODE_FENTRY;
			else if (!strcmp(optarg, "kprobe"))
				o->kprobe_mode = PMT_KMODE_KPROBE;
			else
				return pmt_errf(err, errlen, "--kprobe-mode: '%s': expected auto, fentry or kprobe", optarg);
			break;
		case OPT_PERIOD:
			if (pmt_parse_u64(optarg, &o->period) || !o->period)
				return pmt_errf(err, errlen, "--period: '%s' is not a positive number of events", optarg);
			break;
		case OPT_FREQ: {
			int hz;

			if (pmt_parse_int(optarg, 1, 10000000, &hz))
				return pmt_errf(err, errlen, "--freq: '%s' is not a number of samples a second (1 or more)", optarg);
			o->freq = (unsigned)hz;
			break;
		}
		case OPT_STACK:
			/* --stack takes its word only as --stack=WHICH or when
			 * the next word is one of the three */
			if (!optarg && optind < argc && (!strcmp(argv[optind], "kernel") ||
			    !strcmp(argv[optind], "user") || !strcmp(argv[optind], "both")))
				optarg = argv[optind++];
			if (!optarg || !strcmp(optarg, "both"))
				o->stack = PMT_STACK_KERNEL | PMT_STACK_USER;
			else if (!strcmp(optarg, "kernel"))
				o->stack = PMT_STACK_KERNEL;
			else if (!strcmp(optarg, "user"))
				o->stack = PMT_STACK_USER;
			else
				return pmt_errf(err, errlen, "--stack: '%s': expected kernel, user or both", optarg);
			break;
		case OPT_FOLDED:
			o->folded = true;
			break;
		case OPT_FLAMEGRAPH:
			if (!*optarg)
				return pmt_errf(err, errlen, "--flamegraph needs a file name, e.g. cpu.svg");
			o->flamegraph = optarg;
			break;
		case OPT_COUNT: case OPT_SUM: case OPT_AVG: case OPT_MIN: case OPT_MAX:
		case OPT_STATS: case OPT_HIST: case OPT_LHIST:
			if (o->agg.fn)
				return pmt_errf(err, errlen, "one aggregation at a time: --%s after --%s",
					    long_opts_name(c), fn_name(o->agg.fn));
			o->agg.fn = (enum pmt_agg_fn)(c - OPT_COUNT + PMT_FN_COUNT);
			if (c == OPT_LHIST) {
				if (parse_lhist(optarg, &o->agg))
					return pmt_errf(err, errlen, "--lhist: '%s': expected EXPR:MIN:MAX:STEP with MIN < MAX and STEP > 0, e.g. len:0:1500:100", optarg);
			} else if (c != OPT_COUNT) {
				o->agg.expr = optarg;
			}
			break;
		case OPT_BY:
			o->agg.by = optarg;
			break;
		case OPT_TOP:
			if (pmt_parse_int(optarg, 1, 1 << 30, &o->agg.top))
				return pmt_errf(err, errlen, "--top: '%s' is not a positive number", optarg);
			break;
		case OPT_INTERVAL:
			errno = 0;
			o->agg.interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->agg.interval >= 0.01) || o->agg.interval > 1e6)
				return pmt_errf(err, errlen, "--interval: '%s' is not a number of seconds (at least 0.01)", optarg);
			break;
		case OPT_KEEP:
			o->agg.keep = true;
			break;
		case OPT_MAX_KEYS:
			if (pmt_parse_int(optarg, 1, 1 << 24, &o->agg.max_keys))
				return pmt_errf(err, errlen, "--max-keys: '%s' is not a number between 1 and 16777216", optarg);
			break;
		case OPT_LATENCY: {
			char *comma = strchr(optarg, ',');
			const char *rest;
			enum pmt_probe_kind k = pmt_probe_kind_of(optarg, &rest);

			if (!comma && (k == PMT_PROBE_KPROBE || k == PMT_PROBE_UPROBE) && *rest) {
				o->agg.lat_start = optarg;	/* to its return */
				break;
			}
			if (!comma || comma == optarg || !comma[1] || strchr(comma + 1, ','))
				return pmt_errf(err, errlen, "--latency: '%s': expected START,END, e.g. syscalls:sys_enter_read,syscalls:sys_exit_read, or kprobe:FUNC or uprobe:PATH:SYMBOL", optarg);
			*comma = '\0';
			o->agg.lat_start = optarg;
			o->agg.lat_end = comma + 1;
			break;
		}
		case OPT_MATCH:
			if (!strchr(optarg, '=') || *optarg == '=' || !strchr(optarg, '=')[1])
				return pmt_errf(err, errlen, "--match: '%s': expected START_FIELD=END_FIELD, e.g. pid=next_pid", optarg);
			o->agg.match = optarg;
			break;
		case OPT_UNIT:
			if (strcmp(optarg, "ns") && strcmp(optarg, "us") && strcmp(optarg, "ms") && strcmp(optarg, "s"))
				return pmt_errf(err, errlen, "--unit: '%s': expected ns, us, ms or s", optarg);
			o->agg.unit = optarg;
			break;
		case OPT_FILTER:
			/* like perf: a filter belongs to the probe before it */
			if (!o->nr_probes)
				return pmt_errf(err, errlen, "--filter must follow the probe it filters, e.g. --tp sched:sched_switch --filter 'prev_pid == 0'");
			if (o->probes[o->nr_probes - 1].filter)
				return pmt_errf(err, errlen, "a second --filter for %s: combine them with &&",
					    o->probes[o->nr_probes - 1].spec);
			o->probes[o->nr_probes - 1].filter = optarg;
			break;
		case 'a':
			all_set = true;
			break;
		case 'p':
			if (pmt_parse_s64(optarg, &pid) || pid <= 0 || pid > 0x3fffffff)
				return pmt_errf(err, errlen, "-p/--pid: '%s' is not a process ID (a positive integer)", optarg);
			o->pid = (pid_t)pid;
			pid_set = true;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 'o':
			if (!*optarg)
				return pmt_errf(err, errlen, "-o/--output needs a file name");
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
				return pmt_errf(err, errlen, "-d/--duration: '%s' is not a positive number of seconds", optarg);
			break;
		case OPT_BUFFER_PAGES:
			if (pmt_parse_u64(optarg, &pages) || pages == 0 ||
			    (pages & (pages - 1)) || pages > (1u << 20))
				return pmt_errf(err, errlen, "--buffer-pages: '%s' is not a power of two between 1 and 1048576", optarg);
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
				return pmt_errf(err, errlen, "option -%c %s", optopt,
					    strchr("epCod", optopt) ? "needs an argument" : "is unknown");
			return pmt_errf(err, errlen, "option '%s' %s", argv[optind - 1],
				    strchr(argv[optind - 1], '=') || !optopt ?
				    "is unknown or takes no argument" : "needs an argument");
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];

	if (o->mode == PMT_MODE_LIST) {
		if (o->nr_probes)
			return pmt_errf(err, errlen, "--list cannot be combined with probes");
		/* the word after --list is its glob, not a command */
		if (o->cmd) {
			o->list_glob = o->cmd[0];
			if (o->cmd[1])
				return pmt_errf(err, errlen, "--list takes one GLOB, got '%s' too", o->cmd[1]);
			o->cmd = NULL;
		}
		return 0;
	}
	if (o->mode == PMT_MODE_INFO) {
		if (o->nr_probes || o->cmd)
			return pmt_errf(err, errlen, "--info takes one CATEGORY:NAME and nothing else");
		return 0;
	}
	if (o->agg.lat_start) {
		if (o->agg.fn && o->agg.fn != PMT_FN_HIST)
			return pmt_errf(err, errlen, "--latency makes a histogram: it takes no --%s", fn_name(o->agg.fn));
		if (o->nr_probes)
			return pmt_errf(err, errlen, "--latency takes its two probes itself: drop the --tp/-e options");
		o->agg.fn = PMT_FN_HIST;
	} else if (o->agg.match || o->agg.unit) {
		return pmt_errf(err, errlen, "--%s goes with --latency", o->agg.match ? "match" : "unit");
	}
	if (o->folded || o->flamegraph) {
		if (!o->stack)
			return pmt_errf(err, errlen, "--%s draws stacks: add --stack", o->folded ? "folded" : "flamegraph");
		if (o->agg.fn && o->agg.fn != PMT_FN_COUNT)
			return pmt_errf(err, errlen, "--%s counts stacks: it takes no --%s",
				    o->folded ? "folded" : "flamegraph", fn_name(o->agg.fn));
		if (o->agg.interval > 0 && o->flamegraph)
			return pmt_errf(err, errlen, "--flamegraph writes one picture at exit: drop --interval");
		/* one count per (comm, stack) */
		o->agg.fn = PMT_FN_COUNT;
		if (!o->agg.by)
			o->agg.by = "comm,stack";
	}
	for (int i = 0; i < o->nr_probes; i++) {
		enum pmt_probe_kind k = o->probes[i].kind;

		if (k != PMT_PROBE_PERF && (o->period || o->freq))
			return pmt_errf(err, errlen, "--%s applies to PMU events (-e); --%s %s has none",
				    o->period ? "period" : "freq", k ? kind_names[k] : "tp", o->probes[i].spec);
		if (k == PMT_PROBE_TRACEPOINT && o->stack)
			return pmt_errf(err, errlen, "--stack applies to -e events and function probes (--kprobe, --uprobe, ...); --tp %s has none",
				    o->probes[i].spec);
	}
	if (o->period && o->freq)
		return pmt_errf(err, errlen, "--period and --freq cannot be combined: sample by count or by rate");
	if (!o->period && !o->freq)
		o->freq = PMT_DEFAULT_FREQ;
	if ((o->agg.by || o->agg.top || o->agg.interval > 0 || o->agg.keep) && !o->agg.fn)
		return pmt_errf(err, errlen, "--by, --top, --interval and --keep need an aggregation: --count, --sum, --hist, ...");
	if (!o->nr_probes && !o->agg.lat_start)
		return pmt_errf(err, errlen, "no probe given: name one with --tp CATEGORY:NAME or -e EVENT (see --list)");
	if (pid_set && o->cmd)
		return pmt_errf(err, errlen, "-p/--pid and a COMMAND cannot be combined: trace one or the other");
	if (pid_set && all_set)
		return pmt_errf(err, errlen, "-p/--pid and -a/--all-cpus cannot be combined");
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
		return pmt_errf(err, errlen, "-C/--cpu: empty CPU list; expected e.g. 0-3,6");
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
			return pmt_errf(err, errlen, "-C/--cpu: '%s': CPU range must be ascending and below %d", s, nbits);
		for (; a <= b; a++)
			mask[a / 64] |= 1ULL << (a % 64);
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	return pmt_errf(err, errlen, "-C/--cpu: '%s' is not a CPU list; expected e.g. 0-3,6", s);
}
