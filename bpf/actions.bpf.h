/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The non-streaming actions of a probe (cfg->action): an aggregation's
 * update, a --latency start (an entry in pmt_lat, with --counter where
 * the counts stand) and its end (the time or the counts since, added as
 * the value), and the update whose user stack was left for user space.
 */
#ifndef PMTRACE_ACTIONS_BPF_H
#define PMTRACE_ACTIONS_BPF_H

#include "aggregate.bpf.h"

/* --latency: its keys are built at the start (pmt_lat_keys) */
const volatile bool pmt_lat_start_keys __weak = false;

/* --counter: this CPU's context switches so far (bpf/count.bpf.c; see
 * pmt_lat_start_counters) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pmt_switch_seq SEC(".maps") __weak;

/* --latency starts: bounded by LRU, so unmatched starts cannot pile up;
 * a list of each CPU's (a start evicts the oldest of its CPU's share,
 * sized by user space: pmt_agg__lat_entries), where one list for all
 * took 28 ns more of each run, locked (141 ns a run of a uprobe latency
 * against 112) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__type(key, struct pmt_lat_key);
	__type(value, struct pmt_lat_val);
} pmt_lat SEC(".maps") __weak;

/* --latency whose keys are the start's (pmt_lat_start_keys): each
 * started measurement's key, built at the start (gethostlatency's host
 * is an argument of the call, gone at its return) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct pmt_lat_key);
	__type(value, struct pmt_agg_key);
} pmt_lat_keys SEC(".maps") __weak;

/*
 * --latency --counter: uprobe programs run preemptible, and a switch that
 * comes between reading the counters and storing what was read is not
 * taken where it should be. pmt_switch_seq (this CPU's switches, counted
 * by bpf/count.bpf.c) tells when one came.
 */
/* The start: an entry noting where the counts stand. Preempted before
 * the entry was there, the switches passed it by and what was read
 * counted others' events meanwhile: the entry starts again from now (the
 * same CPU), until no switch came while it did (a switch out after the
 * stale read took others' events into acc). */
static __always_inline void pmt_lat_start_counters(const struct pmt_lat_key *lk,
						   struct pmt_lat_val *lv)
{
	__u32 z = 0, i, k;
	__u64 *seq = bpf_map_lookup_elem(&pmt_switch_seq, &z), s0 = seq ? *seq : 0;
	struct pmt_lat_val *sv;

	pmt_counters_now(lv->last);
	if (bpf_map_update_elem(&pmt_lat, lk, lv, BPF_ANY)) {
		pmt_stat_inc(PMT_STAT_LAT_FULL);
		return;
	}
	if (!seq || *seq == s0 || !(sv = bpf_map_lookup_elem(&pmt_lat, lk)))
		return;
	for (i = 0; i < 2; i++) {
		s0 = *seq;
		for (k = 0; k < PMT_COUNTERS; k++)
			sv->acc[k] = 0;
		sv->away = 0;
		pmt_counters_now(sv->last);
		if (*seq == s0)
			break;
	}
}

/* The end: the entry's counts and its last segment's, into a copy. A
 * switch out meanwhile takes into the entry (the segment then counted
 * twice): taken again from the entry, as the switches left it. */
static __always_inline void pmt_lat_end_counters(const struct pmt_lat_val *sv,
						 struct pmt_lat_val *lv)
{
	__u32 z = 0;
	__u64 *seq = bpf_map_lookup_elem(&pmt_switch_seq, &z), s0;
	int i;

	for (i = 0; i < 2; i++) {
		s0 = seq ? *seq : 0;
		*lv = *sv;
		if (!lv->away)
			pmt_counters_take(lv->acc, lv->last);
		if (!seq || *seq == s0)
			break;
	}
	if (lv->away) /* running, its arrival untraced: see pmt_counters_leave */
		pmt_stat_inc(PMT_STAT_COUNTER_UNSEEN);
}

/* The non-streaming actions; returns after updating the maps. ran: the
 * probe's expressions ran already (a generated program's: abi/xgen.h),
 * their values at c->xslot. */
static __always_inline void pmt_aggregate_update(const struct pmt_probe_cfg *cfg,
						 struct pmt_fctx *c, __u32 probe_id, const bool ran)
{
	const struct pmt_agg_cfg *a = &cfg->agg;
	struct pmt_lat_key lk = {};
	struct pmt_lat_val lv = {}, *sv;
	__u64 *hits = bpf_map_lookup_elem(&pmt_hits, &probe_id);
	__u32 z = 0;
	__s64 v;

