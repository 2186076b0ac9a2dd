// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Session lifecycle, libbpf-tools style: open -> configure rodata and
 * autoload -> load -> fill maps -> attach. Probes are resolved (names
 * checked, formats parsed) before anything touches the kernel, so a usage
 * error leaves nothing behind.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stddef.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "btf/kernel_btf.h"
#include "tracefs/tracefs.h"
#include "util/grow.h"
#include "util/machine.h"
#include "util/log.h"
#include "filter/filter.h"
#include "aggregate/maps.h"
#include "util/percpu.h"
#include "run/session.h"
#include "util/strutil.h"
#include "symbols/symbols.h"
#include "output/printf.h"
#include "lang/program.h"
#include "probes/print.h"
#include "pmtrace.skel.h"
#include "pmtrace_lean.skel.h"
#include "pmtrace_flat.skel.h"

/* What the providers see of the session, as it is at this step. */
static struct pmt_prov_ctx *prov_ctx(struct pmt_session *s)
{
	struct pmt_prov_ctx *c = &s->prov;

	c->opts = s->opts;
	c->probes = &s->probes;
	c->skel = s->skel;
	c->err = &s->err;
	c->child = s->child.pid;
	c->ncpus = s->ncpus;
	c->cpu_mask = s->filter_cpu ? s->cpu_mask : NULL;
	c->stack = s->stack;
	c->exprs = &s->exprs;
	return c;
}

int pmt_session__fail(struct pmt_session *s)
{
	if (!pmt_error__set(&s->err))
		return PMT_EXIT_FAIL;
	pmt_error__print(&s->err);
	return pmt_error__exit_status(&s->err);
}

struct pmt_probe *pmt_session__probe(struct pmt_session *s, uint32_t id)
{
	return id < s->probes.n ? &s->probes.v[id] : NULL;
}

/* --pprof's value beside the sample count, when every probe's samples
 * stand for the same (their providers say what: CPU time for the CPU
 * clocks, say); else samples only. */
static void profile_info(struct pmt_session *s)
{
	struct pmt_sample_value v = {0}, w;
	uint32_t i;

	for (i = 0; i < s->probes.n; i++) {
		const struct pmt_probe *p = &s->probes.v[i];

		if (!p->prov->sample_value || !p->prov->sample_value(prov_ctx(s), p, &w) ||
		    (i &&
		     (strcmp(w.type, v.type) || strcmp(w.unit, v.unit) || w.period != v.period))) {
			v.type = NULL;
			break;
		}
		v = w;
	}
	if (v.type)
		pmt_agg__profile_info(s->agg, v.type, v.unit, v.period);
	else
		pmt_agg__profile_info(s->agg, NULL, NULL, 0);
}

/* The aggregation sees the probes' names and formats, and sets what each
 * does with its events. */
/* Does an expression walk the kernel's types: curtask, or a member
 * chain (from a function parameter BTF types)? */
static bool walks_types(const char *x)
{
	return x && (strstr(x, "curtask") || strstr(x, "kaddr") || strstr(x, "->") ||
		     strchr(x, '.') || strchr(x, '['));
}

/* The kernel's types, when a key, value or filter walks them
 * (curtask->..., path->dentry) */
static void open_types(struct pmt_session *s)
{
	const struct pmt_agg_opts *ao = &s->opts->agg;
	bool walks = walks_types(ao->by) || walks_types(ao->expr);
	int i;

	for (i = 0; i < s->opts->nr_probes; i++)
		walks = walks || walks_types(s->opts->probes[i].filter) ||
			walks_types(s->opts->probes[i].printf);
	walks = walks || walks_types(ao->lat_filters[0]) || walks_types(ao->lat_filters[1]);
	walks = walks || walks_types(s->opts->str_args);
	if (!walks)
		return;
	if (!pmt_btftypes__open(&s->types))
		s->exprs.types = &s->types.sys;
}

/* Does probe p update map m, under what condition and with what keys
 * and value of its own (ap's guard, by, expr)? The options' probes all
 * update the one map. */
static bool updates(const struct pmt_probe *p, int m, struct pmt_agg_probe *ap)
{
	const struct pmt_probe_arg *a = p->arg;
	int k;

	ap->guard = ap->by = ap->expr = NULL;
	if (p->stmts_only)
		return false;
	/* the options' probes all update their one map; a program's block
	 * those it names (none: it prints, or saves values) */
	if (!a || (!a->nupd && a->block < 0))
		return !m;
	for (k = 0; k < a->nupd; k++)
		if (a->upd[k] == m) {
			ap->guard = a->upd_guard[k];
			ap->by = a->upd_keys[k];
			ap->expr = a->upd_value[k];
			return true;
		}
	return false;
}

/* The update of map m compiled for probe p (ap): its own, or (p's
 * first taken) the next of p's chain in s->sibs */
static int place_update(struct pmt_session *s, struct pmt_probe *p, const struct pmt_agg_probe *ap,
			bool first)
{
	struct pmt_probe_cfg *g, *last = NULL;
	uint16_t at;

	if (first) {
		p->action = ap->action;
		p->agg = ap->cfg;
		return 0;
	}
	if (!(g = realloc(s->sibs, (s->nsibs + 1) * sizeof(*g))))
		return pmt_error__runtime(&s->err, -ENOMEM, "out of memory for the aggregation");
	s->sibs = g;
	memset(&g[s->nsibs], 0, sizeof(*g));
	g[s->nsibs].action = ap->action;
	g[s->nsibs].agg = ap->cfg;
	at = (uint16_t)(s->probes.n + s->nsibs + 1);
	for (uint16_t n = p->next_agg; n; n = last->next_agg)
		last = &s->sibs[n - 1 - s->probes.n];
	*(last ? &last->next_agg : &p->next_agg) = at;
	p->agg.needs_record |= ap->cfg.needs_record;
	s->nsibs++;
	return 0;
}

/* Map m (its options ao) compiled for the probes that update it: the
 * session's aggregation (m 0), or its next map */
static int compile_map(struct pmt_session *s, int m, const struct pmt_agg_opts *ao,
		       struct pmt_agg_probe *ap, char **keys, bool *taken)
{
	struct pmt_agg *agg = NULL;
	uint32_t i, n, *idx = calloc(s->probes.n ? s->probes.n : 1, sizeof(*idx));
	int err;

	if (!idx)
		return pmt_error__runtime(&s->err, -ENOMEM, "out of memory for the aggregation");
	memset(ap, 0, s->probes.n * sizeof(*ap));
	for (i = n = 0; i < s->probes.n; i++) {
		if (!updates(&s->probes.v[i], m, &ap[n]))
			continue;
		ap[n].name = s->probes.v[i].name;
		ap[n].fmt = s->probes.v[i].fmt;
		/* a tracepoint's probe key as bpftrace's probe: with its kind
		 * (a probe given twice stays name#2: its filter makes it
		 * another) */
		ap[n].probe = NULL;
		if (s->probes.v[i].prov == pmt_provider__get(PMT_PROBE_TRACEPOINT) && !keys[i] &&
		    asprintf(&keys[i], "tracepoint:%s", ap[n].name) < 0)
			keys[i] = NULL;
		ap[n].probe = keys[i];
		idx[n++] = i;
	}
	err = pmt_agg__compile(ao, ap, n, &s->exprs, &s->stack, &agg, &s->err);
	if (!err && m && s->stack)
		err = pmt_error__usage(
			&s->err, "@%s: stacks are keys of a program's one map, for now", ao->map);
	if (!err && m && (err = pmt_agg__add_map(s->agg, agg)) > 0)
		err = 0;
	else if (m)
		pmt_agg__free(agg);
	if (!m)
		s->agg = agg;
	for (i = 0; !err && agg && i < n; i++) {
		ap[i].cfg.map = (uint8_t)m;
		err = place_update(s, &s->probes.v[idx[i]], &ap[i], !taken[idx[i]]);
		taken[idx[i]] = true;
	}
	free(idx);
	return err;
}

