// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "output/symbols.h"
#include "run/aggmaps.h"
#include "util/log.h"
#include "pmtrace.skel.h"

void pmt_aggmaps__size(struct pmtrace_bpf *skel, const struct pmt_agg *agg)
{
	struct pmt_agg_maps m;

	pmt_agg__maps(agg, &m);
	/* hash maps are preallocated (~10 ms per 10k entries): size the
	 * ones this session does not use down to nothing */
	bpf_map__set_max_entries(skel->maps.pmt_agg, m.hash_entries ? m.hash_entries : 1);
	bpf_map__set_max_entries(skel->maps.pmt_agg_flat, m.flat_slots ? m.flat_slots : 1);
	bpf_map__set_max_entries(skel->maps.pmt_lat, m.lat_entries ? m.lat_entries : 1);
	bpf_map__set_key_size(skel->maps.pmt_agg, m.key_size);
	skel->rodata->pmt_agg_key_words = (m.key_size + 7) / 8;
	skel->rodata->pmt_agg_keyless = m.flat_slots > 0;
}

static int stack_lookup(void *ctx, bool user, uint64_t key, uint64_t *ips)
{
	struct pmtrace_bpf *skel = ctx;
	int32_t id = (int32_t)key;
	int n;

	/* user stacks unwound from CFI are keyed by tgid and hash */
	if (user && skel->rodata->pmt_unwind_dwarf) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_ustacks), &key, ips))
			return 0;
	} else if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_stacks), &id, ips)) {
		return 0;
	}
	for (n = 0; n < PMT_STACK_DEPTH && ips[n]; n++)
		;
	return n;
}

/* No keys: the array's slots that saw events. */
static int read_flat(struct pmtrace_bpf *skel, uint32_t slots, struct pmt_agg_val *pc, int ncpu,
		     struct pmt_agg_entries *e)
{
	struct pmt_agg_key key;
	uint32_t slot;
	int err;

	for (slot = 0; slot < slots; slot++) {
		memset(&key, 0, sizeof(key));
		key.bucket = (int32_t)slot - 1;
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_agg_flat), &slot, pc))
			continue;
		if ((err = pmt_agg_entries__add(e, &key, pc, ncpu, NULL)))
			return err;
	}
	return 0;
}

#define BATCH 1024

/*
 * The whole hash in batches of BATCH entries: two system calls per key
 * become one per batch (a 10,000-key scrape: ~20,000 -> ~10). -EINVAL or
 * -ENOTSUP when the kernel cannot (the caller walks key by key).
 */
static int read_batches(int fd, uint32_t key_size, struct pmt_agg_val *pc, int ncpu,
			const struct pmt_agg_cache *cache, struct pmt_agg_entries *e)
{
	size_t vsize = sizeof(*pc) * (size_t)ncpu;
	uint8_t *keys = calloc(BATCH, key_size), *vals = calloc(BATCH, vsize);
	uint64_t token = 0;
	bool first = true, done = false;
	int err = keys && vals ? 0 : -ENOMEM;

	while (!err && !done) {
		__u32 n = BATCH, i;
		struct pmt_agg_key key;

		if (bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, vals, &n, NULL)) {
			err = -errno;
			if (err != -ENOENT)
				break;
			err = 0;
			done = true; /* the last batch, maybe with entries */
		}
		first = false;
		for (i = 0; i < n && !err; i++) {
			memset(&key, 0, sizeof(key));
			memcpy(&key, keys + (size_t)i * key_size, key_size);
			memcpy(pc, vals + (size_t)i * vsize, vsize);
			err = pmt_agg_entries__add(e, &key, pc, ncpu, cache);
		}
	}
	free(keys);
	free(vals);
	return err;
}

/* Keys: the per-CPU caches first, then the hash (see pmt_agg_entries__add). */
static int read_hash(struct pmtrace_bpf *skel, struct pmt_agg_val *pc, int ncpu,
		     struct pmt_agg_entries *e)
{
	int fd = bpf_map__fd(skel->maps.pmt_agg), err = 0;
	struct pmt_agg_key key, next, *prev = NULL;
	struct pmt_agg_cache *cache;
	uint32_t zero = 0;

	cache = calloc((size_t)ncpu, sizeof(*cache));
	if (!cache)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_agg_cache), &zero, cache)) {
		err = -errno;
		goto out;
	}
	err = read_batches(fd, bpf_map__key_size(skel->maps.pmt_agg), pc, ncpu, cache, e);
	if (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP)
		goto out;
	err = 0;
	pmt_agg_entries__free(e); /* a batch may have failed half-way */
	/* the kernel writes key_size bytes: the rest must stay zero */
	memset(&next, 0, sizeof(next));
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		memset(&next, 0, sizeof(next));
		if (bpf_map_lookup_elem(fd, &key, pc))
			continue; /* deleted meanwhile */
		if ((err = pmt_agg_entries__add(e, &key, pc, ncpu, cache)))
			break;
	}
out:
	free(cache);
	return err;
}

static int read_entries(struct pmtrace_bpf *skel, const struct pmt_agg *agg,
			struct pmt_agg_entries *cur)
{
	int ncpu = libbpf_num_possible_cpus(), err;
	struct pmt_agg_val *pc;
	struct pmt_agg_maps m;

	pmt_agg__maps(agg, &m);
	pc = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*pc)) : NULL;
	if (!pc)
		return -ENOMEM;
	err = m.flat_slots ? read_flat(skel, m.flat_slots, pc, ncpu, cur)
			   : read_hash(skel, pc, ncpu, cur);
	free(pc);
	return err;
}

int pmt_aggmaps__print(struct pmtrace_bpf *skel, struct pmt_agg *agg, struct pmt_syms *syms,
		       struct pmt_output *out, uint64_t now_ns)
{
	const struct pmt_agg_io io = {syms, stack_lookup, skel};
	struct pmt_agg_entries cur = {0};
	int err = read_entries(skel, agg, &cur);
	uint64_t forgotten;

	if (!err) {
		pmt_syms__lock(syms);
		err = pmt_agg__print(agg, &cur, &io, out, now_ns);
		pmt_syms__unlock(syms);
	}
	forgotten = pmt_syms__forgotten(syms);
	if (forgotten)
		pmt_warn("%llu exited processes were forgotten before this print (too many "
			 "waited): their user frames show as [unknown]; --interval prints sooner",
			 (unsigned long long)forgotten);
	pmt_agg_entries__free(&cur);
	return err;
}

int pmt_aggmaps__metrics(struct pmtrace_bpf *skel, const struct pmt_agg *agg, struct pmt_syms *syms,
			 const char *name, bool om, struct pmt_buf *b)
{
	const struct pmt_agg_io io = {syms, stack_lookup, skel};
	struct pmt_agg_entries cur = {0};
	int err = read_entries(skel, agg, &cur);

	if (!err) {
		pmt_syms__lock(syms);
		err = pmt_agg__metrics(agg, &cur, &io, name, om, b);
		pmt_syms__unlock(syms);
	}
	pmt_agg_entries__free(&cur);
	return err;
}
