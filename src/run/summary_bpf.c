// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The summary on stderr at the end of a run: events per probe, and every
 * loss and refusal with its cause (summary.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/maps.h"
#include "run/session.h"
#include "symbols/symbols.h"
#include "run/summary.h"
#include "util/log.h"
#include "util/machine.h"
#include "util/strutil.h"

/* The kernel side's counts of what it could not do, each with its cause:
 * "N <what>". */
static void warn_stats(const uint64_t *st)
{
	static const struct {
		enum pmt_stat stat;
		const char *what;
	} causes[] = {
		{PMT_STAT_OUTPUT_ERR, "events could not be written to a perf buffer"},
		{PMT_STAT_TARGET_FULL, "child processes of the command were not traced: target "
				       "map full"},
		{PMT_STAT_FILTER_ABORT,
		 "events rejected because a filter walk did not end (a bug)"},
		{PMT_STAT_STACK_FULL, "samples lost their stack: the stack table (two per "
				      "--max-keys) is full of stacks whose keys were not stored"},
		{PMT_STAT_STACK_COLLISION, "samples lost their stack: other stacks of their "
					   "process held every slot it could take"},
		{PMT_STAT_STACK_ERR, "samples lost their stack: the kernel could not store it"},
		{PMT_STAT_LAT_FULL, "latency starts could not be stored"},
		{PMT_STAT_XGEN_BACK, "updates lost: a probe's generated program could not "
				     "return to its aggregation (a bug; PMT_NO_XGEN=1 avoids it)"},
		{PMT_STAT_OFFCPU_FULL, "switches off the CPU not timed: the table of threads off "
				       "the CPU was full"},
		{PMT_STAT_PY_NEW_FULL, "Python code objects were not read while their process "
				       "lived (the queue was full): their frames may show as "
				       "[python]"},
		{PMT_STAT_COUNTER_READ, "--counter reads failed (their calls count 0 there)"},
		{PMT_STAT_COUNTER_UNSEEN,
		 "times a thread ran on a CPU with no sched_switch telling its arrival: "
		 "--counter did not count it there until it was next seen (the kernel "
		 "skipped the tracepoint)"},
	};
	size_t i;

	for (i = 0; i < sizeof(causes) / sizeof(causes[0]); i++)
		if (st[causes[i].stat])
			pmt_warn("%llu %s", (unsigned long long)st[causes[i].stat], causes[i].what);
}

/* Reads that failed, in all and in each probe that had some. */
static void warn_read_faults(struct pmt_session *s, const uint64_t *st)
{
	static const struct {
		enum pmt_stat stat;
		const char *what;
	} kinds[2] = {
		{PMT_STAT_STR_FAULT, "str() reads failed (a page the process had not touched, or "
				     "a bad address): keys and --str show <fault>; filters see an "
				     "empty string"},
		{PMT_STAT_MEMBER_FAULT, "members could not be read (a NULL pointer on the chain, "
					"or memory the kernel would not read): they read 0"},
	};
	uint32_t i;
	int m;

	for (m = 0; m < 2; m++) {
		if (!st[kinds[m].stat])
			continue;
		pmt_warn("%llu %s", (unsigned long long)st[kinds[m].stat], kinds[m].what);
		for (i = 0; i < s->probes.n; i++) {
			uint64_t n = pmt_session__read_faults(s, i, m);

			if (n)
				pmt_eprintf("    %llu in %s\n", (unsigned long long)n,
					    s->probes.v[i].name);
		}
	}
}

/* User stacks that ended short of their outermost frame for a reason
 * no other line says, in the kernel or finished from their copy: one
 * line, each reason's count. */
static void say_short_stacks(const struct pmt_unwinder *u, const uint64_t *st)
{
	char deep[64], copied[80], line[512];
	const struct {
		uint64_t n;
		const char *why;
	} r[] = {
		{st[PMT_STAT_UNWIND_DEPTH] + pmt_unwinder__ended_as(u, PMT_STAT_UNWIND_DEPTH),
		 deep},
		{st[PMT_STAT_UNWIND_EXITING],
		 "of a process exiting (its memory gone: its last pc alone)"},
		{st[PMT_STAT_UNWIND_UNREAD] + pmt_unwinder__ended_as(u, PMT_STAT_UNWIND_UNREAD),
		 "at stack memory the kernel could not read, or a rule that led nowhere"},
		{pmt_unwinder__beyond_copy(u), copied},
	};
	uint64_t all = 0;
	size_t i, at = 0;

	snprintf(deep, sizeof(deep), "deeper than the %u frames a stack keeps", PMT_STACK_KEPT);
	snprintf(copied, sizeof(copied), "deeper than the %u bytes of stack copied to finish them",
		 PMT_DUMP_BYTES);
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		if (!r[i].n)
			continue;
		all += r[i].n;
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%s%llu %s", at ? ", " : "",
				       (unsigned long long)r[i].n, r[i].why);
	}
	if (all)
		pmt_info("%llu user stacks end early: %s", (unsigned long long)all, line);
}

