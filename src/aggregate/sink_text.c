// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The snapshot as bpftrace prints maps (@[key]: value, histograms with
 * their bars), or as one JSON object a print with the same groups.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "aggregate/aggregate_internal.h"
#include "symbols/symbols.h"

/* bpftrace's map name: a program's own, @usecs for a latency,
 * @page_faults for a --counter's (a map name has no '-' or ':'), @
 * otherwise (several counters: the key says which). */
static void map_name(const struct pmt_agg_opts *ao, struct pmt_buf *b)
{
	static const char *const units[] = {"ns", "nsecs", "us", "usecs",
					    "ms", "msecs", "s",	 "secs"};
	const char *p;
	size_t i;

	pmt_buf__putc(b, '@');
	if (ao->map) {
		pmt_buf__puts(b, ao->map);
		return;
	}
	if (ao->ncounters == 1) {
		for (p = ao->counter; *p; p++)
			pmt_buf__putc(b,
				      *p == '-' || *p == ':' || *p == '/' || *p == '=' ? '_' : *p);
		return;
	}
	for (i = 0; ao->lat_start && !ao->ncounters && i < 8; i += 2)
		if (!strcmp(ao->unit ? ao->unit : "us", units[i]))
			pmt_buf__puts(b, units[i + 1]);
}

static void bucket_label(struct pmt_buf *b, const struct pmt_agg *a, int32_t bucket)
{
	if (a->opts->fn == PMT_FN_LHIST)
		pmt_agg__lhist_label(b, bucket, a->opts->lmin, a->opts->lstep, a->opts->lbuckets);
	else
		pmt_agg__log2_label(b, bucket);
}

static bool is_hist(const struct pmt_agg *a)
{
	return a->opts->fn == PMT_FN_HIST || a->opts->fn == PMT_FN_LHIST;
}

/* From the first to the last non-empty bucket, gaps included (entries
 * are sorted by bucket within their group). */
static void histogram_text(const struct pmt_agg *a, struct pmt_buf *b,
			   const struct pmt_agg_group *g)
{
	int32_t bk, lo = g->e[0].key.bucket, hi = g->e[g->n - 1].key.bucket;
	uint64_t max = 0, c;
	size_t i, start;

	for (i = 0; i < g->n; i++)
		if (g->e[i].val.count > max)
			max = g->e[i].val.count;
	for (bk = lo, i = 0; bk <= hi; bk++) {
		c = 0;
		start = b->len;
		while (i < g->n && g->e[i].key.bucket < bk)
			i++;
		if (i < g->n && g->e[i].key.bucket == bk)
			c = g->e[i].val.count;
		/* bpftrace's columns: the range in 16, the count in 8 */
		bucket_label(b, a, bk);
		while (b->len - start < 16)
			pmt_buf__putc(b, ' ');
		pmt_buf__printf(b, "%8llu ", (unsigned long long)c);
		pmt_agg__bar(b, c, max);
		pmt_buf__putc(b, '\n');
	}
	pmt_buf__putc(b, '\n');
}

