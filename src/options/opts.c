// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Command line. One table (opt_defs) names every option, whether it takes
 * an argument and the handler that stores it; getopt_long's tables are
 * made from it. Checks that span several options run after the parse, in
 * check_*(). Pure: no kernel access, no output (errors go into err).
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "util/grow.h"
#include "filter/lex.h"
#include "lang/program.h"
#include "options/opts.h"
#include "abi.h"
#include "util/strutil.h"

/* The aggregation functions: option name = JSON name. */
static const char *const agg_fn_names[] = {
	[PMT_FN_NONE] = "",	  [PMT_FN_COUNT] = "count", [PMT_FN_SUM] = "sum",
	[PMT_FN_AVG] = "avg",	  [PMT_FN_MIN] = "min",	    [PMT_FN_MAX] = "max",
	[PMT_FN_STATS] = "stats", [PMT_FN_HIST] = "hist",   [PMT_FN_LHIST] = "lhist",
};

const char *pmt_agg_fn__name(enum pmt_agg_fn fn)
{
	return fn < sizeof(agg_fn_names) / sizeof(agg_fn_names[0]) ? agg_fn_names[fn] : "?";
}

/* The table of kinds (kinds.h), as the options read it. */
static const struct kind_def {
	const char *prefix, *option, *needs;
	enum pmt_probe_kind ret;
} kinds[] = {
#define KIND_DEF(id, prefix, option, s, arg, needs, help, ret, prov) \
	[PMT_PROBE_##id] = {prefix, option, needs, PMT_PROBE_##ret},
	PMT_PROBE_KINDS(KIND_DEF)
#undef KIND_DEF
};

const char *pmt_probe_kind_name(enum pmt_probe_kind kind)
{
	return kinds[kind].prefix ? kinds[kind].prefix : kinds[kind].option;
}

enum pmt_probe_kind pmt_probe_kind_return(enum pmt_probe_kind kind)
{
	return kinds[kind].ret;
}

enum pmt_probe_kind pmt_probe_kind_of(const char *spec, const char **rest)
{
	size_t i, n;

	for (i = 0; i < PMT_PROBE__COUNT; i++) {
		if (!kinds[i].prefix)
			continue;
		n = strlen(kinds[i].prefix);
		if (!strncmp(spec, kinds[i].prefix, n) && spec[n] == ':') {
			*rest = spec + n + 1;
			return (enum pmt_probe_kind)i;
		}
	}
	*rest = !strncmp(spec, "tp:", 3) ? spec + 3 : spec;
	return PMT_PROBE_TRACEPOINT;
}

/* The parse in progress. */
struct optctx {
	struct pmt_opts *o;
	const struct opt_def *def; /* the option being handled */
	int argc;
	char **argv;
	struct pmt_error *err;
	bool pid_set, all_set, pages_set;
	int bare_stack_at; /* argv index after a --stack with no word */
};

typedef int (*opt_fn)(struct optctx *c, char *arg);

struct opt_def {
	const char *name; /* long name */
	char short_name;  /* or 0 */
	int has_arg;	  /* no_argument, required_argument, optional_argument */
	opt_fn fn;
	size_t flag; /* opt_flag: offset of the bool in struct pmt_opts */
	int value;   /* opt_mode: enum pmt_mode; opt_probe: enum pmt_probe_kind;
		      * opt_agg: enum pmt_agg_fn */
};

#define ERR(c, ...) pmt_error__usage((c)->err, __VA_ARGS__)

static int add_probe(struct pmt_opts *o, enum pmt_probe_kind kind, const char *spec)
{
	struct pmt_probe_arg *p =
		pmt_grow(o->probes, &o->probes_cap, (size_t)o->nr_probes, sizeof(*p), 8);

	if (!p)
		return -ENOMEM;
	o->probes = p;
	p[o->nr_probes].kind = kind;
	p[o->nr_probes].spec = spec;
	p[o->nr_probes].filter = NULL;
	p[o->nr_probes].printf = NULL;
	p[o->nr_probes].where = NULL;
	p[o->nr_probes].stmts = NULL;
	p[o->nr_probes].stmts_only = false;
	p[o->nr_probes].print_guard = NULL;
	p[o->nr_probes].nupd = 0;
	p[o->nr_probes].block = -1;
	o->nr_probes++;
	return 0;
}

/* A switch with no argument: sets the bool the table names. */
static int opt_flag(struct optctx *c, char *arg)
{
	(void)arg;
	*(bool *)((char *)c->o + c->def->flag) = true;
	return 0;
}

/* --list, --help, --version: what pmtrace does instead of tracing */
static int opt_mode(struct optctx *c, char *arg)
{
	(void)arg;
	c->o->mode = (enum pmt_mode)c->def->value;
	return 0;
}

/* --- probes --------------------------------------------------------------- */

/* Is -e's argument a bpftrace program (a block, not perf's {a,b} group)? */
static bool is_program(const char *arg)
{
	while (*arg == ' ' || *arg == '\t' || *arg == '\n')
		arg++;
	return *arg && *arg != '{' && strchr(arg, '{');
}

/* --tp, -e, --kprobe, ...: the option table gives the kind */
static int opt_probe(struct optctx *c, char *arg)
{
	enum pmt_probe_kind k = (enum pmt_probe_kind)c->def->value;

	if (k == PMT_PROBE_PERF && is_program(arg)) {
		if (c->o->program)
			return ERR(c, "one program a run: -e 'PROGRAM' given twice");
		c->o->program = arg;
		c->o->program_name = "-e";
		return 0;
	}
	if (!*arg && kinds[k].needs)
		return ERR(c, "--%s needs %s", kinds[k].option, kinds[k].needs);
	return add_probe(c->o, k, arg);
}

/* --min-block/--max-block US: --offcpu's bounds, as offcputime -m/-M */
static int opt_block(struct optctx *c, char *arg)
{
	bool max = c->def->name[1] == 'a';
	uint64_t v;

	if (pmt_parse_u64(arg, &v) || (max && !v))
		return ERR(c, "--%s: '%s' is not a number of microseconds%s", c->def->name, arg,
			   max ? " above 0" : "");
	if (max)
		c->o->agg.max_block = v;
	else
		c->o->agg.min_block = v;
	return 0;
}

/* --state blocked|runnable|all: which off-CPU time --offcpu counts */
static int opt_state(struct optctx *c, char *arg)
{
	static const char *const states[] = {"all", "blocked", "runnable"};
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(arg, states[i])) {
			c->o->agg.offcpu_state = i;
			return 0;
		}
	return ERR(c,
		   "--state: '%s': expected blocked (sleeping, waiting on I/O or a lock), "
		   "runnable (preempted, waiting for a CPU) or all",
		   arg);
}