/* Probe id's name as bpftrace spells it (a tracepoint's with its kind),
 * into buf; NULL for no such probe */
static const char *probe_name(const void *ctx, uint32_t id, char *buf, size_t len)
{
	const struct pmt_session *s = ctx;
	const struct pmt_probe *p = id < s->probes.n ? &s->probes.v[id] : NULL;

	if (!p)
		return NULL;
	snprintf(buf, len, "%s%s",
		 p->prov == pmt_provider__get(PMT_PROBE_TRACEPOINT) ? "tracepoint:" : "", p->base);
	return buf;
}

static int compile_aggregation(struct pmt_session *s)
{
	size_t n = s->probes.n ? s->probes.n : 1;
	struct pmt_agg_probe *ap = calloc(n, sizeof(*ap));
	char **keys = calloc(n, sizeof(*keys));
	bool *taken = calloc(n, sizeof(*taken));
	uint32_t i;
	int err = 0, m;

	if (!ap || !keys || !taken)
		err = pmt_error__runtime(&s->err, -ENOMEM, "out of memory for the aggregation");
	/* a block that prints streams: its map updates all follow the
	 * record's (the chain of pmt_stream_ready) */
	for (i = 0; !err && i < s->probes.n; i++)
		taken[i] = s->probes.v[i].printf_text != NULL;
	for (m = 0; !err && m <= s->opts->nmore && (!m || s->agg); m++)
		err = compile_map(s, m, m ? &s->opts->more[m - 1] : &s->opts->agg, ap, keys, taken);
	pmt_agg__name_probes(s->agg, probe_name, s);
	/* the types were for compiling; their parse of the kernel's BTF (5
	 * MB) is libbpf's too, shared, until the load (pmt_session__load) */
	s->exprs.types = NULL;
	for (i = 0; !err && i < s->probes.n; i++) {
		struct pmt_probe *p = &s->probes.v[i];

		if (p->stmts_only || !s->agg) {
			p->action = p->stmts_only ? PMT_ACT_NONE : p->action;
			if (p->stmts_only) {
				memset(&p->agg, 0, sizeof(p->agg));
				p->agg.xprog = PMT_XPROG_NONE;
			}
		}
		p->agg.needs_record |= p->stmts_record;
	}
	for (i = 0; keys && i < s->probes.n; i++)
		free(keys[i]);
	free(keys);
	free(taken);
	free(ap);
	/* profiles: --pprof's, and those --listen serves */
	if (err || !s->agg || (!s->opts->agg.pprof && !pmt_agg__is_profile(s->agg)))
		return err;
	if (s->opts->agg.offcpu)
		pmt_agg__profile_info(s->agg, "off-cpu", "nanoseconds", 0);
	else
		profile_info(s);
	return err;
}

/* --latency START[,END]: probe 0 starts the measurement, probe 1 ends
 * it; a function alone is measured from its entry to its return (the
 * kind its provider names). */
static int resolve_latency(struct pmt_session *s)
{
	const struct pmt_agg_opts *ao = &s->opts->agg;
	struct pmt_probe_arg ends[2] = {{0}};
	const struct pmt_provider *prov;
	int i, ret;

	ends[0].kind = pmt_probe_kind_of(ao->lat_start, &ends[0].spec);
	ends[0].filter = ao->lat_filters[0];
	ends[1].filter = ao->lat_filters[1];
	prov = pmt_provider__get(ends[0].kind);
	if (ao->lat_end) {
		ends[1].kind = pmt_probe_kind_of(ao->lat_end, &ends[1].spec);
	} else if (pmt_probe_kind_return(ends[0].kind) != PMT_PROBE_NONE) {
		ends[1].kind = pmt_probe_kind_return(ends[0].kind);
		ends[1].spec = ends[0].spec;
	} else {
		return pmt_error__usage(
			&s->err,
			"--latency %s: a %s has no return to end the measurement at: "
			"give START,END",
			ao->lat_start, prov->name);
	}
	for (i = 0; i < 2; i++) {
		if (strpbrk(ends[i].spec, "*?["))
			return pmt_error__usage(&s->err,
						"--latency: '%s': name one probe, not a glob",
						ends[i].spec);
		ret = pmt_provider__get(ends[i].kind)->resolve(prov_ctx(s), &ends[i]);
		if (ret)
			return ret;
	}
	if (s->probes.n != 2)
		return pmt_error__usage(&s->err,
					"--latency: START and END must be different probes");
	return 0;
}

/* --str's name i, str(X) as given or X: "str(X)" into s, X into x */
static void str_name(struct pmt_session *s, const char **n, char *x, size_t len)
{
	size_t k = strcspn(*n, ",");
	char given[256], inner[256];

	snprintf(given, sizeof(given), "%.*s", (int)k, *n);
	*n += k + ((*n)[k] == ',');
	if (pmt_operand__call_arg(given, "str", inner, sizeof(inner)))
		memcpy(given, inner, sizeof(given));
	snprintf(x, len, "%s", given);
	snprintf(s->str_names[s->nstrs], sizeof(s->str_names[0]), "str(%.150s)", x);
	s->str_name_v[s->nstrs] = s->str_names[s->nstrs];
}

/* --str X of probe p where X is a plain field: 0 (p->strs[i] set), 1
 * (p lacks it), or -EINVAL */
static int str_field(struct pmt_session *s, struct pmt_probe *p, uint32_t i, const char *x)
{
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	char call[300];
	int r;

	snprintf(call, sizeof(call), "str(%s)", x);
	r = pmt_operand__resolve(p->fmt, call, &info);
	if (r == PMT_OPERAND_UNKNOWN)
		return 1;
	if (!r && info.o.src == PMT_FSRC_PTR_STR) {
		p->strs[i] = info.o;
		return 0;
	}
	if (!r || r == PMT_OPERAND_NOT_PTR) {
		pmt_operand__resolve(p->fmt, x, &info);
		pmt_operand__not_ptr(&b, x, &info);
	} else {
		pmt_buf__printf(&b, "%s: an array, not an address", x);
	}
	r = pmt_error__usage(&s->err, "--str: %s (in %s)", pmt_buf__cstr(&b), p->name);
	pmt_buf__free(&b);
	return r;
}

/* --str X of probe p where X computes an address (a member chain, an
 * offset): compiled into mine, p->strs[i] reading its slot. */
static int str_expr(struct pmt_session *s, struct pmt_probe *p, uint32_t i, const char *x,
		    struct pmt_exprs *mine)
{
	struct pmt_opinfo info;
	char call[300];

