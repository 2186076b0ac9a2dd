// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --stat: each -e EVENT opened as a counting perf event (no sampling, no
 * BPF: the kernel keeps the count), as perf stat opens them:
 *
 *   -- CMD   one event on the held command, inherited by its children and
 *            enabled by its exec (nothing of pmtrace's fork is counted)
 *   -p PID   one event per thread, inherited by what they start
 *   -a, -C   one event per CPU
 *
 * Reads give value, time enabled and time running; a multiplexed counter
 * is scaled by enabled/running (src/output/statfmt.c). An event the
 * machine cannot count is shown <not supported>, the others still count.
 * --interval prints each interval's deltas; the end prints the totals.
 */
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include "util/machine.h"
#include "util/grow.h"
#include "pmu/pmu.h"
#include "output/output.h"
#include "output/statfmt.h"
#include "probes/provider.h"
#include "target/signals.h"
#include "counting/stat.h"
#include "target/target.h"
#include "util/error.h"
#include "util/log.h"
#include "util/strutil.h"

/* perf stat's events when none is given */
static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles",     "instructions",	  "branches",	    "branch-misses",
};

struct counter {
	struct pmt_pmu_event ev;
	int *fds, nfds;
	size_t fds_cap;
	struct pmt_stat_count total, prev; /* prev: at the last interval */
};

struct stat_run {
	const struct pmt_opts *o;
	struct pmt_error err;
	struct counter *c;
	size_t n, cap;
	struct pmt_child child;
	struct pmt_output out;
	uint64_t start_ns, last_ns; /* the start, the last interval printed */
};

static int add_event(struct stat_run *r, const char *spec)
{
	struct counter *c = pmt_grow(r->c, &r->cap, r->n, sizeof(*c), 8);

	if (!c)
		return pmt_error__runtime(&r->err, -ENOMEM, "out of memory");
	r->c = c;
	c = &r->c[r->n];
	memset(c, 0, sizeof(*c));
	if (pmt_pmu__parse(spec, PMT_PMU_SYSFS, &c->ev, &r->err))
		return -EINVAL;
	c->total.type = c->ev.type;
	c->total.config = c->ev.config;
	r->n++;
	return 0;
}

/* Every -e (comma lists split), or perf stat's default set. */
static int resolve(struct stat_run *r)
{
	const char *next;
	char name[256];
	size_t i;
	int k, err;

	for (k = 0; k < r->o->nr_probes; k++)
		for (next = r->o->probes[k].spec; next;)
			if ((next = pmt_pmu__next_name(next, name, sizeof(name)), *name) &&
			    (err = add_event(r, name)))
				return err;
	for (i = 0; !r->o->nr_probes && i < sizeof(default_events) / sizeof(*default_events); i++)
		if ((err = add_event(r, default_events[i])))
			return err;
	/* names point into the array, which adding an event may move: once
	 * it holds them all (they were printed "" for events added before a
	 * move: perf stat's default set) */
	for (i = 0; i < r->n; i++)
		r->c[i].total.name = r->c[i].ev.name;
	return 0;
}

static bool unsupported(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL;
}

/* One more fd for c: true if kept, false if the event cannot be counted
 * here (<not supported>); -errno with r->err set on other failures. */
static int add_fd(struct stat_run *r, struct counter *c, struct perf_event_attr *attr, pid_t pid,
		  int cpu)
{
	int fd = pmt_pmu__open(attr, pid, cpu), *fds;

	if (fd < 0) {
		if (unsupported(errno) || (errno == ESRCH && pid > 0 && !r->o->cmd))
			return errno == ESRCH ? 0 : 1;
		return pmt_error__runtime(&r->err, -errno, "%s: perf_event_open: %s", c->ev.name,
					  strerror(errno));
	}
	fds = pmt_grow(c->fds, &c->fds_cap, (size_t)c->nfds, sizeof(*fds), 8);
	if (!fds) {
		close(fd);
		return pmt_error__runtime(&r->err, -ENOMEM, "out of memory");
	}
	c->fds = fds;
	c->fds[c->nfds++] = fd;
	return 0;
}

/* -p: each thread the process has now (inherit covers those to come). */
static int open_threads(struct stat_run *r, struct counter *c, struct perf_event_attr *attr)
{
	pid_t *tids = NULL;
	size_t n = 0, i;
	int ret = 0;

	if (pmt_thread_ids(r->o->pid, &tids, &n))
		return pmt_error__usage(&r->err, "-p %d: no such process", (int)r->o->pid);
	for (i = 0; i < n && ret >= 0 && ret != 1; i++)
		ret = add_fd(r, c, attr, tids[i], -1);
	free(tids);
	return ret;
}

