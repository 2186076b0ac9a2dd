/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel's types (BTF) as filter/expr.h's struct pmt_typesys. */
#ifndef PMT_BTFTYPES_H
#define PMT_BTFTYPES_H

#include "filter/expr.h"

struct btf;

struct pmt_btftypes {
	struct btf *btf;
	struct pmt_typesys sys; /* ctx: this */
};

/* The running kernel's BTF: 0, or -errno (no BTF). */
int pmt_btftypes__open(struct pmt_btftypes *t);
void pmt_btftypes__close(struct pmt_btftypes *t);

#endif
