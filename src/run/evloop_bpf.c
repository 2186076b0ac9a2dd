// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One perf ring per CPU, opened by libbpf's perf_buffer__new_raw so we pick
 * the wakeup policy: the kernel wakes us when a ring is 1/8 full (not per
 * record, libbpf's default), and a short epoll timeout drains the rest, so a
 * quiet trace still shows its events within ~50 ms.
 *
 * Ordering: before draining, note the time T. Every event stamped before T
 * is in a ring by then (modulo the few ns between stamp and commit: SLACK),
 * so after the drain everything up to T - SLACK can be merged and written.
 */
#include <errno.h>
#include <malloc.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include "symbols/symbols.h"
#include <bpf/libbpf.h>
#include "abi.h"
#include "tracefs/render.h"
#include "probes/stackrec.h"
#include "aggregate/maps.h"
#include "output/printf.h"
#include "run/evloop.h"
#include "symbols/sideband.h"
#include "util/log.h"
#include "util/strutil.h"
#include "target/signals.h"
#include "pmtrace.skel.h"

#define POLL_MS 50
/* mappings are followed: read their records this often at least */
#define SIDEBAND_MS 100
/* aggregating: how often at least the new keys in the kernel's hash are
 * looked at (src/aggregate/maps_bpf.c drains it when a quarter of it was
 * taken since, and asks for the next look sooner while keys come fast;
 * one read of a per-CPU counter) */
#define DRAIN_MS 50
/* aggregating a profile (-e events at --freq, nothing streamed): its
 * keys come no faster than its samples, so the loop sleeps this long
 * while nothing waits in it; the rings' watermarks wake it sooner */
#define QUIET_MS 250
#define SLACK_NS (5 * 1000 * 1000ULL)
/* while writing out: drain the rings after this many records */
#define REFILL_EVERY 1024
#define LOST_REPORT_NS (1000 * 1000 * 1000ULL)
/* a file's DWARF unused this long is closed (pmt_syms__let_go), looked
 * for once a second */
#define DWARF_IDLE_NS (10 * 1000 * 1000 * 1000ULL)
#define LET_GO_EVERY_NS (1000 * 1000 * 1000ULL)

struct raw_sample {
	struct perf_event_header header;
	__u32 size;
	char data[];
};

struct lost_record {
	struct perf_event_header header;
	__u64 id;
	__u64 lost;
};

/* Bytes before each record's header (struct pmt_event): --printf's
 * numbers, join()'s strings, --str's strings, then the thread's counts
 * with streamed --counter. */
static size_t join_size(const struct pmt_evloop *l)
{
	return l->s->join ? sizeof(struct pmt_join_rec) : 0;
}

static size_t strs_size(const struct pmt_evloop *l)
{
	return (size_t)l->s->nvals * 8 + join_size(l) + (size_t)l->s->nstrs * PMT_STREAM_STR_LEN;
}

static size_t prefix_size(const struct pmt_evloop *l)
{
	return strs_size(l) +
	       (l->s->counter.stream ? l->s->counter.n * sizeof(struct pmt_counter_rec) : 0);
}

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct pmt_evloop *l = ctx;

	if (h->type == PERF_RECORD_SAMPLE) {
		const struct raw_sample *rs = (const void *)h;
		/* --counter's counts come first (struct pmt_event) */
		size_t pre = prefix_size(l);
		struct pmt_event_hdr hdr, *eh = &hdr;

		/* the raw data lies 4 bytes past an 8-byte boundary: the
		 * header read from a copy (the reorder queue's copy, which
		 * emit reads, is aligned) */
		if (rs->size < pre + sizeof(hdr)) {
			l->malformed++;
			return LIBBPF_PERF_EVENT_CONT;
		}
		memcpy(&hdr, (const char *)rs->data + pre, sizeof(hdr));
		if (eh->size + (size_t)(eh->nkernel + eh->nuser) * 8 + eh->dump >
		    rs->size - pre - sizeof(*eh)) {
			l->malformed++;
			return LIBBPF_PERF_EVENT_CONT;
		}
		/* user addresses are symbolized when written, after the reorder
		 * window: without the kernel's process records, read the
		 * process's mappings now, while it still lives */
		if (l->user_syms && !l->sb)
			pmt_syms__note_pid(l->syms, eh->pid);
		/* a stack left for user space: the files it met are read now,
		 * while the record waits out the reorder window */
		if (eh->dump || eh->probe_id == PMT_PROBE_AGG_DEFERRED)
			pmt_unwinder__wake(&l->s->unwind);
		/* the record, and a tracepoint's frames after it, and a user
		 * stack's dump after them */
		pmt_reorder__push(&l->ro, cpu, eh->ts, rs->data,
				  pre + sizeof(*eh) + eh->size +
					  (size_t)(eh->nkernel + eh->nuser) * 8 + eh->dump);
		if (pmt_reorder__held(&l->ro, cpu) >= l->ro_cpu_max) {
			l->ro_full = true;
			return LIBBPF_PERF_EVENT_DONE; /* the rest stays in the ring */
		}
	} else if (h->type == PERF_RECORD_LOST) {
		l->lost[cpu] += ((const struct lost_record *)h)->lost;
	}
	return LIBBPF_PERF_EVENT_CONT;
}

