// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Records come per CPU: a child's mmap may sit in one ring and its fork
 * in another. Each read copies every ring's records and sorts them by
 * time; they are applied in that order, all at once (pmt_sideband__read)
 * or, for a stream, up to each sample's time as it is named
 * (pmt_sideband__apply_until): a sample taken before a file was
 * unmapped and another mapped at its address is named after the first.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/grow.h"
#include "symbols/symbols.h"
#include "symbols/sideband.h"
#include "util/log.h"

#define RING_PAGES 32

/* sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: every record
 * ends with this */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct task_rec { /* PERF_RECORD_FORK, PERF_RECORD_EXIT */
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct comm_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
};

struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct lost_rec {
	struct perf_event_header h;
	uint64_t id, lost;
};

struct held {
	uint64_t time;
	size_t at; /* offset in buf */
};

struct pmt_sideband {
	struct pmt_syms *syms;
	struct perf_buffer *pb;
	int map_fd;
	uint64_t lost;
	char *buf; /* records read and not yet applied, copied */
	size_t len, cap;
	char *spare; /* where compact moves them */
	size_t spare_cap;
	struct held *held; /* [done, n): not yet applied, by time */
	size_t done, n, hcap;
};

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct pmt_sideband *sb = ctx;
	const struct sample_id *id;
	struct held *v;
	char *b;

	(void)cpu;
	if (h->type == PERF_RECORD_LOST) {
		sb->lost += ((const struct lost_rec *)h)->lost;
		return LIBBPF_PERF_EVENT_CONT;
	}
	if (h->size < sizeof(*h) + sizeof(*id))
		return LIBBPF_PERF_EVENT_CONT;
	if (!(b = pmt_grow_to(sb->buf, &sb->cap, sb->len + h->size, 1, 65536)))
		goto dropped;
	sb->buf = b;
	if (!(v = pmt_grow(sb->held, &sb->hcap, sb->n, sizeof(*v), 256)))
		goto dropped;
	sb->held = v;
	id = (const void *)((const char *)h + h->size - sizeof(*id));
	sb->held[sb->n++] = (struct held){id->time, sb->len};
	memcpy(sb->buf + sb->len, h, h->size);
	sb->len += h->size;
	return LIBBPF_PERF_EVENT_CONT;
dropped: /* out of memory: reported with the kernel's own losses */
	sb->lost++;
	return LIBBPF_PERF_EVENT_CONT;
}

static void apply(struct pmt_sideband *sb, const struct perf_event_header *h)
{
	const struct task_rec *t = (const void *)h;
	const struct comm_rec *c = (const void *)h;
	const struct mmap2_rec *m = (const void *)h;
	const struct sample_id *id = (const void *)((const char *)h + h->size - sizeof(*id));
	size_t room = h->size - sizeof(*id);

	switch (h->type) {
	case PERF_RECORD_FORK:
		if (room >= sizeof(*t))
			pmt_syms__fork(sb->syms, t->pid, t->ppid);
		break;
	case PERF_RECORD_EXIT:
		/* the process ends with its leader */
		if (room >= sizeof(*t) && t->pid == t->tid)
			pmt_syms__exit(sb->syms, t->pid, t->time);
		break;
	case PERF_RECORD_COMM:
		if (room >= sizeof(*c) && (h->misc & PERF_RECORD_MISC_COMM_EXEC))
			pmt_syms__exec(sb->syms, c->pid, id->time);
		break;
	case PERF_RECORD_MMAP2:
		if (room > sizeof(*m) && memchr(m->filename, 0, room - sizeof(*m))) {
			struct pmt_mmap mm = {
				.pid = m->pid,
				.start = m->addr,
				.len = m->len,
				.pgoff = m->pgoff,
				.dev = makedev(m->maj, m->min),
				.ino = m->ino,
				.path = m->filename,
			};

			pmt_syms__mmap(sb->syms, &mm);
		}
		break;
	}
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at; /* a ring's own order */
}

/*
 * The records not applied move to a fresh buffer, in time order: a run
 * holds what the rings brought since the samples caught up. They move
 * out of place: held is in time order, buf in the rings' order, so moving
 * within buf would write over records not yet moved.
 */
