// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Histogram buckets and their printing, as bpftrace users know them. */
#include "aggregate/aggregate.h"

#define BAR_WIDTH 52

int32_t pmt_agg__log2_bucket(int64_t v)
{
	int32_t r = 0;
	uint64_t u = (uint64_t)v;

	if (v < 0)
		return -1;
	while (u) {
		r++;
		u >>= 1;
	}
	return r;
}

static void human(struct pmt_buf *b, uint64_t v)
{
	static const char suffix[] = "KMGTPE";
	int i = -1;

	while (v >= 1024 && !(v % 1024) && i < 5) {
		v /= 1024;
		i++;
	}
	pmt_buf__u64(b, v);
	if (i >= 0)
		pmt_buf__putc(b, suffix[i]);
}

void pmt_agg__log2_label(struct pmt_buf *b, int32_t bucket)
{
	if (bucket < 0) {
		pmt_buf__puts(b, "(..., 0)");
	} else if (bucket <= 1) {
		pmt_buf__printf(b, "[%d]", bucket);
	} else {
		pmt_buf__putc(b, '[');
		human(b, 1ULL << (bucket - 1));
		pmt_buf__puts(b, ", ");
		if (bucket >= 64)
			pmt_buf__puts(b, "...");
		else
			human(b, 1ULL << bucket);
		pmt_buf__putc(b, ')');
	}
}

void pmt_agg__lhist_label(struct pmt_buf *b, int32_t bucket, int64_t min, int64_t step,
			  uint32_t nbuckets)
{
	if (bucket < 0)
		pmt_buf__printf(b, "(..., %lld)", (long long)min);
	else if ((uint32_t)bucket >= nbuckets)
		pmt_buf__printf(b, "[%lld, ...)", (long long)(min + (int64_t)nbuckets * step));
	else
		pmt_buf__printf(b, "[%lld, %lld)", (long long)(min + bucket * step),
				(long long)(min + (bucket + 1) * step));
}

void pmt_agg__bar(struct pmt_buf *b, uint64_t v, uint64_t max)
{
	uint64_t w = max ? v * BAR_WIDTH / max : 0;
	uint64_t i;

	pmt_buf__putc(b, '|');
	for (i = 0; i < BAR_WIDTH; i++)
		pmt_buf__putc(b, i < w ? '@' : ' ');
	pmt_buf__putc(b, '|');
}
