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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "probes/callrec.h"
#include "util/log.h"
#include "run/session.h"
#include "events/stackrec.h"
#include "output/stacks.h"
#include "util/strutil.h"
#include "util/suggest.h"
#include "events/tracefs.h"
#include "pmtrace.skel.h"

#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe/type"

enum kp_mech { KP_PERF, KP_MULTI, KP_FENTRY };

static const char *const mech_names[] = {"kprobe", "kprobe.multi", "fentry"};

struct kp_priv {
	enum kp_mech mech;
	bool ret;
	uint64_t offset; /* FUNC+OFF */
	int slot;	 /* KP_FENTRY: placeholder program */
	uint32_t group;	 /* KP_MULTI: first probe of its link */
	char func[];
};

/* What this kernel can do, found out once. */
static struct {
	bool probed;
	bool kprobe;	     /* perf kprobe PMU or tracefs kprobe_events */
	bool multi;	     /* kprobe.multi links */
	int fentry;	     /* 0, or -errno of a trampoline test */
	char fentry_on[256]; /* the function that test used */
	struct btf *btf;     /* vmlinux BTF (NULL: none), loaded once for all
				 * options (a --latency resolves two) and kept */
	bool btf_loaded;
	const char *fentry_step; /* where it failed: "loading", "attaching" */
} kf;

static int fentry_slots_used[2]; /* entry, return */

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

/* Load and attach a "return 0" fentry program on func: can this kernel
 * make a trampoline? 0 or -errno. */
static int probe_fentry(const struct btf *btf, const char *func)
{
	int id = btf ? btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) : -ENOENT;
	int fd, lfd, err;

	if (id < 0)
		return -ENOENT;
	kf.fentry_step = "loading";
	fd = tiny_prog(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, (__u32)id);
	if (fd < 0)
		return -errno;
	kf.fentry_step = "attaching";
	lfd = bpf_raw_tracepoint_open(NULL, fd);
	err = lfd < 0 ? -errno : 0;
	if (lfd >= 0)
		close(lfd);
	close(fd);
	return err;
}

static void probe_features(const struct btf *btf, const char *func)
{
	const char *root;

	if (kf.probed)
		return;
	kf.probed = true;
	kf.kprobe = !access(KPROBE_PMU, R_OK);
	if (!kf.kprobe && !pmt_tracefs__root(&root)) {
		char path[300];

		snprintf(path, sizeof(path), "%s/kprobe_events", root);
		kf.kprobe = !access(path, W_OK);
	}
	kf.multi = kf.kprobe && probe_multi();
	snprintf(kf.fentry_on, sizeof(kf.fentry_on), "%s", func);
	kf.fentry = btf ? probe_fentry(btf, func) : -ENOENT;
}

static const char *errname(int err)
{
	/* the kernel's ENOTSUPP (524) has no libc name */
	return err == -524 ? "not supported" : strerror(-err);
}

/* Why fentry cannot be used, after "fentry/fexit (" */
static void fentry_why(char *buf, size_t len)
{
	if (kf.fentry == -ENOENT)
		snprintf(buf, len, "vmlinux BTF has no function %s", kf.fentry_on);
	else
		snprintf(buf, len, "the kernel refused %s a fentry program on %s: %s",
			 kf.fentry_step, kf.fentry_on, errname(kf.fentry));
}