	if (hits)
		(*hits)++;
	if (!ran)
		pmt_x_prepare(a->xprog, c);
	switch (cfg->action) {
	case PMT_ACT_AGG:
		/* a program's update inside an if: its condition (the guard) */
		if (a->guarded && !pmt_fetch_num(&a->match, c))
			return;
		pmt_agg_update(a, c, probe_id, pmt_agg_event_value(a, c));
		return;
	case PMT_ACT_LAT_START:
		lk.match = pmt_fetch_num(&a->match, c);
		lk.lat_id = a->lat_id;
		if (pmt_lat_start_keys) {
			struct pmt_agg_key *k = bpf_map_lookup_elem(&pmt_key_buf, &z);

			if (!k)
				return;
			pmt_agg_fill_key(a, c, k, probe_id);
			if (bpf_map_update_elem(&pmt_lat_keys, &lk, k, BPF_ANY))
				return;
		}
		lv.start = bpf_ktime_get_ns();
		if (pmt_lat_counter) {
			pmt_lat_start_counters(&lk, &lv);
			return;
		}
		if (bpf_map_update_elem(&pmt_lat, &lk, &lv, BPF_ANY))
			pmt_stat_inc(PMT_STAT_LAT_FULL);
		return;
	case PMT_ACT_LAT_END:
		lk.match = pmt_fetch_num(&a->match, c);
		lk.lat_id = a->lat_id;
		sv = bpf_map_lookup_elem(&pmt_lat, &lk);
		if (!sv) {
			pmt_stat_inc(PMT_STAT_LAT_NOSTART);
			return;
		}
		if (pmt_lat_counter) {
			pmt_lat_end_counters(sv, &lv);
			bpf_map_delete_elem(&pmt_lat, &lk);
			/* one update a counter, keyed by which (PMT_KEY_COUNTER) */
			for (c->counter = 0; c->counter < PMT_COUNTERS; c->counter++)
				if (c->counter < pmt_ncounters)
					pmt_agg_update(a, c, probe_id, (__s64)lv.acc[c->counter]);
			return;
		}
		v = (__s64)((bpf_ktime_get_ns() - sv->start) / (a->lat_div ? a->lat_div : 1));
		bpf_map_delete_elem(&pmt_lat, &lk);
		if (pmt_lat_start_keys) {
			struct pmt_agg_key *k = bpf_map_lookup_elem(&pmt_key_buf, &z), *sk;

			sk = bpf_map_lookup_elem(&pmt_lat_keys, &lk);
			if (!k || !sk) {
				pmt_stat_inc(PMT_STAT_LAT_NOSTART);
				return;
			}
			__builtin_memcpy(k, sk, sizeof(*k));
			bpf_map_delete_elem(&pmt_lat_keys, &lk);
			pmt_agg_update_key(a, k, v);
			return;
		}
		pmt_agg_update(a, c, probe_id, v);
		return;
	}
}

static __always_inline void pmt_aggregate_action(const struct pmt_probe_cfg *cfg,
						 struct pmt_fctx *c, __u32 probe_id)
{
	pmt_aggregate_update(cfg, c, probe_id, false);
}

/* A program's block updating several maps: the entries of pmt_probes
 * holding the others' updates (set at load; none: compiled out) */
const volatile __u32 pmt_agg_siblings __weak = 0;
#define PMT_AGG_SIBLINGS 7 /* updates a block after its first, at most */

/* A block's other map update a, where its condition holds. A function
 * of its own: one copy of the update however many maps, called beside
 * the expressions' callback, not from a function of its own (6.1 bounds
 * the frames of a chain of calls to 512 bytes in all, and a kprobe's
 * body takes 320). */
static __noinline __attribute__((unused)) long pmt_aggregate_other(const struct pmt_agg_cfg *a,
								   struct pmt_fctx *c)
{
	if (!a->guarded || pmt_fetch_num(&a->match, c))
		pmt_agg_update(a, c, c->probe, pmt_agg_event_value(a, c));
	return 0;
}

/* The block's other map updates (cfg->next_agg's chain: entries of
 * pmt_probes), each with its own keys, value and condition, before its
 * statements change what they read. */
static __always_inline void pmt_aggregate_siblings(const struct pmt_probe_cfg *cfg,
						   struct pmt_fctx *c)
{
	__u32 i, next = cfg->next_agg;

	for (i = 0; i < PMT_AGG_SIBLINGS && i < pmt_agg_siblings && next; i++) {
		next--;
		cfg = bpf_map_lookup_elem(&pmt_probes, &next);
		if (!cfg)
			return;
		pmt_x_prepare(cfg->agg.xprog, c);
		pmt_aggregate_other(&cfg->agg, c);
		next = cfg->next_agg;
	}
}

/* After the block's first update: its other updates, then its
 * statements (PMT_ACT_NONE: those alone) */
static __always_inline void pmt_aggregate_rest(const struct pmt_probe_cfg *cfg, struct pmt_fctx *c)
{
	if (pmt_agg_siblings)
		pmt_aggregate_siblings(cfg, c);
	pmt_x_statements(cfg->sprog, c);
}

/* The action, the block's other updates, then its statements */
static __always_inline void pmt_aggregate(const struct pmt_probe_cfg *cfg, struct pmt_fctx *c,
					  __u32 probe_id)
{
	pmt_aggregate_action(cfg, c, probe_id);
	pmt_aggregate_rest(cfg, c);
}

/*
 * The same for an update whose user stack was left for user space
 * (c->udefer; cfg->action is PMT_ACT_AGG; its expressions run by the
 * caller): its key built, then sent with the stack; 0 when sent (else nothing was counted: the caller keys the
 * stack in the kernel, pmt_aggregate_stacked). A function of its own,
 * called instead of pmt_aggregate_action (the rest, pmt_aggregate_rest,
 * follows either): its locals on its own frame, not the program's (6.1
 * allows 512 bytes for a program and the callbacks it is in).
 */
static __noinline __attribute__((unused)) long pmt_aggregate_deferred(
	const struct pmt_probe_cfg *cfg, struct pmt_fctx *c)
{
	const struct pmt_agg_cfg *a = &cfg->agg;
	__u32 z = 0, id = c->probe;
	struct pmt_agg_key *k;
	__u64 *hits;
	__s64 v;

	v = pmt_agg_event_value(a, c);
	k = bpf_map_lookup_elem(&pmt_key_buf, &z);
	if (!k)
		return 1;
	pmt_agg_fill_key(a, c, k, id);
	k->bucket = pmt_agg_bucket(a, v);
	k->pad = (__u32)a->map << PMT_AGG_MAP_SHIFT;
	if (pmt_agg_defer_send(c, k, v))
		return 1;
	hits = bpf_map_lookup_elem(&pmt_hits, &id);
	if (hits)
		(*hits)++;
	return 0;
}

#endif
