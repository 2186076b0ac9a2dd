/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_ABI_AGGREGATE_H
#define PMT_ABI_AGGREGATE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/filter.h"
#include "abi/counter.h"
#include "abi/expr.h"

/*
 * Aggregation (--count/--sum/--hist/... --by KEYS, --latency): updated in
 * the kernel, read by the loader. One per-CPU hash entry per (keys, bucket).
 */
#define PMT_AGG_KEYS 4	/* --by parts */
#define PMT_KEY_MAX 128 /* bytes of key data */
/* a program's maps share the hash: which one a key is in, pad >> this */
#define PMT_AGG_MAP_SHIFT 1
#define PMT_AGG_MAPS 16 /* maps a program updates, at most */
#define PMT_KEY_STR 32	/* bytes a record's string key keeps */
/* A str() key part whose read failed: byte 0 is NUL (an empty string's
 * too), byte 1 is this */
#define PMT_KEY_FAULT 0x01

enum pmt_action {
	PMT_ACT_STREAM,	   /* copy the record to the perf ring */
	PMT_ACT_AGG,	   /* update pmt_agg */
	PMT_ACT_LAT_START, /* remember when, by match key */
	PMT_ACT_LAT_END,   /* aggregate now - start */
	PMT_ACT_NONE,	   /* its statements alone (struct pmt_probe_cfg's sprog) */
};

enum pmt_agg_kind {
	PMT_AGG_COUNT, /* bucket 0: count only */
	PMT_AGG_VALUE, /* bucket 0: count, sum, min, max of value */
	PMT_AGG_HIST,  /* bucket: log2 of value (see pmt_log2_bucket) */
	PMT_AGG_LHIST, /* bucket: linear */
};

enum pmt_key_kind {
	PMT_KEY_NUM,	 /* 8 bytes */
	PMT_KEY_STRING,	 /* PMT_KEY_STR bytes, NUL padded */
	PMT_KEY_PROBE,	 /* 4 bytes: probe id */
	PMT_KEY_COUNTER, /* which --counter (several: one update each) */
	PMT_KEY_ADDR6,	 /* 16 bytes of the record (an IPv6 address) */
};

enum pmt_scale { PMT_SCALE_NONE, PMT_SCALE_MUL, PMT_SCALE_DIV };

struct pmt_key_part {
	struct pmt_operand o;
	__u8 kind; /* enum pmt_key_kind */
	__u8 at;   /* offset in pmt_agg_key.data */
	__u8 len;  /* bytes: 8 for numbers, up to PMT_KEY_STR */
	__u8 pad;
};

struct pmt_agg_cfg {
	__u8 kind; /* enum pmt_agg_kind */
	__u8 nkeys;
	__u8 scale;		  /* enum pmt_scale, applied to the value */
	__u8 needs_record;	  /* keys or value read record fields */
	__u32 lat_id;		  /* --latency pair this probe belongs to */
	struct pmt_operand value; /* unused for COUNT and latency */
	struct pmt_operand match; /* latency: start/end match key; AGG: the guard */
	/* the probe's expressions, one program run once an event (index in
	 * pmt_exprs), or PMT_XPROG_NONE (abi/expr.h) */
	__u16 xprog;
	/* AGG: updated only where match is non-zero (a program's update
	 * inside an if) */
	__u8 guarded;
	/* which of a program's maps it updates: in the key's pad, above the
	 * half's bit (0: the only one, or the first) */
	__u8 map;
	__u64 k;	   /* scale constant */
	__s64 lmin, lstep; /* LHIST */
	__u32 lbuckets;	   /* LHIST: buckets between min and max */
	__u32 lat_div;	   /* latency: ns per unit */
	struct pmt_key_part keys[PMT_AGG_KEYS];
};

/* The map's key_size is 8 + the bytes --by uses (set at load): the hash
 * is computed over the whole key, so a short key is a cheap update. */
struct pmt_agg_key {
	__s32 bucket; /* HIST/LHIST; -1 below range */
	/* in the kernel's hash: the half it is in (bit 0: pmt_agg_gen), and
	 * the map (pmt_agg_cfg's, above it: PMT_AGG_MAP_SHIFT) */
	__u32 pad;
	__u8 data[PMT_KEY_MAX];
};

struct pmt_agg_val {
	__u64 count;
	__s64 sum, min, max;
};

/*
 * An update whose user stack the kernel left unfinished (a file whose
 * unwind tables user space had not read yet; abi/record.h, struct
 * pmt_ustack_dump): sent through pmt_events under this probe id, this,
 * then its nuser frames and the dump. User space finishes the stack,
 * keeps it as the kernel keeps stacks, sets the key's user stack part to
 * it and adds value to its totals (src/aggregate/maps_bpf.c).
 */
