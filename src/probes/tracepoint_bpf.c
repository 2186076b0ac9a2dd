// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracepoint provider: --tp CATEGORY:NAME (globs allowed). One BPF
 * program (pmt_tp) is attached to every tracepoint; the attach cookie is the
 * probe id, and pmt_probes[id] tells it how much of the raw record to copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/log.h"
#include "probes/provider.h"
#include "util/suggest.h"
#include "probes/stackrec.h"
#include "tracefs/syscalls.h"
#include "pmu/pmu.h"
#include "tracefs/tracefs.h"
#include "filter/expr.h"
#include "filter/xgen.h"
#include "pmtrace.skel.h"

/* this file's provider, defined at its end (src/options/kinds.h) */
extern const struct pmt_provider pmt_tracepoint_provider;

static void suggest_names(struct pmt_prov_ctx *c, const char *spec)
{
	const struct pmt_names *all;
	const char *close[4];
	int n, i;

	struct pmt_error quiet = {0}; /* no list: no names to suggest */

	if (pmt_tracefs__events(&all, &quiet))
		return;
	n = pmt_suggest(spec, all->v, all->n, close, 4);
	for (i = 0; i < n; i++)
		pmt_error__hint(c->err, "did you mean %s?", close[i]);
	if (!n)
		pmt_error__hint(c->err, "pmtrace --list lists the %zu tracepoints of this kernel",
				all->n);
}

static int add_tp(struct pmt_prov_ctx *c, const char *cat, const char *name, const char *filter)
{
	struct pmt_format *fmt;
	struct pmt_error err = {0};
	char full[512];
	int ret;

	ret = pmt_tracefs__format(cat, name, &fmt, &err);
	if (ret == -ENOENT) {
		snprintf(full, sizeof(full), "%s:%s", cat, name);
		pmt_error__usage(c->err, "unknown tracepoint '%s'", full);
		suggest_names(c, full);
		/* a usage error: none such (a program's list skips it, as
		 * bpftrace does: opensnoop.bt's sys_enter_open on arm64) */
		return -ENOENT;
	}
	/* the user's to mend (tracefs not theirs to read): as it was said */
	if (ret && err.cls == PMT_ERR_USAGE && !pmt_error__set(c->err)) {
		*c->err = err;
		return ret;
	}
	if (ret)
		return pmt_error__runtime(c->err, ret, "%s:%s: %s", cat, name, err.msg);
	if (pmt_stackrec__add_tp_fields(fmt)) {
		pmt_format__free(fmt);
		return pmt_error__runtime(c->err, -ENOMEM, "%s:%s: out of memory", cat, name);
	}
	snprintf(full, sizeof(full), "%s:%s", cat, name);
	return pmt_prov__add(c, &pmt_tracepoint_provider, full, fmt, filter, 0, NULL);
}

static int tp_resolve(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg)
{
	const char *spec = arg->spec;
	const struct pmt_names *all;
	struct pmt_names hits = {0};
	char cat[256], name[256];
	int ret = 0;
	size_t i;

	if (pmt_tp_split(spec, cat, sizeof(cat), name, sizeof(name)))
		return pmt_error__usage(
			c->err, "--tp '%s': expected CATEGORY:NAME, e.g. sched:sched_switch", spec);
	if (!strpbrk(spec, "*?["))
		return add_tp(c, cat, name, arg->filter);

	snprintf(cat, sizeof(cat), "%.*s", (int)strcspn(spec, ":/"), spec);
	snprintf(name, sizeof(name), "%s", spec + strlen(cat) + 1);
	ret = pmt_tracefs__events(&all, c->err);
	if (ret)
		return ret;
	{
		/* available_events says cat:name; accept cat/name too */
		char pattern[520];

		snprintf(pattern, sizeof(pattern), "%s:%s", cat, name);
		pmt_names__match(all, pattern, &hits);
	}
	if (!hits.n) {
		pmt_error__usage(c->err, "--tp '%s': no tracepoint matches", spec);
		pmt_error__hint(c->err, "see pmtrace --list '%s:*'",
				strpbrk(cat, "*?[") ? "*" : cat);
		return -EINVAL;
	}
	for (i = 0; i < hits.n && !ret; i++) {
		char *colon = strchr(hits.v[i], ':');

		*colon = '\0';
		ret = add_tp(c, hits.v[i], colon + 1, arg->filter);
	}
	pmt_names__free(&hits);
	return ret;
}

