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
	int n;

	/* kernel and user stacks alike, by content (bpf/record.bpf.h); the
	 * last slot is the hash's check half */
	(void)user;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_stacks), &key, ips))
		return 0;
	for (n = 0; n < PMT_STACK_KEPT && ips[n]; n++)
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

/*
 * fn(ctx, key) for each key of the map at fd, until it returns non-zero
 * (returned). Keys up to an aggregation key's size, zero-padded (the
 * kernel writes key_size bytes), so a u32 or u64 key reads as a u64.
 */
static int walk_keys(int fd, int (*fn)(void *ctx, const void *key), void *ctx)
{
	union {
		struct pmt_agg_key agg;
		uint64_t u64;
	} key, next;
	bool first = true;
	int err = 0;

	memset(&next, 0, sizeof(next));
	while (!err && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		memset(&next, 0, sizeof(next));
		err = fn(ctx, &key);
	}
	return err;
}

struct hash_read {
	int fd, ncpu;
	struct pmt_agg_val *pc;
	const struct pmt_agg_cache *cache;
	struct pmt_agg_entries *e;
};

static int read_key(void *ctx, const void *key)
{
	struct hash_read *r = ctx;

	if (bpf_map_lookup_elem(r->fd, key, r->pc))
		return 0; /* deleted meanwhile */
	return pmt_agg_entries__add(r->e, key, r->pc, r->ncpu, r->cache);
}

/* Keys: the per-CPU caches first (into cache[ncpu]), then the hash (see
 * pmt_agg_entries__add). */
static int read_hash(struct pmtrace_bpf *skel, struct pmt_agg_val *pc, int ncpu,
		     struct pmt_agg_cache *cache, struct pmt_agg_entries *e)
{
	struct hash_read r = {bpf_map__fd(skel->maps.pmt_agg), ncpu, pc, cache, e};
	uint32_t zero = 0;
	int err;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.pmt_agg_cache), &zero, cache))
		return -errno;
	err = read_batches(r.fd, bpf_map__key_size(skel->maps.pmt_agg), pc, ncpu, cache, e);
	if (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP)
		return err;
	pmt_agg_entries__free(e); /* a batch may have failed half-way */
	return walk_keys(r.fd, read_key, &r);
}

/* A snapshot into cur; *cache (NULL for keyless maps): the CPUs' key
 * caches as read with it, to free. */
static int read_entries(struct pmtrace_bpf *skel, const struct pmt_agg *agg,
			struct pmt_agg_entries *cur, struct pmt_agg_cache **cache)
{
	int ncpu = libbpf_num_possible_cpus(), err = -ENOMEM;
	struct pmt_agg_val *pc;
	struct pmt_agg_maps m;

	*cache = NULL;
	pmt_agg__maps(agg, &m);
	pc = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*pc)) : NULL;
	if (!pc)
		return -ENOMEM;
	if (m.flat_slots)
		err = read_flat(skel, m.flat_slots, pc, ncpu, cur);
	else if ((*cache = calloc((size_t)ncpu, sizeof(**cache))))
		err = read_hash(skel, pc, ncpu, *cache, cur);
	free(pc);
	return err;
}

/* --- forgetting idle keys (--interval) ------------------------------------ */

struct gc {
	struct pmtrace_bpf *skel;
	struct pmt_agg *agg;
	struct pmt_syms *syms;
	bool exited;			   /* the key being offered has an exited process's stack */
	const struct pmt_agg_cache *cache; /* as read with the snapshot */
	int ncpu;
	uint64_t *refs; /* stack keys still used */
	size_t nrefs, cap;
	int err;
};

static void note_exited(void *ctx, bool user, uint64_t v)
{
	struct gc *g = ctx;

	if (user && v >> 32 && pmt_syms__exited(g->syms, (uint32_t)(v >> 32)))
		g->exited = true;
}

/*
 * Delete a key that saw nothing in the interval, or holds the user stack
 * of a process that exited (its samples are all in: short processes would
 * otherwise fill the hash with keys for one more interval), unless a CPU's
 * cache holds it: a slot's gains since its last write-back may be counted
 * already (bpf/abi.h).
 */