static void group_text(struct pmt_agg_snap *s, struct pmt_buf *b, const struct pmt_agg_group *g)
{
	const struct pmt_agg_opts *ao = s->a->opts;
	const struct pmt_agg_val *v = &g->total;
	long long avg = v->count ? (long long)(v->sum / (int64_t)v->count) : 0;
	const char *text = pmt_agg_snap__text(s, g);

	map_name(ao, b);
	if (text) {
		pmt_buf__printf(b, "[%s]", text);
	} else if (s->a->keys.n) {
		pmt_buf__putc(b, '[');
		pmt_agg__key_text(s->a, s->io, b, &g->e->key);
		pmt_buf__putc(b, ']');
	}
	pmt_buf__putc(b, ':');
	switch (ao->fn) {
	case PMT_FN_COUNT: pmt_buf__printf(b, " %llu\n", (unsigned long long)v->count); break;
	case PMT_FN_SUM: pmt_buf__printf(b, " %lld\n", (long long)v->sum); break;
	case PMT_FN_AVG: pmt_buf__printf(b, " %lld\n", avg); break;
	case PMT_FN_MIN: pmt_buf__printf(b, " %lld\n", (long long)v->min); break;
	case PMT_FN_MAX: pmt_buf__printf(b, " %lld\n", (long long)v->max); break;
	case PMT_FN_STATS:
		/* a program's map is bpftrace's stats(), which has no min
		 * and max; --stats shows them */
		if (ao->map)
			pmt_buf__printf(b, " count %llu, average %lld, total %lld\n",
					(unsigned long long)v->count, avg, (long long)v->sum);
		else
			pmt_buf__printf(
				b, " count %llu, average %lld, min %lld, max %lld, total %lld\n",
				(unsigned long long)v->count, avg, (long long)v->min,
				(long long)v->max, (long long)v->sum);
		break;
	default:
		/* bpftrace's header line ends in ": " */
		pmt_buf__puts(b, " \n");
		histogram_text(s->a, b, g);
		break;
	}
}

/* The first group --top keeps (groups are sorted smallest first). */
static size_t top_first(const struct pmt_agg *a, size_t ng)
{
	size_t top = (size_t)(a->top ? a->top : a->opts->top);

	return top && top < ng ? ng - top : 0;
}

/* The interval's first line: the clock, or what a program's time()
 * prints (head: strftime's format) */
static void clock_time(char *when, size_t len, const char *head)
{
	time_t t = time(NULL);
	struct tm tm;

	if (!strftime(when, len, head ? head : "%H:%M:%S\n", localtime_r(&t, &tm)))
		when[0] = '\0';
}

void pmt_agg__program_tail(const struct pmt_agg_opts *ao, size_t n, struct pmt_buf *b)
{
	if (!n && ao->fn == PMT_FN_COUNT && !ao->by) {
		pmt_buf__printf(b, "@%s: 0\n", ao->map);
		return;
	}
	if (!n)
		pmt_buf__putc(b, '\n');
	if (ao->fn == PMT_FN_AVG || ao->fn == PMT_FN_STATS)
		pmt_buf__putc(b, '\n');
}

#define SPILL_AT (64 * 1024)

void pmt_agg__spill(struct pmt_output *out, struct pmt_buf *b)
{
	if (b->len < SPILL_AT)
		return;
	pmt_output__line(out, b->p, b->len);
	b->len = 0;
}

static int write_text(struct pmt_agg_snap *s, struct pmt_output *out)
{
	size_t ng, i;
	struct pmt_agg_group *g = pmt_agg_snap__groups(s, PMT_FORM_KEY, &ng);
	struct pmt_buf b = {0};
	char when[256];

	if (!g)
		return -ENOMEM;
	clock_time(when, sizeof(when), s->a->opts->head);
	if (s->a->opts->interval > 0)
		pmt_buf__puts(&b, when);
	for (i = top_first(s->a, ng); i < ng; i++) {
		group_text(s, &b, &g[i]);
		pmt_agg__spill(out, &b);
	}
	if (s->a->opts->map)
		pmt_agg__program_tail(s->a->opts, ng, &b);
	else if (!ng)
		pmt_buf__puts(&b, "(no events)\n");
	if (s->a->opts->interval > 0 && !s->a->opts->head)
		pmt_buf__putc(&b, '\n');
	pmt_output__line(out, b.p, b.len);
	pmt_output__flush(out);
	pmt_buf__free(&b);
	return 0;
}

/* {"comm": "x", "kstack": ["f", ...], ...}: the parts shown, by name. */
/* a stack's frame, and those inlined there, as streamed output names
 * them */
static void json_frame(void *ctx, const char *name, size_t len)
{
	pmt_json__strn(ctx, name, len);
}