/* The first copy is compiled without what the run does not use: the lean
 * one when nothing aggregates, takes stacks or times off-CPU waits (a
 * fifth of the full program, it halves the time from start to the first
 * event), the flat one when nothing takes stacks or times off-CPU waits
 * (the verifier's time halved). */
static bool tp_flat(const struct pmt_prov_ctx *c)
{
	return !c->stack && !c->opts->agg.offcpu;
}

static struct bpf_program *tp_prog(struct pmt_prov_ctx *c, int instance)
{
	bool flat = tp_flat(c);
	bool lean = flat && !c->skel->rodata->pmt_use_agg;
	struct bpf_program *progs[PMT_TP_INSTANCES] = {
		lean				? c->skel->progs.pmt_tp_lean
		: c->skel->rodata->pmt_use_xgen ? c->skel->progs.pmt_tp_xgen
		: flat				? c->skel->progs.pmt_tp_flat
						: c->skel->progs.pmt_tp,
		c->skel->progs.pmt_tp2,
		c->skel->progs.pmt_tp3,
		c->skel->progs.pmt_tp4,
	};

	return progs[instance];
}

/* Expression program i of the session, or NULL (PMT_XPROG_NONE) */
static const struct pmt_expr *tp_expr(const struct pmt_prov_ctx *c, uint16_t i)
{
	return i != PMT_XPROG_NONE && i < c->exprs->n ? &c->exprs->v[i] : NULL;
}

/*
 * Is probe p of a shape whose programs can run as generated BPF
 * (src/filter/xgen.h)? Where its tracepoint's program is the flat one
 * (its copy, pmt_tp_xgen, is the only one that tail-calls) and its block
 * has programs and aggregates into one map or only saves values (a
 * printing block's record and a block's other updates stay with the
 * machine). x86-64 only for now: arm64's JIT mixes tail calls with calls
 * from 6.0 on, and the arm64 guest has not checked it. PMT_NO_XGEN set:
 * never.
 */
static bool tp_xgen_shape(const struct pmt_prov_ctx *c, const struct pmt_probe *p)
{
	const char *off = getenv("PMT_NO_XGEN");

#ifndef __x86_64__
	return false;
#endif
	return !(off && *off) && tp_flat(c) && c->skel->rodata->pmt_use_agg && !p->priv &&
	       !p->instance && p->action != PMT_ACT_STREAM && !p->next_agg &&
	       (tp_expr(c, p->agg.xprog) || tp_expr(c, p->sprog));
}

/* ... and does each of its programs translate exactly? */
static bool tp_xgen_ok(const struct pmt_prov_ctx *c, const struct pmt_probe *p)
{
	const struct pmt_expr *x = tp_expr(c, p->agg.xprog), *s = tp_expr(c, p->sprog);
	bool vars = c->skel->rodata->pmt_use_vars;

	return tp_xgen_shape(c, p) && (!x || pmt_xgen__supported(x, vars)) &&
	       (!s || pmt_xgen__supported(s, vars));
}

/* Probe p's programs generated and loaded into pmt_xgen_tp: true, or
 * false with the probe left to the machine (a program that does not
 * translate; one the kernel refuses, said with -v) */
