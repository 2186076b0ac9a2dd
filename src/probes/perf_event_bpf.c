// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The PMU provider: -e EVENT opens one sampling perf event per online CPU
 * (or per thread of the target, inherited by its children) and attaches
 * pmt_pe (bpf/perf_event.bpf.c) to each. The program sees every overflow,
 * builds a struct pmt_sample, and filters, streams or aggregates it; perf
 * itself writes nothing (the events have no ring).
 *
 * A program's interval:s:N block that prints is one such event: cpu-clock
 * on the first online CPU, every N s, whatever the target (bpftrace's
 * interval probe).
 *
 * The sample is presented as a record with a format of its own, so the
 * filter compiler, the aggregation keys and the stream writer read ip,
 * addr, period, value and mode as fields, with no code of their own.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/log.h"
#include "pmu/pmu.h"
#include "probes/provider.h"
#include "probes/stackrec.h"
#include "symbols/symbols.h"
#include "pmtrace.skel.h"

/* this file's provider, defined at its end (src/options/kinds.h) */
extern const struct pmt_provider pmt_perf_provider;

static const char *const mode_names[] = {"kernel", "user", NULL};

/* A probe's: its event, and an interval's period (0: the options' rate) */
struct pe_priv {
	struct pmt_pmu_event ev; /* first: pe_sample_value reads it */
	uint64_t every_ns;
};

/* The sample's fields, and the hidden stack keys. A counter that follows
 * a task's children (inherit: -- CMD, -p) cannot be read from the overflow
 * (perf_event_read_local() refuses inherited events): no value then. */
static struct pmt_format *sample_format(const char *name, bool value)
{
	static const struct {
		const char *name, *type;
		uint32_t off;
		enum pmt_field_kind kind;
	} defs[] = {
		{"ip", "void *", offsetof(struct pmt_sample, ip), PMT_F_PTR},
		{"addr", "void *", offsetof(struct pmt_sample, addr), PMT_F_PTR},
		{"period", "u64", offsetof(struct pmt_sample, period), PMT_F_INT},
		{"value", "u64", offsetof(struct pmt_sample, value), PMT_F_INT},
		{"mode", "u8", offsetof(struct pmt_sample, mode), PMT_F_INT},
	};
	struct pmt_format *f = pmt_format__new(name, sizeof(struct pmt_sample));
	struct pmt_field *fl;
	size_t i;

	for (i = 0; f && i < sizeof(defs) / sizeof(defs[0]); i++) {
		if (!value && !strcmp(defs[i].name, "value")) {
			f->absent = "value";
			f->absent_why = "a counter that follows a command's or process's children "
					"(-- CMD, -p) cannot be read in the kernel; trace -a and "
					"filter on pid, or use period";
			continue;
		}
		fl = pmt_format__add(f, defs[i].name, defs[i].type, defs[i].off,
				     strcmp(defs[i].name, "mode") ? 8 : 1, defs[i].kind);
		if (!fl)
			goto nomem;
		if (!strcmp(defs[i].name, "mode"))
			fl->symbols = mode_names;
	}
	if (f && !pmt_stackrec__add_fields(f))
		return f;
nomem:
	pmt_format__free(f);
	return NULL;
}

static void fill_attr(const struct pmt_prov_ctx *c, const struct pmt_pmu_event *ev,
		      uint64_t every_ns, struct perf_event_attr *attr)
{
	const struct pmt_opts *o = c->opts;

	/* the counting attributes, sampling besides (no reads: no format) */
	pmt_pmu__count_attr(ev, !o->system_wide && !every_ns, false, attr);
	attr->read_format = 0;
	attr->sample_type =
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_ADDR;
	if (every_ns) {
		attr->sample_period = every_ns;
	} else if (o->period) {
		attr->sample_period = o->period;
	} else {
		attr->freq = 1;
		attr->sample_freq = o->freq;
	}
}

static bool is_cycles(const struct pmt_pmu_event *ev)
{
	return ev->type == PERF_TYPE_HARDWARE && ev->config == PERF_COUNT_HW_CPU_CYCLES;
}

static void no_pmu_hint(struct pmt_prov_ctx *c)
{
	pmt_error__hint(c->err,
			"software events sample without one: cpu-clock, task-clock, page-faults, "
			"minor-faults, major-faults, context-switches, cpu-migrations");
}

/*
 * Can this event be opened for sampling here? Tried once on one CPU before
 * anything is loaded, so a bad event is a usage error with nothing left
 * behind. cycles falls back to cpu-clock without a PMU, as perf does.
 */