/* --str F[,G]: the fields whose addresses' strings each streamed event
 * prints (checked against the probes' fields by the session) */
static int opt_str(struct optctx *c, char *arg)
{
	const char *s = arg;
	int n = 0;

	for (; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ','))
		if (strcspn(s, ",") == 0 || ++n > PMT_STREAM_STRS)
			break;
	if (!*arg || *s || arg[strlen(arg) - 1] == ',')
		return ERR(c,
			   "--str '%s': expected one or %d fields holding string addresses, "
			   "e.g. --str filename or --str arg0,arg2",
			   arg, PMT_STREAM_STRS);
	c->o->str_args = arg;
	return 0;
}

static int opt_kprobe_mode(struct optctx *c, char *arg)
{
	static const char *const modes[] = {
		[PMT_KMODE_AUTO] = "auto",
		[PMT_KMODE_FENTRY] = "fentry",
		[PMT_KMODE_KPROBE] = "kprobe",
	};
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(arg, modes[i])) {
			c->o->kprobe_mode = (enum pmt_kprobe_mode)i;
			return 0;
		}
	}
	return ERR(c, "--kprobe-mode: '%s': expected auto, fentry or kprobe", arg);
}

/* An option of the probe before it (like perf's --filter): *slot of
 * that probe's, once. */
static int probe_option(struct optctx *c, const char *opt, const char **slot, char *arg,
			const char *example, const char *again)
{
	struct pmt_opts *o = c->o;

	if (!slot)
		return ERR(c, "%s must follow the probe it applies to, e.g. %s", opt, example);
	if (*slot)
		return ERR(c, "a second %s for %s: %s", opt, o->probes[o->nr_probes - 1].spec,
			   again);
	*slot = arg;
	return 0;
}

static int opt_filter(struct optctx *c, char *arg)
{
	struct pmt_opts *o = c->o;

	return probe_option(
		c, "--filter", o->nr_probes ? &o->probes[o->nr_probes - 1].filter : NULL, arg,
		"--tp sched:sched_switch --filter 'prev_pid == 0'", "combine them with &&");
}

static int opt_printf(struct optctx *c, char *arg)
{
	struct pmt_opts *o = c->o;

	return probe_option(c, "--printf",
			    o->nr_probes ? &o->probes[o->nr_probes - 1].printf : NULL, arg,
			    "--tp syscalls:sys_enter_openat --printf '\"%s\\n\", str(filename)'",
			    "one format can say it all");
}

/* --- PMU sampling and stacks ----------------------------------------------- */

static int opt_period(struct optctx *c, char *arg)
{
	if (pmt_parse_u64(arg, &c->o->period) || !c->o->period)
		return ERR(c, "--period: '%s' is not a positive number of events", arg);
	return 0;
}

static int opt_freq(struct optctx *c, char *arg)
{
	int hz;

	if (pmt_parse_int(arg, 1, 10000000, &hz))
		return ERR(c, "--freq: '%s' is not a number of samples a second (1 or more)", arg);
	c->o->freq = (unsigned)hz;
	return 0;
}

static int opt_stack(struct optctx *c, char *arg)
{
	/* --stack takes its word only as --stack=WHICH or when the next
	 * word is one of the three */
	if (!arg && optind < c->argc &&
	    (!strcmp(c->argv[optind], "kernel") || !strcmp(c->argv[optind], "user") ||
	     !strcmp(c->argv[optind], "both")))
		arg = c->argv[optind++];
	else if (!arg)
		c->bare_stack_at = optind; /* the word after: maybe a COMMAND */
	if (!arg || !strcmp(arg, "both"))
		c->o->stack = PMT_STACK_KERNEL | PMT_STACK_USER;
	else if (!strcmp(arg, "kernel"))
		c->o->stack = PMT_STACK_KERNEL;
	else if (!strcmp(arg, "user"))
		c->o->stack = PMT_STACK_USER;
	else
		return ERR(c, "--stack: '%s': expected kernel, user or both", arg);
	return 0;
}

static int opt_unwind(struct optctx *c, char *arg)
{
	if (strcmp(arg, "fp") && strcmp(arg, "dwarf"))
		return ERR(c, "--unwind: '%s': expected fp or dwarf", arg);
	c->o->unwind_fp = !strcmp(arg, "fp");
	return 0;
}

static int opt_flamegraph(struct optctx *c, char *arg)
{
	if (!*arg)
		return ERR(c, "--flamegraph needs a file name, e.g. cpu.svg");
	c->o->agg.flamegraph = arg;
	return 0;
}

static int opt_counter(struct optctx *c, char *arg)
{
	if (!*arg)
		return ERR(c, "--counter needs an event, e.g. page-faults (see --list)");
	if (c->o->nr_counters >= PMT_MAX_COUNTERS)
		return ERR(c, "--counter: at most %d counter%s a run", PMT_MAX_COUNTERS,
			   PMT_MAX_COUNTERS == 1 ? "" : "s");
	c->o->counters[c->o->nr_counters++] = arg;
	return 0;
}

static int opt_debug_cache(struct optctx *c, char *arg)
{
	if (!*arg)
		return ERR(c, "--debug-cache needs a directory, e.g. /var/cache/pmtrace");
	c->o->debug_cache = arg;
	return 0;
}

static int opt_pprof(struct optctx *c, char *arg)
{
	if (!*arg)
		return ERR(c, "--pprof needs a file name, e.g. cpu.pb.gz");
	c->o->agg.pprof = arg;
	return 0;
}

/* [ADDR:]PORT, ADDR a name, an IPv4 address or [IPv6] */
static int opt_listen(struct optctx *c, char *arg)
{
	struct pmt_listen_opts *l = &c->o->listen;
	const char *colon = strrchr(arg, ':'), *port = colon ? colon + 1 : arg;
	size_t hl = colon ? (size_t)(colon - arg) : 0;
	const char *host = arg;
	uint64_t v;

	if (hl && arg[0] == '[' && arg[hl - 1] == ']') {
		host++;
		hl -= 2;
	}
	if (pmt_parse_u64(port, &v) || v > 65535 || hl >= sizeof(l->host) ||
	    (colon && memchr(host, ':', hl) && arg[0] != '['))
		return ERR(c,
			   "--listen: '%s': expected [ADDR:]PORT, e.g. 9464, 0.0.0.0:9464 or "
			   "[::1]:9464 (port 0: any free port)",
			   arg);
	memcpy(l->host, host, hl);
	l->host[hl] = '\0';
	l->addr = arg;
	l->port = (int)v;
	return 0;
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]* */
static int opt_metric(struct optctx *c, char *arg)
{
	const char *p;

	for (p = arg; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		      *p == ':' || (p > arg && *p >= '0' && *p <= '9')))
			break;
	if (!*arg || *p)
		return ERR(c,
			   "--metric: '%s' is not a metric name: letters, digits, '_' and ':', "
			   "not starting with a digit, e.g. myapp_reads",
			   arg);
	c->o->listen.metric = arg;
	return 0;
}

