// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "run/reorder.h"
#include "util/strutil.h"

struct item {
	uint64_t ts;
	uint32_t len;
	uint32_t pad;
	/* data, padded to 8 bytes */
};

struct pmt_rq {
	struct pmt_buf buf;
	size_t head; /* offset of the oldest item */
	uint64_t last_ts;
};

int pmt_reorder__init(struct pmt_reorder *r, int ncpu)
{
	memset(r, 0, sizeof(*r));
	r->q = calloc((size_t)ncpu, sizeof(*r->q));
	if (!r->q)
		return -ENOMEM;
	r->ncpu = ncpu;
	return 0;
}

void pmt_reorder__free(struct pmt_reorder *r)
{
	int i;

	for (i = 0; r->q && i < r->ncpu; i++)
		pmt_buf__free(&r->q[i].buf);
	free(r->q);
	r->q = NULL;
}

static size_t item_size(uint32_t len)
{
	return sizeof(struct item) + ((len + 7) & ~7u);
}

void pmt_reorder__push(struct pmt_reorder *r, int cpu, uint64_t ts, const void *data, size_t len)
{
	struct pmt_rq *q = &r->q[cpu];
	struct item it = {.ts = ts, .len = (uint32_t)len};
	size_t sz = item_size(it.len);

	if (ts < q->last_ts) {
		/* cannot happen for one CPU's ring; keep FIFO order if it does */
		r->inversions++;
		it.ts = q->last_ts;
	}
	q->last_ts = it.ts;
	pmt_buf__reserve(&q->buf, sz);
	memcpy(q->buf.p + q->buf.len, &it, sizeof(it));
	memcpy(q->buf.p + q->buf.len + sizeof(it), data, len);
	q->buf.len += sz;
	r->bytes += sz;
}

size_t pmt_reorder__held(const struct pmt_reorder *r, int cpu)
{
	return cpu >= 0 && cpu < r->ncpu ? r->q[cpu].buf.len - r->q[cpu].head : 0;
}

/* A queue's written part past this is given back during a flush */
#define COMPACT_AT (64u << 10)

/* Reclaim the written space at the front of q once it is half of it:
 * each byte is moved at most once on average */
static void compact(struct pmt_rq *q)
{
	if (q->head == q->buf.len) {
		q->head = q->buf.len = 0;
	} else if (q->head > q->buf.len / 2) {
		memmove(q->buf.p, q->buf.p + q->head, q->buf.len - q->head);
		q->buf.len -= q->head;
		q->head = 0;
	}
}

static const struct item *head_of(const struct pmt_rq *q)
{
	return q->head < q->buf.len ? (const void *)(q->buf.p + q->head) : NULL;
}

void pmt_reorder__flush(struct pmt_reorder *r, uint64_t cutoff, pmt_reorder_cb cb, void *ctx)
{
	const struct item *it, *best;
	int i, best_cpu;
	uint32_t len;

	for (;;) {
		best = NULL;
		best_cpu = -1;
		for (i = 0; i < r->ncpu; i++) {
			it = head_of(&r->q[i]);
			if (it && it->ts <= cutoff && (!best || it->ts < best->ts)) {
				best = it;
				best_cpu = i;
			}
		}
		if (!best)
			break;
		/* cb may push (the reader drains its rings while it writes):
		 * the queues may move, so nothing of best is read after it */
		len = best->len;
		cb(ctx, best_cpu, best + 1, len);
		r->q[best_cpu].head += item_size(len);
		r->bytes -= item_size(len);
		/* a long flush takes in more as it goes (cb): what it wrote
		 * is given back on the way, not only at its end */
		if (r->q[best_cpu].head >= COMPACT_AT)
			compact(&r->q[best_cpu]);
	}
	for (i = 0; i < r->ncpu; i++)
		compact(&r->q[i]);
}