static int check_event(struct pmt_prov_ctx *c, struct pmt_pmu_event *ev, uint64_t every_ns)
{
	struct perf_event_attr attr;
	int fd, err;

	fill_attr(c, ev, every_ns, &attr);
	attr.inherit = 0;
	fd = pmt_pmu__open(&attr, -1, pmt_first_online_cpu());
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (ev->hardware && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV) &&
	    !pmt_pmu__has_hardware(PMT_PMU_SYSFS)) {
		if (is_cycles(ev)) {
			const char *mods = strchr(ev->name, ':');
			char old[sizeof(ev->name)];

			snprintf(old, sizeof(old), "%s", ev->name);
			ev->type = PERF_TYPE_SOFTWARE;
			ev->config = PERF_COUNT_SW_CPU_CLOCK;
			ev->hardware = false;
			snprintf(ev->name, sizeof(ev->name), "cpu-clock%s", mods ? mods : "");
			pmt_warn("%s: this machine has no hardware PMU (no CPU PMU in %s; a VM "
				 "without PMU passthrough?): falling back to %s, as perf does",
				 old, PMT_PMU_SYSFS, ev->name);
			return check_event(c, ev, every_ns);
		}
		pmt_error__usage(
			c->err,
			"%s: this machine has no hardware PMU (no CPU PMU in %s; a VM without "
			"PMU passthrough?), so hardware events cannot be sampled",
			ev->name, PMT_PMU_SYSFS);
		no_pmu_hint(c);
		return -EINVAL;
	}
	/* (the kernel lowers its limit from 100,000 when its sampling
	 * interrupts take long: seen at hundreds under QEMU's TCG) */
	if (err == EINVAL && c->opts->freq) {
		char *rate = NULL;
		unsigned long long max = 0;

		if (!pmt_read_file("/proc/sys/kernel/perf_event_max_sample_rate", &rate, NULL))
			max = strtoull(rate, NULL, 10);
		free(rate);
		if (max && max < c->opts->freq) {
			pmt_error__usage(
				c->err,
				"%s: --freq %u is above the kernel's limit of %llu samples/s",
				ev->name, c->opts->freq, max);
			pmt_error__hint(
				c->err,
				"a lower --freq, or raise kernel.perf_event_max_sample_rate");
			return -EINVAL;
		}
	}
	if (err == EINVAL || err == EOPNOTSUPP) {
		pmt_error__usage(
			c->err,
			"%s: the kernel refused this event for sampling (%s): a counting-only "
			"PMU event, or terms this PMU does not take",
			ev->name, strerror(err));
		pmt_error__hint(
			c->err,
			"sampling events: cpu-clock, task-clock, page-faults, ...; see pmtrace --list");
		return -EINVAL;
	}
	if (err == ENOENT || err == ENODEV) {
		pmt_error__usage(c->err, "%s: not supported by this machine's PMU (%s)", ev->name,
				 strerror(err));
		pmt_error__hint(c->err, "pmtrace --list shows the events this machine has");
		return -EINVAL;
	}
	pmt_error__usage(c->err, "%s: perf_event_open: %s", ev->name, strerror(err));
	if (err == EACCES || err == EPERM)
		pmt_error__hint(c->err, "needs root or CAP_PERFMON (kernel.perf_event_paranoid)");
	return -EINVAL;
}

static int pe_resolve(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg)
{
	struct pmt_pmu_event ev = {0};
	struct pe_priv *priv;
	int ret;

	if ((ret = pmt_pmu__parse(arg->spec, PMT_PMU_SYSFS, &ev, c->err)) ||
	    (ret = check_event(c, &ev, arg->every_ns)))
		return ret;
	ret = pmt_prov__add(c, &pmt_perf_provider, ev.name,
			    sample_format(ev.name, c->opts->system_wide || arg->every_ns),
			    arg->filter, sizeof(*priv), (void **)&priv);
	if (priv)
		*priv = (struct pe_priv){ev, arg->every_ns};
	return ret;
}

/* A CPU clock's sample stands for its period of CPU time (1/freq s when
 * sampled by rate); another event's for its period's count of events
 * when sampled by --period, and for nothing known when by rate. */
static bool pe_sample_value(const struct pmt_prov_ctx *c, const struct pmt_probe *p,
			    struct pmt_sample_value *v)
{
	const struct pe_priv *pv = p->priv;
	const struct pmt_pmu_event *ev = &pv->ev;
	const struct pmt_opts *o = c->opts;

	if (pv->every_ns)
		return false; /* a program's interval: no profile */
	if (ev->type == PERF_TYPE_SOFTWARE &&
	    (ev->config == PERF_COUNT_SW_CPU_CLOCK || ev->config == PERF_COUNT_SW_TASK_CLOCK)) {
		*v = (struct pmt_sample_value){
			"cpu", "nanoseconds",
			o->period ? (int64_t)o->period
				  : (int64_t)(1000000000ULL / (o->freq ? o->freq : 1))};
		return true;
	}
	if (!o->period)
		return false;
	*v = (struct pmt_sample_value){ev->name, "count", (int64_t)o->period};
	return true;
}

static void pe_prepare(struct pmt_prov_ctx *c)
{
	bpf_program__set_autoload(c->skel->progs.pmt_pe, true);
}