static int opt_web_config(struct optctx *c, char *arg)
{
	c->o->listen.web_config = arg;
	return 0;
}

/* --- aggregations ----------------------------------------------------------- */

/* EXPR:MIN:MAX:STEP, the last three ':' the numbers' (EXPR may hold a
 * ?: of its own: runqlen.bt's). arg is left as it is (error messages
 * show it whole); EXPR is copied. */
static int parse_lhist(const char *arg, struct pmt_agg_opts *a)
{
	char *copy = strdup(arg), *p[4];
	uint64_t width, buckets;
	int i, err = -EINVAL;

	if (!copy)
		return -ENOMEM;
	p[0] = copy;
	for (i = 3; i > 0; i--) {
		p[i] = strrchr(copy, ':');
		if (!p[i])
			goto out;
		*p[i]++ = '\0';
	}
	if (!*p[0] || pmt_parse_s64(p[1], &a->lmin) || pmt_parse_s64(p[2], &a->lmax) ||
	    pmt_parse_s64(p[3], &a->lstep) || a->lmin >= a->lmax || a->lstep <= 0)
		goto out;
	/* in unsigned arithmetic: MAX - MIN can exceed INT64_MAX */
	width = (uint64_t)a->lmax - (uint64_t)a->lmin;
	buckets = width / (uint64_t)a->lstep + (width % (uint64_t)a->lstep != 0);
	if (buckets > PMT_LHIST_MAX_BUCKETS) {
		err = -E2BIG;
		goto out;
	}
	a->lbuckets = (uint32_t)buckets;
	a->expr = a->expr_copy = strdup(p[0]);
	err = a->expr ? 0 : -ENOMEM;
out:
	free(copy);
	return err;
}

/* --count, --sum EXPR, ... --lhist SPEC: the table gives the function */
static int opt_agg(struct optctx *c, char *arg)
{
	struct pmt_agg_opts *a = &c->o->agg;
	enum pmt_agg_fn fn = (enum pmt_agg_fn)c->def->value;
	int ret;

	if (a->fn)
		return ERR(c, "one aggregation at a time: --%s after --%s", agg_fn_names[fn],
			   agg_fn_names[a->fn]);
	a->fn = fn;
	ret = fn == PMT_FN_LHIST ? parse_lhist(arg, a) : 0;
	if (ret == -E2BIG)
		return ERR(
			c,
			"--lhist: '%s': more than %d buckets from MIN to MAX: take a larger STEP",
			arg, PMT_LHIST_MAX_BUCKETS);
	if (ret)
		return ERR(
			c,
			"--lhist: '%s': expected EXPR:MIN:MAX:STEP with MIN < MAX and STEP > 0, e.g. len:0:1500:100",
			arg);
	if (fn != PMT_FN_LHIST && fn != PMT_FN_COUNT)
		a->expr = arg;
	return 0;
}

static int opt_by(struct optctx *c, char *arg)
{
	const char *w;

	/* no empty word: "", ",,", "comm," */
	for (w = arg;; w++) {
		if (*w == ',' || !*w) {
			if (w == arg || w[-1] == ',')
				return ERR(
					c,
					"--by: '%s': expected KEY[,KEY...] with no empty key, e.g. comm,pid",
					arg);
			if (!*w)
				break;
		}
	}
	c->o->agg.by = arg;
	return 0;
}

static int opt_top(struct optctx *c, char *arg)
{
	if (pmt_parse_int(arg, 1, 1 << 30, &c->o->agg.top))
		return ERR(c, "--top: '%s' is not a positive number", arg);
	return 0;
}

/* A number of seconds in [min, max]; -EINVAL. */
static int parse_seconds(const char *arg, double min, double max, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !(*out >= min) || *out > max)
		return -EINVAL;
	return 0;
}

static int opt_interval(struct optctx *c, char *arg)
{
	if (parse_seconds(arg, 0.01, 1e6, &c->o->agg.interval))
		return ERR(c, "--interval: '%s' is not a number of seconds (at least 0.01)", arg);
	return 0;
}

static int opt_max_keys(struct optctx *c, char *arg)
{
	if (pmt_parse_int(arg, 1, 1 << 24, &c->o->agg.max_keys))
		return ERR(c, "--max-keys: '%s' is not a number between 1 and 16777216", arg);
	return 0;
}

static int opt_str_len(struct optctx *c, char *arg)
{
	if (pmt_parse_int(arg, 2, PMT_STR_MAX, &c->o->agg.str_len))
		return ERR(c, "--str-len: '%s' is not a number of bytes between 2 and %d", arg,
			   PMT_STR_MAX);
	return 0;
}

static int opt_latency(struct optctx *c, char *arg)
{
	char *comma = strchr(arg, ',');
	const char *rest;
	enum pmt_probe_kind k = pmt_probe_kind_of(arg, &rest);

	if (!comma && pmt_probe_kind_return(k) != PMT_PROBE_NONE && *rest) {
		c->o->agg.lat_start = arg; /* to its return */
		return 0;
	}
	if (!comma || comma == arg || !comma[1] || strchr(comma + 1, ','))
		return ERR(
			c,
			"--latency: '%s': expected START,END, e.g. syscalls:sys_enter_read,syscalls:sys_exit_read, or kprobe:FUNC or uprobe:PATH:SYMBOL",
			arg);
	*comma = '\0';
	c->o->agg.lat_start = arg;
	c->o->agg.lat_end = comma + 1;
	return 0;
}

static int opt_match(struct optctx *c, char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return ERR(c, "--match: '%s': expected START_FIELD=END_FIELD, e.g. pid=next_pid",
			   arg);
	c->o->agg.match = arg;
	return 0;
}

static int opt_unit(struct optctx *c, char *arg)
{
	if (strcmp(arg, "ns") && strcmp(arg, "us") && strcmp(arg, "ms") && strcmp(arg, "s"))
		return ERR(c, "--unit: '%s': expected ns, us, ms or s", arg);
	c->o->agg.unit = arg;
	return 0;
}

