// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --pprof: an aggregation by stack as a pprof profile. Each entry is one
 * sample: its kernel frames then its user frames (innermost first, as
 * pprof wants them), seen count times; the other keys are labels (comm
 * as a string, numbers as numbers). Frames carry their mapping (file,
 * build-id, bounds; the kernel's is [kernel.kallsyms]) and function name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "aggregate/aggregate_internal.h"
#include "output/pprof.h"
#include "symbols/symbols.h"
#include "util/grow.h"
#include "util/log.h"

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void pmt_agg__profile_info(struct pmt_agg *a, const char *type, const char *unit, int64_t period)
{
	a->prof_type = type;
	a->prof_unit = unit;
	a->prof_period = period;
	a->start_wall_ns = wall_ns();
}

/* The location of addr: its function, and the ones inlined there with
 * their files and lines where the DWARF has them. */
static uint64_t add_location(struct pmt_pprof *pp, const struct pmt_agg_io *io, uint64_t key,
			     uint32_t pid, uint64_t addr, uint64_t map, struct pmt_buf *name)
{
	struct pmt_pprof_line lines[PMT_SRC_INLINE + 1];
	const struct pmt_srcframe *fr;
	uint64_t loc;
	int i, n;

	pmt_syms__lock(io->syms);
	name->len = 0;
	pmt_syms__name(io->syms, pid, addr, false, false, name);
	n = pmt_syms__srcframes(io->syms, pid, addr, &fr);
	for (i = 0; i < n; i++)
		lines[i] = (struct pmt_pprof_line){fr[i].name, fr[i].file, fr[i].line};
	if (!n)
		lines[n++] = (struct pmt_pprof_line){NULL, NULL, 0};
	/* the symbol's name, unless the frame has its own (Python's) */
	if (!lines[n - 1].name)
		lines[n - 1].name = pmt_buf__cstr(name);
	/* a Python frame shows its code object's address */
	loc = pmt_pprof__location(pp, key, addr, pmt_syms__frame_addr(io->syms, addr), map, lines,
				  n);
	pmt_syms__unlock(io->syms);
	return loc;
}

/* Frames of one stack key part appended to locs; returns the new count.
 * A frame is symbolized only the first time its location is seen. */
static int add_frames(struct pmt_pprof *pp, const struct pmt_agg_io *io, uint8_t disp, uint64_t v,
		      uint64_t *locs, int n, struct pmt_buf *name)
{
	uint64_t ips[PMT_STACK_DEPTH], map, loc;
	struct pmt_module m;
	uint32_t pid;
	int k, nf = pmt_agg__stack_frames(io, disp, v, ips, &pid);

	for (k = 0; k < nf && n < 2 * PMT_STACK_DEPTH; k++) {
		/* kernel and rebased frames are the same in every process */
		uint64_t key = pmt_is_kernel_addr(ips[k]) || pmt_is_file_frame(ips[k]) ? 0 : pid;

		loc = pmt_pprof__location_id(pp, key, ips[k]);
		if (!loc) {
			map = 0;
			if (pmt_syms__module(io->syms, pid, ips[k], &m))
				map = pmt_pprof__mapping(pp, key, m.start, m.end, m.pgoff, m.file,
							 m.build_id);
			loc = add_location(pp, io, key, pid, ips[k], map, name);
		}
		locs[n++] = loc;
	}
	return n;
}

/* One entry as a sample. */
static int add_sample(const struct pmt_agg *a, struct pmt_pprof *pp, const struct pmt_agg_io *io,
		      const struct pmt_agg_entry *e, struct pmt_buf *name)
{
	const struct pmt_keylayout *kl = &a->keys;
	struct pmt_pprof_label labels[PMT_AGG_KEYS];
	struct pmt_buf text[PMT_AGG_KEYS] = {{0}};
	uint64_t locs[2 * PMT_STACK_DEPTH], v;
	int i, n = 0, nl = 0, pass, err;

	/* kernel frames are the innermost: first */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < kl->n; i++) {
			if (kl->disp[i] != (pass ? PMT_DISP_USTACK : PMT_DISP_KSTACK))
				continue;
			memcpy(&v, e->key.data + kl->at[i], 8);
			n = add_frames(pp, io, kl->disp[i], v, locs, n, name);
		}
	}
	for (i = 0; i < kl->n; i++) {
		uint8_t d = kl->disp[i];

		if (d == PMT_DISP_HIDDEN || d == PMT_DISP_KSTACK || d == PMT_DISP_USTACK)
			continue;
		labels[nl].key = kl->names[i];
		labels[nl].str = NULL;
		if (kl->kind[i] == PMT_KEY_NUM && d == PMT_DISP_PLAIN) {
			memcpy(&v, e->key.data + kl->at[i], 8);
			labels[nl].num = (int64_t)v;
		} else {
			pmt_agg__key_part(a, io, &text[nl], &e->key, i);
			labels[nl].str = pmt_buf__cstr(&text[nl]);
		}
		nl++;
	}
	/* --offcpu: the time off, in microseconds, as nanoseconds */
	err = pmt_pprof__sample(pp, locs, n, e->val.count,
				a->opts->offcpu ? (uint64_t)e->val.sum * 1000 : 0, labels, nl);
	for (i = 0; i < nl; i++)
		pmt_buf__free(&text[i]);
	return err;
}

