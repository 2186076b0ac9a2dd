// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One snapshot of an aggregation, made once a print: the entries turned
 * into deltas since the previous print (each entry keeps its values of
 * then: nothing is lost between reading and clearing), sorted; then
 * handed to each sink the options chose (aggregate_internal.h). The
 * pieces every sink reads are here: groups of entries by key, keys as
 * text, stacks as frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate_internal.h"
#include "symbols/symbols.h"
#include "util/grow.h"
#include "util/strutil.h"

/* Each entry's count and sum less its base (sign -1: its deltas since the
 * last print; min/max stay since the start), or the base added back (+1):
 * the deltas are made in place and undone after the print (unsigned
 * arithmetic: exact), where a copy of the totals, and the last print's
 * kept for the next, were two megabytes of the always-on print's peak */
static void to_deltas(struct pmt_agg_entry *e, size_t n, int sign)
{
	size_t i;

	for (i = 0; i < n; i++) {
		e[i].val.count += (uint64_t)sign * e[i].base_count;
		e[i].val.sum = (int64_t)((uint64_t)e[i].val.sum +
					 (uint64_t)sign * (uint64_t)e[i].base_sum);
	}
}

bool pmt_agg__is_stack(uint8_t disp)
{
	return disp == PMT_DISP_KSTACK || disp == PMT_DISP_USTACK;
}

size_t pmt_agg__forget(const struct pmt_agg *a, struct pmt_agg_entries *cur,
		       bool (*drop)(void *ctx, const struct pmt_agg_key *key, bool idle), void *ctx)
{
	size_t i, kept = 0, n = cur->n;

	if (a->opts->interval <= 0 || a->opts->keep)
		return 0;
	for (i = 0; i < n; i++) {
		const struct pmt_agg_entry *e = &cur->v[i];

		if (drop(ctx, &e->key, e->idle))
			continue;
		cur->v[kept++] = *e; /* stays sorted */
	}
	cur->n = kept;
	return n - kept;
}

void pmt_agg__key_stacks_set(const struct pmt_agg *a, struct pmt_agg_key *key,
			     uint64_t (*fn)(void *ctx, bool user, uint64_t v), void *ctx)
{
	const struct pmt_keylayout *kl = &a->keys;
	uint64_t v;
	int i;

	for (i = 0; i < kl->n; i++) {
		if (!pmt_agg__is_stack(kl->disp[i]))
			continue;
		memcpy(&v, key->data + kl->at[i], 8);
		v = fn(ctx, kl->disp[i] == PMT_DISP_USTACK, v);
		memcpy(key->data + kl->at[i], &v, 8);
	}
}

struct each_stack {
	void (*fn)(void *ctx, bool user, uint64_t v);
	void *ctx;
};

static uint64_t call_each(void *ctx, bool user, uint64_t v)
{
	const struct each_stack *e = ctx;

	e->fn(e->ctx, user, v);
	return v;
}

void pmt_agg__key_stacks(const struct pmt_agg *a, const struct pmt_agg_key *key,
			 void (*fn)(void *ctx, bool user, uint64_t v), void *ctx)
{
	struct each_stack e = {fn, ctx};
	struct pmt_agg_key k = *key;

	pmt_agg__key_stacks_set(a, &k, call_each, &e);
}

/* no stack: a kernel key below 0, a user key's low half all ones
 * (bpf/record.bpf.h pmt_stack_store) */
bool pmt_agg__stack_none(bool user, uint64_t v)
{
	return user ? (uint32_t)v == 0xffffffffu : (int64_t)v < 0;
}

uint64_t pmt_agg__stack_none_of(bool user, uint64_t v)
{
	return user ? v | 0xffffffffu : UINT64_MAX;
}

int pmt_agg__stack_frames(const struct pmt_agg_io *io, uint8_t disp, uint64_t v, uint64_t *ips,
			  uint32_t *pid)
{
	bool user = disp == PMT_DISP_USTACK;
	bool none = pmt_agg__stack_none(user, v);

	*pid = user ? (uint32_t)(v >> 32) : 0;
	if (none || !io->stack)
		return 0;
	return io->stack(io->stack_ctx, user, v, ips);
}

/* --- keys ------------------------------------------------------------------ */