/* Read every ring into the reorder queue, each up to its CPU's share
 * (on_record leaves the rest in a ring whose CPU's queue is full) */
static int consume_rings(struct pmt_evloop *l)
{
	size_t i, n = perf_buffer__buffer_cnt(l->pb);
	int err;

	for (i = 0; i < n; i++)
		if ((err = perf_buffer__consume_buffer(l->pb, i)) < 0)
			return err;
	return 0;
}

/*
 * A user stack the kernel stopped at a file whose tables it did not have
 * yet: its n frames (after nk kernel ones) and the rest from the copy of
 * the stack it sent (struct pmt_ustack_dump, len bytes at dump), now that
 * the tables are read (or read here), into l->frames, at most max user
 * frames in all; how many frames in all (0: none to be had).
 */
static uint32_t finish_frames(struct pmt_evloop *l, uint32_t pid, const uint64_t *in, uint32_t n,
			      uint32_t nk, const void *dump, size_t len, uint32_t max)
{
	const struct pmt_ustack_dump *d = dump;
	uint64_t t0, py[PMT_PY_DUMP];
	struct pmt_resume got;

	if (len < sizeof(*d) || d->size > PMT_DUMP_BYTES || d->npy > PMT_PY_DUMP ||
	    PMT_DUMP_LEN(d->size, d->npy) != len || n < nk || n - nk > max || nk > PMT_STACK_DEPTH)
		return 0;
	memcpy(py, (const char *)dump + PMT_DUMP_PY_AT(d->size), d->npy * sizeof(*py));
	if (!l->frames && !(l->frames = malloc(2 * PMT_STACK_DEPTH * sizeof(*l->frames))))
		return 0;
	memcpy(l->frames, in, n * sizeof(*in));
	l->resumed++;
	t0 = pmt_thread_cpu_ns();
	got = pmt_unwinder__resume(&l->s->unwind, pid, d, d + 1, py, l->frames + n, max - (n - nk));
	l->resume_ns += pmt_thread_cpu_ns() - t0;
	if (got.end != PMT_RESUME_WHOLE)
		l->resumed_short++;
	if (got.py_short)
		l->resumed_nopy++;
	return n + got.n;
}

/* A streamed record's frames: the kernel's and those it unwound (after
 * the record, or inside one a program built), and a user stack the
 * kernel left finished from its dump, as perf's DWARF mode would print
 * it. How many; *nk of them the kernel's. */
static uint32_t record_frames(struct pmt_evloop *l, const struct pmt_event_hdr *eh, size_t avail,
			      const struct pmt_record *r, const uint64_t **frames, uint32_t *nk)
{
	const char *base = (const char *)(eh + 1) + eh->size, *dump;
	size_t nf = (size_t)(eh->nkernel + eh->nuser), off = (size_t)(base - (const char *)eh);
	size_t tail = avail > off ? avail - off : 0; /* bytes from base to the end */
	const uint64_t *after;
	uint32_t n = 0, all;

	/* frames and dump lie where the tracepoint's data ended: read from
	 * an aligned copy when that is not a multiple of 8 */
	if (((uintptr_t)base & 7) && tail && (nf || eh->dump)) {
		if (tail > l->aligned_cap) {
			void *p = realloc(l->aligned, tail);

			if (!p)
				return 0;
			l->aligned = p;
			l->aligned_cap = tail;
		}
		memcpy(l->aligned, base, tail);
		base = (const char *)l->aligned;
	}
	after = (const uint64_t *)base;
	dump = base + nf * 8;
	*frames = NULL;
	*nk = 0;
	if (nf && tail >= nf * 8) {
		*frames = after;
		*nk = eh->nkernel;
		n = (uint32_t)(eh->nkernel + eh->nuser);
	} else if (l->s->stack && r->fmt) {
		n = pmt_stackrec__frames(r->fmt, r->data, r->len, frames, nk);
	}
	if (!eh->dump || !(l->s->stack & PMT_STACK_USER) || tail < nf * 8 + eh->dump)
		return n;
	all = finish_frames(l, eh->pid, *frames, n, *nk, dump, eh->dump, PMT_STACK_KEPT);
	if (!all)
		return n; /* a dump not to be read: the frames the kernel had */
	*frames = l->frames;
	return all;
}

