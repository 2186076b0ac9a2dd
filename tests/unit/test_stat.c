// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --stat's output laid out as perf stat 6.1 lays it out (lines taken from
 * perf's own output, with these counts), the counting attributes, and
 * event lists. */
#include <linux/perf_event.h>
#include "pmu/pmu.h"
#include "output/statfmt.h"
#include "test.h"

#define SW(name, cfg, n)                                                                 \
	{                                                                                \
		name, PERF_TYPE_SOFTWARE, cfg, PMT_STAT_COUNTED, n, 119040000, 119040000 \
	}

TEST(stat_text_as_perf_stat)
{
	struct pmt_stat_count c[] = {
		SW("page-faults", PERF_COUNT_SW_PAGE_FAULTS, 15248),
		SW("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 91),
		SW("task-clock", PERF_COUNT_SW_TASK_CLOCK, 119040000),
		{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, PMT_STAT_UNSUPPORTED, 0, 0,
		 0},
	};
	struct pmt_buf b = {0};

	pmt_stat__header(&b, "'python3 -c x=[0]*3000000'");
	pmt_stat__text(&b, c, 4, 139887072, -1);
	pmt_stat__footer(&b, 139887072, 0.100133, 0.024616);
	ASSERT_STREQ(
		pmt_buf__cstr(&b),
		"\n Performance counter stats for 'python3 -c x=[0]*3000000':\n\n"
		"             15248      page-faults                      #  128.091 K/sec       "
		"           \n"
		"                91      context-switches                 #  764.449 /sec        "
		"           \n"
		"            119.04 msec task-clock                       #    0.851 CPUs "
		"utilized          \n"
		"   <not supported>      cycles                                                  "
		"    \n"
		"\n       0.139887072 seconds time elapsed\n\n"
		"       0.100133000 seconds user\n       0.024616000 seconds sys\n\n\n");
	/* an interval's lines, one of a counter that did not run */
	b.len = 0;
	c[1].state = PMT_STAT_NOT_COUNTED;
	pmt_stat__text(&b, c, 3, 139887072, 0.100166870);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "     0.100166870              15248      page-faults                      # "
		     " 128.091 K/sec                  \n"
		     "     0.100166870      <not counted>      context-switches                  "
		     "                          \n"
		     "     0.100166870             119.04 msec task-clock                       # "
		     "   0.851 CPUs utilized          \n");
	/* without a clock there is no rate; -a's footer has no user/sys */
	b.len = 0;
	pmt_stat__text(&b, c, 1, 300000000, -1);
	pmt_stat__footer(&b, 300200803, -1, 0);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "             15248      page-faults                                        "
		     "         \n\n       0.300200803 seconds time elapsed\n\n");
	pmt_buf__free(&b);
}

TEST(stat_ratios_and_multiplexing)
{
	struct pmt_stat_count c[] = {
		{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, PMT_STAT_COUNTED,
		 1000000000, 1000, 1000},
		{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, PMT_STAT_COUNTED,
		 1500000000, 1000, 500}, /* counted half the time: scaled x2 */
		{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, PMT_STAT_COUNTED,
		 6000000000, 1000, 1000},
		{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		 PMT_STAT_COUNTED, 200000000, 1000, 1000},
		{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, PMT_STAT_COUNTED,
		 2000000, 1000, 1000},
		{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
		 PMT_STAT_COUNTED, 1000, 1000, 1000},
		{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, PMT_STAT_COUNTED,
		 125, 1000, 1000},
	};
	struct pmt_stat_line l;
	struct pmt_buf b = {0};

	pmt_stat__line(c, 7, 0, 2000000000, &l);
	ASSERT_TRUE(l.value == 1000 && !strcmp(l.runit, "CPUs utilized") && l.ratio == 0.5);
	pmt_stat__line(c, 7, 1, 2000000000, &l);
	ASSERT_TRUE(l.value == 3e9 && !strcmp(l.runit, "GHz") && l.ratio == 3.0 &&
		    l.pct_running == 50.0);
	pmt_stat__line(c, 7, 2, 2000000000, &l);
	ASSERT_TRUE(!strcmp(l.runit, "insn per cycle") && l.ratio == 2.0);
	pmt_stat__line(c, 7, 3, 2000000000, &l);
	ASSERT_TRUE(!strcmp(l.runit, "M/sec") && l.ratio == 200.0);
	pmt_stat__line(c, 7, 4, 2000000000, &l);
	ASSERT_TRUE(!strcmp(l.runit, "of all branches") && l.ratio == 1.0);
	pmt_stat__line(c, 7, 6, 2000000000, &l);
	ASSERT_TRUE(!strcmp(l.runit, "of all cache refs") && l.ratio == 12.5);
	pmt_stat__text(&b, c, 3, 2000000000, -1);
	/* the C locale has no thousands separators (perf prints none either) */
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "           1000.00 msec task-clock                       #    0.500 CPUs "
		     "utilized          \n"
		     "        3000000000      cycles                           #    3.000 GHz    "
		     "                  (50.00%)\n"
		     "        6000000000      instructions                     #    2.00  insn "
		     "per cycle         \n");
	pmt_buf__free(&b);
}