/* The address of a sym key part, and the process it belongs to. */
static uint64_t sym_part(const struct pmt_keylayout *kl, const struct pmt_agg_key *k, int i,
			 uint32_t *pid)
{
	uint64_t v, p = 0;

	memcpy(&v, k->data + kl->at[i], 8);
	if (i > 0 && kl->disp[i - 1] == PMT_DISP_HIDDEN)
		memcpy(&p, k->data + kl->at[i - 1], 8);
	*pid = (uint32_t)p;
	return v;
}

/* A probe's or a counter's name by its index; a probe's function (func:
 * its name's last part, kprobe:vfs_read's vfs_read). */
static const char *name_part(const struct pmt_agg *a, uint8_t kind, uint8_t disp, uint64_t v)
{
	const char *s;

	if (kind == PMT_KEY_COUNTER)
		return v < (uint64_t)a->opts->ncounters ? a->opts->counters[v] : "?";
	s = v < a->nprobes ? a->probe_keys[v] : "?";
	return disp == PMT_DISP_FUNC && strrchr(s, ':') ? strrchr(s, ':') + 1 : s;
}

/* A session's probe id (a saved func or probe) as its function or name
 * (its number where there is no such probe) */
static void probe_of(const struct pmt_agg *a, uint8_t disp, uint64_t v, struct pmt_buf *b)
{
	char buf[256];
	const char *s = a->probe_name && v <= UINT32_MAX
				? a->probe_name(a->probe_ctx, (uint32_t)v, buf, sizeof(buf))
				: NULL;

	if (!s) {
		pmt_buf__u64(b, v);
		return;
	}
	pmt_buf__puts(b, disp == PMT_DISP_FUNC_OF && strrchr(s, ':') ? strrchr(s, ':') + 1 : s);
}

const char *pmt_agg__key_string(const struct pmt_agg *a, const struct pmt_agg_key *k, int i,
				size_t *len)
{
	const char *d = (const char *)k->data + a->keys.at[i];

	if (!d[0] && a->keys.len[i] > 1 && d[1] == PMT_KEY_FAULT) {
		*len = strlen(PMT_KEY_FAULT_TEXT);
		return PMT_KEY_FAULT_TEXT;
	}
	*len = pmt_strnlen(d, a->keys.len[i]);
	return d;
}

static enum pmt_cgroup_show cgroup_show(uint8_t disp)
{
	return disp == PMT_DISP_CGROUP ? PMT_CGROUP_PATH
	       : disp == PMT_DISP_UNIT ? PMT_CGROUP_UNIT
				       : PMT_CGROUP_CONTAINER;
}

void pmt_agg__key_part(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k, int i)
{
	const struct pmt_keylayout *kl = &a->keys;
	const uint8_t *d = k->data + kl->at[i];
	uint32_t pid;
	uint64_t v;

	memcpy(&v, d, 8);
	if (kl->disp[i] == PMT_DISP_SYM) {
		v = sym_part(kl, k, i, &pid);
		pmt_syms__name(io->syms, pid, v, false, true, b);
	} else if (kl->disp[i] == PMT_DISP_FUNC_OF || kl->disp[i] == PMT_DISP_PROBE_OF) {
		probe_of(a, kl->disp[i], v, b);
	} else if (kl->disp[i] == PMT_DISP_NTOP && kl->kind[i] == PMT_KEY_ADDR6) {
		char s[INET6_ADDRSTRLEN];

		pmt_buf__puts(b, inet_ntop(AF_INET6, d, s, sizeof(s)) ? s : "?");
	} else if (kl->disp[i] == PMT_DISP_NTOP) {
		pmt_buf__printf(b, "%u.%u.%u.%u", d[0], d[1], d[2], d[3]);
	} else if (kl->disp[i] >= PMT_DISP_CGROUP && kl->disp[i] <= PMT_DISP_UNIT) {
		pmt_syms__cgroup(io->syms, v, cgroup_show(kl->disp[i]), b);
	} else if (kl->kind[i] == PMT_KEY_STRING) {
		size_t n;
		const char *s = pmt_agg__key_string(a, k, i, &n);

		pmt_buf__text_str(b, s, n);
	} else if (kl->kind[i] == PMT_KEY_PROBE || kl->kind[i] == PMT_KEY_COUNTER) {
		pmt_buf__puts(b, name_part(a, kl->kind[i], kl->disp[i], v));
	} else if (kl->is_signed[i]) {
		pmt_buf__s64(b, (int64_t)v);
	} else {
		pmt_buf__u64(b, v);
	}
}

