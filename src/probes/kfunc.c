// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The mechanism of kernel function probes (kfunc.h). */
#include <errno.h>
#include "abi.h"
#include "probes/kfunc.h"

const char *pmt_kfn__name(enum pmt_kfn_mech m)
{
	static const char *const names[] = {"kprobe", "kprobe.multi", "fentry"};

	return m <= PMT_KFN_FENTRY ? names[m] : "?";
}

int pmt_kfn__possible(const struct pmt_kfeatures *k, const char *opt, const char *spec,
		      struct pmt_error *err)
{
	if (k->kprobe || !k->fentry)
		return 0;
	pmt_error__usage(
		err,
		"--%s %s: this kernel can attach neither kprobes (no kprobe PMU in "
		"/sys/bus/event_source/devices and no kprobe_events in tracefs: built without "
		"CONFIG_KPROBES) nor fentry/fexit (%s)",
		opt, spec, k->fentry_why);
	pmt_error__hint(err, "what works on this kernel: tracepoints (--tp, see pmtrace --list), "
			     "uprobes (--uprobe PATH:SYMBOL) and PMU events (-e)");
	return -EINVAL;
}

/* 0 when fentry can take r, else -EINVAL with err set. */
static int fentry_refusal(const struct pmt_kfeatures *k, const struct pmt_kfn_request *r,
			  struct pmt_error *err)
{
	if (k->fentry) {
		pmt_error__usage(err, "--%s %s: --kprobe-mode fentry, but %s", r->opt, r->spec,
				 k->fentry_why);
		pmt_error__hint(err, "--kprobe-mode kprobe, or auto");
		return -EINVAL;
	}
	if (!r->ftraced) {
		pmt_error__usage(
			err,
			"--%s %s: fentry/fexit needs a function ftrace can hook, and this one "
			"is not in available_filter_functions",
			r->opt, r->spec);
		pmt_error__hint(err, "--kprobe-mode kprobe (or auto) attaches a kprobe to it");
		return -EINVAL;
	}
	if (!r->btf || r->offset || r->nfuncs > r->fentry_free) {
		pmt_error__usage(
			err,
			"--%s %s: fentry/fexit takes one program a function: at most %d of each "
			"a session, with BTF and no offset (this asks for %zu more)",
			r->opt, r->spec, PMT_FN_SLOTS, r->nfuncs);
		pmt_error__hint(err,
				"--kprobe-mode kprobe attaches any number (one kprobe.multi link)");
		return -EINVAL;
	}
	return 0;
}

int pmt_kfn__choose(const struct pmt_kfeatures *k, const struct pmt_kfn_request *r,
		    enum pmt_kfn_mech *out, struct pmt_error *err)
{
	bool fits = !k->fentry && r->ftraced && r->btf && !r->offset && r->nfuncs <= r->fentry_free;
	bool fentry = r->want == PMT_KFN_AUTO || (r->want == PMT_KFN_PREFER_KPROBE && !k->kprobe);

	if (r->want == PMT_KFN_WANT_FENTRY || (fentry && fits)) {
		if (fentry_refusal(k, r, err))
			return -EINVAL;
		*out = PMT_KFN_FENTRY;
		return 0;
	}
	if (!k->kprobe) {
		if (r->want == PMT_KFN_WANT_KPROBE)
			return pmt_error__usage(
				err,
				"--%s %s: this kernel has no kprobes (built without "
				"CONFIG_KPROBES)",
				r->opt, r->spec);
		return pmt_error__usage(
			err,
			"--%s %s: this kernel has no kprobes (built without "
			"CONFIG_KPROBES); fentry/fexit works here but takes at most %d "
			"functions of each, with BTF",
			r->opt, r->spec, PMT_FN_SLOTS);
	}
	*out = r->nfuncs > 1 && k->multi && r->ftraced ? PMT_KFN_MULTI : PMT_KFN_KPROBE;
	return 0;
}
