// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel function probes: --kprobe FUNC[+OFF], --kretprobe FUNC, globs.
 *
 * The mechanism is chosen at run time, before anything is loaded:
 *   fentry/fexit  where the kernel has BPF trampolines and BTF for the
 *                 function: no breakpoint, BTF-typed parameters as fields.
 *                 A placeholder program per function (PMT_FN_SLOTS of each),
 *                 retargeted with bpf_program__set_attach_target.
 *   kprobe.multi  globs: every function in one link (kernel 5.18+).
 *   kprobe        one perf-event kprobe per function (and FUNC+OFF).
 * --kprobe-mode forces fentry or kprobe. A kernel with neither (no
 * CONFIG_KPROBES, trampolines refused) gets one message saying so.
 */
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "probes/kfunc.h"
#include "probes/callrec.h"
#include "util/log.h"
#include "probes/provider.h"
#include "probes/stackrec.h"
#include "util/strutil.h"
#include "util/suggest.h"
#include "tracefs/tracefs.h"
#include "pmtrace.skel.h"

/* this file's provider, defined at its end (src/options/kinds.h) */
extern const struct pmt_provider pmt_kprobe_provider;
#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe/type"

struct kp_priv {
	enum pmt_kfn_mech mech;
	bool ret;
	uint64_t offset; /* FUNC+OFF */
	int slot;	 /* PMT_KFN_FENTRY: placeholder program */
	uint32_t group;	 /* PMT_KFN_MULTI: first probe of its link */
	char func[];
};

/* What this kernel can do, and its BTF: facts of the machine, found out
 * once a process (a --latency resolves two functions) and kept. */
static struct {
	bool probed;
	struct pmt_kfeatures f;
	struct btf *btf; /* vmlinux BTF (NULL: none) */
	bool btf_loaded;
} kf;

/* A two-instruction program ("return 0") of a type, for feature tests. */
static int tiny_prog(enum bpf_prog_type type, enum bpf_attach_type eat, __u32 btf_id)
{
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = eat, .attach_btf_id = btf_id);

	return bpf_prog_load(type, NULL, "GPL", insns, 2, &o);
}

static bool probe_multi(void)
{
	const char *syms[] = {"pmt_no_such_function"};
	LIBBPF_OPTS(bpf_link_create_opts, o);
	int fd = tiny_prog(BPF_PROG_TYPE_KPROBE, BPF_TRACE_KPROBE_MULTI, 0), lfd, err;

	if (fd < 0)
		return false;
	o.kprobe_multi.syms = syms;
	o.kprobe_multi.cnt = 1;
	lfd = bpf_link_create(fd, 0, BPF_TRACE_KPROBE_MULTI, &o);
	err = errno;
	close(fd);
	if (lfd >= 0) {
		close(lfd);
		return true;
	}
	/* a kernel with multi links looks the symbol up and misses it */
	return err == ESRCH || err == ENOENT;
}

static const char *errname(int err)
{
	/* the kernel's ENOTSUPP (524) has no libc name */
	return err == -524 ? "not supported" : strerror(-err);
}

/* Load and attach a "return 0" fentry program on func: can this kernel
 * make a trampoline? 0 or -errno, and why in f->fentry_why. */
static int probe_fentry(const struct btf *btf, const char *func, struct pmt_kfeatures *f)
{
	int id = btf ? btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) : -ENOENT;
	const char *step = "loading";
	int fd, lfd, err;

	if (id < 0) {
		snprintf(f->fentry_why, sizeof(f->fentry_why), "vmlinux BTF has no function %s",
			 func);
		return -ENOENT;
	}
	fd = tiny_prog(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, (__u32)id);
	err = fd < 0 ? -errno : 0;
	if (fd >= 0) {
		step = "attaching";
		lfd = bpf_raw_tracepoint_open(NULL, fd);
		err = lfd < 0 ? -errno : 0;
		if (lfd >= 0)
			close(lfd);
		close(fd);
	}
	if (err)
		snprintf(f->fentry_why, sizeof(f->fentry_why),
			 "the kernel refused %s a fentry program on %s: %s", step, func,
			 errname(err));
	return err;
}

