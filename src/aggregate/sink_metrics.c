// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An aggregation as Prometheus metrics: the text format 0.0.4 or
 * OpenMetrics 1.0. Values are cumulative (the maps are read, never
 * cleared), so counts and sums of unsigned values are counters, the rest
 * gauges, and histograms have cumulative "le" buckets:
 *
 *   log2     bucket b holds [2^(b-1), 2^b): le = 2^b - 1 for integers;
 *            latencies are truncated to their unit, so le = 2^b units
 *   lhist    bucket i holds [MIN + i*STEP, MIN + (i+1)*STEP): le = the
 *            end - 1; below MIN: le = MIN - 1; above MAX: only in +Inf
 *
 * --by keys become labels named after the key; keys that print the same
 * (two addresses of one function) are one series.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggregate/aggregate_internal.h"
#include "output/exposition.h"
#include "util/grow.h"

/* One series' value (non-histograms) or one bucket of it. */
struct row {
	const char *labels; /* `a="x",b="y"` (owned by the label table) */
	int32_t bucket;
	struct pmt_agg_val val;
};

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = strcmp(a->labels, b->labels);

	return c ? c : (a->bucket > b->bucket) - (a->bucket < b->bucket);
}

/* [a-zA-Z_][a-zA-Z0-9_]*: anything else becomes '_', runs of it one. */
static void sanitize(struct pmt_buf *b, const char *s)
{
	bool sep = b->len > 0 && b->p[b->len - 1] == '_';

	for (; *s; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9' && b->len > 0);

		if (ok) {
			pmt_buf__putc(b, c);
			sep = false;
		} else if (!sep && b->len > 0) {
			pmt_buf__putc(b, '_');
			sep = true;
		}
	}
	while (b->len && b->p[b->len - 1] == '_')
		b->len--;
}

static bool is_hist(const struct pmt_agg *a)
{
	return a->opts->fn == PMT_FN_HIST || a->opts->fn == PMT_FN_LHIST;
}

bool pmt_agg__is_profile(const struct pmt_agg *a)
{
	return a && pmt_agg__has_stack_key(a);
}

void pmt_agg__metric_name(const struct pmt_agg *a, struct pmt_buf *b)
{
	const struct pmt_agg_opts *ao = a->opts;
	size_t l;

	pmt_buf__puts(b, "pmtrace_");
	if (ao->lat_start) {
		sanitize(b, a->probe_names[0]);
		if (a->nprobes > 1 && ao->lat_end) {
			pmt_buf__puts(b, "_to_");
			sanitize(b, a->probe_names[1]);
		}
		if (ao->ncounters == 1) { /* counts a call: pmtrace_..._page_faults */
			pmt_buf__putc(b, '_');
			sanitize(b, ao->counter);
		} else if (ao->ncounters) { /* the label counter says which */
			pmt_buf__puts(b, "_counts");
		} else {
			pmt_buf__puts(b, "_latency_seconds");
		}
		return;
	}
	if (a->nprobes == 1) {
		sanitize(b, a->probe_names[0]);
		pmt_buf__putc(b, '_');
	}
	if (!ao->expr) {
		pmt_buf__puts(b, "events");
		return;
	}
	l = b->len;
	sanitize(b, ao->expr);
	if (b->len == l)
		pmt_buf__puts(b, "value");
	switch (ao->fn) {
	case PMT_FN_SUM:
		if (a->value_signed)
			pmt_buf__puts(b, "_sum");
		break;
	case PMT_FN_AVG: pmt_buf__puts(b, "_avg"); break;
	case PMT_FN_MIN: pmt_buf__puts(b, "_min"); break;
	case PMT_FN_MAX: pmt_buf__puts(b, "_max"); break;
	default: break;
	}
}

/* What was traced, for HELP: "count of sched:sched_switch events by comm". */
static void help_text(const struct pmt_agg *a, struct pmt_buf *b)
{
	const struct pmt_agg_opts *ao = a->opts;
	size_t i;

	if (ao->lat_start)
		pmt_buf__printf(b, "%s from %s to %s", ao->counter ? ao->counter : "latency",
				ao->lat_start, ao->lat_end ? ao->lat_end : "its return");
	else
		pmt_buf__printf(b, "%s%s%s of", pmt_agg_fn__name(ao->fn), ao->expr ? " " : "",
				ao->expr ? ao->expr : "");
	if (!ao->lat_start) {
		for (i = 0; i < a->nprobes && i < 4; i++)
			pmt_buf__printf(b, "%s %s", i ? "," : "", a->probe_names[i]);
		if (a->nprobes > 4)
			pmt_buf__printf(b, " and %zu more", a->nprobes - 4);
		pmt_buf__puts(b, " events");
	}
	if (ao->by)
		pmt_buf__printf(b, " by %s", ao->by);
	pmt_buf__puts(b, ", traced by pmtrace");
}

