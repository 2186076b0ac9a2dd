// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --stat's text and JSON, as perf stat writes them (statfmt.h). */
#include <linux/perf_event.h>
#include <string.h>
#include "output/statfmt.h"

bool pmt_stat__is_clock(const struct pmt_stat_count *c)
{
	return c->type == PERF_TYPE_SOFTWARE &&
	       (c->config == PERF_COUNT_SW_TASK_CLOCK || c->config == PERF_COUNT_SW_CPU_CLOCK);
}

static bool is_hw(const struct pmt_stat_count *c, uint64_t config)
{
	return c->type == PERF_TYPE_HARDWARE && c->config == config;
}

static double scaled(const struct pmt_stat_count *c)
{
	if (c->state != PMT_STAT_COUNTED)
		return 0;
	if (c->running && c->running < c->enabled)
		return (double)c->count * (double)c->enabled / (double)c->running;
	return (double)c->count;
}

/* The first counted counter matching type/config (a clock: task-clock
 * before cpu-clock, as perf's nsecs): its scaled value, or 0. */
static double find(const struct pmt_stat_count *c, size_t n, uint32_t type, uint64_t config)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].type == type && c[i].config == config && c[i].state == PMT_STAT_COUNTED)
			return scaled(&c[i]);
	return 0;
}

