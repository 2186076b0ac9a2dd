/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The in-kernel unwinder's state (a per-CPU map) and its hand-off to user
 * space: where a walk meets a file whose rows are not read yet, the
 * frame's registers and a copy of the stack (struct pmt_ustack_dump, and
 * the thread's Python frames not written yet), for src/unwind/resume.c
 * to finish the walk by the same rules.
 */
#ifndef PMTRACE_UNWIND_DUMP_BPF_H
#define PMTRACE_UNWIND_DUMP_BPF_H

#include "unwind_state.bpf.h"
#include "python.bpf.h"

/*
 * The walk's state lives in a per-CPU map, not on the stack: a verifier
 * that checks a callback as a loop (6.8 on) then meets the same state at
 * every iteration (what a map holds is not known to it) and checks the
 * body once, not once per frame (600 ms and half the instruction limit
 * for the perf_event program on 6.18 before).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_unwind);
} pmt_unwind_state SEC(".maps") __weak;

/* A new walk: no copy yet, no VMA met. */
static __always_inline void pmt_snap_clear(void)
{
	__u32 zero = 0, k;
	struct pmt_stack_snap *s = bpf_map_lookup_elem(&pmt_stack_snap, &zero);

	if (!s)
		return;
	s->len = 0;
#pragma unroll
	for (k = 0; k < PMT_WALK_VMAS; k++)
		s->met[k].count = 0;
}

/* Copy the stack at addr: PMT_SNAP_BYTES, or to the end of addr's page
 * where the stack may end sooner (a read that faults reads nothing). */
static __always_inline void pmt_snap_take(struct pmt_stack_snap *s, __u64 addr)
{
	__u32 n;

	s->base = addr;
	s->len = 0;
	if (!bpf_probe_read_user(s->bytes, PMT_SNAP_BYTES, (void *)addr)) {
		s->len = PMT_SNAP_BYTES;
		return;
	}
	n = 4096 - (addr & 4095);
	if (n >= 8 && n < PMT_SNAP_BYTES && !bpf_probe_read_user(s->bytes, n, (void *)addr))
		s->len = n;
}

/* The word at addr from the copy: false if it is not in it. */
static __always_inline bool pmt_snap_word(const struct pmt_stack_snap *s, __u64 addr, __u64 *v)
{
	__u64 k;

	if (addr < s->base || addr + 8 > s->base + s->len)
		return false;
	k = addr - s->base;
	if (k > PMT_SNAP_BYTES - 8)
		return false;
	*v = *(const __u64 *)(s->bytes + k);
	return true;
}

/*
 * Stop at frame i, whose file has no rows yet, and leave user space what
 * it needs to go on once it has them (struct pmt_ustack_dump): the frame's
 * registers and the stack from its sp, right after the frames written.
 * PMT_DUMP_BYTES of stack, else up to the end of sp's page or the next
 * (the stack's top may come sooner; a read that faults reads nothing).
 */
static __always_inline long pmt_unwind_defer(struct pmt_unwind *u, __u32 i)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 at, n = PMT_DUMP_BYTES, sp = u->sp, top;
	struct pmt_ustack_dump *d;
	struct pmt_event *e;
	__u32 zero = 0;

	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	at = (__u64)u->start + (__u64)i * 8;
	asm volatile("" : "+r"(at));
	if (!e || at > PMT_DATA_ROOM - PMT_DUMP_ROOM)
		return 1;
	d = (struct pmt_ustack_dump *)(e->data + at);
	/* the main thread's stack ends where exec started it (_start's
	 * frame, argc): no more of it is copied (a short program's stack
	 * is a few hundred bytes, and a ring holds that many more) */
	top = BPF_CORE_READ(task, mm, start_stack) + 64;
	if (top > sp && top - sp < PMT_DUMP_BYTES) {
		n = (top - sp) & (PMT_DUMP_BYTES - 1);
		if (!bpf_probe_read_user(d + 1, n, (void *)sp))
			goto read;
		n = PMT_DUMP_BYTES;
	}
	if (bpf_probe_read_user(d + 1, PMT_DUMP_BYTES, (void *)sp)) {
		n = 2 * 4096 - (sp & 4095);
		if (bpf_probe_read_user(d + 1, n, (void *)sp)) {
			n -= 4096;
			if (bpf_probe_read_user(d + 1, n, (void *)sp))
				n = 0;
		}
	}