void pmt_agg__key_json(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_json *j,
		       const struct pmt_agg_key *k, int i)
{
	const struct pmt_keylayout *kl = &a->keys;
	const uint8_t *d = k->data + kl->at[i];
	struct pmt_buf name = {0};
	uint32_t pid;
	uint64_t v;

	memcpy(&v, d, 8);
	if (kl->disp[i] == PMT_DISP_SYM) {
		v = sym_part(kl, k, i, &pid);
		pmt_syms__name(io->syms, pid, v, false, true, &name);
		pmt_json__strn(j, name.p, name.len);
		pmt_buf__free(&name);
	} else if (kl->disp[i] == PMT_DISP_NTOP || kl->disp[i] == PMT_DISP_FUNC_OF ||
		   kl->disp[i] == PMT_DISP_PROBE_OF ||
		   (kl->disp[i] >= PMT_DISP_CGROUP && kl->disp[i] <= PMT_DISP_UNIT)) {
		/* as text shows it */
		pmt_agg__key_part(a, io, &name, k, i);
		pmt_json__strn(j, name.p, name.len);
		pmt_buf__free(&name);
	} else if (kl->kind[i] == PMT_KEY_STRING) {
		size_t n;
		const char *s = pmt_agg__key_string(a, k, i, &n);

		pmt_json__strn(j, s, n);
	} else if (kl->kind[i] == PMT_KEY_PROBE || kl->kind[i] == PMT_KEY_COUNTER) {
		pmt_json__str(j, name_part(a, kl->kind[i], kl->disp[i], v));
	} else if (kl->is_signed[i]) {
		pmt_json__s64(j, (int64_t)v);
	} else {
		pmt_json__u64(j, v);
	}
}

static void text_frame(void *ctx, const char *name, size_t len)
{
	pmt_buf__puts(ctx, "\n        ");
	pmt_buf__add(ctx, name, len);
}

/* A frame as bpftrace 0.17 prints one in a map's key: a line indented
 * by four spaces (its printf's kstack has eight), "func+OFFSET", the
 * offset in decimal, or the address where nothing names it. */
static void bpftrace_frame(const struct pmt_agg_io *io, uint32_t pid, uint64_t ip,
			   struct pmt_buf *name, struct pmt_buf *b)
{
	name->len = 0;
	pmt_syms__name(io->syms, pid, ip, true, true, name);
	pmt_buf__cstr(name);
	pmt_buf__puts(b, "\n    ");
	if (!strncmp(name->p, "[unknown] ", 10))
		pmt_buf__puts(b, name->p + 10);
	else
		pmt_syms__offset_decimal(name->p, name->len, b);
}

/* A stack as bpftrace prints one, a frame a line: a program's as
 * bpftrace 0.17 does (bpftrace: each frame at its return address); the
 * options' with the functions inlined at each, as streamed output and
 * folded stacks name them. */
static void stack_text(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       uint8_t disp, uint64_t v)
{
	uint64_t ips[PMT_STACK_DEPTH];
	struct pmt_buf name = {0};
	uint32_t pid;
	int n = pmt_agg__stack_frames(io, disp, v, ips, &pid), i;

	for (i = 0; i < n; i++)
		if (a->opts->map)
			bpftrace_frame(io, pid, ips[i], &name, b);
		else
			pmt_syms__names(io->syms, pid, ips[i], &name, text_frame, b);
	pmt_buf__free(&name);
}

void pmt_agg__touch_files(const struct pmt_agg *a, const struct pmt_agg_entries *cur,
			  const struct pmt_agg_io *io)
{
	const struct pmt_keylayout *kl = &a->keys;
	uint64_t ips[PMT_STACK_DEPTH], v;
	uint32_t pid;
	size_t e;
	int i, k, n;

	for (e = 0; e < cur->n; e++)
		for (i = 0; i < kl->n; i++) {
			if (kl->disp[i] != PMT_DISP_USTACK)
				continue;
			memcpy(&v, cur->v[e].key.data + kl->at[i], 8);
			n = pmt_agg__stack_frames(io, kl->disp[i], v, ips, &pid);
			for (k = 0; k < n; k++)
				pmt_syms__touch(io->syms, pid, ips[k]);
		}
}

