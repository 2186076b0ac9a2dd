// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * User function probes: --uprobe PATH:SYMBOL[+OFF], --uretprobe PATH:SYMBOL,
 * globs in SYMBOL. The symbol is resolved here, in the ELF file's .symtab
 * and .dynsym (src/elf/elfsym.c), before anything is loaded; the perf-event
 * uprobe carries pmt_kp (bpf/kprobe.bpf.c), which reads the registers.
 * -p PID limits the uprobe to that process in the kernel itself.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes/callrec.h"
#include "probes/fault.h"
#include "elf/elfsym.h"
#include "util/log.h"
#include "probes/provider.h"
#include "probes/stackrec.h"
#include "util/strutil.h"
#include "util/suggest.h"
#include "pmtrace.skel.h"

/* this file's provider, defined at its end (src/options/kinds.h) */
extern const struct pmt_provider pmt_uprobe_provider;

struct up_priv {
	bool ret;
	uint64_t off; /* file offset */
	char path[];
};

/* PATH:SYMBOL[+OFF] -> path (located when it has no '/'), symbol, offset */
static int split_spec(struct pmt_prov_ctx *c, const char *opt, const char *spec, char *path,
		      size_t plen, char *sym, size_t slen, uint64_t *add)
{
	const char *colon = strrchr(spec, ':');
	const char *plus = colon ? strchr(colon, '+') : NULL;
	char file[PATH_MAX];
	size_t n;

	*add = 0;
	if (!colon || colon == spec || !colon[1] || plus == colon + 1 ||
	    (plus && pmt_parse_u64(plus + 1, add))) {
		return pmt_error__usage(
			c->err,
			"--%s '%s': expected PATH:SYMBOL or PATH:SYMBOL+OFFSET, e.g. /usr/bin/bash:readline",
			opt, spec);
	}
	n = (size_t)(colon - spec);
	if (n >= sizeof(file))
		n = sizeof(file) - 1;
	memcpy(file, spec, n);
	file[n] = '\0';
	n = plus ? (size_t)(plus - colon - 1) : strlen(colon + 1);
	if (n >= slen)
		n = slen - 1;
	memcpy(sym, colon + 1, n);
	sym[n] = '\0';
	return pmt_prov__binary(c, opt, spec, file, path, plen);
}

static int add_up_probe(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg, const char *path,
			const char *sym, uint64_t add, uint64_t off, bool ret)
{
	struct pmt_format *fmt;
	struct up_priv *up;
	char name[PATH_MAX + 300];
	int r;

	snprintf(name, sizeof(name), "%s:%s:%s", ret ? "uretprobe" : "uprobe", path, sym);
	if (add)
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "+%llu",
			 (unsigned long long)add);
	fmt = pmt_callrec__regs_format(name, ret);
	r = pmt_prov__add(c, &pmt_uprobe_provider, name, fmt, arg->filter,
			  sizeof(*up) + strlen(path) + 1, (void **)&up);
	if (!up)
		return r;
	up->ret = ret;
	up->off = off + add;
	strcpy(up->path, path);
	return 0;
}

