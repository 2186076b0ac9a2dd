// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark floors: the least a BPF tracer can do on a tracepoint. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

__u64 hits = 0;

/* an empty program: the cost of running BPF at all */
SEC("tracepoint")
int floor_empty(void *ctx __attribute__((unused)))
{
	return 0;
}

/* a minimal counter: one atomic add on a global */
SEC("tracepoint")
int floor_count(void *ctx __attribute__((unused)))
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* an empty perf_event program: the cost of a BPF sample handler */
SEC("perf_event")
int floor_pe(void *ctx __attribute__((unused)))
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