static const struct pmt_kfeatures *probe_features(const struct btf *btf, const char *func)
{
	struct pmt_kfeatures *f = &kf.f;
	struct pmt_error quiet = {0}; /* no tracefs: no kprobe_events */
	const char *root;

	if (kf.probed)
		return f;
	kf.probed = true;
	f->kprobe = !faccessat(AT_FDCWD, KPROBE_PMU, R_OK, AT_EACCESS);
	if (!f->kprobe && !pmt_tracefs__root(&root, &quiet)) {
		char path[300];

		snprintf(path, sizeof(path), "%s/kprobe_events", root);
		f->kprobe = !faccessat(AT_FDCWD, path, W_OK, AT_EACCESS);
	}
	f->multi = f->kprobe && probe_multi();
	f->fentry = probe_fentry(btf, func, f);
	return f;
}

/* Is name a function in /proc/kallsyms (where kprobes reach functions
 * ftrace cannot hook, syscall wrappers among them)? */
static bool in_kallsyms(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
			(type == 't' || type == 'T') && !strcmp(sym, name);
	if (f)
		fclose(f);
	return found;
}

static int not_found(struct pmt_error *err, const char *opt, const char *name,
		     const struct pmt_names *all, bool glob)
{
	const char *close[4];
	int n, i;

	/* usage errors; -ENOENT: none such (a program's list skips it) */
	if (glob) {
		pmt_error__usage(err, "--%s '%s': no traceable kernel function matches", opt, name);
		return -ENOENT;
	}
	pmt_error__usage(err,
			 "--%s '%s': not a kernel function (in neither available_filter_functions "
			 "nor /proc/kallsyms)",
			 opt, name);
	n = pmt_suggest(name, all->v, all->n, close, 4);
	for (i = 0; i < n; i++)
		pmt_error__hint(err, "did you mean %s?", close[i]);
	return -ENOENT;
}

/* The functions a spec names: globs against available_filter_functions,
 * plain names checked there (or in kallsyms when it cannot be read, or
 * for kprobes: *ftraced is then false, as fentry and kprobe.multi need
 * ftrace). */
static int match_functions(struct pmt_prov_ctx *c, const char *opt, const char *name,
			   struct pmt_names *hits, bool *ftraced)
{
	const struct pmt_names *all;
	struct pmt_error quiet = {0}; /* the code worded here */
	int err = pmt_tracefs__functions(&all, &quiet);
	bool glob = strpbrk(name, "*?[") != NULL;

	if (err && glob)
		return pmt_error__runtime(
			c->err, err,
			"--%s '%s': a glob needs the list of traceable functions, and "
			"available_filter_functions cannot be read: %s",
			opt, name, strerror(-err));
	*ftraced = true;
	if (err) {
		/* no list to check against: let the kernel say */
		return pmt_names__add(hits, name);
	}
	if (pmt_names__match(all, name, hits)) {
		err = 0;
	} else if (!glob && kf.f.kprobe && in_kallsyms(name)) {
		*ftraced = false;
		err = pmt_names__add(hits, name);
	} else {
		err = not_found(c->err, opt, name, all, glob);
	}
	return err;
}

/* FUNC[+OFF]: the offset, or -EINVAL */
static int split_offset(struct pmt_prov_ctx *c, const char *opt, const char *spec, char *func,
			size_t len, uint64_t *off)
{
	const char *plus = strchr(spec, '+');
	size_t n = plus ? (size_t)(plus - spec) : strlen(spec);

	*off = 0;
	if (!n || n >= len || (plus && (pmt_parse_u64(plus + 1, off) || strpbrk(spec, "*?["))))
		return pmt_error__usage(
			c->err,
			"--%s '%s': expected FUNCTION or FUNCTION+OFFSET (offsets only without globs)",
			opt, spec);
	if (!strcmp(opt, "kretprobe") && *off)
		return pmt_error__usage(c->err, "--kretprobe '%s': a return probe takes no offset",
					spec);
	memcpy(func, spec, n);
	func[n] = '\0';
	return 0;
}

/* Placeholder fentry (or fexit) programs the probes so far take. */
static size_t fentry_used(const struct pmt_prov_ctx *c, bool ret)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < c->probes->n; i++) {
		const struct kp_priv *kp = c->probes->v[i].priv;

		n += c->probes->v[i].prov == &pmt_kprobe_provider && kp->mech == PMT_KFN_FENTRY &&
		     kp->ret == ret;
	}
	return n;
}

