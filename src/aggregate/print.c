// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Printing a snapshot: entries turned into deltas against the previous
 * snapshot (so nothing is lost between reading and clearing), grouped by
 * key, sorted by value; as bpftrace prints maps, as JSON, as folded stacks
 * or as a flame graph.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "aggregate/internal.h"
#include "output/flamegraph.h"
#include "output/symbols.h"
#include "util/log.h"

/* What every printing function reads. */
struct printer {
	struct pmt_agg *a;
	const struct pmt_agg_io *io;
};

/* Turn cur into deltas against prev (min/max stay since the start). */
static void subtract(struct pmt_agg_entry *cur, size_t n, const struct pmt_agg_entry *prev,
		     size_t np)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct pmt_agg_entry *p =
			np ? bsearch(&cur[i], prev, np, sizeof(*prev), pmt_agg_entry__cmp) : NULL;

		if (p) {
			cur[i].val.count -= p->val.count;
			cur[i].val.sum -= p->val.sum;
		}
	}
}

static bool is_stack(uint8_t disp)
{
	return disp == PMT_DISP_KSTACK || disp == PMT_DISP_USTACK;
}

size_t pmt_agg__forget(struct pmt_agg *a,
		       bool (*drop)(void *ctx, const struct pmt_agg_key *key, bool idle), void *ctx)
{
	size_t i, kept = 0, n = a->prev.n;

	if (a->opts->interval <= 0 || a->opts->keep)
		return 0;
	for (i = 0; i < n; i++) {
		const struct pmt_agg_entry *e = &a->prev.v[i];

		if (drop(ctx, &e->key, e->idle))
			continue;
		a->prev.v[kept++] = *e; /* stays sorted */
	}
	a->prev.n = kept;
	return n - kept;
}

void pmt_agg__key_stacks(const struct pmt_agg *a, const struct pmt_agg_key *key,
			 void (*fn)(void *ctx, bool user, uint64_t v), void *ctx)
{
	const struct pmt_keylayout *kl = &a->keys;
	uint64_t v;
	int i;

	for (i = 0; i < kl->n; i++) {
		if (!is_stack(kl->disp[i]))
			continue;
		memcpy(&v, key->data + kl->at[i], 8);
		fn(ctx, kl->disp[i] == PMT_DISP_USTACK, v);
	}
}

/* --- printing ------------------------------------------------------------ */

