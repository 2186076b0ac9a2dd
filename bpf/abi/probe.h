/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A probe's settings (pmt_probes[attach cookie]): what its record holds,
 * its filter and what is done with each event; and a session's bounds.
 */
#ifndef PMT_ABI_PROBE_H
#define PMT_ABI_PROBE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/record.h"
#include "abi/filter.h"
#include "abi/aggregate.h"

/* Probes (attach points) one session may hold. */
#define PMT_MAX_PROBES 16384
/* Times one tracepoint may be given (copies of its program). */
#define PMT_TP_INSTANCES 4
/* syscalls:* tracepoints served through raw_syscalls (bpf/tracepoint.bpf.c):
 * call numbers below PMT_SYS_NRS; attach cookie 0 on sys_enter, 1 on exit */
#define PMT_SYS_NRS 1024
#define PMT_SYS_ENTER 0
#define PMT_SYS_EXIT 1
/* CPUs the -C mask can name. */
#define PMT_MAX_CPUS 1024

/* Values of the target map (pid filter). */
enum pmt_target_state {
	PMT_TARGET_PENDING = 1, /* command forked, not yet exec'd: not traced */
	PMT_TARGET_ACTIVE = 2,	/* traced */
};

/* pmt_probe_cfg.stack */
#define PMT_STACK_KERNEL 0x01
#define PMT_STACK_USER 0x02

/* dyn[] entry flags */
#define PMT_DYN_REL 0x8000 /* __rel_loc: offset relative to field end */
#define PMT_DYN_OFF(x) ((x)&0x7fff)

struct pmt_probe_cfg {
	__u32 fixed_size;  /* bytes of the record up to its last fixed field */
	__u16 n_dyn;	   /* used entries of dyn[] */
	__u16 common_type; /* the tracepoint's type, written into streamed records */
	/* offset of each 4-byte __data_loc/__rel_loc word (PMT_DYN_REL set
	 * for __rel_loc); the dynamic data ends at the largest off+len. */
	__u16 dyn[PMT_MAX_DYN];
	__u8 action;	 /* enum pmt_action */
	__u8 stack;	 /* PMT_STACK_*: perf events */
	__u8 want_value; /* perf events: read the counter (a helper call) */
	/* every event, whatever the target, --cgroup and -C (a program's
	 * interval, a clock on one CPU: bpftrace's fires whatever runs) */
	__u8 any_task;
	/* --str: where each streamed string is (PMT_FSRC_PTR_STR), or 0;
	 * --printf: the numbers streamed (a probe's unused ones: any); the program
	 * computing both where they are written as expressions */
	struct pmt_operand strs[PMT_STREAM_STRS];
	struct pmt_operand vals[PMT_STREAM_VALS];
	__u16 str_xprog;
	/* a program's block's statements (saving values, forgetting them):
	 * run once the event passed the filter, after what the block reads */
	__u16 sprog;
	/* 1 + which vals[] decides whether the record is streamed (a
	 * program's printf inside an if: non-zero), or 0 */
	__u8 print_guard;
	/* 1 + which vals[] holds the address of the array join() reads (a
	 * program's join(args->argv)), or 0 */
	__u8 join_slot;
	/* 1 + the entry of pmt_probes holding the next map update of the
	 * same block (a program's block updating several maps: its agg, not
	 * attached anywhere), or 0 */
	__u16 next_agg;
	/* 1: the probe's expression programs (agg.xprog, sprog) run as the
	 * BPF program user space generated from them (abi/xgen.h), at its
	 * index of pmt_xgen_tp */
	__u8 xgen;
	__u8 pad[3];
	struct pmt_filter filter; /* header and first entries: lines 0-2 */
	struct pmt_agg_cfg agg;
};

_Static_assert(sizeof(struct pmt_filter) % 8 == 0, "pmt_filter");
/* written by user space into pmt_probes, read by every program: 160 bytes
 * of settings before the filter, nothing padded */
_Static_assert(__builtin_offsetof(struct pmt_probe_cfg, filter) == 160, "pmt_probe_cfg's header");
_Static_assert(sizeof(struct pmt_probe_cfg) ==
		       160 + sizeof(struct pmt_filter) + sizeof(struct pmt_agg_cfg),
	       "pmt_probe_cfg: as user space writes it");

#endif
