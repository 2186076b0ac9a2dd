// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracepoint provider's kernel side: one program attached to every
 * requested tracepoint; the attach cookie says which probe fired, and
 * pmt_probes[cookie] says how long the raw record is.
 */
#define PMT_RAW_CTX /* the context is the raw record: see pmt_ctx_u32() */
#include "record.bpf.h"

/*
 * syscalls:sys_{enter,exit}_NAME served by one program on raw_syscalls:
 * (PMT_SYS_* in bpf/abi.h) the call's number -> probe id + 1 (0: not
 * traced). Each syscalls:* tracepoint costs the kernel a grace period to
 * detach, raw_syscalls two in all.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * PMT_SYS_NRS);
	__type(key, __u32);
	__type(value, __u32);
} pmt_sysnr SEC(".maps");

/* The record's first size bytes into e. The bound is checked again here,
 * in a register: 6.1's verifier forgets one across a stack spill, and
 * this program spills size wherever the compiler runs short of them. */
static __always_inline void pmt_tp_copy(struct pmt_event *e, __u64 size, void *ctx)
{
	asm volatile("" : "+r"(size));
	if (size > PMT_MAX_DATA)
		size = PMT_MAX_DATA;
	bpf_probe_read_kernel(e->data, size, ctx);
}

/* The most __data_loc and __rel_loc fields a probe's record has (set at
 * load): the loop below is checked that many times, not PMT_MAX_DYN. */
const volatile __u32 pmt_tp_max_dyn __weak = PMT_MAX_DYN;

/* Dynamic data follows the fixed fields: where the last __data_loc or
 * __rel_loc area of the copied record e ends (at most PMT_MAX_DATA). */
static __always_inline __u64 pmt_tp_dyn_end(const struct pmt_probe_cfg *cfg,
					    const struct pmt_event *e, __u64 size)
{
	__u64 end = size;
	__u32 i;

	for (i = 0; i < PMT_MAX_DYN && i < pmt_tp_max_dyn && i < cfg->n_dyn; i++) {
		__u64 off = PMT_DYN_OFF(cfg->dyn[i]), w, start;

		if (off > PMT_MAX_DATA - 4)
			break;
		w = *(__u32 *)&e->data[off];
		start = w & 0xffff;
		if (cfg->dyn[i] & PMT_DYN_REL)
			start += off + 4;
		if (start + (w >> 16) > end)
			end = start + (w >> 16);
	}
	return end > PMT_MAX_DATA ? PMT_MAX_DATA : end;
}

/* --stack, aggregating: the stack keys at PMT_TP_STACK of the record
 * copy, where the format's hidden kstack and ustack fields are. */
static __always_inline void pmt_tp_stack_keys(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					      struct pmt_event *e, const bool defer)
{
	struct pmt_stack_rec *st = (struct pmt_stack_rec *)(e->data + PMT_TP_STACK);

	fc->rec = e->data;
	pmt_stack_keys(cfg, fc, e, st, PMT_TP_STACK + sizeof(*st), defer);
}

/* --stack, streaming: the frames right after the record's size bytes;
 * their bytes, the counts in *nk and *nu, a user stack's dump after them
 * in *dump bytes. */
static __always_inline __u64 pmt_tp_frames(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					   struct pmt_event *e, __u64 size, __u16 *nk, __u16 *nu,
					   __u32 *dump)
{
	__u64 off = size, uoff, h;
	long kb = 0, ub = 0;

	/* bounds made afresh in registers, right before their use: 6.1's
	 * verifier gives a spilled size an empty range (umin > umax), and
	 * a pointer plus that is no pointer; a mask the compiler cannot
	 * drop (after the asm) gives the bound again */
	asm volatile("" : "+r"(off));
	off &= 0x3fff;
	if (off > PMT_MAX_DATA)
		return 0;
	if (cfg->stack & PMT_STACK_KERNEL) {
		kb = bpf_get_stack(fc->ctx, e->data + off, PMT_STREAM_STACK_BYTES, 0);
		if (kb < 0 || kb > (long)PMT_STACK_BYTES)
			kb = 0;
	}
	uoff = off + (__u64)kb;
	asm volatile("" : "+r"(uoff));
	uoff &= 0x3fff;
	if ((cfg->stack & PMT_STACK_USER) && uoff <= PMT_MAX_DATA + PMT_STACK_BYTES) {
		if (pmt_unwind_dwarf) {
			ub = (long)pmt_unwind_user((__u32)uoff, PMT_STACK_KEPT, &h, true) * 8;
			*dump = pmt_unwind_dumped();
		} else {
			ub = bpf_get_stack(fc->ctx, e->data + uoff, PMT_STREAM_STACK_BYTES,
					   BPF_F_USER_STACK);
			if (ub < 0 || ub > (long)PMT_STACK_BYTES)
				ub = 0;
		}
	}
	*nk = (__u16)((__u64)kb / 8);
	*nu = (__u16)((__u64)ub / 8);
	return (__u64)kb + (__u64)ub;
}

