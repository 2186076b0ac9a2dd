/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Python frames among user stacks (CPython 3.11), for the DWARF unwinder
 * (unwind.bpf.h): when a native frame lies in _PyEval_EvalFrameDefault of
 * a known interpreter file (pmt_py_files, entered by user space when it
 * reads the file's tables), the Python frames that call of the eval loop
 * runs are written first, innermost first, then the native frame. They
 * come from the thread's PyThreadState (the one holding the GIL if it is
 * this thread's, else found in the interpreter's list by native thread
 * id): its _PyCFrame's current frame, then each frame's previous. A call
 * of the eval loop runs frames up to and including one marked is_entry;
 * the next native eval frame takes the frames after it. One Python frame
 * per bpf_loop iteration, as native ones.
 *
 * Each code object a process is first seen running is queued in
 * pmt_py_new, for user space to read its names and line table while the
 * process lives (src/python/cpython.c).
 */
#ifndef PMTRACE_PYTHON_BPF_H
#define PMTRACE_PYTHON_BPF_H

#include "unwind_state.bpf.h"

/* Set by the loader: Python frames wanted (--unwind dwarf, user stacks). */
const volatile bool pmt_python __weak = false;

/* threads of one interpreter searched for the sampled one */
#define PMT_PY_THREADS 16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* sized by the loader */
	__type(key, struct pmt_cfi_file_key);
	__type(value, struct pmt_py_file);
} pmt_py_files SEC(".maps") __weak;

/* code objects met, per process: their ids (abi.h) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct pmt_py_code_key);
	__type(value, struct pmt_py_seen);
} pmt_py_seen SEC(".maps") __weak;

/* ... and those user space has yet to read: a queue it pops (a round
 * finds a few; a hash's batch read walked all its buckets for them) */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);
	__type(value, struct pmt_py_new);
} pmt_py_new SEC(".maps") __weak;

/* the last id given on each CPU: ids are the CPU's number (10 bits) and
 * its count (22 bits), taken without atomics (no compiler for those in
 * Debian 12's clang at BPF's default CPU level, and one program runs at
 * a time on a CPU) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmt_py_ids SEC(".maps") __weak;

/* The word at addr, 0 if it cannot be read (the helper zeroes it then:
 * no branch for the verifier to follow). */