/* -a or -C: each online CPU (of -C's). */
static int open_cpus(struct stat_run *r, struct counter *c, struct perf_event_attr *attr,
		     const uint64_t *mask)
{
	uint64_t online[PMT_MAX_CPUS / 64];
	int cpu, ret = 0, err;

	if ((err = pmt_online_cpus(online)))
		return pmt_error__runtime(&r->err, err, "cannot read the online CPUs");
	for (cpu = 0; cpu < PMT_MAX_CPUS && ret == 0; cpu++)
		if ((online[cpu / 64] & (mask[cpu / 64] & (1ULL << (cpu % 64)))))
			ret = add_fd(r, c, attr, -1, cpu);
	return ret;
}

static int open_counter(struct stat_run *r, struct counter *c, const uint64_t *cpus)
{
	struct perf_event_attr attr;
	int ret;

	pmt_pmu__count_attr(&c->ev, !r->o->system_wide, r->o->cmd && !r->o->system_wide, &attr);
	if (r->o->system_wide)
		ret = open_cpus(r, c, &attr, cpus);
	else if (r->o->pid)
		ret = open_threads(r, c, &attr);
	else
		ret = add_fd(r, c, &attr, r->child.pid, -1);
	if (ret == 1) {
		c->total.state = PMT_STAT_UNSUPPORTED;
		return 0;
	}
	return ret;
}

/* Sum the fds' readings into c->total. */
static void read_counter(struct counter *c)
{
	uint64_t v[3];
	int i;

	if (c->total.state == PMT_STAT_UNSUPPORTED)
		return;
	c->total.count = c->total.enabled = c->total.running = 0;
	for (i = 0; i < c->nfds; i++) {
		if (read(c->fds[i], v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		c->total.count += v[0];
		c->total.enabled += v[1];
		c->total.running += v[2];
	}
	c->total.state = c->total.running ? PMT_STAT_COUNTED : PMT_STAT_NOT_COUNTED;
}

/* "'CMD ARGS'", "process id 'PID'", "'system wide'", "'CPU(s) LIST'" */
static void target_name(const struct pmt_opts *o, struct pmt_buf *b)
{
	char *const *a;

	if (o->cmd) {
		pmt_buf__putc(b, '\'');
		for (a = o->cmd; *a; a++)
			pmt_buf__printf(b, "%s%s", a == o->cmd ? "" : " ", *a);
		pmt_buf__putc(b, '\'');
	} else if (o->pid) {
		pmt_buf__printf(b, "process id '%d'", (int)o->pid);
	} else if (o->cpus) {
		pmt_buf__printf(b, "'CPU(s) %s'", o->cpus);
	} else {
		pmt_buf__puts(b, "'system wide'");
	}
}

/* Counts as the user's locale writes numbers (thousands separators, as
 * perf stat's), without changing how the rest of pmtrace prints. */
static void print_counts(struct stat_run *r, const struct pmt_stat_count *c, size_t n,
			 uint64_t elapsed, double at)
{
	locale_t loc = newlocale(LC_NUMERIC_MASK, "", (locale_t)0), old = (locale_t)0;
	struct pmt_buf b = {0};

	if (loc)
		old = uselocale(loc);
	if (r->o->json)
		pmt_stat__json(&b, c, n, elapsed, at);
	else
		pmt_stat__text(&b, c, n, elapsed, at);
	if (loc) {
		uselocale(old);
		freelocale(loc);
	}
	pmt_output__line(&r->out, b.p, b.len);
	pmt_output__flush(&r->out);
	pmt_buf__free(&b);
}

/* An interval's deltas. */
static void print_interval(struct stat_run *r, uint64_t now)
{
	struct pmt_stat_count *d = calloc(r->n ? r->n : 1, sizeof(*d));
	size_t i;

	if (!d)
		return;
	for (i = 0; i < r->n; i++) {
		struct counter *c = &r->c[i];

		read_counter(c);
		d[i] = c->total;
		d[i].count -= c->prev.count;
		d[i].enabled -= c->prev.enabled;
		d[i].running -= c->prev.running;
		if (d[i].state == PMT_STAT_COUNTED && !d[i].running)
			d[i].state = PMT_STAT_NOT_COUNTED;
		c->prev = c->total;
	}
	print_counts(r, d, r->n, now - r->last_ns, (double)(now - r->start_ns) / 1e9);
	r->last_ns = now;
	free(d);
}

/* The header, the totals and the footer, as perf stat ends. */
static void print_totals(struct stat_run *r, uint64_t elapsed)
{
	struct pmt_stat_count *t = calloc(r->n ? r->n : 1, sizeof(*t));
	struct pmt_buf b = {0}, what = {0};
	double user = -1, sys = 0;
	struct rusage ru;
	size_t i;

	if (!t)
		return;
	for (i = 0; i < r->n; i++) {
		read_counter(&r->c[i]);
		t[i] = r->c[i].total;
	}
	target_name(r->o, &what);
	if (!r->o->json) {
		pmt_stat__header(&b, pmt_buf__cstr(&what));
		pmt_output__line(&r->out, b.p, b.len);
	}
	print_counts(r, t, r->n, elapsed, -1);
	if (r->child.pid && !getrusage(RUSAGE_CHILDREN, &ru)) {
		user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	}
	if (!r->o->json) {
		b.len = 0;
		pmt_stat__footer(&b, elapsed, user, sys);
		pmt_output__line(&r->out, b.p, b.len);
		pmt_output__flush(&r->out);
	}
	pmt_buf__free(&b);
	pmt_buf__free(&what);
	free(t);
}

/* Has the command, or the -p process, ended? (A process reparented to a
 * PID 1 that does not reap stays a zombie: that is ended too.) */
static bool target_ended(struct stat_run *r)
{
	char path[64], *st = NULL, *p;
	bool ended;

	if (r->child.pid)
		return pmt_child__reap(&r->child);
	if (!r->o->pid)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)r->o->pid);
	if (pmt_read_file(path, &st, NULL))
		return true;
	p = strrchr(st, ')');
	ended = !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
	free(st);
	return ended;
}

