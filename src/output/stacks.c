// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The names after a record, as perf script shows them (stacks.h). */
#include <string.h>
#include "output/stacks.h"

/* A frame's line up to its name: "\n\t%16llx ", without printf (it was
 * 40% of a streamed stack's cost) */
static void frame_start(struct pmt_buf *b, uint64_t addr)
{
	pmt_buf__add(b, "\n\t", 2);
	pmt_buf__hexw(b, addr, 16);
	pmt_buf__putc(b, ' ');
}

void pmt_stacks__text(const struct pmt_named *nm, struct pmt_buf *b)
{
	const char *sym = pmt_named__str(nm, nm->sym);
	size_t i;

	if (sym) {
		pmt_buf__puts(b, " sym=");
		pmt_buf__text_str(b, sym, strlen(sym));
	}
	for (i = 0; i < nm->n; i++) {
		const struct pmt_named_frame *f = &nm->v[i];

		frame_start(b, f->addr);
		pmt_buf__puts(b, pmt_named__str(nm, f->name));
		pmt_buf__puts(b, f->inlined ? " (inlined)" : f->kernel ? " ([kernel])" : "");
	}
}

void pmt_stacks__json(const struct pmt_named *nm, struct pmt_json *j)
{
	const char *sym = pmt_named__str(nm, nm->sym);
	size_t i;

	if (sym)
		pmt_json__field_str(j, "sym", sym);
	if (!nm->stack)
		return;
	pmt_json__key(j, "stack");
	pmt_json__array(j);
	for (i = 0; i < nm->n; i++) {
		const struct pmt_named_frame *f = &nm->v[i];

		pmt_json__object(j);
		pmt_json__key(j, "addr");
		pmt_json__hex(j, f->addr);
		pmt_json__field_str(j, "sym", pmt_named__str(nm, f->name));
		if (f->inlined)
			pmt_json__field_bool(j, "inlined", true);
		if (f->dso != PMT_NAMED_NONE)
			pmt_json__field_str(j, "dso", pmt_named__str(nm, f->dso));
		if (f->line) {
			pmt_json__field_str(j, "file", pmt_named__str(nm, f->file));
			pmt_json__field_u64(j, "line", f->line);
		}
		pmt_json__end(j);
	}
	pmt_json__end(j);
}
