// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT probes: --usdt PATH:[PROVIDER:]NAME, globs in PROVIDER and NAME.
 * The names and argument types come from the file's notes
 * (src/elf/stapsdt.c); libbpf attaches (bpf_program__attach_usdt: every
 * site of the probe, the argument places in usdt.bpf.h's maps, the
 * semaphore through the kernel's uprobe reference counter), and the
 * program is pmt_usdt (bpf/usdt.bpf.c). Fields: arg0..argN-1, typed as the
 * note says, and str(argN), the string argument N points at: in the
 * record for --str, read where a filter, a key or a value names it
 * otherwise (as any str(F)).
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes/stackrec.h"
#include "elf/stapsdt.h"
#include "probes/provider.h"
#include "probes/fault.h"
#include "util/strutil.h"
#include "util/suggest.h"
#include "pmtrace.skel.h"

/* this file's provider, defined at its end (src/options/kinds.h) */
extern const struct pmt_provider pmt_usdt_provider;

/* one allocation (freed with free()): the strings in data[] */
struct usdt_priv {
	const char *path, *provider, *name;
	char data[];
};

struct usdt_spec {
	char path[PATH_MAX];
	char provider[256]; /* "" when left out */
	char name[256];
};

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* PATH:[PROVIDER:]NAME; PATH located as for --uprobe. */
static int split_spec(struct pmt_prov_ctx *c, const char *spec, struct usdt_spec *u)
{
	const char *last = strrchr(spec, ':'), *mid = NULL, *p;
	char file[PATH_MAX];
	size_t n;

	for (p = spec; last && p < last; p++)
		if (*p == ':')
			mid = p;
	if (!last || last == spec || !last[1] || (mid && (mid == spec || mid + 1 == last)))
		return pmt_error__usage(
			c->err,
			"--usdt '%s': expected PATH:[PROVIDER:]NAME, e.g. /usr/bin/python3.11:python:gc__start",
			spec);
	n = (size_t)((mid ? mid : last) - spec);
	snprintf(file, sizeof(file), "%.*s", (int)n, spec);
	if (mid)
		snprintf(u->provider, sizeof(u->provider), "%.*s", (int)(last - mid - 1), mid + 1);
	else
		u->provider[0] = '\0';
	snprintf(u->name, sizeof(u->name), "%s", last + 1);
	return pmt_prov__binary(c, "usdt", spec, file, u->path, sizeof(u->path));
}

static bool note_matches(const struct pmt_usdt_note *n, const struct usdt_spec *u)
{
	return (!u->provider[0] || !fnmatch(u->provider, n->provider, 0)) &&
	       !fnmatch(u->name, n->name, 0);
}

/* arg0..argN-1 (8 bytes each, extended as the note's type says), then
 * the stack tail. */
static struct pmt_format *usdt_format(const char *name, const struct pmt_usdt_note *n)
{
	struct pmt_format *f = pmt_format__new(name, sizeof(struct pmt_usdt));
	struct pmt_field *fl;
	char fname[32];
	int i;

	for (i = 0; f && i < n->nargs; i++) {
		snprintf(fname, sizeof(fname), "arg%d", i);
		fl = pmt_format__add(f, fname, pmt_usdt__type(&n->args[i]),
				     (uint32_t)(i * sizeof(__u64)), 8, PMT_F_INT);
		if (!fl)
			goto nomem;
		fl->is_signed = n->args[i].is_signed;
	}
	if (f && !pmt_stackrec__add_fields(f))
		return f;
nomem:
	pmt_format__free(f);
	return NULL;
}

static int add_usdt_probe(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg, const char *path,
			  const struct pmt_usdt_note *n)
{
	struct pmt_format *fmt;
	struct usdt_priv *up;
	char name[PATH_MAX + 600];
	int r;

	if (n->unreadable >= 0) {
		pmt_error__usage(
			c->err,
			"--usdt '%s': %s:%s: argument %d (%s) is in a form libbpf %s cannot "
			"read",
			arg->spec, n->provider, n->name, n->unreadable, n->args[n->unreadable].spec,
			libbpf_version_string());
		pmt_error__hint(c->err, "base+index and symbol-relative operands need a newer "
					"libbpf; nothing was attached");
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "usdt:%s:%s:%s", path, n->provider, n->name);
	fmt = usdt_format(name, n);
	r = pmt_prov__add(c, &pmt_usdt_provider, name, fmt, arg->filter,
			  sizeof(*up) + strlen(path) + strlen(n->provider) + strlen(n->name) + 3,
			  (void **)&up);
	if (!up)
		return r;
	up->path = strcpy(up->data, path);
	up->provider = strcpy(up->data + strlen(path) + 1, n->provider);
	up->name = strcpy((char *)up->provider + strlen(n->provider) + 1, n->name);
	return 0;
}

/* "did you mean": the probes of the file closest to what was asked. */
static void hint_close(struct pmt_prov_ctx *c, const struct usdt_spec *u,
		       const struct pmt_usdt_notes *notes)
{
	char **names = calloc(notes->n + 1, sizeof(*names));
	const char *close[4];
	size_t i;
	int k;

	/* compared as given: with the provider, or without */
	for (i = 0; names && i < notes->n; i++) {
		if (asprintf(&names[i], "%s%s%s", u->provider[0] ? notes->v[i].provider : "",
			     u->provider[0] ? ":" : "", notes->v[i].name) < 0)
			names[i] = NULL;
	}
	if (names) {
		char want[520];

		snprintf(want, sizeof(want), "%s%s%s", u->provider, u->provider[0] ? ":" : "",
			 u->name);
		for (i = 0; i < notes->n && names[i]; i++)
			;
		k = i == notes->n ? pmt_suggest(want, names, notes->n, close, 4) : 0;
		for (i = 0; i < (size_t)k; i++)
			pmt_error__hint(c->err, "did you mean %s:%s?", u->path, close[i]);
		for (i = 0; i < notes->n; i++)
			free(names[i]);
		free(names);
	}
	if (!notes->n)
		pmt_error__hint(c->err, "%s has no USDT probes (no .note.stapsdt section)",
				u->path);
	else
		pmt_error__hint(c->err, "pmtrace --list 'usdt:%s' lists its %zu probe%s", u->path,
				notes->n, notes->n == 1 ? "" : "s");
}

/* A name given without its provider must be one probe's. */
static int check_unique(struct pmt_prov_ctx *c, const char *spec, const struct usdt_spec *u,
			const struct pmt_usdt_notes *notes)
{
	const struct pmt_usdt_note *first = NULL;
	size_t i;

	if (u->provider[0] || is_glob(u->name))
		return 0;
	for (i = 0; i < notes->n; i++) {
		if (!note_matches(&notes->v[i], u))
			continue;
		if (!first) {
			first = &notes->v[i];
			continue;
		}
		pmt_error__usage(c->err, "--usdt '%s': more than one provider has a probe %s", spec,
				 u->name);
		pmt_error__hint(c->err, "name one: %s:%s:%s or %s:%s:%s", u->path, first->provider,
				u->name, u->path, notes->v[i].provider, u->name);
		return -EINVAL;
	}
	return 0;
}

static int usdt_resolve(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg)
{
	struct pmt_error e = {0};
	struct pmt_usdt_notes notes;
	struct usdt_spec u;
	size_t i, found = 0;
	int r;

	if (split_spec(c, arg->spec, &u))
		return -EINVAL;
	r = pmt_usdt__read(u.path, &notes, &e);
	if (r && e.cls == PMT_ERR_USAGE)
		return pmt_error__usage(c->err, "--usdt '%s': %s", arg->spec, e.msg);
	if (r)
		return pmt_error__runtime(c->err, r, "--usdt '%s': %s", arg->spec, e.msg);
	r = check_unique(c, arg->spec, &u, &notes);
	for (i = 0; i < notes.n && !r; i++) {
		if (!note_matches(&notes.v[i], &u))
			continue;
		r = add_usdt_probe(c, arg, u.path, &notes.v[i]);
		found++;
	}
	if (!r && !found) {
		pmt_error__usage(c->err, "--usdt '%s': %s has no USDT probe %s %s%s%s", arg->spec,
				 u.path,
				 is_glob(u.name) || is_glob(u.provider) ? "matching" : "named",
				 u.provider, u.provider[0] ? ":" : "", u.name);
		hint_close(c, &u, &notes);
		r = -EINVAL;
	}
	pmt_usdt__free(&notes);
	return r;
}

static uint64_t fault_mask(const struct pmt_probe *p)
{
	return pmt_fault__mask(p, PMT_CALL_SLOTS);
}

static void usdt_prepare(struct pmt_prov_ctx *c)
{
	bool faults = false;
	uint32_t i;

	bpf_program__set_autoload(c->skel->progs.pmt_usdt, true);
	for (i = 0; i < c->probes->n; i++)
		faults |=
			c->probes->v[i].prov == &pmt_usdt_provider && fault_mask(&c->probes->v[i]);
	pmt_fault__prepare(c->skel->progs.pmt_fault_usdt, faults);
}

static int usdt_attach(struct pmt_prov_ctx *c, struct pmt_probe *p)
{
	const struct usdt_priv *up = p->priv;
	LIBBPF_OPTS(bpf_usdt_opts, o, .usdt_cookie = p->id);
	struct pmt_probe_cfg cfg = {.fixed_size = sizeof(struct pmt_usdt)};
	int err;

	err = pmt_prov__store_cfg(c, p, &cfg);
	if (err)
		return err;
	/* -p: the kernel itself only stops in that process (and sets the
	 * semaphores of that one); else in every process mapping the file */
	p->link =
		bpf_program__attach_usdt(c->skel->progs.pmt_usdt, c->opts->pid ? c->opts->pid : -1,
					 up->path, up->provider, up->name, &o);
	if (!p->link)
		return pmt_error__attach(c->err, -errno, p->name, "the USDT probe",
					 strerror(errno));
	/* after the probe: the kernel runs a site's newest consumer first */
	o.usdt_cookie = fault_mask(p);
	if (o.usdt_cookie && bpf_program__autoload(c->skel->progs.pmt_fault_usdt))
		pmt_fault__keep(p, bpf_program__attach_usdt(c->skel->progs.pmt_fault_usdt,
							    c->opts->pid ? c->opts->pid : -1,
							    up->path, up->provider, up->name, &o));
	return 0;
}

const struct pmt_provider pmt_usdt_provider = {
	.name = "usdt",
	.resolve = usdt_resolve,
	.prepare = usdt_prepare,
	.attach = usdt_attach,
};
