// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/grow.h"
#include "symbols/symbols.h"
#include "aggregate/maps.h"
#include "aggregate/aggregate_internal.h"
#include "util/percpu.h"
#include "util/log.h"
#include "pmtrace.skel.h"

void pmt_aggmaps__size(struct pmtrace_bpf *skel, const struct pmt_agg *agg)
{
	struct pmt_agg_maps m;

	pmt_agg__maps(agg, &m);
	m.lat_entries = pmt_agg__lat_entries(&m, libbpf_num_possible_cpus());
	/* hash maps are preallocated (~10 ms per 10k entries): size the
	 * ones this session does not use down to nothing */
	bpf_map__set_max_entries(skel->maps.pmt_agg, m.hash_entries ? m.hash_entries : 1);
	bpf_map__set_max_entries(skel->maps.pmt_agg_flat, m.flat_slots ? m.flat_slots : 1);
	bpf_map__set_max_entries(skel->maps.pmt_lat, m.lat_entries ? m.lat_entries : 1);
	bpf_map__set_max_entries(skel->maps.pmt_lat_keys,
				 m.lat_start_keys && m.lat_entries ? m.lat_entries : 1);
	skel->rodata->pmt_lat_start_keys = m.lat_start_keys;
	bpf_map__set_key_size(skel->maps.pmt_agg, m.key_size);
	skel->rodata->pmt_agg_key_words = (m.key_size + 7) / 8;
	skel->rodata->pmt_agg_keyless = m.flat_slots > 0;
}

/*
 * The kernel's hash is drained into totals kept here: the programs write
 * one half of it (pmt_agg_gen, bpf/aggregate.bpf.h); a drain flips the
 * half, waits until no program can still write the old one, then reads
 * its keys (with their CPUs' cached values), adds them to the totals,
 * deletes them and clears the old half's caches. The stacks the keys
 * refer to are copied out first, and the kernel's stack table keeps only
 * what live keys need. So the kernel's maps bound what comes between two
 * drains (a drain comes at each print and scrape, and whenever a quarter
 * of the hash was filled since the last: three quarters are left for
 * the keys that come while a drain is due and under way, which a slow
 * CPU makes many), not what a run sees.
 */
/* A window: what the drains bring from its opening on (a profile of the
 * next N seconds), apart from the totals and their forgetting. */
struct window {
	bool open;
	uint64_t start_ns;     /* CLOCK_MONOTONIC */
	int64_t start_wall_ns; /* CLOCK_REALTIME, for the profile */
	struct pmt_agg_totals t;
};

struct prefetch;

struct pmt_aggmaps {
	struct pmtrace_bpf *skel;
	struct pmt_agg *agg;
	pthread_mutex_t lock; /* the printing loop and --listen's thread */
	int ncpu;
	int sync_outer, sync_inner; /* a map-in-map: see sync_programs */
	bool hash;		    /* keys: the hash is used */
	bool stacks;		    /* keys hold stacks */
	struct pmt_agg_totals totals;
	struct pmt_stack_copies copies;
	uint64_t new_at_drain; /* PMT_STAT_AGG_NEW when last drained */
	uint64_t new_seen;     /* PMT_STAT_AGG_NEW at the last look, */
	uint64_t seen_ns;      /* and when (CLOCK_MONOTONIC) */
	double rate;	       /* new keys a ns, as the looks saw it */
	uint64_t lost_stacks;  /* samples whose stack's key another stack had */
	uint64_t lost_keys;    /* samples of new keys past the totals' bound */
	struct window win[PMT_AGG_WINDOWS];
	/* scratch of a drain */
	struct pmt_agg_cache *cache;
	struct pmt_agg_val *pc;
	struct pmt_agg_entries got;
	uint8_t *dead; /* keys to delete, the hash's key_size apart */
	size_t ndead, deadcap;
	uint8_t *bkeys, *bvals; /* a batch's keys and values */
	struct alias *aliases;	/* of the last collection */
	size_t naliases, acap;
	struct refs *live;    /* a collection's: the stack keys live keys name */
	struct prefetch *pre; /* a drain's: the stacks its keys name, read */
	uint32_t old;
	bool conflict;
	int err;
};

struct pmt_aggmaps *pmt_aggmaps__new(struct pmtrace_bpf *skel, struct pmt_agg *agg, bool stacks)
{
	struct pmt_aggmaps *m = calloc(1, sizeof(*m));
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct pmt_agg_maps mm;

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	m->skel = skel;
	m->agg = agg;
	m->ncpu = libbpf_num_possible_cpus();
	m->sync_outer = m->sync_inner = -1;
	pmt_agg__maps(agg, &mm);
	m->hash = !mm.flat_slots;
	m->stacks = stacks;
	/* the totals' bound: a long run's keys, not all it could ever see */
	m->totals.limit = (size_t)mm.hash_entries * PMT_TOTALS_PER_KEY;
	if (m->ncpu <= 0 || !(m->pc = calloc((size_t)m->ncpu, sizeof(*m->pc))) ||
	    !(m->cache = calloc((size_t)m->ncpu, sizeof(*m->cache))))
		goto fail;
	if (m->hash) {
		m->sync_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pmt_sync_in", 4, 4, 1, NULL);
		o.inner_map_fd = m->sync_inner;
		if (m->sync_inner >= 0)
			m->sync_outer =
				bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "pmt_sync", 4, 4, 1, &o);
		if (m->sync_outer < 0)
			goto fail;
	}
	return m;
