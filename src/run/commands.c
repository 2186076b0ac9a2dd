// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --list and --info: what can be traced here, and a tracepoint's fields;
 * and the summary on stderr at the end of a run. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elf/elfsym.h"
#include "tracefs/pmu.h"
#include "tracefs/tracefs.h"
#include "elf/stapsdt.h"
#include "run/aggmaps.h"
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
	if (r) {
		pmt_err("--list 'usdt:%s': %s: %s", spec, file,
			r == -ENOENT && !strchr(file, '/') ? "no such program or library"
							   : strerror(-r));
		return PMT_EXIT_USAGE;
	}
	if (pmt_usdt__read(path, &notes, &e)) {
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
	if (!hits)
		pmt_err("--list 'usdt:%s': %s has %s", spec, path,
			notes.n ? "no USDT probe matching that" : "no USDT probes");
	pmt_usdt__free(&notes);
	return r || !hits ? PMT_EXIT_USAGE : PMT_EXIT_OK;
}

/* tracepoint:CAT:NAME, then event:NAME for -e: the software events, the
 * hardware ones when this machine has a CPU PMU, and sysfs PMU events;
 * or the USDT probes of a file (usdt:PATH). */
int pmt_cmd__list(const struct pmt_opts *o)
{
	struct pmt_names tps = {0}, evs = {0}, hits = {0};
	struct pmt_buf b = {0};
	size_t i;
	int err;

	if (o->list_glob && !strncmp(o->list_glob, "usdt:", 5))
		return list_usdt(o->list_glob + 5);
	err = pmt_tracefs__events(&tps);
	if (err)
		return PMT_EXIT_FAIL;
	for (i = 0; i < tps.n; i++) {
		pmt_buf__puts(&b, "tracepoint:");
		pmt_buf__puts(&b, tps.v[i]);
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
		pmt_err("no tracepoint or event matches '%s'", o->list_glob);
		err = -ENOENT;
	}
	pmt_names__free(&tps);
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
	struct pmt_probe_arg arg = {PMT_PROBE_TRACEPOINT, o->info_spec, NULL};
	struct pmt_opts one = *o;
	const struct pmt_format *f;
	uint32_t i;
	int j;

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
		printf("tracepoint:%s (id %d), %u bytes of fixed fields\n", s.probes.v[i].name,
		       f->id, f->fixed_size);
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

/* The kernel side's counts of what it could not do, each with its cause:
 * "N <what>". */
static void warn_stats(const uint64_t *st)
{
	static const struct {
		enum pmt_stat stat;
		const char *what;
	} causes[] = {
		{PMT_STAT_OUTPUT_ERR, "events could not be written to a perf buffer"},
		{PMT_STAT_TARGET_FULL, "child processes of the command were not traced: target "
				       "map full"},
		{PMT_STAT_FILTER_ABORT,
		 "events rejected because a filter walk did not end (a bug)"},
		{PMT_STAT_STACK_FULL, "samples lost their stack: the stack table (two per "
				      "--max-keys) is full of stacks whose keys were not stored"},
		{PMT_STAT_STACK_COLLISION, "samples lost their stack: another stack had the same "
					   "64-bit hash"},
		{PMT_STAT_STACK_ERR, "samples lost their stack: the kernel could not store it"},
		{PMT_STAT_LAT_FULL, "latency starts could not be stored"},
		{PMT_STAT_OFFCPU_FULL, "switches off the CPU not timed: the table of threads off "
				       "the CPU was full"},
		{PMT_STAT_PY_NEW_FULL, "Python code objects were not read while their process "
				       "lived (the queue was full): their frames may show as "
				       "[python]"},
		{PMT_STAT_COUNTER_READ, "--counter reads failed (their calls count 0 there)"},
	};
	size_t i;

	for (i = 0; i < sizeof(causes) / sizeof(causes[0]); i++)
		if (st[causes[i].stat])
			pmt_warn("%llu %s", (unsigned long long)st[causes[i].stat], causes[i].what);
}

/* What the kernel side could not do, said as warnings (nothing is ever
 * dropped silently); returns the events lost to full rings. */
static uint64_t warn_drops(struct pmt_evloop *l, struct pmt_session *s, const uint64_t *st)
{
	uint64_t *full = pmt_session__stat_cpus(s, PMT_STAT_RING_FULL), lost, missed;
	int cpu;

	/* the programs' own count of full rings is exact; the rings' lost
	 * records may still hold some back */
	for (cpu = 0; full && cpu < s->ncpus; cpu++)
		if (full[cpu] > l->lost[cpu])
			l->lost[cpu] = full[cpu];
	free(full);
	lost = pmt_evloop__lost(l);
	if (lost) {
		pmt_warn("lost %llu events: the perf buffers were full", (unsigned long long)lost);
		for (cpu = 0; cpu < s->ncpus; cpu++)
			if (l->lost[cpu])
				pmt_eprintf("    CPU %d: %llu lost\n", cpu,
					    (unsigned long long)l->lost[cpu]);
		pmt_hint("a larger --buffer-pages (now %d) or fewer probes", s->opts->buffer_pages);
	}
	missed = pmt_session__missed(s);
	if (missed)
		pmt_warn("%llu events not seen: the kernel runs no BPF program while another "
			 "runs on the same CPU (events in interrupts that came during one)",
			 (unsigned long long)missed);
	warn_stats(st);
	if (pmt_aggmaps__lost_stacks(s->aggmaps))
		pmt_warn("%llu samples lost their stack: another stack of their process had its "
			 "key (32 bits of a 64-bit hash), and one of the two had left the kernel's "
			 "table",
			 (unsigned long long)pmt_aggmaps__lost_stacks(s->aggmaps));
	if (pmt_aggmaps__lost_keys(s->aggmaps))
		pmt_warn("%llu aggregation updates dropped: the totals hold %llu keys at most "
			 "(%d per --max-keys)",
			 (unsigned long long)pmt_aggmaps__lost_keys(s->aggmaps),
			 (unsigned long long)s->opts->agg.max_keys * PMT_TOTALS_PER_KEY,
			 PMT_TOTALS_PER_KEY);
	if (st[PMT_STAT_AGG_FULL])
		pmt_warn("%llu aggregation updates dropped: --max-keys %d is full",
			 (unsigned long long)st[PMT_STAT_AGG_FULL], s->opts->agg.max_keys);
	if (st[PMT_STAT_UNWIND_ENDED])
		pmt_info(
			"%llu user stacks end early: a caller found by frame pointers (code "
			"without CFI, or a file whose tables were still being read) lay in no text "
			"mapping",
			(unsigned long long)st[PMT_STAT_UNWIND_ENDED]);
	if (l->malformed)
		pmt_warn("%llu malformed records skipped", (unsigned long long)l->malformed);
	return lost;
}

void pmt_summary__print(struct pmt_evloop *l, struct pmt_session *s)
{
	uint64_t lost, st[PMT_STAT__MAX];
	uint64_t filtered = 0, *pf;
	uint32_t i, silent = 0;

	/* each is a per-CPU map lookup: read them once */
	for (i = 0; i < PMT_STAT__MAX; i++)
		st[i] = pmt_session__stat(s, (enum pmt_stat)i);
	lost = warn_drops(l, s, st);
	if (pmt_quiet)
		return;
	if (s->opts->agg.fn) {
		for (i = 0; i < s->probes.n; i++)
			filtered += pmt_session__filtered(s, i);
		if (filtered)
			pmt_eprintf("pmtrace: %llu events filtered out in the kernel\n",
				    (unsigned long long)filtered);
		if (s->opts->agg.lat_start && st[PMT_STAT_LAT_NOSTART])
			pmt_eprintf(
				"pmtrace: %llu end events had no start (begun before tracing, or not matched)\n",
				(unsigned long long)st[PMT_STAT_LAT_NOSTART]);
		return;
	}
	pf = calloc(s->probes.n ? s->probes.n : 1, sizeof(*pf));
	for (i = 0; pf && i < s->probes.n; i++)
		filtered += pf[i] = pmt_session__filtered(s, i);
	pmt_eprintf("pmtrace: %llu events, %llu lost", (unsigned long long)l->events,
		    (unsigned long long)lost);
	if (filtered)
		pmt_eprintf(", %llu filtered out in the kernel", (unsigned long long)filtered);
	pmt_eprintf("\n");
	for (i = 0; i < s->probes.n; i++) {
		if (!s->probes.v[i].events && s->probes.n > 20) {
			silent++;
			continue;
		}
		pmt_eprintf("%12llu  %s", (unsigned long long)s->probes.v[i].events,
			    s->probes.v[i].name);
		if (pf && s->probes.v[i].filter)
			pmt_eprintf("  (%llu filtered)", (unsigned long long)pf[i]);
		pmt_eprintf("\n");
	}
	free(pf);
	if (silent)
		pmt_eprintf("%12s  (%u more probes had no events)\n", "", silent);
}