void pmt_agg__key_text(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k)
{
	const struct pmt_keylayout *kl = &a->keys;
	bool first = true;
	uint64_t v, kv;
	size_t at;
	int i;

	for (i = 0; i < kl->n; i++) {
		uint8_t disp = kl->disp[i];

		memcpy(&v, k->data + kl->at[i], 8);
		if (disp == PMT_DISP_HIDDEN)
			continue;
		if (!first && *kl->names[i])
			pmt_buf__puts(b, ", ");
		first = false;
		if (!pmt_agg__is_stack(disp)) {
			pmt_agg__key_part(a, io, b, k, i);
			continue;
		}
		at = b->len;
		/* innermost first, so a kernel part that follows its user
		 * part ("stack") is shown before it */
		if (disp == PMT_DISP_USTACK && i + 1 < kl->n &&
		    kl->disp[i + 1] == PMT_DISP_KSTACK && !*kl->names[i + 1]) {
			memcpy(&kv, k->data + kl->at[i + 1], 8);
			stack_text(a, io, b, PMT_DISP_KSTACK, kv);
			i++;
		}
		stack_text(a, io, b, disp, v);
		if (b->len != at) /* an empty stack is @[], as bpftrace shows it */
			pmt_buf__putc(b, '\n');
	}
}

/* Folded stacks go root first: the shown keys (comm, ...), then the user
 * frames, then the kernel ones; -1 for parts not shown. */
static int fold_pass(uint8_t disp)
{
	switch (disp) {
	case PMT_DISP_HIDDEN: return -1;
	case PMT_DISP_USTACK: return 1;
	case PMT_DISP_KSTACK: return 2;
	default: return 0;
	}
}

/* One folded frame: ';' and ' ' separate frames and the count. */
static void fold_name(struct pmt_buf *b, const struct pmt_buf *name)
{
	size_t f;

	for (f = 0; f < name->len; f++)
		pmt_buf__putc(b, name->p[f] == ';' || name->p[f] == ' ' ? '_' : name->p[f]);
}

void pmt_agg__folded_text(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
			  const struct pmt_agg_key *k)
{
	const struct pmt_keylayout *kl = &a->keys;
	struct pmt_buf name = {0};
	uint64_t v, ips[PMT_STACK_DEPTH];
	bool first = true;
	uint32_t pid;
	int i, pass, n, f;

	for (pass = 0; pass < 3; pass++) {
		for (i = 0; i < kl->n; i++) {
			if (fold_pass(kl->disp[i]) != pass)
				continue;
			memcpy(&v, k->data + kl->at[i], 8);
			if (!pass) {
				name.len = 0;
				pmt_agg__key_part(a, io, &name, k, i);
				if (!name.len) /* no container: no frame */
					continue;
				if (!first)
					pmt_buf__putc(b, ';');
				first = false;
				fold_name(b, &name);
				continue;
			}
			n = pmt_agg__stack_frames(io, kl->disp[i], v, ips, &pid);
			for (f = n - 1; f >= 0; f--) {
				if (!first)
					pmt_buf__putc(b, ';');
				first = false;
				pmt_syms__folded(io->syms, pid, ips[f], b);
			}
		}
	}
	pmt_buf__free(&name);
}

/* --- groups ---------------------------------------------------------------- */

static double group_value(enum pmt_agg_fn fn, const struct pmt_agg_val *v)
{
	switch (fn) {
	case PMT_FN_SUM: return (double)v->sum;
	case PMT_FN_AVG: return v->count ? (double)v->sum / (double)v->count : 0;
	case PMT_FN_MIN: return (double)v->min;
	case PMT_FN_MAX: return (double)v->max;
	default: return (double)v->count;
	}
}

static int cmp_group(const void *a, const void *b)
{
	double x = ((const struct pmt_agg_group *)a)->sortval,
	       y = ((const struct pmt_agg_group *)b)->sortval;

	return x < y ? -1 : x > y;
}

static int cmp_text(const void *a, const void *b, void *pieces)
{
	return pmt_pieces__cmp(pieces, ((const struct pmt_agg_group *)a)->text,
			       ((const struct pmt_agg_group *)b)->text);
}

const char *pmt_agg_snap__text(struct pmt_agg_snap *s, const struct pmt_agg_group *g)
{
	if (!g->text)
		return NULL;
	s->text.len = 0;
	pmt_pieces__join(&s->pieces, g->text, &s->text);
	return pmt_buf__cstr(&s->text);
}