static int add_fn_probe(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg, const char *func,
			bool ret, uint64_t off, enum pmt_kfn_mech mech, uint32_t group)
{
	const char *kind = ret ? "kretprobe" : "kprobe";
	struct pmt_format *fmt;
	struct kp_priv *kp;
	char name[300];
	uint32_t n = c->probes->n;
	int r, slot = (int)fentry_used(c, ret);

	if (off)
		snprintf(name, sizeof(name), "%s:%s+%llu", kind, func, (unsigned long long)off);
	else
		snprintf(name, sizeof(name), "%s:%s", kind, func);
	if (mech == PMT_KFN_FENTRY)
		fmt = pmt_callrec__btf_format(name, kf.btf,
					      btf__find_by_name_kind(kf.btf, func, BTF_KIND_FUNC),
					      ret, c->err);
	else
		fmt = pmt_callrec__regs_format(name, ret);
	r = pmt_prov__add(c, &pmt_kprobe_provider, name, fmt, arg->filter,
			  sizeof(*kp) + strlen(func) + 1, (void **)&kp);
	if (!kp)
		return r;
	kp->mech = mech;
	kp->ret = ret;
	kp->offset = off;
	kp->group = mech == PMT_KFN_MULTI ? group : n;
	kp->slot = mech == PMT_KFN_FENTRY ? slot : -1;
	strcpy(kp->func, func);
	return 0;
}

/* The request as the mechanism choice sees it (probes/kfunc.h). */
static void describe(struct pmt_prov_ctx *c, struct pmt_kfn_request *r,
		     const struct pmt_names *hits, bool ret)
{
	static const enum pmt_kfn_want want[] = {
		[PMT_KMODE_AUTO] = PMT_KFN_AUTO,
		[PMT_KMODE_KPROBE] = PMT_KFN_WANT_KPROBE,
		[PMT_KMODE_FENTRY] = PMT_KFN_WANT_FENTRY,
		[PMT_KMODE_PROGRAM] = PMT_KFN_PREFER_KPROBE,
	};
	size_t i;

	r->want = want[c->opts->kprobe_mode];
	r->nfuncs = hits->n;
	r->btf = kf.btf != NULL;
	for (i = 0; i < hits->n; i++)
		if (!kf.btf || btf__find_by_name_kind(kf.btf, hits->v[i], BTF_KIND_FUNC) < 0)
			r->btf = false;
	r->fentry_free = PMT_FN_SLOTS - fentry_used(c, ret);
}

static int kp_resolve(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg)
{
	bool ret = arg->kind == PMT_PROBE_KRETPROBE, glob;
	struct pmt_kfn_request req = {.opt = ret ? "kretprobe" : "kprobe", .spec = arg->spec};
	const struct pmt_kfeatures *f;
	struct pmt_names hits = {0};
	enum pmt_kfn_mech mech;
	uint32_t group = c->probes->n;
	uint64_t off;
	char func[256];
	size_t i;
	int err;

	if (split_offset(c, req.opt, arg->spec, func, sizeof(func), &off))
		return -EINVAL;
	if (!kf.btf_loaded) {
		kf.btf = btf__load_vmlinux_btf(); /* NULL and errno without */
		kf.btf_loaded = true;
	}
	/* trampolines are tried on the function itself where BTF has it */
	glob = strpbrk(func, "*?[") != NULL;
	f = probe_features(
		kf.btf, !glob && kf.btf && btf__find_by_name_kind(kf.btf, func, BTF_KIND_FUNC) > 0
				? func
				: "vfs_read");
	if ((err = pmt_kfn__possible(f, req.opt, arg->spec, c->err)) ||
	    (err = match_functions(c, req.opt, func, &hits, &req.ftraced)))
		goto out;
	describe(c, &req, &hits, ret);
	req.offset = off != 0;
	if ((err = pmt_kfn__choose(f, &req, &mech, c->err)))
		goto out;
	for (i = 0; i < hits.n && !err; i++)
		err = add_fn_probe(c, arg, hits.v[i], ret, off, mech, group);
	if (!err)
		pmt_info("--%s %s: %zu function%s, by %s", req.opt, arg->spec, hits.n,
			 hits.n == 1 ? "" : "s", pmt_kfn__name(mech));
out:
	pmt_names__free(&hits);
	return err;
}

