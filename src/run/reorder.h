/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Merge per-CPU event streams into timestamp order. Each CPU's perf ring is
 * already in time order (BPF programs do not nest on a CPU), so a queue per
 * CPU and a merge of their heads is enough: no sorting, no per-event malloc.
 */
#ifndef PMT_REORDER_H
#define PMT_REORDER_H

#include <stddef.h>
#include <stdint.h>

struct pmt_rq;

struct pmt_reorder {
	int ncpu;
	struct pmt_rq *q;
	size_t bytes;	     /* held, all queues */
	uint64_t inversions; /* events older than their CPU's previous one */
};

typedef void (*pmt_reorder_cb)(void *ctx, int cpu, const void *data, size_t len);

int pmt_reorder__init(struct pmt_reorder *r, int ncpu);
void pmt_reorder__free(struct pmt_reorder *r);
void pmt_reorder__push(struct pmt_reorder *r, int cpu, uint64_t ts, const void *data, size_t len);
/* Bytes held of cpu's events */
size_t pmt_reorder__held(const struct pmt_reorder *r, int cpu);
/* Hand cb every held event with ts <= cutoff, oldest first. cb may push
 * more (it is handed a copy's address only until it returns). */
void pmt_reorder__flush(struct pmt_reorder *r, uint64_t cutoff, pmt_reorder_cb cb, void *ctx);

#endif