/* --- targets, output, run ---------------------------------------------------- */

static int opt_all(struct optctx *c, char *arg)
{
	(void)arg;
	c->all_set = true;
	return 0;
}

/* -c CMD: bpftrace's command, its words split at spaces */
static int opt_command(struct optctx *c, char *arg)
{
	char **w, *save = NULL, *tok, *copy;
	size_t n = 0;

	if (c->o->cmd_words)
		return ERR(c, "-c/--command given twice");
	w = calloc(strlen(arg) / 2 + 2, sizeof(*w));
	copy = strdup(arg);
	if (!w || !copy) {
		free(w);
		free(copy);
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		w[n++] = tok;
	if (!n) {
		free(w);
		free(copy);
		return ERR(c, "-c/--command: expected a COMMAND, e.g. -c 'ls -l'");
	}
	c->o->cmd_words = w; /* w[0] owns the copy */
	return 0;
}

static int opt_pid(struct optctx *c, char *arg)
{
	int64_t pid;

	if (pmt_parse_s64(arg, &pid) || pid <= 0 || pid > 0x3fffffff)
		return ERR(c, "-p/--pid: '%s' is not a process ID (a positive integer)", arg);
	c->o->pid = (pid_t)pid;
	c->pid_set = true;
	return 0;
}

static int opt_cpu(struct optctx *c, char *arg)
{
	c->o->cpus = arg;
	return 0;
}

static int opt_cgroup(struct optctx *c, char *arg)
{
	if (!*arg)
		return ERR(c, "--cgroup needs a cgroup, e.g. /system.slice/nginx.service");
	c->o->cgroup = arg;
	return 0;
}

static int opt_output(struct optctx *c, char *arg)
{
	if (!*arg)
		return ERR(c, "-o/--output needs a file name");
	c->o->output = arg;
	return 0;
}

static int opt_verbose(struct optctx *c, char *arg)
{
	(void)arg;
	c->o->verbose++;
	return 0;
}

static int opt_duration(struct optctx *c, char *arg)
{
	if (parse_seconds(arg, 0, 1e9, &c->o->duration) || !(c->o->duration > 0))
		return ERR(c, "-d/--duration: '%s' is not a positive number of seconds", arg);
	return 0;
}

static int opt_buffer_pages(struct optctx *c, char *arg)
{
	uint64_t pages;

	if (pmt_parse_u64(arg, &pages) || pages == 0 || (pages & (pages - 1)) || pages > (1u << 20))
		return ERR(c, "--buffer-pages: '%s' is not a power of two between 1 and 1048576",
			   arg);
	c->o->buffer_pages = (int)pages;
	c->o->buffer_pages_set = true;
	c->pages_set = true;
	return 0;
}

static int opt_info(struct optctx *c, char *arg)
{
	c->o->mode = PMT_MODE_INFO;
	c->o->info_spec = arg;
	return 0;
}

/* Every option. The man page (tools/man/pmtrace.8.scd), --help (usage.c) and
 * the bash completion (tools/completion/pmtrace) list the same names. */
#define OPT(n, s, a, f)                                           \
	{                                                         \
		.name = n, .short_name = s, .has_arg = a, .fn = f \
	}
#define FLAG(n, s, field)                                                           \
	{                                                                           \
		.name = n, .short_name = s, .has_arg = no_argument, .fn = opt_flag, \
		.flag = offsetof(struct pmt_opts, field)                            \
	}
#define MODE(n, s, m)                                                                          \
	{                                                                                      \
		.name = n, .short_name = s, .has_arg = no_argument, .fn = opt_mode, .value = m \
	}

#define PROBE(id, prefix, option, s, arg, needs, help, ret, prov) \
	{.name = option,                                          \
	 .short_name = s,                                         \
	 .has_arg = required_argument,                            \
	 .fn = opt_probe,                                         \
	 .value = PMT_PROBE_##id},
#define AGG(n, a, f)                                               \
	{                                                          \
		.name = n, .has_arg = a, .fn = opt_agg, .value = f \
	}

static const struct opt_def opt_defs[] = {
	PMT_PROBE_KINDS(PROBE) /* --tp, -e, --kprobe, ... */
	OPT("filter", 0, required_argument, opt_filter),
	OPT("printf", 0, required_argument, opt_printf),
	OPT("str", 0, required_argument, opt_str),
	OPT("str-len", 0, required_argument, opt_str_len),
	OPT("kprobe-mode", 0, required_argument, opt_kprobe_mode),
	OPT("period", 0, required_argument, opt_period),
	OPT("freq", 0, required_argument, opt_freq),
	OPT("stack", 0, optional_argument, opt_stack),
	OPT("unwind", 0, required_argument, opt_unwind),
	FLAG("folded", 0, agg.folded),
	FLAG("no-demangle", 0, no_demangle),
	FLAG("no-inline", 0, no_inline),
	FLAG("no-python", 0, no_python),
	OPT("debug-cache", 0, required_argument, opt_debug_cache),
	FLAG("no-debug-cache", 0, no_debug_cache),
	FLAG("offcpu", 0, agg.offcpu),
	OPT("min-block", 0, required_argument, opt_block),
	OPT("max-block", 0, required_argument, opt_block),
	OPT("state", 0, required_argument, opt_state),
	OPT("flamegraph", 0, required_argument, opt_flamegraph),
	OPT("pprof", 0, required_argument, opt_pprof),
	AGG("count", no_argument, PMT_FN_COUNT),
	AGG("sum", required_argument, PMT_FN_SUM),
	AGG("avg", required_argument, PMT_FN_AVG),
	AGG("min", required_argument, PMT_FN_MIN),
	AGG("max", required_argument, PMT_FN_MAX),
	AGG("stats", required_argument, PMT_FN_STATS),
	AGG("hist", required_argument, PMT_FN_HIST),
	AGG("lhist", required_argument, PMT_FN_LHIST),
	OPT("by", 0, required_argument, opt_by),
	OPT("top", 0, required_argument, opt_top),
	OPT("interval", 0, required_argument, opt_interval),
	FLAG("keep", 0, agg.keep),
	OPT("max-keys", 0, required_argument, opt_max_keys),
	OPT("latency", 0, required_argument, opt_latency),
	FLAG("stat", 0, stat),
	OPT("counter", 0, required_argument, opt_counter),
	OPT("match", 0, required_argument, opt_match),
	OPT("unit", 0, required_argument, opt_unit),
	OPT("listen", 0, required_argument, opt_listen),
	OPT("metric", 0, required_argument, opt_metric),
	OPT("web-config", 0, required_argument, opt_web_config),
	OPT("all-cpus", 'a', no_argument, opt_all),
	OPT("pid", 'p', required_argument, opt_pid),
	OPT("command", 'c', required_argument, opt_command),
	OPT("cpu", 'C', required_argument, opt_cpu),
	OPT("cgroup", 0, required_argument, opt_cgroup),
	OPT("output", 'o', required_argument, opt_output),
	FLAG("json", 0, json),
	FLAG("raw", 0, raw),
	FLAG("quiet", 'q', quiet),
	OPT("verbose", 'v', no_argument, opt_verbose),
	OPT("duration", 'd', required_argument, opt_duration),
	OPT("buffer-pages", 0, required_argument, opt_buffer_pages),
	MODE("list", 'l', PMT_MODE_LIST),
	OPT("info", 0, required_argument, opt_info),
	MODE("help", 'h', PMT_MODE_HELP),
	MODE("version", 'V', PMT_MODE_VERSION),
};
#define NR_OPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))
#define LONG_ONLY 256 /* getopt value of opt_defs[i] without a short name: 256 + i */

const char *pmt_opts__name(size_t i)
{
	return i < NR_OPTS ? opt_defs[i].name : NULL;
}

/* getopt_long's tables, from opt_defs: '+' stops at the first
 * non-option, which starts COMMAND. */
static void getopt_tables(struct option *lo, char *shorts)
{
	size_t i, n = 0;

	shorts[n++] = '+';
	for (i = 0; i < NR_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];

		lo[i] = (struct option){d->name, d->has_arg, NULL,
					d->short_name ? d->short_name : (int)(LONG_ONLY + i)};
		if (d->short_name) {
			shorts[n++] = d->short_name;
			if (d->has_arg == required_argument)
				shorts[n++] = ':';
		}
	}
	lo[NR_OPTS] = (struct option){0};
	shorts[n] = '\0';
}

static const struct opt_def *opt_lookup(int c)
{
	size_t i;

	if (c >= LONG_ONLY && (size_t)(c - LONG_ONLY) < NR_OPTS)
		return &opt_defs[c - LONG_ONLY];
	for (i = 0; c > 0 && i < NR_OPTS; i++)
		if (opt_defs[i].short_name == c)
			return &opt_defs[i];
	return NULL;
}

static int unknown_option(struct optctx *c)
{
	const struct opt_def *d = opt_lookup(optopt);
	const char *word = c->argv[optind - 1];

	if (optopt && optopt < LONG_ONLY)
		return ERR(c, "option -%c %s", optopt, d ? "needs an argument" : "is unknown");
	return ERR(c, "option '%s' %s", word,
		   strchr(word, '=') || !optopt ? "is unknown or takes no argument"
						: "needs an argument");
}

/* --list and --info take no probes; the word after --list is its glob. */
static int check_modes(struct optctx *c)
{
	struct pmt_opts *o = c->o;

	if (o->mode == PMT_MODE_LIST) {
		if (o->nr_probes)
			return ERR(c, "--list cannot be combined with probes");
		if (o->cmd) {
			o->list_glob = o->cmd[0];
			if (o->cmd[1])
				return ERR(c, "--list takes one GLOB, got '%s' too", o->cmd[1]);
			o->cmd = NULL;
		}
	} else if (o->mode == PMT_MODE_INFO && (o->nr_probes || o->cmd)) {
		return ERR(c, "--info takes one CATEGORY:NAME and nothing else");
	}
	return 0;
}

/* --offcpu: a sum of microseconds off the CPU, by stack (both unless
 * --stack says), over sched:sched_switch, which it takes itself. */
static int check_offcpu(struct optctx *c)
{
	struct pmt_agg_opts *a = &c->o->agg;

	if (!a->offcpu) {
		if (a->min_block || a->max_block || a->offcpu_state)
			return ERR(c, "--%s goes with --offcpu",
				   a->offcpu_state ? "state"
				   : a->min_block  ? "min-block"
						   : "max-block");
		return 0;
	}
	if (c->o->nr_probes || a->lat_start || c->o->nr_counters)
		return ERR(c, "--offcpu takes sched:sched_switch itself: drop the %s",
			   c->o->nr_probes ? "probes (--tp, -e, ...)"
			   : a->lat_start  ? "--latency"
					   : "--counter");
	if (a->fn && a->fn != PMT_FN_SUM)
		return ERR(c, "--offcpu sums the time off the CPU: it takes no --%s",
			   agg_fn_names[a->fn]);
	if (a->max_block && a->min_block > a->max_block)
		return ERR(c, "--min-block %llu is above --max-block %llu",
			   (unsigned long long)a->min_block, (unsigned long long)a->max_block);
	a->fn = PMT_FN_SUM;
	a->expr = NULL;
	if (!c->o->stack)
		c->o->stack = PMT_STACK_KERNEL | PMT_STACK_USER;
	if (!a->by)
		a->by = "comm,stack";
	return 0;
}

static int check_aggregation(struct optctx *c)
{
	struct pmt_agg_opts *a = &c->o->agg;
	const char *pic = a->folded ? "folded" : a->flamegraph ? "flamegraph" : "pprof";

	a->json = c->o->json;
	if (check_offcpu(c))
		return -EINVAL;
	if (a->lat_start) {
		const char *what = a->ncounters > 1 ? "value" : a->counter ? a->counter : "latency";

		/* the value aggregated is what --latency measures, by name */
		if (a->fn && a->fn != PMT_FN_COUNT && a->expr && strcmp(a->expr, what) &&
		    strcmp(a->expr, "value"))
			return ERR(c,
				   "--%s %s: --latency measures %s, the one value it aggregates "
				   "(--%s %s%s)",
				   agg_fn_names[a->fn], a->expr, what, agg_fn_names[a->fn], what,
				   a->fn == PMT_FN_LHIST ? ":MIN:MAX:STEP" : "");
		if (c->o->nr_probes)
			return ERR(
				c,
				"--latency takes its two probes itself: drop the --tp/-e options");
		a->expr = NULL;
		if (!a->fn)
			a->fn = PMT_FN_HIST;
	} else if (a->match || a->unit) {
		return ERR(c, "--%s goes with --latency", a->match ? "match" : "unit");
	}
	/* --listen with stacks: profiles served (/debug/pprof/profile) */
	if (a->folded || a->flamegraph || a->pprof ||
	    (c->o->listen.addr && c->o->stack && !a->fn && !a->offcpu)) {
		if (!c->o->stack)
			return ERR(c, "--%s draws stacks: add --stack", pic);
		if (a->fn && a->fn != PMT_FN_COUNT && !a->offcpu)
			return ERR(c, "--%s counts stacks: it takes no --%s", pic,
				   agg_fn_names[a->fn]);
		if (c->o->json && (a->folded || a->flamegraph))
			return ERR(
				c,
				"--%s writes stacks in its own format, not JSON: drop --json "
				"(--json prints the counts by stack as JSON: --count --by stack)",
				a->folded ? "folded" : "flamegraph");
		if (a->interval > 0 && (a->flamegraph || a->pprof))
			return ERR(c, "--%s writes one file at exit: drop --interval",
				   a->flamegraph ? "flamegraph" : "pprof");
		/* one count (--offcpu: time) per (comm, stack) */
		if (!a->offcpu)
			a->fn = PMT_FN_COUNT;
		if (!a->by)
			a->by = "comm,stack";
	}
	if (c->o->listen.web_config && !c->o->listen.addr)
		return ERR(c,
			   "--web-config secures what --listen serves: add --listen [ADDR:]PORT");
	if (c->o->listen.metric && !c->o->listen.addr)
		return ERR(c, "--metric names what --listen serves: add --listen [ADDR:]PORT");
	if (c->o->listen.addr && !a->fn)
		return ERR(c, "--listen serves an aggregation as metrics: add --count, --sum, "
			      "--hist, --latency, ...");
	if (c->o->str_args && a->fn)
		return ERR(c, "--str prints strings with each streamed event: an aggregation "
			      "reads them with str(F) in --by, --filter or its value");
	if ((a->by || a->top || a->interval > 0 || a->keep) && !a->fn)
		return ERR(
			c,
			"--by, --top, --interval and --keep need an aggregation: --count, --sum, --hist, ...");
	return 0;
}

static int check_probes(struct optctx *c)
{
	struct pmt_opts *o = c->o;
	int i;

	for (i = 0; i < o->nr_probes; i++) {
		enum pmt_probe_kind k = o->probes[i].kind;

		if (k != PMT_PROBE_PERF && (o->period || o->freq))
			return ERR(c, "--%s applies to PMU events (-e); --%s %s has none",
				   o->period ? "period" : "freq", kinds[k].option,
				   o->probes[i].spec);
		/* (a program's block may print and update maps: its updates
		 * follow the streamed record) */
		if (o->probes[i].printf &&
		    ((o->agg.fn && !o->prog) || o->agg.lat_start || o->agg.offcpu))
			return ERR(c,
				   "--printf prints each event of %s: not with an aggregation "
				   "(--count, --hist, --latency, ...)",
				   o->probes[i].spec);
		if (o->probes[i].printf && o->str_args)
			return ERR(c, "--printf's str() arguments are its strings: not with --str");
	}
	if (o->period && o->freq)
		return ERR(c, "--period and --freq cannot be combined: sample by count or by rate");
	if (!o->period && !o->freq)
		o->freq = PMT_DEFAULT_FREQ;
	if (!o->nr_probes && !o->agg.lat_start && !o->agg.offcpu && !o->prog)
		return ERR(
			c,
			"no probe given: name one with --tp CATEGORY:NAME or -e EVENT (see --list)");
	return 0;
}

/* --stat: every -e counted, nothing sampled, traced or aggregated. */
static int check_stat(struct optctx *c)
{
	const struct pmt_agg_opts *a = &c->o->agg;
	struct pmt_opts *o = c->o;
	const char *other = a->fn		   ? "--count, --hist, ..."
			    : a->lat_start	   ? "--latency"
			    : a->by		   ? "--by"
			    : a->top		   ? "--top"
			    : a->keep		   ? "--keep"
			    : o->listen.addr	   ? "--listen"
			    : o->stack		   ? "--stack"
			    : o->period || o->freq ? "--period/--freq"
			    : o->nr_counters	   ? "--counter"
						   : NULL;
	int i;

	if (other)
		return ERR(c, "--stat counts events and prints their totals: it takes no %s",
			   other);
	for (i = 0; i < o->nr_probes; i++) {
		if (o->probes[i].kind != PMT_PROBE_PERF)
			return ERR(c, "--stat counts PMU events (-e EVENT); --%s %s is not one",
				   kinds[o->probes[i].kind].option, o->probes[i].spec);
		if (o->probes[i].filter)
			return ERR(c,
				   "--stat counts every event of %s: --filter applies to events "
				   "traced one by one",
				   o->probes[i].spec);
	}
	return 0;
}

/* --counter EVENT: what --latency measures instead of time. */
static int check_counter(struct optctx *c)
{
	struct pmt_agg_opts *a = &c->o->agg;

	if (!a->lat_start && a->fn)
		return ERR(c,
			   "--counter with --%s: a count is aggregated per call with --latency "
			   "START,END or --latency kprobe:FUNC / uprobe:PATH:SYMBOL, or streamed "
			   "with each event",
			   agg_fn_names[a->fn]);
	if (!a->lat_start)
		return 0; /* streamed: each record with its thread's count */
	if (a->match)
		return ERR(c, "--counter: the count is the thread's own, from START to END in one "
			      "thread: drop --match");
	if (a->unit)
		return ERR(c, "--unit is for time: --counter counts events");
	a->counter = c->o->counters[0];
	a->counters = c->o->counters;
	a->ncounters = c->o->nr_counters;
	return 0;
}

static int check_targets(struct optctx *c)
{
	struct pmt_opts *o = c->o;

	if (c->pid_set && o->cmd)
		return ERR(c, "-p/--pid and a COMMAND cannot be combined: trace one or the other");
	if (c->pid_set && c->all_set)
		return ERR(c, "-p/--pid and -a/--all-cpus cannot be combined");
	/* a program's -c CMD is bpftrace's: the whole machine while CMD
	 * runs (an I/O ends in an interrupt, a packet in softirq: its
	 * programs choose by pid or comm themselves); -- CMD traces the
	 * command's own events, as for every other form */
	o->system_wide = c->all_set || (!c->pid_set && !o->cmd) ||
			 (o->program && o->cmd && o->cmd == o->cmd_words);
	if (o->cgroup && o->stat)
		return ERR(c, "--cgroup narrows traced events: --stat's counters count the "
			      "whole target (use -p or a COMMAND)");
	return 0;
}

/* pmtrace FILE.bt: a file named so, as bpftrace takes it */
static bool is_program_file(const char *arg)
{
	size_t n = strlen(arg);

	return n > 3 && !strcmp(arg + n - 3, ".bt");
}

static int read_program(struct optctx *c, const char *path)
{
	int r = pmt_read_file(path, &c->o->program_file, NULL);

	if (r)
		return ERR(c, "%s: %s", path, strerror(-r));
	c->o->program = c->o->program_file;
	c->o->program_name = path;
	return 0;
}

/* profile:hz:N, profile:s:N, :ms:N, :us:N (rate: after "profile:"):
 * cpu-clock sampled N times a second on each CPU, or every N units of
 * its time (ns), as -e cpu-clock --freq/--period sample it */
static int profile_rate(struct optctx *c, const char *rate, const char *where)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"hz:", 0}, {"s:", 1000000000}, {"ms:", 1000000}, {"us:", 1000}};
	struct pmt_opts *o = c->o;
	char *end = NULL;
	unsigned long long n = 0;
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strncmp(rate, units[i].unit, strlen(units[i].unit)))
			break;
	if (i < sizeof(units) / sizeof(units[0]))
		n = strtoull(rate + strlen(units[i].unit), &end, 10);
	if (!end || *end || !n)
		return ERR(c,
			   "%s: profile:%s: expected profile:hz:N, profile:s:N, profile:ms:N or "
			   "profile:us:N",
			   where, rate);
	if ((o->period || o->freq) && (units[i].ns ? o->period != n * units[i].ns : o->freq != n))
		return ERR(c, "%s: profile:%s: one sampling rate a program, for now", where, rate);
	if (units[i].ns)
		o->period = n * units[i].ns;
	else
		o->freq = (unsigned)n;
	return 0;
}

