// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Aggregations. The kernel side (bpf/aggregate.bpf.h) keeps one per-CPU
 * hash entry per (key data, bucket) with count/sum/min/max. Here: what each
 * probe puts in the key and value, and the printing: entries are merged
 * over CPUs, turned into deltas against the previous snapshot (so nothing
 * is lost between reading and clearing), grouped by key, sorted by value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "aggregate.h"
#include "log.h"
#include "operand.h"
#include "session.h"
#include "stackrec.h"
#include "symbols.h"
#include "flamegraph.h"
#include "pmtrace.skel.h"

/* --- compiling ----------------------------------------------------------- */

static int resolve_num(struct pmt_probe *p, const char *name, const char *what,
		       struct pmt_operand *o, bool *is_signed)
{
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	int r = pmt_operand__resolve(p->fmt, name, &info);

	if (!r && !info.is_str) {
		*o = info.o;
		if (is_signed)
			*is_signed = info.is_signed;
		return 0;
	}
	if (!r)
		pmt_err("%s: '%s' is a string: %s needs a number", p->name, name, what);
	else if (r == PMT_OPERAND_ARRAY)
		pmt_err("%s: '%s' is an array: %s needs a number", p->name, name, what);
	else
		pmt_err("%s: unknown field '%s' in %s", p->name, name, what);
	pmt_operand__hint(&b, p->fmt, p->name, r == PMT_OPERAND_UNKNOWN ? name : NULL);
	pmt_hint("%s", pmt_buf__cstr(&b));
	pmt_buf__free(&b);
	return -EINVAL;
}

/* EXPR := FIELD [ ('*'|'/') NUMBER ] */
static int compile_value(struct pmt_probe *p, const char *expr, struct pmt_agg_cfg *a)
{
	char name[128];
	size_t n = strcspn(expr, "*/ ");
	const char *rest = expr + n;
	uint64_t k;

	if (n == 0 || n >= sizeof(name)) {
		pmt_err("'%s': expected FIELD, FIELD/N or FIELD*N, e.g. len/1024", expr);
		return -EINVAL;
	}
	memcpy(name, expr, n);
	name[n] = '\0';
	while (*rest == ' ')
		rest++;
	if (*rest) {
		a->scale = *rest == '*' ? PMT_SCALE_MUL : PMT_SCALE_DIV;
		rest++;
		while (*rest == ' ')
			rest++;
		if ((*rest != '*' && *rest != '/' && pmt_parse_u64(rest, &k)) || !k) {
			pmt_err("'%s': the scale after '%c' must be a positive number", expr,
				a->scale == PMT_SCALE_MUL ? '*' : '/');
			return -EINVAL;
		}
		a->k = k;
	}
	return resolve_num(p, name, "the aggregated value", &a->value, NULL);
}

/* A --by name as key parts: sample keys of PMU events expand to fields
 * of struct pmt_sample shown another way (see enum pmt_key_disp). */
struct key_spec {
	const char *name;	/* shown */
	const char *field;	/* resolved */
	uint8_t disp;
};

static int expand_key(const char *name, const struct pmt_format *fmt, struct key_spec *out)
{
	bool stacks = pmt_stackrec__has(fmt);

	if (stacks && pmt_format__field(fmt, "ip") && !strcmp(name, "sym")) {
		out[0] = (struct key_spec){ "", "pid", PMT_DISP_HIDDEN };
		out[1] = (struct key_spec){ name, "ip", PMT_DISP_SYM };
		return 2;
	}
	if (stacks && !strcmp(name, "stack")) {
		out[0] = (struct key_spec){ name, "ustack", PMT_DISP_USTACK };
		out[1] = (struct key_spec){ "", "kstack", PMT_DISP_KSTACK };
		return 2;
	}
	out[0] = (struct key_spec){ name, name, PMT_DISP_PLAIN };
	if (stacks && !strcmp(name, "kstack"))
		out[0].disp = PMT_DISP_KSTACK;
	else if (stacks && !strcmp(name, "ustack"))
		out[0].disp = PMT_DISP_USTACK;
	return 1;
}

/* Key part i of probe p (--by word tok) at byte *at: the first probe fixes
 * each part's kind, display and place; the others must agree. */