	snprintf(call, sizeof(call), "str(%s)", x);
	if (pmt_expr__compile(mine, call, p->fmt, p->name, "--str", s->exprs.types, &info, &s->err))
		return -EINVAL;
	if (info.o.src != PMT_FSRC_PTR_STR)
		return pmt_error__usage(&s->err, "--str %s: not an address (in %s)", x, p->name);
	p->strs[i] = info.o;
	return 0;
}

/* --str X[,Y]: where each probe holds X's address (a field, or an
 * expression: a member chain); a probe without the field streams an empty
 * string there, and a name no probe has is a mistake. */
static int resolve_strings(struct pmt_session *s)
{
	struct pmt_exprs *mine = calloc(s->probes.n ? s->probes.n : 1, sizeof(*mine));
	struct pmt_operand *ops[PMT_STREAM_STRS];
	const char *n = s->opts->str_args;
	char x[256];
	uint32_t i, j, found[PMT_STREAM_STRS] = {0};
	struct pmt_buf b = {0};
	int r = 0;

	if (!mine)
		return pmt_error__runtime(&s->err, -ENOMEM, "out of memory for --str");
	for (i = 0; i < s->probes.n; i++)
		mine[i].vars = s->exprs.vars;
	for (s->nstrs = 0; n && *n && s->nstrs < PMT_STREAM_STRS && !r; s->nstrs++) {
		str_name(s, &n, x, sizeof(x));
		for (i = 0; i < s->probes.n && !r; i++) {
			struct pmt_probe *p = &s->probes.v[i];

			r = pmt_expr__is_expression(x) ? str_expr(s, p, s->nstrs, x, &mine[i])
						       : str_field(s, p, s->nstrs, x);
			found[s->nstrs] += r == 0;
			r = r < 0 ? r : 0;
		}
		if (!r && !found[s->nstrs]) {
			r = pmt_error__usage(&s->err, "--str %s: no probe has a field %s", x, x);
			if (s->probes.n) {
				pmt_operand__hint(&b, s->probes.v[0].fmt, s->probes.v[0].name, x);
				pmt_error__hint(&s->err, "%s", pmt_buf__cstr(&b));
				pmt_buf__free(&b);
			}
		}
	}
	/* each probe's expressions: one program */
	for (i = 0; i < s->probes.n; i++) {
		struct pmt_probe *p = &s->probes.v[i];

		for (j = 0; j < PMT_STREAM_STRS; j++)
			ops[j] = &p->strs[j];
		if (!r && mine[i].n)
			r = pmt_exprs__program(&s->exprs, &mine[i], ops, PMT_STREAM_STRS,
					       &p->str_xprog, p->name, &s->err);
		pmt_exprs__free(&mine[i]);
	}
	free(mine);
	return r;
}

/* Probe p's --printf: its arguments placed, their expressions one
 * program; the session's slots raised to what it uses. */
static int resolve_print(struct pmt_session *s, struct pmt_probe *p)
{
	struct pmt_operand *ops[PMT_STREAM_STRS + PMT_STREAM_VALS];
	struct pmt_exprs mine = {.vars = s->exprs.vars};
	char *bt_name = NULL;
	uint32_t j;
	int r;

	/* bpftrace's probe builtin names a tracepoint with its kind */
	if (p->prov == pmt_provider__get(PMT_PROBE_TRACEPOINT)
		    ? asprintf(&bt_name, "tracepoint:%s", p->base) < 0
		    : !(bt_name = strdup(p->base)))
		return pmt_error__runtime(&s->err, -ENOMEM, "out of memory for --printf");
	r = pmt_probe__print(p, p->printf_text, bt_name, &mine, s->exprs.types,
			     (size_t)s->opts->agg.str_len - 1, s->opts->prog, &s->err);
	free(bt_name);
	if (p->print) {
		struct timespec wall;

		p->print->start_ns = s->origin; /* elapsed's */
		clock_gettime(CLOCK_REALTIME, &wall);
		p->print->wall_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec -
				    (int64_t)p->print->start_ns;
		if (pmt_print__names(p->print, true) || pmt_print__names(p->print, false))
			p->print->syms = pmt_session__syms(s);
		p->print->probe_name = probe_name;
		p->print->probe_ctx = s;
	}
	for (j = 0; j < PMT_STREAM_STRS; j++)
		ops[j] = &p->strs[j];
	for (j = 0; j < PMT_STREAM_VALS; j++)
		ops[PMT_STREAM_STRS + j] = &p->vals[j];
	if (!r && mine.n)
		r = pmt_exprs__program(&s->exprs, &mine, ops, PMT_STREAM_STRS + PMT_STREAM_VALS,
				       &p->str_xprog, p->name, &s->err);
	pmt_exprs__free(&mine);
	if (p->nvals > s->nvals)
		s->nvals = p->nvals;
	if (p->nstrs_print > s->nstrs)
		s->nstrs = p->nstrs_print;
	s->join |= p->join_slot != 0;
	return r;
}

/* Each probe's --printf (the options refused it beside --str). */
static int resolve_prints(struct pmt_session *s)
{
	uint32_t i;
	int r = 0;

	for (i = 0; i < s->probes.n && !r; i++) {
		if (s->probes.v[i].printf_text)
			r = resolve_print(s, &s->probes.v[i]);
		if (r && s->probes.v[i].where)
			pmt_error__prefix(&s->err, "%s: ", s->probes.v[i].where);
	}
	return r;
}

/* Each program probe's statements: one program, run after what its
 * block reads (abi/probe.h's sprog) */
static int resolve_statements(struct pmt_session *s)
{
	struct pmt_operand o = {.src = PMT_FSRC_EXPR};
	uint32_t i;

	for (i = 0; i < s->probes.n; i++) {
		struct pmt_probe *p = &s->probes.v[i];

		if (!p->stmts_text)
			continue;
		if (pmt_expr__statements(&s->exprs, p->stmts_text, p->fmt, p->name, p->name,
					 s->exprs.types, &p->sprog, &s->err)) {
			if (p->where)
				pmt_error__prefix(&s->err, "%s: ", p->where);
			return -EINVAL;
		}
		o.off = p->sprog;
		p->stmts_record =
			p->sprog != PMT_XPROG_NONE && pmt_exprs__needs_record(&s->exprs, &o);
	}
	return 0;
}

/* Does program probe i share its block (a list) with another probe? */
static bool in_list(const struct pmt_opts *o, int i)
{
	int j;

	for (j = 0; o->probes[i].block >= 0 && j < o->nr_probes; j++)
		if (j != i && o->probes[j].block == o->probes[i].block)
			return true;
	return false;
}

/* Probe i of the options into the session's probes; a program's probe
 * of a list that names nothing here (-ENOENT) skipped with a warning, as
 * bpftrace skips it (*skipped) */
/* What a program's config says of a probe of a list that is missing, or
 * cannot be attached (a program without one: warn) */
static int missing(const struct pmt_session *s)
{
	return s->opts->prog ? (int)s->opts->prog->missing_probes : PMT_MISSING_WARN;
}

