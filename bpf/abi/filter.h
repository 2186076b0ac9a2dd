/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_ABI_FILTER_H
#define PMT_ABI_FILTER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Filters (--filter): an expression compiled by src/filter/filter.c into a DAG of
 * comparisons. Entry i tests one operand against a constant or pattern and
 * continues at t (true) or f (false); PMT_FILTER_ACCEPT/REJECT end the walk.
 * !, && and || are edges, not instructions: evaluation short-circuits, and
 * the walk visits each entry at most once, so PMT_FILTER_MAX steps suffice.
 */
#define PMT_FILTER_MAX 32  /* comparisons per filter */
#define PMT_FILTER_PATS 4  /* string literals/globs per filter */
#define PMT_FILTER_NCLS 64 /* byte classes across its patterns */
#define PMT_PAT_MAX 63	   /* non-'*' atoms per literal/glob */
#define PMT_STR_MAX 128	   /* string bytes a filter looks at */
#define PMT_FILTER_ACCEPT 0xfe
#define PMT_FILTER_REJECT 0xff

enum pmt_filter_op {
	PMT_FOP_EQ,    /* v == val (!= by swapped targets) */
	PMT_FOP_LT,    /* v <  val (>= by swapped targets) */
	PMT_FOP_LE,    /* v <= val (>  by swapped targets) */
	PMT_FOP_BAND,  /* (v & val) != 0 */
	PMT_FOP_MATCH, /* string matches pattern pats[val] */
};

/* Where an operand comes from. Probe kinds add sources at the end. */
enum pmt_filter_src {
	PMT_FSRC_FIELD,	     /* integer in the raw record: off, size */
	PMT_FSRC_FIELD_STR,  /* char[size] in the raw record at off */
	PMT_FSRC_FIELD_DSTR, /* __data_loc (or __rel_loc) string at off */
	PMT_FSRC_PID,	     /* tgid */
	PMT_FSRC_TID,
	PMT_FSRC_CPU,
	PMT_FSRC_UID,
	PMT_FSRC_GID,
	PMT_FSRC_CGROUP, /* cgroup v2 id */
	PMT_FSRC_COMM,	 /* string */
	/* str(F): the NUL-terminated string at the address integer F holds
	 * (off, size, flags: F's, as a FIELD): user memory below the
	 * canonical split, kernel memory above it */
	PMT_FSRC_PTR_STR,
	PMT_FSRC_EXPR,	/* slot off of the probe's expressions (abi/expr.h) */
	PMT_FSRC_TASK,	/* the current task_struct's address (curtask) */
	PMT_FSRC_NSECS, /* the time now, ns since boot (an expression's nsecs) */
	/* ns since pmtrace began (bpftrace's elapsed; pmt_elapsed_origin) */
	PMT_FSRC_ELAPSED,
	/* the probe's id (a program's saved func or probe, named where
	 * printed) */
	PMT_FSRC_PROBE,
	/* the pid of the command pmtrace runs (bpftrace's cpid;
	 * pmt_cpid) */
	PMT_FSRC_CPID,
	PMT_FSRC__MAX,
	/* PMU samples need no sources of their own: the perf_event program
	 * builds a struct pmt_sample first, and ip, addr, period, value and
	 * mode are FIELD operands of that record (see src/probes/perf_event_bpf.c). */
};

#define PMT_FFLAG_SIGNED 0x01 /* operand and compare are signed */
#define PMT_FFLAG_REL 0x02    /* FIELD_DSTR is a __rel_loc */
/* FIELD of a tracepoint, naturally aligned between byte 8 (the first 8
 * are the kernel's) and PMT_CTX_DIRECT: loaded from the program's context
 * itself (the raw record), no copy and no helper call. Little-endian
 * targets only. */
#define PMT_FFLAG_CTX 0x04
/* PTR_STR: the address is the value of the probe's expression slot off
 * (str(curtask->mm->...), a char[] member), not a field's */
#define PMT_FFLAG_XADDR 0x08
/* PTR_STR: size bytes as they are, not a string (ntop()'s IPv6 address:
 * a printf's, 1 to PMT_STREAM_STR_LEN - 1 bytes) */
#define PMT_FFLAG_BYTES 0x10
#define PMT_CTX_DIRECT 128

/* A value of the event: a record field or a common one (filters, keys,
 * aggregated values, latency match keys). */
struct pmt_operand {
	__u8 src;   /* enum pmt_filter_src */
	__u8 size;  /* FIELD: 1, 2, 4, 8; FIELD_STR: bytes */
	__u8 flags; /* PMT_FFLAG_* */
	__u8 pad;
	__u16 off; /* FIELD*: offset in the record */
};

struct pmt_filter_entry {
	struct pmt_operand o;
	__u8 op;   /* enum pmt_filter_op */
	__u8 t, f; /* next entry, or ACCEPT/REJECT */
	__u8 pad;
	__u64 val; /* constant (sign-extended), or pattern index */
};

/*
 * A string literal or glob as a Shift-And automaton: state bit j means "the
 * first j non-'*' atoms matched". Per byte c of the string:
 *   D = ((D << 1) & mask[cls[c]]) | (D & star)
 * from D = 1; it matched if D & final. Bit j of mask[k] is set when atom j
 * accepts the bytes of class k; bit j of star when a '*' follows atom j.
 */
struct pmt_pattern {
	__u64 star;
	__u64 final;
	__u64 mask[PMT_FILTER_NCLS];
};

struct pmt_filter {
	__u8 n;		   /* entries used; 0 = no filter */
	__u8 start;	   /* first entry */
	__u8 needs_record; /* reads record fields */
	__u8 pad;
	/* the program computing the operands written as expressions
	 * (abi/expr.h), run first; PMT_XPROG_NONE without */
	__u16 xprog;
	__u16 pad2;
	/* the entries first: a rejecting walk touches one cache line */
	struct pmt_filter_entry e[PMT_FILTER_MAX];
	__u8 cls[256]; /* byte -> class, shared by the patterns */
	struct pmt_pattern pats[PMT_FILTER_PATS];
};

_Static_assert(sizeof(struct pmt_operand) == 6, "pmt_operand");
_Static_assert(sizeof(struct pmt_filter_entry) == 24, "pmt_filter_entry");

#endif
