// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include "abi.h"
#include "session.h"
#include "stackrec.h"
#include "symbols.h"

int pmt_stackrec__add_fields(struct pmt_format *f)
{
	uint32_t st = f->fixed_size - (uint32_t)sizeof(struct pmt_stack_rec);
	struct pmt_field *k, *u;

	k = pmt_format__add(f, "kstack", "s64", st + offsetof(struct pmt_stack_rec, kstack), 8, PMT_F_INT);
	if (!k)
		return -ENOMEM;
	k->is_signed = true;
	k->is_common = true;
	u = pmt_format__add(f, "ustack", "u64", st + offsetof(struct pmt_stack_rec, ustack), 8, PMT_F_INT);
	if (!u)
		return -ENOMEM;
	u->is_common = true;
	return 0;
}

bool pmt_stackrec__has(const struct pmt_format *f)
{
	return f && pmt_format__field(f, "kstack") && pmt_format__field(f, "ustack");
}

void pmt_stackrec__extra(const struct pmt_record *r, struct pmt_buf *b, bool json)
{
	pmt_stackrec__print(r->extra_ctx, r, b, json);
}

void pmt_stackrec__print(struct pmt_session *s, const struct pmt_record *r,
			 struct pmt_buf *b, bool json)
{
	size_t rec = r->fmt->fixed_size;
	const struct pmt_stack_rec *st;
	const uint64_t *frames;
	struct pmt_buf name = {0};
	uint32_t i, n;

	if (!s->stack || r->len < rec)
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
		pmt_syms__name(pmt_session__syms(s), r->pid, a, true, false, &name);
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