read:
	d->pc = u->pc;
	d->sp = sp;
	d->fp = u->fp;
	d->bx = u->bx;
	d->size = (__u32)n;
	d->caller = u->native;
	d->npy = 0;
	d->pad[0] = d->pad[1] = 0;
	u->deferred = true;
	u->dump = (__u32)(sizeof(*d) + n);
	return 1;
}

/* Is the walk left to user space here (u->defer), which knows what it
 * lacks? Text whose rows are not read yet, or a caller found by CFI whose
 * mapping this run cannot learn (one lookup a run: a process's first
 * stacks meet several). */
static __always_inline bool pmt_unwind_deferred_here(const struct pmt_unwind *u)
{
	return u->defer && ((u->vm_pending && u->vm_exec) || (u->vm_unknown && !u->by_fp));
}

/*
 * After a walk stopped at a file without rows (u->deferred): the thread's
 * Python frames it had not written yet, after the dump's stack bytes
 * (struct pmt_ustack_dump.npy), for user space to put among the frames it
 * finishes. Their interpreter: the one whose eval loop the walk met,
 * else the process's executable if it is one (pmt_py_files, by the
 * file's key).
 */
static long pmt_py_dump_step(__u32 i, void *data)
{
	struct pmt_unwind *u;
	struct pmt_event *e;
	__u32 zero = 0;
	__u64 at, v;

	(void)data;
	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	if (!u || !e || !u->py_frame)
		return 1;
	at = (__u64)u->py_at + (__u64)i * 8;
	asm volatile("" : "+r"(at));
	if (at > PMT_DATA_ROOM - 8)
		return 1;
	v = pmt_py_frame(u);
	if (!v)
		return 1;
	/* a call of the eval loop ends at its entry frame */
	*(__u64 *)(e->data + at) = u->py_emit ? v : v | PMT_PY_ENTRY;
	u->py_n = i + 1;
	return 0;
}

static __always_inline void pmt_py_dump(struct pmt_unwind *u, struct task_struct *task)
{
	struct pmt_cfi_file_key key = {};
	struct pmt_ustack_dump *d;
	struct pmt_py_file *pf;
	struct pmt_event *e;
	__u32 zero = 0;
	__u64 at, size;

	if (!pmt_python)
		return;
	if (!u->py_started) {
		key.dev = BPF_CORE_READ(task, mm, exe_file, f_inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino);
		pf = bpf_map_lookup_elem(&pmt_py_files, &key);
		if (!pf)
			return;
		u->py = *pf;
		pmt_py_begin(u, pf, BPF_CORE_READ(task, mm, start_code) + pf->runtime_code);
	}
	size = u->dump - sizeof(*d);
	if (!u->py_frame || u->dump < sizeof(*d) || size > PMT_DUMP_BYTES)
		return;
	at = (__u64)u->start + (__u64)u->n * 8;
	u->py_at = (__u32)(at + PMT_DUMP_PY_AT(size));
	u->py_n = 0;
	bpf_loop(PMT_PY_DUMP, pmt_py_dump_step, NULL, 0);
	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	asm volatile("" : "+r"(at));
	if (!u->py_n || !e || at > PMT_DATA_ROOM - sizeof(*d))
		return;
	d = (struct pmt_ustack_dump *)(e->data + at);
	d->npy = (__u8)u->py_n;
	u->dump = (__u32)PMT_DUMP_LEN(size, u->py_n);
}

/* The bytes of the dump the last pmt_unwind_user left after its frames
 * (0: none). */
static __always_inline __u32 pmt_unwind_dumped(void)
{
	struct pmt_unwind *u;
	__u32 zero = 0, n;

	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	n = u && u->deferred ? u->dump : 0;
	return n <= PMT_DUMP_ROOM ? n : 0;
}

#endif /* PMTRACE_UNWIND_DUMP_BPF_H */