/* A program's interval block: exit() after it (-d), or its map (the
 * first: see load_program) printed every interval (--interval; --keep
 * where it is not cleared), after what time() prints */
static int program_interval(struct optctx *c, const struct pmt_program *p)
{
	struct pmt_opts *o = c->o;

	if (p->interval <= 0)
		return 0;
	if (p->printed && !p->nmaps)
		return ERR(c,
			   "%s: print(@MAP) every interval prints the program's map: it has none",
			   o->program_name);
	if (p->printed) {
		o->agg.interval = p->interval;
		o->agg.keep = !p->cleared_each;
		o->agg.head = p->head;
	}
	if (p->exit_after && !p->printed)
		o->duration = p->interval;
	if (!p->exit_after && !p->printed)
		return ERR(c, "%s: an interval's block prints the map or exits, for now",
			   o->program_name);
	return 0;
}

_Static_assert(PMT_PROG_MAPS == PMT_MAX_MAPS && PMT_PROG_UPDATES == PMT_BLOCK_UPDATES,
	       "a program's maps are the options' maps");

/* Map m of a program as the aggregation ao: what --count, --by, ...
 * would say of it */
static int program_map(struct optctx *c, const struct pmt_program *p, const struct pmt_prog_map *m,
		       struct pmt_agg_opts *ao)
{
	int fn;