/* How user stacks were unwound, where that fell short, and what the
 * unwind tables cost. */
static void say_unwind(const struct pmt_evloop *l, const struct pmt_session *s, const uint64_t *st)
{
	const struct pmt_unwinder *u = &s->unwind;
	uint64_t no_text =
		st[PMT_STAT_UNWIND_ENDED] + pmt_unwinder__ended_as(u, PMT_STAT_UNWIND_ENDED);

	if (no_text)
		pmt_info("%llu user stacks end early: a caller found by frame pointers (code "
			 "without CFI) lay in no text mapping",
			 (unsigned long long)no_text);
	say_short_stacks(u, st);
	if (st[PMT_STAT_UNWIND_PENDING])
		pmt_info("%llu user stacks met a file whose unwind tables were still being read, "
			 "and may end early there (a busy machine reads them later)",
			 (unsigned long long)st[PMT_STAT_UNWIND_PENDING]);
	if (st[PMT_STAT_DEFER_CUT])
		pmt_info(
			"%llu user stacks end early at a file whose unwind tables were not read "
			"yet, or a mapping the kernel had not learned: the event rings had no room "
			"to take them to be finished (their counts kept; a larger --buffer-pages, "
			"now %d)",
			(unsigned long long)st[PMT_STAT_DEFER_CUT], l->pages);
	if (l->resumed)
		pmt_info(
			"%llu user stacks met a file whose unwind tables were not read yet, or a "
			"mapping the kernel had not learned: finished from the copy of their stack "
			"(%llu of them end early there)",
			(unsigned long long)l->resumed, (unsigned long long)l->resumed_short);
	if (st[PMT_STAT_PY_NOFRAME])
		pmt_info("%llu user stacks pass through a Python eval loop with no Python frame "
			 "read there (a sample between the loop's entry and its first frame, or "
			 "its frame's memory not readable)",
			 (unsigned long long)st[PMT_STAT_PY_NOFRAME]);
	if (l->resumed_nopy)
		pmt_info("%llu of those stacks lack Python frames: the kernel did not know their "
			 "interpreter yet when it copied them (its file was still to be read)",
			 (unsigned long long)l->resumed_nopy);
	if (l->resumed && pmt_verbose > 1)
		pmt_info("unwind: %.1f us of CPU a stack finished in user space, tables read for "
			 "them aside (%.1f ms in all, %.1f ms of it reading tables)",
			 (double)(l->resume_ns - s->unwind.resume_read_ns) / 1e3 /
				 (double)l->resumed,
			 (double)l->resume_ns / 1e6, (double)s->unwind.resume_read_ns / 1e6);
	if (s->unwind.files_given_back && pmt_verbose)
		pmt_info("unwind: %llu files no process mapped any more gave their tables back "
			 "(%llu rows, %llu of them taken again; %llu searches of every process's "
			 "mappings)",
			 (unsigned long long)s->unwind.files_given_back,
			 (unsigned long long)s->unwind.rows.given_back,
			 (unsigned long long)s->unwind.rows.taken_again,
			 (unsigned long long)s->unwind.reclaims);
	if (s->unwind.gone_not_reread)
		pmt_info("unwind: %llu times a file of a process gone was not read again for its "
			 "late stacks (its rows had gone back): they end there",
			 (unsigned long long)s->unwind.gone_not_reread);
	if (s->unwind.rereads.reads)
		pmt_info(
			"unwind: %llu files read again after their tables went back (%llu reads; "
			"each kept longer before it may go again): PMT_UNWIND_ROWS may be too small",
			(unsigned long long)s->unwind.rereads.files,
			(unsigned long long)s->unwind.rereads.reads);
}