static bool tp_xgen_load(struct pmt_prov_ctx *c, const struct pmt_probe *p)
{
	const struct pmt_xgen_maps m = {
		.xmem = bpf_map__fd(c->skel->maps.pmt_xmem),
		.vars = bpf_map__fd(c->skel->maps.pmt_vars),
		.strvars = bpf_map__fd(c->skel->maps.pmt_strvars),
		.hits = bpf_map__fd(c->skel->maps.pmt_hits),
		.stats = bpf_map__fd(c->skel->maps.pmt_stats),
		.faults = bpf_map__fd(c->skel->maps.pmt_read_faults),
		.progs = bpf_map__fd(c->skel->maps.pmt_xgen_tp),
	};
	const struct pmt_xgen_probe xp = {
		.xprog = tp_expr(c, p->agg.xprog),
		.sprog = tp_expr(c, p->sprog),
		.probe = p->id,
		.back = p->action != PMT_ACT_NONE,
		.back_at = c->probes->n,
		.use_vars = c->skel->rodata->pmt_use_vars,
		.elapsed_origin = c->skel->rodata->pmt_elapsed_origin,
		.cpid = c->skel->rodata->pmt_cpid,
	};
	static char log[65536];
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = pmt_verbose ? log : NULL,
		    .log_size = pmt_verbose ? sizeof(log) : 0, .log_level = pmt_verbose ? 1 : 0);
	__u32 back = c->probes->n, id = p->id;
	struct bpf_insn *insns;
	int fd, tfd = bpf_program__fd(c->skel->progs.pmt_tp_xback), e;
	size_t n;

	if ((e = pmt_xgen__build(&xp, &m, &insns, &n)))
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "pmt_xgen", "GPL", insns, n, &o);
	e = fd < 0 ? -errno : 0;
	free(insns);
	if (fd >= 0 && (bpf_map_update_elem(m.progs, &back, &tfd, BPF_ANY) ||
			bpf_map_update_elem(m.progs, &id, &fd, BPF_ANY)))
		e = -errno;
	if (fd >= 0)
		close(fd); /* pmt_xgen_tp holds it */
	if (e && pmt_verbose)
		pmt_info("%s: its programs stay on the in-kernel machine: the generated program "
			 "was refused (%s)%s%s",
			 p->name, strerror(-e), fd < 0 ? ":\n" : "", fd < 0 ? log : "");
	else if (pmt_verbose)
		pmt_info("%s: its programs run as generated BPF (%zu instructions)", p->name, n);
	return !e;
}

/*
 * Detaching a tracepoint's last perf event waits for an RCU grace period,
 * one tracepoint at a time (see spawn_closer() in src/run/session_bpf.c):
 * syscalls:sys_enter_* took 12 s to leave the kernel, in D state if
 * pmtrace was killed. Every syscalls:* tracepoint is a view of
 * raw_syscalls:sys_enter or sys_exit, so from SYS_ROUTE_MIN of them on,
 * one program there serves them all by call number (pmt_sys), and only
 * two tracepoints are left to detach.
 */
#define SYS_ROUTE_MIN 8

struct sys_route {
	int dir; /* PMT_SYS_ENTER or PMT_SYS_EXIT */
	int nr;
	bool carrier; /* this probe's link is the direction's attachment */
};

/* The call number and direction of a syscalls:* probe that can be routed,
 * or -1. */
static int sys_nr(const struct pmt_probe *p, int *dir)
{
	const char *n = p->name;
	int nr = -1;

	if (p->instance || strncmp(n, "syscalls:sys_", 13))
		return -1;
	if (!strncmp(n + 13, "enter_", 6)) {
		*dir = PMT_SYS_ENTER;
		nr = pmt_syscall_nr(n + 19);
	} else if (!strncmp(n + 13, "exit_", 5)) {
		*dir = PMT_SYS_EXIT;
		nr = pmt_syscall_nr(n + 18);
	}
	return nr < PMT_SYS_NRS ? nr : -1;
}

static void plan_sys_routes(struct pmt_prov_ctx *c)
{
	static const char *const carriers[2] = {"raw_syscalls:sys_enter", "raw_syscalls:sys_exit"};
	uint8_t *seen = calloc(2 * PMT_SYS_NRS, 1);
	uint32_t i, n[2] = {0, 0};
	bool clash[2] = {false, false}, first[2] = {true, true};
	int dir, nr;

	if (!seen)
		return;
	for (i = 0; i < c->probes->n; i++) {
		if (c->probes->v[i].prov != &pmt_tracepoint_provider ||
		    (nr = sys_nr(&c->probes->v[i], &dir)) < 0)
			continue;
		/* two names for one number: leave that direction alone */
		clash[dir] |= seen[dir * PMT_SYS_NRS + nr]++ > 0;
		n[dir]++;
	}
	free(seen);
	for (i = 0; i < c->probes->n; i++) {
		struct pmt_probe *p = &c->probes->v[i];
		struct sys_route *r;

		if (p->prov != &pmt_tracepoint_provider || (nr = sys_nr(p, &dir)) < 0 ||
		    n[dir] < SYS_ROUTE_MIN || clash[dir] || !(r = calloc(1, sizeof(*r))))
			continue;
		r->dir = dir;
		r->nr = nr;
		r->carrier = first[dir];
		if (first[dir] && pmt_verbose)
			pmt_info("%u syscalls:* tracepoints served by %s", n[dir], carriers[dir]);
		first[dir] = false;
		p->priv = r;
	}
}

