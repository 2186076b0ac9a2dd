// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Target tracking for -p and -- CMD: pmt_targets holds the tgids traced.
 * Loaded only when a target is given.
 *
 * A command is inserted PENDING right after fork, while it waits for the
 * go-ahead; its exec turns it ACTIVE, so nothing pmtrace's own child code
 * does before exec is traced (like perf's enable_on_exec; see pmt_exec).
 * Children of an ACTIVE task become ACTIVE when forked.
 *
 * Raw tracepoints, not perf-event ones: detaching a perf-event tracepoint
 * costs an RCU grace period under a global mutex (~75 ms each here), a raw
 * tracepoint's detach frees asynchronously.
 */
#include "common.bpf.h"

/* Set when the targets' children are followed (-- CMD, not -p). */
const volatile bool pmt_follow_forks = false;

SEC("raw_tp/sched_process_fork")
int pmt_fork(__u64 *ctx)
{
	/* TP_PROTO(struct task_struct *parent, struct task_struct *child);
	 * ctx: struct bpf_raw_tracepoint_args' args[], read as the u64s it
	 * is (uapi), not through CO-RE, whose relocation of a type costs
	 * libbpf a search of all the kernel's types at each start */
	struct task_struct *child_task = (void *)ctx[1];
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 active = PMT_TARGET_ACTIVE, *st;
	__u32 child;

	if (!pmt_follow_forks)
		return 0;
	st = bpf_map_lookup_elem(&pmt_targets, &tgid);
	if (!st || *st != PMT_TARGET_ACTIVE)
		return 0;
	/* For a new thread this adds its tid, which is harmless: lookups
	 * are by tgid, already present. */
	child = BPF_CORE_READ(child_task, pid);
	if (bpf_map_update_elem(&pmt_targets, &child, &active, BPF_ANY))
		pmt_stat_inc(PMT_STAT_TARGET_FULL);
	return 0;
}

/*
 * A task leaves the targets when it is freed, not when it exits: the
 * probes of its exit (sched:sched_process_exit, a kprobe on do_exit, ...)
 * run after this program wherever it was attached first, which it always
 * is, and must still see it traced. sched_process_free comes after the
 * task is reaped, an RCU grace period after its pid was given back; a pid
 * reused within that grace period is treated as the old target's.
 */
SEC("raw_tp/sched_process_free")
int pmt_exit(__u64 *ctx)
{
	/* TP_PROTO(struct task_struct *p) */
	struct task_struct *task = (void *)ctx[0];
	__u32 tid = BPF_CORE_READ(task, pid);

	/* a thread's own entry (pmt_fork adds one per clone); the group's
	 * with its leader (pid == tgid), the last of the group freed */
	bpf_map_delete_elem(&pmt_targets, &tid);
	return 0;
}

/*
 * The command becomes traced where perf's enable_on_exec enables its
 * counters: in begin_new_exec(), which renames the task (task_rename),
 * before the new image faults its pages in and before the exec's own
 * sched_process_exec. Waiting for sched_process_exec missed the exec's
 * page faults, and the exec event itself whenever the streaming program
 * ran before this one there (always while perf recorded it too).
 */
SEC("raw_tp/task_rename")
int pmt_exec(void *ctx __attribute__((unused)))
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u8 *st = bpf_map_lookup_elem(&pmt_targets, &tgid);

	if (st && *st == PMT_TARGET_PENDING)
		*st = PMT_TARGET_ACTIVE;
	return 0;
}
