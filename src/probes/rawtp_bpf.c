// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Typed raw tracepoints: --rawtp NAME (or CATEGORY:NAME, or a glob).
 *
 * A tp_btf program sees the arguments the kernel passes its tracepoint,
 * before the tracepoint's own code copies some of them into its record:
 * sched_switch's prev and next are struct task_struct pointers, so
 * 'next->comm' or 'prev->se.sum_exec_runtime' reach what the record
 * left out. Their names come from the kernel's BTF: __traceiter_NAME's
 * parameters (btf_trace_NAME, the type the verifier checks the program
 * against, leaves them unnamed), each argument a slot of struct
 * pmt_call. A placeholder program per tracepoint (PMT_RT_SLOTS of them)
 * is pointed at it before load, as fentry's are (src/probes/kprobe_bpf.c).
 * tp_btf goes through the raw tracepoint, not a trampoline: it works
 * where fentry is refused.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "probes/callrec.h"
#include "probes/provider.h"
#include "util/log.h"
#include "util/suggest.h"
#include "tracefs/tracefs.h"
#include "pmtrace.skel.h"

extern const struct pmt_provider pmt_rawtp_provider;

#define TYPE_PREFIX "btf_trace_"
#define NAME_PREFIX "__traceiter_"

struct rt_priv {
	int slot;
	uint32_t nargs;
	char tp[];
};

/* The kernel's BTF, read at the first --rawtp and kept (a fact of the
 * machine, as kprobe.c keeps its own). */
static struct btf *vmlinux;

static int load_btf(struct pmt_prov_ctx *c, const char *spec)
{
	if (vmlinux)
		return 0;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return pmt_error__runtime(c->err, -errno,
					  "--rawtp '%s': typed raw tracepoints need the kernel's "
					  "BTF, and /sys/kernel/btf/vmlinux cannot be read: %s",
					  spec, strerror(errno));
	return 0;
}

/* Every tracepoint BTF types (btf_trace_NAME), by NAME. */
static int all_names(struct pmt_names *out)
{
	__u32 i, n = btf__type_cnt(vmlinux);
	size_t plen = strlen(TYPE_PREFIX);

	for (i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, i);
		const char *nm = btf__name_by_offset(vmlinux, t->name_off);

		if (btf_is_typedef(t) && nm && !strncmp(nm, TYPE_PREFIX, plen) &&
		    pmt_names__add(out, nm + plen))
			return -ENOMEM;
	}
	return 0;
}

static size_t slots_used(const struct pmt_prov_ctx *c)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < c->probes->n; i++)
		n += c->probes->v[i].prov == &pmt_rawtp_provider;
	return n;
}

/* The prototype of tracepoint tp's arguments: __traceiter_TP's, whose
 * parameters have names, or btf_trace_TP's. Its id, or -ENOENT. */
static int proto_of(const char *tp)
{
	char name[300];
	const struct btf_type *t;
	int id;

	snprintf(name, sizeof(name), NAME_PREFIX "%s", tp);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
	if (id > 0 && (t = btf__type_by_id(vmlinux, (__u32)id)))
		return (int)t->type;
	snprintf(name, sizeof(name), TYPE_PREFIX "%s", tp);
	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -ENOENT;
	t = btf__type_by_id(vmlinux, (__u32)id);	  /* typedef */
	t = t ? btf__type_by_id(vmlinux, t->type) : NULL; /* pointer */
	return t && btf_is_ptr(t) ? (int)t->type : -ENOENT;
}

static int add_probe(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg, const char *tp)
{
	int proto = proto_of(tp), slot = (int)slots_used(c);
	const struct btf_type *pt;
	struct pmt_format *fmt;
	struct rt_priv *rt;
	char name[300];
	int r;

	snprintf(name, sizeof(name), "rawtracepoint:%s", tp);
	if (proto < 0)
		return pmt_error__usage(c->err, "--rawtp '%s': BTF has no prototype for %s",
					arg->spec, tp);
	if (slot >= PMT_RT_SLOTS)
		return pmt_error__usage(c->err,
					"--rawtp '%s': at most %d typed raw tracepoints a run (%s "
					"would be one more)",
					arg->spec, PMT_RT_SLOTS, tp);
	fmt = pmt_callrec__rawtp_format(name, vmlinux, proto, c->err);
	r = pmt_prov__add(c, &pmt_rawtp_provider, name, fmt, arg->filter,
			  sizeof(*rt) + strlen(tp) + 1, (void **)&rt);
	if (!rt)
		return r;
	pt = btf__type_by_id(vmlinux, (__u32)proto);
	rt->slot = slot;
	rt->nargs = btf_vlen(pt) > 0 ? btf_vlen(pt) - 1u : 0;
	strcpy(rt->tp, tp);
	return 0;
}