/* The record's addresses named before any output sees it: its
 * provider's address (a PMU sample's ip) and the stack. */
static void name_record(struct pmt_evloop *l, const struct pmt_probe *p,
			const struct pmt_event_hdr *eh, size_t avail, struct pmt_record *r)
{
	const uint64_t *frames;
	uint32_t n, nk;
	uint64_t ip;

	r->named = NULL;
	if (p->prov->record_ip ? !p->prov->record_ip(r, &ip)
			       : !l->s->stack && !(eh->nkernel + eh->nuser))
		return;
	pmt_named__reset(&l->named);
	if (p->prov->record_ip)
		pmt_named__sym(&l->named, l->syms, r->pid, ip);
	n = record_frames(l, eh, avail, r, &frames, &nk);
	l->named.stack = l->s->stack && r->fmt && (frames || r->len >= r->fmt->fixed_size);
	pmt_named__frames(&l->named, l->syms, r->pid, frames, n, nk, l->out->mode == PMT_OUT_JSON);
	r->named = &l->named;
}

/* An aggregation's update whose user stack the kernel left (struct
 * pmt_agg_deferred): added to the totals with its stack finished. */
static void finish_update(struct pmt_evloop *l, const struct pmt_event_hdr *eh, size_t avail)
{
	struct pmt_agg_deferred d;
	const uint64_t *frames;
	uint32_t n;

	if (avail < sizeof(*eh) + eh->size || eh->size < sizeof(d)) {
		l->malformed++;
		return;
	}
	memcpy(&d, eh + 1, sizeof(d));
	if (sizeof(d) + (size_t)d.nuser * 8 + d.dump != eh->size) {
		l->malformed++;
		return;
	}
	frames = (const void *)((const char *)(eh + 1) + sizeof(d));
	n = finish_frames(l, eh->pid, frames, d.nuser, 0, frames + d.nuser, d.dump, PMT_STACK_KEPT);
	if (pmt_aggmaps__add_finished(l->s->aggmaps, &d.key, d.value, eh->pid, l->frames, n,
				      eh->ts) == -ENOMEM)
		pmt_warn("no memory for an aggregation's update");
}

static void emit(void *ctx, int cpu, const void *data, size_t len)
{
	struct pmt_evloop *l = ctx;
	size_t pre = prefix_size(l);
	const struct pmt_event_hdr *eh = (const void *)((const char *)data + pre);
	struct pmt_probe *p;
	struct pmt_record r;
	uint32_t i;

	if (eh->probe_id == PMT_PROBE_AGG_DEFERRED) {
		pmt_sideband__apply_until(l->sb, eh->ts);
		finish_update(l, eh, len - pre);
		return;
	}
	p = pmt_session__probe(l->s, eh->probe_id);
	if (!p) {
		l->malformed++;
		return;
	}
	/* named against the mappings of its time */
	pmt_sideband__apply_until(l->sb, eh->ts);
	p->events++;
	l->events++;
	r.ts = eh->ts;
	r.cpu = (uint32_t)cpu;
	r.pid = eh->pid;
	r.tid = eh->tid;
	r.comm = eh->comm;
	r.comm_len = sizeof(eh->comm);
	r.event = p->name;
	r.fmt = p->fmt;
	r.data = eh + 1;
	r.len = eh->size;
	r.truncated = eh->size >= PMT_MAX_DATA;
	/* the thread's counts before eh, --str's strings before them */
	r.ncounters = l->s->counter.stream ? l->s->counter.n : 0;
	r.counters = l->s->counter.names;
	r.counts = (const char *)data + strs_size(l);
	r.vals = data;
	r.nvals = l->s->nvals;
	r.print = p->print;
	r.join = l->s->join ? (const void *)((const char *)data + (size_t)l->s->nvals * 8) : NULL;
	r.strs = (const char *)data + (size_t)l->s->nvals * 8 + join_size(l);
	r.nstrs = l->s->nstrs;
	r.str_names = l->s->str_name_v;
	r.str_mask = 0;
	for (i = 0; i < r.nstrs; i++)
		r.str_mask |= (p->strs[i].src == PMT_FSRC_PTR_STR) << i;
	name_record(l, p, eh, len - pre, &r);
	pmt_output__record(l->out, &r);
	/* Writing a batch takes long enough for the rings to fill behind
	 * it: take in what arrived every so often (it is queued behind the
	 * cutoff, data above is not touched again), each CPU's up to its
	 * share (ro_cpu_max). Not once stopping: a
	 * reader behind its rings (pmtrace sampling itself on one slow CPU)
	 * would find records older than the cutoff at every refill and
	 * never return to see the signal; the last drain, after the
	 * programs stop, takes in the rest. */
	if (!(l->events % REFILL_EVERY) && l->pb && !pmt_signalled)
		consume_rings(l);
}

