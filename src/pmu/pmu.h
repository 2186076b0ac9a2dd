/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * PMU event names as perf spells them, turned into perf_event_attr terms:
 * hardware (cycles, instructions, ...), software (cpu-clock, page-faults,
 * ...), hardware cache (L1-dcache-load-misses, ...), raw rNNNN, and
 * pmu/term=value,.../ resolved through sysfs (type, format/, events/).
 * Modifiers :u :k. Pure apart from reading the sysfs directory given.
 */
#ifndef PMT_PMU_H
#define PMT_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util/error.h"
#include "tracefs/tracefs.h"

#define PMT_PMU_SYSFS "/sys/bus/event_source/devices"

struct pmt_pmu_event {
	uint32_t type; /* PERF_TYPE_* or a sysfs PMU type */
	uint64_t config, config1, config2;
	bool exclude_user, exclude_kernel;
	bool hardware;	/* needs the CPU's PMU */
	char name[128]; /* as shown: "cpu-clock", "cycles:u" */
};

/* 0, or -EINVAL with a message (and close names) in err. */
int pmt_pmu__parse(const char *spec, const char *sysfs, struct pmt_pmu_event *ev,
		   struct pmt_error *err);
/* Every name the parser knows without sysfs: software, hardware, cache. */
void pmt_pmu__known(struct pmt_names *out, bool hardware);
/* pmu/event/ names from sysfs events/ directories (not software ones). */
void pmt_pmu__sysfs_events(const char *sysfs, struct pmt_names *out);
struct perf_event_attr;

/* The one perf_event_open(2) of pmtrace: attr on process pid (-1: every
 * process) and cpu (-1: every CPU), no group, close-on-exec; the event's
 * descriptor, or -1 with errno set. */
int pmt_pmu__open(struct perf_event_attr *attr, pid_t pid, int cpu);

/* The attributes that count ev (--stat, --counter): no sampling; reads
 * give the value with its enabled and running times (multiplexing).
 * inherit: the task's children count too (-- CMD, -p); on_exec: start
 * at the task's exec (a command held before it). Starts disabled. */
void pmt_pmu__count_attr(const struct pmt_pmu_event *ev, bool inherit, bool on_exec,
			 struct perf_event_attr *attr);
/* Split "cycles,instructions,cpu/event=1,umask=2/" at the commas
 * outside PMU terms: the next name into out (at most len bytes); returns
 * where the one after starts, or NULL at the end. */
const char *pmt_pmu__next_name(const char *list, char *out, size_t len);
/* Does this machine have a hardware PMU for PERF_TYPE_HARDWARE? */
bool pmt_pmu__has_hardware(const char *sysfs);

#endif
