/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The VMA holding a pc, for the DWARF unwinder (unwind.bpf.h): each
 * process's text mappings kept in pmt_vma_cache (learned at exec and mmap
 * by unwind.bpf.c, or by a sample that meets one), bpf_find_vma where
 * none is kept.
 */
#ifndef PMTRACE_VMA_BPF_H
#define PMTRACE_VMA_BPF_H

#include "unwind_state.bpf.h"

/* What bpf_find_vma says of a VMA: in a per-CPU map, not on the stack
 * (6.1 allows 512 bytes of stack for a program and the callbacks it is
 * in, and the unwinder's is one). Slot 0 is the unwinder's, slot 1 that
 * of the programs that learn mappings (which a sample may interrupt). */
struct pmt_vma_found {
	__u64 start, end, off;
	struct pmt_cfi_file_key file;
	bool is_file, exec;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct pmt_vma_found);
} pmt_vma_found SEC(".maps") __weak;

static long pmt_unwind_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct pmt_vma_found *v = bpf_map_lookup_elem(&pmt_vma_found, data);
	struct file *f = vma->vm_file;

	(void)task;
	if (!v)
		return 0;
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->off = vma->vm_pgoff << 12;
	v->is_file = f != NULL;
	v->exec = vma->vm_flags & PMT_VM_EXEC;
	v->file.dev = f ? BPF_CORE_READ(f, f_inode, i_sb, s_dev) : 0;
	v->file.ino = f ? BPF_CORE_READ(f, f_inode, i_ino) : 0;
	/* the vDSO: rows as a file's (clock_gettime is in it) */
	if (!f && vma->vm_start == (__u64)BPF_CORE_READ(vma, vm_mm, context.vdso)) {
		v->is_file = true;
		v->file.ino = PMT_VDSO_INO;
	}
	return 0;
}

/* The VMA holding addr in the current task, into u->vm_*; slot: as
 * above. *busy: the kernel could not look (its mmap_lock, or the
 * irq_work that releases it, taken: another program's lookup on this
 * CPU a moment before, as a second tracer's on the same event). */
static __always_inline bool pmt_unwind_find_vma(struct pmt_unwind *u, struct task_struct *task,
						__u64 addr, __u32 slot, bool *busy)
{
	struct pmt_vma_found *v;
	long err;

	err = bpf_find_vma(task, addr, pmt_unwind_vma, &slot, 0);
	*busy = err == -16 /* EBUSY */;
	if (err)
		return false;
	v = bpf_map_lookup_elem(&pmt_vma_found, &slot);
	if (!v)
		return false;
	u->vm_start = v->start;
	u->vm_end = v->end;
	u->vm_off = v->off;
	u->vm_file = v->is_file;
	u->vm_exec = v->exec;
	u->file = v->file;
	return true;
}

/* The process's cache, emptied if the process exec'd since (another mm:
 * its VMAs are others); NULL if it has none. */
static __always_inline struct pmt_vmas *pmt_vmas_of(struct pmt_unwind *u)
{
	struct pmt_vmas *c = bpf_map_lookup_elem(&pmt_vma_cache, &u->tgid);

	if (c && c->mm != u->mm) {
		c->mm = u->mm;
		c->n = 0;
		c->next = 0;
		c->jit = 0;
	}
	return c;
}

/* u->pc lies in JIT code: its process told to user space, once an mm
 * where the process has a cache (else at each such VMA met, which user
 * space takes off the map as it reads it). */
static __always_inline void pmt_jit_met(struct pmt_unwind *u)
{
	struct pmt_vmas *c = pmt_vmas_of(u);
	__u32 one = 1;

	if (c) {
		if (c->jit)
			return;
		c->jit = 1;
	}
	if (!bpf_map_update_elem(&pmt_jit_new, &u->tgid, &one, BPF_NOEXIST))
		pmt_queue_moved(PMT_QUEUE_JIT);
}

/* The first VMA kept for process tgid that [start, end) overlaps, into
 * at (left as it is when none does): a bpf_loop callback, checked once,
 * where a loop was checked once a slot (three quarters of the learning
 * programs' instructions to verify). */
struct pmt_vma_scan {
	__u64 start, end;
	__u32 tgid, at;
};

static long pmt_vma_scan_step(__u32 i, void *data)
{
	struct pmt_vma_scan *s = data;
	struct pmt_vmas *c = bpf_map_lookup_elem(&pmt_vma_cache, &s->tgid);
	struct pmt_vma *v;
	__u64 k = i;

	/* bounded in the register the access uses */
	asm volatile("" : "+r"(k));
	if (!c || k >= c->n || k >= PMT_VMA_SLOTS)
		return 1;
	v = &c->v[k];
	if (v->start < s->end && s->start < v->end) {
		s->at = i;
		return 1;
	}
	return 0;
}