/* Stream the record with its stack (a user stack's dump after it, when
 * the kernel could not finish it). */
static __always_inline void pmt_tp_emit_stack(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					      struct pmt_event *e, __u32 id, __u64 size)
{
	__u16 nk = 0, nu = 0;
	__u32 dump = 0;
	__u64 fb = pmt_tp_frames(cfg, fc, e, size, &nk, &nu, &dump);

	pmt_emit_frames(fc, e, id, size, fb, nk, nu, dump);
}

/*
 * --offcpu, on sched:sched_switch (this program, so a kernel stack starts
 * at __schedule as perf's does). The thread leaving the CPU (the current
 * one) is timed from now, with its key (stacks, comm, pid, ...) built now,
 * where the stacks are its own; the thread arriving, if timed, adds the
 * time it was off to that key. Settings: rodata below.
 */
const volatile bool pmt_offcpu __weak = false;
const volatile __u32 pmt_offcpu_next_pid __weak = 0; /* offset of next_pid */
const volatile __u8 pmt_offcpu_state __weak = 0;     /* 0 any, 1 blocked, 2 runnable */
const volatile __u64 pmt_offcpu_min_ns __weak = 0;
const volatile __u64 pmt_offcpu_max_ns __weak = ~0ULL;

struct pmt_offcpu_start {
	__u64 ts;
	__u64 ran; /* the thread's se.sum_exec_runtime then */
	struct pmt_agg_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* --offcpu: sized by src/probes/tracepoint_bpf.c */
	__type(key, __u32);	/* tid */
	__type(value, struct pmt_offcpu_start);
} pmt_offcpu_starts SEC(".maps");

/* the start being made: off the program's stack, which a key (up to 136
 * bytes) would take past the 512 bytes 6.1 allows all frames together */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_offcpu_start);
} pmt_offcpu_new SEC(".maps");

/* task_struct's state before 5.14 */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* Does the leaving (current) thread's state pass --state? */
static __always_inline bool pmt_offcpu_state_ok(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	unsigned int st;

	if (!pmt_offcpu_state)
		return true;
	if (bpf_core_field_exists(t->__state))
		st = BPF_CORE_READ(t, __state);
	else
		st = (unsigned int)BPF_CORE_READ((struct task_struct___old *)t, state);

	if (pmt_offcpu_state == 1)
		return st & 3; /* S or D (TASK_IDLE included) */
	if (pmt_offcpu_state == 2)
		return !st; /* preempted or yielding: runnable */
	return true;
}

/* The current thread's time on a CPU so far (ns; the scheduler updated
 * it as the thread left). */
static __always_inline __u64 pmt_offcpu_ran(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return BPF_CORE_READ(t, se.sum_exec_runtime);
}

/* d ns off the CPU, under the key taken as the thread left, if the
 * block bounds pass it. */
static __always_inline void pmt_offcpu_add(const struct pmt_probe_cfg *cfg,
					   const struct pmt_offcpu_start *s, __u64 d)
{
	struct pmt_agg_key *k;
	__u32 zero = 0;

	k = bpf_map_lookup_elem(&pmt_key_buf, &zero);
	if (k && d >= pmt_offcpu_min_ns && d <= pmt_offcpu_max_ns) {
		*k = s->key;
		pmt_agg_update_key(&cfg->agg, k, (__s64)(d / 1000));
	}
}

/* The leaving thread still has a start: the kernel did not trace its
 * arrival since (PMT_STAT_OFFCPU_UNSEEN). Its time off since that start
 * is the time gone less the time it ran meanwhile, which the scheduler
 * kept. */
