/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What reaches user space through the perf rings (pmt_events): a header,
 * then the tracepoint's raw record or a record a program builds (a PMU
 * sample, a call, a USDT probe's arguments), then its stack's frames.
 */
#ifndef PMT_ABI_RECORD_H
#define PMT_ABI_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/counter.h"

#define PMT_COMM_LEN 16
/* Largest raw record copied out (perf's own limit is 8 KiB). */
#define PMT_MAX_DATA 8192
/* __data_loc/__rel_loc fields of one tracepoint the BPF side follows. */
#define PMT_MAX_DYN 8

#define PMT_STACK_DEPTH 127 /* frames per stack (the kernel's default max) */
/* A stack's hash, one frame at a time from PMT_STACK_HASH_SEED: every bit
 * of a frame reaches the low half (a stack's key; FNV's multiply alone
 * leaves the low 32 bits blind to the high ones, where a Python frame
 * keeps its line). The kernel hashes the stacks it unwinds, user space
 * those it finishes (src/aggregate/maps_bpf.c): one stack, one key. */
#define PMT_STACK_HASH_SEED 0xcbf29ce484222325ULL
static inline __attribute__((always_inline)) __u64 pmt_hash_word(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 32;
}

/* A stored stack (aggregation keys) keeps one frame less: its last slot
 * holds its 64-bit hash (bpf/record.bpf.h pmt_stack_store). */
#define PMT_STACK_KEPT (PMT_STACK_DEPTH - 1)
/* The slots of its owner's key space a stack may take in the kernel's
 * table: the first that is free or holds it. */
#define PMT_STACK_PROBES 4
/* The owner half of a kernel stack's key (no tgid is this large) */
#define PMT_KSTACK_OWNER 0x7fffffffU

enum pmt_mode_val { PMT_MODE_KERNEL, PMT_MODE_USER };

/*
 * The tail of every record a program builds itself (PMU samples, calls):
 * stack ids when aggregating, or frame counts when streaming, and then
 * nkernel + nuser frames right after the record (kernel first, innermost
 * first).
 */
struct pmt_stack_rec {
	__s64 kstack; /* aggregation: PMT_KSTACK_OWNER << 32 | hash, or < 0 */
	__u64 ustack; /* aggregation: tgid << 32 | hash (0xffffffff: none) */
	__u16 nkernel, nuser;
	__u32 pad;
};

struct pmt_sample {
	__u64 ip;
	__u64 addr;   /* data address, where the event has one */
	__u64 period; /* events this sample stands for */
	__u64 value;  /* the counter (bpf_perf_prog_read_value) */
	__u8 mode;    /* enum pmt_mode_val */
	__u8 pad[7];
	struct pmt_stack_rec st;
};

/*
 * A function call or return (kprobe, kretprobe, fentry, fexit, uprobe,
 * uretprobe) or a typed raw tracepoint's call (tp_btf): the argument slots and the return value, as the program's
 * context has them. Fields are named by src/probes/callrec_bpf.c: arg0..arg5, retval,
 * and with fentry the parameters' names from BTF.
 */
#define PMT_CALL_SLOTS 12 /* argument registers/slots kept */
#define PMT_FN_SLOTS 8	  /* fentry (and as many fexit) programs, a power of 2 */
#define PMT_RT_SLOTS 8	  /* tp_btf programs (typed raw tracepoints), a power of 2 */

struct pmt_call {
	__u64 arg[PMT_CALL_SLOTS];
	__u64 ret;
	struct pmt_stack_rec st;
};

/* A USDT probe's record (bpf/usdt.bpf.c): its arguments as libbpf's
 * bpf_usdt_arg() reads them (sign- or zero-extended to 64 bits, as the
 * note's spec says). */
struct pmt_usdt {
	__u64 arg[PMT_CALL_SLOTS];
	struct pmt_stack_rec st;
};

/* --str F[,G]: the strings streamed with each record of the session,
 * read at the addresses the probe's fields hold (struct
 * pmt_probe_cfg.strs); sent before the header and --counter's counts,
 * a slot each, NUL-terminated. */
#define PMT_STREAM_STRS 4
#define PMT_STREAM_STR_LEN 128
/* --printf: the numbers streamed with each record of the session, each
 * the value of an operand of the probe's (struct pmt_probe_cfg.vals);
 * sent before the strings, a u64 a slot. */
#define PMT_STREAM_VALS 16

/*
 * A streamed user stack the kernel could not finish (a file whose unwind
 * tables user space had not read yet: a library opened by dlopen, a
 * process started after pmtrace), as perf's DWARF mode sends every one:
 * the registers of the first frame not written and the stack's bytes from
 * its sp, at most PMT_DUMP_BYTES (perf's default). User space goes on
 * from there (src/unwind/resume.c) once it has the tables. Sent after the
 * frames (struct pmt_event_hdr.dump).
 */