static uint64_t lost_records(const struct pmt_evloop *l)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < l->s->ncpus; i++)
		sum += l->lost[i];
	return sum;
}

uint64_t pmt_evloop__lost(const struct pmt_evloop *l, uint64_t *per_cpu)
{
	uint64_t *full = pmt_session__stat_cpus(l->s, PMT_STAT_RING_FULL);
	uint64_t *cut = pmt_session__stat_cpus(l->s, PMT_STAT_DEFER_CUT), sum = 0, n;
	int i;

	for (i = 0; i < l->s->ncpus; i++) {
		n = l->lost[i];
		if (cut)
			n = n > cut[i] ? n - cut[i] : 0;
		if (full && full[i] > n)
			n = full[i];
		if (per_cpu)
			per_cpu[i] = n;
		sum += n;
	}
	free(full);
	free(cut);
	return sum;
}

/* Text lines of tracepoints print what their print fmt says (a format
 * libtraceevent cannot evaluate keeps name=value fields). */
static void add_renderers(struct pmt_evloop *l)
{
	uint32_t i;

	for (i = 0; i < l->s->probes.n; i++) {
		struct pmt_probe *p = &l->s->probes.v[i];

		if (!p->prov->renders || p->action != PMT_ACT_STREAM || !p->fmt || !p->fmt->tep_ev)
			continue;
		if (pmt_render__enable(p->fmt) && pmt_verbose)
			pmt_info(
				"%s: its print format cannot be evaluated: fields shown as name=value",
				p->name);
	}
}

/* User addresses are named through the mappings of their processes:
 * follow them from now on, and read those already running. */
static void follow_processes(struct pmt_evloop *l)
{
	const struct pmt_opts *o = l->s->opts;

	struct pmt_error e = {0};

	/* not the run's end: told, and the run goes on */
	if (pmt_sideband__open(&l->sb, l->syms, &e)) {
		pmt_error__hint(&e, "processes are read from /proc when first met: "
				    "short-lived ones may show [unknown] frames");
		pmt_error__print(&e);
	}
	if (o->system_wide)
		pmt_syms__note_all(l->syms);
	else if (o->pid)
		pmt_syms__note_pid(l->syms, (uint32_t)o->pid);
}

static void settle_at_bound(void *ctx);

/* Do the records carry user addresses to name? User stacks, and PMU
 * samples' ip; a printf names them by usym() alone: a PMU sample's ip is
 * named where the record is printed as perf script prints it, not by a
 * printf (a program's interval block, run by a clock event) */
static bool names_user_addrs(const struct pmt_session *s)
{
	bool any = s->stack & PMT_STACK_USER;
	uint32_t i;

	for (i = 0; i < s->probes.n; i++)
		any |= (s->probes.v[i].prov->user_addrs && !s->probes.v[i].print) ||
		       pmt_print__names(s->probes.v[i].print, true);
	return any;
}

/* The bytes a CPU's events may wait for ordering (ro_cpu_max): its ring's
 * size, times the rings' growth for many probes (their bursts are many
 * probes' events), within the rings' budget. Past it on_record leaves
 * the ring unread and drain writes out what is held, even if a CPU lags
 * behind: a writer slower than the events loses them in the kernel's
 * rings, counted and said, instead of holding them without bound. */