static void compact(struct pmt_sideband *sb)
{
	size_t i, len = 0, need = 0, old_cap;
	char *to = NULL, *old;

	if (!sb->done)
		return; /* nothing applied: buf and held stand as they are */
	for (i = sb->done; i < sb->n; i++)
		need += ((const struct perf_event_header *)(sb->buf + sb->held[i].at))->size;
	if (need && !(to = pmt_grow_to(sb->spare, &sb->spare_cap, need, 1, 65536))) {
		/* no memory to hold them back: applied now, a little early */
		while (sb->done < sb->n)
			apply(sb, (const void *)(sb->buf + sb->held[sb->done++].at));
		need = 0;
	}
	if (need) {
		for (i = sb->done; i < sb->n; i++) {
			const struct perf_event_header *h =
				(const void *)(sb->buf + sb->held[i].at);

			memcpy(to + len, h, h->size);
			sb->held[i - sb->done] = (struct held){sb->held[i].time, len};
			len += h->size;
		}
		old = sb->buf; /* the two buffers change places */
		sb->buf = to;
		sb->spare = old;
		old_cap = sb->cap;
		sb->cap = sb->spare_cap;
		sb->spare_cap = old_cap;
	}
	sb->n -= sb->done;
	sb->done = 0;
	sb->len = len;
}

void pmt_sideband__fetch(struct pmt_sideband *sb)
{
	if (!sb)
		return;
	compact(sb);
	perf_buffer__consume(sb->pb);
	if (sb->n > 1)
		pmt_sort(sb->held, sb->n, sizeof(*sb->held), cmp_held);
}

void pmt_sideband__apply_until(struct pmt_sideband *sb, uint64_t time)
{
	if (!sb)
		return;
	while (sb->done < sb->n && sb->held[sb->done].time <= time)
		apply(sb, (const void *)(sb->buf + sb->held[sb->done++].at));
}

void pmt_sideband__read(struct pmt_sideband *sb)
{
	pmt_sideband__fetch(sb);
	pmt_sideband__apply_until(sb, UINT64_MAX);
}

int pmt_sideband__open(struct pmt_sideband **out, struct pmt_syms *syms, struct pmt_error *e)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* the clock of the samples (bpf_ktime_get_ns) */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* read on the loop's schedule: wake nobody early */
		.watermark = 1,
	};
	struct pmt_sideband *sb = calloc(1, sizeof(*sb));
	int ncpu = libbpf_num_possible_cpus(), err;

	*out = NULL;
	if (!sb)
		return pmt_error__runtime(e, -ENOMEM, "cannot follow processes' mappings: %s",
					  strerror(ENOMEM));
	attr.wakeup_watermark = (uint32_t)(RING_PAGES * sysconf(_SC_PAGESIZE) / 2);
	sb->syms = syms;
	sb->map_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "pmt_sideband", 4, 4,
				    ncpu > 0 ? (uint32_t)ncpu : 1, NULL);
	if (sb->map_fd < 0) {
		err = -errno;
		free(sb);
		return pmt_error__runtime(e, err, "cannot follow processes' mappings: %s",
					  strerror(-err));
	}
	sb->pb = perf_buffer__new_raw(sb->map_fd, RING_PAGES, &attr, on_record, sb, NULL);
	if (!sb->pb) {
		err = -errno;
		goto fail;
	}
	*out = sb;
	return 0;
fail:
	pmt_sideband__free(sb);
	return pmt_error__runtime(
		e, err, "cannot follow processes' mappings (a dummy perf event per CPU): %s",
		strerror(-err));
}

int pmt_sideband__fd(const struct pmt_sideband *sb)
{
	return sb ? perf_buffer__epoll_fd(sb->pb) : -1;
}

uint64_t pmt_sideband__lost(const struct pmt_sideband *sb)
{
	return sb ? sb->lost : 0;
}

void pmt_sideband__free(struct pmt_sideband *sb)
{
	if (!sb)
		return;
	perf_buffer__free(sb->pb);
	if (sb->map_fd >= 0)
		close(sb->map_fd);
	free(sb->buf);
	free(sb->spare);
	free(sb->held);
	free(sb);
}