static int resolve_probe(struct pmt_session *s, int i, bool *skipped)
{
	const struct pmt_probe_arg *a = &s->opts->probes[i];
	const struct pmt_provider *prov = pmt_provider__get(a->kind);
	uint32_t k = s->probes.n;
	int ret;

	s->probes.block = a->block;
	ret = prov->resolve(prov_ctx(s), a);

	*skipped = ret == -ENOENT && in_list(s->opts, i) && missing(s) != PMT_MISSING_ERROR;
	if (*skipped) {
		if (missing(s) == PMT_MISSING_WARN)
			pmt_warn("%s: %s: skipped, as bpftrace skips a probe of a list that is "
				 "not there",
				 a->where, s->err.msg);
		pmt_error__clear(&s->err);
		return 0;
	}
	if (ret) {
		/* a program's probe: where it is (its filter, its name) */
		if (a->where)
			pmt_error__prefix(&s->err, "%s: ", a->where);
		return ret;
	}
	for (; k < s->probes.n; k++) {
		s->probes.v[k].printf_text = a->printf;
		s->probes.v[k].where = a->where;
		s->probes.v[k].stmts_text = a->stmts;
		s->probes.v[k].stmts_only = a->stmts_only;
		s->probes.v[k].print_guard_text = a->print_guard;
		s->probes.v[k].arg = a;
	}
	return 0;
}

/* The options' probes; a list whose every probe was skipped refused */
static int resolve_probes(struct pmt_session *s)
{
	const struct pmt_opts *o = s->opts;
	bool *skip = calloc(o->nr_probes ? (size_t)o->nr_probes : 1, sizeof(*skip));
	int i, j, ret = skip ? 0 : -ENOMEM;

	for (i = 0; !ret && i < o->nr_probes; i++)
		ret = resolve_probe(s, i, &skip[i]);
	s->probes.block = -1;
	for (i = 0; !ret && i < o->nr_probes; i++) {
		for (j = 0; skip[i] && j < o->nr_probes; j++)
			if (o->probes[j].block == o->probes[i].block && !skip[j])
				break;
		if (skip[i] && j == o->nr_probes)
			ret = pmt_error__usage(&s->err,
					       "%s: none of the probes this list names is here "
					       "(each was skipped, above)",
					       o->probes[i].where);
	}
	free(skip);
	return ret == -ENOMEM ? pmt_error__runtime(&s->err, ret, "out of memory") : ret;
}

/* What the session's probes, siblings and expressions use */
static void session_uses(const struct pmt_session *s, struct pmt_uses *u)
{
	uint32_t i;

	pmt_probes__uses(&s->probes, u);
	for (i = 0; i < s->nsibs; i++)
		pmt_uses__add(u, NULL, PMT_ACT_AGG, &s->sibs[i].agg);
	pmt_exprs__uses(&s->exprs, u);
}

