// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include "util/machine.h"
#include "util/error.h"
#include "options/opts.h"
#include "abi.h"
#include "run/reorder.h"
#include "util/pieces.h"
#include "util/strutil.h"
#include "util/suggest.h"
#include "tracefs/tracefs.h"
#include "test.h"

/* a fresh error value for each call (the first error set wins) */
#define TERR(e) (pmt_error__clear(&(e)), &(e))

#define ARGV(...) ((char *[]){"pmtrace", __VA_ARGS__, NULL})
#define ARGC(v) ((int)(sizeof(v) / sizeof(char *)) - 1)

static int parse(int argc, char **argv, struct pmt_opts *o, char *err)
{
	struct pmt_error e = {0};
	int ret = pmt_opts__parse(argc, argv, o, &e);

	snprintf(err, 256, "%.255s", e.msg);
	return ret;
}

TEST(opts_trace)
{
	char *argv[] = {"pmtrace",
			"--tp",
			"sched:sched_switch",
			"--tp",
			"syscalls:sys_enter_*",
			"-o",
			"out.txt",
			"--json",
			"-d",
			"2.5",
			"--buffer-pages",
			"64",
			"-C",
			"0-1",
			"--",
			"ls",
			"-l",
			NULL};
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;

	ASSERT_EQ(parse(ARGC(argv), argv, &o, err), 0);
	ASSERT_EQ(o.mode, PMT_MODE_TRACE);
	ASSERT_EQ(o.nr_probes, 2);
	ASSERT_STREQ(o.probes[1].spec, "syscalls:sys_enter_*");
	ASSERT_STREQ(o.output, "out.txt");
	ASSERT_TRUE(o.json);
	ASSERT_TRUE(o.duration == 2.5);
	ASSERT_EQ(o.buffer_pages, 64);
	ASSERT_STREQ(o.cpus, "0-1");
	ASSERT_TRUE(o.cmd);
	ASSERT_STREQ(o.cmd[0], "ls");
	ASSERT_STREQ(o.cmd[1], "-l");
	ASSERT_TRUE(!o.system_wide);
	pmt_opts__free(&o);
}

TEST(opts_defaults_and_modes)
{
	char **a1 = ARGV("--tp", "a:b"), **a2 = ARGV("--list", "sched:*"),
	     **a3 = ARGV("-p", "12", "--tp", "a:b"),
	     **a4 = ARGV("--tp", "a:b", "--stack", "kernel"),
	     **a5 = ARGV("--tp", "a:b", "--stack", "kernel", "--buffer-pages", "64"),
	     **a6 = ARGV("--tp", "a:b", "--stack", "kernel", "--count");
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;

	ASSERT_EQ(parse(3, a1, &o, err), 0);
	ASSERT_TRUE(o.system_wide);
	ASSERT_EQ(o.buffer_pages, PMT_DEFAULT_PAGES);
	pmt_opts__free(&o);
	/* streamed stacks get larger rings, unless told otherwise */
	ASSERT_EQ(parse(5, a4, &o, err), 0);
	ASSERT_EQ(o.buffer_pages, PMT_STACK_PAGES);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(7, a5, &o, err), 0);
	ASSERT_EQ(o.buffer_pages, 64);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(6, a6, &o, err), 0);
	ASSERT_EQ(o.buffer_pages, PMT_DEFAULT_PAGES);
	ASSERT_TRUE(!o.cmd);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(3, a2, &o, err), 0);
	ASSERT_EQ(o.mode, PMT_MODE_LIST);
	ASSERT_STREQ(o.list_glob, "sched:*");
	pmt_opts__free(&o);
	ASSERT_EQ(parse(5, a3, &o, err), 0);
	ASSERT_EQ(o.pid, 12);
	ASSERT_TRUE(!o.system_wide);
	pmt_opts__free(&o);
}

/* -c CMD: with a program bpftrace's (the whole system while CMD runs),
 * elsewhere as -- CMD (the command's own events) */