static __always_inline __u64 pmt_py_word(__u64 addr)
{
	__u64 v;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* The thread's current Python frame into u->py_frame (0: none), its
 * interpreter's _PyRuntime at rt. A plain bounded loop, not a bpf_loop
 * callback: a third frame of calls would pass 6.1's 512 bytes of stack
 * for all frames together. */
static __always_inline void pmt_py_begin(struct pmt_unwind *u, const struct pmt_py_file *pf,
					 __u64 rt)
{
	__u64 ts, want;
	bool found;
	__u32 i;

	u->py_started = true;
	want = (__u32)bpf_get_current_pid_tgid(); /* the thread */
	ts = pmt_py_word(rt + pf->rt_tstate);
	found = ts && pmt_py_word(ts + pf->ts_tid) == want;
	if (!found) {
		/* not the GIL's holder: the interpreter's list of threads (a
		 * word at a small address reads as 0, as a null one) */
		ts = pmt_py_word(pmt_py_word(rt + pf->rt_interp) + pf->is_threads);
		for (i = 0; i < PMT_PY_THREADS; i++) {
			if (!ts || pmt_py_word(ts + pf->ts_tid) == want)
				break;
			ts = pmt_py_word(ts + pf->ts_next);
		}
		if (!ts || i >= PMT_PY_THREADS)
			return;
	}
	ts = pmt_py_word(ts + pf->ts_cframe);
	if (ts)
		u->py_frame = pmt_py_word(ts + pf->cf_frame);
}

/* An eval loop call without a Python frame: counted, once a stack */
static __always_inline void pmt_py_missed(struct pmt_unwind *u)
{
	if (!u->py_missed)
		pmt_stat_inc(PMT_STAT_PY_NOFRAME);
	u->py_missed = true;
}

/* Is u->pc in the eval loop of an interpreter? Then its Python frames are
 * to be written first (u->py_emit), or there are none (u->py_done). */
static __always_inline bool pmt_py_at_eval(struct pmt_unwind *u)
{
	struct pmt_py_file *pf;
	__u64 at;

	if (!pmt_python || !u->vm_py || u->py_done)
		return false;
	pf = bpf_map_lookup_elem(&pmt_py_files, &u->file);
	if (!pf)
		return false;
	at = pmt_unwind_at(u);
	if (at < pf->eval_start || at >= pf->eval_end)
		return false;
	/* kept for this call's frames, not looked up for each */
	u->py = *pf;
	if (!u->py_started)
		pmt_py_begin(u, pf, u->vm_start - u->vm_off + pf->runtime);
	u->py_emit = u->py_frame != 0;
	u->py_done = !u->py_emit;
	if (!u->py_emit)
		pmt_py_missed(u);
	return true;
}

/* The id of the code object at code whose qualname object is name: the
 * one it had when met, else a new one, queued for user space. 0: none
 * to be had. */
static __always_inline __u32 pmt_py_id(struct pmt_unwind *u, __u64 code, __u64 name)
{
	struct pmt_py_code_key k = {.tgid = u->tgid, .code = code};
	struct pmt_py_seen *s = bpf_map_lookup_elem(&pmt_py_seen, &k), sv = {.qualname = name};
	struct pmt_py_new nv = {.tgid = u->tgid, .code = code, .qualname = name};
	__u32 zero = 0, *last;

	if (s && s->qualname == name)
		return s->id;
	last = bpf_map_lookup_elem(&pmt_py_ids, &zero);
	if (!last)
		return 0;
	*last = (*last + 1) & 0x3fffff;
	nv.id = (bpf_get_smp_processor_id() & 0x3ff) << 22 | *last;
	if (!nv.id)
		return 0;
	if (bpf_map_push_elem(&pmt_py_new, &nv, 0))
		pmt_stat_inc(PMT_STAT_PY_NEW_FULL);
	else
		pmt_queue_moved(PMT_QUEUE_PY);
	sv.id = nv.id;
	bpf_map_update_elem(&pmt_py_seen, &k, &sv, BPF_ANY);
	return nv.id;
}

/* The next Python frame of the eval loop call at u->pc (its interpreter
 * in u->py), as a frame value (PMT_PY_FRAME); 0 when there is none after
 * all. */
static __always_inline __u64 pmt_py_frame(struct pmt_unwind *u)
{
	const struct pmt_py_file *pf = &u->py;
	__u64 fr = u->py_frame, code, instr, base, lasti = 0;
	__u8 entry = 1;
	__u32 id;

	u->py_emit = false;
	u->py_done = true;
	if (!fr)
		return 0;
	code = pmt_py_word(fr + pf->fr_code);
	instr = pmt_py_word(fr + pf->fr_instr);
	if (bpf_probe_read_user(&entry, 1, (void *)(fr + pf->fr_entry)) || !code ||
	    code >= PMT_USER_END) {
		pmt_py_missed(u);
		return 0;
	}
	base = code + pf->co_code;
	if (instr > base)
		lasti = (instr - base) / 2;
	if (lasti > 0x7fff)
		lasti = 0x7fff;
	u->py_frame = pmt_py_word(fr + pf->fr_previous);
	/* this call of the eval loop goes on until its entry frame */
	if (!entry && u->py_frame) {
		u->py_emit = true;
		u->py_done = false;
	}
	id = pmt_py_id(u, code, pmt_py_word(code + pf->co_qualname));
	return id ? PMT_PY_FRAME | lasti << 47 | id : 0;
}

#endif /* PMTRACE_PYTHON_BPF_H */