/* What the kernel side could not do, said as warnings (nothing is ever
 * dropped silently); returns the events lost to full rings. */
static uint64_t warn_drops(struct pmt_evloop *l, struct pmt_session *s, const uint64_t *st)
{
	uint64_t *per_cpu = calloc((size_t)s->ncpus, sizeof(*per_cpu)), lost, missed;
	int cpu;

	lost = pmt_evloop__lost(l, per_cpu);
	if (lost) {
		pmt_warn("lost %llu events: the perf buffers were full", (unsigned long long)lost);
		for (cpu = 0; per_cpu && cpu < s->ncpus; cpu++)
			if (per_cpu[cpu])
				pmt_eprintf("    CPU %d: %llu lost\n", cpu,
					    (unsigned long long)per_cpu[cpu]);
		pmt_hint("a larger --buffer-pages (now %d) or fewer probes", l->pages);
	}
	free(per_cpu);
	missed = pmt_session__missed(s);
	if (missed)
		pmt_warn("%llu events not seen: the kernel runs no BPF program while another "
			 "runs on the same CPU (events in interrupts that came during one)",
			 (unsigned long long)missed);
	warn_stats(st);
	warn_read_faults(s, st);
	if (pmt_aggmaps__lost_stacks(s->aggmaps))
		pmt_warn(
			"%llu samples lost their stack: the kernel gave its key to another stack "
			"of their process after a drain took theirs from its table, and the sample "
			"could be either's",
			(unsigned long long)pmt_aggmaps__lost_stacks(s->aggmaps));
	if (pmt_aggmaps__lost_keys(s->aggmaps))
		pmt_warn("%llu aggregation updates dropped: the totals hold %llu keys at most "
			 "(%d per --max-keys)",
			 (unsigned long long)pmt_aggmaps__lost_keys(s->aggmaps),
			 (unsigned long long)s->opts->agg.max_keys * PMT_TOTALS_PER_KEY,
			 PMT_TOTALS_PER_KEY);
	if (st[PMT_STAT_AGG_FULL])
		pmt_warn("%llu aggregation updates dropped: --max-keys %d is full",
			 (unsigned long long)st[PMT_STAT_AGG_FULL], s->opts->agg.max_keys);
	say_unwind(l, s, st);
	if (st[PMT_STAT_OFFCPU_UNSEEN])
		pmt_info("--offcpu: %llu times a thread left a CPU with no sched_switch telling "
			 "its arrival since it last left one: its time off was the time gone less "
			 "its run time meanwhile (the scheduler's count)",
			 (unsigned long long)st[PMT_STAT_OFFCPU_UNSEEN]);
	if (l->malformed)
		pmt_warn("%llu malformed records skipped", (unsigned long long)l->malformed);
	return lost;
}

/* What this user may not read, said once at the end: kernel symbols,
 * other users' processes, and perf maps another user wrote for a process
 * (not read, as perf refuses them: a user must not name another's
 * frames) */
