// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --list and --info: what can be traced here, and a tracepoint's fields. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf/elfsym.h"
#include "pmu/pmu.h"
#include "tracefs/tracefs.h"
#include "elf/stapsdt.h"
#include "aggregate/maps.h"
#include "run/commands.h"
#include "run/session.h"
#include "util/log.h"
#include "util/strutil.h"

/* One USDT probe: its name as --usdt takes it (and bpftrace -l prints it),
 * then its arguments' types, its semaphore and its sites. */
static void usdt_line(struct pmt_buf *b, const char *path, const struct pmt_usdt_note *n)
{
	int i;

	pmt_buf__printf(b, "usdt:%s:%s:%s", path, n->provider, n->name);
	for (i = 0; i < n->nargs; i++)
		pmt_buf__printf(b, "%sarg%d:%s", i ? " " : "  ", i, pmt_usdt__type(&n->args[i]));
	if (n->semaphore)
		pmt_buf__puts(b, "  (semaphore)");
	if (n->sites > 1)
		pmt_buf__printf(b, "  (%d sites)", n->sites);
	pmt_buf__putc(b, '\n');
}

/* --list usdt:PATH[:[PROVIDER:]GLOB] */
static int list_usdt(const char *spec)
{
	char file[PATH_MAX], path[PATH_MAX], pat[512];
	const char *colon = strchr(spec, ':');
	struct pmt_usdt_notes notes;
	struct pmt_error e = {0};
	struct pmt_buf b = {0};
	size_t i, hits = 0;
	int r;

	snprintf(file, sizeof(file), "%.*s", (int)(colon ? colon - spec : (long)strlen(spec)),
		 spec);
	/* PROVIDER:NAME globs; a NAME alone matches any provider's */
	snprintf(pat, sizeof(pat), "%s%s",
		 colon && strchr(colon + 1, ':') ? "" : "*:", colon ? colon + 1 : "*");
	r = pmt_elf__resolve(file, path, sizeof(path));
	if (r)
		pmt_error__usage(&e, "--list 'usdt:%s': %s: %s", spec, file,
				 r == -ENOENT && !strchr(file, '/') ? "no such program or library"
								    : strerror(-r));
	if (r || pmt_usdt__read(path, &notes, &e)) {
		pmt_error__print(&e);
		return pmt_error__exit_status(&e);
	}
	for (i = 0; i < notes.n; i++) {
		char name[600];

		snprintf(name, sizeof(name), "%s:%s", notes.v[i].provider, notes.v[i].name);
		if (fnmatch(pat, name, 0))
			continue;
		usdt_line(&b, path, &notes.v[i]);
		hits++;
	}
	if (b.len && fwrite(b.p, 1, b.len, stdout) != b.len)
		r = -EIO;
	pmt_buf__free(&b);
	if (!hits) {
		pmt_error__usage(&e, "--list 'usdt:%s': %s has %s", spec, path,
				 notes.n ? "no USDT probe matching that" : "no USDT probes");
		pmt_error__print(&e);
	}
	pmt_usdt__free(&notes);
	return r || !hits ? PMT_EXIT_USAGE : PMT_EXIT_OK;
}

/* tracepoint:CAT:NAME, then event:NAME for -e: the software events, the
 * hardware ones when this machine has a CPU PMU, and sysfs PMU events;
 * or the USDT probes of a file (usdt:PATH). */