static size_t queue_share(const struct pmt_evloop *l, size_t page)
{
	const struct pmt_opts *o = l->s->opts;
	size_t ring = (size_t)l->pages * page, n;

	n = l->pages > o->buffer_pages ? (size_t)(l->pages / o->buffer_pages) * ring : ring;
	/* user stacks wait here for the unwinder by design (finished from
	 * their copies, named at write): the budget, as a queue's bound */
	if (l->s->stack & PMT_STACK_USER)
		n = PMT_RING_BUDGET;
	if (n > PMT_RING_BUDGET / (size_t)l->s->ncpus)
		n = PMT_RING_BUDGET / (size_t)l->s->ncpus;
	return n < ring ? ring : n;
}

/*
 * A session aggregating samples of -e events at --freq alone (no
 * program's blocks, nothing streamed) makes no more keys a second than
 * freq samples a CPU (four times that, for the kernel's frequency
 * adjustment): the hash's look and the loop's sleep can be as long as
 * half the time that takes to fill the room left past a drain's quarter,
 * up to QUIET_MS. An always-on profile's loop then wakes 4 times a
 * second, not 20; the sideband's rings wake it at half full.
 */
static void quiet_profile(struct pmt_evloop *l)
{
	const struct pmt_opts *o = l->s->opts;
	double rate = 4.0 * o->freq * l->s->ncpus, ms;
	size_t i;

	if (o->period || !o->freq)
		return;
	for (i = 0; i < l->s->probes.n; i++)
		if (strcmp(l->s->probes.v[i].prov->name, "perf_event") ||
		    l->s->probes.v[i].block >= 0)
			return;
	ms = (double)o->agg.max_keys * 3 / 4 / rate / 2 * 1000;
	if (ms < DRAIN_MS)
		return;
	l->look_ms = ms > QUIET_MS ? QUIET_MS : (int)ms;
	l->quiet = true;
}

int pmt_evloop__init(struct pmt_evloop *l, struct pmt_session *s, struct pmt_output *out)
{
	const struct pmt_opts *o = s->opts;
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_type = PERF_SAMPLE_RAW,
		.sample_period = 1,
		.watermark = 1,
	};
	LIBBPF_OPTS(perf_buffer_raw_opts, popts);
	int *cpus = NULL, n = 0, i, err;

	memset(l, 0, sizeof(*l));
	l->s = s;
	l->out = out;
	l->syms = pmt_session__syms(s); /* the session's, made here once */
	l->user_syms = names_user_addrs(s);
	l->lost = calloc((size_t)s->ncpus, sizeof(*l->lost));
	if (!l->lost || pmt_reorder__init(&l->ro, s->ncpus))
		return -ENOMEM;
	if (l->user_syms || pmt_agg__wants_pids(s->agg))
		follow_processes(l);
	pmt_syms__on_bound(l->syms, settle_at_bound, l);
	/* aggregating only: nothing comes through perf rings, but updates
	 * whose user stacks the kernel left for user space to finish */
	for (i = 0; i < (int)s->probes.n && s->probes.v[i].action != PMT_ACT_STREAM; i++)
		;
	l->look_ms = DRAIN_MS;
	if (i == (int)s->probes.n && s->aggmaps)
		quiet_profile(l);
	if (i == (int)s->probes.n && !s->skel->rodata->pmt_agg_defer)
		return 0;
	if (!o->json && !o->raw)
		add_renderers(l);
	if (s->filter_cpu) {
		cpus = calloc((size_t)s->ncpus, sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		for (i = 0; i < s->ncpus; i++)
			if (s->cpu_mask[i / 64] & (1ULL << (i % 64)))
				cpus[n++] = i;
		popts.cpu_cnt = n;
		popts.cpus = cpus;
		popts.map_keys = cpus;
	}
	l->pages = pmt_opts__ring_pages(o, s->probes.n, s->ncpus, page);
	for (;;) {
		attr.wakeup_watermark = (__u32)((size_t)l->pages * (size_t)page / 8 ?: 1);
		l->pb = perf_buffer__new_raw(bpf_map__fd(s->skel->maps.pmt_events),
					     (size_t)l->pages, &attr, on_record, l, &popts);
		/* rings chosen by the probes' number, not the user: smaller
		 * ones where the locked-memory limit refuses them */
		if (l->pb || o->buffer_pages_set || l->pages <= o->buffer_pages ||
		    (errno != ENOMEM && errno != EPERM))
			break;
		l->pages /= 2;
	}
	free(cpus);
	l->ro_cpu_max = queue_share(l, (size_t)page);
	if (!l->pb) {
		err = -errno;
		pmt_error__runtime(&s->err, err,
				   "cannot open the perf buffers (%d pages per CPU): %s", l->pages,
				   strerror(-err));
		if (err == -ENOMEM || err == -EPERM)
			pmt_error__hint(
				&s->err,
				"a smaller --buffer-pages, or a larger ulimit -l / perf_event_mlock_kb, may help");
		if (err == -ENODEV || err == -ENOENT)
			pmt_error__hint(&s->err, "-C names a CPU that is offline");
		return err;
	}
	return 0;
}