static int compile_key_part(struct pmt_session *s, struct pmt_probe *p, struct pmt_agg_cfg *a,
			    int i, int *at, const char *tok, const struct key_spec *spec)
{
	struct pmt_keylayout *kl = &s->agg.keys;
	bool stacks = pmt_stackrec__has(p->fmt);
	struct pmt_opinfo info = {0};
	uint8_t kind;

	if (i >= PMT_AGG_KEYS) {
		pmt_err("--by: at most %d keys (sym and stack count as two)", PMT_AGG_KEYS);
		return -EINVAL;
	}
	if (!strcmp(spec->field, "probe")) {
		kind = PMT_KEY_PROBE;
	} else {
		int r = pmt_operand__resolve(p->fmt, spec->field, &info);

		if (r) {
			struct pmt_buf b = {0};

			pmt_err("--by: %s '%s' for %s", r == PMT_OPERAND_ARRAY ?
				"cannot key by the array" : "unknown key", spec->field, p->name);
			pmt_operand__hint(&b, p->fmt, p->name, r == PMT_OPERAND_UNKNOWN ? spec->field : NULL);
			pmt_hint("%s; and 'probe'%s", pmt_buf__cstr(&b),
				 !stacks ? "" : pmt_format__field(p->fmt, "ip") ?
				 ", sym, kstack, ustack, stack" : ", kstack, ustack, stack");
			pmt_buf__free(&b);
			return -EINVAL;
		}
		kind = info.is_str ? PMT_KEY_STR_ : PMT_KEY_NUM;
	}
	if (kl->n > i && (kl->kind[i] != kind || kl->disp[i] != spec->disp)) {
		pmt_err("--by %s: means different things for different probes (%s)", tok, p->name);
		return -EINVAL;
	}
	if (kl->n <= i) {
		kl->names[i] = strdup(spec->name);
		kl->kind[i] = kind;
		kl->disp[i] = spec->disp;
		kl->at[i] = (uint8_t)*at;
		kl->is_signed[i] = info.is_signed;
		kl->n = i + 1;
	}
	if (spec->disp == PMT_DISP_KSTACK)
		s->stack |= PMT_STACK_KERNEL;
	if (spec->disp == PMT_DISP_USTACK)
		s->stack |= PMT_STACK_USER;
	a->keys[i].o = info.o;
	a->keys[i].kind = kind;
	a->keys[i].at = (uint8_t)*at;
	if (pmt_operand__needs_record(&info.o))
		a->needs_record = 1;
	/* strings: their own size (comm 16), at most PMT_KEY_STR */
	a->keys[i].len = kind != PMT_KEY_STR_ ? 8 :
			 info.o.src == PMT_FSRC_FIELD_DSTR || info.o.size > PMT_KEY_STR ?
			 PMT_KEY_STR : (uint8_t)((info.o.size + 7) & ~7);
	if (kl->n > i && kl->at[i] != *at) {
		pmt_err("--by %s: differs in size between probes (%s)", tok, p->name);
		return -EINVAL;
	}
	if (kl->n == i + 1 && !kl->len[i])
		kl->len[i] = a->keys[i].len;
	*at += a->keys[i].len;
	if (*at > s->agg.key_bytes)
		s->agg.key_bytes = *at;
	if (*at > PMT_KEY_MAX) {
		pmt_err("--by %s: keys too large: at most %d bytes (strings take %d, numbers 8)",
			s->opts->agg.by, PMT_KEY_MAX, PMT_KEY_STR);
		return -EINVAL;
	}
	return 0;
}

/* --by: each word is one or two key parts (see expand_key). */
static int compile_keys(struct pmt_session *s, struct pmt_probe *p, struct pmt_agg_cfg *a)
{
	char *copy, *tok, *save = NULL;
	int i = 0, at = 0, ret = 0, nspec, j;
	struct key_spec specs[2];

	if (!s->opts->agg.by)
		return 0;
	copy = strdup(s->opts->agg.by);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		nspec = expand_key(tok, p->fmt, specs);
		for (j = 0; j < nspec && !ret; j++)
			if (!(ret = compile_key_part(s, p, a, i, &at, tok, &specs[j])))
				i++;
	}
	a->nkeys = (uint8_t)i;
	free(copy);
	return ret;
}

static uint32_t unit_div(const char *unit)
{
	if (!unit || !strcmp(unit, "us"))
		return 1000;
	if (!strcmp(unit, "ns"))
		return 1;
	if (!strcmp(unit, "ms"))
		return 1000000;
	return 1000000000;
}