TEST(opts_command_c)
{
	char **a1 = ARGV("-e", "BEGIN { printf(\"x\\n\"); }", "-c", "ls -l"),
	     **a2 = ARGV("-e", "BEGIN { printf(\"x\\n\"); }", "--", "ls", "-l"),
	     **a3 = ARGV("--tp", "a:b", "-c", "ls -l");
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;

	ASSERT_EQ(parse(5, a1, &o, err), 0);
	ASSERT_STREQ(o.cmd[1], "-l");
	ASSERT_TRUE(o.system_wide);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(6, a2, &o, err), 0);
	ASSERT_STREQ(o.cmd[0], "ls");
	ASSERT_TRUE(!o.system_wide);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(5, a3, &o, err), 0);
	ASSERT_STREQ(o.cmd[0], "ls");
	ASSERT_TRUE(!o.system_wide);
	pmt_opts__free(&o);
}

static void expect_usage_error(int *failed, char **argv, const char *msg)
{
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;
	int argc = 0;

	while (argv[argc])
		argc++;
	if (parse(argc, argv, &o, err) != -EINVAL || strcmp(err, msg))
		FAIL_AT("%s ...: got \"%s\", expected \"%s\"", argv[1], err, msg);
	pmt_opts__free(&o);
}

TEST(opts_errors)
{
	expect_usage_error(
		failed, ARGV("-d", "2"),
		"no probe given: name one with --tp CATEGORY:NAME or -e EVENT (see --list)");
	expect_usage_error(failed, ARGV("-e", "cpu-clock", "--folded"),
			   "--folded draws stacks: add --stack");
	expect_usage_error(failed, ARGV("-e", "cpu-clock", "--stack=up"),
			   "--stack: 'up': expected kernel, user or both");
	expect_usage_error(failed, ARGV("-e", "cpu-clock", "--period", "10", "--freq", "99"),
			   "--period and --freq cannot be combined: sample by count or by rate");
	expect_usage_error(
		failed, ARGV("--offcpu", "--tp", "a:b"),
		"--offcpu takes sched:sched_switch itself: drop the probes (--tp, -e, ...)");
	expect_usage_error(failed, ARGV("--tp", "a:b", "--min-block", "5"),
			   "--min-block goes with --offcpu");
	expect_usage_error(failed, ARGV("--offcpu", "--min-block", "9", "--max-block", "5"),
			   "--min-block 9 is above --max-block 5");
	expect_usage_error(failed, ARGV("--kprobe", "f", "--freq", "9"),
			   "--freq applies to PMU events (-e); --kprobe f has none");
	expect_usage_error(failed, ARGV("--uprobe", ""),
			   "--uprobe needs PATH:SYMBOL, e.g. /usr/bin/bash:readline");
	expect_usage_error(failed, ARGV("--kprobe", "f", "--kprobe-mode", "fexit"),
			   "--kprobe-mode: 'fexit': expected auto, fentry or kprobe");
	expect_usage_error(
		failed, ARGV("--latency", "sched:sched_wakeup"),
		"--latency: 'sched:sched_wakeup': expected START,END, e.g. syscalls:sys_enter_read,syscalls:sys_exit_read, or kprobe:FUNC or uprobe:PATH:SYMBOL");
	expect_usage_error(
		failed,
		ARGV("-e", "cpu-clock", "--stack", "--flamegraph", "x.svg", "--hist", "period"),
		"--flamegraph counts stacks: it takes no --hist");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-p", "abc"),
			   "-p/--pid: 'abc' is not a process ID (a positive integer)");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-p", "0"),
			   "-p/--pid: '0' is not a process ID (a positive integer)");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-d", "1x"),
			   "-d/--duration: '1x' is not a positive number of seconds");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-d", "-1"),
			   "-d/--duration: '-1' is not a positive number of seconds");
	expect_usage_error(failed, ARGV("--tp", "a:b", "--buffer-pages", "3"),
			   "--buffer-pages: '3' is not a power of two between 1 and 1048576");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-p", "1", "--", "ls"),
			   "-p/--pid and a COMMAND cannot be combined: trace one or the other");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-p", "1", "-a"),
			   "-p/--pid and -a/--all-cpus cannot be combined");
	expect_usage_error(failed, ARGV("--list", "--tp", "a:b"),
			   "--list cannot be combined with probes");
	expect_usage_error(failed, ARGV("--bogus"),
			   "option '--bogus' is unknown or takes no argument");
	expect_usage_error(failed, ARGV("-Z"), "option -Z is unknown");
	expect_usage_error(failed, ARGV("--tp"), "option '--tp' needs an argument");
	expect_usage_error(failed, ARGV("--tp", "a:b", "-d"), "option -d needs an argument");
	/* found by adversarial use: once accepted, or run as something else */
	expect_usage_error(failed, ARGV("--tp", "a:b", "--count", "--by", ""),
			   "--by: '': expected KEY[,KEY...] with no empty key, e.g. comm,pid");
	expect_usage_error(failed, ARGV("--tp", "a:b", "--count", "--by", ",,,"),
			   "--by: ',,,': expected KEY[,KEY...] with no empty key, e.g. comm,pid");
	expect_usage_error(failed, ARGV("--tp", "a:b", "--count", "--by", "comm,"),
			   "--by: 'comm,': expected KEY[,KEY...] with no empty key, e.g. comm,pid");
	expect_usage_error(failed, ARGV("--tp", "a:b", "--"),
			   "'--' must be followed by the COMMAND to run, e.g. -- ls -l");
	expect_usage_error(
		failed,
		ARGV("--tp", "a:b", "--lhist", "x:-9223372036854775808:9223372036854775807:1"),
		"--lhist: 'x:-9223372036854775808:9223372036854775807:1': more than 10000 buckets from MIN to MAX: take a larger STEP");
}