int pmt_session__resolve(struct pmt_session *s, const struct pmt_opts *opts)
{
	const struct pmt_provider *prov;
	struct pmt_uses u;
	int i, ret;

	s->opts = opts;
	s->stack = opts->stack;
	s->origin = pmt_now_ns();
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		return pmt_error__runtime(&s->err, s->ncpus, "cannot read the possible CPUs: %s",
					  strerror(-s->ncpus));
	if (s->ncpus > PMT_MAX_CPUS)
		s->ncpus = PMT_MAX_CPUS;
	if (opts->cpus) {
		if (pmt_parse_cpulist(opts->cpus, s->cpu_mask, s->ncpus, &s->err)) {
			pmt_error__hint(&s->err, "this machine has CPUs 0-%d", s->ncpus - 1);
			return -EINVAL;
		}
		s->filter_cpu = true;
	}
	if (opts->cgroup) {
		char shown[256];

		if ((ret = pmt_cgroup__open(opts->cgroup, &s->cgroup_fd, shown, sizeof(shown),
					    &s->err)))
			return ret;
		s->cgroup_fd_open = true;
	}
	/* filters compile as their probes are found: their expressions into
	 * the session's, with the kernel's types where they walk them; a
	 * program's, with its saved values */
	s->probes.exprs = &s->exprs;
	s->probes.builtins_first = opts->prog != NULL;
	s->probes.block = -1;
	s->exprs.vars = opts->prog ? &s->vars : NULL;
	open_types(s);
	if ((ret = resolve_probes(s)))
		return ret;
	if (opts->agg.lat_start && (ret = resolve_latency(s)))
		return ret;
	for (i = 0; (prov = pmt_provider__nth(i)); i++)
		if (prov->imply && (ret = prov->imply(prov_ctx(s))))
			return ret;
	/* the kernel's lists of names: what resolving looked names up in */
	pmt_tracefs__forget();
	if ((ret = pmt_counter__resolve(&s->counter, opts, &s->err)) ||
	    (ret = resolve_strings(s)) || (ret = resolve_prints(s)) ||
	    (ret = resolve_statements(s)) || (ret = compile_aggregation(s)))
		return ret;
	session_uses(s, &u);
	if ((u.srcs & (1u << PMT_FSRC_CPID)) && !opts->cmd)
		return pmt_error__usage(&s->err, "cpid is the pid of the command pmtrace runs: "
						 "give one (-c 'CMD ARGS' or -- COMMAND)");
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && pmt_verbose < 2)
		return 0;
	if (level == LIBBPF_INFO && pmt_verbose < 1)
		return 0;
	if (level == LIBBPF_WARN && pmt_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool prov_used(const struct pmt_session *s, const struct pmt_provider *prov)
{
	uint32_t i;

	for (i = 0; i < s->probes.n; i++)
		if (s->probes.v[i].prov == prov)
			return true;
	return false;
}

static int add_targets(struct pmt_session *s)
{
	int fd = bpf_map__fd(s->skel->maps.pmt_targets);
	__u32 key;
	__u8 val;

	if (s->opts->pid) {
		key = (__u32)s->opts->pid;
		val = PMT_TARGET_ACTIVE;
	} else {
		key = (__u32)s->child.pid;
		val = PMT_TARGET_PENDING;
	}
	if (bpf_map_update_elem(fd, &key, &val, BPF_ANY))
		return pmt_error__runtime(&s->err, -errno,
					  "cannot add the target process to the BPF map: %s",
					  strerror(errno));
	return 0;
}

/* User stacks from CFI where the kernel can, else frame pointers. */
static void size_unwinder(struct pmt_session *s)
{
	bool on = (s->stack & PMT_STACK_USER) && !s->opts->unwind_fp;
	char exe[PATH_MAX] = "";
	struct pmt_error why = {0};

	if (on && pmt_unwind__supported(&why)) {
		pmt_warn("user stacks by frame pointers (as --unwind fp): %s", why.msg);
		on = false;
	}
	pmt_unwind__size(s->skel, on, !s->opts->no_python);
	/* aggregated stacks the kernel cannot finish come here to be */
	s->skel->rodata->pmt_agg_defer = on && s->agg;
	pmt_unwinder__init(&s->unwind, s->skel);
	/* -- CMD's program, or -p's: its tables reach the kernel before the
	 * probes are attached, so its stacks are complete from the first
	 * sample (python3's interpreter loop is in the program) */
	if (!s->opts->cmd && s->opts->pid) {
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->opts->pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
	}
	/* system wide: what runs now too (not under --cgroup: the rows
	 * are for its processes) */
	if (s->opts->cmd)
		snprintf(exe, sizeof(exe), "%s", s->opts->cmd[0]);
	pmt_unwinder__prefetch(&s->unwind, exe[0] ? exe : NULL,
			       s->opts->system_wide && !s->opts->cgroup);
}

#define PMT_VSTATS_PROGS 32

/* PMT_VERIFIER_STATS=1 in the environment: each program's verifier
 * statistics (instructions processed, time) on stderr after load, for
 * tools/bench/run. before: ask for them; else print and let go. */
static void verifier_stats(struct pmt_session *s, bool before)
{
	/* the lines of the log printed, in order, when it has the first */
	static const char *const keys[] = {"processed", "verification time", "stack depth"};
	static char buf[PMT_VSTATS_PROGS][1024];
	struct bpf_program *prog;
	const char *line;
	size_t k;
	int i = 0;

	if (!getenv("PMT_VERIFIER_STATS"))
		return;
	bpf_object__for_each_program(prog, s->skel->obj) {
		if (i >= PMT_VSTATS_PROGS || !bpf_program__autoload(prog))
			continue;
		if (before) {
			buf[i][0] = 0;
			bpf_program__set_log_buf(prog, buf[i], sizeof(buf[i]));
			bpf_program__set_log_level(prog, 4); /* BPF_LOG_STATS */
		} else if (strstr(buf[i], keys[0])) {
			for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
				if ((line = strstr(buf[i], keys[k])))
					fprintf(stderr, "verifier: %s: %.*s\n",
						bpf_program__name(prog), (int)strcspn(line, "\n"),
						line);
		}
		i++;
	}
}

/* The most map updates a block makes after its first (siblings) */
static uint32_t longest_chain(const struct pmt_session *s)
{
	uint32_t i, n, most = 0;
	uint16_t at;

	for (i = 0; i < s->probes.n; i++) {
		for (n = 0, at = s->probes.v[i].next_agg; at; n++)
			at = s->sibs[at - 1 - s->probes.n].next_agg;
		most = n > most ? n : most;
	}
	return most;
}

/* PMT_STACK_SLOTS in the environment (a power of two from 2): the first
 * slots of the kernel's stack table a stack may take, per owner; the
 * tests' way to make the slots of many stacks meet (bpf/record.bpf.h
 * pmt_stack_store). Else all 2^32. */
static uint32_t stack_slot_mask(void)
{
	const char *v = getenv("PMT_STACK_SLOTS");
	unsigned long n = v ? strtoul(v, NULL, 10) : 0;

	return n >= 2 && n <= (1ul << 31) && !(n & (n - 1)) ? (uint32_t)(n - 1) : UINT32_MAX;
}

/* What the session uses, as the programs' load-time constants */
static void set_uses(struct pmt_session *s)
{
	struct pmt_uses u;
	uint32_t i;

	s->skel->rodata->pmt_use_filter = false;
	s->skel->rodata->pmt_use_agg = false;
	s->skel->rodata->pmt_use_stream = false;
	for (i = 0; i < s->probes.n; i++) {
		if (s->probes.v[i].filter)
			s->skel->rodata->pmt_use_filter = true;
		/* (a printing block's updates follow its record) */
		if (s->probes.v[i].action != PMT_ACT_STREAM || s->probes.v[i].next_agg)
			s->skel->rodata->pmt_use_agg = true;
		if (s->probes.v[i].action == PMT_ACT_STREAM)
			s->skel->rodata->pmt_use_stream = true;
	}
	s->skel->rodata->pmt_use_vars = pmt_exprs__uses_vars(&s->exprs);

	session_uses(s, &u);
	s->skel->rodata->pmt_agg_siblings = longest_chain(s);
	s->skel->rodata->pmt_srcs_used = u.srcs;
	s->skel->rodata->pmt_stream_strs = s->nstrs;
	s->skel->rodata->pmt_stream_vals = s->nvals;
	s->skel->rodata->pmt_stream_join = s->join;
	s->skel->rodata->pmt_elapsed_origin = s->origin;
	s->skel->rodata->pmt_cpid = (__u32)s->child.pid;
	s->skel->rodata->pmt_str_len =
		(__u32)(s->opts->agg.str_len > 0 ? s->opts->agg.str_len : PMT_DEFAULT_STR_LEN);
	s->skel->rodata->pmt_key_kinds = u.key_kinds;
	s->skel->rodata->pmt_fops_used = u.fops;
	s->skel->rodata->pmt_agg_kinds = u.agg_kinds;
	s->skel->rodata->pmt_agg_nparts = u.nparts;
	s->skel->rodata->pmt_ctx_used = u.ctx_words;
	s->skel->rodata->pmt_stack_slot_mask = stack_slot_mask();
}

/* A program's BEGIN constants that are numbers: saved values from the
 * start (its tables of strings stay in user space, for printf) */
static int fill_constants(struct pmt_session *s)
{
	const struct pmt_program *p = s->opts->prog;
	int fd = bpf_map__fd(s->skel->maps.pmt_vars);
	size_t i, k;

	for (i = 0; p && s->exprs.vars && i < p->ntables; i++) {
		const struct pmt_prog_table *t = &p->tables[i];
		int id = t->strs ? 0 : pmt_varnames__id(&s->vars, t->map, strlen(t->map));

		if (id < 0)
			return pmt_error__usage(&s->err, "@%s: more than %d maps of saved values",
						t->map, PMT_VARS);
		for (k = 0; !t->strs && k < t->n; k++) {
			struct pmt_var_key vk = {.var = (uint32_t)id, .key = (uint64_t)t->keys[k]};

			s->vars.keyed[id] = t->keyed;
			if (bpf_map_update_elem(fd, &vk, &t->num[k], BPF_ANY))
				return pmt_error__runtime(&s->err, -errno,
							  "@%s: cannot save %s: %s", t->map,
							  "a constant", strerror(errno));
		}
	}
	return 0;
}

/* After load: what the programs read from maps the session fills. */
static int fill_maps(struct pmt_session *s)
{
	uint32_t i = 0;

	if (s->cgroup_fd_open &&
	    bpf_map_update_elem(bpf_map__fd(s->skel->maps.pmt_cgroup), &i, &s->cgroup_fd, BPF_ANY))
		return pmt_error__runtime(&s->err, -errno, "--cgroup %s: %s", s->opts->cgroup,
					  strerror(errno));
	for (i = 0; i < s->exprs.n; i++)
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.pmt_exprs), &i, &s->exprs.v[i],
					BPF_ANY))
			return pmt_error__runtime(&s->err, -errno, "cannot store an expression: %s",
						  strerror(errno));
	for (i = 0; i < s->nsibs; i++) {
		uint32_t at = s->probes.n + i;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.pmt_probes), &at, &s->sibs[i],
					BPF_ANY))
			return pmt_error__runtime(&s->err, -errno,
						  "cannot store a map's update: %s",
						  strerror(errno));
	}
	return fill_constants(s);
}

/* The BPF objects a session may open: the whole one, or a lean one
 * (bpf/lean.bpf.h: the same maps, settings and programs, laid out alike,
 * the Makefile checks), by how many of its programs keep their bodies. */
enum pmt_object { PMT_OBJ_WHOLE, PMT_OBJ_LEAN, PMT_OBJ_FLAT };
static const char *const object_names[] = {"whole", "lean", "flat"};