/* Probes of pmt_tp_lean, pmt_tp_flat or pmt_tp_xgen (no stacks or
 * off-CPU; each the first instance of its tracepoint), none served by a
 * raw_syscalls carrier (pmt_sys): as plan_sys_routes decides, from the
 * probes alone. */
static bool tp_lean(const struct pmt_prov_ctx *c)
{
	uint32_t i, n[2] = {0, 0};
	int dir;

	if (!tp_flat(c))
		return false;
	for (i = 0; i < c->probes->n; i++) {
		const struct pmt_probe *p = &c->probes->v[i];

		if (p->prov != &pmt_tracepoint_provider)
			continue;
		if (p->instance)
			return false;
		if (sys_nr(p, &dir) >= 0)
			n[dir]++;
	}
	return n[0] < SYS_ROUTE_MIN && n[1] < SYS_ROUTE_MIN;
}

/* --offcpu: one probe, sched_switch, whose program measures (and
 * aggregates) each thread's time off the CPU (bpf/tracepoint.bpf.c). */
static int tp_imply(struct pmt_prov_ctx *c)
{
	struct pmt_probe_arg sw = {.kind = PMT_PROBE_TRACEPOINT, .spec = "sched:sched_switch"};

	return c->opts->agg.offcpu ? tp_resolve(c, &sw) : 0;
}

/* --offcpu's settings: where sched_switch has next_pid, the state and
 * time bounds; its start map sized for the threads that can be off at
 * once. */
static void set_offcpu(struct pmt_prov_ctx *c, const struct pmt_probe *p)
{
	const struct pmt_agg_opts *ao = &c->opts->agg;
	const struct pmt_field *f = pmt_format__field(p->fmt, "next_pid");

	if (!f)
		return;
	c->skel->rodata->pmt_offcpu = true;
	c->skel->rodata->pmt_offcpu_next_pid = f->offset;
	/* a word the program copies from each record (pmt_ctx_fill) */
	if (f->offset / 4 < 32)
		c->skel->rodata->pmt_ctx_used |= 1u << (f->offset / 4);
	c->skel->rodata->pmt_offcpu_state = (__u8)ao->offcpu_state;
	c->skel->rodata->pmt_offcpu_min_ns = ao->min_block * 1000;
	c->skel->rodata->pmt_offcpu_max_ns = ao->max_block ? ao->max_block * 1000 : ~0ULL;
	bpf_map__set_max_entries(c->skel->maps.pmt_offcpu_starts, 65536);
}

/* The programs the probes need, and their bounds: the dynamic fields
 * they follow, and the record words loaded straight from the context
 * (PMT_FFLAG_CTX): no further than the shortest record. */
static void tp_prepare(struct pmt_prov_ctx *c)
{
	uint32_t i, n, ndyn = 0, words = PMT_CTX_DIRECT / 4;

	plan_sys_routes(c);
	for (i = 0; i < c->probes->n; i++) {
		const struct pmt_probe *p = &c->probes->v[i];

		if (p->prov != &pmt_tracepoint_provider)
			continue;
		if (tp_xgen_ok(c, p))
			c->skel->rodata->pmt_use_xgen = true;
	}
	bpf_program__set_autoload(c->skel->progs.pmt_tp_xback, c->skel->rodata->pmt_use_xgen);
	/* each probe's entry and pmt_tp_xback's, the last */
	if (c->skel->rodata->pmt_use_xgen)
		bpf_map__set_max_entries(c->skel->maps.pmt_xgen_tp, c->probes->n + 1);
	for (i = 0; i < c->probes->n; i++) {
		const struct pmt_probe *p = &c->probes->v[i];

		if (p->prov != &pmt_tracepoint_provider)
			continue;
		if (p->priv)
			bpf_program__set_autoload(c->skel->progs.pmt_sys, true);
		else
			bpf_program__set_autoload(tp_prog(c, p->instance), true);
		if ((n = pmt_format__ndyn(p->fmt)) > ndyn)
			ndyn = n;
		if (p->fmt->raw_ctx && p->fmt->fixed_size / 4 < words)
			words = p->fmt->fixed_size / 4;
	}
	c->skel->rodata->pmt_tp_max_dyn = ndyn;
	c->skel->rodata->pmt_ctx_words = words;
	/* the used words past the shortest record, read as one (pmt_ctx_used
	 * is set: session_bpf.c's set_uses) */
	for (n = 32; n > words && !(c->skel->rodata->pmt_ctx_used & (1u << (n - 1))); n--)
		;
	c->skel->rodata->pmt_ctx_tail = n > words ? n - words : 0;
	if (c->opts->agg.offcpu && c->probes->n)
		set_offcpu(c, &c->probes->v[0]);
}