int pmt_agg__compile(struct pmt_session *s)
{
	const struct pmt_agg_opts *ao = &s->opts->agg;
	static const uint8_t kinds[] = {
		[PMT_FN_COUNT] = PMT_AGG_COUNT, [PMT_FN_SUM] = PMT_AGG_VALUE,
		[PMT_FN_AVG] = PMT_AGG_VALUE, [PMT_FN_MIN] = PMT_AGG_VALUE,
		[PMT_FN_MAX] = PMT_AGG_VALUE, [PMT_FN_STATS] = PMT_AGG_VALUE,
		[PMT_FN_HIST] = PMT_AGG_HIST, [PMT_FN_LHIST] = PMT_AGG_LHIST,
	};
	char sf[128] = "", *ef = NULL;
	uint32_t i;

	if (!ao->fn)
		return 0;
	if (ao->match) {
		snprintf(sf, sizeof(sf), "%s", ao->match);
		ef = strchr(sf, '=');
		*ef++ = '\0';
	}
	for (i = 0; i < s->nr_probes; i++) {
		struct pmt_probe *p = &s->probes[i];
		struct pmt_agg_cfg *a = &p->agg;

		memset(a, 0, sizeof(*a));
		a->kind = kinds[ao->fn];
		p->action = PMT_ACT_AGG;
		if (ao->lat_start) {
			/* probe 0 starts, probe 1 ends (see pmt_session__resolve) */
			p->action = i == 0 ? PMT_ACT_LAT_START : PMT_ACT_LAT_END;
			a->lat_div = unit_div(ao->unit);
			if (ef ? resolve_num(p, i == 0 ? sf : ef, "--match", &a->match, NULL) : 0)
				return -EINVAL;
			if (!ef)
				a->match.src = PMT_FSRC_TID;
		} else if (ao->expr && compile_value(p, ao->expr, a)) {
			return -EINVAL;
		}
		if (ao->fn == PMT_FN_LHIST) {
			a->lmin = ao->lmin;
			a->lstep = ao->lstep;
			a->lbuckets = (uint32_t)((ao->lmax - ao->lmin + ao->lstep - 1) / ao->lstep);
		}
		/* latency keys come from the end event; the start keeps none */
		if (p->action != PMT_ACT_LAT_START && compile_keys(s, p, a))
			return -EINVAL;
		if (pmt_operand__needs_record(&a->value) && a->kind != PMT_AGG_COUNT && !ao->lat_start)
			a->needs_record = 1;
		if (ao->lat_start && pmt_operand__needs_record(&a->match))
			a->needs_record = 1;
	}
	/* no keys: a per-CPU array slot per bucket (+1: bucket -1 is slot 0) */
	if (!s->agg.key_bytes && s->nr_probes)
		s->agg.flat_slots = ao->fn == PMT_FN_HIST ? 66 :
				    ao->fn == PMT_FN_LHIST ? s->probes[0].agg.lbuckets + 2 : 2;
	return 0;
}

void pmt_agg__free(struct pmt_session *s)
{
	int i;

	for (i = 0; i < s->agg.keys.n; i++)
		free(s->agg.keys.names[i]);
	free(s->agg.prev);
	memset(&s->agg, 0, sizeof(s->agg));
}

/* --- reading ------------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b)
{
	return memcmp(&((const struct pmt_agg_entry *)a)->key,
		      &((const struct pmt_agg_entry *)b)->key, sizeof(struct pmt_agg_key));
}

/* One more entry at the end of *v, for key, with the CPUs' values merged. */
static struct pmt_agg_entry *add_entry(struct pmt_agg_entry **v, size_t *n, size_t *cap,
				       const struct pmt_agg_key *key, const struct pmt_agg_val *pc,
				       int ncpu)
{
	struct pmt_agg_entry *e;
	int c;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;

		e = realloc(*v, nc * sizeof(*e));
		if (!e)
			return NULL;
		*v = e;
		*cap = nc;
	}
	e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->key = *key;
	for (c = 0; c < ncpu; c++) {
		if (!pc[c].count)
			continue;
		if (!e->val.count || pc[c].min < e->val.min)
			e->val.min = pc[c].min;
		if (!e->val.count || pc[c].max > e->val.max)
			e->val.max = pc[c].max;
		e->val.count += pc[c].count;
		e->val.sum += pc[c].sum;
	}
	return e;
}

/* Where the kernel caches key (bpf/abi.h): the same slot it computes from
 * the key's words, which are zero past the map's key size on both sides. */
static const struct pmt_agg_cslot *cache_slot(const struct pmt_agg_cache *c,
					      const struct pmt_agg_key *key)
{
	uint64_t w[PMT_AGG_KEY_WORDS], sum = 0;
	size_t i;

	memcpy(w, key, sizeof(w));
	for (i = 0; i < PMT_AGG_KEY_WORDS; i++)
		sum += w[i];
	return &c->slot[PMT_AGG_CSLOT(sum) & (PMT_AGG_CACHE - 1)];
}

/* Each CPU's value of key: the hash's, or its cache slot's where that is
 * further on. The caches were read first: a slot written back meanwhile
 * left the hash at least as far on, so no event counts twice. */