/* The labels of one key, from its shown parts. */
static void key_labels(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k)
{
	const struct pmt_keylayout *kl = &a->keys;
	struct pmt_buf v = {0};
	int i;

	for (i = 0; i < kl->n; i++) {
		if (kl->disp[i] == PMT_DISP_HIDDEN)
			continue;
		if (b->len)
			pmt_buf__putc(b, ',');
		sanitize(b, kl->names[i]);
		if (!strcmp(kl->names[i], "le") && is_hist(a))
			pmt_buf__puts(b, "_key");
		pmt_buf__puts(b, "=\"");
		if (kl->kind[i] == PMT_KEY_STRING) {
			size_t n;
			const char *str = pmt_agg__key_string(a, k, i, &n);

			pmt_expo__label_value(b, str, n);
		} else {
			v.len = 0;
			pmt_agg__key_part(a, io, &v, k, i);
			pmt_expo__label_value(b, v.p, v.len);
		}
		pmt_buf__putc(b, '"');
	}
	pmt_buf__free(&v);
}

/* Rows of the entries, each key's labels made once (labels[] owns them). */
static struct row *make_rows(const struct pmt_agg *a, const struct pmt_agg_io *io,
			     const struct pmt_agg_entries *cur, char **labels)
{
	struct row *rows = calloc(cur->n ? cur->n : 1, sizeof(*rows));
	struct pmt_buf b = {0};
	size_t i, nl = 0;

	if (!rows)
		return NULL;
	for (i = 0; i < cur->n; i++) {
		const struct pmt_agg_entry *e = &cur->v[i];

		if (!i || memcmp(e->key.data, cur->v[i - 1].key.data, PMT_KEY_MAX)) {
			b.len = 0;
			key_labels(a, io, &b, &e->key);
			labels[nl] = strdup(pmt_buf__cstr(&b));
			if (!labels[nl])
				goto fail;
			nl++;
		}
		rows[i] = (struct row){labels[nl - 1], e->key.bucket, e->val};
	}
	pmt_buf__free(&b);
	return rows;
fail:
	pmt_buf__free(&b);
	free(rows);
	return NULL;
}

/* Rows with the same labels and bucket as one: returns how many remain. */
static size_t merge_rows(struct row *r, size_t n)
{
	size_t i, m = 0;

	pmt_sort(r, n, sizeof(*r), cmp_row);
	for (i = 0; i < n; i++) {
		if (m && !cmp_row(&r[m - 1], &r[i])) {
			pmt_agg_val__merge(&r[m - 1].val, &r[i].val);
			continue;
		}
		r[m++] = r[i];
	}
	return m;
}

static void sample_name(struct pmt_buf *b, const char *name, const char *suffix, const char *labels,
			const char *extra)
{
	pmt_buf__puts(b, name);
	pmt_buf__puts(b, suffix);
	if (*labels || extra) {
		pmt_buf__putc(b, '{');
		pmt_buf__puts(b, labels);
		if (extra)
			pmt_buf__printf(b, "%s%s", *labels ? "," : "", extra);
		pmt_buf__putc(b, '}');
	}
	pmt_buf__putc(b, ' ');
}

/* Latency values are in --unit (0: not a latency); metrics in seconds. */
static double unit_seconds(const struct pmt_agg *a)
{
	return a->lat_unit_ns * 1e-9;
}

/* The inclusive upper bound of a bucket; false: none (above an lhist). */
static bool bucket_le(const struct pmt_agg *a, int32_t bk, double *le)
{
	const struct pmt_agg_opts *ao = a->opts;
	double unit = unit_seconds(a);

	if (ao->fn == PMT_FN_LHIST) {
		if (bk >= (int32_t)ao->lbuckets)
			return false;
		*le = (double)ao->lmin + (double)(bk + 1) * (double)ao->lstep - 1;
		return true;
	}
	if (unit > 0) {
		*le = ldexp(1, bk) * unit;
		return true;
	}
	*le = bk < 0 ? -1 : bk == 0 ? 0 : ldexp(1, bk) - 1;
	return true;
}

static void print_num(struct pmt_buf *b, double v)
{
	pmt_buf__printf(b, "%.15g\n", v);
}

/* One label set's histogram: rows r[0..n) are its buckets, ascending. */
static void histogram(const struct pmt_agg *a, struct pmt_buf *b, const char *name,
		      const struct row *r, size_t n, bool om)
{
	double unit = unit_seconds(a), le;
	uint64_t cum = 0, count = 0;
	int64_t sum = 0, min = 0;
	char extra[64];
	size_t i;

	for (i = 0; i < n; i++) {
		count += r[i].val.count;
		sum += r[i].val.sum;
		if (!i || r[i].val.min < min)
			min = r[i].val.min;
	}
	for (i = 0; i < n; i++) {
		cum += r[i].val.count;
		if (!bucket_le(a, r[i].bucket, &le))
			break;
		/* gaps up to the next bucket add nothing: skip them */
		snprintf(extra, sizeof(extra), "le=\"%.9g\"", le);
		sample_name(b, name, "_bucket", r[0].labels, extra);
		pmt_buf__printf(b, "%llu\n", (unsigned long long)cum);
	}
	sample_name(b, name, "_bucket", r[0].labels, "le=\"+Inf\"");
	pmt_buf__printf(b, "%llu\n", (unsigned long long)count);
	sample_name(b, name, "_count", r[0].labels, NULL);
	pmt_buf__printf(b, "%llu\n", (unsigned long long)count);
	/* OpenMetrics: a histogram's _sum is a counter, never negative */
	if (om && min < 0)
		return;
	sample_name(b, name, "_sum", r[0].labels, NULL);
	if (unit > 0)
		print_num(b, (double)sum * unit);
	else
		pmt_buf__printf(b, "%lld\n", (long long)sum);
}