static int not_found(struct pmt_prov_ctx *c, const char *spec, const char *tp,
		     const struct pmt_names *all, bool glob)
{
	const char *close[4];
	int n, i;

	if (glob)
		return pmt_error__usage(c->err,
					"--rawtp '%s': no tracepoint the kernel's BTF "
					"types matches",
					spec);
	pmt_error__usage(c->err,
			 "--rawtp '%s': the kernel's BTF types no tracepoint %s (a module's "
			 "tracepoints are not typed here: use --tp)",
			 spec, tp);
	n = pmt_suggest(tp, all->v, all->n, close, 4);
	for (i = 0; i < n; i++)
		pmt_error__hint(c->err, "did you mean %s?", close[i]);
	return -EINVAL;
}

static int rt_resolve(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg)
{
	/* CATEGORY:NAME as --tp takes it: a raw tracepoint has the name only */
	const char *colon = strchr(arg->spec, ':'), *tp = colon ? colon + 1 : arg->spec;
	struct pmt_names all = {0}, hits = {0};
	bool glob = strpbrk(tp, "*?[") != NULL;
	size_t i;
	int err;

	if (!*tp)
		return pmt_error__usage(c->err,
					"--rawtp '%s': expected a tracepoint's name, "
					"e.g. --rawtp sched_switch",
					arg->spec);
	if ((err = load_btf(c, arg->spec)))
		return err;
	if ((err = all_names(&all)))
		goto out;
	if (!pmt_names__match(&all, tp, &hits)) {
		err = not_found(c, arg->spec, tp, &all, glob);
		goto out;
	}
	if (glob && hits.n + slots_used(c) > PMT_RT_SLOTS) {
		err = pmt_error__usage(c->err,
				       "--rawtp '%s': %zu tracepoints match, and a run takes at "
				       "most %d typed raw tracepoints",
				       arg->spec, hits.n, PMT_RT_SLOTS);
		goto out;
	}
	for (i = 0; i < hits.n && !err; i++)
		err = add_probe(c, arg, hits.v[i]);
	if (!err)
		pmt_info("--rawtp %s: %zu tracepoint%s, by tp_btf", arg->spec, hits.n,
			 hits.n == 1 ? "" : "s");
out:
	pmt_names__free(&all);
	pmt_names__free(&hits);
	return err;
}

static struct bpf_program *rt_prog(struct pmt_prov_ctx *c, const struct rt_priv *rt)
{
	char name[16];

	snprintf(name, sizeof(name), "pmt_rt%d", rt->slot);
	return bpf_object__find_program_by_name(c->skel->obj, name);
}

static void rt_prepare(struct pmt_prov_ctx *c)
{
	uint32_t i;

	for (i = 0; i < c->probes->n; i++) {
		struct pmt_probe *p = &c->probes->v[i];
		const struct rt_priv *rt = p->priv;
		struct bpf_program *prog;

		if (p->prov != &pmt_rawtp_provider)
			continue;
		prog = rt_prog(c, rt);
		bpf_program__set_autoload(prog, true);
		bpf_program__set_attach_target(prog, 0, rt->tp);
		((__u32 *)c->skel->rodata->pmt_rt_probe)[rt->slot] = p->id;
		((__u32 *)c->skel->rodata->pmt_rt_nargs)[rt->slot] = rt->nargs;
	}
}

static int rt_attach(struct pmt_prov_ctx *c, struct pmt_probe *p)
{
	struct pmt_probe_cfg cfg = {.fixed_size = sizeof(struct pmt_call)};
	const struct rt_priv *rt = p->priv;
	int err = pmt_prov__store_cfg(c, p, &cfg);

	if (err)
		return err;
	p->link = bpf_program__attach_trace(rt_prog(c, rt));
	if (!p->link)
		return pmt_error__attach(c->err, -errno, p->name, "tp_btf", strerror(errno));
	return 0;
}

const struct pmt_provider pmt_rawtp_provider = {
	.name = "rawtp",
	.resolve = rt_resolve,
	.prepare = rt_prepare,
	.attach = rt_attach,
};