/* Until the command ends, -d passes or a signal comes; each --interval
 * printed on the way, and the last part of one at the end. */
static void wait_loop(struct stat_run *r)
{
	const struct pmt_opts *o = r->o;
	uint64_t period = o->agg.interval > 0 ? (uint64_t)(o->agg.interval * 1e9) : 0;
	uint64_t deadline = o->duration > 0 ? r->start_ns + (uint64_t)(o->duration * 1e9) : 0;
	uint64_t next = period ? r->start_ns + period : 0, now, wake;
	struct timespec ts;

	for (;;) {
		now = pmt_now_ns();
		if (pmt_signalled || target_ended(r) || (deadline && now >= deadline))
			break;
		if (next && now >= next) {
			print_interval(r, now);
			next += period;
			continue;
		}
		wake = now + 100000000ULL; /* -p's process is looked at 10 times a second */
		if (deadline && deadline < wake)
			wake = deadline;
		if (next && next < wake)
			wake = next;
		ts.tv_sec = (time_t)((wake - now) / 1000000000ULL);
		ts.tv_nsec = (long)((wake - now) % 1000000000ULL);
		ppoll(NULL, 0, &ts, pmt_signals__wait_mask());
	}
	if (period && now > r->last_ns)
		print_interval(r, now);
}

/* Open every counter; -- CMD's start at its exec, the others now. */
static int open_all(struct stat_run *r)
{
	uint64_t cpus[PMT_MAX_CPUS / 64];
	size_t i;
	int k;

	memset(cpus, 0xff, sizeof(cpus));
	if (r->o->cpus && pmt_parse_cpulist(r->o->cpus, cpus, PMT_MAX_CPUS, &r->err))
		return -EINVAL;
	for (i = 0; i < r->n; i++)
		if (open_counter(r, &r->c[i], cpus) < 0)
			return -1;
	for (i = 0; !r->o->cmd && i < r->n; i++)
		for (k = 0; k < r->c[i].nfds; k++)
			ioctl(r->c[i].fds[k], PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

static int start(struct stat_run *r)
{
	const struct pmt_opts *o = r->o;

	if (resolve(r) || (o->pid && pmt_pid__check(o->pid, &r->err)) ||
	    (o->cmd && pmt_child__check(o->cmd, &r->err)) ||
	    pmt_output__open(&r->out, o->output, o->json ? PMT_OUT_JSON : PMT_OUT_TEXT, &r->err) ||
	    (o->cmd && pmt_child__spawn(&r->child, o->cmd, &r->err)) || open_all(r))
		return -1;
	pmt_signals__startup(false);
	if (o->agg.interval > 0 && !o->json) {
		struct pmt_buf b = {0};

		pmt_stat__interval_header(&b);
		pmt_output__line(&r->out, b.p, b.len);
		pmt_buf__free(&b);
	}
	r->start_ns = r->last_ns = pmt_now_ns();
	if (r->child.pid && pmt_child__release(&r->child, o->cmd[0], &r->err))
		return -1;
	return 0;
}

int pmt_stat__run(const struct pmt_opts *o)
{
	struct stat_run r = {.o = o, .out = {.fd = -1, .wfd = -1}};
	int ret = PMT_EXIT_OK, k;
	size_t i;

	pmt_signals__install();
	pmt_signals__startup(true);
	if (start(&r)) {
		ret = pmt_error__set(&r.err) ? pmt_error__exit_status(&r.err) : PMT_EXIT_FAIL;
		pmt_error__print(&r.err);
	} else {
		wait_loop(&r);
		if (o->agg.interval <= 0)
			print_totals(&r, pmt_now_ns() - r.start_ns);
	}
	for (i = 0; i < r.n; i++) {
		for (k = 0; k < r.c[i].nfds; k++)
			close(r.c[i].fds[k]);
		free(r.c[i].fds);
	}
	free(r.c);
	pmt_error__clear(&r.err);
	if (pmt_output__close(&r.out, &r.err)) {
		pmt_error__print(&r.err);
		ret = PMT_EXIT_FAIL;
	}
	if (r.child.pid) {
		pmt_child__kill(&r.child);
		if (ret == PMT_EXIT_OK)
			ret = pmt_child__exit_code(&r.child);
	}
	return ret;
}