static void scalar(struct pmt_buf *b, const char *name, const char *suffix, enum pmt_agg_fn fn,
		   const struct row *r)
{
	const struct pmt_agg_val *v = &r->val;
	sample_name(b, name, suffix, r->labels, NULL);
	switch (fn) {
	case PMT_FN_COUNT: pmt_buf__printf(b, "%llu\n", (unsigned long long)v->count); break;
	case PMT_FN_SUM: pmt_buf__printf(b, "%lld\n", (long long)v->sum); break;
	case PMT_FN_AVG: print_num(b, v->count ? (double)v->sum / (double)v->count : 0); break;
	case PMT_FN_MIN: pmt_buf__printf(b, "%lld\n", (long long)v->min); break;
	default: pmt_buf__printf(b, "%lld\n", (long long)v->max); break;
	}
}

/* One family of scalars: each row one sample. */
static void scalar_family(const struct pmt_agg *a, struct pmt_buf *b, const char *name,
			  enum pmt_agg_fn fn, const char *help, bool om, const struct row *r,
			  size_t n)
{
	bool counter = fn == PMT_FN_COUNT || (fn == PMT_FN_SUM && !a->value_signed);
	size_t len = strlen(name), i;
	const char *suffix = "";

	/* counters' samples end in _total, in both formats */
	if (counter && !(len > 6 && !strcmp(name + len - 6, "_total")))
		suffix = "_total";
	{
		char full[256];

		snprintf(full, sizeof(full), "%s%s", name, suffix);
		pmt_expo__family(b, full, counter ? "counter" : "gauge", NULL, help, om);
	}
	for (i = 0; i < n; i++)
		scalar(b, name, suffix, fn, &r[i]);
}

/* --stats: events, the sum, min and max, each its own family. */
static void stats_families(const struct pmt_agg *a, struct pmt_buf *b, const char *name,
			   const char *help, bool om, const struct row *r, size_t n)
{
	static const struct {
		const char *suffix;
		enum pmt_agg_fn fn;
	} parts[] = {{"_events", PMT_FN_COUNT},
		     {"", PMT_FN_SUM},
		     {"_min", PMT_FN_MIN},
		     {"_max", PMT_FN_MAX}};
	char full[256];
	size_t i;

	for (i = 0; i < 4; i++) {
		const char *sfx = parts[i].suffix;

		if (parts[i].fn == PMT_FN_SUM && a->value_signed)
			sfx = "_sum";
		snprintf(full, sizeof(full), "%s%s", name, sfx);
		scalar_family(a, b, full, parts[i].fn, help, om, r, n);
	}
}

int pmt_agg__metrics(const struct pmt_agg *a, struct pmt_agg_entries *cur,
		     const struct pmt_agg_io *io, const char *name, bool om, struct pmt_buf *b)
{
	struct pmt_buf def = {0}, help = {0};
	char **labels = calloc(cur->n ? cur->n : 1, sizeof(*labels));
	struct row *rows = NULL;
	size_t n = 0, i, j;
	int err = -ENOMEM;

	if (!labels)
		return -ENOMEM;
	pmt_agg_entries__sort(cur);
	rows = make_rows(a, io, cur, labels);
	if (!rows)
		goto out;
	n = merge_rows(rows, cur->n);
	if (!name) {
		pmt_agg__metric_name(a, &def);
		name = pmt_buf__cstr(&def);
	}
	help_text(a, &help);
	if (is_hist(a)) {
		pmt_expo__family(b, name, "histogram", a->opts->lat_start ? "seconds" : NULL,
				 pmt_buf__cstr(&help), om);
		for (i = 0; i < n; i = j) {
			for (j = i; j < n && !strcmp(rows[j].labels, rows[i].labels); j++)
				;
			histogram(a, b, name, &rows[i], j - i, om);
		}
	} else if (a->opts->fn == PMT_FN_STATS) {
		stats_families(a, b, name, pmt_buf__cstr(&help), om, rows, n);
	} else {
		scalar_family(a, b, name, a->opts->fn, pmt_buf__cstr(&help), om, rows, n);
	}
	err = 0;
out:
	for (i = 0; i < cur->n && labels[i]; i++)
		free(labels[i]);
	free(labels);
	free(rows);
	pmt_buf__free(&def);
	pmt_buf__free(&help);
	return err;
}