static void apply_cache(const struct pmt_agg_cache *cache, const struct pmt_agg_key *key,
			struct pmt_agg_val *pc, int ncpu)
{
	int c;

	for (c = 0; cache && c < ncpu; c++) {
		const struct pmt_agg_cslot *sl = cache_slot(&cache[c], key);

		if (sl->val.count && sl->val.count >= pc[c].count &&
		    !memcmp(&sl->key, key, sizeof(*key)))
			pc[c] = sl->val;
	}
}

/* All entries, merged over CPUs, sorted by key. */
static int read_entries(struct pmt_session *s, struct pmt_agg_entry **out, size_t *nout)
{
	int fd = bpf_map__fd(s->skel->maps.pmt_agg), ncpu = libbpf_num_possible_cpus();
	struct pmt_agg_key key, next, *prev = NULL;
	struct pmt_agg_cache *cache = NULL;
	struct pmt_agg_entry *v = NULL;
	struct pmt_agg_val *pc;
	size_t n = 0, cap = 0;
	uint32_t slot = 0;
	int err;

	pc = calloc((size_t)ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	/* the caches before the hash: see apply_cache() */
	if (!s->agg.flat_slots) {
		cache = calloc((size_t)ncpu, sizeof(*cache));
		if (!cache) {
			free(pc);
			return -ENOMEM;
		}
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pmt_agg_cache), &slot, cache)) {
			err = -errno;
			free(cache);
			free(pc);
			return err;
		}
	}
	/* no keys: the array's slots that saw events */
	for (slot = 0; slot < s->agg.flat_slots; slot++) {
		memset(&key, 0, sizeof(key));
		key.bucket = (int32_t)slot - 1;
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pmt_agg_flat), &slot, pc))
			continue;
		if (!add_entry(&v, &n, &cap, &key, pc, ncpu))
			break;
		if (!v[n - 1].val.count)
			n--;
	}
	/* the kernel writes key_size bytes: the rest must stay zero */
	memset(&next, 0, sizeof(next));
	while (!s->agg.flat_slots && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		memset(&next, 0, sizeof(next));
		if (bpf_map_lookup_elem(fd, &key, pc))
			continue;	/* deleted meanwhile */
		apply_cache(cache, &key, pc, ncpu);
		if (!add_entry(&v, &n, &cap, &key, pc, ncpu))
			break;
	}
	free(cache);
	free(pc);
	if (n)
		qsort(v, n, sizeof(*v), cmp_entry);
	*out = v;
	*nout = n;
	return 0;
}

/* Turn cur into deltas against prev (min/max stay since the start). */
static void subtract(struct pmt_agg_entry *cur, size_t n, const struct pmt_agg_entry *prev, size_t np)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct pmt_agg_entry *p = np ? bsearch(&cur[i], prev, np, sizeof(*prev), cmp_entry) : NULL;

		if (p) {
			cur[i].val.count -= p->val.count;
			cur[i].val.sum -= p->val.sum;
		}
	}
}

/* --- printing ------------------------------------------------------------ */

/* A run of entries with the same key data: one line or one histogram. */
struct group {
	const struct pmt_agg_entry *e;
	size_t n;
	struct pmt_agg_val total;
	double sortval;
	char *text;		/* symbolic keys: the key as shown, merged by */
};

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
	double x = ((const struct group *)a)->sortval, y = ((const struct group *)b)->sortval;

	return x < y ? -1 : x > y;
}

/* The frames of a stack key part, innermost first; returns how many. */
static int stack_frames(struct pmt_session *s, uint8_t disp, uint64_t v, uint64_t *ips, uint32_t *pid)
{
	int32_t id = disp == PMT_DISP_USTACK ? (int32_t)(uint32_t)v : (int32_t)(int64_t)v;
	int n;

	*pid = disp == PMT_DISP_USTACK ? (uint32_t)(v >> 32) : 0;
	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pmt_stacks), &id, ips))
		return 0;
	for (n = 0; n < PMT_STACK_DEPTH && ips[n]; n++)
		;
	return n;
}

static bool is_stack(uint8_t disp)
{
	return disp == PMT_DISP_KSTACK || disp == PMT_DISP_USTACK;
}

static void stack_text(struct pmt_session *s, struct pmt_buf *b, uint8_t disp, uint64_t v, bool json)
{
	uint64_t ips[PMT_STACK_DEPTH];
	struct pmt_buf name = {0};
	uint32_t pid;
	int n = stack_frames(s, disp, v, ips, &pid), i;

	for (i = 0; i < n; i++) {
		name.len = 0;
		pmt_syms__name(pmt_session__syms(s), pid, ips[i], false, true, &name);
		if (json) {
			if (i)
				pmt_buf__putc(b, ',');
			pmt_buf__json_str(b, name.p, name.len);
		} else {
			pmt_buf__puts(b, "\n        ");
			pmt_buf__add(b, name.p, name.len);
		}
	}
	pmt_buf__free(&name);
}