/* The text in b as pieces (an empty text when memory ran out) */
static uint32_t *text_pieces(struct pmt_agg_snap *s, struct pmt_buf *b)
{
	uint32_t *t = pmt_pieces__add(&s->pieces, pmt_buf__cstr(b));

	return t ? t : calloc(1, sizeof(*t));
}

/* Runs of entries with the same key data, those with news in this delta. */
static size_t make_groups(const struct pmt_agg_snap *s, struct pmt_agg_group *groups)
{
	const struct pmt_agg_entry *d = s->e;
	size_t ng = 0, i, j;

	for (i = 0; i < s->n; i = j) {
		struct pmt_agg_group *g = &groups[ng];

		memset(g, 0, sizeof(*g));
		for (j = i; j < s->n && !memcmp(d[j].key.data, d[i].key.data, PMT_KEY_MAX); j++) {
			/* a bucket with nothing new in this delta has no
			 * min or max of its own: it must not give the group 0 */
			if (!d[j].val.count)
				continue;
			if (!g->total.count || d[j].val.min < g->total.min)
				g->total.min = d[j].val.min;
			if (!g->total.count || d[j].val.max > g->total.max)
				g->total.max = d[j].val.max;
			g->total.count += d[j].val.count;
			g->total.sum += d[j].val.sum;
		}
		if (!g->total.count)
			continue; /* nothing new in this interval */
		g->e = &d[i];
		g->n = j - i;
		g->sortval = group_value(s->a->opts->fn, &g->total);
		ng++;
	}
	return ng;
}

static bool symbolic_keys(const struct pmt_agg *a)
{
	int i;

	for (i = 0; i < a->keys.n; i++)
		if (a->keys.disp[i] != PMT_DISP_PLAIN)
			return true;
	return false;
}

static void group_text(const struct pmt_agg_snap *s, enum pmt_agg_form form,
		       const struct pmt_agg_group *g, struct pmt_buf *b)
{
	b->len = 0;
	if (form == PMT_FORM_FOLDED)
		pmt_agg__folded_text(s->a, s->io, b, &g->e->key);
	else
		pmt_agg__key_text(s->a, s->io, b, &g->e->key);
}

/* Histograms keep their groups (buckets are per entry): each its text */
static size_t texts_apart(struct pmt_agg_snap *s, enum pmt_agg_form form, struct pmt_agg_group *g,
			  size_t n)
{
	struct pmt_buf b = {0};
	size_t i;

	for (i = 0; i < n; i++) {
		group_text(s, form, &g[i], &b);
		g[i].text = text_pieces(s, &b);
	}
	pmt_buf__free(&b);
	return n;
}

/*
 * Keys shown by name (sym, stacks) can differ in the kernel and look the
 * same (two addresses in one function; one stack in two processes, a
 * churn's thousands): merged as their texts are made, through a table of
 * the texts so far, each text kept once (a print of the always-on
 * profile held 6,700 texts of 600 bytes at once). The first group of a
 * text stands for it, as sorting by text kept it; sorted by text after.
 */
static size_t merge_by_text(struct pmt_agg_snap *s, enum pmt_agg_form form, struct pmt_agg_group *g,
			    size_t n)
{
	const struct pmt_agg *a = s->a;
	struct pmt_buf b = {0};
	size_t i, m = 0, cap = 16, *tab, at;
	uint32_t *t;

	if (a->opts->fn == PMT_FN_HIST || a->opts->fn == PMT_FN_LHIST)
		return texts_apart(s, form, g, n);
	while (cap < 2 * n)
		cap *= 2;
	/* (slots hold a merged group's index + 1) */
	if (!(tab = calloc(cap, sizeof(*tab))))
		return texts_apart(s, form, g, n);
	for (i = 0; i < n; i++) {
		group_text(s, form, &g[i], &b);
		t = text_pieces(s, &b);
		for (at = pmt_pieces__hash(t) & (cap - 1); tab[at]; at = (at + 1) & (cap - 1))
			if (pmt_pieces__same(g[tab[at] - 1].text, t))
				break;
		if (tab[at]) {
			struct pmt_agg_group *k = &g[tab[at] - 1];

			free(t);
			pmt_agg_val__merge(&k->total, &g[i].total);
			k->sortval = group_value(a->opts->fn, &k->total);
			continue;
		}
		g[m] = g[i];
		g[m].text = t;
		tab[at] = ++m;
	}
	free(tab);
	pmt_buf__free(&b);
	qsort_r(g, m, sizeof(*g), cmp_text, &s->pieces);
	return m;
}