/* MAX - MIN beyond INT64_MAX, and a STEP that does not divide it. */
TEST(opts_lhist_buckets)
{
	static const struct {
		const char *spec;
		uint32_t buckets;
	} cases[] = {
		{"x:0:9223372036854775807:4611686018427387904", 2},
		{"x:-9223372036854775808:9223372036854775807:1844674407370956", 10000},
		{"len:0:1500:100", 15},
		{"len:0:1501:100", 16},
	};
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;
	char spec[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = {"pmtrace", "--tp", "a:b", "--lhist", spec, NULL};

		snprintf(spec, sizeof(spec), "%s", cases[i].spec);
		ASSERT_EQ(parse(ARGC(argv), argv, &o, err), 0);
		ASSERT_EQ(o.agg.lbuckets, cases[i].buckets);
		pmt_opts__free(&o);
	}
}

TEST(opts_function_probes)
{
	char *a1[] = {"pmtrace",      "--kprobe",      "vfs_*",		 "--filter",
		      "arg2 > 0",     "--kretprobe",   "vfs_read",	 "--uprobe",
		      "/bin/sh:main", "--uretprobe",   "libc.so.6:free", "--stack",
		      "user",	      "--kprobe-mode", "kprobe",	 NULL};
	char *a2[] = {"pmtrace", "--latency", "kprobe:vfs_read", NULL};
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;
	const char *rest;

	ASSERT_EQ(parse(15, a1, &o, err), 0);
	ASSERT_EQ(o.nr_probes, 4);
	ASSERT_EQ(o.probes[0].kind, PMT_PROBE_KPROBE);
	ASSERT_STREQ(o.probes[0].filter, "arg2 > 0");
	ASSERT_EQ(o.probes[1].kind, PMT_PROBE_KRETPROBE);
	ASSERT_EQ(o.probes[2].kind, PMT_PROBE_UPROBE);
	ASSERT_STREQ(o.probes[3].spec, "libc.so.6:free");
	ASSERT_EQ(o.probes[3].kind, PMT_PROBE_URETPROBE);
	ASSERT_EQ(o.stack, PMT_STACK_USER);
	ASSERT_EQ(o.kprobe_mode, PMT_KMODE_KPROBE);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(3, a2, &o, err), 0);
	ASSERT_STREQ(o.agg.lat_start, "kprobe:vfs_read");
	ASSERT_TRUE(o.agg.lat_end == NULL);
	ASSERT_EQ(o.agg.fn, PMT_FN_HIST);
	pmt_opts__free(&o);

	ASSERT_EQ(pmt_probe_kind_of("kretprobe:vfs_read", &rest), PMT_PROBE_KRETPROBE);
	ASSERT_STREQ(rest, "vfs_read");
	ASSERT_EQ(pmt_probe_kind_of("uprobe:/bin/sh:main", &rest), PMT_PROBE_UPROBE);
	ASSERT_STREQ(rest, "/bin/sh:main");
	ASSERT_EQ(pmt_probe_kind_of("tp:sched:sched_switch", &rest), PMT_PROBE_TRACEPOINT);
	ASSERT_STREQ(rest, "sched:sched_switch");
	ASSERT_EQ(pmt_probe_kind_of("tracepoint:sched:sched_switch", &rest), PMT_PROBE_TRACEPOINT);
	ASSERT_STREQ(rest, "sched:sched_switch");
	ASSERT_EQ(pmt_probe_kind_of("sched:sched_switch", &rest), PMT_PROBE_TRACEPOINT);
	ASSERT_STREQ(rest, "sched:sched_switch");
	ASSERT_STREQ(pmt_probe_kind_name(PMT_PROBE_URETPROBE), "uretprobe");
}