/* One key part that is not a stack. */
static void key_part(struct pmt_session *s, struct pmt_buf *b, const struct pmt_agg_key *k, int i,
		     bool json)
{
	const struct pmt_keylayout *kl = &s->agg.keys;
	const uint8_t *d = k->data + kl->at[i];
	uint64_t v, pid = 0;

	memcpy(&v, d, 8);
	if (kl->disp[i] == PMT_DISP_SYM) {
		struct pmt_buf name = {0};

		if (i > 0 && kl->disp[i - 1] == PMT_DISP_HIDDEN)
			memcpy(&pid, k->data + kl->at[i - 1], 8);
		pmt_syms__name(pmt_session__syms(s), (uint32_t)pid, v, false, true, &name);
		if (json)
			pmt_buf__json_str(b, name.p, name.len);
		else
			pmt_buf__add(b, name.p, name.len);
		pmt_buf__free(&name);
		return;
	}
	if (kl->kind[i] == PMT_KEY_STR_) {
		size_t len = pmt_strnlen((const char *)d, kl->len[i]);

		if (json)
			pmt_buf__json_str(b, (const char *)d, len);
		else
			pmt_buf__text_str(b, (const char *)d, len);
		return;
	}
	if (kl->kind[i] == PMT_KEY_PROBE) {
		struct pmt_probe *p = pmt_session__probe(s, (uint32_t)v);
		const char *name = p ? p->name : "?";

		if (json)
			pmt_buf__json_str(b, name, strlen(name));
		else
			pmt_buf__puts(b, name);
	} else if (kl->is_signed[i]) {
		pmt_buf__s64(b, (int64_t)v);
	} else {
		pmt_buf__u64(b, v);
	}
}