int pmt_cmd__list(const struct pmt_opts *o)
{
	const struct pmt_names *tps;
	struct pmt_names evs = {0}, hits = {0};
	struct pmt_error e = {0};
	struct pmt_buf b = {0};
	size_t i;
	int err;

	if (o->list_glob && !strncmp(o->list_glob, "usdt:", 5))
		return list_usdt(o->list_glob + 5);
	err = pmt_tracefs__events(&tps, &e);
	if (err) {
		pmt_error__print(&e);
		return PMT_EXIT_FAIL;
	}
	for (i = 0; i < tps->n; i++) {
		pmt_buf__puts(&b, "tracepoint:");
		pmt_buf__puts(&b, tps->v[i]);
		pmt_names__add(&evs, pmt_buf__cstr(&b));
		b.len = 0;
	}
	{
		struct pmt_names pmu = {0};

		pmt_pmu__known(&pmu, pmt_pmu__has_hardware(PMT_PMU_SYSFS));
		pmt_pmu__sysfs_events(PMT_PMU_SYSFS, &pmu);
		for (i = 0; i < pmu.n; i++) {
			pmt_buf__puts(&b, "event:");
			pmt_buf__puts(&b, pmu.v[i]);
			pmt_names__add(&evs, pmt_buf__cstr(&b));
			b.len = 0;
		}
		pmt_names__free(&pmu);
	}
	if (o->list_glob) {
		char pat[512];

		/* a glob matches the name with or without its kind prefix */
		snprintf(pat, sizeof(pat), "*:%s", o->list_glob);
		pmt_names__match(&evs,
				 !strncmp(o->list_glob, "tracepoint:", 11) ? o->list_glob : pat,
				 &hits);
		/* a bare word lists names that contain it */
		if (!hits.n && !strpbrk(o->list_glob, "*?[")) {
			snprintf(pat, sizeof(pat), "*%s*", o->list_glob);
			pmt_names__match(&evs, pat, &hits);
		}
	}
	for (i = 0; i < (o->list_glob ? hits.n : evs.n); i++) {
		pmt_buf__puts(&b, o->list_glob ? hits.v[i] : evs.v[i]);
		pmt_buf__putc(&b, '\n');
	}
	if (fwrite(b.p, 1, b.len, stdout) != b.len)
		err = -EIO;
	pmt_buf__free(&b);
	if (o->list_glob && !hits.n) {
		pmt_error__usage(&e, "no tracepoint or event matches '%s'", o->list_glob);
		pmt_error__print(&e);
		err = -ENOENT;
	}
	pmt_tracefs__forget();
	pmt_names__free(&evs);
	pmt_names__free(&hits);
	return err ? PMT_EXIT_USAGE : PMT_EXIT_OK;
}

static const char *kind_name(enum pmt_field_kind k)
{
	switch (k) {
	case PMT_F_INT: return "int";
	case PMT_F_PTR: return "pointer";
	case PMT_F_STR: return "string";
	case PMT_F_ARRAY: return "array";
	case PMT_F_DSTR: return "dynamic string";
	case PMT_F_DARRAY: return "dynamic array";
	}
	return "?";
}

int pmt_cmd__info(const struct pmt_opts *o)
{
	struct pmt_session s = {0};
	struct pmt_probe_arg arg = {.kind = PMT_PROBE_TRACEPOINT, .spec = o->info_spec};
	struct pmt_opts one = *o;
	const struct pmt_format *f;
	uint32_t i;
	int j;

	/* any kind by its prefix (kprobe:vfs_open, rawtracepoint:sched_switch) */
	arg.kind = pmt_probe_kind_of(o->info_spec, &arg.spec);
	one.probes = &arg;
	one.nr_probes = 1;
	one.cpus = NULL;
	if (pmt_session__resolve(&s, &one)) {
		int ret = pmt_session__fail(&s);

		pmt_session__free(&s);
		return ret;
	}
	for (i = 0; i < s.probes.n; i++) {
		f = s.probes.v[i].fmt;
		if (arg.kind == PMT_PROBE_TRACEPOINT)
			printf("tracepoint:%s (id %d), %u bytes of fixed fields\n",
			       s.probes.v[i].name, f->id, f->fixed_size);
		else
			printf("%s, %u bytes of fields\n", s.probes.v[i].name, f->fixed_size);
		printf("    %-24s %-28s %6s %5s %-6s %s\n", "FIELD", "TYPE", "OFFSET", "SIZE",
		       "SIGNED", "DECODED AS");
		for (j = 0; j < f->nr_fields; j++) {
			const struct pmt_field *fl = &f->fields[j];

			printf("    %-24s %-28s %6u %5u %-6s %s%s\n", fl->name, fl->type,
			       fl->offset, fl->size, fl->is_signed ? "yes" : "no",
			       kind_name(fl->kind), fl->is_common ? " (common)" : "");
		}
	}
	pmt_session__free(&s);
	return PMT_EXIT_OK;
}