static __always_inline void pmt_offcpu_unseen(const struct pmt_probe_cfg *cfg, __u32 tid, __u64 now)
{
	struct pmt_offcpu_start *s = bpf_map_lookup_elem(&pmt_offcpu_starts, &tid);
	__u64 ran, gone;

	if (!s)
		return;
	pmt_stat_inc(PMT_STAT_OFFCPU_UNSEEN);
	ran = pmt_offcpu_ran() - s->ran;
	gone = now - s->ts;
	if (gone > ran)
		pmt_offcpu_add(cfg, s, gone - ran);
	bpf_map_delete_elem(&pmt_offcpu_starts, &tid);
}

static __always_inline int pmt_tp_offcpu(void *ctx, __u32 id)
{
	const struct pmt_probe_cfg *cfg = bpf_map_lookup_elem(&pmt_probes, &id);
	struct pmt_fctx fc = {.ctx = ctx, .probe = id};
	struct pmt_offcpu_start *s, *start;
	struct pmt_agg_key *k;
	struct pmt_event *e;
	__u32 tid, zero = 0;
	__u64 now;

	if (!cfg || pmt_stop)
		return 1;
	pmt_ctx_fill(ctx);
	now = bpf_ktime_get_ns();
	tid = (__u32)pmt_ctx_field(ctx, pmt_offcpu_next_pid & 0x7c, 4, false);
	s = bpf_map_lookup_elem(&pmt_offcpu_starts, &tid);
	if (s) {
		pmt_offcpu_add(cfg, s, now - s->ts);
		bpf_map_delete_elem(&pmt_offcpu_starts, &tid);
	}
	tid = (__u32)pmt_pid_tgid(&fc);
	if (!tid)
		return 1;
	pmt_offcpu_unseen(cfg, tid, now);
	if (!pmt_target_ok(&fc) || !pmt_cpu_ok() || !pmt_offcpu_state_ok())
		return 1;
	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	k = bpf_map_lookup_elem(&pmt_key_buf, &zero);
	start = bpf_map_lookup_elem(&pmt_offcpu_new, &zero);
	if (!e || !k || !start)
		return 1;
	if (cfg->agg.needs_record)
		pmt_tp_copy(e, cfg->fixed_size, ctx);
	pmt_tp_stack_keys(cfg, &fc, e, false);
	pmt_x_prepare(cfg->agg.xprog, &fc);
	pmt_agg_fill_key(&cfg->agg, &fc, k, id);
	start->ts = now;
	start->ran = pmt_offcpu_ran();
	start->key = *k;
	if (bpf_map_update_elem(&pmt_offcpu_starts, &tid, start, BPF_ANY))
		pmt_stat_inc(PMT_STAT_OFFCPU_FULL);
	return 1;
}

/* What a copy of the program is compiled with (a constant of each): the
 * verifier removes the code a session's settings leave dead one run at a
 * time, so a copy without it loads in a fraction of the time. */
enum pmt_tp_shape {
	PMT_TP_LEAN, /* streams and filters: no off-CPU, aggregation, stacks */
	PMT_TP_FLAT, /* aggregates too, without stacks or off-CPU */
	PMT_TP_FULL,
	PMT_TP_XGEN, /* PMT_TP_FLAT with generated programs (abi/xgen.h) */
};

/* a probe's expressions may run as a generated program (set at load) */
const volatile bool pmt_use_xgen = false;

/* probe id -> its generated program; the last entry, pmt_tp_xback (sized
 * by the loader: 1 where no probe has one) */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmt_xgen_tp SEC(".maps");

/* The bytes of the probe's record a copy takes: its fixed part */
static __always_inline __u64 pmt_tp_size(const struct pmt_probe_cfg *cfg)
{
	__u64 size = cfg->fixed_size;

	return size > PMT_MAX_DATA ? PMT_MAX_DATA : size;
}

/* An aggregating probe's update; stacks: the program has their code;
 * ran: the probe's generated program ran its expressions (their values
 * at fc->xslot) and its statements (abi/xgen.h). */