/* Keep the VMA bpf_find_vma gave (u->vm_*) in the process's cache c (NULL:
 * none yet). scan: a kept VMA it overlaps is replaced (a constant of the
 * caller's). The programs that learn mappings as they are made scan;
 * the unwinder need not: it keeps only a VMA no kept one holds pc of,
 * and a mapping made over a kept one since pmtrace started was learned,
 * and replaced it, when it was made (a scan there was 2,400 of the
 * perf_event program's instructions to verify). */
static __always_inline void pmt_vma_keep(struct pmt_unwind *u, struct pmt_vmas *c, const bool scan)
{
	__u32 slot, i;

	if (!u->vm_file)
		u->file.dev = 0, u->file.ino = 0;
	/* only text is kept: a loader maps a library's span first and its
	 * segments over it, a VMA seen then would go stale */
	if (!u->vm_exec)
		return;
	if (!c) {
		__u32 zero = 0;
		struct pmt_vmas *blank = bpf_map_lookup_elem(&pmt_vma_blank, &zero);

		if (!blank)
			return;
		bpf_map_update_elem(&pmt_vma_cache, &u->tgid, blank, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&pmt_vma_cache, &u->tgid);
		if (!c)
			return;
		c->mm = u->mm;
	}
	/* a mapping over one kept (the address reused) takes its slot;
	 * else the next free one, or the oldest */
	i = c->n;
	if (scan) {
		struct pmt_vma_scan sc = {
			.start = u->vm_start, .end = u->vm_end, .tgid = u->tgid, .at = c->n};

		bpf_loop(PMT_VMA_SLOTS, pmt_vma_scan_step, &sc, 0);
		i = sc.at;
	}
	slot = i < c->n ? i : c->n < PMT_VMA_SLOTS ? c->n : c->next;
	/* below PMT_VMA_SLOTS (a power of two) already: the mask is for
	 * verifiers that lose the bound across the choice (6.1) */
	slot &= PMT_VMA_SLOTS - 1;
	c->v[slot].start = u->vm_start;
	c->v[slot].end = u->vm_end;
	c->v[slot].off = u->vm_off;
	c->v[slot].file = u->file;
	if (i < c->n)
		return;
	if (c->n < PMT_VMA_SLOTS)
		c->n++;
	else
		c->next = (c->next + 1) % PMT_VMA_SLOTS;
}

/* The VMA holding u->pc: from the process's cache, else (once per run)
 * from the kernel, then cached. */
static __always_inline bool pmt_unwind_vma_of(struct pmt_unwind *u)
{
	struct pmt_vmas *c = pmt_vmas_of(u);
	__u32 i;

	if (c) {
		for (i = 0; i < PMT_VMA_SLOTS && i < c->n; i++) {
			struct pmt_vma *v = &c->v[i];

			if (u->pc >= v->start && u->pc < v->end) {
				u->vm_start = v->start;
				u->vm_end = v->end;
				u->vm_off = v->off;
				u->file = v->file;
				u->vm_file = v->file.ino != 0;
				u->vm_exec = true; /* only text is kept */
				return true;
			}
		}
	}
	if (u->vm_asked) {
		u->vm_unknown = true;
		return false;
	}
	u->vm_asked = true;
	/* not known if the kernel could not look: as if not asked */
	if (!pmt_unwind_find_vma(u, bpf_get_current_task_btf(), u->pc, 0, &u->vm_unknown))
		return false;
	pmt_vma_keep(u, c, false);
	return true;
}

/* The process u walks or learns about: task's. */
static __always_inline void pmt_unwind_of(struct pmt_unwind *u, struct task_struct *task)
{
	u->mm = (__u64)task->mm;
	u->tgid = (__u32)task->tgid; /* no helper call */
}

/* Ask user space for the rows of u->file, which u->tgid maps. */
static __always_inline void pmt_want_rows(struct pmt_unwind *u)
{
	struct pmt_cfi_want w = {.tgid = u->tgid, .vm_start = u->vm_start};

	if (!bpf_map_update_elem(&pmt_cfi_wanted, &u->file, &w, BPF_NOEXIST))
		pmt_queue_moved(PMT_QUEUE_WANTED);
}

/*
 * A text mapping made by task at addr (exec, mmap): into its process's
 * VMA cache now, and its file's rows asked for, so that the process's
 * first samples unwind without learning one VMA per sample (a program
 * run in process context may call bpf_find_vma freely).
 */
static __always_inline void pmt_unwind_learn(struct task_struct *task, __u64 addr)
{
	struct pmt_unwind u = {};
	bool busy;

	pmt_unwind_of(&u, task);
	if (!u.mm || !pmt_unwind_find_vma(&u, task, addr, 1, &busy) || !u.vm_exec)
		return;
	pmt_vma_keep(&u, pmt_vmas_of(&u), true);
	if (u.vm_file && !bpf_map_lookup_elem(&pmt_cfi_files, &u.file))
		pmt_want_rows(&u);
}

#endif
