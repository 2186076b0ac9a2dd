// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A streamed record's addresses named (named.h). */
#include <stdlib.h>
#include <string.h>
#include "symbols/named.h"
#include "symbols/srcline.h"
#include "symbols/symbols.h"
#include "util/grow.h"

void pmt_named__reset(struct pmt_named *nm)
{
	nm->text.len = 0;
	nm->sym = PMT_NAMED_NONE;
	nm->stack = false;
	nm->n = 0;
}

static uint32_t put(struct pmt_named *nm, const char *s)
{
	uint32_t off;

	if (!s)
		return PMT_NAMED_NONE;
	off = (uint32_t)nm->text.len;
	pmt_buf__add(&nm->text, s, strlen(s) + 1);
	return off;
}

/* addr's name appended (NUL-terminated): its offset */
static uint32_t put_name(struct pmt_named *nm, struct pmt_syms *syms, uint32_t pid, uint64_t addr)
{
	uint32_t off = (uint32_t)nm->text.len;

	pmt_syms__name(syms, pid, addr, true, false, &nm->text);
	pmt_buf__putc(&nm->text, '\0');
	return off;
}

void pmt_named__sym(struct pmt_named *nm, struct pmt_syms *syms, uint32_t pid, uint64_t addr)
{
	nm->sym = put_name(nm, syms, pid, addr);
}

static struct pmt_named_frame *add(struct pmt_named *nm)
{
	struct pmt_named_frame *v = pmt_grow(nm->v, &nm->cap, nm->n, sizeof(*v), 64);

	if (!v)
		return NULL;
	nm->v = v;
	v = &v[nm->n++];
	memset(v, 0, sizeof(*v));
	v->dso = v->file = PMT_NAMED_NONE;
	return v;
}

void pmt_named__frames(struct pmt_named *nm, struct pmt_syms *syms, uint32_t pid,
		       const uint64_t *frames, uint32_t n, uint32_t nkernel, bool where)
{
	struct pmt_named_frame *f;
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct pmt_srcframe *fr;
		uint32_t dso = PMT_NAMED_NONE, name;
		struct pmt_module m;
		int k, nf;

		/* names and paths stay valid while the lock is held; the
		 * DWARF's frames until the next call */
		pmt_syms__lock(syms);
		if (where && pmt_syms__module(syms, pid, frames[i], &m))
			dso = put(nm, m.file);
		name = put_name(nm, syms, pid, frames[i]);
		/* the functions inlined there first, as perf script shows them */
		nf = i < nkernel ? 0 : pmt_syms__srcframes(syms, pid, frames[i], &fr);
		for (k = 0; k < nf - 1 && (f = add(nm)); k++) {
			f->addr = frames[i];
			f->name = put(nm, fr[k].name);
			f->inlined = true;
			if (where && fr[k].line) {
				f->file = put(nm, fr[k].file);
				f->line = fr[k].line;
			}
		}
		if ((f = add(nm))) {
			f->addr = pmt_syms__frame_addr(syms, frames[i]);
			f->name = name;
			f->dso = dso;
			f->kernel = i < nkernel;
			if (where && nf && fr[nf - 1].line) {
				f->file = put(nm, fr[nf - 1].file);
				f->line = fr[nf - 1].line;
			}
		}
		pmt_syms__unlock(syms);
	}
}

void pmt_named__free(struct pmt_named *nm)
{
	pmt_buf__free(&nm->text);
	free(nm->v);
	memset(nm, 0, sizeof(*nm));
}