static int up_resolve(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg)
{
	bool ret = arg->kind == PMT_PROBE_URETPROBE;
	const char *opt = ret ? "uretprobe" : "uprobe";
	struct pmt_elf_syms syms;
	const struct pmt_elf_sym *hit;
	char path[PATH_MAX], sym[256];
	const char *close[4];
	uint64_t add;
	size_t i, found = 0;
	int r = 0, n;

	if (split_spec(c, opt, arg->spec, path, sizeof(path), sym, sizeof(sym), &add))
		return -EINVAL;
	if (ret && add) {
		return pmt_error__usage(c->err, "--uretprobe '%s': a return probe takes no offset",
					arg->spec);
	}
	if (pmt_elf__funcs(path, &syms, c->err)) {
		pmt_error__prefix(c->err, "--%s '%s': ", opt, arg->spec);
		return -EINVAL;
	}
	if (!strpbrk(sym, "*?[")) {
		hit = pmt_elf__find(&syms, sym);
		if (hit && hit->size && add >= hit->size) {
			pmt_error__usage(
				c->err, "--%s '%s': offset %llu is past the end of %s (%llu bytes)",
				opt, arg->spec, (unsigned long long)add, sym,
				(unsigned long long)hit->size);
			pmt_error__hint(
				c->err,
				"an offset counts bytes from the function's first instruction");
			r = -EINVAL;
			found = 1;
		} else if (hit) {
			r = add_up_probe(c, arg, path, sym, add, hit->off, ret);
			found = 1;
		}
	} else if (add) {
		r = pmt_error__usage(c->err,
				     "--%s '%s': an offset goes with one symbol, not a glob", opt,
				     arg->spec);
	} else {
		for (i = 0; i < syms.n && !r; i++) {
			if (fnmatch(sym, syms.v[i].name, 0))
				continue;
			r = add_up_probe(c, arg, path, syms.v[i].name, 0, syms.v[i].off, ret);
			found++;
		}
	}
	if (!r && !found) {
		char **names = calloc(syms.n + 1, sizeof(*names));

		pmt_error__usage(c->err, "--%s '%s': %s has no function %s %s", opt, arg->spec,
				 path, strpbrk(sym, "*?[") ? "matching" : "named", sym);
		for (i = 0; names && i < syms.n; i++)
			names[i] = syms.v[i].name;
		n = names ? pmt_suggest(sym, names, syms.n, close, 4) : 0;
		for (i = 0; i < (size_t)n; i++)
			pmt_error__hint(c->err, "did you mean %s?", close[i]);
		if (!syms.n)
			pmt_error__hint(c->err, "%s has no function symbols at all (stripped?)",
					path);
		free(names);
		r = -ENOENT; /* a usage error: none such (a program's list skips it) */
	}
	pmt_elf__free(&syms);
	return r;
}

/* The argument strings an entry probe reads (a return's arguments are
 * gone by then: no fault program there). */
static uint64_t fault_mask(const struct pmt_probe *p)
{
	const struct up_priv *up = p->priv;

	return up->ret ? 0 : pmt_fault__mask(p, 6);
}

static void up_prepare(struct pmt_prov_ctx *c)
{
	bool faults = false;
	uint32_t i;

	bpf_program__set_autoload(c->skel->progs.pmt_kp, true);
	for (i = 0; i < c->probes->n; i++)
		faults |= c->probes->v[i].prov == &pmt_uprobe_provider &&
			  fault_mask(&c->probes->v[i]);
	pmt_fault__prepare(c->skel->progs.pmt_fault_up, faults);
}

static int up_attach(struct pmt_prov_ctx *c, struct pmt_probe *p)
{
	const struct up_priv *up = p->priv;
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = p->id, .retprobe = up->ret);
	struct pmt_probe_cfg cfg = {.fixed_size = sizeof(struct pmt_call)};
	int err = pmt_prov__store_cfg(c, p, &cfg);

	if (err)
		return err;
	/* -p: the kernel itself only stops in that process */
	p->link = bpf_program__attach_uprobe_opts(c->skel->progs.pmt_kp,
						  c->opts->pid ? c->opts->pid : -1, up->path,
						  (size_t)up->off, &o);
	if (!p->link)
		return pmt_error__attach(c->err, -errno, p->name, "the uprobe", strerror(errno));
	/* after the probe: the kernel runs a site's newest consumer first */
	o.bpf_cookie = fault_mask(p);
	if (o.bpf_cookie && bpf_program__autoload(c->skel->progs.pmt_fault_up))
		pmt_fault__keep(p, bpf_program__attach_uprobe_opts(c->skel->progs.pmt_fault_up,
								   c->opts->pid ? c->opts->pid : -1,
								   up->path, (size_t)up->off, &o));
	return 0;
}

const struct pmt_provider pmt_uprobe_provider = {
	.name = "uprobe",
	.resolve = up_resolve,
	.prepare = up_prepare,
	.attach = up_attach,
};