/* A run of entries with the same key data: one line or one histogram. */
struct group {
	const struct pmt_agg_entry *e;
	size_t n;
	struct pmt_agg_val total;
	double sortval;
	char *text; /* symbolic keys: the key as shown, merged by */
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

int pmt_agg__stack_frames(const struct pmt_agg_io *io, uint8_t disp, uint64_t v, uint64_t *ips,
			  uint32_t *pid)
{
	bool user = disp == PMT_DISP_USTACK;
	int32_t id = user ? (int32_t)(uint32_t)v : (int32_t)(int64_t)v;

	*pid = user ? (uint32_t)(v >> 32) : 0;
	if (id < 0 || !io->stack)
		return 0;
	return io->stack(io->stack_ctx, user, v, ips);
}

static void stack_text(const struct printer *s, struct pmt_buf *b, uint8_t disp, uint64_t v,
		       bool json)
{
	uint64_t ips[PMT_STACK_DEPTH];
	struct pmt_buf name = {0};
	uint32_t pid;
	int n = pmt_agg__stack_frames(s->io, disp, v, ips, &pid), i;

	for (i = 0; i < n; i++) {
		name.len = 0;
		pmt_syms__name(s->io->syms, pid, ips[i], false, true, &name);
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

void pmt_agg__key_part(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k, int i, bool json)
{
	const struct pmt_keylayout *kl = &a->keys;
	const uint8_t *d = k->data + kl->at[i];
	uint64_t v, pid = 0;

	memcpy(&v, d, 8);
	if (kl->disp[i] == PMT_DISP_SYM) {
		struct pmt_buf name = {0};

		if (i > 0 && kl->disp[i - 1] == PMT_DISP_HIDDEN)
			memcpy(&pid, k->data + kl->at[i - 1], 8);
		pmt_syms__name(io->syms, (uint32_t)pid, v, false, true, &name);
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
		const char *name = v < a->nprobes ? a->probe_names[v] : "?";

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

static void key_text(const struct printer *s, struct pmt_buf *b, const struct pmt_agg_key *k,
		     bool json)
{
	const struct pmt_keylayout *kl = &s->a->keys;
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
			const char *n = is_stack(disp)
						? (disp == PMT_DISP_KSTACK ? "kstack" : "ustack")
						: kl->names[i];

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
		pmt_agg__key_part(s->a, s->io, b, k, i, json);
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
static void folded_text(const struct printer *s, struct pmt_buf *b, const struct pmt_agg_key *k)
{
	const struct pmt_keylayout *kl = &s->a->keys;
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
				pmt_agg__key_part(s->a, s->io, &name, k, i, false);
				if (!first)
					pmt_buf__putc(b, ';');
				/* ';' and ' ' separate frames and the count */
				for (f = 0; f < (int)name.len; f++)
					pmt_buf__putc(b, name.p[f] == ';' || name.p[f] == ' '
								 ? '_'
								 : name.p[f]);
				first = false;
				continue;
			}
			n = pmt_agg__stack_frames(s->io, disp, v, ips, &pid);
			for (f = n - 1; f >= 0; f--) {
				if (!first)
					pmt_buf__putc(b, ';');
				first = false;
				pmt_syms__name(s->io->syms, pid, ips[f], false, false, b);
			}
		}
	}
	pmt_buf__free(&name);
}

static const char *map_name(const struct pmt_agg_opts *ao)
{
	static const char *const units[] = {"ns", "nsecs", "us", "usecs",
					    "ms", "msecs", "s",	 "secs"};
	size_t i;

	if (!ao->lat_start)
		return "";
	for (i = 0; i < 8; i += 2)
		if (!strcmp(ao->unit ? ao->unit : "us", units[i]))
			return units[i + 1];
	return "";
}

static void bucket_label(struct pmt_buf *b, const struct pmt_agg *a, int32_t bucket)
{
	if (a->opts->fn == PMT_FN_LHIST)
		pmt_agg__lhist_label(b, bucket, a->opts->lmin, a->opts->lstep, a->opts->lbuckets);
	else
		pmt_agg__log2_label(b, bucket);
}

static void print_text_group(const struct printer *s, struct pmt_buf *b, const struct group *g)
{
	const struct pmt_agg_opts *ao = s->a->opts;
	const struct pmt_agg_val *v = &g->total;
	uint64_t max = 0;
	size_t i;
	int32_t bk, lo, hi;

	pmt_buf__printf(b, "@%s", map_name(ao));
	if (g->text) {
		pmt_buf__printf(b, "[%s]", g->text);
	} else if (s->a->keys.n) {
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
	default: break;
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
		bucket_label(b, s->a, bk);
		while (b->len - start < 20)
			pmt_buf__putc(b, ' ');
		pmt_buf__printf(b, " %8llu ", (unsigned long long)c);
		pmt_agg__bar(b, c, max);
		pmt_buf__putc(b, '\n');
	}
	pmt_buf__putc(b, '\n');
}

static void print_json_group(const struct printer *s, struct pmt_buf *b, const struct group *g,
			     bool first)
{
	const struct pmt_agg_opts *ao = s->a->opts;
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
			(unsigned long long)v->count, (long long)v->sum, (long long)v->min,
			(long long)v->max);
	if (ao->fn == PMT_FN_HIST || ao->fn == PMT_FN_LHIST) {
		pmt_buf__puts(b, ",\"buckets\":[");
		for (i = 0; i < g->n; i++) {
			int32_t bk = g->e[i].key.bucket;

			label.len = 0;
			bucket_label(&label, s->a, bk);
			pmt_buf__printf(b, "%s{\"bucket\":%d,\"range\":", i ? "," : "", bk);
			pmt_buf__json_str(b, label.p, label.len);
			pmt_buf__printf(b, ",\"count\":%llu}",
					(unsigned long long)g->e[i].val.count);
		}
		pmt_buf__putc(b, ']');
	}
	pmt_buf__putc(b, '}');
	pmt_buf__free(&label);
}

static bool symbolic_keys(const struct printer *s)
{
	int i;

	for (i = 0; i < s->a->keys.n; i++)
		if (s->a->keys.disp[i] != PMT_DISP_PLAIN)
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
static size_t merge_by_text(const struct printer *s, struct group *g, size_t n, bool json)
{
	bool hist = s->a->opts->fn == PMT_FN_HIST || s->a->opts->fn == PMT_FN_LHIST;
	struct pmt_buf b = {0};
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		b.len = 0;
		if (s->a->opts->folded || s->a->opts->flamegraph)
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
			pmt_agg_val__merge(&g[m - 1].total, &g[i].total);
			g[m - 1].sortval = group_value(s->a->opts->fn, &g[m - 1].total);
			free(g[i].text);
			continue;
		}
		g[m++] = g[i];
	}
	return m;
}

/* --folded: "comm;frame;frame count" lines; --flamegraph: the picture. */
static int write_stacks(const struct printer *s, struct pmt_output *out, struct group *g, size_t n)
{
	struct pmt_buf b = {0};
	struct pmt_flame_stack *st;
	size_t i;
	int err = 0;

	if (s->a->opts->flamegraph) {
		st = calloc(n ? n : 1, sizeof(*st));
		if (!st)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			st[i].folded = g[i].text;
			st[i].count = g[i].total.count;
		}
		err = pmt_flame__write_file(s->a->opts->flamegraph, st, n,
					    s->a->nprobes ? s->a->probe_names[0] : "pmtrace");
		free(st);
		if (err)
			pmt_err("cannot write the flame graph to '%s': %s", s->a->opts->flamegraph,
				strerror(-err));
		else
			pmt_info("wrote %s: %zu stacks", s->a->opts->flamegraph, n);
		if (!s->a->opts->folded)
			return err;
	}
	for (i = 0; i < n; i++)
		pmt_buf__printf(&b, "%s %llu\n", g[i].text, (unsigned long long)g[i].total.count);
	pmt_output__line(out, b.p, b.len);
	pmt_output__flush(out);
	pmt_buf__free(&b);
	return err;
}