static void key_text(struct pmt_session *s, struct pmt_buf *b, const struct pmt_agg_key *k, bool json)
{
	const struct pmt_keylayout *kl = &s->agg.keys;
	bool first = true;
	uint64_t v;
	int i;

	for (i = 0; i < kl->n; i++) {
		const uint8_t *d = k->data + kl->at[i];
		uint8_t disp = kl->disp[i];

		memcpy(&v, d, 8);
		if (disp == PMT_DISP_HIDDEN)
			continue;
		if (!first && (*kl->names[i] || json))
			pmt_buf__puts(b, json ? "," : ", ");
		first = false;
		if (json) {
			const char *n = is_stack(disp) ? (disp == PMT_DISP_KSTACK ? "kstack" : "ustack") :
					kl->names[i];

			pmt_buf__json_str(b, n, strlen(n));
			pmt_buf__putc(b, ':');
		}
		if (is_stack(disp)) {
			/* text: innermost first, so a kernel part that follows
			 * its user part ("stack") is shown before it */
			if (json)
				pmt_buf__putc(b, '[');
			if (!json && disp == PMT_DISP_USTACK && i + 1 < kl->n &&
			    kl->disp[i + 1] == PMT_DISP_KSTACK && !*kl->names[i + 1]) {
				uint64_t kv;

				memcpy(&kv, k->data + kl->at[i + 1], 8);
				stack_text(s, b, PMT_DISP_KSTACK, kv, false);
				stack_text(s, b, disp, v, false);
				i++;
			} else {
				stack_text(s, b, disp, v, json);
			}
			if (json)
				pmt_buf__putc(b, ']');
			else
				pmt_buf__putc(b, '\n');
			continue;
		}
		key_part(s, b, k, i, json);
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

/* comm;user frames;kernel frames, outermost first: one folded stack. */
static void folded_text(struct pmt_session *s, struct pmt_buf *b, const struct pmt_agg_key *k)
{
	const struct pmt_keylayout *kl = &s->agg.keys;
	struct pmt_buf name = {0};
	uint64_t v, ips[PMT_STACK_DEPTH];
	bool first = true;
	uint32_t pid;
	int i, pass, n, f;

	for (pass = 0; pass < 3; pass++) {
		for (i = 0; i < kl->n; i++) {
			uint8_t disp = kl->disp[i];

			if (fold_pass(disp) != pass)
				continue;
			memcpy(&v, k->data + kl->at[i], 8);
			if (pass == 0) {
				name.len = 0;
				key_part(s, &name, k, i, false);
				if (!first)
					pmt_buf__putc(b, ';');
				/* ';' and ' ' separate frames and the count */
				for (f = 0; f < (int)name.len; f++)
					pmt_buf__putc(b, name.p[f] == ';' || name.p[f] == ' ' ? '_' : name.p[f]);
				first = false;
				continue;
			}
			n = stack_frames(s, disp, v, ips, &pid);
			for (f = n - 1; f >= 0; f--) {
				if (!first)
					pmt_buf__putc(b, ';');
				first = false;
				pmt_syms__name(pmt_session__syms(s), pid, ips[f], false, false, b);
			}
		}
	}
	pmt_buf__free(&name);
}

static const char *map_name(const struct pmt_agg_opts *ao)
{
	static const char *const units[] = { "ns", "nsecs", "us", "usecs", "ms", "msecs", "s", "secs" };
	size_t i;

	if (!ao->lat_start)
		return "";
	for (i = 0; i < 8; i += 2)
		if (!strcmp(ao->unit ? ao->unit : "us", units[i]))
			return units[i + 1];
	return "";
}

static void bucket_label(struct pmt_buf *b, const struct pmt_agg_opts *ao, const struct pmt_probe *p,
			 int32_t bucket)
{
	if (ao->fn == PMT_FN_LHIST)
		pmt_agg__lhist_label(b, bucket, p->agg.lmin, p->agg.lstep, p->agg.lbuckets);
	else
		pmt_agg__log2_label(b, bucket);
}

static void print_text_group(struct pmt_session *s, struct pmt_buf *b, const struct group *g)
{
	const struct pmt_agg_opts *ao = &s->opts->agg;
	const struct pmt_agg_val *v = &g->total;
	uint64_t max = 0;
	size_t i;
	int32_t bk, lo, hi;

	pmt_buf__printf(b, "@%s", map_name(ao));
	if (g->text) {
		pmt_buf__printf(b, "[%s]", g->text);
	} else if (s->agg.keys.n) {
		pmt_buf__putc(b, '[');
		key_text(s, b, &g->e->key, false);
		pmt_buf__putc(b, ']');
	}
	pmt_buf__putc(b, ':');
	if (ao->fn != PMT_FN_HIST && ao->fn != PMT_FN_LHIST)
		pmt_buf__putc(b, ' ');
	switch (ao->fn) {
	case PMT_FN_COUNT: pmt_buf__u64(b, v->count); break;
	case PMT_FN_SUM: pmt_buf__s64(b, v->sum); break;
	case PMT_FN_AVG: pmt_buf__s64(b, v->count ? v->sum / (int64_t)v->count : 0); break;
	case PMT_FN_MIN: pmt_buf__s64(b, v->min); break;
	case PMT_FN_MAX: pmt_buf__s64(b, v->max); break;
	case PMT_FN_STATS:
		pmt_buf__printf(b, "count %llu, average %lld, min %lld, max %lld, total %lld",
				(unsigned long long)v->count,
				(long long)(v->count ? v->sum / (int64_t)v->count : 0),
				(long long)v->min, (long long)v->max, (long long)v->sum);
		break;
	default:
		break;
	}
	if (ao->fn != PMT_FN_HIST && ao->fn != PMT_FN_LHIST) {
		pmt_buf__putc(b, '\n');
		return;
	}
	/* histogram: entries are sorted by bucket within the group; print
	 * from the first to the last non-empty bucket, gaps included */
	pmt_buf__putc(b, '\n');
	lo = g->e[0].key.bucket;
	hi = g->e[g->n - 1].key.bucket;
	for (i = 0; i < g->n; i++)
		if (g->e[i].val.count > max)
			max = g->e[i].val.count;
	for (bk = lo, i = 0; bk <= hi; bk++) {
		uint64_t c = 0;
		size_t start = b->len;

		while (i < g->n && g->e[i].key.bucket < bk)
			i++;
		if (i < g->n && g->e[i].key.bucket == bk)
			c = g->e[i].val.count;
		bucket_label(b, ao, pmt_session__probe(s, 0), bk);
		while (b->len - start < 20)
			pmt_buf__putc(b, ' ');
		pmt_buf__printf(b, " %8llu ", (unsigned long long)c);
		pmt_agg__bar(b, c, max);
		pmt_buf__putc(b, '\n');
	}
	pmt_buf__putc(b, '\n');
}

static void print_json_group(struct pmt_session *s, struct pmt_buf *b, const struct group *g, bool first)
{
	const struct pmt_agg_opts *ao = &s->opts->agg;
	const struct pmt_agg_val *v = &g->total;
	struct pmt_buf label = {0};
	size_t i;

	if (!first)
		pmt_buf__putc(b, ',');
	pmt_buf__puts(b, "{\"key\":{");
	if (g->text)
		pmt_buf__puts(b, g->text);
	else
		key_text(s, b, &g->e->key, true);
	pmt_buf__printf(b, "},\"count\":%llu,\"sum\":%lld,\"min\":%lld,\"max\":%lld",
			(unsigned long long)v->count, (long long)v->sum, (long long)v->min, (long long)v->max);
	if (ao->fn == PMT_FN_HIST || ao->fn == PMT_FN_LHIST) {
		const struct pmt_probe *p = pmt_session__probe(s, 0);

		pmt_buf__puts(b, ",\"buckets\":[");
		for (i = 0; i < g->n; i++) {
			int32_t bk = g->e[i].key.bucket;

			label.len = 0;
			bucket_label(&label, ao, p, bk);
			pmt_buf__printf(b, "%s{\"bucket\":%d,\"range\":", i ? "," : "", bk);
			pmt_buf__json_str(b, label.p, label.len);
			pmt_buf__printf(b, ",\"count\":%llu}", (unsigned long long)g->e[i].val.count);
		}
		pmt_buf__putc(b, ']');
	}
	pmt_buf__putc(b, '}');
	pmt_buf__free(&label);
}

static bool symbolic_keys(const struct pmt_session *s)
{
	int i;

	for (i = 0; i < s->agg.keys.n; i++)
		if (s->agg.keys.disp[i] != PMT_DISP_PLAIN)
			return true;
	return false;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->text, ((const struct group *)b)->text);
}

/*
 * Keys shown by name (sym, stacks) can differ in the kernel and look the
 * same (two addresses in one function; one stack in two processes):
 * merge those. Histograms keep their groups (buckets are per entry).
 */
static size_t merge_by_text(struct pmt_session *s, struct group *g, size_t n, bool json)
{
	bool hist = s->opts->agg.fn == PMT_FN_HIST || s->opts->agg.fn == PMT_FN_LHIST;
	struct pmt_buf b = {0};
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		b.len = 0;
		if (s->opts->folded || s->opts->flamegraph)
			folded_text(s, &b, &g[i].e->key);
		else
			key_text(s, &b, &g[i].e->key, json);
		g[i].text = strdup(pmt_buf__cstr(&b));
		if (!g[i].text)
			g[i].text = strdup("?");
	}
	pmt_buf__free(&b);
	if (hist)
		return n;
	qsort(g, n, sizeof(*g), cmp_text);
	for (i = 0; i < n; i++) {
		if (m && !strcmp(g[m - 1].text, g[i].text)) {
			struct pmt_agg_val *t = &g[m - 1].total, *v = &g[i].total;

			if (v->min < t->min)
				t->min = v->min;
			if (v->max > t->max)
				t->max = v->max;
			t->count += v->count;
			t->sum += v->sum;
			g[m - 1].sortval = group_value(s->opts->agg.fn, t);
			free(g[i].text);
			continue;
		}
		g[m++] = g[i];
	}
	return m;
}