fail:
	pmt_aggmaps__free(m);
	return NULL;
}

void pmt_aggmaps__free(struct pmt_aggmaps *m)
{
	if (!m)
		return;
	if (m->sync_outer >= 0)
		close(m->sync_outer);
	if (m->sync_inner >= 0)
		close(m->sync_inner);
	pmt_agg_totals__free(&m->totals);
	for (int i = 0; i < PMT_AGG_WINDOWS; i++)
		pmt_agg_totals__free(&m->win[i].t);
	pmt_stack_copies__free(&m->copies);
	pmt_agg_entries__free(&m->got);
	free(m->dead);
	free(m->bkeys);
	free(m->bvals);
	free(m->aliases);
	free(m->cache);
	free(m->pc);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Return once no program can still run with what it read before: an
 * update of a map-in-map waits for every program running (the kernel's
 * synchronize_rcu, so userspace knows the programs see the new value). */
static int sync_programs(struct pmt_aggmaps *m)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(m->sync_outer, &zero, &m->sync_inner, BPF_ANY) ? -errno : 0;
}

/*
 * After pmt_agg_gen was flipped: return once no program can still write
 * the old half. Each CPU's count of programs inside an update
 * (bpf/aggregate.bpf.h pmt_agg_busy) is read after a fence that follows
 * the flip; a program is either counted there or reads the new half. Its
 * updates take microseconds; one preempted inside (a uprobe's, an
 * fentry's) is waited for, up to a second, then the kernel's grace
 * period is (which can take seconds on a loaded machine: keys would pile
 * up meanwhile).
 */
static int wait_programs(struct pmt_aggmaps *m)
{
	volatile struct pmt_agg_busy *busy = m->skel->bss->pmt_agg_busy;
	int cpu, spins;

	__sync_synchronize();
	for (cpu = 0; cpu < m->ncpu && cpu < PMT_MAX_CPUS; cpu++)
		for (spins = 0; busy[cpu].n; spins++) {
			if (spins >= 10000)
				return sync_programs(m);
			usleep(100);
		}
	return 0;
}

/* The stacks a drain's keys name, read from the kernel's table a batch
 * a system call before they are copied (prefetch_stacks): by key, their
 * frames in one array. */
struct prefetched {
	uint64_t key, check;
	uint32_t n;
	size_t at; /* in frames */
};

struct prefetch {
	struct prefetched *v;
	size_t n, cap;
	uint64_t *frames;
	size_t nframes, fcap;
};

static int cmp_prefetched(const void *a, const void *b)
{
	uint64_t x = ((const struct prefetched *)a)->key, y = ((const struct prefetched *)b)->key;

	return x < y ? -1 : x > y;
}

static const struct prefetched *find_prefetched(const struct prefetch *p, uint64_t key)
{
	struct prefetched k = {.key = key};

	return p && p->n ? bsearch(&k, p->v, p->n, sizeof(k), cmp_prefetched) : NULL;
}

/* A stored stack's frames (innermost first) into ips and its check word;
 * how many frames, -1 when the kernel holds no stack under key. */
static int kernel_stack(struct pmt_aggmaps *m, uint64_t key, uint64_t *ips, uint64_t *check)
{
	const struct prefetched *f = find_prefetched(m->pre, key);
	uint64_t v[PMT_STACK_DEPTH];
	int n;

	if (f) {
		memcpy(ips, m->pre->frames + f->at, f->n * sizeof(*ips));
		*check = f->check;
		return (int)f->n;
	}
	if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.pmt_stacks), &key, v))
		return -1;
	for (n = 0; n < PMT_STACK_KEPT && v[n]; n++)
		ips[n] = v[n];
	*check = v[PMT_STACK_KEPT];
	return n;
}

static int stack_lookup(void *ctx, bool user, uint64_t key, uint64_t *ips)
{
	struct pmt_aggmaps *m = ctx;
	const struct pmt_stack_copy *c = pmt_stack_copies__find(&m->copies, key);
	uint64_t check;
	int n;

	/* kernel and user stacks alike, by content (bpf/record.bpf.h) */
	(void)user;
	if (c) {
		memcpy(ips, c->ips, c->n * sizeof(*ips));
		return (int)c->n;
	}
	n = kernel_stack(m, key, ips, &check);
	return n < 0 ? 0 : n;
}

/* No keys: the array's slots that saw events, set in the totals (the
 * array holds each slot's values since the start). */
static int read_flat(struct pmt_aggmaps *m, uint32_t slots)
{
	struct pmt_agg_entries got = {0};
	struct pmt_agg_key key;
	uint32_t slot;
	size_t i;
	int err = 0;

	for (slot = 0; !err && slot < slots; slot++) {
		memset(&key, 0, sizeof(key));
		key.bucket = (int32_t)slot - 1;
		if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.pmt_agg_flat), &slot, m->pc))
			continue;
		err = pmt_agg_entries__add(&got, &key, m->pc, m->ncpu, NULL);
	}
	for (i = 0; !err && i < got.n; i++)
		err = pmt_agg_totals__set(&m->totals, &got.v[i]);
	pmt_agg_entries__free(&got);
	return err;
}