TEST(cpulist)
{
	uint64_t mask[2];
	struct pmt_error terr = {0};
	char *err = terr.msg;

	ASSERT_EQ(pmt_parse_cpulist("0-2,5,64", mask, 128, TERR(terr)), 0);
	ASSERT_EQ(mask[0], 0x27);
	ASSERT_EQ(mask[1], 1);
	ASSERT_EQ(pmt_parse_cpulist("1,", mask, 128, TERR(terr)), -EINVAL);
	ASSERT_EQ(pmt_parse_cpulist("3-1", mask, 128, TERR(terr)), -EINVAL);
	ASSERT_EQ(pmt_parse_cpulist("2", mask, 2, TERR(terr)), -EINVAL);
	ASSERT_STREQ(err, "-C/--cpu: '2': CPU range must be ascending and below 2");
	ASSERT_EQ(pmt_parse_cpulist("a", mask, 2, TERR(terr)), -EINVAL);
	ASSERT_STREQ(err, "-C/--cpu: 'a' is not a CPU list; expected e.g. 0-3,6");
}

TEST(parse_numbers)
{
	uint64_t u;
	int64_t s;
	int i;

	ASSERT_EQ(pmt_parse_u64("0x10", &u), 0);
	ASSERT_EQ(u, 16);
	ASSERT_EQ(pmt_parse_u64("-1", &u), -EINVAL);
	ASSERT_EQ(pmt_parse_u64("12k", &u), -EINVAL);
	ASSERT_EQ(pmt_parse_u64("", &u), -EINVAL);
	ASSERT_EQ(pmt_parse_u64("99999999999999999999", &u), -ERANGE);
	ASSERT_EQ(pmt_parse_s64("-42", &s), 0);
	ASSERT_EQ(s, -42);
	ASSERT_EQ(pmt_parse_int("7", 1, 5, &i), -ERANGE);
}

struct collected {
	uint64_t ts[16];
	int cpu[16];
	int n;
};

static void collect(void *ctx, int cpu, const void *data, size_t len)
{
	struct collected *c = ctx;

	if (len == sizeof(uint64_t) && c->n < 16) {
		memcpy(&c->ts[c->n], data, sizeof(uint64_t));
		c->cpu[c->n++] = cpu;
	}
}

static void push(struct pmt_reorder *r, int cpu, uint64_t ts)
{
	pmt_reorder__push(r, cpu, ts, &ts, sizeof(ts));
}

TEST(reorder_merge)
{
	struct pmt_reorder r;
	struct collected c = {0};
	int i;

	ASSERT_EQ(pmt_reorder__init(&r, 3), 0);
	push(&r, 0, 10);
	push(&r, 0, 40);
	push(&r, 1, 20);
	push(&r, 2, 5);
	push(&r, 1, 50);
	pmt_reorder__flush(&r, 30, collect, &c);
	ASSERT_EQ(c.n, 3);
	ASSERT_EQ(c.ts[0], 5);
	ASSERT_EQ(c.cpu[0], 2);
	ASSERT_EQ(c.ts[1], 10);
	ASSERT_EQ(c.ts[2], 20);
	push(&r, 2, 45);
	pmt_reorder__flush(&r, UINT64_MAX, collect, &c);
	ASSERT_EQ(c.n, 6);
	for (i = 1; i < c.n; i++)
		ASSERT_TRUE(c.ts[i - 1] <= c.ts[i]);
	ASSERT_EQ(c.ts[5], 50);
	ASSERT_EQ(r.bytes, 0);
	/* an inversion within a CPU keeps FIFO order and is counted */
	push(&r, 0, 100);
	push(&r, 0, 90);
	ASSERT_EQ(r.inversions, 1);
	pmt_reorder__free(&r);
}