static __always_inline void pmt_tp_aggregate(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					     struct pmt_event *e, __u64 size, __u32 id,
					     const bool stacks, const bool ran)
{
	if (!fc->rec && cfg->agg.needs_record) {
		pmt_tp_copy(e, size, fc->ctx);
		fc->rec = e->data;
	}
	if (!stacks) {
		pmt_aggregate_update(cfg, fc, id, ran);
		if (!ran)
			pmt_aggregate_rest(cfg, fc);
		return;
	}
	if (cfg->stack)
		pmt_tp_stack_keys(cfg, fc, e, true);
	pmt_aggregate_stacked(cfg, fc, (struct pmt_stack_rec *)(e->data + PMT_TP_STACK),
			      PMT_TP_STACK + sizeof(struct pmt_stack_rec), id);
}

/* The record streamed: copied (where the filter did not), its dynamic
 * part too, and sent (stacks: the program has their code) */
static __always_inline void pmt_tp_stream(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					  struct pmt_event *e, __u32 id, __u64 size,
					  const bool stacks)
{
	__u64 end;

	if (!fc->rec)
		pmt_tp_copy(e, size, fc->ctx);
	if (cfg->n_dyn) {
		end = pmt_tp_dyn_end(cfg, e, size);
		if (end > size) {
			size = end;
			pmt_tp_copy(e, size, fc->ctx);
		}
	}
	/* The kernel hands BPF the record with its regs pointer over the
	 * common fields (perf_trace_run_bpf_submit()): the type (a routed
	 * syscall's own) and pid back, it decodes as the kernel's own. */
	*(__u64 *)e->data = cfg->common_type | ((__u64)(__u32)pmt_pid_tgid(fc) << 32);
	if (!pmt_stream_ready(cfg, fc, e))
		return;
	if (stacks && cfg->stack)
		pmt_tp_emit_stack(cfg, fc, e, id, size);
	else
		pmt_emit(fc, e, id, size);
}

static __always_inline int pmt_tp_body(void *ctx, __u32 id, const enum pmt_tp_shape shape)
{
	const struct pmt_probe_cfg *cfg;
	struct pmt_event *e = NULL;
	__u32 zero = 0;
	/* 64-bit sizes: 32-bit ones make clang zero-extend into copies
	 * whose bounds the verifier does not carry back */
	__u64 size;
	struct pmt_fctx fc = {.ctx = ctx, .probe = id};

	if (shape == PMT_TP_FULL && pmt_offcpu)
		return pmt_tp_offcpu(ctx, id);
	/* Always return 1: 0 would drop the event for every other perf user
	 * of this tracepoint (see open_carrier() in src/probes/tracepoint_bpf.c). */
	if (pmt_stop || !pmt_target_ok(&fc) || !pmt_cpu_ok())
		return 1;
	cfg = bpf_map_lookup_elem(&pmt_probes, &id);
	if (!cfg)
		return 1;
	pmt_ctx_fill(ctx);
	size = pmt_tp_size(cfg);
	/* Decide before anything is copied out: a filter on record fields
	 * reads them from a copy of the fixed part; other filters reject
	 * without touching the scratch buffer at all. */
	if (pmt_use_filter && cfg->filter.n) {
		if (cfg->filter.needs_record) {
			e = bpf_map_lookup_elem(&pmt_scratch, &zero);
			if (!e)
				return 1;
			pmt_tp_copy(e, size, ctx);
			fc.rec = e->data;
		}
		if (!pmt_filter_run(&cfg->filter, &fc)) {
			__u64 *n = bpf_map_lookup_elem(&pmt_filtered, &id);

			if (n)
				(*n)++;
			return 1;
		}
	}
	if (!e) {
		e = bpf_map_lookup_elem(&pmt_scratch, &zero);
		if (!e)
			return 1;
	}
	if (shape != PMT_TP_LEAN && pmt_aggregates(cfg)) {
		/* (returns to pmt_tp_xback where the call is made) */
		if (shape == PMT_TP_XGEN && pmt_use_xgen && cfg->xgen)
			bpf_tail_call(ctx, &pmt_xgen_tp, id);
		pmt_tp_aggregate(cfg, &fc, e, size, id, shape == PMT_TP_FULL, false);
		return 1;
	}
	pmt_tp_stream(cfg, &fc, e, id, size, shape == PMT_TP_FULL);
	return 1;
}