static void warn_unread(struct pmt_session *s)
{
	struct pmt_syms_stats st;
	uint64_t caps;

	pmt_syms__stats(s->syms, &st);
	/* what a capability would change, said to who lacks it (root may
	 * be refused too: a PID 1 of another namespace, kptr_restrict 2) */
	caps = pmt_caps_effective();
	if (st.ksyms_hidden && !(caps & (1ULL << PMT_CAP_SYSLOG)))
		pmt_warn("kernel frames unknown: /proc/kallsyms shows this user no addresses; "
			 "kernel symbols need CAP_SYSLOG (or root)");
	if (st.denied && !(caps & (1ULL << PMT_CAP_SYS_PTRACE)))
		pmt_warn("%llu process%s of other users not read (the first: pid %u): their user "
			 "frames stay unknown; reading them needs CAP_SYS_PTRACE (or root)",
			 (unsigned long long)st.denied, st.denied == 1 ? "" : "es", st.denied_pid);
	if (!st.jit_refused)
		return;
	pmt_warn("%llu perf map%s not read: /tmp/perf-%u.map%s is owned by uid %u, neither "
		 "its process's user nor root; the JIT frames it would name stay unknown",
		 (unsigned long long)st.jit_refused, st.jit_refused == 1 ? "" : "s",
		 st.jit_refused_pid, st.jit_refused == 1 ? "" : " (the first)", st.jit_refused_uid);
}

/* -v: what the symbolizer read, and what it spared reading */
static void info_syms(struct pmt_session *s)
{
	struct pmt_syms_stats st;

	if (!pmt_verbose || !s->syms)
		return;
	pmt_syms__stats(s->syms, &st);
	if (st.py_read || st.py_copied)
		pmt_info("Python code objects: %llu read from processes, %llu shared (an "
			 "interpreter's own, read before)",
			 (unsigned long long)st.py_read, (unsigned long long)st.py_copied);
	if (st.debug_made || st.debug_used)
		pmt_info("debug files' uncompressed copies: %llu made, %llu used",
			 (unsigned long long)st.debug_made, (unsigned long long)st.debug_used);
}

void pmt_summary__print(struct pmt_evloop *l, struct pmt_session *s)
{
	uint64_t lost, st[PMT_STAT__MAX];
	uint64_t filtered = 0, *pf;
	uint32_t i, silent = 0;

	/* each is a per-CPU map lookup: read them once */
	for (i = 0; i < PMT_STAT__MAX; i++)
		st[i] = pmt_session__stat(s, (enum pmt_stat)i);
	lost = warn_drops(l, s, st);
	warn_unread(s);
	info_syms(s);
	if (pmt_quiet)
		return;
	if (s->opts->agg.fn) {
		for (i = 0; i < s->probes.n; i++)
			filtered += pmt_session__filtered(s, i);
		if (filtered)
			pmt_eprintf("pmtrace: %llu events filtered out in the kernel\n",
				    (unsigned long long)filtered);
		if (s->opts->agg.lat_start && st[PMT_STAT_LAT_NOSTART])
			pmt_eprintf(
				"pmtrace: %llu end events had no start (begun before tracing, or not matched)\n",
				(unsigned long long)st[PMT_STAT_LAT_NOSTART]);
		return;
	}
	pf = calloc(s->probes.n ? s->probes.n : 1, sizeof(*pf));
	for (i = 0; pf && i < s->probes.n; i++)
		filtered += pf[i] = pmt_session__filtered(s, i);
	pmt_eprintf("pmtrace: %llu events, %llu lost", (unsigned long long)l->events,
		    (unsigned long long)lost);
	if (filtered)
		pmt_eprintf(", %llu filtered out in the kernel", (unsigned long long)filtered);
	pmt_eprintf("\n");
	for (i = 0; i < s->probes.n; i++) {
		if (!pmt_session__hits(s, i) && s->probes.n > 20) {
			silent++;
			continue;
		}
		pmt_eprintf("%12llu  %s", (unsigned long long)pmt_session__hits(s, i),
			    s->probes.v[i].name);
		if (pf && s->probes.v[i].filter)
			pmt_eprintf("  (%llu filtered)", (unsigned long long)pf[i]);
		pmt_eprintf("\n");
	}
	free(pf);
	if (silent)
		pmt_eprintf("%12s  (%u more probes had no events)\n", "", silent);
}