static void key_json(const struct pmt_agg_snap *s, struct pmt_json *j, const struct pmt_agg_key *k)
{
	const struct pmt_keylayout *kl = &s->a->keys;
	uint64_t ips[PMT_STACK_DEPTH], v;
	struct pmt_buf name = {0};
	uint32_t pid;
	int i, f, n;

	pmt_json__object(j);
	for (i = 0; i < kl->n; i++) {
		uint8_t disp = kl->disp[i];

		if (disp == PMT_DISP_HIDDEN)
			continue;
		if (!pmt_agg__is_stack(disp)) {
			pmt_json__key(j, kl->names[i]);
			pmt_agg__key_json(s->a, s->io, j, k, i);
			continue;
		}
		pmt_json__key(j, disp == PMT_DISP_KSTACK ? "kstack" : "ustack");
		pmt_json__array(j);
		memcpy(&v, k->data + kl->at[i], 8);
		n = pmt_agg__stack_frames(s->io, disp, v, ips, &pid);
		for (f = 0; f < n; f++)
			pmt_syms__names(s->io->syms, pid, ips[f], &name, json_frame, j);
		pmt_json__end(j);
	}
	pmt_json__end(j);
	pmt_buf__free(&name);
}

static void group_json(const struct pmt_agg_snap *s, struct pmt_json *j,
		       const struct pmt_agg_group *g, struct pmt_buf *label)
{
	const struct pmt_agg_val *v = &g->total;
	size_t i;

	pmt_json__object(j);
	pmt_json__key(j, "key");
	key_json(s, j, &g->e->key);
	pmt_json__field_u64(j, "count", v->count);
	pmt_json__field_s64(j, "sum", v->sum);
	pmt_json__field_s64(j, "min", v->min);
	pmt_json__field_s64(j, "max", v->max);
	if (is_hist(s->a)) {
		pmt_json__key(j, "buckets");
		pmt_json__array(j);
		for (i = 0; i < g->n; i++) {
			label->len = 0;
			bucket_label(label, s->a, g->e[i].key.bucket);
			pmt_json__object(j);
			pmt_json__field_s64(j, "bucket", g->e[i].key.bucket);
			pmt_json__field_strn(j, "range", label->p, label->len);
			pmt_json__field_u64(j, "count", g->e[i].val.count);
			pmt_json__end(j);
		}
		pmt_json__end(j);
	}
	pmt_json__end(j);
}

static int write_json(struct pmt_agg_snap *s, struct pmt_output *out)
{
	const struct pmt_agg_opts *ao = s->a->opts;
	size_t ng, i;
	struct pmt_agg_group *g = pmt_agg_snap__groups(s, PMT_FORM_KEY, &ng);
	struct pmt_buf b = {0}, label = {0};
	struct pmt_json j;
	char when[32];

	if (!g)
		return -ENOMEM;
	clock_time(when, sizeof(when), "%H:%M:%S");
	pmt_json__init(&j, &b);
	pmt_json__object(&j);
	pmt_json__field_u64(&j, "ts", s->now_ns);
	pmt_json__field_str(&j, "time", when);
	pmt_json__field_str(&j, "aggregation", pmt_agg_fn__name(ao->fn));
	if (ao->ncounters == 1)
		pmt_json__field_str(&j, "counter", ao->counter);
	else if (ao->lat_start)
		pmt_json__field_str(&j, "unit", ao->unit ? ao->unit : "us");
	pmt_json__key(&j, "entries");
	pmt_json__array(&j);
	for (i = top_first(s->a, ng); i < ng; i++)
		group_json(s, &j, &g[i], &label);
	pmt_json__end(&j);
	pmt_json__end(&j);
	pmt_buf__putc(&b, '\n');
	pmt_output__line(out, b.p, b.len);
	pmt_output__flush(out);
	pmt_buf__free(&b);
	pmt_buf__free(&label);
	return 0;
}

const struct pmt_agg_sink pmt_agg_sink_text = {.name = "text", .write = write_text};
const struct pmt_agg_sink pmt_agg_sink_json = {.name = "json", .write = write_json};