static void explain_none(const char *opt, const char *spec)
{
	char why[400];

	fentry_why(why, sizeof(why));
	pmt_err("--%s %s: this kernel can attach neither kprobes (no kprobe PMU in "
		"/sys/bus/event_source/devices and no kprobe_events in tracefs: built without "
		"CONFIG_KPROBES) nor fentry/fexit (%s)",
		opt, spec, why);
	pmt_hint("what works on this kernel: tracepoints (--tp, see pmtrace --list), "
		 "uprobes (--uprobe PATH:SYMBOL) and PMU events (-e)");
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

/* The functions a spec names: globs against available_filter_functions,
 * plain names checked there (or in kallsyms when it cannot be read, or
 * for kprobes: *traced is then false, as fentry and kprobe.multi need
 * ftrace). */
static int match_functions(const char *opt, const char *name, struct pmt_names *hits, bool *ftraced)
{
	struct pmt_names all = {0};
	const char *close[4];
	int err = pmt_tracefs__functions(&all), n, i;
	bool glob = strpbrk(name, "*?[") != NULL;

	if (err && glob) {
		pmt_err("--%s '%s': a glob needs the list of traceable functions, and "
			"available_filter_functions cannot be read: %s",
			opt, name, strerror(-err));
		return -EINVAL;
	}
	*ftraced = true;
	if (err) {
		/* no list to check against: let the kernel say */
		return pmt_names__add(hits, name);
	}
	if (pmt_names__match(&all, name, hits)) {
		pmt_names__free(&all);
		return 0;
	}
	if (!glob && kf.kprobe && in_kallsyms(name)) {
		pmt_names__free(&all);
		*ftraced = false;
		return pmt_names__add(hits, name);
	}
	if (glob) {
		pmt_err("--%s '%s': no traceable kernel function matches", opt, name);
	} else {
		pmt_err("--%s '%s': not a kernel function (in neither available_filter_functions "
			"nor /proc/kallsyms)",
			opt, name);
		n = pmt_suggest(name, all.v, all.n, close, 4);
		for (i = 0; i < n; i++)
			pmt_hint("did you mean %s?", close[i]);
	}
	pmt_names__free(&all);
	return -EINVAL;
}

/* FUNC[+OFF]: the offset, or -EINVAL */
static int split_offset(const char *opt, const char *spec, char *func, size_t len, uint64_t *off)
{
	const char *plus = strchr(spec, '+');
	size_t n = plus ? (size_t)(plus - spec) : strlen(spec);

	*off = 0;
	if (!n || n >= len || (plus && (pmt_parse_u64(plus + 1, off) || strpbrk(spec, "*?[")))) {
		pmt_err("--%s '%s': expected FUNCTION or FUNCTION+OFFSET (offsets only without globs)",
			opt, spec);
		return -EINVAL;
	}
	memcpy(func, spec, n);
	func[n] = '\0';
	return 0;
}

static int add_fn_probe(struct pmt_session *s, const struct pmt_probe_arg *arg,
			const struct btf *btf, const char *func, bool ret, uint64_t off,
			enum kp_mech mech, uint32_t group)
{
	const char *kind = ret ? "kretprobe" : "kprobe";
	struct pmt_format *fmt;
	struct kp_priv *kp;
	char name[300], err[256];
	uint32_t n = s->nr_probes;
	int r;

	if (off)
		snprintf(name, sizeof(name), "%s:%s+%llu", kind, func, (unsigned long long)off);
	else
		snprintf(name, sizeof(name), "%s:%s", kind, func);
	if (mech == KP_FENTRY)
		fmt = pmt_callrec__btf_format(name, btf,
					      btf__find_by_name_kind(btf, func, BTF_KIND_FUNC), ret,
					      err, sizeof(err));
	else
		fmt = pmt_callrec__regs_format(name, ret);
	if (!fmt) {
		if (mech == KP_FENTRY)
			pmt_err("%s", err);
		return mech == KP_FENTRY ? -EINVAL : -ENOMEM;
	}
	r = pmt_session__add_probe(s, &pmt_kprobe_provider, name, fmt, arg->filter);
	if (r || s->nr_probes == n)
		return r;
	kp = calloc(1, sizeof(*kp) + strlen(func) + 1);
	if (!kp)
		return -ENOMEM;
	kp->mech = mech;
	kp->ret = ret;
	kp->offset = off;
	kp->group = mech == KP_MULTI ? group : n;
	kp->slot = -1;
	if (mech == KP_FENTRY)
		kp->slot = fentry_slots_used[ret]++;
	strcpy(kp->func, func);
	s->probes[n].priv = kp;
	return 0;
}

static int kp_resolve(struct pmt_session *s, const struct pmt_probe_arg *arg)
{
	bool ret = arg->kind == PMT_PROBE_KRETPROBE;
	const char *opt = ret ? "kretprobe" : "kprobe";
	enum pmt_kprobe_mode mode = s->opts->kprobe_mode;
	struct pmt_names hits = {0};
	const struct btf *btf;
	char func[256];
	uint64_t off;
	bool fentry_fits = true, ftraced;
	enum kp_mech mech;
	uint32_t group = s->nr_probes;
	size_t i;
	int err;

	if (split_offset(opt, arg->spec, func, sizeof(func), &off))
		return -EINVAL;
	if (ret && off) {
		pmt_err("--kretprobe '%s': a return probe takes no offset", arg->spec);
		return -EINVAL;
	}
	if (!kf.btf_loaded) {
		kf.btf = btf__load_vmlinux_btf(); /* NULL and errno without */
		kf.btf_loaded = true;
	}
	btf = kf.btf;
	/* trampolines are tried on the function itself where BTF has it */
	probe_features(btf, !strpbrk(func, "*?[") && btf &&
					    btf__find_by_name_kind(btf, func, BTF_KIND_FUNC) > 0
				    ? func
				    : "vfs_read");
	if (!kf.kprobe && kf.fentry) {
		explain_none(opt, arg->spec);
		err = -EINVAL;
		goto out;
	}
	if ((err = match_functions(opt, func, &hits, &ftraced)))
		goto out;
	if (!ftraced) {
		fentry_fits = false;
		if (mode == PMT_KMODE_AUTO)
			mode = PMT_KMODE_KPROBE;
	}
	for (i = 0; i < hits.n; i++)
		if (!btf || btf__find_by_name_kind(btf, hits.v[i], BTF_KIND_FUNC) < 0)
			fentry_fits = false;
	if (fentry_slots_used[ret] + hits.n > PMT_FN_SLOTS || off)
		fentry_fits = false;

	if (mode == PMT_KMODE_FENTRY || (mode == PMT_KMODE_AUTO && !kf.fentry && fentry_fits)) {
		if (kf.fentry) {
			char why[400];

			fentry_why(why, sizeof(why));
			pmt_err("--%s %s: --kprobe-mode fentry, but %s", opt, arg->spec, why);
			pmt_hint("--kprobe-mode kprobe, or auto");
			err = -EINVAL;
			goto out;
		}
		if (!ftraced) {
			pmt_err("--%s %s: fentry/fexit needs a function ftrace can hook, and this "
				"one is not in available_filter_functions",
				opt, arg->spec);
			pmt_hint("--kprobe-mode kprobe (or auto) attaches a kprobe to it");
			err = -EINVAL;
			goto out;
		}
		if (!fentry_fits) {
			pmt_err("--%s %s: fentry/fexit takes one program a function: at most %d "
				"of each a session, with BTF and no offset (this asks for %zu more)",
				opt, arg->spec, PMT_FN_SLOTS, hits.n);
			pmt_hint(
				"--kprobe-mode kprobe attaches any number (one kprobe.multi link)");
			err = -EINVAL;
			goto out;
		}
		mech = KP_FENTRY;
	} else if (!kf.kprobe) {
		if (mode == PMT_KMODE_KPROBE)
			pmt_err("--%s %s: this kernel has no kprobes (built without CONFIG_KPROBES)",
				opt, arg->spec);
		else
			pmt_err("--%s %s: this kernel has no kprobes (built without CONFIG_KPROBES); "
				"fentry/fexit works here but takes at most %d functions of each, with BTF",
				opt, arg->spec, PMT_FN_SLOTS);
		err = -EINVAL;
		goto out;
	} else {
		mech = hits.n > 1 && kf.multi ? KP_MULTI : KP_PERF;
	}
	for (i = 0; i < hits.n && !err; i++)
		err = add_fn_probe(s, arg, btf, hits.v[i], ret, off, mech, group);
	if (!err)
		pmt_info("--%s %s: %zu function%s, by %s", opt, arg->spec, hits.n,
			 hits.n == 1 ? "" : "s", mech_names[mech]);
out:
	pmt_names__free(&hits);
	return err;
}

static struct bpf_program *fentry_prog(struct pmt_session *s, const struct kp_priv *kp)
{
	char name[16];

	snprintf(name, sizeof(name), "pmt_f%c%d", kp->ret ? 'x' : 'e', kp->slot);
	return bpf_object__find_program_by_name(s->skel->obj, name);
}

static void kp_prepare(struct pmt_session *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_probes; i++) {
		struct pmt_probe *p = &s->probes[i];
		struct kp_priv *kp = p->priv;
		struct bpf_program *prog;

		if (p->prov != &pmt_kprobe_provider)
			continue;
		switch (kp->mech) {
		case KP_PERF: bpf_program__set_autoload(s->skel->progs.pmt_kp, true); break;
		case KP_MULTI: bpf_program__set_autoload(s->skel->progs.pmt_kpm, true); break;
		case KP_FENTRY:
			prog = fentry_prog(s, kp);
			bpf_program__set_autoload(prog, true);
			bpf_program__set_attach_target(prog, 0, kp->func);
			((__u32 *)s->skel->rodata
				 ->pmt_fn_probe)[kp->slot + (kp->ret ? PMT_FN_SLOTS : 0)] = p->id;
			break;
		}
	}
}

