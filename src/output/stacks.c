// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The frames streamed after a record, as perf script -g shows them. */
#include <stddef.h>
#include "abi.h"
#include "output/stacks.h"
#include "output/symbols.h"

void pmt_stacks__print(const struct pmt_record *r, struct pmt_buf *b, bool json)
{
	size_t rec = r->fmt->fixed_size;
	const struct pmt_stack_rec *st;
	const uint64_t *frames;
	struct pmt_buf name = {0};
	uint32_t i, n;

	if (!r->stack || r->len < rec)
		return;
	st = (const void *)((const char *)r->data + rec - sizeof(*st));
	frames = (const void *)((const char *)r->data + rec);
	n = st->nkernel + st->nuser;
	if (n > (r->len - rec) / 8)
		n = (uint32_t)((r->len - rec) / 8);
	if (json)
		pmt_buf__puts(b, ",\"stack\":[");
	for (i = 0; i < n; i++) {
		uint64_t a = frames[i];

		name.len = 0;
		pmt_syms__name(r->syms, r->pid, a, true, false, &name);
		if (json) {
			pmt_buf__printf(b, "%s{\"addr\":\"0x%llx\",\"sym\":", i ? "," : "",
					(unsigned long long)a);
			pmt_buf__json_str(b, name.p, name.len);
			pmt_buf__putc(b, '}');
		} else {
			pmt_buf__printf(b, "\n\t%16llx ", (unsigned long long)a);
			pmt_buf__add(b, name.p, name.len);
			pmt_buf__puts(b, i < st->nkernel ? " ([kernel])" : "");
		}
	}
	if (json)
		pmt_buf__putc(b, ']');
	pmt_buf__free(&name);
}