/*
 * The BPF program hangs off a perf event of the tracepoint (the carrier).
 * It returns 1 so that other users of the tracepoint (perf record, ...)
 * still get their samples: a 0 from a tracepoint program drops the sample
 * for every perf event on that tracepoint. Returning 1 would also make the
 * kernel build a sample for the carrier itself, wasted work since it has
 * no ring; a disabled carrier is not on the per-CPU list the kernel walks,
 * while its BPF program still runs on every hit.
 */
static int open_carrier(int tp_id)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.config = (__u64)tp_id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
		.disabled = 1,
	};

	return pmt_pmu__open(&attr, -1, pmt_first_online_cpu());
}

/* Attach prog to tracepoint tp_id with cookie: the link, or NULL (errno). */
static struct bpf_link *attach_carrier(struct bpf_program *prog, int tp_id, __u64 cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	struct bpf_link *link;
	int pfd = open_carrier(tp_id), e;

	if (pfd < 0)
		return NULL;
	link = bpf_program__attach_perf_event_opts(prog, pfd, &opts);
	if (!link) {
		e = errno;
		close(pfd);
		errno = e;
		return NULL;
	}
	/* libbpf enabled the carrier; the program keeps running without it */
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	return link;
}

/* A routed syscall probe: its number in pmt_sysnr, and the direction's
 * one attachment with its first probe. */
static int attach_routed(struct pmt_prov_ctx *c, struct pmt_probe *p, const struct sys_route *r)
{
	__u32 key = (__u32)(r->dir * PMT_SYS_NRS + r->nr), val = p->id + 1;
	struct pmt_format *fmt;
	struct pmt_error err = {0};
	int e;

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.pmt_sysnr), &key, &val, BPF_ANY))
		return pmt_error__runtime(c->err, -errno, "%s: cannot store its call number: %s",
					  p->name, strerror(errno));
	if (!r->carrier)
		return 0;
	e = pmt_tracefs__format("raw_syscalls", r->dir == PMT_SYS_ENTER ? "sys_enter" : "sys_exit",
				&fmt, &err);
	if (e)
		return pmt_error__runtime(c->err, e, "raw_syscalls: %s", err.msg);
	p->link = attach_carrier(c->skel->progs.pmt_sys, fmt->id, (__u64)r->dir);
	pmt_format__free(fmt);
	if (!p->link)
		return pmt_error__attach(c->err, -errno, p->name, "raw_syscalls", strerror(errno));
	return 0;
}

static int tp_attach(struct pmt_prov_ctx *c, struct pmt_probe *p)
{
	struct pmt_probe_cfg cfg = {.fixed_size = p->fmt->fixed_size};
	int i, err;

	for (i = 0; i < p->fmt->nr_fields && cfg.n_dyn < PMT_MAX_DYN; i++) {
		const struct pmt_field *f = &p->fmt->fields[i];

		if (pmt_field__dynamic(f))
			cfg.dyn[cfg.n_dyn++] = (__u16)(f->offset | (f->rel_loc ? PMT_DYN_REL : 0));
	}
	cfg.common_type = (__u16)p->fmt->id;
	cfg.xgen = c->skel->rodata->pmt_use_xgen && tp_xgen_shape(c, p) && tp_xgen_load(c, p);
	if ((err = pmt_prov__store_cfg(c, p, &cfg)))
		return err;
	if (p->priv)
		return attach_routed(c, p, p->priv);
	p->link = attach_carrier(tp_prog(c, p->instance), p->fmt->id, p->id);
	if (!p->link)
		return pmt_error__attach(c->err, -errno, p->name, "the tracepoint",
					 strerror(errno));
	return 0;
}

const struct pmt_provider pmt_tracepoint_provider = {
	.name = "tracepoint",
	.resolve = tp_resolve,
	.imply = tp_imply,
	.prepare = tp_prepare,
	.lean = tp_lean,
	.attach = tp_attach,
	.renders = true,
};
