/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The DWARF unwinder's state (unwind.bpf.h): its maps (the CFI rows and
 * files user space loads, the files wanted, the processes' VMAs kept, the
 * stacks keys refer to) and one walk's struct pmt_unwind, which the
 * Python frames' reader (python.bpf.h) and the VMA cache (vma.bpf.h)
 * share with it.
 */
#ifndef PMTRACE_UNWIND_STATE_BPF_H
#define PMTRACE_UNWIND_STATE_BPF_H

#include "common.bpf.h"

#define PMT_PF_KTHREAD 0x00200000 /* include/linux/sched.h */
#define PMT_VM_EXEC 0x00000004	  /* include/linux/mm.h */

/* Set by the loader: user stacks are unwound here, not by the kernel's
 * frame-pointer walk. */
const volatile bool pmt_unwind_dwarf __weak = false;

/* what the queues were given (enum pmt_queue) */
volatile __u64 pmt_queued[PMT_QUEUES] __weak = {};

/* A word for each time a queue moved: the loader sleeps on this ring
 * (a ring buffer, not a perf buffer: the walk that fills a queue runs in
 * a bpf_loop callback, which has no context to give perf output). What
 * a full ring refuses is still read: the ring polls readable. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} pmt_queue_wake SEC(".maps") __weak;

/* Something was put in queue q: user space looks at it now. */
static __always_inline void pmt_queue_moved(enum pmt_queue q)
{
	__u64 v = q;

	__sync_fetch_and_add(&pmt_queued[q], 1);
	bpf_ringbuf_output(&pmt_queue_wake, &v, sizeof(v), 0);
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* sized by the loader */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct pmt_cfi_krow);
} pmt_cfi_rows SEC(".maps") __weak;

/* Rules found, by file and offset: a CPU's memo (unwind_rows.bpf.h
 * pmt_unwind_rule), direct-mapped. */
#define PMT_RULE_MEMOS 512
_Static_assert(!(PMT_RULE_MEMOS & (PMT_RULE_MEMOS - 1)), "memos are masked");
struct pmt_rule_memo {
	__u64 ino; /* 0: empty */
	__u32 dev;
	__u32 at;
	struct pmt_cfi_rule rule;
	__u32 first; /* the file's first row: rows read again are elsewhere */
};
struct pmt_rule_memos {
	struct pmt_rule_memo m[PMT_RULE_MEMOS];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_rule_memos);
} pmt_rule_memo SEC(".maps") __weak;

/* The rules pmt_cfi_rows index, shared by every file's rows. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* sized by the loader */
	__type(key, __u32);
	__type(value, struct pmt_cfi_rule);
} pmt_cfi_rules SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pmt_cfi_file_key);
	__type(value, struct pmt_cfi_file);
} pmt_cfi_files SEC(".maps") __weak;

/* Files met without rows, with a process that maps them, so user space
 * finds the file in /proc. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct pmt_cfi_file_key);
	__type(value, struct pmt_cfi_want);
} pmt_cfi_wanted SEC(".maps") __weak;

/*
 * The VMAs the unwinder met, per process: bpf_find_vma can be called once
 * per program run where interrupts are off (its unlock waits in an
 * irq_work), so each sample learns at most one VMA and the rest come
 * from here. Executable VMAs only; reset when the process's mm changes
 * (exec).
 */
#define PMT_VMA_SLOTS 16
_Static_assert(!(PMT_VMA_SLOTS & (PMT_VMA_SLOTS - 1)), "slots are masked");
struct pmt_vma {
	__u64 start, end, off;
	struct pmt_cfi_file_key file; /* dev 0, ino 0: anonymous */
};
struct pmt_vmas {
	__u64 mm;
	__u32 n;
	__u32 next; /* slot replaced when all are used */
	__u32 jit;  /* JIT code met: told to user space (pmt_jit_new) */
	__u32 pad;
	struct pmt_vma v[PMT_VMA_SLOTS];
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_vmas);
} pmt_vma_cache SEC(".maps") __weak;