/* --folded: "comm;frame;frame count" lines; --flamegraph: the picture. */
static int write_stacks(struct pmt_session *s, struct pmt_output *out, struct group *g, size_t n)
{
	struct pmt_buf b = {0};
	struct pmt_flame_stack *st;
	size_t i;
	int err = 0;

	if (s->opts->flamegraph) {
		st = calloc(n ? n : 1, sizeof(*st));
		if (!st)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			st[i].folded = g[i].text;
			st[i].count = g[i].total.count;
		}
		err = pmt_flame__write_file(s->opts->flamegraph, st, n, s->probes[0].name);
		free(st);
		if (err)
			pmt_err("cannot write the flame graph to '%s': %s", s->opts->flamegraph, strerror(-err));
		else
			pmt_info("wrote %s: %zu stacks", s->opts->flamegraph, n);
		if (!s->opts->folded)
			return err;
	}
	for (i = 0; i < n; i++)
		pmt_buf__printf(&b, "%s %llu\n", g[i].text, (unsigned long long)g[i].total.count);
	pmt_output__line(out, b.p, b.len);
	pmt_output__flush(out);
	pmt_buf__free(&b);
	return err;
}

bool pmt_agg__wants_pids(const struct pmt_session *s)
{
	int i;

	for (i = 0; i < s->agg.keys.n; i++)
		if (s->agg.keys.disp[i] == PMT_DISP_USTACK || s->agg.keys.disp[i] == PMT_DISP_HIDDEN)
			return true;
	return false;
}