typedef int (*each_entry_fn)(struct pmt_aggmaps *m, const struct pmt_agg_key *key);

#define BATCH 1024

/*
 * The whole hash in batches of BATCH entries, each key with its CPUs'
 * values in m->pc: two system calls per key become one per batch (a
 * 10,000-key scrape: ~20,000 -> ~10). -EINVAL or -ENOTSUP when the
 * kernel cannot (the caller walks key by key).
 */
static void delete_keys(struct pmt_aggmaps *m);
static int take_key(struct pmt_aggmaps *m, const struct pmt_agg_key *key);

static int read_batches(struct pmt_aggmaps *m, each_entry_fn fn)
{
	int fd = bpf_map__fd(m->skel->maps.pmt_agg);
	uint32_t key_size = bpf_map__key_size(m->skel->maps.pmt_agg);
	size_t vsize = sizeof(*m->pc) * (size_t)m->ncpu;
	uint64_t token = 0;
	bool first = true, done = false;
	int err = 0;

	/* kept from drain to drain: fresh pages would be cleared each time */
	if (!m->bkeys && !(m->bkeys = calloc(BATCH, key_size)))
		return -ENOMEM;
	if (!m->bvals && !(m->bvals = calloc(BATCH, vsize)))
		return -ENOMEM;
	while (!err && !done) {
		__u32 n = BATCH, i;
		struct pmt_agg_key key;

		if (bpf_map_lookup_batch(fd, first ? NULL : &token, &token, m->bkeys, m->bvals, &n,
					 NULL)) {
			err = -errno;
			if (err != -ENOENT)
				break;
			err = 0;
			done = true; /* the last batch, maybe with entries */
		}
		first = false;
		for (i = 0; i < n && !err; i++) {
			memset(&key, 0, sizeof(key));
			memcpy(&key, m->bkeys + (size_t)i * key_size, key_size);
			memcpy(m->pc, m->bvals + (size_t)i * vsize, vsize);
			err = fn(m, &key);
		}
		/* a drain's taken keys go at once: the room they free is
		 * the room the keys made meanwhile need (the walk goes on
		 * from its bucket; the deleted ones are behind it) */
		if (!err && fn == take_key)
			delete_keys(m);
	}
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

struct key_read {
	struct pmt_aggmaps *m;
	each_entry_fn fn;
};

static int read_key(void *ctx, const void *key)
{
	struct key_read *r = ctx;

	if (bpf_map_lookup_elem(bpf_map__fd(r->m->skel->maps.pmt_agg), key, r->m->pc))
		return 0; /* deleted meanwhile */
	return r->fn(r->m, key);
}

/* fn for each key of the hash, its CPUs' values in m->pc: in batches, or
 * key by key where the kernel has none (the drain's take_key deletes
 * each batch's keys, so a walk after a refused batch takes the rest). */
static int read_hash(struct pmt_aggmaps *m, each_entry_fn fn)
{
	struct key_read r = {m, fn};
	int err = read_batches(m, fn);

	if (err != -EINVAL && err != -ENOTSUP && err != -EOPNOTSUPP)
		return err;
	return walk_keys(bpf_map__fd(m->skel->maps.pmt_agg), read_key, &r);
}

/* --- the drain ------------------------------------------------------------ */

/* The kernel keys the last collection deleted, with the one key each
 * stack has here (sorted by kernel key): a key drained after names them. */
struct alias {
	uint64_t kernel, id, check;
};

static int cmp_alias(const void *a, const void *b)
{
	uint64_t x = ((const struct alias *)a)->kernel, y = ((const struct alias *)b)->kernel;

	return x < y ? -1 : x > y;
}

static const struct alias *find_alias(const struct pmt_aggmaps *m, uint64_t kernel)
{
	struct alias k = {.kernel = kernel};

	return m->naliases ? bsearch(&k, m->aliases, m->naliases, sizeof(k), cmp_alias) : NULL;
}

/* A drained key's stack: copied, under the one key it has here (the
 * kernel may have stored it under another slot, or another stack under
 * this one since a collection), or none when its key is ambiguous: the
 * collection deleted one stack under it and the kernel now holds
 * another there. */
static uint64_t copy_stack(void *ctx, bool user, uint64_t v)
{
	struct pmt_aggmaps *m = ctx;
	uint64_t ips[PMT_STACK_DEPTH], check, id;
	const struct alias *a;
	int n, err;

	if (pmt_agg__stack_none(user, v))
		return v;
	a = find_alias(m, v);
	n = kernel_stack(m, v, ips, &check);
	if (n < 0) { /* deleted by a collection racing its key's making */
		if (a)
			return a->id;
		return pmt_stack_copies__find(&m->copies, v) ? v : pmt_agg__stack_none_of(user, v);
	}
	if (a && a->check != check) {
		m->conflict = true;
		return pmt_agg__stack_none_of(user, v);
	}
	err = pmt_stack_copies__id(&m->copies, v, check, ips, (uint32_t)n, &id);
	if (err && !m->err)
		m->err = err;
	return err ? pmt_agg__stack_none_of(user, v) : id;
}

static int add_dead(struct pmt_aggmaps *m, const struct pmt_agg_key *key)
{
	uint32_t key_size = bpf_map__key_size(m->skel->maps.pmt_agg);
	uint8_t *d = pmt_grow(m->dead, &m->deadcap, m->ndead, key_size, BATCH);

	if (!d)
		return -ENOMEM;
	m->dead = d;
	memcpy(m->dead + m->ndead++ * key_size, key, key_size);
	return 0;
}

/* One key of the hash during a drain: the old half's are taken. */
static int take_key(struct pmt_aggmaps *m, const struct pmt_agg_key *key)
{
	if ((key->pad & 1) != m->old)
		return 0;
	return add_dead(m, key) ?: pmt_agg_entries__add(&m->got, key, m->pc, m->ncpu, m->cache);
}

/* Delete the drained keys: in batches where the kernel can. */
static void delete_keys(struct pmt_aggmaps *m)
{
	int fd = bpf_map__fd(m->skel->maps.pmt_agg);
	uint32_t key_size = bpf_map__key_size(m->skel->maps.pmt_agg);
	size_t i;
	__u32 n = (__u32)m->ndead;

	if (n && bpf_map_delete_batch(fd, m->dead, &n, NULL))
		for (i = 0; i < m->ndead; i++)
			bpf_map_delete_elem(fd, m->dead + i * key_size);
	m->ndead = 0;
}

/* Stack keys still used: refs (sorted after collection). */
struct refs {
	struct pmt_aggmaps *m;
	uint64_t *v;
	size_t n, cap;
	int err;
};

static void add_ref(struct refs *r, uint64_t v)
{
	uint64_t *p = pmt_grow(r->v, &r->cap, r->n, sizeof(*p), 1024);

	if (!p) {
		r->err = -ENOMEM;
		return;
	}
	r->v = p;
	r->v[r->n++] = v;
}

static void note_ref(void *ctx, bool user, uint64_t v)
{
	if (!pmt_agg__stack_none(user, v))
		add_ref(ctx, v);
}

static int note_live(void *ctx, const void *key)
{
	struct refs *r = ctx;

	pmt_agg__key_stacks(r->m->agg, key, note_ref, r);
	return r->err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The keys of a stack map, collected: deleting while walking a hash
 * would restart the walk. */
static int collect_key(void *ctx, const void *key)
{
	struct refs *c = ctx;

	add_ref(c, *(const uint64_t *)key);
	return c->err;
}

/* A stack no live key names (its frames in v), copied unless held
 * already, with what it is under this key: a key made after the live
 * keys were walked may still name it. */
static void keep_alias(struct pmt_aggmaps *m, uint64_t key, const uint64_t *v)
{
	uint64_t ips[PMT_STACK_DEPTH], id;
	struct alias *a;
	uint32_t n;

	for (n = 0; n < PMT_STACK_KEPT && v[n]; n++)
		ips[n] = v[n];
	if (!pmt_stack_copies__id(&m->copies, key, v[PMT_STACK_KEPT], ips, n, &id) &&
	    (a = pmt_grow(m->aliases, &m->acap, m->naliases, sizeof(*a), 256))) {
		m->aliases = a;
		a[m->naliases++] = (struct alias){key, id, v[PMT_STACK_KEPT]};
	}
}

static bool is_live(const struct refs *live, uint64_t key)
{
	return live->n && bsearch(&key, live->v, live->n, sizeof(*live->v), cmp_u64);
}

static int note_live_key(struct pmt_aggmaps *m, const struct pmt_agg_key *key)
{
	return note_live(m->live, key);
}

#define STACK_BATCH 64

/* fn(ctx, key, frames) for each stack of the kernel's table, a batch of
 * keys and frames a system call, until fn returns non-zero (returned).
 * -EINVAL or -ENOTSUP when the kernel takes no batches. */
static int each_stack_batch(int fd, int (*fn)(void *ctx, uint64_t key, const uint64_t *v),
			    void *ctx)
{
	uint64_t *keys = malloc(STACK_BATCH * sizeof(*keys)), token = 0;
	uint64_t(*vals)[PMT_STACK_DEPTH] = malloc(STACK_BATCH * sizeof(*vals));
	bool first = true, done = false;
	int err = keys && vals ? 0 : -ENOMEM;

	while (!err && !done) {
		__u32 n = STACK_BATCH, i;
		int r = 0;

		if (bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, vals, &n, NULL)) {
			err = -errno;
			if (first && !n && err != -ENOENT)
				break; /* -EINVAL, -ENOTSUP: no batches here */
			done = true;
			err = err == -ENOENT ? 0 : err;
		}
		first = false;
		for (i = 0; i < n && !r; i++)
			r = fn(ctx, keys[i], vals[i]);
		err = err ?: r;
	}
	free(keys);
	free(vals);
	return err;
}

struct gone_walk {
	struct pmt_aggmaps *m;
	const struct refs *live;
	struct refs *gone;
};

static int note_gone(void *ctx, uint64_t key, const uint64_t *v)
{
	struct gone_walk *w = ctx;

	if (!is_live(w->live, key)) {
		keep_alias(w->m, key, v);
		add_ref(w->gone, key);
	}
	return w->gone->err;
}

/* The kernel's stacks, in batches: those no live key names kept
 * (keep_alias) and listed in gone. -EINVAL or -ENOTSUP when the kernel
 * takes no batches. */
static int stacks_gone(struct pmt_aggmaps *m, int fd, const struct refs *live, struct refs *gone)
{
	struct gone_walk w = {m, live, gone};

	return each_stack_batch(fd, note_gone, &w);
}

/* The same, key by key (a kernel without batches of hash maps) */
static int stacks_gone_by_key(struct pmt_aggmaps *m, int fd, const struct refs *live,
			      struct refs *gone)
{
	struct refs all = {.m = m};
	uint64_t v[PMT_STACK_DEPTH];
	size_t i;

	if (!walk_keys(fd, collect_key, &all) && !all.err)
		for (i = 0; i < all.n && !gone->err; i++)
			if (!is_live(live, all.v[i]) && !bpf_map_lookup_elem(fd, &all.v[i], v)) {
				keep_alias(m, all.v[i], v);
				add_ref(gone, all.v[i]);
			}
	free(all.v);
	return all.err ?: gone->err;
}

/*
 * After a drain, the kernel's stacks no live key refers to are copied
 * (unless held already) and deleted, so its table holds what the keys
 * made since the drain need. The live keys are walked first: a stack
 * stored after that walk for a key made since is deleted too, its copy
 * and alias kept for that key's drain (copy_stack).
 */
static void collect_stacks(struct pmt_aggmaps *m)
{
	int fd = bpf_map__fd(m->skel->maps.pmt_stacks), err;
	struct refs live = {.m = m}, gone = {.m = m};
	size_t i;
	__u32 n;

	m->naliases = 0;
	m->live = &live;
	if (read_hash(m, note_live_key) || live.err)
		goto out;
	pmt_sort(live.v, live.n, sizeof(*live.v), cmp_u64);
	err = stacks_gone(m, fd, &live, &gone);
	if (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP)
		stacks_gone_by_key(m, fd, &live, &gone);
	n = (__u32)gone.n;
	if (n && bpf_map_delete_batch(fd, gone.v, &n, NULL))
		for (i = 0; i < gone.n; i++)
			bpf_map_delete_elem(fd, &gone.v[i]);
	if (m->naliases)
		pmt_sort(m->aliases, m->naliases, sizeof(*m->aliases), cmp_alias);
out:
	m->live = NULL;
	free(live.v);
	free(gone.v);
}

static void use_stack(void *ctx, bool user, uint64_t v)
{
	if (!pmt_agg__stack_none(user, v))
		pmt_stack_copies__use(ctx, v);
}

/* Free the copies of stacks no total (nor an open window's) refers to. */
static void sweep_copies(struct pmt_aggmaps *m)
{
	size_t i;

	for (i = 0; i < m->totals.e.n; i++)
		pmt_agg__key_stacks(m->agg, &m->totals.e.v[i].key, use_stack, &m->copies);
	for (int w = 0; w < PMT_AGG_WINDOWS; w++)
		for (i = 0; m->win[w].open && i < m->win[w].t.e.n; i++)
			pmt_agg__key_stacks(m->agg, &m->win[w].t.e.v[i].key, use_stack, &m->copies);
	pmt_stack_copies__sweep(&m->copies);
}

/* Fewer stacks than this a drain looks up one by one */
#define PREFETCH_MIN 32

/* A stack of the kernel's table that a drained key names, kept */
static int keep_prefetched(struct prefetch *p, uint64_t key, const uint64_t *v)
{
	struct prefetched *e = pmt_grow(p->v, &p->cap, p->n, sizeof(*p->v), 256);
	uint64_t *f;
	uint32_t n;

	if (!e)
		return -ENOMEM;
	p->v = e;
	for (n = 0; n < PMT_STACK_KEPT && v[n]; n++)
		;
	if (!(f = pmt_grow(p->frames, &p->fcap, p->nframes + n, sizeof(*f), 4096)))
		return -ENOMEM;
	p->frames = f;
	memcpy(f + p->nframes, v, n * sizeof(*v));
	e[p->n++] = (struct prefetched){key, v[PMT_STACK_KEPT], n, p->nframes};
	p->nframes += n;
	return 0;
}

struct prefetch_walk {
	struct prefetch *p;
	const struct refs *want; /* sorted */
};

static int note_wanted(void *ctx, uint64_t key, const uint64_t *v)
{
	struct prefetch_walk *w = ctx;

	if (!bsearch(&key, w->want->v, w->want->n, sizeof(*w->want->v), cmp_u64))
		return 0;
	return keep_prefetched(w->p, key, v);
}

/*
 * The stacks the drained keys name, read from the kernel's table a batch
 * of 64 a system call (a churn's drain names thousands, a lookup each
 * before): kernel_stack finds them in m->pre. Nothing is read for a few,
 * or where the kernel takes no batches (lookups then, as for a stack
 * stored after this read).
 */
static void prefetch_stacks(struct pmt_aggmaps *m, struct prefetch *p)
{
	struct refs want = {.m = m};
	struct prefetch_walk w = {p, &want};
	size_t i;

	for (i = 0; i < m->got.n && !want.err; i++)
		pmt_agg__key_stacks(m->agg, &m->got.v[i].key, note_ref, &want);
	if (!want.err && want.n >= PREFETCH_MIN) {
		pmt_sort(want.v, want.n, sizeof(*want.v), cmp_u64);
		/* what it read before an error is kept: the rest looked up */
		each_stack_batch(bpf_map__fd(m->skel->maps.pmt_stacks), note_wanted, &w);
		if (p->n > 1)
			pmt_sort(p->v, p->n, sizeof(*p->v), cmp_prefetched);
		m->pre = p;
	}
	free(want.v);
}

/* Under m->lock. 0 or -errno. */
static int drain(struct pmt_aggmaps *m)
{
	struct prefetch pre = {0};
	uint32_t z;
	size_t i;
	int err;

	if (!m->hash)
		return 0;
	m->old = m->skel->bss->pmt_agg_gen & 1;
	/* keys made from here on count toward the next drain */
	m->new_at_drain = pmt_percpu__sum(m->skel->maps.pmt_stats, PMT_STAT_AGG_NEW);
	m->skel->bss->pmt_agg_gen = m->old ^ 1;
	if ((err = wait_programs(m)))
		return err;
	z = m->old;
	if (bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.pmt_agg_cache), &z, m->cache))
		return -errno;
	m->err = 0;
	err = read_hash(m, take_key);
	if (!err && m->stacks)
		prefetch_stacks(m, &pre);
	for (i = 0; !err && i < m->got.n; i++) {
		struct pmt_agg_entry *e = &m->got.v[i];

		m->conflict = false;
		if (m->stacks)
			pmt_agg__key_stacks_set(m->agg, &e->key, copy_stack, m);
		if (m->conflict)
			m->lost_stacks += e->val.count;
		e->key.pad &= ~1u; /* the map's index stays */
		for (int w = 0; w < PMT_AGG_WINDOWS; w++)
			if (m->win[w].open && pmt_agg_totals__add(&m->win[w].t, e) == -ENOMEM)
				err = -ENOMEM;
		err = err ?: pmt_agg_totals__add(&m->totals, e);
		if (err == -ENOSPC) {
			m->lost_keys += e->val.count;
			err = 0;
		}
	}
	if (!err)
		err = m->err;
	m->pre = NULL;
	free(pre.v);
	free(pre.frames);
	pmt_agg_entries__free(&m->got);
	if (err)
		return err;
	delete_keys(m);
	/* the old half's caches, emptied for its next turn */
	memset(m->cache, 0, (size_t)m->ncpu * sizeof(*m->cache));
	if (bpf_map_update_elem(bpf_map__fd(m->skel->maps.pmt_agg_cache), &z, m->cache, BPF_ANY))
		return -errno;
	if (m->stacks) {
		collect_stacks(m);
		if (m->copies.n > 2 * m->totals.e.n + 1024)
			sweep_copies(m);
	}
	return 0;
}