static void report_lost(struct pmt_evloop *l, uint64_t now)
{
	uint64_t records = lost_records(l), lost;

	if (records == l->lost_records_seen || now - l->last_report_ns < LOST_REPORT_NS)
		return;
	l->lost_records_seen = records;
	lost = pmt_evloop__lost(l, NULL);
	if (lost <= l->lost_reported)
		return;
	pmt_warn("lost %llu events so far (perf buffers full); a larger --buffer-pages may help",
		 (unsigned long long)lost);
	l->lost_reported = lost;
	l->last_report_ns = now;
}

/*
 * An aggregation by stack settles the processes that exited: once a
 * quarter of the bound waits, or every SETTLE_NS while some do, a drain
 * rebases their stacks onto their files, and they may go. Without it an
 * exited process waits for the next print (and past the bound of those
 * waiting, its frames would be [unknown]).
 */
#define SETTLE_NS (20 * 1000000000ULL)

/* The exited processes waiting now: their stacks rebased onto their
 * files, then reaped. */
static void settle_waiting(struct pmt_evloop *l, uint64_t now)
{
	size_t bound, waiting = pmt_syms__waiting(l->syms, &bound);

	l->settled_ns = now;
	if (!pmt_aggmaps__settle(l->s->aggmaps, l->syms))
		pmt_syms__reap_oldest(l->syms, waiting);
}

static void settle(struct pmt_evloop *l)
{
	size_t bound, waiting = pmt_syms__waiting(l->syms, &bound);
	uint64_t now;

	if (!waiting || !pmt_aggmaps__settles(l->s->aggmaps))
		return;
	now = pmt_now_ns();
	if (!l->settled_ns)
		l->settled_ns = now; /* the first comes SETTLE_NS in */
	if (waiting < bound / 4 && now - l->settled_ns < SETTLE_NS)
		return;
	/* the exits told so far are the ones settled: those that wait now
	 * (the first to go: they wait in the order they were told) */
	pmt_sideband__read(l->sb);
	settle_waiting(l, now);
}

/* The bound of exited processes waiting met while exits are told (one
 * round read many of them: a loop behind, beside busy CPUs): those told
 * so far are settled then, not forgotten. */
static void settle_at_bound(void *ctx)
{
	struct pmt_evloop *l = ctx;

	if (pmt_aggmaps__settles(l->s->aggmaps))
		settle_waiting(l, pmt_now_ns());
}

/* Processes that exited before everything of theirs was printed go:
 * the stream's up to cutoff, the aggregation's up to its last read. */
static void reap(struct pmt_evloop *l, uint64_t cutoff)
{
	uint64_t window;

	if (!l->sb)
		return;
	settle(l);
	if (!l->pb)
		cutoff = UINT64_MAX;
	if (l->s->agg && l->agg_read_ns < cutoff)
		cutoff = l->agg_read_ns;
	/* a profile being taken names its samples when it ends */
	window = pmt_aggmaps__windows_since(l->s->aggmaps);
	if (window < cutoff)
		cutoff = window;
	pmt_syms__reap(l->syms, cutoff);
}

/* Drain every ring (the processes' records first: the samples name
 * them), then write out what is safely ordered. */
static int drain(struct pmt_evloop *l, uint64_t cutoff, struct pmt_error *e)
{
	int err;

	if (l->pb)
		pmt_sideband__fetch(l->sb);
	else
		pmt_sideband__read(l->sb);
	err = l->pb ? consume_rings(l) : 0;
	/* the code objects their Python frames name, the JIT processes' maps */
	pmt_unwinder__poll_queues(&l->s->unwind);
	if (err < 0 && err != -EINTR)
		return pmt_error__runtime(e, err, "reading the perf buffers failed: %s",
					  strerror(-err));
	if (l->ro_full) {
		/* a ring left unread: what is held goes out, to read on */
		cutoff = UINT64_MAX;
		l->ro_full = false;
	}
	pmt_reorder__flush(&l->ro, cutoff, emit, l);
	/* what happened up to the cutoff: the next samples are past it */
	pmt_sideband__apply_until(l->sb, cutoff);
	reap(l, cutoff);
	return 0;
}