static double nsecs(const struct pmt_stat_count *c, size_t n)
{
	double t = find(c, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);

	return t ? t : find(c, n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
}

static void ratio(struct pmt_stat_line *l, double v, const char *fmt, const char *unit)
{
	l->ratio = v;
	l->rfmt = fmt;
	l->runit = unit;
}

/* Events per second of the clocks' time, in K, M or G as perf scales. */
static void rate(struct pmt_stat_line *l, double count, double ns)
{
	double r = count * 1e9 / ns;

	if (r >= 1e9)
		ratio(l, r / 1e9, "%8.3f", "G/sec");
	else if (r >= 1e6)
		ratio(l, r / 1e6, "%8.3f", "M/sec");
	else if (r >= 1e3)
		ratio(l, r / 1e3, "%8.3f", "K/sec");
	else
		ratio(l, r, "%8.3f", "/sec");
}

void pmt_stat__line(const struct pmt_stat_count *c, size_t n, size_t i, uint64_t elapsed_ns,
		    struct pmt_stat_line *l)
{
	const struct pmt_stat_count *e = &c[i];
	double v = scaled(e), ns = nsecs(c, n), other;

	memset(l, 0, sizeof(*l));
	l->value = v;
	l->unit = "";
	l->pct_running = e->enabled && e->running < e->enabled
				 ? 100.0 * (double)e->running / (double)e->enabled
				 : 100.0;
	if (e->state != PMT_STAT_COUNTED)
		return;
	if (pmt_stat__is_clock(e)) {
		l->value = v / 1e6;
		l->unit = "msec";
		if (elapsed_ns)
			ratio(l, v / (double)elapsed_ns, "%8.3f", "CPUs utilized");
	} else if (is_hw(e, PERF_COUNT_HW_CPU_CYCLES) && ns) {
		ratio(l, v / ns, "%8.3f", "GHz");
	} else if (is_hw(e, PERF_COUNT_HW_INSTRUCTIONS) &&
		   (other = find(c, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES))) {
		ratio(l, v / other, "%7.2f ", "insn per cycle");
	} else if (is_hw(e, PERF_COUNT_HW_BRANCH_MISSES) &&
		   (other = find(c, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS))) {
		ratio(l, 100 * v / other, "%7.2f%%", "of all branches");
	} else if (is_hw(e, PERF_COUNT_HW_CACHE_MISSES) &&
		   (other = find(c, n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES))) {
		ratio(l, 100 * v / other, "%8.3f %%", "of all cache refs");
	} else if (ns) {
		rate(l, v, ns);
	}
}

void pmt_stat__header(struct pmt_buf *b, const char *what)
{
	pmt_buf__printf(b, "\n Performance counter stats for %s:\n\n", what);
}

void pmt_stat__interval_header(struct pmt_buf *b)
{
	pmt_buf__puts(b, "#           time             counts unit events\n");
}

static void text_line(struct pmt_buf *b, const struct pmt_stat_count *c, size_t n, size_t i,
		      uint64_t elapsed_ns, double at)
{
	const struct pmt_stat_count *e = &c[i];
	struct pmt_stat_line l;

	pmt_stat__line(c, n, i, elapsed_ns, &l);
	if (at >= 0)
		pmt_buf__printf(b, "%16.9f ", at);
	if (e->state == PMT_STAT_UNSUPPORTED)
		pmt_buf__printf(b, "%18s", "<not supported>");
	else if (e->state == PMT_STAT_NOT_COUNTED)
		pmt_buf__printf(b, "%18s", "<not counted>");
	else if (*l.unit)
		pmt_buf__printf(b, "%'18.2f", l.value);
	else
		pmt_buf__printf(b, "%'18.0f", l.value);
	pmt_buf__printf(b, " %-4s %-32s ", pmt_stat__is_clock(e) ? "msec" : "", e->name);
	if (l.runit) {
		pmt_buf__puts(b, "# ");
		pmt_buf__printf(b, l.rfmt, l.ratio);
		pmt_buf__printf(b, " %-23s", l.runit);
	} else {
		pmt_buf__printf(b, "%27s", "");
	}
	if (e->state == PMT_STAT_COUNTED && l.pct_running < 100.0)
		pmt_buf__printf(b, "  (%.2f%%)", l.pct_running);
	pmt_buf__putc(b, '\n');
}

void pmt_stat__text(struct pmt_buf *b, const struct pmt_stat_count *c, size_t n,
		    uint64_t elapsed_ns, double at)
{
	size_t i;

	for (i = 0; i < n; i++)
		text_line(b, c, n, i, elapsed_ns, at);
}

void pmt_stat__footer(struct pmt_buf *b, uint64_t elapsed_ns, double user_s, double sys_s)
{
	pmt_buf__printf(b, "\n%18.9f seconds time elapsed\n\n", (double)elapsed_ns / 1e9);
	if (user_s >= 0)
		pmt_buf__printf(b, "%18.9f seconds user\n%18.9f seconds sys\n\n\n", user_s, sys_s);
}

void pmt_stat__json(struct pmt_buf *b, const struct pmt_stat_count *c, size_t n,
		    uint64_t elapsed_ns, double at)
{
	struct pmt_buf v = {0};
	struct pmt_stat_line l;
	struct pmt_json j;
	size_t i;

	for (i = 0; i < n; i++) {
		pmt_stat__line(c, n, i, elapsed_ns, &l);
		v.len = 0;
		if (c[i].state == PMT_STAT_COUNTED)
			pmt_buf__printf(&v, "%f", l.value);
		else
			pmt_buf__puts(&v, c[i].state == PMT_STAT_UNSUPPORTED ? "<not supported>"
									     : "<not counted>");
		pmt_json__init(&j, b);
		pmt_json__object(&j);
		if (at >= 0) {
			pmt_json__key(&j, "interval");
			pmt_json__double(&j, at);
		}
		pmt_json__field_strn(&j, "counter-value", v.p, v.len);
		pmt_json__field_str(&j, "unit", l.unit);
		pmt_json__field_str(&j, "event", c[i].name);
		pmt_json__field_u64(&j, "event-runtime", c[i].running);
		pmt_json__key(&j, "pcnt-running");
		pmt_json__double(&j, l.pct_running);
		if (l.runit) {
			pmt_json__key(&j, "metric-value");
			pmt_json__double(&j, l.ratio);
			pmt_json__field_str(&j, "metric-unit", l.runit);
		}
		pmt_json__end(&j);
		pmt_buf__putc(b, '\n');
	}
	pmt_buf__free(&v);
}