static bool drop_key(void *ctx, const struct pmt_agg_key *k, bool idle)
{
	struct gc *g = ctx;
	int c;

	if (!idle) {
		g->exited = false;
		pmt_agg__key_stacks(g->agg, k, note_exited, g);
		if (!g->exited)
			return false;
	}
	for (c = 0; c < g->ncpu; c++)
		if (pmt_agg_cache__holding(&g->cache[c], k))
			return false;
	return !bpf_map_delete_elem(bpf_map__fd(g->skel->maps.pmt_agg), k) || errno == ENOENT;
}

static void note_stack(void *ctx, bool user, uint64_t v)
{
	struct gc *g = ctx;

	if (!user && (int64_t)v < 0)
		return; /* no kernel stack */
	if (g->nrefs == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 1024;
		uint64_t *p = realloc(g->refs, nc * sizeof(*p));

		if (!p) {
			g->err = -ENOMEM;
			return;
		}
		g->refs = p;
		g->cap = nc;
	}
	g->refs[g->nrefs++] = v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool stack_used(const struct gc *g, uint64_t key)
{
	return g->nrefs && bsearch(&key, g->refs, g->nrefs, sizeof(key), cmp_u64);
}

/* The keys of a stack map, collected: deleting while walking a hash
 * would restart the walk. */
struct collected {
	uint64_t *keys;
	size_t n, cap;
};

static int collect_key(void *ctx, const void *key)
{
	struct collected *c = ctx;

	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 256;
		uint64_t *p = realloc(c->keys, nc * sizeof(*p));

		if (!p)
			return -ENOMEM; /* the rest waits for the next print */
		c->keys = p;
		c->cap = nc;
	}
	c->keys[c->n++] = *(const uint64_t *)key;
	return 0;
}

static int note_stacks(void *ctx, const void *key)
{
	struct gc *g = ctx;

	pmt_agg__key_stacks(g->agg, key, note_stack, g);
	return g->err;
}

/*
 * After an interval's print: delete the keys that saw nothing in it (or
 * hold the stack of an exited process), then the stacks no remaining key
 * refers to (the kernel's stack table fills otherwise, and a stack that
 * comes back is simply stored again). The keys are walked after the
 * deletions, so one made since the snapshot keeps its stack.
 */
static void forget_keys(struct pmtrace_bpf *skel, struct pmt_agg *agg, struct pmt_syms *syms,
			const struct pmt_agg_cache *cache)
{
	struct gc g = {.skel = skel,
		       .agg = agg,
		       .syms = syms,
		       .cache = cache,
		       .ncpu = libbpf_num_possible_cpus()};
	/* the stack table sized for stack keys (one entry otherwise) */
	bool stacks = bpf_map__max_entries(skel->maps.pmt_stacks) > 1;
	int fd = bpf_map__fd(skel->maps.pmt_stacks);
	struct collected old = {0};
	size_t i;

	if (!cache || g.ncpu <= 0 || !pmt_agg__forget(agg, drop_key, &g) || !stacks)
		return;
	/* the stacks stored before the keys are walked: one stored since
	 * may belong to a key made since */
	walk_keys(fd, collect_key, &old);
	if (!walk_keys(bpf_map__fd(skel->maps.pmt_agg), note_stacks, &g) && !g.err) {
		if (g.nrefs)
			qsort(g.refs, g.nrefs, sizeof(*g.refs), cmp_u64);
		for (i = 0; i < old.n; i++)
			if (!stack_used(&g, old.keys[i]))
				bpf_map_delete_elem(fd, &old.keys[i]);
	}
	free(old.keys);
	free(g.refs);
}

int pmt_aggmaps__print(struct pmtrace_bpf *skel, struct pmt_agg *agg, struct pmt_syms *syms,
		       struct pmt_output *out, uint64_t now_ns)
{
	const struct pmt_agg_io io = {syms, stack_lookup, skel};
	struct pmt_agg_entries cur = {0};
	struct pmt_agg_cache *cache;
	int err = read_entries(skel, agg, &cur, &cache);
	uint64_t forgotten;

	if (!err) {
		pmt_syms__lock(syms);
		err = pmt_agg__print(agg, &cur, &io, out, now_ns);
		pmt_syms__unlock(syms);
	}
	if (!err)
		forget_keys(skel, agg, syms, cache);
	free(cache);
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
	struct pmt_agg_cache *cache;
	int err = read_entries(skel, agg, &cur, &cache);

	free(cache);
	if (!err) {
		pmt_syms__lock(syms);
		err = pmt_agg__metrics(agg, &cur, &io, name, om, b);
		pmt_syms__unlock(syms);
	}
	pmt_agg_entries__free(&cur);
	return err;
}
