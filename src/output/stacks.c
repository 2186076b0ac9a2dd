// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The frames streamed after a record, as perf script -g shows them. */
#include <stddef.h>
#include <string.h>
#include "abi.h"
#include "output/stacks.h"
#include "symbols/symbols.h"

uint32_t pmt_stacks__frames(const struct pmt_record *r, const uint64_t **frames, uint32_t *nkernel)
{
	size_t rec = r->fmt->fixed_size;
	const struct pmt_stack_rec *st;
	uint32_t n;

	if (r->frames) {
		*frames = r->frames;
		*nkernel = r->nkernel;
		return r->nframes;
	}
	if (!r->stack || r->len < rec || r->fmt->raw_ctx)
		return 0;
	st = (const void *)((const char *)r->data + rec - sizeof(*st));
	*frames = (const void *)((const char *)r->data + rec);
	*nkernel = st->nkernel;
	n = st->nkernel + st->nuser;
	return n > (r->len - rec) / 8 ? (uint32_t)((r->len - rec) / 8) : n;
}

/* A frame's line up to its name: "\n\t%16llx ", without printf (it was
 * 40% of a streamed stack's cost) */
static void frame_start(struct pmt_buf *b, uint64_t addr)
{
	pmt_buf__add(b, "\n\t", 2);
	pmt_buf__hexw(b, addr, 16);
	pmt_buf__putc(b, ' ');
}

void pmt_stacks__text(const struct pmt_record *r, struct pmt_buf *b)
{
	const uint64_t *frames = NULL;
	struct pmt_buf name = {0};
	uint32_t i, nk = 0, n = pmt_stacks__frames(r, &frames, &nk);

	for (i = 0; i < n; i++) {
		const struct pmt_srcframe *fr;
		int k, nf;

		pmt_syms__lock(r->syms);
		name.len = 0;
		pmt_syms__name(r->syms, r->pid, frames[i], true, false, &name);
		/* the functions inlined there first, as perf script shows them */
		nf = i < nk ? 0 : pmt_syms__srcframes(r->syms, r->pid, frames[i], &fr);
		for (k = 0; k < nf - 1; k++) {
			frame_start(b, frames[i]);
			pmt_buf__puts(b, fr[k].name);
			pmt_buf__puts(b, " (inlined)");
		}
		pmt_syms__unlock(r->syms);
		frame_start(b, pmt_syms__frame_addr(r->syms, frames[i]));
		pmt_buf__add(b, name.p, name.len);
		pmt_buf__puts(b, i < nk ? " ([kernel])" : "");
	}
	pmt_buf__free(&name);
}

/* One frame of the "stack" array: an inlined one when inlined, and the
 * file its code lies in ("dso" as perf script -F dso names it) when
 * known. */
static void json_frame(struct pmt_json *j, uint64_t addr, const char *name, size_t len,
		       const struct pmt_srcframe *fr, bool inlined, const char *dso)
{
	pmt_json__object(j);
	pmt_json__key(j, "addr");
	pmt_json__hex(j, addr);
	pmt_json__field_strn(j, "sym", name, len);
	if (inlined)
		pmt_json__field_bool(j, "inlined", true);
	if (dso)
		pmt_json__field_str(j, "dso", dso);
	if (fr && fr->line) {
		pmt_json__field_str(j, "file", fr->file);
		pmt_json__field_u64(j, "line", fr->line);
	}
	pmt_json__end(j);
}

void pmt_stacks__json(const struct pmt_record *r, struct pmt_json *j)
{
	const uint64_t *frames = NULL;
	struct pmt_buf name = {0};
	uint32_t i, nk = 0, n = pmt_stacks__frames(r, &frames, &nk);

	if (!r->stack || (!r->frames && r->len < r->fmt->fixed_size))
		return;
	pmt_json__key(j, "stack");
	pmt_json__array(j);
	for (i = 0; i < n; i++) {
		const struct pmt_srcframe *fr;
		struct pmt_module m;
		const char *dso;
		int k, nf;

		pmt_syms__lock(r->syms);
		/* the path stays valid while the lock is held */
		dso = pmt_syms__module(r->syms, r->pid, frames[i], &m) ? m.file : NULL;
		name.len = 0;
		pmt_syms__name(r->syms, r->pid, frames[i], true, false, &name);
		nf = i < nk ? 0 : pmt_syms__srcframes(r->syms, r->pid, frames[i], &fr);
		for (k = 0; k < nf - 1; k++)
			json_frame(j, frames[i], fr[k].name, strlen(fr[k].name), &fr[k], true,
				   NULL);
		json_frame(j, pmt_syms__frame_addr(r->syms, frames[i]), name.p, name.len,
			   nf ? &fr[nf - 1] : NULL, false, dso);
		pmt_syms__unlock(r->syms);
	}
	pmt_json__end(j);
	pmt_buf__free(&name);
}