/* --- stacks finished here -------------------------------------------------- */

struct finished {
	uint64_t id;
};

static uint64_t set_finished(void *ctx, bool user, uint64_t v)
{
	const struct finished *f = ctx;

	return user && (uint32_t)v == PMT_USTACK_DEFERRED ? f->id : v;
}

/* The kernel's hash of a stack's frames (abi/record.h): a stack finished
 * here has the key of the same stack unwound whole by the kernel. */
static uint64_t stack_hash(const uint64_t *ips, uint32_t n)
{
	uint64_t h = PMT_STACK_HASH_SEED;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = pmt_hash_word(h, ips[i]);
	return h;
}

int pmt_aggmaps__add_finished(struct pmt_aggmaps *m, struct pmt_agg_key *key, int64_t value,
			      uint32_t tgid, const uint64_t *ips, uint32_t n, uint64_t ts)
{
	uint64_t h = stack_hash(ips, n);
	struct finished f = {(uint64_t)tgid << 32 | (uint32_t)h};
	struct pmt_agg_entry e = {0};
	int err = 0, w;

	if (!m || !m->hash)
		return 0;
	pthread_mutex_lock(&m->lock);
	err = n ? pmt_stack_copies__id(&m->copies, f.id, h, ips, n, &f.id) : -ENOENT;
	if (err)
		f.id = pmt_agg__stack_none_of(true, f.id);
	pmt_agg__key_stacks_set(m->agg, key, set_finished, &f);
	e.key = *key;
	e.key.pad &= ~1u;
	e.val = (struct pmt_agg_val){1, value, value, value};
	err = 0;
	/* a window holds the samples of its own time: one from before it
	 * opened, its stack finished late (a busy machine), is not its */
	for (w = 0; w < PMT_AGG_WINDOWS; w++)
		if (m->win[w].open && ts >= m->win[w].start_ns &&
		    pmt_agg_totals__add(&m->win[w].t, &e) == -ENOMEM)
			err = -ENOMEM;
	err = err ?: pmt_agg_totals__add(&m->totals, &e);
	if (err == -ENOSPC) {
		m->lost_keys++;
		err = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* --- prints ---------------------------------------------------------------- */

/* Drain (or read the keyless array), then cur: map's entries in the
 * totals, where they are (pmt_agg_totals__map). Under m->lock. */
static int read_entries(struct pmt_aggmaps *m, struct pmt_agg_entries *cur, size_t map)
{
	struct pmt_agg_maps mm;
	int err;

	memset(cur, 0, sizeof(*cur));
	pmt_agg__maps(m->agg, &mm);
	if ((err = mm.flat_slots ? read_flat(m, mm.flat_slots) : drain(m)))
		return err;
	return pmt_agg_totals__map(&m->totals, (uint32_t)map, cur);
}

struct gc {
	struct pmt_aggmaps *m;
	struct pmt_syms *syms;
	bool exited; /* the key being offered has an exited process's stack */
};

static void note_exited(void *ctx, bool user, uint64_t v)
{
	struct gc *g = ctx;
	const struct pmt_stack_copy *c;

	if (!user || !(v >> 32))
		return;
	c = pmt_stack_copies__find(&g->m->copies, v);
	if ((c && c->rebased) || pmt_syms__exited(g->syms, (uint32_t)(v >> 32)))
		g->exited = true;
}

/*
 * --interval: a key that saw nothing in the interval is forgotten, and one
 * holding the user stack of a process that exited (its samples are all
 * in: short processes would otherwise pile up keys for one more
 * interval).
 */
static bool drop_key(void *ctx, const struct pmt_agg_key *k, bool idle)
{
	struct gc *g = ctx;

	if (idle)
		return true;
	g->exited = false;
	pmt_agg__key_stacks(g->m->agg, k, note_exited, g);
	return g->exited;
}

/* After a print of cur (map a's view of the totals): the keys forgotten
 * left the view's end, cut from the totals. */
static void forget_keys(struct pmt_aggmaps *m, const struct pmt_agg *a, struct pmt_agg_entries *cur,
			struct pmt_syms *syms)
{
	struct gc g = {.m = m, .syms = syms};
	size_t n;

	if (!m->hash || !(n = pmt_agg__forget(a, cur, drop_key, &g)))
		return;
	pmt_agg_totals__cut(&m->totals, (size_t)(cur->v - m->totals.e.v) + cur->n, n);
	if (m->stacks)
		sweep_copies(m);
}

int pmt_aggmaps__print(struct pmt_aggmaps *m, struct pmt_syms *syms, struct pmt_output *out,
		       uint64_t now_ns, struct pmt_error *e)
{
	return pmt_aggmaps__print_map(m, 0, 0, syms, out, now_ns, e);
}

int pmt_aggmaps__print_map(struct pmt_aggmaps *m, size_t map, int top, struct pmt_syms *syms,
			   struct pmt_output *out, uint64_t now_ns, struct pmt_error *e)
{
	const struct pmt_agg_io io = {syms, stack_lookup, m};
	struct pmt_agg *a = map ? m->agg->more[map - 1] : m->agg;
	struct pmt_agg_entries cur;
	uint64_t forgotten;
	int err;

	if (map > m->agg->nmore)
		return 0;
	pthread_mutex_lock(&m->lock);
	err = read_entries(m, &cur, map);
	if (err) {
		pmt_error__runtime(e, err, "reading the aggregation's maps failed: %s",
				   strerror(-err));
	} else {
		pmt_syms__lock(syms);
		a->top = top;
		err = pmt_agg__print(a, &cur, &io, out, now_ns, e);
		a->top = 0;
		pmt_syms__unlock(syms);
	}
	if (!err)
		forget_keys(m, a, &cur, syms);
	pthread_mutex_unlock(&m->lock);
	forgotten = pmt_syms__forgotten(syms);
	if (forgotten)
		pmt_warn("%llu exited processes were forgotten before this print (too many "
			 "waited): their user frames show as [unknown]; --interval prints sooner",
			 (unsigned long long)forgotten);
	return err;
}

void pmt_aggmaps__touch_files(struct pmt_aggmaps *m, struct pmt_syms *syms)
{
	const struct pmt_agg_io io = {syms, stack_lookup, m};
	struct pmt_agg_entries cur;

	pthread_mutex_lock(&m->lock);
	if (!read_entries(m, &cur, 0)) {
		pmt_syms__lock(syms);
		pmt_agg__touch_files(m->agg, &cur, &io);
		pmt_syms__unlock(syms);
	}
	pthread_mutex_unlock(&m->lock);
}

int pmt_aggmaps__metrics(struct pmt_aggmaps *m, struct pmt_syms *syms, const char *name, bool om,
			 struct pmt_buf *b)
{
	const struct pmt_agg_io io = {syms, stack_lookup, m};
	struct pmt_agg_entries cur;
	int err;

	pthread_mutex_lock(&m->lock);
	err = read_entries(m, &cur, 0);
	if (!err) {
		pmt_syms__lock(syms);
		err = pmt_agg__metrics(m->agg, &cur, &io, name, om, b);
		pmt_syms__unlock(syms);
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

/*
 * When the quarter is due to be full at the rate new keys come: the next
 * look comes then, between POLL_MIN_MS and the caller's most. The rate
 * is the last look's, or, where that is lower, half the rate held before:
 * a burst's pause (no new keys between two looks) slows the looks down
 * step by step, not at once to the most (the next burst would then fill
 * the hash before a look).
 */
#define POLL_MIN_MS 2
static int next_look_ms(struct pmt_aggmaps *m, uint64_t fresh, uint64_t due, int most)
{
	uint64_t now = pmt_now_ns(), came = fresh - m->new_seen;
	/* the first look comes one wait of the most in */
	uint64_t dt = m->seen_ns ? now - m->seen_ns : (uint64_t)most * 1000000;
	uint64_t left = fresh - m->new_at_drain < due ? due - (fresh - m->new_at_drain) : 0;
	double rate = dt ? (double)came / (double)dt : 0, ms; /* keys a ns */

	m->new_seen = fresh;
	m->seen_ns = now;
	m->rate = rate >= m->rate / 2 ? rate : m->rate / 2;
	if (m->rate * 1e9 < 1)
		return most;
	/* half the time the rate gives: a burst need not be steady */
	ms = (double)left / m->rate / 2 / 1e6;
	return ms < POLL_MIN_MS ? POLL_MIN_MS : ms > most ? most : (int)ms;
}

int pmt_aggmaps__poll(struct pmt_aggmaps *m, int *next_ms)
{
	uint64_t keys = bpf_map__max_entries(m->skel->maps.pmt_agg);
	uint64_t due = keys / 4 ? keys / 4 : 1, fresh;
	int err = 0;

	if (!m->hash)
		return 0;
	fresh = pmt_percpu__sum(m->skel->maps.pmt_stats, PMT_STAT_AGG_NEW);
	if (fresh - m->new_at_drain >= due) {
		pthread_mutex_lock(&m->lock);
		err = drain(m);
		pthread_mutex_unlock(&m->lock);
	}
	*next_ms = next_look_ms(m, fresh, due, *next_ms);
	return err;
}

uint64_t pmt_aggmaps__lost_stacks(struct pmt_aggmaps *m)
{
	return m ? m->lost_stacks : 0;
}

uint64_t pmt_aggmaps__lost_keys(struct pmt_aggmaps *m)
{
	return m ? m->lost_keys : 0;
}

/* --- windows --------------------------------------------------------------- */

int pmt_aggmaps__window_open(struct pmt_aggmaps *m)
{
	struct timespec wall;
	int w, err;

	pthread_mutex_lock(&m->lock);
	/* what came before is the totals' alone */
	err = drain(m);
	for (w = 0; !err && w < PMT_AGG_WINDOWS && m->win[w].open; w++)
		;
	if (!err && w == PMT_AGG_WINDOWS)
		err = -EBUSY;
	if (!err) {
		clock_gettime(CLOCK_REALTIME, &wall);
		m->win[w].open = true;
		m->win[w].start_ns = pmt_now_ns();
		m->win[w].start_wall_ns = (int64_t)wall.tv_sec * 1000000000LL + wall.tv_nsec;
		m->win[w].t.limit = m->totals.limit;
	}
	pthread_mutex_unlock(&m->lock);
	return err ? err : w;
}

int pmt_aggmaps__window_close(struct pmt_aggmaps *m, int w, struct pmt_syms *syms, uint8_t **gz,
			      size_t *len)
{
	const struct pmt_agg_io io = {syms, stack_lookup, m};
	struct window *win = &m->win[w];
	int err;

	int64_t span;

	pthread_mutex_lock(&m->lock);
	err = drain(m);
	/* the window's samples are those of the two drains: its duration is
	 * theirs (a busy machine drains late), not the request's */
	span = (int64_t)(pmt_now_ns() - win->start_ns);
	if (!err) {
		pmt_syms__lock(syms);
		err = pmt_agg__pprof(m->agg, win->t.e.v, win->t.e.n, &io, win->start_wall_ns, span,
				     gz, len);
		pmt_syms__unlock(syms);
	}
	win->open = false;
	pmt_agg_totals__free(&win->t);
	memset(&win->t, 0, sizeof(win->t));
	pthread_mutex_unlock(&m->lock);
	malloc_trim(0); /* the profile's building is freed: its pages go back */
	return err;
}

uint64_t pmt_aggmaps__windows_since(struct pmt_aggmaps *m)
{
	uint64_t oldest = UINT64_MAX;
	int w;

	if (!m)
		return oldest;
	pthread_mutex_lock(&m->lock);
	for (w = 0; w < PMT_AGG_WINDOWS; w++)
		if (m->win[w].open && m->win[w].start_ns < oldest)
			oldest = m->win[w].start_ns;
	pthread_mutex_unlock(&m->lock);
	return oldest;
}

/* --- exited processes -------------------------------------------------------- */

bool pmt_aggmaps__settles(const struct pmt_aggmaps *m)
{
	return m && m->stacks && m->hash && !pmt_agg__names_in_process(m->agg);
}

int pmt_aggmaps__settle(struct pmt_aggmaps *m, struct pmt_syms *syms)
{
	size_t i;
	int err;

	pthread_mutex_lock(&m->lock);
	err = drain(m);
	for (i = 0; !err && i < m->copies.n; i++) {
		struct pmt_stack_copy *c = &m->copies.v[i];
		uint32_t pid = (uint32_t)(c->key >> 32);

		if (c->rebased || !pid || !pmt_syms__exited(syms, pid))
			continue;
		pmt_syms__rebase(syms, pid, c->ips, c->n);
		c->rebased = true;
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}