struct pmt_agg_group *pmt_agg_snap__groups(struct pmt_agg_snap *s, enum pmt_agg_form form,
					   size_t *n)
{
	struct pmt_agg_group *g = s->groups[form];
	size_t ng;

	if (g) {
		*n = s->ngroups[form];
		return g;
	}
	g = calloc(s->n ? s->n : 1, sizeof(*g));
	if (!g)
		return NULL;
	ng = make_groups(s, g);
	if (symbolic_keys(s->a) || form == PMT_FORM_FOLDED)
		ng = merge_by_text(s, form, g, ng);
	/* maps by value, as bpftrace prints them; folded stacks by name */
	if (form == PMT_FORM_KEY)
		pmt_sort(g, ng, sizeof(*g), cmp_group);
	s->groups[form] = g;
	*n = s->ngroups[form] = ng;
	return g;
}

/* --- the print --------------------------------------------------------------- */

void pmt_agg__sinks(struct pmt_agg *a)
{
	const struct pmt_agg_opts *o = a->opts;
	int n = 0;

	if (o->pprof)
		a->sinks[n++] = &pmt_agg_sink_pprof;
	if (o->flamegraph)
		a->sinks[n++] = &pmt_agg_sink_flamegraph;
	if (o->folded)
		a->sinks[n++] = &pmt_agg_sink_folded;
	if (!n)
		a->sinks[n++] = o->json ? &pmt_agg_sink_json : &pmt_agg_sink_text;
	a->sinks[n] = NULL;
}

/* The frames seen: (key, addr) pairs in an open-addressed table */
struct seen {
	uint64_t (*v)[2];
	size_t n, cap;
};

/* Was (key, addr) seen? Marked seen now; -1: no memory */
static int seen_before(struct seen *s, uint64_t key, uint64_t addr)
{
	const uint64_t pair[2] = {key, addr};
	size_t i, cap;

	if (2 * (s->n + 1) > s->cap) {
		struct seen g = {.cap = s->cap ? 2 * s->cap : 1024};

		if (!(g.v = calloc(g.cap, sizeof(*g.v))))
			return -1;
		for (i = 0; i < s->cap; i++)
			if (s->v[i][1])
				seen_before(&g, s->v[i][0], s->v[i][1]);
		free(s->v);
		*s = g;
	}
	cap = s->cap;
	/* (no frame's address is 0) */
	for (i = pmt_hash_bytes(PMT_HASH_SEED, pair, sizeof(pair)) & (cap - 1); s->v[i][1];
	     i = (i + 1) & (cap - 1))
		if (s->v[i][0] == key && s->v[i][1] == addr)
			return 1;
	s->v[i][0] = key;
	s->v[i][1] = addr;
	s->n++;
	return 0;
}

