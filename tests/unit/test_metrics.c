// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Aggregations as Prometheus text 0.0.4 and OpenMetrics: families, "le"
 * bounds of every histogram kind, units, escaping. Entries are made here
 * as the kernel's maps would hold them. */
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate.h"
#include "tracefs/format.h"
#include "output/exposition.h"
#include "output/pprof.h"
#include "util/strutil.h"
#include "test.h"

static void add(struct pmt_agg_entries *e, uint64_t key, int32_t bucket, uint64_t count,
		int64_t sum, int64_t min)
{
	struct pmt_agg_val pc = {.count = count, .sum = sum, .min = min, .max = sum};
	struct pmt_agg_key k;

	memset(&k, 0, sizeof(k));
	k.bucket = bucket;
	memcpy(k.data, &key, sizeof(key));
	pmt_agg_entries__add(e, &k, &pc, 1, NULL);
}

/* The metrics of e (freed) under ao, for probes names[0..n). */
static char *render(struct pmt_agg_opts *ao, const char **names, size_t n,
		    struct pmt_agg_entries *e, const char *metric, bool om)
{
	struct pmt_format *fmt = pmt_test__format("sched_switch.format");
	struct pmt_agg_probe probes[2] = {{.name = names[0], .fmt = fmt},
					  {.name = n > 1 ? names[1] : NULL, .fmt = fmt}};
	const struct pmt_agg_io io = {0};
	struct pmt_buf b = {0};
	struct pmt_agg *agg = NULL;
	uint8_t stack = 0;
	struct pmt_error err = {0};
	char *text = NULL;

	if (!pmt_agg__compile(ao, probes, n, &pmt_test_exprs, &stack, &agg, &err) &&
	    !pmt_agg__metrics(agg, e, &io, metric, om, &b))
		text = strdup(pmt_buf__cstr(&b));
	pmt_agg__free(agg);
	pmt_agg_entries__free(e);
	pmt_buf__free(&b);
	pmt_format__free(fmt);
	return text;
}

static const char *one[] = {"sched:sched_switch"};

TEST(metrics_counter_both_formats)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_COUNT, .by = "pid", .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *t;

	add(&e, 7, 0, 3, 0, 0);
	add(&e, 42, 0, 5, 0, 0);
	t = render(&ao, one, 1, &e, NULL, false);
	ASSERT_STREQ(t, "# HELP pmtrace_sched_sched_switch_events_total count of "
			"sched:sched_switch events by pid, traced by pmtrace\n"
			"# TYPE pmtrace_sched_sched_switch_events_total counter\n"
			"pmtrace_sched_sched_switch_events_total{pid=\"42\"} 5\n"
			"pmtrace_sched_sched_switch_events_total{pid=\"7\"} 3\n");
	free(t);
	add(&e, 7, 0, 3, 0, 0);
	t = render(&ao, one, 1, &e, "switches_total", true);
	ASSERT_STREQ(t, "# HELP switches count of sched:sched_switch events by pid, traced by "
			"pmtrace\n"
			"# TYPE switches counter\n"
			"switches_total{pid=\"7\"} 3\n");
	free(t);
}

/* log2: bucket b holds [2^(b-1), 2^b), so le = 2^b - 1; negatives le -1.
 * OpenMetrics has no _sum when a value was negative. */
TEST(metrics_log2_histogram)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_HIST, .expr = "prev_pid", .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *t;

	add(&e, 0, -1, 2, -10, -6);
	add(&e, 0, 0, 1, 0, 0);
	add(&e, 0, 3, 4, 20, 4);
	t = render(&ao, one, 1, &e, NULL, false);
	ASSERT_TRUE(t && strstr(t, "# TYPE pmtrace_sched_sched_switch_prev_pid histogram\n"
				   "pmtrace_sched_sched_switch_prev_pid_bucket{le=\"-1\"} 2\n"
				   "pmtrace_sched_sched_switch_prev_pid_bucket{le=\"0\"} 3\n"
				   "pmtrace_sched_sched_switch_prev_pid_bucket{le=\"7\"} 7\n"
				   "pmtrace_sched_sched_switch_prev_pid_bucket{le=\"+Inf\"} 7\n"
				   "pmtrace_sched_sched_switch_prev_pid_count 7\n"
				   "pmtrace_sched_sched_switch_prev_pid_sum 10\n"));
	free(t);
	add(&e, 0, -1, 2, -10, -6);
	t = render(&ao, one, 1, &e, NULL, true);
	ASSERT_TRUE(t && strstr(t, "_count 2\n") && !strstr(t, "_sum"));
	free(t);
}

/* lhist 100..500 step 50: below MIN le = 99; above MAX only in +Inf. */
TEST(metrics_linear_histogram)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_LHIST,
				  .expr = "prev_pid",
				  .lmin = 100,
				  .lmax = 500,
				  .lstep = 50,
				  .lbuckets = 8,
				  .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *t;

	add(&e, 0, -1, 1, 5, 5);
	add(&e, 0, 0, 2, 220, 110);
	add(&e, 0, 8, 3, 3000, 900);
	t = render(&ao, one, 1, &e, "pids", false);
	ASSERT_TRUE(t && strstr(t, "pids_bucket{le=\"99\"} 1\n"
				   "pids_bucket{le=\"149\"} 3\n"
				   "pids_bucket{le=\"+Inf\"} 6\n"
				   "pids_count 6\n"
				   "pids_sum 3225\n"));
	free(t);
}