TEST(stat_json_as_perf_stat_j)
{
	struct pmt_stat_count c[] = {
		SW("task-clock", PERF_COUNT_SW_TASK_CLOCK, 438641),
		{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, PMT_STAT_UNSUPPORTED, 0, 0,
		 0},
	};
	struct pmt_buf b = {0};

	c[0].enabled = c[0].running = 438641;
	pmt_stat__json(&b, c, 2, 842000, 1.5);
	ASSERT_STREQ(pmt_buf__cstr(&b),
		     "{\"interval\":1.5,\"counter-value\":\"0.438641\",\"unit\":\"msec\","
		     "\"event\":\"task-clock\",\"event-runtime\":438641,\"pcnt-running\":100,"
		     "\"metric-value\":0.520951306413302,\"metric-unit\":\"CPUs utilized\"}\n"
		     "{\"interval\":1.5,\"counter-value\":\"<not supported>\",\"unit\":\"\","
		     "\"event\":\"cycles\",\"event-runtime\":0,\"pcnt-running\":100}\n");
	pmt_buf__free(&b);
}

TEST(stat_count_attr_and_lists)
{
	struct pmt_pmu_event ev = {.type = PERF_TYPE_HARDWARE,
				   .config = PERF_COUNT_HW_INSTRUCTIONS,
				   .exclude_kernel = true};
	struct perf_event_attr a;
	const char *next;
	char name[64];

	/* -- CMD: inherited, enabled by the exec, never sampling */
	pmt_pmu__count_attr(&ev, true, true, &a);
	ASSERT_TRUE(a.type == PERF_TYPE_HARDWARE && a.config == PERF_COUNT_HW_INSTRUCTIONS);
	ASSERT_TRUE(a.inherit && a.enable_on_exec && a.disabled && a.exclude_kernel &&
		    !a.exclude_user);
	ASSERT_EQ(a.sample_period, 0);
	ASSERT_EQ(a.sample_type, 0);
	ASSERT_EQ(a.read_format, PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
	ASSERT_EQ(a.size, sizeof(a));
	/* -a: per CPU, enabled by pmtrace once all are open */
	pmt_pmu__count_attr(&ev, false, false, &a);
	ASSERT_TRUE(!a.inherit && !a.enable_on_exec && a.disabled);

	next = pmt_pmu__next_name("cycles,cpu/event=0x3c,umask=1/u,page-faults", name,
				  sizeof(name));
	ASSERT_STREQ(name, "cycles");
	next = pmt_pmu__next_name(next, name, sizeof(name));
	ASSERT_STREQ(name, "cpu/event=0x3c,umask=1/u");
	next = pmt_pmu__next_name(next, name, sizeof(name));
	ASSERT_STREQ(name, "page-faults");
	ASSERT_TRUE(next == NULL);
}
