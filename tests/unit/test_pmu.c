// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* PMU event names and sysfs terms (tests/data/pmu is a sysfs copy), and
 * the flame graph writer. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include "output/flamegraph.h"
#include "pmu/pmu.h"
#include "test.h"

#define SYSFS "tests/data/pmu"

static int parse(const char *spec, struct pmt_pmu_event *ev, char *err)
{
	struct pmt_error e = {0};
	int ret = pmt_pmu__parse(spec, SYSFS, ev, &e);

	snprintf(err, 512, "%.511s", e.msg);
	return ret;
}

TEST(pmu_named_events)
{
	struct pmt_pmu_event ev;
	char err[512];

	ASSERT_EQ(parse("cpu-clock", &ev, err), 0);
	ASSERT_EQ(ev.type, PERF_TYPE_SOFTWARE);
	ASSERT_EQ(ev.config, PERF_COUNT_SW_CPU_CLOCK);
	ASSERT_EQ(ev.hardware, 0);
	ASSERT_EQ(parse("major-faults", &ev, err), 0);
	ASSERT_EQ(ev.config, PERF_COUNT_SW_PAGE_FAULTS_MAJ);
	ASSERT_EQ(parse("cycles:u", &ev, err), 0);
	ASSERT_EQ(ev.type, PERF_TYPE_HARDWARE);
	ASSERT_EQ(ev.config, PERF_COUNT_HW_CPU_CYCLES);
	ASSERT_EQ(ev.exclude_kernel, 1);
	ASSERT_EQ(ev.exclude_user, 0);
	ASSERT_EQ(ev.hardware, 1);
	ASSERT_EQ(parse("instructions:k", &ev, err), 0);
	ASSERT_EQ(ev.exclude_user, 1);
	ASSERT_EQ(parse("branch-misses:uk", &ev, err), 0);
	ASSERT_EQ(ev.exclude_user + ev.exclude_kernel, 0);
	ASSERT_EQ(parse("LLC-load-misses", &ev, err), 0);
	ASSERT_EQ(ev.type, PERF_TYPE_HW_CACHE);
	ASSERT_EQ(ev.config, PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				     (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	ASSERT_EQ(parse("L1-dcache-stores", &ev, err), 0);
	ASSERT_EQ(ev.config, PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_WRITE << 8));
	ASSERT_EQ(parse("r1a8", &ev, err), 0);
	ASSERT_EQ(ev.type, PERF_TYPE_RAW);
	ASSERT_EQ(ev.config, 0x1a8);
	ASSERT_EQ(parse("ref-cycles", &ev, err), 0); /* not raw "ef-cycles" */
	ASSERT_EQ(ev.config, PERF_COUNT_HW_REF_CPU_CYCLES);
}

TEST(pmu_sysfs_terms)
{
	struct pmt_pmu_event ev;
	char err[512];

	ASSERT_EQ(parse("cpu/event=0x3c,umask=0x1,inv,cmask=2/", &ev, err), 0);
	ASSERT_EQ(ev.type, 4);
	ASSERT_EQ(ev.config, 0x3c | (1 << 8) | (1 << 23) | (2 << 24));
	ASSERT_EQ(parse("cpu/branch-all/u", &ev, err), 0);
	ASSERT_EQ(ev.config, 0xc4 | (1 << 8));
	ASSERT_EQ(ev.exclude_kernel, 1);
	ASSERT_EQ(parse("cpu/split=0x35/", &ev, err), 0); /* bits 0-3 then 8-11 */
	ASSERT_EQ(ev.config1, 0x5 | (0x3 << 8));
	ASSERT_EQ(parse("cpu/config=0x1234,config1=7/:k", &ev, err), 0);
	ASSERT_EQ(ev.config, 0x1234);
	ASSERT_EQ(ev.config1, 7);
	ASSERT_EQ(ev.exclude_user, 1);
	ASSERT_EQ(parse("msr/tsc/", &ev, err), 0);
	ASSERT_EQ(ev.type, 9);
}

TEST(pmu_errors)
{
	struct pmt_pmu_event ev;
	char err[512];

	ASSERT_EQ(parse("cpu-clok", &ev, err), -EINVAL);
	ASSERT_STREQ(err,
		     "unknown event 'cpu-clok'; did you mean cpu-clock? (pmtrace --list shows this "
		     "machine's events; raw: rNNNN, PMU/TERM=VAL/)");
	ASSERT_EQ(parse("cycles:x", &ev, err), -EINVAL);
	ASSERT_STREQ(
		err,
		"event 'cycles:x': unknown modifier 'x': expected :u (user), :k (kernel) or :uk");
	ASSERT_EQ(parse("gpu/event=1/", &ev, err), -EINVAL);
	ASSERT_TRUE(strstr(err, "no PMU 'gpu' on this machine; it has:") && strstr(err, " cpu") &&
		    strstr(err, " msr"));
	ASSERT_EQ(parse("cpu/evnt=1/", &ev, err), -EINVAL);
	ASSERT_TRUE(strstr(err, "cpu has no term or event 'evnt'; terms:") &&
		    strstr(err, " event") && strstr(err, "events:") && strstr(err, "cpu-cycles"));
	/* a PMU with no format terms and no events says so (was an empty list) */
	ASSERT_EQ(parse("software/nosuchterm=1/", &ev, err), -EINVAL);
	ASSERT_STREQ(err, "event 'software/nosuchterm=1/': software has no term or event "
			  "'nosuchterm'; terms: config config1 config2; events: none");
	/* one letter is no close name of anything */
	ASSERT_EQ(parse("r", &ev, err), -EINVAL);
	ASSERT_TRUE(!strstr(err, "did you mean"));
	ASSERT_EQ(parse("cpu/event=0x1ff/", &ev, err), -EINVAL);
	ASSERT_STREQ(
		err,
		"event 'cpu/event=0x1ff/': event=0x1ff does not fit cpu's format 'config:0-7'");
	ASSERT_EQ(parse("cpu/event=zz/", &ev, err), -EINVAL);
	ASSERT_STREQ(err, "event 'cpu/event=zz/': term event=zz: the value must be a number");
	ASSERT_EQ(parse("cpu/event=1", &ev, err), -EINVAL);
}

TEST(pmu_listing)
{
	struct pmt_names n = {0};
	size_t i;
	int sw = 0, hw = 0, pmu = 0;

	pmt_pmu__known(&n, false);
	pmt_pmu__sysfs_events(SYSFS, &n);
	for (i = 0; i < n.n; i++) {
		sw += !strcmp(n.v[i], "page-faults");
		hw += !strcmp(n.v[i], "cycles");
		pmu += !strcmp(n.v[i], "cpu/branch-all/") + !strcmp(n.v[i], "msr/tsc/");
	}
	pmt_names__free(&n);
	ASSERT_EQ(sw, 1);
	ASSERT_EQ(hw, 0);
	ASSERT_EQ(pmu, 2);
	ASSERT_EQ(pmt_pmu__has_hardware(SYSFS), 1);
	ASSERT_EQ(pmt_pmu__has_hardware("tests/data/pmu/software"), 0);
}

TEST(flamegraph_svg)
{
	struct pmt_flame_stack st[] = {
		{"app;main;outer;inner", 30},
		{"app;main;outer", 10},
		{"app;main;b<&>", 60},
	};
	struct pmt_buf b = {0};
	const char *s;

	ASSERT_EQ(pmt_flame__svg(&b, st, 3, "cpu-clock"), 0);
	s = pmt_buf__cstr(&b);
	ASSERT_TRUE(strstr(s, "<svg ") && strstr(s, "</svg>\n"));
	ASSERT_TRUE(strstr(s, "cpu-clock (100 samples)"));
	/* the root, then shares of every frame in their titles */
	ASSERT_TRUE(strstr(s, "<title>all (100 samples, 100.00%)</title>"));
	ASSERT_TRUE(strstr(s, "<title>outer (40 samples, 40.00%)</title>"));
	ASSERT_TRUE(strstr(s, "<title>inner (30 samples, 30.00%)</title>"));
	ASSERT_TRUE(strstr(s, "<title>b&lt;&amp;&gt; (60 samples, 60.00%)</title>"));
	/* children in name order: b<&> (60) left of outer (40) */
	ASSERT_TRUE(strstr(s, "data-x=\"0.000000000\" data-w=\"0.600000000\""));
	ASSERT_TRUE(strstr(s, "data-x=\"0.600000000\" data-w=\"0.400000000\""));
	ASSERT_TRUE(strstr(s, ">inner</text>"));
	pmt_buf__free(&b);
}
