// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stack tail of records a program builds (bpf/abi.h, struct pmt_stack_rec). */
#include <errno.h>
#include <stddef.h>
#include "abi.h"
#include "probes/stackrec.h"

static int add_at(struct pmt_format *f, uint32_t st)
{
	struct pmt_field *k, *u;

	k = pmt_format__add(f, "kstack", "s64", st + offsetof(struct pmt_stack_rec, kstack), 8,
			    PMT_F_INT);
	if (!k)
		return -ENOMEM;
	k->is_signed = true;
	k->is_common = true;
	u = pmt_format__add(f, "ustack", "u64", st + offsetof(struct pmt_stack_rec, ustack), 8,
			    PMT_F_INT);
	if (!u)
		return -ENOMEM;
	u->is_common = true;
	return 0;
}

int pmt_stackrec__add_fields(struct pmt_format *f)
{
	return add_at(f, f->fixed_size - (uint32_t)sizeof(struct pmt_stack_rec));
}

int pmt_stackrec__add_tp_fields(struct pmt_format *f)
{
	return add_at(f, PMT_TP_STACK);
}

bool pmt_stackrec__has(const struct pmt_format *f)
{
	return f && pmt_format__field(f, "kstack") && pmt_format__field(f, "ustack");
}

uint32_t pmt_stackrec__frames(const struct pmt_format *f, const void *data, size_t len,
			      const uint64_t **frames, uint32_t *nkernel)
{
	size_t rec = f->fixed_size;
	const struct pmt_stack_rec *st;
	uint32_t n;

	if (len < rec || rec < sizeof(*st) || f->raw_ctx)
		return 0;
	st = (const void *)((const char *)data + rec - sizeof(*st));
	*frames = (const void *)((const char *)data + rec);
	*nkernel = st->nkernel;
	n = st->nkernel + st->nuser;
	return n > (len - rec) / 8 ? (uint32_t)((len - rec) / 8) : n;
}