/* Rings grow with the probes streamed, within a budget over the CPUs,
 * and --buffer-pages is taken as it is. */
TEST(opts_ring_pages)
{
	char **a1 = ARGV("--tp", "a:b"), **a2 = ARGV("--tp", "a:b", "--buffer-pages", "64"),
	     **a3 = ARGV("--tp", "a:b", "--stack", "kernel");
	struct pmt_opts o;
	struct pmt_error terr = {0};
	char *err = terr.msg;

	ASSERT_EQ(parse(3, a1, &o, err), 0);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 1, 2, 4096), PMT_DEFAULT_PAGES);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 16, 2, 4096), PMT_DEFAULT_PAGES);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 17, 2, 4096), 2 * PMT_DEFAULT_PAGES);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 100, 2, 4096), 8 * PMT_DEFAULT_PAGES);
	/* 258 tracepoints: 16 MiB a CPU, and no more for more */
	ASSERT_EQ(pmt_opts__ring_pages(&o, 258, 2, 4096), 16 * PMT_DEFAULT_PAGES);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 5000, 2, 4096), 16 * PMT_DEFAULT_PAGES);
	/* 128 CPUs: 2 MiB each keeps 256 MiB; 1,024: the base */
	ASSERT_EQ(pmt_opts__ring_pages(&o, 258, 128, 4096), 2 * PMT_DEFAULT_PAGES);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 258, 1024, 4096), PMT_DEFAULT_PAGES);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(5, a2, &o, err), 0);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 258, 2, 4096), 64);
	pmt_opts__free(&o);
	ASSERT_EQ(parse(5, a3, &o, err), 0);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 1, 2, 4096), PMT_STACK_PAGES);
	ASSERT_EQ(pmt_opts__ring_pages(&o, 40, 2, 4096), 4 * PMT_STACK_PAGES);
	pmt_opts__free(&o);
}

TEST(suggest_names)
{
	char *names[] = {"sched:sched_switch", "sched:sched_wakeup", "irq:softirq_entry",
			 "foo:sched_swap", "raw_syscalls:sys_enter"};
	const char *out[4];
	int n;

	ASSERT_EQ(pmt_edit_distance("sched_swich", "sched_switch", 5), 1);
	ASSERT_EQ(pmt_edit_distance("abcd", "abdc", 5), 1);
	ASSERT_EQ(pmt_edit_distance("abc", "xyzuvw", 2), 3);
	n = pmt_suggest("sched:sched_swtich", names, 5, out, 4);
	ASSERT_TRUE(n >= 1);
	ASSERT_STREQ(out[0], "sched:sched_switch");
	n = pmt_suggest("bar:sched_switch", names, 5, out, 4);
	ASSERT_TRUE(n >= 1);
	ASSERT_STREQ(out[0], "sched:sched_switch");
	n = pmt_suggest("zzz:qqq", names, 5, out, 4);
	ASSERT_EQ(n, 0);
}

TEST(tp_split)
{
	char cat[32], name[32];

	ASSERT_EQ(pmt_tp_split("sched:sched_switch", cat, sizeof(cat), name, sizeof(name)), 0);
	ASSERT_STREQ(cat, "sched");
	ASSERT_STREQ(name, "sched_switch");
	ASSERT_EQ(pmt_tp_split("sched/sched_switch", cat, sizeof(cat), name, sizeof(name)), 0);
	ASSERT_EQ(pmt_tp_split("sched_switch", cat, sizeof(cat), name, sizeof(name)), -EINVAL);
	ASSERT_EQ(pmt_tp_split(":x", cat, sizeof(cat), name, sizeof(name)), -EINVAL);
	ASSERT_EQ(pmt_tp_split("a:b:c", cat, sizeof(cat), name, sizeof(name)), -EINVAL);
}