/* epoll data of the output's entry (libbpf's rings carry pointers) */
#define OUT_TAG UINT64_MAX

/* A pipe or socket whose reader went away shows as an error on our end
 * at once: watch it, so a run that writes little still ends when its
 * reader does, not at its next write. Regular files and terminals have
 * no reader to lose (and epoll refuses regular files). */
static bool watch_output(struct pmt_evloop *l, int epfd)
{
	struct epoll_event ev = {.events = 0, .data.u64 = OUT_TAG};
	struct stat st;

	if (fstat(l->out->fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	return epfd < 0 || !epoll_ctl(epfd, EPOLL_CTL_ADD, l->out->fd, &ev);
}

/* The sideband's rings wake a quiet loop (quiet_profile) at half full:
 * in the rings' epoll set under this tag */
#define SIDEBAND_TAG (UINT64_MAX - 1)

static void watch_sideband(struct pmt_evloop *l, int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = SIDEBAND_TAG};

	if (l->quiet && epfd >= 0 && pmt_sideband__fd(l->sb) >= 0)
		epoll_ctl(epfd, EPOLL_CTL_ADD, pmt_sideband__fd(l->sb), &ev);
}

/* Sleep until events, a signal or timeout ms; stop when the output's
 * reader has gone. 0 or -errno. */
static int wait_events(struct pmt_evloop *l, int epfd, bool watch, int timeout, struct pmt_error *e)
{
	struct timespec ts = {timeout / 1000, (timeout % 1000) * 1000000L};
	struct pollfd fds[2] = {{.fd = l->out->fd, .events = 0},
				{.fd = l->quiet ? pmt_sideband__fd(l->sb) : -1, .events = POLLIN}};
	struct epoll_event evs[16];
	int r, i;

	if (epfd >= 0) {
		r = epoll_pwait(epfd, evs, 16, timeout, pmt_signals__wait_mask());
		for (i = 0; i < r; i++)
			if (evs[i].data.u64 == OUT_TAG)
				l->stop = PMT_STOP_OUTPUT;
	} else {
		if (!watch)
			fds[0].fd = -1;
		r = ppoll(fds, 2, &ts, pmt_signals__wait_mask());
		if (r > 0 && (fds[0].revents & (POLLERR | POLLHUP)))
			l->stop = PMT_STOP_OUTPUT;
	}
	if (r < 0 && errno != EINTR)
		return pmt_error__runtime(e, -errno, "waiting for events failed: %s",
					  strerror(errno));
	return 0;
}

/* An interval's print; what it could not do told, and the run goes on. */
static void print_interval(struct pmt_evloop *l, uint64_t now)
{
	struct pmt_error e = {0};

	if (pmt_aggmaps__print(l->s->aggmaps, l->syms, l->out, now, &e))
		pmt_error__print(&e);
}

/* An interval's printout is short of what did not fit: say so with it. */
static void report_interval_drops(struct pmt_evloop *l)
{
	uint64_t keys = pmt_session__stat(l->s, PMT_STAT_AGG_FULL);
	uint64_t stacks = pmt_session__stat(l->s, PMT_STAT_STACK_FULL) +
			  pmt_session__stat(l->s, PMT_STAT_STACK_COLLISION) +
			  pmt_session__stat(l->s, PMT_STAT_STACK_ERR);

	if (keys > l->keys_dropped)
		pmt_warn("this interval dropped %llu updates: --max-keys %d is full",
			 (unsigned long long)(keys - l->keys_dropped), l->s->opts->agg.max_keys);
	if (stacks > l->stacks_dropped)
		pmt_warn("this interval lost %llu samples' stacks (the causes at exit)",
			 (unsigned long long)(stacks - l->stacks_dropped));
	l->keys_dropped = keys;
	l->stacks_dropped = stacks;
}

/* Files' DWARF idle since the last names that needed it is closed:
 * a print's tens of MB are not held until the next one. */
static void let_go(struct pmt_evloop *l, uint64_t now)
{
	if (now - l->let_go_ns < LET_GO_EVERY_NS)
		return;
	l->let_go_ns = now;
	if (pmt_syms__let_go(l->syms, DWARF_IDLE_NS))
		malloc_trim(0); /* libdw's pages go back */
}

/* The loop's wait, before deadlines and ticks: look, the hash's next */
static int sleep_ms(const struct pmt_evloop *l, int look)
{
	int ms = l->pb ? POLL_MS : l->sb ? SIDEBAND_MS : 1000;

	if (l->quiet && !l->ro.bytes)
		ms = QUIET_MS;
	return l->s->aggmaps && look < ms ? look : ms;
}

int pmt_evloop__run(struct pmt_evloop *l)
{
	const struct pmt_opts *o = l->s->opts;
	uint64_t start = pmt_now_ns(), now, deadline = 0, tick = 0, period = 0;
	int epfd = l->pb ? perf_buffer__epoll_fd(l->pb) : -1, timeout, err, look = l->look_ms;
	bool watch = watch_output(l, epfd);

	watch_sideband(l, epfd);

	if (o->duration > 0)
		deadline = start + (uint64_t)(o->duration * 1e9);
	if (o->agg.interval > 0) {
		period = (uint64_t)(o->agg.interval * 1e9);
		tick = start + period;
	}
	while (!l->stop) {
		timeout = sleep_ms(l, look);
		now = pmt_now_ns();
		if (deadline) {
			if (now >= deadline) {
				l->stop = PMT_STOP_DURATION;
				break;
			}
			if ((deadline - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		if (tick) {
			if (now >= tick) {
				/* the mappings of every process sampled so far */
				pmt_sideband__read(l->sb);
				print_interval(l, now);
				l->agg_read_ns = now;
				/* a print's names and snapshot are freed: their pages
				 * go back, so a run of hours holds what one of minutes
				 * does */
				malloc_trim(0);
				report_interval_drops(l);
				tick += period;
				if (tick < now)
					tick = now + period;
			}
			if ((tick - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((tick - now) / 1000000) + 1;
		}
		err = wait_events(l, epfd, watch, timeout, &l->s->err);
		if (err) {
			l->stop = PMT_STOP_ERROR;
			return err;
		}
		look = l->look_ms;
		if (l->s->aggmaps && (err = pmt_aggmaps__poll(l->s->aggmaps, &look))) {
			l->stop = PMT_STOP_ERROR;
			return pmt_error__runtime(&l->s->err, err,
						  "draining the aggregation's maps failed: %s",
						  strerror(-err));
		}
		now = pmt_now_ns();
		err = drain(l, now > SLACK_NS ? now - SLACK_NS : 0, &l->s->err);
		if (err) {
			l->stop = PMT_STOP_ERROR;
			return err;
		}
		if (pmt_output__flush(l->out))
			l->stop = PMT_STOP_OUTPUT;
		report_lost(l, now);
		let_go(l, now);
		pmt_signals__poll();
		if (pmt_signalled)
			l->stop = PMT_STOP_SIGNAL;
		if (o->pid && kill(o->pid, 0) && errno == ESRCH)
			l->stop = PMT_STOP_TARGET_GONE;
		if (pmt_child_signalled) {
			pmt_child_signalled = 0;
			if (pmt_child__reap(&l->s->child))
				l->stop = PMT_STOP_CHILD;
		}
	}
	return 0;
}

void pmt_evloop__drain(struct pmt_evloop *l)
{
	struct pmt_error e = {0};

	/* after the run: the rings whole (the programs stopped, they hold
	 * what they hold); what fails now is told here */
	l->ro_cpu_max = SIZE_MAX;
	if (drain(l, UINT64_MAX, &e))
		pmt_error__print(&e);
	pmt_output__flush(l->out);
}

void pmt_evloop__free(struct pmt_evloop *l)
{
	uint64_t lost = pmt_sideband__lost(l->sb);

	if (lost)
		pmt_warn("lost %llu records of processes' mappings (rings full, or no memory): "
			 "some user frames may show [unknown]",
			 (unsigned long long)lost);
	pmt_syms__on_bound(l->syms, NULL, NULL);
	pmt_sideband__free(l->sb);
	l->sb = NULL;
	perf_buffer__free(l->pb);
	l->pb = NULL;
	pmt_reorder__free(&l->ro);
	free(l->lost);
	l->lost = NULL;
	free(l->frames);
	free(l->aligned);
	l->frames = NULL;
	pmt_named__free(&l->named);
}