static struct bpf_program *fentry_prog(struct pmt_prov_ctx *c, const struct kp_priv *kp)
{
	char name[16];

	snprintf(name, sizeof(name), "pmt_f%c%d", kp->ret ? 'x' : 'e', kp->slot);
	return bpf_object__find_program_by_name(c->skel->obj, name);
}

static void kp_prepare(struct pmt_prov_ctx *c)
{
	uint32_t i;

	for (i = 0; i < c->probes->n; i++) {
		struct pmt_probe *p = &c->probes->v[i];
		struct kp_priv *kp = p->priv;
		struct bpf_program *prog;

		if (p->prov != &pmt_kprobe_provider)
			continue;
		switch (kp->mech) {
		case PMT_KFN_KPROBE: bpf_program__set_autoload(c->skel->progs.pmt_kp, true); break;
		case PMT_KFN_MULTI: bpf_program__set_autoload(c->skel->progs.pmt_kpm, true); break;
		case PMT_KFN_FENTRY:
			prog = fentry_prog(c, kp);
			bpf_program__set_autoload(prog, true);
			bpf_program__set_attach_target(prog, 0, kp->func);
			((__u32 *)c->skel->rodata
				 ->pmt_fn_probe)[kp->slot + (kp->ret ? PMT_FN_SLOTS : 0)] = p->id;
			break;
		}
	}
}

/* One kprobe.multi link for every probe of p's group (p is its first). */
static int attach_multi(struct pmt_prov_ctx *c, struct pmt_probe *p, const struct kp_priv *kp)
{
	LIBBPF_OPTS(bpf_kprobe_multi_opts, o, .retprobe = kp->ret);
	const char **syms = calloc(c->probes->n, sizeof(*syms));
	__u64 *cookies = calloc(c->probes->n, sizeof(*cookies));
	uint32_t i, n = 0;
	int err = 0;

	if (!syms || !cookies) {
		err = pmt_error__runtime(c->err, -ENOMEM, "%s: out of memory", p->name);
		goto out;
	}
	for (i = p->id; i < c->probes->n; i++) {
		const struct kp_priv *q = c->probes->v[i].priv;

		if (c->probes->v[i].prov != &pmt_kprobe_provider || q->mech != PMT_KFN_MULTI ||
		    q->group != p->id)
			continue;
		syms[n] = q->func;
		cookies[n++] = c->probes->v[i].id;
	}
	o.syms = syms;
	o.cookies = cookies;
	o.cnt = n;
	p->link = bpf_program__attach_kprobe_multi_opts(c->skel->progs.pmt_kpm, NULL, &o);
	if (!p->link)
		err = pmt_error__attach(c->err, -errno, p->name, "a kprobe.multi link",
					strerror(errno));
out:
	free(syms);
	free(cookies);
	return err;
}

static int kp_attach(struct pmt_prov_ctx *c, struct pmt_probe *p)
{
	const struct kp_priv *kp = p->priv;
	LIBBPF_OPTS(bpf_kprobe_opts, o, .bpf_cookie = p->id, .retprobe = kp->ret,
		    .offset = (size_t)kp->offset);
	struct pmt_probe_cfg cfg = {.fixed_size = sizeof(struct pmt_call)};
	int err = pmt_prov__store_cfg(c, p, &cfg);

	if (err)
		return err;
	switch (kp->mech) {
	case PMT_KFN_MULTI: return kp->group == p->id ? attach_multi(c, p, kp) : 0;
	case PMT_KFN_FENTRY: p->link = bpf_program__attach_trace(fentry_prog(c, kp)); break;
	case PMT_KFN_KPROBE:
		p->link = bpf_program__attach_kprobe_opts(c->skel->progs.pmt_kp, kp->func, &o);
		break;
	}
	if (!p->link)
		return pmt_error__attach(c->err, -errno, p->name, pmt_kfn__name(kp->mech),
					 errname(-errno));
	return 0;
}

const struct pmt_provider pmt_kprobe_provider = {
	.name = "kprobe",
	.resolve = kp_resolve,
	.prepare = kp_prepare,
	.attach = kp_attach,
};