#include "aggregate/aggregate.h"

static const char *label(struct pmt_buf *b, int32_t bucket)
{
	b->len = 0;
	pmt_agg__log2_label(b, bucket);
	return pmt_buf__cstr(b);
}

TEST(histogram_buckets_and_labels)
{
	struct pmt_buf b = {0};

	ASSERT_EQ(pmt_agg__log2_bucket(-5), -1);
	ASSERT_EQ(pmt_agg__log2_bucket(0), 0);
	ASSERT_EQ(pmt_agg__log2_bucket(1), 1);
	ASSERT_EQ(pmt_agg__log2_bucket(2), 2);
	ASSERT_EQ(pmt_agg__log2_bucket(3), 2);
	ASSERT_EQ(pmt_agg__log2_bucket(4096), 13);
	ASSERT_EQ(pmt_agg__log2_bucket(INT64_MAX), 63);
	ASSERT_STREQ(label(&b, -1), "(..., 0)");
	ASSERT_STREQ(label(&b, 0), "[0]");
	ASSERT_STREQ(label(&b, 1), "[1]");
	ASSERT_STREQ(label(&b, 3), "[4, 8)");
	ASSERT_STREQ(label(&b, 11), "[1K, 2K)");
	ASSERT_STREQ(label(&b, 10), "[512, 1K)");
	ASSERT_STREQ(label(&b, 21), "[1M, 2M)");
	ASSERT_STREQ(label(&b, 64), "[8E, ...)");
	b.len = 0;
	pmt_agg__lhist_label(&b, -1, 0, 100, 15);
	pmt_buf__putc(&b, ' ');
	pmt_agg__lhist_label(&b, 2, 0, 100, 15);
	pmt_buf__putc(&b, ' ');
	pmt_agg__lhist_label(&b, 15, 0, 100, 15);
	ASSERT_STREQ(pmt_buf__cstr(&b), "(..., 0) [200, 300) [1500, ...)");
	b.len = 0;
	pmt_agg__bar(&b, 1, 4);
	ASSERT_STREQ(pmt_buf__cstr(&b), "|@@@@@@@@@@@@@                                       |");
	pmt_buf__free(&b);
}

/* Is word in text, not followed by more of a name ("--max" in "--max-keys")? */
static bool has_option(const char *text, const char *word)
{
	const char *p;
	size_t n = strlen(word);

	for (p = strstr(text, word); p; p = strstr(p + 1, word))
		if (!isalnum((unsigned char)p[n]) && p[n] != '-')
			return true;
	return false;
}

/* Every option of the table is in --help, the man page and the bash
 * completion (all three are written by hand). */
TEST(opts_documented)
{
	static const char *const docs[] = {"tools/man/pmtrace.8.scd", "tools/completion/pmtrace"};
	char *text[2] = {NULL, NULL}, word[64];
	const char *name;
	size_t i, d;

	for (d = 0; d < 2; d++)
		if (pmt_read_file(docs[d], &text[d], NULL))
			FAIL_AT("cannot read %s", docs[d]);
	for (i = 0; text[0] && text[1] && (name = pmt_opts__name(i)); i++) {
		snprintf(word, sizeof(word), "--%s", name);
		if (!has_option(pmt_usage(), word))
			FAIL_AT("%s is not in --help", word);
		if (!has_option(text[1], word))
			FAIL_AT("%s is not in %s", word, docs[1]);
		snprintf(word, sizeof(word), "*--%s*", name); /* scdoc bold */
		if (!strstr(text[0], word))
			FAIL_AT("%s is not in %s", word, docs[0]);
	}
	ASSERT_TRUE(i > 40);
	free(text[0]);
	free(text[1]);
}

/* Each aggregation option sets the function of the same name (the option
 * table and the table of function names are written apart). */