void pmt_agg__note_pids(struct pmt_session *s)
{
	const struct pmt_keylayout *kl = &s->agg.keys;
	int fd = bpf_map__fd(s->skel->maps.pmt_agg), i;
	struct pmt_agg_key key, next, *prev = NULL;
	uint64_t v;

	memset(&next, 0, sizeof(next));
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		for (i = 0; i < kl->n; i++) {
			memcpy(&v, key.data + kl->at[i], 8);
			if (kl->disp[i] == PMT_DISP_HIDDEN && i + 1 < kl->n) {
				uint64_t ip;

				memcpy(&ip, key.data + kl->at[i + 1], 8);
				if (!pmt_is_kernel_addr(ip))
					pmt_syms__note_pid(pmt_session__syms(s), (uint32_t)v);
			}
			else if (kl->disp[i] == PMT_DISP_USTACK && (int32_t)(uint32_t)v >= 0)
				pmt_syms__note_pid(pmt_session__syms(s), (uint32_t)(v >> 32));
		}
		memset(&next, 0, sizeof(next));
	}
}

int pmt_agg__print(struct pmt_session *s, struct pmt_output *out, uint64_t now_ns)
{
	const struct pmt_agg_opts *ao = &s->opts->agg;
	static const char *const fns[] = {
		"", "count", "sum", "avg", "min", "max", "stats", "hist", "lhist",
	};
	struct pmt_agg_entry *cur = NULL, *delta;
	struct group *groups = NULL;
	size_t n = 0, ng = 0, i, j, first;
	struct pmt_buf b = {0};
	char when[32];
	time_t t = time(NULL);
	int err;

	err = read_entries(s, &cur, &n);
	if (err)
		return err;
	/* deltas go into a copy: cur becomes the next "previous" */
	delta = n ? malloc(n * sizeof(*delta)) : NULL;
	if (n && !delta) {
		free(cur);
		return -ENOMEM;
	}
	if (n)
		memcpy(delta, cur, n * sizeof(*delta));
	if (!ao->keep)
		subtract(delta, n, s->agg.prev, s->agg.nprev);
	groups = calloc(n ? n : 1, sizeof(*groups));
	for (i = 0; groups && i < n; i = j) {
		struct group *g = &groups[ng];

		for (j = i; j < n && !memcmp(delta[j].key.data, delta[i].key.data, PMT_KEY_MAX); j++) {
			g->total.count += delta[j].val.count;
			g->total.sum += delta[j].val.sum;
			if (j == i || delta[j].val.min < g->total.min)
				g->total.min = delta[j].val.min;
			if (j == i || delta[j].val.max > g->total.max)
				g->total.max = delta[j].val.max;
		}
		if (!g->total.count)
			continue;	/* nothing new in this interval */
		g->e = &delta[i];
		g->n = j - i;
		g->sortval = group_value(ao->fn, &g->total);
		ng++;
	}
	if (groups && symbolic_keys(s))
		ng = merge_by_text(s, groups, ng, out->mode == PMT_OUT_JSON);
	if (s->opts->folded || s->opts->flamegraph) {
		err = write_stacks(s, out, groups, ng);
		goto done;
	}
	qsort(groups, ng, sizeof(*groups), cmp_group);
	first = ao->top && (size_t)ao->top < ng ? ng - (size_t)ao->top : 0;
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
	if (out->mode == PMT_OUT_JSON) {
		pmt_buf__printf(&b, "{\"ts\":%llu,\"time\":\"%s\",\"aggregation\":\"%s\"",
				(unsigned long long)now_ns, when, fns[ao->fn]);
		if (ao->lat_start)
			pmt_buf__printf(&b, ",\"unit\":\"%s\"", ao->unit ? ao->unit : "us");
		pmt_buf__puts(&b, ",\"entries\":[");
		for (i = first; i < ng; i++)
			print_json_group(s, &b, &groups[i], i == first);
		pmt_buf__puts(&b, "]}\n");
	} else {
		if (ao->interval > 0)
			pmt_buf__printf(&b, "%s\n", when);
		for (i = first; i < ng; i++)
			print_text_group(s, &b, &groups[i]);
		if (!ng)
			pmt_buf__puts(&b, "(no events)\n");
		if (ao->interval > 0)
			pmt_buf__putc(&b, '\n');
	}
	pmt_output__line(out, b.p, b.len);
	pmt_output__flush(out);
	pmt_buf__free(&b);
done:
	for (i = 0; groups && i < ng; i++)
		free(groups[i].text);
	free(groups);
	free(delta);
	free(s->agg.prev);
	s->agg.prev = cur;
	s->agg.nprev = n;
	s->agg.snapshots++;
	return 0;
}
