// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * floor [--count] CATEGORY:NAME: attach the empty (or minimal counting) BPF
 * program to a tracepoint until SIGINT/SIGTERM; prints "ready" on stderr once
 * attached and, with --count, the count at exit.
 * floor --pe HZ: an empty perf_event program on cpu-clock sampled at HZ on
 * every CPU. For tools/bench/run only.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int floor_pe(struct floor_bpf *skel, unsigned long hz)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	struct bpf_link *links[1024];
	int ncpu = libbpf_num_possible_cpus(), n = 0, cpu, fd;

	for (cpu = 0; cpu < ncpu && n < 1024; cpu++) {
		fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, 0);
		if (fd < 0)
			continue; /* offline */
		links[n] = bpf_program__attach_perf_event(skel->progs.floor_pe, fd);
		if (!links[n]) {
			perror("attach");
			return 1;
		}
		n++;
	}
	fprintf(stderr, "ready\n");
	while (!stop)
		pause();
	while (n > 0)
		bpf_link__destroy(links[--n]);
	return 0;
}

int main(int argc, char **argv)
{
	int count = argc > 2 && !strcmp(argv[1], "--count");
	const char *spec = argv[argc - 1];
	struct bpf_link *link;
	struct floor_bpf *skel;
	char cat[128], *name;

	if (argc == 3 && !strcmp(argv[1], "--pe")) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		skel = floor_bpf__open_and_load();
		if (!skel)
			return 1;
		count = floor_pe(skel, strtoul(argv[2], NULL, 10));
		floor_bpf__destroy(skel);
		return count;
	}
	if (argc < 2 || !strchr(spec, ':')) {
		fprintf(stderr, "usage: floor [--count] CATEGORY:NAME\n");
		return 2;
	}
	snprintf(cat, sizeof(cat), "%s", spec);
	name = strchr(cat, ':');
	*name++ = '\0';
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	skel = floor_bpf__open_and_load();
	if (!skel)
		return 1;
	link = bpf_program__attach_tracepoint(
		count ? skel->progs.floor_count : skel->progs.floor_empty, cat, name);
	if (!link) {
		perror("attach");
		floor_bpf__destroy(skel);
		return 1;
	}
	fprintf(stderr, "ready\n");
	while (!stop)
		pause();
	if (count)
		printf("%llu\n", (unsigned long long)skel->bss->hits);
	bpf_link__destroy(link);
	floor_bpf__destroy(skel);
	return 0;
}