static int cmp_frame(const void *a, const void *b)
{
	const struct pmt_agg_frame *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int pmt_agg__frames_by_file(const struct pmt_agg *a, const struct pmt_agg_io *io,
			    const struct pmt_agg_entry *e, size_t n,
			    bool (*known)(void *ctx, uint64_t key, uint64_t addr), void *ctx,
			    struct pmt_agg_frame **out, size_t *out_len)
{
	const struct pmt_keylayout *kl = &a->keys;
	uint64_t ips[PMT_STACK_DEPTH], v, key;
	struct pmt_agg_frame *list = NULL, *g;
	struct seen seen = {0};
	size_t i, cap = 0, len = 0;
	struct pmt_module m;
	uint32_t pid;
	int j, k, nf, r, err = 0;

	for (i = 0; i < n && !err; i++) {
		if (!e[i].val.count)
			continue;
		for (j = 0; j < kl->n && !err; j++) {
			if (kl->disp[j] != PMT_DISP_USTACK)
				continue;
			memcpy(&v, e[i].key.data + kl->at[j], 8);
			nf = pmt_agg__stack_frames(io, kl->disp[j], v, ips, &pid);
			for (k = 0; k < nf && !err; k++) {
				key = pmt_is_kernel_addr(ips[k]) || pmt_is_file_frame(ips[k]) ? 0
											      : pid;
				if (pmt_is_kernel_addr(ips[k]) ||
				    (known && known(ctx, key, ips[k])))
					continue;
				if ((r = seen_before(&seen, key, ips[k])) < 0)
					err = -ENOMEM;
				if (r)
					continue;
				pmt_syms__lock(io->syms);
				if (pmt_syms__module(io->syms, pid, ips[k], &m)) {
					uint64_t h = pmt_hash_str(
						pmt_hash_str(PMT_HASH_SEED, m.file), m.build_id);

					if ((g = pmt_grow(list, &cap, len, sizeof(*list), 256)))
						g[len++] =
							(struct pmt_agg_frame){h, key, ips[k], pid};
					list = g ? g : list;
					err = g ? 0 : -ENOMEM;
				}
				pmt_syms__unlock(io->syms);
			}
		}
	}
	free(seen.v);
	if (err) {
		free(list);
		return err;
	}
	pmt_sort(list, len, sizeof(*list), cmp_frame);
	*out = list;
	*out_len = len;
	return 0;
}

/* The text sinks' names of the entries' user frames made a file at a
 * time (pmt_agg__frames_by_file), each file's DWARF closed with the
 * answers kept before the next one's is opened, and every
 * PMT_SRC_CACHE / 4 addresses (its slots keep what a close keeps): the
 * print then finds them kept. An interval's print by stack held
 * libc's, ld.so's, libm's and pmtrace's DWARF at once: always-on's
 * peak. */
static void names_by_file(const struct pmt_agg *a, const struct pmt_agg_io *io,
			  const struct pmt_agg_entry *e, size_t n)
{
	const struct pmt_srcframe *fr;
	struct pmt_agg_frame *list;
	size_t i, len, since = 0;

	if (!io || !io->syms || pmt_agg__frames_by_file(a, io, e, n, NULL, NULL, &list, &len))
		return;
	for (i = 0; i < len; i++) {
		if (i && (list[i].file != list[i - 1].file || ++since == PMT_SRC_CACHE / 4)) {
			pmt_syms__let_go(io->syms, 0);
			since = 0;
		}
		pmt_syms__srcframes(io->syms, list[i].pid, list[i].addr, &fr);
	}
	free(list);
	pmt_syms__let_go(io->syms, 0);
}

static bool named_interleaved(void)
{
	const char *v = getenv("PMT_NAMES_INTERLEAVED");

	return v && !strcmp(v, "1");
}

int pmt_agg__print(struct pmt_agg *a, struct pmt_agg_entries *cur, const struct pmt_agg_io *io,
		   struct pmt_output *out, uint64_t now_ns, struct pmt_error *perr)
{
	struct pmt_agg_snap s = {.a = a, .io = io, .n = cur->n, .now_ns = now_ns, .err = perr};
	int err = 0, e, i;
	size_t k;

	pmt_agg_entries__sort(cur);
	/* the deltas in the entries themselves, undone below */
	s.e = cur->v;
	if (!a->opts->keep)
		to_deltas(s.e, s.n, -1);
	for (k = 0; k < s.n; k++)
		s.e[k].idle = !s.e[k].val.count;
	/* (pprof makes its locations so itself; PMT_NAMES_INTERLEAVED=1:
	 * named in the stacks' order, as the tests compare) */
	if (pmt_agg__has_stack_key(a) && (a->sinks[0] != &pmt_agg_sink_pprof || a->sinks[1]) &&
	    !named_interleaved())
		names_by_file(a, io, s.e, s.n);
	for (i = 0; a->sinks[i]; i++)
		if ((e = a->sinks[i]->write(&s, out)) && !err)
			err = e;
	for (i = 0; i < PMT_FORM__MAX; i++) {
		for (k = 0; s.groups[i] && k < s.ngroups[i]; k++)
			free(s.groups[i][k].text);
		free(s.groups[i]);
	}
	pmt_pieces__free(&s.pieces);
	pmt_buf__free(&s.text);
	if (!a->opts->keep)
		to_deltas(s.e, s.n, 1);
	for (k = 0; k < s.n; k++) {
		s.e[k].base_count = s.e[k].val.count;
		s.e[k].base_sum = s.e[k].val.sum;
	}
	return err;
}
