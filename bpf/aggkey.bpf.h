/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An aggregation's key (--by) built in pmt_key_buf from the probe's key
 * parts (struct pmt_key_part: operands, strings, stacks, counters), and
 * the bucket a value falls in (--hist's log2, --lhist's linear): what
 * aggregate.bpf.h adds the value under.
 */
#ifndef PMTRACE_AGGKEY_BPF_H
#define PMTRACE_AGGKEY_BPF_H

#include "operand.bpf.h"

/* The key being built, and room after it: a str() part is read straight
 * into the key at a variable place for a variable length, each below
 * PMT_KEY_MAX, whose sum the verifier cannot bound by the key alone (the
 * compiler keeps the real one within it: src/aggregate/compile.c). */
struct pmt_agg_key_room {
	struct pmt_agg_key k;
	__u8 slack[PMT_KEY_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_agg_key_room);
} pmt_key_buf SEC(".maps") __weak;

/* 0 for 0, 1 + floor(log2 v) for v > 0, -1 for v < 0: bpftrace's buckets */
static __always_inline __s32 pmt_log2_bucket(__s64 sv)
{
	__u64 v = (__u64)sv;
	__s32 r = 0, shift;

	if (sv < 0)
		return -1;
	if (!v)
		return 0;
	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r |= shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r + 1;
}

/*
 * Key parts sit at multiples of 8 (src/aggregate/compile.c sizes every part so):
 * words of k->data indexed under a mask are in bounds whatever a verifier
 * remembers of the offset (6.1's forgets a checked bound across a spill).
 */
#define PMT_KEY_WORD(k, at) (((__u64 *)(k)->data)[((at) / 8) & (PMT_KEY_MAX / 8 - 1)])

static __always_inline void pmt_agg_fill_key(const struct pmt_agg_cfg *a, struct pmt_fctx *c,
					     struct pmt_agg_key *k, __u32 probe_id)
{
	struct pmt_fstr *str;
	__u32 i, j, len, zero = 0;

	__builtin_memset(k->data, 0, sizeof(k->data));
	for (i = 0; i < PMT_AGG_KEYS; i++) {
		const struct pmt_key_part *kp = &a->keys[i];
		__u32 at = kp->at;

		if (i >= a->nkeys || i >= pmt_agg_nparts)
			break;
		if (pmt_uses_key(PMT_KEY_STRING) && kp->kind == PMT_KEY_STRING) {
			/* the task's comm comes NUL-padded: straight in */
			if (pmt_uses_src(PMT_FSRC_COMM) && kp->o.src == PMT_FSRC_COMM) {
				struct task_struct *t = bpf_get_current_task_btf();

				PMT_KEY_WORD(k, at) = *(__u64 *)&t->comm[0];
				PMT_KEY_WORD(k, at + 8) = *(__u64 *)&t->comm[8];
				continue;
			}
			/* str(F): read straight into the key (zeros after the
			 * NUL: the key was cleared); a fault marked in byte 1 */
			if (pmt_uses_src(PMT_FSRC_PTR_STR) && kp->o.src == PMT_FSRC_PTR_STR) {
				char *dst;

				/* --str-len, within the part (its words) */
				len = kp->len < pmt_str_len ? kp->len : pmt_str_len;
				if (!len || len > PMT_KEY_MAX)
					continue;
				dst = (char *)k->data + (at & (PMT_KEY_MAX - 1));
				if (pmt_read_ptr_str(&kp->o, c, dst, len) < 0)
					dst[1] = PMT_KEY_FAULT;
				continue;
			}
			/* the rest read a record's strings: none in the session,
			 * none to verify */
			if (!pmt_uses_src(PMT_FSRC_FIELD_STR) && !pmt_uses_src(PMT_FSRC_FIELD_DSTR))
				continue;
			/* up to the NUL, zeros after: equal strings, equal keys */
			str = bpf_map_lookup_elem(&pmt_fstr_buf, &zero);
			if (!str)
				break;
			len = pmt_fetch_str(&kp->o, c, str->s);
			if (len > kp->len)
				len = kp->len;
			for (j = 0; j < PMT_KEY_STR; j++) {
				if (j >= len || !str->s[j])
					break;
				k->data[(at + j) & (PMT_KEY_MAX - 1)] = str->s[j];
			}
			continue;
		}
		if (pmt_uses_key(PMT_KEY_PROBE) && kp->kind == PMT_KEY_PROBE)
			PMT_KEY_WORD(k, at) = probe_id;
		else if (pmt_uses_key(PMT_KEY_COUNTER) && kp->kind == PMT_KEY_COUNTER)
			PMT_KEY_WORD(k, at) = c->counter;
		else if (pmt_uses_key(PMT_KEY_ADDR6) && kp->kind == PMT_KEY_ADDR6) {
			__u64 w[2] = {};

			/* 16 bytes of the record, as they lie (src: any address
			 * to the helper, read safely) */
			if (c->rec)
				bpf_probe_read_kernel(w, sizeof(w), c->rec + kp->o.off);
			PMT_KEY_WORD(k, at) = w[0];
			PMT_KEY_WORD(k, at + 8) = w[1];
		} else
			PMT_KEY_WORD(k, at) = pmt_fetch_num(&kp->o, c);
	}
}

static __always_inline __s32 pmt_agg_bucket(const struct pmt_agg_cfg *a, __s64 v)
{
	if (pmt_uses_agg(PMT_AGG_HIST) && a->kind == PMT_AGG_HIST)
		return pmt_log2_bucket(v);
	if (!pmt_uses_agg(PMT_AGG_LHIST) || a->kind != PMT_AGG_LHIST)
		return 0;
	if (v < a->lmin)
		return -1;
	if (a->lstep <= 0)
		return 0;
	/* the distance in unsigned arithmetic: it may exceed INT64_MAX */
	if (((__u64)v - (__u64)a->lmin) / (__u64)a->lstep >= a->lbuckets)
		return a->lbuckets;
	return (__s32)(((__u64)v - (__u64)a->lmin) / (__u64)a->lstep);
}

#endif
