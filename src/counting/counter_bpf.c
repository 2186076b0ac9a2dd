// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --counter's per-CPU counters (counter.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes/provider.h"
#include "counting/counter.h"
#include "pmtrace.skel.h"

_Static_assert(PMT_MAX_COUNTERS == PMT_COUNTERS, "--counter's limit is the programs'");

/* Threads whose running counts are kept (LRU: the least recently seen
 * go first, and start again from 0 when met again). */
#define PMT_COUNTED_THREADS 16384

static int count_open(const struct pmt_pmu_event *ev, int cpu)
{
	struct perf_event_attr attr;

	pmt_pmu__count_attr(ev, false, false, &attr);
	return pmt_pmu__open(&attr, -1, cpu);
}

static int resolve_one(struct pmt_pmu_event *ev, const char *spec, struct pmt_error *err)
{
	int fd;

	if (pmt_pmu__parse(spec, PMT_PMU_SYSFS, ev, err)) {
		pmt_error__prefix(err, "--counter: ");
		return -EINVAL;
	}
	fd = count_open(ev, pmt_first_online_cpu());
	if (fd < 0) {
		pmt_error__usage(err, "--counter %s: this machine cannot count it (%s)", ev->name,
				 strerror(errno));
		if (ev->hardware && !pmt_pmu__has_hardware(PMT_PMU_SYSFS))
			pmt_error__hint(err,
					"no hardware PMU here (a VM without PMU passthrough?): "
					"software events count: page-faults, context-switches, "
					"cpu-migrations, minor-faults, major-faults, cpu-clock");
		return -EINVAL;
	}
	close(fd);
	return 0;
}

int pmt_counter__resolve(struct pmt_counter *c, const struct pmt_opts *o, struct pmt_error *err)
{
	uint32_t i, j;
	int ret;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < (uint32_t)o->nr_counters && i < PMT_COUNTERS; i++) {
		if ((ret = resolve_one(&c->ev[i], o->counters[i], err)))
			return ret;
		c->names[i] = c->ev[i].name;
		for (j = 0; j < i; j++)
			if (!strcmp(c->names[j], c->names[i]))
				return pmt_error__usage(err, "--counter %s given twice",
							c->names[i]);
	}
	c->n = i;
	c->stream = c->n && !o->agg.lat_start;
	return 0;
}

void pmt_counter__prepare(const struct pmt_counter *c, struct pmtrace_bpf *skel, int ncpus)
{
	skel->rodata->pmt_lat_counter = c->n && !c->stream;
	skel->rodata->pmt_stream_counter = c->stream;
	skel->rodata->pmt_ncounters = c->n;
	skel->rodata->pmt_counter_cpus = (__u32)ncpus;
	bpf_map__set_max_entries(skel->maps.pmt_counters, c->n ? c->n * (__u32)ncpus : 1);
	bpf_map__set_max_entries(skel->maps.pmt_tcount, c->stream ? PMT_COUNTED_THREADS : 1);
	bpf_program__set_autoload(skel->progs.pmt_count_switch, c->n > 0);
}

/* Counter k of CPU cpu into the map at k * ncpus + cpu, counting. */
static int add_counter(const struct pmt_counter *c, int map, uint32_t k, int cpu, int ncpus,
		       struct pmt_error *err)
{
	__u32 key = k * (__u32)ncpus + (__u32)cpu, val;
	int fd = count_open(&c->ev[k], cpu), e;

	if (fd < 0)
		return pmt_error__runtime(err, -errno, "--counter %s: CPU %d: %s", c->names[k], cpu,
					  strerror(errno));
	val = (__u32)fd;
	e = bpf_map_update_elem(map, &key, &val, BPF_ANY) ? -errno : 0;
	if (!e && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		e = -errno;
	close(fd); /* the map holds the event now */
	if (e)
		return pmt_error__runtime(err, e, "--counter %s: CPU %d: %s", c->names[k], cpu,
					  strerror(-e));
	return 0;
}

int pmt_counter__start(const struct pmt_counter *c, struct pmtrace_bpf *skel, int ncpus,
		       struct pmt_error *err)
{
	uint64_t online[PMT_MAX_CPUS / 64];
	int map = bpf_map__fd(skel->maps.pmt_counters), cpu, e;
	uint32_t k;

	if (!c->n)
		return 0;
	if ((e = pmt_online_cpus(online)))
		return pmt_error__runtime(err, e, "cannot read the online CPUs");
	for (k = 0; k < c->n; k++)
		for (cpu = 0; cpu < ncpus; cpu++)
			if ((online[cpu / 64] & (1ULL << (cpu % 64))) &&
			    (e = add_counter(c, map, k, cpu, ncpus, err)))
				return e;
	skel->links.pmt_count_switch = bpf_program__attach(skel->progs.pmt_count_switch);
	if (!skel->links.pmt_count_switch)
		return pmt_error__attach(err, -errno, "--counter", "sched:sched_switch",
					 strerror(errno));
	return 0;
}