/* The skeleton, its bytes those of object o. */
static struct pmtrace_bpf *open_object(enum pmt_object o)
{
	struct pmtrace_bpf *skel = calloc(1, sizeof(*skel));
	int err;

	if (!skel) {
		errno = ENOMEM;
		return NULL;
	}
	err = pmtrace_bpf__create_skeleton(skel);
	if (!err && o == PMT_OBJ_LEAN)
		skel->skeleton->data = pmtrace_lean_bpf__elf_bytes(&skel->skeleton->data_sz);
	if (!err && o == PMT_OBJ_FLAT)
		skel->skeleton->data = pmtrace_flat_bpf__elf_bytes(&skel->skeleton->data_sz);
	if (!err) {
		/* CO-RE against the part of the kernel's BTF it reads */
		char core[64];
		LIBBPF_OPTS(bpf_object_open_opts, oo);

		if (pmt_kernel_btf__core(skel->skeleton->data, skel->skeleton->data_sz, core,
					 sizeof(core)) >= 0)
			oo.btf_custom_path = core;
		err = bpf_object__open_skeleton(skel->skeleton, &oo);
	}
	if (err) {
		pmtrace_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* The smallest object with every program the session needs. Each
 * provider of its probes says whether they need only tracepoint
 * programs without stacks (pmt_provider.lean); what the session adds
 * (stacks and their unwinder, counters, the targets' programs) is
 * decided here, and aggregating takes the flat object. PMT_NO_LEAN=1:
 * always the whole one (the tests compare). */
static enum pmt_object object_fits(struct pmt_session *s)
{
	const struct pmt_provider *prov;
	struct pmt_prov_ctx *c = prov_ctx(s);
	const char *no = getenv("PMT_NO_LEAN");
	bool agg = s->agg;
	uint32_t i;

	if ((no && *no && strcmp(no, "0")) || s->stack || s->counter.n || !s->probes.n)
		return PMT_OBJ_WHOLE;
	for (i = 0; i < s->probes.n; i++)
		agg |= s->probes.v[i].action != PMT_ACT_STREAM || s->probes.v[i].next_agg;
	for (i = 0; (prov = pmt_provider__nth(i)); i++)
		if (prov_used(s, prov) && (!prov->lean || !prov->lean(c)))
			return PMT_OBJ_WHOLE;
	return agg ? PMT_OBJ_FLAT : PMT_OBJ_LEAN;
}

/* Every program set to load is whole in object o. */
static bool object_has_all(const struct pmtrace_bpf *skel, enum pmt_object o)
{
	const struct bpf_program *whole[] = {skel->progs.pmt_tp_lean, skel->progs.pmt_fork,
					     skel->progs.pmt_exit,    skel->progs.pmt_exec,
					     skel->progs.pmt_tp_flat, skel->progs.pmt_tp_xgen,
					     skel->progs.pmt_tp_xback};
	/* (the lean object's four first) */
	size_t i, n = o == PMT_OBJ_FLAT ? sizeof(whole) / sizeof(whole[0]) : 4;
	struct bpf_program *prog;

	if (o == PMT_OBJ_WHOLE)
		return true;
	bpf_object__for_each_program(prog, skel->obj) {
		for (i = 0; i < n && whole[i] != prog; i++)
			;
		if (bpf_program__autoload(prog) && i == n)
			return false;
	}
	return true;
}

/* Open the object and set what the session uses: settings, map sizes and
 * the programs to load. */
static int open_configured(struct pmt_session *s, enum pmt_object o)
{
	const struct pmt_provider *prov;
	struct bpf_program *prog;
	bool targeted = !s->opts->system_wide;
	bool follow = targeted && s->opts->cmd;
	uint32_t i;

	libbpf_set_print(libbpf_print);
	s->skel = open_object(o);
	if (!s->skel)
		return pmt_error__runtime(&s->err, -errno, "cannot open the BPF object: %s",
					  strerror(errno));
	s->skel->rodata->pmt_filter_target = targeted;
	s->skel->rodata->pmt_follow_forks = follow;
	s->skel->rodata->pmt_filter_cpu = s->filter_cpu;
	s->skel->rodata->pmt_filter_cgroup = s->cgroup_fd_open;
	s->skel->rodata->pmt_only_probe = s->probes.n == 1 ? 0 : -1;
	memcpy((void *)s->skel->rodata->pmt_cpu_mask, s->cpu_mask, sizeof(s->cpu_mask));
	set_uses(s);
	bpf_map__set_max_entries(s->skel->maps.pmt_probes,
				 s->probes.n + s->nsibs ? s->probes.n + s->nsibs : 1);
	bpf_map__set_max_entries(s->skel->maps.pmt_exprs, s->exprs.n ? (uint32_t)s->exprs.n : 1);
	/* saved strings' map: only where a program saves strings */
	for (i = 0; i < s->vars.n && !s->vars.str[i]; i++)
		;
	if (i == s->vars.n)
		bpf_map__set_max_entries(s->skel->maps.pmt_strvars, 1);
	/* saved values' map: a megabyte the kernel clears, where none is */
	if (!s->skel->rodata->pmt_use_vars)
		bpf_map__set_max_entries(s->skel->maps.pmt_vars, 1);
	bpf_map__set_max_entries(s->skel->maps.pmt_filtered, s->probes.n ? s->probes.n : 1);
	/* events of the probes that stream none (aggregations; blocks that
	 * only save values) */
	bpf_map__set_max_entries(s->skel->maps.pmt_hits,
				 s->skel->rodata->pmt_use_agg && s->probes.n ? s->probes.n : 1);
	bpf_map__set_max_entries(s->skel->maps.pmt_read_faults,
				 2 * (s->probes.n ? s->probes.n : 1));
	pmt_aggmaps__size(s->skel, s->agg);
	/* stacks as keys, stored by content when aggregating with stacks (a
	 * stack streamed is copied out, never stored): a key refers to two
	 * at most, so the table cannot fill before --max-keys does (and 64
	 * for stacks whose key was not stored) */
	bpf_map__set_max_entries(s->skel->maps.pmt_stacks,
				 s->agg && s->stack ? 2 * (uint32_t)s->opts->agg.max_keys + 64 : 1);
	size_unwinder(s);
	if (!targeted)
		bpf_map__set_max_entries(s->skel->maps.pmt_targets, 1);

	/* load only what this session uses */
	bpf_object__for_each_program(prog, s->skel->obj)
		bpf_program__set_autoload(prog, false);
	bpf_program__set_autoload(s->skel->progs.pmt_fork, follow);
	bpf_program__set_autoload(s->skel->progs.pmt_exec, follow);
	bpf_program__set_autoload(s->skel->progs.pmt_exit, follow);
	pmt_unwind__autoload(s->skel);
	pmt_counter__prepare(&s->counter, s->skel, s->ncpus);
	for (i = 0; (prov = pmt_provider__nth(i)); i++)
		if (prov->prepare && prov_used(s, prov))
			prov->prepare(prov_ctx(s));
	return 0;
}

int pmt_session__load(struct pmt_session *s)
{
	enum pmt_object o = object_fits(s);
	int err;

	if ((err = open_configured(s, o)))
		return err;
	/* (object_fits and the providers' lean are to blame: said, and the
	 * whole object taken) */
	if (!object_has_all(s->skel, o)) {
		pmt_info("a program the %s BPF object cuts short is needed: the whole one "
			 "is loaded",
			 object_names[o]);
		pmtrace_bpf__destroy(s->skel);
		s->skel = NULL;
		o = PMT_OBJ_WHOLE;
		if ((err = open_configured(s, o)))
			return err;
	}
	if (pmt_verbose)
		pmt_info("BPF object: the %s one", object_names[o]);
	verifier_stats(s, true);
	err = pmtrace_bpf__load(s->skel);
	/* libbpf has its copies of the object's programs and BTF: the bytes
	 * it read them from (megabytes of .rodata) leave the RSS */
	pmt_pages_give_back(s->skel->skeleton->data, s->skel->skeleton->data_sz);
	pmt_kernel_btf__core_done();
	verifier_stats(s, false);
	pmt_btftypes__close(&s->types);
	if (err) {
		pmt_error__runtime(&s->err, err, "failed to load BPF programs: %s", strerror(-err));
		if (!pmt_verbose)
			pmt_error__hint(&s->err, "-v shows libbpf's and the verifier's messages");
		return err;
	}
	if ((err = fill_maps(s)))
		return err;
	if (s->agg && !(s->aggmaps = pmt_aggmaps__new(s->skel, s->agg, s->stack)))
		return pmt_error__runtime(&s->err, -ENOMEM,
					  "cannot set up the aggregation's maps: %s",
					  strerror(errno));
	return 0;
}

/* A program's probe of a list the kernel refuses to attach (a function
 * kallsyms has but that cannot be probed: 6.12's blk_account_io_start) is
 * skipped with a warning, as bpftrace skips it (*skipped); -errno else */
static int attach_probe(struct pmt_session *s, struct pmt_probe *p, bool *skipped)
{
	int err = p->prov->attach(prov_ctx(s), p);
	long i = p->arg ? p->arg - s->opts->probes : -1;

	*skipped = err && err != -ENOMEM && i >= 0 && i < s->opts->nr_probes &&
		   in_list(s->opts, (int)i) && missing(s) != PMT_MISSING_ERROR;
	if (!*skipped)
		return err;
	if (missing(s) == PMT_MISSING_WARN)
		pmt_warn("%s: %s: skipped, as bpftrace skips a probe it cannot attach", p->where,
			 s->err.msg);
	pmt_error__clear(&s->err);
	return 0;
}

/* The probes attached; a program's list none of whose probes attached
 * refused */
static int attach_probes(struct pmt_session *s)
{
	bool *skip = calloc(s->probes.n ? s->probes.n : 1, sizeof(*skip));
	uint32_t i, j;
	int err = skip ? 0 : pmt_error__runtime(&s->err, -ENOMEM, "out of memory");

	for (i = 0; !err && i < s->probes.n; i++)
		err = attach_probe(s, &s->probes.v[i], &skip[i]);
	for (i = 0; !err && i < s->probes.n; i++) {
		const struct pmt_probe *p = &s->probes.v[i];

		for (j = 0; skip[i] && j < s->probes.n; j++)
			if (!skip[j] && s->probes.v[j].arg &&
			    s->probes.v[j].arg->block == p->arg->block)
				break;
		if (skip[i] && j == s->probes.n)
			err = pmt_error__usage(&s->err,
					       "%s: none of the probes this list names could be "
					       "attached (each was skipped, above)",
					       p->where);
	}
	free(skip);
	return err;
}

int pmt_session__attach(struct pmt_session *s)
{
	bool targeted = !s->opts->system_wide;
	bool follow = targeted && s->opts->cmd;
	int err;

	if (follow) {
		/* target tracking first, so no fork or exec slips past */
		if (!(s->skel->links.pmt_fork = bpf_program__attach(s->skel->progs.pmt_fork)) ||
		    !(s->skel->links.pmt_exec = bpf_program__attach(s->skel->progs.pmt_exec)) ||
		    !(s->skel->links.pmt_exit = bpf_program__attach(s->skel->progs.pmt_exit)))
			return pmt_error__attach(&s->err, -errno,
						 "sched:sched_process_{fork,exec,free}",
						 "the tracepoints following the command's children",
						 strerror(errno));
	}
	if ((targeted && (err = add_targets(s))) ||
	    (err = pmt_counter__start(&s->counter, s->skel, s->ncpus, &s->err)))
		return err;
	s->unwind.syms = pmt_session__syms(s);
	if ((err = pmt_unwinder__start(&s->unwind, &s->err)))
		return err;
	return attach_probes(s);
}

/* In the closer: keep only kernel objects (anon inodes: BPF links, maps,
 * programs, perf events), so no pipe or file stays open on our behalf. */
static void closer_keep_kernel_objects(int keep_fd)
{
	char path[64], target[128];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int fd, dfd = dir ? dirfd(dir) : -1;
	ssize_t n;

	while (dir && (d = readdir(dir))) {
		fd = atoi(d->d_name);
		if (d->d_name[0] == '.' || fd == keep_fd || fd == dfd)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0 || (n >= 11 && !memcmp(target, "anon_inode:", 11)))
			continue;
		close(fd);
	}
	if (dir)
		closedir(dir);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

/*
 * Closing the last perf event of a tracepoint makes the kernel wait for an
 * RCU grace period, one tracepoint at a time under a global mutex
 * (tracepoint_synchronize_unregister() in perf_trace_event_unreg()): about
 * 75 ms per tracepoint here, 25 s for syscalls:sys_enter_*. So pmtrace does
 * not wait for it: pmt_stop makes every program return at once, and a
 * forked "closer" holding copies of the links waits until pmtrace has closed
 * its own (cheaply: the closer still holds them), then exits; its exit pays
 * the grace periods in the background. Nothing stays once it is gone.
 */
static void spawn_closer(struct pmt_session *s)
{
	int p[2];
	char c;

	if (pipe(p))
		return; /* then we close them ourselves, slowly */
	s->closer = fork();
	if (s->closer == 0) {
		close(p[1]);
		closer_keep_kernel_objects(p[0]);
		setsid();
		/* EOF once pmtrace has closed everything (or died) */
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	if (s->closer < 0) {
		close(p[1]);
		return;
	}
	s->closer_fd = p[1];
}

void pmt_session__detach(struct pmt_session *s)
{
	if (!s->skel)
		return;
	pmt_unwinder__stop(&s->unwind);
	if (s->skel->bss)
		s->skel->bss->pmt_stop = true;
	/* PMU events close quickly: no closer needed for them */
	if ((pmt_probes__linked(&s->probes) || s->skel->links.pmt_unwind_mmap) && !s->closer)
		spawn_closer(s);
	pmt_probes__unlink(&s->probes);
	pmtrace_bpf__detach(s->skel);
}

uint64_t *pmt_session__stat_cpus(struct pmt_session *s, enum pmt_stat which)
{
	return s->skel ? pmt_percpu__vals(s->skel->maps.pmt_stats, which) : NULL;
}

uint64_t pmt_session__stat(struct pmt_session *s, enum pmt_stat which)
{
	return s->skel ? pmt_percpu__sum(s->skel->maps.pmt_stats, which) : 0;
}

/* Events the kernel ran none of our programs for: it runs no tracing
 * program inside another on the same CPU (an interrupt's event during one
 * is skipped) and counts each skip in the program's recursion_misses. */
uint64_t pmt_session__missed(struct pmt_session *s)
{
	struct bpf_program *prog;
	struct bpf_prog_info info;
	uint64_t sum = 0;
	__u32 len;

	if (!s->skel)
		return 0;
	bpf_object__for_each_program(prog, s->skel->obj) {
		if (bpf_program__fd(prog) < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

struct pmt_syms *pmt_session__syms(struct pmt_session *s)
{
	if (s->syms)
		return s->syms;
	s->syms = pmt_syms__new(!s->opts->no_demangle, !s->opts->no_inline);
	if (s->syms && !s->opts->no_inline && !s->opts->no_debug_cache &&
	    !pmt_syms__debug_cache(s->syms, s->opts->debug_cache)) {
		pmt_syms__free(s->syms);
		s->syms = NULL;
	}
	return s->syms;
}

/* A program's map at the end, as bpftrace prints every map: what kind
 * (an aggregation's index, a saved value's, a table of strings), by name */
struct end_map {
	const char *name;
	enum { END_AGG, END_SAVED, END_TABLE, END_START } kind;
	size_t at;
};

static int by_end_name(const void *a, const void *b)
{
	return strcmp(((const struct end_map *)a)->name, ((const struct end_map *)b)->name);
}

/* Every map of the program, in their names' order; how many */
static size_t end_maps(struct pmt_session *s, struct end_map *v, size_t cap)
{
	const struct pmt_program *p = s->opts->prog;
	size_t n = 0, i;

	for (i = 0; i < pmt_agg__nmaps(s->agg) && n < cap; i++)
		v[n++] = (struct end_map){pmt_agg__map_name(s->agg, i), END_AGG, i};
	for (i = 0; s->exprs.vars && i < s->vars.n && n < cap; i++)
		v[n++] = (struct end_map){s->vars.name[i], END_SAVED, i};
	for (i = 0; i < p->ntables && n < cap; i++)
		if (p->tables[i].strs)
			v[n++] = (struct end_map){p->tables[i].map, END_TABLE, i};
	if (p->lat_map && n < cap)
		v[n++] = (struct end_map){p->lat_map, END_START, 0};
	pmt_sort(v, n, sizeof(*v), by_end_name);
	return n;
}

/* Map m at the end: its entries, or what bpftrace prints of none */
static int print_end_map(struct pmt_session *s, const struct end_map *m, struct pmt_output *out,
			 struct pmt_error *err)
{
	const struct pmt_program *p = s->opts->prog;
	bool cleared = pmt_words__has(p->cleared, m->name);
	struct pmt_buf b = {0};
	size_t k;

	if (m->kind == END_AGG && !cleared)
		return pmt_aggmaps__print_map(s->aggmaps, m->at, 0, pmt_session__syms(s), out,
					      pmt_now_ns(), err);
	if (m->kind == END_SAVED && !cleared && s->skel)
		return pmt_saved__print(s->skel, &s->vars, (uint32_t)m->at, out, err);
	for (k = 0; m->kind == END_TABLE && !cleared && k < p->tables[m->at].n; k++)
		pmt_buf__printf(&b, "@%s[%lld]: %s\n", m->name, (long long)p->tables[m->at].keys[k],
				p->tables[m->at].str[k]);
	if (m->kind == END_AGG)
		pmt_agg__program_tail(m->at ? &s->opts->more[m->at - 1] : &s->opts->agg, 0, &b);
	else if (!b.len)
		pmt_buf__putc(&b, '\n');
	pmt_output__line(out, b.p, b.len);
	pmt_buf__free(&b);
	return 0;
}

/* A program's END steps, in order */
static int print_end_steps(struct pmt_session *s, struct pmt_output *out, struct pmt_error *err)
{
	const struct pmt_program *p = s->opts->prog;
	size_t i, m, n = pmt_agg__nmaps(s->agg);
	int ret = 0;

	for (i = 0; !ret && i < p->nends; i++) {
		const struct pmt_prog_end *e = &p->ends[i];

		if (e->text) {
			pmt_output__line(out, e->text, strlen(e->text));
			continue;
		}
		for (m = 0; m < n && strcmp(pmt_agg__map_name(s->agg, m), e->map); m++)
			;
		if (m < n)
			ret = pmt_aggmaps__print_map(s->aggmaps, m, e->top, pmt_session__syms(s),
						     out, pmt_now_ns(), err);
	}
	return ret;
}

int pmt_session__print_end(struct pmt_session *s, struct pmt_output *out, struct pmt_error *err)
{
	struct end_map v[PMT_AGG_MAPS + PMT_VARS + 64];
	size_t i, n;
	int ret;

	if (!s->opts->prog)
		return s->agg && !s->opts->agg.no_end_print
			       ? pmt_aggmaps__print(s->aggmaps, pmt_session__syms(s), out,
						    pmt_now_ns(), err)
			       : 0;
	if ((ret = print_end_steps(s, out, err)))
		return ret;
	/* bpftrace's two lines before the maps, then every map */
	pmt_output__line(out, "\n\n", 2);
	n = end_maps(s, v, sizeof(v) / sizeof(v[0]));
	for (i = 0; i < n; i++)
		if ((ret = print_end_map(s, &v[i], out, err)))
			return ret;
	return 0;
}

uint64_t pmt_session__hits(struct pmt_session *s, uint32_t id)
{
	if (!s->agg && s->probes.v[id].action != PMT_ACT_NONE)
		return s->probes.v[id].events;
	return s->skel ? pmt_percpu__sum(s->skel->maps.pmt_hits, id) : 0;
}

uint64_t pmt_session__filtered(struct pmt_session *s, uint32_t id)
{
	return s->skel && s->probes.v[id].filter ? pmt_percpu__sum(s->skel->maps.pmt_filtered, id)
						 : 0;
}

uint64_t pmt_session__read_faults(struct pmt_session *s, uint32_t id, bool member)
{
	return s->skel ? pmt_percpu__sum(s->skel->maps.pmt_read_faults, 2 * id + member) : 0;
}

void pmt_session__free(struct pmt_session *s)
{
	pmt_tracefs__forget();
	pmt_session__detach(s);
	pmt_unwinder__free(&s->unwind);
	pmtrace_bpf__destroy(s->skel);
	s->skel = NULL;
	pmt_probes__free(&s->probes);
	pmt_aggmaps__free(s->aggmaps);
	s->aggmaps = NULL;
	pmt_agg__free(s->agg);
	s->agg = NULL;
	free(s->sibs);
	s->sibs = NULL;
	s->nsibs = 0;
	pmt_btftypes__close(&s->types); /* a resolve that failed left them */
	s->exprs.types = NULL;
	pmt_exprs__free(&s->exprs);
	pmt_syms__free(s->syms);
	s->syms = NULL;
	if (s->cgroup_fd_open)
		close(s->cgroup_fd);
	s->cgroup_fd_open = false;
	if (s->closer > 0) {
		close(s->closer_fd); /* the closer may go now */
		s->closer = 0;
	}
}
