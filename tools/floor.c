// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * floor [--count] CATEGORY:NAME: attach the empty (or minimal counting) BPF
 * program to a tracepoint until SIGINT/SIGTERM; prints "ready" on stderr once
 * attached and, with --count, the count at exit. For tools/bench only.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	int count = argc > 2 && !strcmp(argv[1], "--count");
	const char *spec = argv[argc - 1];
	struct bpf_link *link;
	struct floor_bpf *skel;
	char cat[128], *name;

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
	link = bpf_program__attach_tracepoint(count ? skel->progs.floor_count
						   : skel->progs.floor_empty, cat, name);
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