	for (fn = PMT_FN_COUNT; fn <= PMT_FN_LHIST; fn++)
		if (!strcmp(m->fn, agg_fn_names[fn]))
			break;
	ao->fn = (enum pmt_agg_fn)fn;
	ao->expr = NULL;
	ao->expr_copy = NULL;
	if (fn == PMT_FN_LHIST && parse_lhist(m->value, ao))
		return ERR(c,
			   "%s: lhist(%s): expected lhist(VALUE, MIN, MAX, STEP) with "
			   "MIN < MAX and STEP > 0, at most %d buckets",
			   c->o->program_name, m->value, PMT_LHIST_MAX_BUCKETS);
	if (fn != PMT_FN_LHIST)
		ao->expr = m->value;
	ao->by = m->keys && *m->keys ? m->keys : NULL;
	ao->map = m->name;
	ao->func_maps = p->funcs;
	ao->probe_maps = p->probe_names;
	ao->kstack_maps = p->kstack_maps;
	/* printed at the end, then again unless cleared: totals */
	ao->keep = true;
	ao->interval = 0;
	ao->head = NULL;
	/* END clears it: not printed at the end (bpftrace's pidpersec.bt) */
	ao->no_end_print = pmt_words__has(p->cleared, m->name);
	return 0;
}

/* The program's maps as the aggregation (the first: the one an interval
 * prints) and more[] (the rest, in order); order[i]: where map i went */