#define PMT_PROBE_AGG_DEFERRED 0xfffffffeU
#define PMT_USTACK_DEFERRED 0xfffffffeU /* the user stack part's low half */
struct pmt_agg_deferred {
	struct pmt_agg_key key; /* bucket set, pad 0 */
	__s64 value;
	__u32 probe_id;
	__u16 nuser;
	__u16 pad;
	__u32 dump; /* bytes of the dump after the frames */
	__u32 pad2;
};

/*
 * A small per-CPU write-back cache in front of the hash (pmt_agg_cache):
 * consecutive events on a CPU mostly share their keys (the same task, the
 * same syscall), and a hit costs a few compares instead of hashing. A slot
 * holds this CPU's whole value for its key (loaded from the hash when the
 * key came in, written back when it leaves), so every cached key has its
 * hash entry. base is the count and sum it was loaded with: while the
 * hash still holds base for this CPU the slot is the newer value (a reader
 * takes the slot's); otherwise it was written back meanwhile (the hash's
 * is right). Each half of the hash (pmt_agg_gen) has its own caches: a
 * drain reads the old half's slots with its keys, and clears them before
 * that half's next turn (src/aggregate/entries.c, src/aggregate/maps_bpf.c). A
 * slot whose entry is gone all the same adds only what it gained since
 * loading to a new one, so nothing counts twice.
 */
#define PMT_AGG_CACHE 16 /* slots per CPU: direct-mapped */
#define PMT_AGG_KEY_WORDS (sizeof(struct pmt_agg_key) / 8)
/* the slot of a key whose 8-byte words add up to sum */
#define PMT_AGG_CSLOT(sum) ((__u32)(((__u64)(sum)*0x9E3779B97F4A7C15ULL) >> 60))

struct pmt_agg_cslot {
	struct pmt_agg_key key;
	struct pmt_agg_val val; /* count 0: empty */
	__u64 base_count;	/* the hash's value when loaded */
	__s64 base_sum;
};

/* pmt_agg_busy: programs inside an update of the hash, one CPU's */
struct pmt_agg_busy {
	__u32 n;
	__u32 pad[15]; /* a cache line a CPU */
};

struct pmt_agg_cache {
	struct pmt_agg_cslot slot[PMT_AGG_CACHE];
};

struct pmt_lat_key {
	__u64 match;
	__u32 lat_id;
	__u32 pad;
};

/*
 * A started --latency measurement. With --counter, the thread's own count
 * of the event since START: the counters are per CPU (pmt_counters), so at
 * each context switch of a thread with a measurement under way its share
 * is taken (bpf/count.bpf.c): acc += now - last when it leaves a CPU, last
 * = now when it arrives on one. END adds what it counted since last. A
 * call that blocks, is preempted or migrates gets exactly the events that
 * happened on CPU while its thread ran, the switches' own included. A
 * thread found running while away (no sched_switch told its arrival:
 * the 6.18 kernel of the machines here runs a woken thread now and then
 * without one) counts from where it was found (PMT_STAT_COUNTER_UNSEEN).
 */
struct pmt_lat_val {
	__u64 start;		  /* ns */
	__u64 acc[PMT_COUNTERS];  /* --counter: counted on the CPUs left since START */
	__u64 last[PMT_COUNTERS]; /* --counter: the running CPU's count when it got it */
	__u64 away;		  /* --counter: 1 from a switch off a CPU to the next arrival */
};

_Static_assert(sizeof(struct pmt_agg_key) == 8 + PMT_KEY_MAX, "the hash's key, read by the drain");
_Static_assert(sizeof(struct pmt_agg_val) == 32, "the hash's value, read by the drain");
_Static_assert(sizeof(struct pmt_agg_cslot) == sizeof(struct pmt_agg_key) + 48,
	       "a cache slot, read by the drain");
_Static_assert(sizeof(struct pmt_agg_busy) == 64, "pmt_agg_busy: a cache line a CPU");
_Static_assert(PMT_AGG_KEY_WORDS * 8 == sizeof(struct pmt_agg_key), "whole words");
/* written by user space into each probe's settings: packed, 2-aligned
 * operands, the 64-bit fields at 8-byte offsets */
_Static_assert(sizeof(struct pmt_key_part) == sizeof(struct pmt_operand) + 4, "pmt_key_part");
_Static_assert(__builtin_offsetof(struct pmt_agg_cfg, k) == 24 &&
		       __builtin_offsetof(struct pmt_agg_cfg, keys) == 56,
	       "pmt_agg_cfg's fields");
_Static_assert(sizeof(struct pmt_agg_cfg) == 56 + PMT_AGG_KEYS * sizeof(struct pmt_key_part),
	       "pmt_agg_cfg: as user space writes it");
_Static_assert(sizeof(struct pmt_lat_key) == 16, "pmt_lat_key");
_Static_assert(sizeof(struct pmt_agg_deferred) == sizeof(struct pmt_agg_key) + 24,
	       "pmt_agg_deferred");

#endif
