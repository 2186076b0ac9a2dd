/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The keys of a BPF hash map that a caller picks, to delete or keep. */
#ifndef PMT_MAPKEYS_H
#define PMT_MAPKEYS_H

#include <stdbool.h>
#include <stddef.h>

/* The keys (key_size bytes each) of the hash map fd that pick(ctx, key)
 * takes, collected before any is deleted (a walk of a hash map does not
 * survive its deletions): how many, at *out (malloc'd; NULL for none).
 * Memory short: those collected so far. */
size_t pmt_mapkeys__pick(int fd, size_t key_size, bool (*pick)(void *ctx, const void *key),
			 void *ctx, void **out);

#endif