/* Processes whose stacks met JIT code (an executable mapping of no
 * file), once an mm: user space opens their perf maps while they live,
 * through /proc/PID/root with their pid in their namespace, and keeps
 * them open for names after they are gone. Sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmt_jit_new SEC(".maps") __weak;

/* An empty entry to insert from (too large for the BPF stack); never
 * written. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_vmas);
} pmt_vma_blank SEC(".maps") __weak;

/* --stack with an aggregation: the stacks keys refer to, by content
 * (bpf/record.bpf.h pmt_stack_store): owner << 32 | hash -> the frames,
 * zero-padded, the hash's check half last. Sized by the loader from
 * --max-keys (two stacks a key at most); one entry unless stacks are
 * keys. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64[PMT_STACK_DEPTH]);
} pmt_stacks SEC(".maps") __weak;

struct pmt_unwind {
	__u64 pc, sp, fp;
	__u64 bx; /* 0: not known (a frame-pointer step loses it) */
	__u64 hash;
	__u32 start; /* scratch byte offset of the first frame */
	__u32 n;     /* frames written */
	__u32 max;   /* frames allowed */
	__u32 tgid;
	__u64 mm; /* the process's address space, to tell an exec */
	/* the VMA of the last pc: [start, end) at file offset pgoff, and
	 * its file's rows (count 0: none) */
	__u64 vm_start, vm_end, vm_off;
	struct pmt_cfi_file_key file;
	__u32 first, count;
	bool vm_file;	 /* the VMA maps a file */
	bool vm_py;	 /* ... an interpreter's (pmt_py_files) */
	bool vm_asked;	 /* bpf_find_vma was called in this run */
	bool vm_exec;	 /* the VMA is executable */
	bool by_fp;	 /* pc was found by frame pointers, not CFI */
	bool vm_unknown; /* no VMA for pc: none cached, the kernel not asked (or busy) */
	bool pending;	 /* a frame lay in a file whose rows are not read yet */
	bool ended;	 /* the walk reached the outermost frame (CFI or fp says) */
	bool no_text;	 /* ... stopped at a frame-pointer caller in no text */
	bool full;	 /* ... stopped with no room left for a frame */
	bool vm_pending; /* the VMA's file has no rows yet */
	bool defer;	 /* at such a file, stop and copy the stack (streaming) */
	bool deferred;	 /* ... done: a struct pmt_ustack_dump after the frames */
	__u32 dump;	 /* its bytes */
	/* Python frames (python.bpf.h) */
	/* a native frame was written: the next is a caller. A flag, not a
	 * count: a verifier checking the callback as a loop marks what it
	 * branches on precise, and a count would tell every iteration apart */
	bool native;
	__u64 py_frame;	       /* the next one to write (_PyInterpreterFrame *) */
	struct pmt_py_file py; /* the interpreter of the eval loop frame at pc */
	bool py_started;       /* the thread's frames looked up */
	bool py_emit;	       /* writing those of the eval loop call at pc */
	bool py_done;	       /* ... written: pc's own frame next */
	bool py_missed;	       /* an eval loop met without a frame: counted */
	__u32 py_at;	       /* a dump's Python frames: their scratch offset */
	__u32 py_n;	       /* ... and how many */
};

/* A VMA a walk met whose file has rows, kept for the walk: a stack goes
 * back and forth between a program and its libraries, and each return
 * to one was a VMA, a file and an interpreter looked up again. */
#define PMT_WALK_VMAS 2
struct pmt_walk_vma {
	__u64 start, end, off;
	struct pmt_cfi_file_key file;
	__u32 first, count; /* count 0: the slot is empty */
	bool py;
};

/*
 * What a walk keeps beside struct pmt_unwind, in a map of its own (a
 * struct pmt_unwind is on the stack of the programs that learn VMAs,
 * where 6.1 counts every byte): the VMAs it met, and its copy of the
 * user stack, PMT_SNAP_BYTES from where a frame's saved words begin
 * (unwind.bpf.h pmt_frame_copy), whose callers' words are taken from
 * there, not each by a helper call of its own. Not cleared between
 * walks but for met[].count and len.
 */
#define PMT_SNAP_BYTES 512
struct pmt_stack_snap {
	struct pmt_walk_vma met[PMT_WALK_VMAS];
	__u32 met_next; /* the slot the next VMA takes */
	__u32 len;	/* bytes copied (0: none) */
	__u64 base;	/* the user address they were copied from */
	__u8 bytes[PMT_SNAP_BYTES];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_stack_snap);
} pmt_stack_snap SEC(".maps") __weak;

/* The file offset of pc's instruction: a caller's pc is past its call,
 * the call itself is looked up (u->native: a frame before it was
 * written). */
static __always_inline __u64 pmt_unwind_at(const struct pmt_unwind *u)
{
	return u->pc - u->vm_start + u->vm_off - (u->native ? 1 : 0);
}

#endif