/* Runs of entries with the same key data, those with news in this delta. */
static size_t make_groups(const struct printer *s, struct pmt_agg_entry *delta, size_t n,
			  struct group *groups)
{
	size_t ng = 0, i, j;

	for (i = 0; i < n; i = j) {
		struct group *g = &groups[ng];

		memset(g, 0, sizeof(*g));
		for (j = i; j < n && !memcmp(delta[j].key.data, delta[i].key.data, PMT_KEY_MAX);
		     j++) {
			g->total.count += delta[j].val.count;
			g->total.sum += delta[j].val.sum;
			if (j == i || delta[j].val.min < g->total.min)
				g->total.min = delta[j].val.min;
			if (j == i || delta[j].val.max > g->total.max)
				g->total.max = delta[j].val.max;
		}
		if (!g->total.count)
			continue; /* nothing new in this interval */
		g->e = &delta[i];
		g->n = j - i;
		g->sortval = group_value(s->a->opts->fn, &g->total);
		ng++;
	}
	return ng;
}

static void print_groups(const struct printer *s, struct pmt_buf *b, struct group *groups,
			 size_t ng, bool json, uint64_t now_ns)
{
	const struct pmt_agg_opts *ao = s->a->opts;
	size_t i, first;
	time_t t = time(NULL);
	struct tm tm;
	char when[32];

	qsort(groups, ng, sizeof(*groups), cmp_group);
	first = ao->top && (size_t)ao->top < ng ? ng - (size_t)ao->top : 0;
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	if (json) {
		pmt_buf__printf(b, "{\"ts\":%llu,\"time\":\"%s\",\"aggregation\":\"%s\"",
				(unsigned long long)now_ns, when, pmt_agg_fn__name(ao->fn));
		if (ao->lat_start)
			pmt_buf__printf(b, ",\"unit\":\"%s\"", ao->unit ? ao->unit : "us");
		pmt_buf__puts(b, ",\"entries\":[");
		for (i = first; i < ng; i++)
			print_json_group(s, b, &groups[i], i == first);
		pmt_buf__puts(b, "]}\n");
		return;
	}
	if (ao->interval > 0)
		pmt_buf__printf(b, "%s\n", when);
	for (i = first; i < ng; i++)
		print_text_group(s, b, &groups[i]);
	if (!ng)
		pmt_buf__puts(b, "(no events)\n");
	if (ao->interval > 0)
		pmt_buf__putc(b, '\n');
}

int pmt_agg__print(struct pmt_agg *a, struct pmt_agg_entries *cur, const struct pmt_agg_io *io,
		   struct pmt_output *out, uint64_t now_ns)
{
	const struct printer pr = {a, io}, *s = &pr;
	size_t n = cur->n, ng = 0, i;
	struct pmt_agg_entry *delta = NULL;
	struct group *groups = NULL;
	struct pmt_buf b = {0};
	int err = -ENOMEM;

	if (n)
		qsort(cur->v, n, sizeof(*cur->v), pmt_agg_entry__cmp);
	/* deltas go into a copy: cur becomes the next "previous" */
	delta = calloc(n ? n : 1, sizeof(*delta));
	groups = calloc(n ? n : 1, sizeof(*groups));
	if (!delta || !groups)
		goto out;
	err = 0;
	if (n)
		memcpy(delta, cur->v, n * sizeof(*delta));
	if (!a->opts->keep)
		subtract(delta, n, a->prev.v, a->prev.n);
	for (i = 0; i < n; i++)
		cur->v[i].idle = !delta[i].val.count;
	if (a->opts->pprof) {
		err = pmt_agg__pprof(a, delta, n, io, a->opts->pprof);
		if (!a->opts->folded && !a->opts->flamegraph)
			goto out;
	}
	ng = make_groups(s, delta, n, groups);
	if (symbolic_keys(s))
		ng = merge_by_text(s, groups, ng, out->mode == PMT_OUT_JSON);
	if (a->opts->folded || a->opts->flamegraph) {
		int werr = write_stacks(s, out, groups, ng);

		err = err ? err : werr;
	} else {
		print_groups(s, &b, groups, ng, out->mode == PMT_OUT_JSON, now_ns);
		pmt_output__line(out, b.p, b.len);
		pmt_output__flush(out);
	}
out:
	pmt_buf__free(&b);
	for (i = 0; groups && i < ng; i++)
		free(groups[i].text);
	free(groups);
	free(delta);
	pmt_agg_entries__free(&a->prev);
	a->prev = *cur;
	memset(cur, 0, sizeof(*cur));
	return err;
}