/* Latency in us: bucket b is below 2^b us; seconds in the metric. */
TEST(metrics_latency_seconds)
{
	static const char *two[] = {"sched:sched_wakeup", "sched:sched_switch"};
	struct pmt_agg_opts ao = {.fn = PMT_FN_HIST,
				  .lat_start = "sched:sched_wakeup",
				  .lat_end = "sched:sched_switch",
				  .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *t;

	add(&e, 0, 0, 1, 0, 0);
	add(&e, 0, 10, 1, 1000, 1000);
	t = render(&ao, two, 2, &e, NULL, true);
	ASSERT_TRUE(
		t &&
		strstr(t,
		       "# TYPE pmtrace_sched_sched_wakeup_to_sched_sched_switch_latency_seconds "
		       "histogram\n"
		       "# UNIT pmtrace_sched_sched_wakeup_to_sched_sched_switch_latency_seconds "
		       "seconds\n"
		       "pmtrace_sched_sched_wakeup_to_sched_sched_switch_latency_seconds_bucket{le="
		       "\"1e-06\"} 1\n"
		       "pmtrace_sched_sched_wakeup_to_sched_sched_switch_latency_seconds_bucket{le="
		       "\"0.001024\"} 2\n"));
	ASSERT_TRUE(strstr(t, "_latency_seconds_sum 0.001\n") != NULL);
	free(t);
}

/* Signed sums are gauges; names from the expression. */
TEST(metrics_sum_and_gauges)
{
	struct pmt_agg_opts ao = {.fn = PMT_FN_AVG, .expr = "prev_pid/2", .max_keys = 16};
	struct pmt_agg_entries e = {0};
	char *t;

	add(&e, 0, 0, 4, 10, 1);
	t = render(&ao, one, 1, &e, NULL, false);
	ASSERT_STREQ(t, "# HELP pmtrace_sched_sched_switch_prev_pid_2_avg avg prev_pid/2 of "
			"sched:sched_switch events, traced by pmtrace\n"
			"# TYPE pmtrace_sched_sched_switch_prev_pid_2_avg gauge\n"
			"pmtrace_sched_sched_switch_prev_pid_2_avg 2.5\n");
	free(t);
}

TEST(metrics_label_escaping)
{
	struct pmt_buf b = {0};

	pmt_expo__label_value(&b, "a\\b\"c\nd\x1b", 8);
	ASSERT_STREQ(pmt_buf__cstr(&b), "a\\\\b\\\"c\\nd\\\\x1b");
	b.len = 0;
	pmt_expo__family(&b, "x_total", "counter", NULL, "a\\b\nc \"q\"", true);
	ASSERT_STREQ(pmt_buf__cstr(&b), "# HELP x a\\\\b\\nc \\\"q\\\"\n# TYPE x counter\n");
	pmt_buf__free(&b);
}

/* Interning: one location per (process, address), one function per
 * name; the encoding starts with the sample types. */
TEST(pprof_interning_and_encoding)
{
	struct pmt_pprof *p = pmt_pprof__new("cpu", "nanoseconds", 1000);
	struct pmt_pprof_label l = {"comm", "a", 0};
	struct pmt_pprof_line f = {"f", NULL, 0};
	uint64_t m, l1, l2, l3, locs[2];
	uint8_t *data = NULL;
	size_t len = 0;

	ASSERT_TRUE(p != NULL);
	m = pmt_pprof__mapping(p, 7, 0x1000, 0x2000, 0, "/bin/x", "abcd");
	ASSERT_TRUE(m == 1 && pmt_pprof__mapping(p, 7, 0x1000, 0x2000, 0, "/bin/x", "abcd") == 1);
	l1 = pmt_pprof__location(p, 7, 0x1010, 0x1010, m, &f, 1);
	l2 = pmt_pprof__location(p, 8, 0x1010, 0x1010, m, &f, 1);
	l3 = pmt_pprof__location(p, 7, 0x1010, 0x1010, m, &f, 1);
	ASSERT_TRUE(l1 == 1 && l2 == 2 && l3 == 1);
	locs[0] = l1;
	locs[1] = l2;
	ASSERT_TRUE(!pmt_pprof__sample(p, locs, 2, 3, 0, &l, 1));
	ASSERT_TRUE(!pmt_pprof__encode(p, &data, &len));
	/* field 1 (sample_type), length-delimited */
	ASSERT_TRUE(len > 20 && data[0] == 0x0a);
	/* "nanoseconds" stored once although used twice */
	{
		const uint8_t *at = memmem(data, len, "nanoseconds", 11);

		ASSERT_TRUE(at != NULL);
		ASSERT_TRUE(!memmem(at + 1, len - (size_t)(at - data) - 1, "nanoseconds", 11));
	}
	free(data);
	pmt_pprof__free(p);
}
