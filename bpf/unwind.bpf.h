/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * User stacks from DWARF CFI, unwound in the kernel (--unwind dwarf).
 *
 * For each frame: the VMA holding pc (bpf_find_vma: its file's inode and
 * the file offset of pc), the file's rows (pmt_cfi_files, filled by
 * src/unwind/tables_bpf.c from the file's .eh_frame), the row covering the offset
 * (a binary search), then the caller's pc, sp and fp from the CFA the row
 * gives. Where no row covers pc (JIT code, a file without tables yet),
 * frame pointers take over for that frame. A file seen without tables is
 * noted in pmt_cfi_wanted for user space to load. One frame per bpf_loop
 * iteration.
 */
#ifndef PMTRACE_UNWIND_BPF_H
#define PMTRACE_UNWIND_BPF_H

#include "common.bpf.h"

#define PMT_PF_KTHREAD 0x00200000 /* include/linux/sched.h */
#define PMT_VM_EXEC 0x00000004	  /* include/linux/mm.h */

/* Set by the loader: user stacks are unwound here, not by the kernel's
 * frame-pointer walk. */
const volatile bool pmt_unwind_dwarf __weak = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* sized by the loader */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct pmt_cfi_row);
} pmt_cfi_rows SEC(".maps") __weak;

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
	struct pmt_vma v[PMT_VMA_SLOTS];
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_vmas);
} pmt_vma_cache SEC(".maps") __weak;

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
	bool vm_asked;	 /* bpf_find_vma was called in this run */
	bool vm_exec;	 /* the VMA is executable */
	bool by_fp;	 /* pc was found by frame pointers, not CFI */
	bool vm_unknown; /* no VMA for pc: none cached, the kernel not asked (or busy) */
	bool pending;	 /* a frame lay in a file whose rows are not read yet */
	bool ended;	 /* the walk reached the outermost frame (CFI or fp says) */
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
	__u32 py_at;	       /* a dump's Python frames: their scratch offset */
	__u32 py_n;	       /* ... and how many */
};

/* The file offset of pc's instruction: a caller's pc is past its call,
 * the call itself is looked up (u->native: a frame before it was
 * written). */
static __always_inline __u64 pmt_unwind_at(const struct pmt_unwind *u)
{
	return u->pc - u->vm_start + u->vm_off - (u->native ? 1 : 0);
}

#include "python.bpf.h"

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
	}
	return c;
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

	bpf_map_update_elem(&pmt_cfi_wanted, &u->file, &w, BPF_NOEXIST);
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

/* The rows of the file mapped at u->pc, into u->first/count. */
static __always_inline void pmt_unwind_file(struct pmt_unwind *u)
{
	struct pmt_cfi_file *cf;

	if (u->pc >= u->vm_start && u->pc < u->vm_end)
		return;
	u->vm_start = u->vm_end = 0;
	u->vm_file = false;
	u->vm_unknown = false;
	u->vm_pending = false;
	u->count = 0;
	if (!pmt_unwind_vma_of(u) || !u->vm_file)
		return;
	cf = bpf_map_lookup_elem(&pmt_cfi_files, &u->file);
	if (cf) {
		u->first = cf->first;
		u->count = cf->count;
	} else {
		pmt_want_rows(u);
		u->pending = true;
		u->vm_pending = true;
	}
}

/* The last row of [first, first + count) at or below pc. */
static __always_inline struct pmt_cfi_row *pmt_unwind_row(__u32 first, __u32 count, __u32 pc)
{
	struct pmt_cfi_row *r;
	__u32 base = first, n = count, half, i, mid;

	/* the row at base is the answer once n is 1: halve n, keeping the
	 * half whose first row is at or below pc (22 rounds: count is at
	 * most 2^22, the largest pmt_cfi_rows, src/unwind/tables_bpf.c) */
	for (i = 0; i < 22; i++) {
		if (n <= 1)
			break;
		half = n / 2;
		mid = base + half;
		r = bpf_map_lookup_elem(&pmt_cfi_rows, &mid);
		if (!r)
			break;
		/* base moves to mid when mid's row is at or below pc: by
		 * arithmetic, not a branch (one path less for the verifier
		 * each round) */
		base += half * (__u32)(((__u64)r->pc - pc - 1) >> 63);
		n -= half;
	}
	r = count ? bpf_map_lookup_elem(&pmt_cfi_rows, &base) : NULL;
	return r && r->pc <= pc ? r : NULL;
}

/* The caller by frame pointers: [fp] is its fp, [fp + 8] its pc. */
static __always_inline int pmt_unwind_fp(struct pmt_unwind *u)
{
	__u64 w[2];

	if (!u->fp) { /* the outermost frame: _start clears the frame pointer */
		u->ended = true;
		return 1;
	}
	if (bpf_probe_read_user(w, sizeof(w), (void *)u->fp))
		return 1;
	u->sp = u->fp + 16;
	u->fp = w[0];
	u->pc = w[1];
	return 0;
}

/*
 * Write frame value v as frame i (each iteration writes one frame or
 * ends the walk). The slot comes from the loop's index, not from an
 * offset carried from one iteration to the next: a verifier that checks
 * a callback as a loop (6.8 on) then finds the iterations alike instead
 * of walking every one of them.
 */