static int add_link(struct pmt_prov_ctx *c, struct pmt_probe *p, int pfd)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = p->id);
	struct bpf_link *l;
	int err;

	if (!pmt_probe__link_room(p)) {
		close(pfd);
		return pmt_error__runtime(c->err, -ENOMEM, "%s: out of memory", p->name);
	}
	l = bpf_program__attach_perf_event_opts(c->skel->progs.pmt_pe, pfd, &opts);
	if (!l) {
		err = pmt_error__attach(c->err, -errno, p->name, "the perf event", strerror(errno));
		close(pfd);
		return err;
	}
	p->links[p->nlinks++] = l; /* the link owns pfd; attach enabled it */
	return 0;
}

/* -p PID: every thread it has now; inherit covers the ones to come. */
static int attach_threads(struct pmt_prov_ctx *c, struct pmt_probe *p, struct perf_event_attr *attr)
{
	pid_t *tids = NULL;
	size_t n = 0, i;
	int fd, err = pmt_thread_ids(c->opts->pid, &tids, &n);

	if (err)
		return pmt_error__runtime(c->err, err,
					  "%s: cannot list the threads of process %d: %s", p->name,
					  (int)c->opts->pid, strerror(-err));
	for (i = 0; i < n && !err; i++) {
		fd = pmt_pmu__open(attr, tids[i], -1);
		if (fd < 0) {
			if (errno == ESRCH)
				continue; /* the thread just ended */
			err = pmt_error__runtime(c->err, -errno,
						 "%s: perf_event_open for thread %d: %s", p->name,
						 (int)tids[i], strerror(errno));
			break;
		}
		err = add_link(c, p, fd);
	}
	free(tids);
	return err;
}

static bool is_value(const struct pmt_operand *o)
{
	return o->src == PMT_FSRC_FIELD && o->off == offsetof(struct pmt_sample, value);
}

/* Does anything read the sample's counter value? */
static bool wants_value(const struct pmt_probe *p)
{
	int i;

	if (!pmt_format__field(p->fmt, "value"))
		return false; /* -- CMD, -p: the kernel cannot read it */
	if (p->action == PMT_ACT_STREAM || is_value(&p->agg.value))
		return true;
	for (i = 0; p->filter && i < p->filter->n && i < PMT_FILTER_MAX; i++)
		if (is_value(&p->filter->e[i].o))
			return true;
	for (i = 0; i < p->agg.nkeys && i < PMT_AGG_KEYS; i++)
		if (is_value(&p->agg.keys[i].o))
			return true;
	return false;
}

static int pe_attach(struct pmt_prov_ctx *c, struct pmt_probe *p)
{
	struct pmt_probe_cfg cfg = {.fixed_size = sizeof(struct pmt_sample)};
	const struct pe_priv *pv = p->priv;
	struct perf_event_attr attr;
	uint64_t online[PMT_MAX_CPUS / 64];
	int cpu, fd, err;

	cfg.want_value = wants_value(p);
	cfg.any_task = pv->every_ns != 0;
	if ((err = pmt_prov__store_cfg(c, p, &cfg)))
		return err;
	fill_attr(c, &pv->ev, pv->every_ns, &attr);
	if (pv->every_ns) {
		/* an interval: one CPU's clock, whatever the target */
		cpu = pmt_first_online_cpu();
		fd = pmt_pmu__open(&attr, -1, cpu);
		if (fd < 0)
			return pmt_error__runtime(c->err, -errno,
						  "%s: perf_event_open on CPU %d: %s", p->name, cpu,
						  strerror(errno));
		return add_link(c, p, fd);
	}
	if (c->opts->pid)
		return attach_threads(c, p, &attr);
	if (c->child) {
		/* the held command; inherit follows its children */
		fd = pmt_pmu__open(&attr, c->child, -1);
		if (fd < 0)
			return pmt_error__runtime(c->err, -errno,
						  "%s: perf_event_open for the command: %s",
						  p->name, strerror(errno));
		return add_link(c, p, fd);
	}
	if ((err = pmt_online_cpus(online)))
		return pmt_error__runtime(
			c->err, err,
			"cannot read the online CPUs from /sys/devices/system/cpu/online");
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		if (!(online[cpu / 64] & (1ULL << (cpu % 64))))
			continue; /* offline: no event can be opened */
		if (c->cpu_mask && !(c->cpu_mask[cpu / 64] & (1ULL << (cpu % 64))))
			continue;
		fd = pmt_pmu__open(&attr, -1, cpu);
		if (fd < 0)
			return pmt_error__runtime(c->err, -errno,
						  "%s: perf_event_open on CPU %d: %s", p->name, cpu,
						  strerror(errno));
		if ((err = add_link(c, p, fd)))
			return err;
	}
	return 0;
}

/* The sample's ip, named as its "sym"; false for a record too short to
 * hold one. */
static bool pe_record_ip(const struct pmt_record *r, uint64_t *ip)
{
	const struct pmt_sample *smp = r->data;

	if (r->len < sizeof(*smp))
		return false;
	*ip = smp->ip;
	return true;
}

const struct pmt_provider pmt_perf_provider = {
	.name = "perf_event",
	.resolve = pe_resolve,
	.prepare = pe_prepare,
	.sample_value = pe_sample_value,
	.attach = pe_attach,
	.record_ip = pe_record_ip,
	.user_addrs = true,
};