static int program_maps(struct optctx *c, const struct pmt_program *p, int *order)
{
	struct pmt_opts *o = c->o;
	int first = p->interval_map && p->printed ? pmt_program__map(p, p->interval_map) : 0;
	int i, k, ret;
	struct pmt_agg_opts base = o->agg;

	if (first < 0)
		first = 0;
	for (i = 0, k = 1; i < p->nmaps; i++)
		order[i] = i == first ? 0 : k++;
	for (i = 0; i < p->nmaps; i++) {
		struct pmt_agg_opts *ao = order[i] ? &o->more[order[i] - 1] : &o->agg;

		if (order[i])
			*ao = base;
		if ((ret = program_map(c, p, &p->maps[i], ao)))
			return ret;
	}
	o->nmore = p->nmaps ? p->nmaps - 1 : 0;
	return 0;
}

/* Program probe q as the options' probe arg a; order: where its maps went */
static void program_probe(struct pmt_probe_arg *a, const struct pmt_prog_probe *q, const int *order)
{
	int k;

	a->filter = q->filter;
	a->printf = q->printf;
	a->where = q->where;
	a->block = q->block;
	a->stmts = q->stmts;
	a->stmts_only = q->stmts_only;
	a->print_guard = q->print_guard;
	for (k = 0; k < q->nupd; k++) {
		a->upd[k] = order[q->upd[k]];
		a->upd_guard[k] = q->upd_guard[k];
		a->upd_keys[k] = q->upd_keys[k];
		a->upd_value[k] = q->upd_value[k];
	}
	a->nupd = q->nupd;
	a->every_ns = q->every_ns;
}

/* Does text name kstack? */
static bool names_kstack(const char *text)
{
	const char *at;

	for (at = text; at && (at = strstr(at, "kstack")); at += 6)
		if ((at == text || !pmt_lex__name_char(at[-1], false)) &&
		    !pmt_lex__name_char(at[6], false))
			return true;
	return false;
}

/* Does a program's printf print kstack, or a block save it? Its records
 * then carry the kernel's frames (--stack kernel's) */
static bool uses_kstack(const struct pmt_program *p)
{
	size_t i;

	for (i = 0; i < p->nprobes; i++)
		if (names_kstack(p->probes[i].printf) || names_kstack(p->probes[i].stmts))
			return true;
	return false;
}