TEST(opts_agg_names)
{
	static const char *const args[] = {NULL, "x", "x", "x", "x", "x", "x", "x:0:10:1"};
	struct pmt_opts o;
	enum pmt_agg_fn fn;
	struct pmt_error terr = {0};
	char *err = terr.msg;
	char opt[32];

	for (fn = PMT_FN_COUNT; fn <= PMT_FN_LHIST; fn++) {
		char *argv[] = {"pmtrace", "--tp", "a:b", opt, (char *)args[fn - 1], NULL};

		snprintf(opt, sizeof(opt), "--%s", pmt_agg_fn__name(fn));
		ASSERT_EQ(parse(args[fn - 1] ? 5 : 4, argv, &o, err), 0);
		ASSERT_EQ(o.agg.fn, fn);
		pmt_opts__free(&o);
	}
}

/* FNV-1a as its published vectors give it, carried on from one call to
 * the next, a string as its bytes */
TEST(hash_fnv1a_vectors)
{
	ASSERT_EQ(pmt_hash_str(PMT_HASH_SEED, ""), 0xcbf29ce484222325ULL);
	ASSERT_EQ(pmt_hash_str(PMT_HASH_SEED, "a"), 0xaf63dc4c8601ec8cULL);
	ASSERT_EQ(pmt_hash_str(PMT_HASH_SEED, "foobar"), 0x85944171f73967e8ULL);
	ASSERT_EQ(pmt_hash_str(pmt_hash_str(PMT_HASH_SEED, "foo"), "bar"),
		  pmt_hash_str(PMT_HASH_SEED, "foobar"));
	ASSERT_EQ(pmt_hash_bytes(PMT_HASH_SEED, "foobar", 6),
		  pmt_hash_str(PMT_HASH_SEED, "foobar"));
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* Texts as shared pieces: each joins back to itself; two are the same,
 * and compare, exactly as their strings do (prefixes, a last piece with
 * no separator, empty texts, separators alone); shared pieces are kept
 * once. */
TEST(pieces_as_the_texts)
{
	static const char *const texts[] = {
		"",
		"\n",
		";",
		"a",
		"a\n",
		"a;",
		"a\nb",
		"a\nb\n",
		"a;b",
		"a;b;",
		"ab\n",
		"a\nbc",
		"b\na",
		"comm\n  f\n  g\n",
		"comm\n  f\n  h\n",
		"comm\n  f\n",
		"x;y;z",
		"x;y",
		"x;yz",
		"x;y;z;",
		"\n\n",
		";;a",
	};
	struct pmt_pieces p = {0};
	uint32_t *t[sizeof(texts) / sizeof(*texts)];
	struct pmt_buf b = {0};
	size_t n = sizeof(texts) / sizeof(*texts), i, j, chars;

	for (i = 0; i < n; i++) {
		ASSERT_TRUE((t[i] = pmt_pieces__add(&p, texts[i])) != NULL);
		b.len = 0;
		pmt_pieces__join(&p, t[i], &b);
		ASSERT_STREQ(pmt_buf__cstr(&b), texts[i]);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			ASSERT_EQ(pmt_pieces__same(t[i], t[j]), !strcmp(texts[i], texts[j]));
			ASSERT_EQ(sign(pmt_pieces__cmp(&p, t[i], t[j])),
				  sign(strcmp(texts[i], texts[j])));
		}
	/* the same text again: the same pieces, nothing new kept */
	chars = p.chars.len;
	free(t[0]);
	ASSERT_TRUE((t[0] = pmt_pieces__add(&p, texts[13])) != NULL);
	ASSERT_TRUE(pmt_pieces__same(t[0], t[13]));
	ASSERT_EQ(pmt_pieces__hash(t[0]), pmt_pieces__hash(t[13]));
	ASSERT_EQ(p.chars.len, chars);
	for (i = 0; i < n; i++)
		free(t[i]);
	/* many texts of few frames: each frame once */
	for (i = 0; i < 5000; i++) {
		uint32_t *x;

		b.len = 0;
		pmt_buf__printf(&b, "c%zu\n  f%zu\n  main\n", i % 7, i % 100);
		ASSERT_TRUE((x = pmt_pieces__add(&p, pmt_buf__cstr(&b))) != NULL);
		ASSERT_EQ(x[0], 3);
		free(x);
	}
	ASSERT_TRUE(p.n < 150);
	pmt_buf__free(&b);
	pmt_pieces__free(&p);
}
