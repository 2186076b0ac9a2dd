/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel function probes (--kprobe, --kretprobe, --latency kprobe:): which
 * mechanism serves a request on a kernel, and why none does. Pure: the
 * kernel's features are found out by the provider (src/probes/kprobe_bpf.c)
 * and handed in, so the choice is unit-tested for every kernel.
 *
 *   fentry/fexit  BPF trampolines and BTF for every function, ftrace can
 *                 hook it, no offset, a free placeholder program each
 *   kprobe.multi  several functions (a glob): one link (kernel 5.18+)
 *   kprobe        one perf-event kprobe per function (and FUNC+OFF)
 */
#ifndef PMT_KFUNC_H
#define PMT_KFUNC_H

#include <stdbool.h>
#include <stddef.h>
#include "util/error.h"

enum pmt_kfn_mech { PMT_KFN_KPROBE, PMT_KFN_MULTI, PMT_KFN_FENTRY };
/* AUTO: fentry where it fits, else kprobes; PREFER_KPROBE: kprobes where
 * the kernel has them (a program's kprobe:, as bpftrace's), else fentry */
enum pmt_kfn_want { PMT_KFN_AUTO, PMT_KFN_WANT_KPROBE, PMT_KFN_WANT_FENTRY, PMT_KFN_PREFER_KPROBE };

/* "kprobe", "kprobe.multi", "fentry" */
const char *pmt_kfn__name(enum pmt_kfn_mech m);

/* What a kernel offers for probing its functions. */
struct pmt_kfeatures {
	bool kprobe;	      /* a kprobe PMU, or tracefs' kprobe_events */
	bool multi;	      /* kprobe.multi links */
	int fentry;	      /* 0: trampolines work; else -errno of the test */
	char fentry_why[400]; /* fentry != 0: why ("vmlinux BTF has no ...") */
};

/* One --kprobe/--kretprobe, its functions matched on the kernel. */
struct pmt_kfn_request {
	const char *opt, *spec; /* "kprobe", "vfs_read*": for messages */
	enum pmt_kfn_want want; /* --kprobe-mode */
	size_t nfuncs;		/* functions matched */
	bool ftraced;		/* all in available_filter_functions */
	bool btf;		/* all have BTF */
	bool offset;		/* FUNC+OFF */
	size_t fentry_free;	/* placeholder programs left (of this direction) */
};

/* Can this kernel probe functions at all? 0, or -EINVAL with err set
 * (before any function is looked up). */
int pmt_kfn__possible(const struct pmt_kfeatures *k, const char *opt, const char *spec,
		      struct pmt_error *err);
/* The mechanism for r on k: 0 and *out, or -EINVAL with err set. */
int pmt_kfn__choose(const struct pmt_kfeatures *k, const struct pmt_kfn_request *r,
		    enum pmt_kfn_mech *out, struct pmt_error *err);

#endif