/* The program read into probes and the aggregation, as the options
 * would give them: what it says is not said by options beside it. */
static int load_program(struct optctx *c)
{
	struct pmt_opts *o = c->o;
	struct pmt_program *p;
	enum pmt_probe_kind kind;
	int order[PMT_PROG_MAPS];
	const char *rest;
	size_t i;
	int ret;

	if (o->nr_probes || o->agg.fn || o->agg.by || o->agg.lat_start || o->agg.offcpu)
		return ERR(c,
			   "%s: a program says its probes and its map: no probe, aggregation, "
			   "--by, --latency or --offcpu options beside it",
			   o->program_name);
	p = o->prog = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = pmt_program__parse(o->program, o->program_name, p, c->err);
	if (ret || (ret = program_maps(c, p, order)))
		return ret;
	for (i = 0; i < p->nprobes; i++) {
		if (p->probes[i].role) {
			/* a start time's: --latency START,END */
			int e = p->probes[i].role == PMT_PROG_END;

			*(e ? &o->agg.lat_end : &o->agg.lat_start) = p->probes[i].spec;
			o->agg.lat_filters[e] = p->probes[i].filter;
			o->agg.match = p->lat_match;
			o->agg.unit = p->lat_unit;
			continue;
		}
		kind = pmt_probe_kind_of(p->probes[i].spec, &rest);
		if (!strncmp(p->probes[i].spec, "profile:", 8) &&
		    (ret = profile_rate(c, p->probes[i].spec + 8, p->probes[i].where)))
			return ret;
		if (!strncmp(p->probes[i].spec, "profile:", 8) || p->probes[i].every_ns)
			ret = add_probe(o, PMT_PROBE_PERF, "cpu-clock");
		else
			ret = add_probe(o, kind, rest);
		if (ret)
			return ret;
		program_probe(&o->probes[o->nr_probes - 1], &p->probes[i], order);
	}
	o->begin = p->begin;
	/* kprobe: as bpftrace attaches it, unless the program has kfunc:
	 * probes too (trampolines then, where the kernel can) or an option
	 * says how */
	if (o->kprobe_mode == PMT_KMODE_AUTO && p->kprobes && !p->kfuncs)
		o->kprobe_mode = PMT_KMODE_PROGRAM;
	if (uses_kstack(p))
		o->stack |= PMT_STACK_KERNEL;
	return program_interval(c, p);
}

int pmt_opts__parse(int argc, char **argv, struct pmt_opts *o, struct pmt_error *err)
{
	struct optctx c = {.o = o, .argc = argc, .argv = argv, .err = err};
	struct option lo[NR_OPTS + 1];
	char shorts[2 * NR_OPTS + 2];
	int ch, ret;

	memset(o, 0, sizeof(*o));
	o->buffer_pages = PMT_DEFAULT_PAGES;
	o->agg.max_keys = PMT_DEFAULT_MAX_KEYS;
	o->agg.str_len = PMT_DEFAULT_STR_LEN;
	getopt_tables(lo, shorts);
	optind = 0; /* full re-initialisation: parse may run more than once */
	opterr = 0;
again:
	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		c.def = opt_lookup(ch);
		if (!c.def)
			return unknown_option(&c);
		ret = c.def->fn(&c, optarg);
		if (ret)
			return ret;
		if (o->mode == PMT_MODE_HELP || o->mode == PMT_MODE_VERSION)
			return 0;
	}
	/* FILE.bt, as bpftrace takes it: options may follow it (-c CMD) */
	if (optind < argc && !o->program && is_program_file(argv[optind]) &&
	    (optind == 0 || strcmp(argv[optind - 1], "--"))) {
		if ((ret = read_program(&c, argv[optind])))
			return ret;
		optind++;
		goto again;
	}
	if (optind < argc) {
		if (o->cmd_words)
			return ERR(&c, "-c '%s' and a COMMAND after the options: one command a run",
				   o->cmd_words[0]);
		o->cmd = &argv[optind];
		o->cmd_after_stack = c.bare_stack_at == optind;
	} else if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
		return ERR(&c, "'--' must be followed by the COMMAND to run, e.g. -- ls -l");
	} else if (o->cmd_words) {
		o->cmd = o->cmd_words;
	}
	if (o->program && (ret = load_program(&c)))
		return ret;
	if (o->mode == PMT_MODE_LIST || o->mode == PMT_MODE_INFO)
		return check_modes(&c);
	if (o->stat)
		return check_stat(&c) ? -EINVAL : check_targets(&c);
	if (o->nr_counters && (ret = check_counter(&c)))
		return ret;
	if ((ret = check_aggregation(&c)) || (ret = check_probes(&c)) || (ret = check_targets(&c)))
		return ret;
	/* 1 MiB rings held 16 ms of a 440,000 a second stream of kernel
	 * stacks here, and lost ~1% to the reader's scheduling; 4 MiB none */
	if (!c.pages_set && o->stack && !o->agg.fn)
		o->buffer_pages = PMT_STACK_PAGES;
	return 0;
}

/*
 * Many probes stream more: 258 tracepoints of a busy machine's commonest
 * categories made 600,000 events a second here, and 1 MiB rings (the
 * base) lost a third of them while the reader waited for a CPU beside
 * the workload; 16 MiB lost none. So the base is doubled for each
 * doubling of the probes past 16, up to 16 times, while the rings of all
 * CPUs stay within PMT_RING_BUDGET (never below the base).
 */
int pmt_opts__ring_pages(const struct pmt_opts *o, uint32_t nprobes, int ncpus, long page_size)
{
	uint64_t pages = (uint64_t)o->buffer_pages, most = pages * 16, n;

	if (o->buffer_pages_set)
		return o->buffer_pages;
	for (n = 16; n < nprobes && pages < most; n *= 2)
		pages *= 2;
	while (pages > (uint64_t)o->buffer_pages && ncpus > 0 && page_size > 0 &&
	       pages * (uint64_t)ncpus * (uint64_t)page_size > PMT_RING_BUDGET)
		pages /= 2;
	return (int)pages;
}

void pmt_opts__free(struct pmt_opts *o)
{
	if (o->prog) {
		pmt_program__free(o->prog);
		free(o->prog);
		o->prog = NULL;
	}
	free(o->program_file);
	o->program_file = NULL;
	if (o->cmd_words)
		free(o->cmd_words[0]);
	free(o->cmd_words);
	o->cmd_words = NULL;
	free(o->agg.expr_copy);
	o->agg.expr_copy = NULL;
	free(o->probes);
	o->probes = NULL;
	o->nr_probes = 0;
}
