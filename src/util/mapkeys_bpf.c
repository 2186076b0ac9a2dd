// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Picking a BPF hash map's keys (mapkeys.h). */
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "util/grow.h"
#include "util/mapkeys.h"

size_t pmt_mapkeys__pick(int fd, size_t key_size, bool (*pick)(void *ctx, const void *key),
			 void *ctx, void **out)
{
	char *key = malloc(2 * key_size), *next = key + key_size, *v = NULL, *g;
	size_t n = 0, cap = 0;
	bool more;

	*out = NULL;
	if (!key)
		return 0;
	for (more = !bpf_map_get_next_key(fd, NULL, next); more;
	     more = !bpf_map_get_next_key(fd, key, next)) {
		memcpy(key, next, key_size);
		if (!pick(ctx, key))
			continue;
		if (!(g = pmt_grow(v, &cap, n, key_size, 16)))
			break;
		v = g;
		memcpy(v + n++ * key_size, key, key_size);
	}
	free(key);
	*out = v;
	return n;
}