/* One kprobe.multi link for every probe of p's group (p is its first). */
static int attach_multi(struct pmt_session *s, struct pmt_probe *p, const struct kp_priv *kp)
{
	LIBBPF_OPTS(bpf_kprobe_multi_opts, o, .retprobe = kp->ret);
	const char **syms = calloc(s->nr_probes, sizeof(*syms));
	__u64 *cookies = calloc(s->nr_probes, sizeof(*cookies));
	uint32_t i, n = 0;
	int err = 0;

	if (!syms || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	for (i = p->id; i < s->nr_probes; i++) {
		const struct kp_priv *q = s->probes[i].priv;

		if (s->probes[i].prov != &pmt_kprobe_provider || q->mech != KP_MULTI ||
		    q->group != p->id)
			continue;
		syms[n] = q->func;
		cookies[n++] = s->probes[i].id;
	}
	o.syms = syms;
	o.cookies = cookies;
	o.cnt = n;
	p->link = bpf_program__attach_kprobe_multi_opts(s->skel->progs.pmt_kpm, NULL, &o);
	if (!p->link) {
		err = -errno;
		pmt_err("%s: cannot attach %u functions with one kprobe.multi link: %s", p->name, n,
			strerror(-err));
	}
out:
	free(syms);
	free(cookies);
	return err;
}

static int kp_attach(struct pmt_session *s, struct pmt_probe *p)
{
	const struct kp_priv *kp = p->priv;
	LIBBPF_OPTS(bpf_kprobe_opts, o, .bpf_cookie = p->id, .retprobe = kp->ret,
		    .offset = (size_t)kp->offset);
	struct pmt_probe_cfg cfg = {.fixed_size = sizeof(struct pmt_call)};
	int err = pmt_session__store_cfg(s, p, &cfg);

	if (err)
		return err;
	switch (kp->mech) {
	case KP_MULTI: return kp->group == p->id ? attach_multi(s, p, kp) : 0;
	case KP_FENTRY: p->link = bpf_program__attach_trace(fentry_prog(s, kp)); break;
	case KP_PERF:
		p->link = bpf_program__attach_kprobe_opts(s->skel->progs.pmt_kp, kp->func, &o);
		break;
	}
	if (!p->link) {
		err = -errno;
		pmt_err("%s: cannot attach (%s): %s", p->name, mech_names[kp->mech], errname(err));
		return err;
	}
	return 0;
}

const struct pmt_provider pmt_kprobe_provider = {
	.name = "kprobe",
	.kinds = 1u << PMT_PROBE_KPROBE | 1u << PMT_PROBE_KRETPROBE,
	.resolve = kp_resolve,
	.prepare = kp_prepare,
	.attach = kp_attach,
	.extra = pmt_stacks__print,
};