/* The user frames of e[0..n) located a file at a time, each file's
 * DWARF closed before the next one's is opened (pmt_syms__let_go): a
 * profile's names held libc's, ld.so's, libm's and pmtrace's DWARF at
 * once (10 MB of always-on's peak), one at a time now. The samples
 * then find every location made. -ENOMEM */
static bool located(void *ctx, uint64_t key, uint64_t addr)
{
	return pmt_pprof__location_id(ctx, key, addr) != 0;
}

static int locate_by_file(const struct pmt_agg *a, struct pmt_pprof *pp,
			  const struct pmt_agg_io *io, const struct pmt_agg_entry *e, size_t n,
			  struct pmt_buf *name)
{
	struct pmt_agg_frame *list;
	struct pmt_module m;
	size_t i, len;
	uint64_t map;
	int err;

	if ((err = pmt_agg__frames_by_file(a, io, e, n, located, pp, &list, &len)))
		return err;
	for (i = 0; i < len && !err; i++) {
		if (i && list[i].file != list[i - 1].file)
			pmt_syms__let_go(io->syms, 0);
		map = 0;
		pmt_syms__lock(io->syms);
		if (pmt_syms__module(io->syms, list[i].pid, list[i].addr, &m))
			map = pmt_pprof__mapping(pp, list[i].key, m.start, m.end, m.pgoff, m.file,
						 m.build_id);
		pmt_syms__unlock(io->syms);
		if (!add_location(pp, io, list[i].key, list[i].pid, list[i].addr, map, name))
			err = -ENOMEM;
	}
	free(list);
	return err;
}

/* A profile of entries e[0..n): NULL when out of memory; *samples
 * their count. */
static struct pmt_pprof *profile(const struct pmt_agg *a, const struct pmt_agg_entry *e, size_t n,
				 const struct pmt_agg_io *io, uint64_t *samples)
{
	struct pmt_pprof *pp = pmt_pprof__new(a->prof_type, a->prof_unit, a->prof_period);
	struct pmt_buf name = {0};
	size_t i;
	int err = 0;

	*samples = 0;
	if (pp)
		err = locate_by_file(a, pp, io, e, n, &name);
	for (i = 0; pp && i < n && !err; i++) {
		if (!e[i].val.count)
			continue;
		err = add_sample(a, pp, io, &e[i], &name);
		*samples += e[i].val.count;
	}
	pmt_buf__free(&name);
	if (err) {
		pmt_pprof__free(pp);
		return NULL;
	}
	return pp;
}

int pmt_agg__pprof(const struct pmt_agg *a, const struct pmt_agg_entry *e, size_t n,
		   const struct pmt_agg_io *io, int64_t start_wall_ns, int64_t duration_ns,
		   uint8_t **gz, size_t *len)
{
	uint64_t samples;
	struct pmt_pprof *pp = profile(a, e, n, io, &samples);
	int err;

	if (!pp)
		return -ENOMEM;
	pmt_pprof__times(pp, start_wall_ns, duration_ns);
	err = pmt_pprof__gzip(pp, gz, len);
	pmt_pprof__free(pp);
	return err;
}

/* The sink: the snapshot's entries (not its groups: pprof keeps every
 * stack apart and merges locations itself) as a profile in one file. */
static int write_pprof(struct pmt_agg_snap *s, struct pmt_output *out)
{
	const struct pmt_agg *a = s->a;
	const char *path = a->opts->pprof;
	uint64_t samples;
	struct pmt_pprof *pp = profile(a, s->e, s->n, s->io, &samples);
	int err;

	(void)out;
	if (!pp)
		return pmt_error__runtime(s->err, -ENOMEM, "no memory for the profile '%s'", path);
	if (a->start_wall_ns)
		pmt_pprof__times(pp, a->start_wall_ns, wall_ns() - a->start_wall_ns);
	err = pmt_pprof__write(pp, path);
	if (err)
		pmt_error__runtime(s->err, err, "cannot write the profile to '%s': %s", path,
				   strerror(-err));
	else
		pmt_info("wrote %s: %llu samples", path, (unsigned long long)samples);
	pmt_pprof__free(pp);
	return err;
}

const struct pmt_agg_sink pmt_agg_sink_pprof = {.name = "pprof", .write = write_pprof};