static __always_inline bool pmt_unwind_put(struct pmt_unwind *u, __u32 i, __u64 v)
{
	struct pmt_event *e;
	__u32 zero = 0;
	__u64 *slot, at;

	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	at = (__u64)u->start + (__u64)i * 8;
	/* bounded in a register, where 6.1's verifier keeps the bound */
	asm volatile("" : "+r"(at));
	if (!e || at > PMT_DATA_ROOM - 8)
		return false;
	slot = (__u64 *)(e->data + at);
	*slot = v;
	u->n = i + 1;
	u->hash = pmt_hash_word(u->hash, v);
	return true;
}

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

static long pmt_unwind_step(__u32 i, void *data)
{
	struct pmt_cfi_row *r = NULL;
	struct pmt_unwind *u;
	__u64 cfa, ra, fp, v, at;
	__u32 zero = 0;
	bool caller;

	(void)data;
	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	if (!u)
		return 1;
	if (!u->pc) { /* the caller of the outermost frame */
		u->ended = true;
		return 1;
	}
	if (i >= u->max)
		return 1;
	/* a new pc (not one whose Python frames are being written) */
	if (!u->py_emit) {
		pmt_unwind_file(u);
		/* A caller found by frame pointers (no CFI covers the
		 * callee, or its file's rows are not read yet) is a frame
		 * only where user text can be: not past the user half, not
		 * in a mapping the kernel says is no text. Else the "frame
		 * pointer" was any register, and the stack ends here,
		 * counted, instead of inventing callers. */
		if (u->by_fp && (u->pc < 0x1000 || u->pc >= 0x7ffffffff000ULL ||
				 (!u->vm_unknown &&
				  (u->pc < u->vm_start || u->pc >= u->vm_end || !u->vm_exec)))) {
			pmt_stat_inc(PMT_STAT_UNWIND_ENDED);
			return 1;
		}
		if (pmt_unwind_deferred_here(u))
			return pmt_unwind_defer(u, i);
		/* the eval loop of an interpreter: u->py_emit */
		pmt_py_at_eval(u);
	}
	/* an eval loop's Python frames first, one per step, then (a frame
	 * that cannot be read ends them) its native frame; one call site,
	 * so the verifier checks the Python code once */
	if (u->py_emit && (v = pmt_py_frame(u)))
		return !pmt_unwind_put(u, i, v);
	u->py_done = false;
	/* a caller as perf's DWARF mode shows it: at its call instruction
	 * (the return address - 1), so a call that ends a function (to a
	 * noreturn one) is named after its caller */
	at = pmt_unwind_at(u);
	caller = u->native;
	u->native = true;
	if (!pmt_unwind_put(u, i, caller ? u->pc - 1 : u->pc))
		return 1;

	if (u->count) {
		if (at <= 0xffffffffULL)
			r = pmt_unwind_row(u->first, u->count, (__u32)at);
	}
	u->by_fp = !r || r->cfa == PMT_CFA_NONE;
	if (u->by_fp)
		return pmt_unwind_fp(u);
	switch (r->cfa) {
	case PMT_CFA_END: u->ended = true; return 1; /* the outermost frame */
	case PMT_CFA_SP: cfa = u->sp + (__s64)r->cfa_off; break;
	case PMT_CFA_FP: cfa = u->fp + (__s64)r->cfa_off; break;
	case PMT_CFA_PLT: cfa = u->sp + ((u->pc & 15) >= (__u64)r->cfa_off ? 16 : 8); break;
	default: return 1;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return 1;
	if (r->fp == PMT_FP_SAVED) {
		if (bpf_probe_read_user(&fp, sizeof(fp), (void *)(cfa + (__s64)r->fp_off)))
			return 1;
		u->fp = fp;
	}
	if (cfa <= u->sp)
		return 1; /* the stack grows down: no loops */
	u->sp = cfa;
	u->pc = ra;
	return 0;
}

/*
 * Unwind the current task's user stack into the scratch buffer from byte
 * off, at most max frames. Returns the frames written; *hash is their
 * hash (for aggregation keys). defer (a stream's, a constant of the
 * caller's): a stack that meets a file without rows stops there, its
 * dump after the frames (pmt_unwind_dumped).
 */
static __always_inline __u32 pmt_unwind_user(__u32 off, __u32 max, __u64 *hash, const bool defer)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	struct pmt_unwind *u;
	__u32 zero = 0;

	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	if (!u || task->flags & PMT_PF_KTHREAD)
		return 0;
	/* in user mode at the sample: its registers; else the task's saved
	 * user registers */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	__builtin_memset(u, 0, sizeof(*u));
	u->pc = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->fp = BPF_CORE_READ(regs, bp);
	pmt_unwind_of(u, task);
	u->start = off;
	u->max = max;
	u->defer = defer;
	u->hash = PMT_STACK_HASH_SEED;
	bpf_loop(PMT_STACK_DEPTH, pmt_unwind_step, NULL, 0);
	if (u->deferred)
		pmt_py_dump(u, task);
	/* short of the outermost frame where a file had no rows yet: the
	 * cost of reading tables late (a busy machine), said at exit */
	if (u->pending && !u->ended && !u->deferred)
		pmt_stat_inc(PMT_STAT_UNWIND_PENDING);
	*hash = u->hash;
	return u->n;
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

#endif /* PMTRACE_UNWIND_BPF_H */
