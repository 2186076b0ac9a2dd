// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/percpu.h"

uint64_t *pmt_percpu__vals(const struct bpf_map *map, uint32_t key)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *vals = n > 0 ? calloc((size_t)n, sizeof(*vals)) : NULL;

	if (vals && bpf_map_lookup_elem(bpf_map__fd(map), &key, vals)) {
		free(vals);
		return NULL;
	}
	return vals;
}

uint64_t pmt_percpu__sum(const struct bpf_map *map, uint32_t key)
{
	uint64_t *vals = pmt_percpu__vals(map, key), sum = 0;
	int i, n = libbpf_num_possible_cpus();

	for (i = 0; vals && i < n; i++)
		sum += vals[i];
	free(vals);
	return sum;
}