static __always_inline __u32 pmt_tp_id(void *ctx)
{
	return pmt_only_probe >= 0 ? (__u32)pmt_only_probe : (__u32)bpf_get_attach_cookie(ctx);
}

/*
 * The kernel takes a program only once per tracepoint, so a tracepoint
 * given several times (with different filters) needs as many copies;
 * the loader loads only those it uses. PMT_TP_INSTANCES in bpf/abi.h.
 */
SEC("tracepoint") int pmt_tp(void *ctx)
{
	PMT_LEAN_CUT(1);
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_FULL);
}
SEC("tracepoint") int pmt_tp2(void *ctx)
{
	PMT_LEAN_CUT(1);
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_FULL);
}
SEC("tracepoint") int pmt_tp3(void *ctx)
{
	PMT_LEAN_CUT(1);
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_FULL);
}
SEC("tracepoint") int pmt_tp4(void *ctx)
{
	PMT_LEAN_CUT(1);
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_FULL);
}
/* pmt_tp for a run without aggregation, stacks or off-CPU: a fifth of its
 * size, so the kernel checks and loads it in a fraction of the time */
SEC("tracepoint") int pmt_tp_lean(void *ctx)
{
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_LEAN);
}
/* pmt_tp for a run that aggregates without stacks or off-CPU */
SEC("tracepoint") int pmt_tp_flat(void *ctx)
{
	PMT_FLAT_CUT(1);
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_FLAT);
}

/* pmt_tp_flat for a run whose probes' programs are generated BPF
 * (abi/xgen.h), the only program that tail-calls: the others stay as
 * they were on every kernel */
SEC("tracepoint") int pmt_tp_xgen(void *ctx)
{
	PMT_FLAT_CUT(1);
	return pmt_tp_body(ctx, pmt_tp_id(ctx), PMT_TP_XGEN);
}

/* The return of a probe's generated program (abi/xgen.h): its
 * aggregation's update alone, the values its expressions computed in
 * the CPU's pmt_xmem slots. A program of its own, without the machine:
 * a flag in pmt_tp_xgen's body had the verifier walk that body twice. */
SEC("tracepoint") int pmt_tp_xback(void *ctx)
{
	PMT_FLAT_CUT(1);
	__u32 id = pmt_tp_id(ctx), zero = 0;
	struct pmt_fctx fc = {.ctx = ctx, .probe = id};
	const struct pmt_probe_cfg *cfg = bpf_map_lookup_elem(&pmt_probes, &id);
	struct pmt_event *e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	struct pmt_xmem *m = bpf_map_lookup_elem(&pmt_xmem, &zero);

	if (!cfg || !e || !m)
		return 1;
	fc.xslot = m->slot;
	pmt_tp_aggregate(cfg, &fc, e, pmt_tp_size(cfg), id, false, true);
	return 1;
}

/* x86's TS_COMPAT: a 32-bit call, whose numbers are another table's; the
 * syscalls:* tracepoints skip those too */
#define PMT_TS_COMPAT 0x0002

/* On raw_syscalls:sys_enter (cookie PMT_SYS_ENTER) and sys_exit: their
 * records are those of syscalls:sys_enter_NAME and sys_exit_NAME (a long
 * id where those have an int nr and padding; args or ret after it). */
SEC("tracepoint") int pmt_sys(void *ctx)
{
	PMT_LEAN_CUT(1);
	__u64 nr = *(__u64 *)((char *)ctx + 8), dir = bpf_get_attach_cookie(ctx);
	__u32 key, *id;

	if (nr >= PMT_SYS_NRS || dir > 1)
		return 1;
#ifdef __TARGET_ARCH_x86
	{
		struct task_struct *t = bpf_get_current_task_btf();

		if (bpf_core_field_exists(t->thread_info.status) &&
		    (BPF_CORE_READ(t, thread_info.status) & PMT_TS_COMPAT))
			return 1;
	}
#endif
	key = (__u32)(dir * PMT_SYS_NRS + nr);
	id = bpf_map_lookup_elem(&pmt_sysnr, &key);
	if (!id || !*id)
		return 1;
	return pmt_tp_body(ctx, *id - 1, PMT_TP_FULL);
}

char LICENSE[] SEC("license") = "GPL";