#define PMT_DUMP_BYTES 8192
struct pmt_ustack_dump {
	__u64 pc, sp, fp, bx;
	__u32 size;  /* stack bytes that follow, from sp */
	__u8 caller; /* pc is a return address: its frame is pc - 1 */
	/* the thread's Python frames the walk had not written yet (those
	 * of the eval loop calls among the frames to come), innermost
	 * first, after the stack bytes from the next 8-byte boundary (of
	 * the dump's start): PMT_PY_FRAME values, PMT_PY_ENTRY set on the
	 * last one of each eval loop call. The thread's, read at the event:
	 * they are gone by the time user space has the tables. */
	__u8 npy;
	__u8 pad[2];
};
#define PMT_PY_DUMP 64 /* Python frames a dump holds at most */
#define PMT_DUMP_ROOM (sizeof(struct pmt_ustack_dump) + PMT_DUMP_BYTES + 8 + PMT_PY_DUMP * 8)
/* Where a dump of size bytes of stack has its Python frames (from the
 * dump's start), and its bytes with npy of them. */
#define PMT_DUMP_PY_AT(size) ((sizeof(struct pmt_ustack_dump) + (size) + 7) & ~7ULL)
#define PMT_DUMP_LEN(size, npy) \
	((npy) ? PMT_DUMP_PY_AT(size) + (npy)*8ULL : sizeof(struct pmt_ustack_dump) + (size))

/* The scratch record's room: PMT_MAX_DATA of record, then (tracepoints)
 * a struct pmt_stack_rec at PMT_TP_STACK (its aggregation keys) and room
 * for a kernel and a user stack (2 * PMT_STACK_DEPTH frames) after the
 * record, whatever its size, and a user stack's dump after them. */
#define PMT_TP_STACK PMT_MAX_DATA
#define PMT_DATA_ROOM \
	(PMT_MAX_DATA + sizeof(struct pmt_stack_rec) + 2 * PMT_STACK_DEPTH * 8 + PMT_DUMP_ROOM)

struct pmt_event_hdr {
	__u64 ts;  /* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 probe_id;
	__u32 size; /* bytes of data[] that follow, frames not counted */
	char comm[PMT_COMM_LEN];
	/* tracepoints' --stack: the frames after the record (kernel first,
	 * innermost first); records a program builds count theirs in their
	 * struct pmt_stack_rec and size */
	__u16 nkernel, nuser;
	/* bytes of a struct pmt_ustack_dump and its stack after the frames
	 * (0: the user stack, if any, is whole) */
	__u32 dump;
};

/* join(E) in a printf: the strings of the NULL-ended array of pointers E
 * (argv), read in the kernel as bpftrace's join() reads them (16 at most;
 * 511 bytes each, where bpftrace reads 1023: 16 of those would take the
 * per-CPU scratch record past the 32 KiB a per-CPU map value may have),
 * sent between --printf's numbers and --str's strings. */
#define PMT_JOIN_ARGS 16
#define PMT_JOIN_ARG_LEN 512
struct pmt_join_rec {
	__u32 n;     /* strings read */
	__u32 fault; /* non-zero: a read faulted (the strings before it kept) */
	char arg[PMT_JOIN_ARGS][PMT_JOIN_ARG_LEN];
};

struct pmt_event {
	/* join(E): room for its strings, sent between the numbers and the
	 * strings below (where a load-time constant says there is one) */
	struct pmt_join_rec join;
	/* --printf: the numbers, sent before the strings (the last n slots
	 * before them, n a load-time constant) */
	__u64 vals[PMT_STREAM_VALS];
	/* --str: the strings, sent before the counts (the last n slots
	 * before them, n a load-time constant) */
	char strs[PMT_STREAM_STRS][PMT_STREAM_STR_LEN];
	/* --counter on streamed probes: the thread's counts, sent right
	 * before the header (the last n of these, n a load-time constant) */
	struct pmt_counter_rec counts[PMT_COUNTERS];
	struct pmt_event_hdr hdr;
	__u8 data[PMT_DATA_ROOM];
};

_Static_assert(sizeof(struct pmt_event_hdr) == 48, "the header the reader parses");
_Static_assert(sizeof(struct pmt_join_rec) % 8 == 0, "join's strings keep what follows aligned");
_Static_assert(sizeof(struct pmt_stack_rec) == 24, "a built record's tail");
_Static_assert(sizeof(struct pmt_ustack_dump) == 40, "a user stack's dump");
_Static_assert(sizeof(struct pmt_sample) == 40 + sizeof(struct pmt_stack_rec), "pmt_sample");
_Static_assert(sizeof(struct pmt_call) == (PMT_CALL_SLOTS + 1) * 8 + sizeof(struct pmt_stack_rec),
	       "pmt_call");
_Static_assert(sizeof(struct pmt_usdt) == PMT_CALL_SLOTS * 8 + sizeof(struct pmt_stack_rec),
	       "pmt_usdt");

#endif
